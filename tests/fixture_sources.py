"""Sources of the offline SWE-bench fixtures (../shared/swebench): the PyPI sdists their bases are made of.

An sdist unpacked into a plain directory is a mirror whose commit (fixed identity and date) is the
row's `base_commit` (see ../shared/swebench/README.md). Downloads are cached between runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"
CACHE = Path.home() / ".cache" / "uni-agent-gym-tests"


def derived_rows() -> dict[str, dict]:
    rows = [json.loads(line) for line in (SHARED / "derived.jsonl").read_text().splitlines() if line.strip()]
    return {row["instance_id"]: row for row in rows}


def fixtures() -> dict[str, dict]:
    return {item["instance_id"]: item for item in json.loads((SHARED / "fixtures.json").read_text())["instances"]}


def sdist_directory(requirement: str) -> Path:
    """`Flask==2.2.3` -> the unpacked sdist (downloaded from PyPI once)."""
    target = CACHE / "sdists" / requirement.replace("==", "-")
    if (target / ".complete").exists():
        return target / "src"
    downloads = CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:", requirement, "-d", str(downloads)],
        check=True,
    )
    name, version = requirement.split("==")
    [archive] = [p for p in downloads.iterdir() if p.name.lower().replace("_", "-").startswith(f"{name.lower()}-{version}.tar")]
    (target / "src").mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            member.name = member.name.split("/", 1)[1] if "/" in member.name else ""
        tar.extractall(target / "src", members=[m for m in tar.getmembers() if m.name], filter="fully_trusted")
    (target / ".complete").touch()
    return target / "src"
