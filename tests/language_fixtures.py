"""Offline fixtures in other languages than Python: real instances re-based onto Debian's source of a release.

Repository code in C, Go, Java, ... reaches these machines through Debian's source packages (the orig
tarball is the upstream release), as Python's reached them through PyPI sdists (`fixture_sources.py`).
A row in `tests/languages/derived.jsonl` is a real dataset row whose `base_commit` is the commit of the
unpacked orig tarball (fixed identity and date, every file added), and whose `patch` and `test_patch`
are the row's own re-based onto it (`derived_from` says from where and how); `tests/languages/make_rows.py`
makes them again from the real rows. Its mirror, toolchain and image are made here, once per machine.

Getting an orig tarball: a private apt configuration with a `deb-src` line for the host's Debian mirror,
`apt-get source --download-only NAME`; the file is checked against the row's sha256 (Debian's version of a
package changes with its security updates, its orig tarball does not).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tarfile
from pathlib import Path

from tests.fixture_sources import BUILD_CACHE, CACHE, mirror_of
from uni_agent_gym.instances import normalise
from uni_agent_gym.named_locks import blocking_machine_lock

HERE = Path(__file__).resolve().parent / "languages"
SOURCES = CACHE / "debian-sources"


ENVIRONMENTS = HERE / "environments.json"  # what the rows need beyond swebench's specs offline
DERIVED = HERE / "derived.jsonl"  # the rows, re-based onto Debian's sources (`tests/languages/make_rows.py`)


def derived_rows() -> dict[str, dict]:
    rows = [json.loads(line) for line in DERIVED.read_text().splitlines() if line.strip()]
    return {row["instance_id"]: row for row in rows}


def debian_orig(package: str, orig: str, sha256: str, suite: str = "bookworm") -> Path:
    """Debian's orig tarball `orig` of source package `package` (downloaded once, checked by its sha256)."""
    target = SOURCES / orig
    with blocking_machine_lock(f"debian source {orig}"):
        if not (target.exists() and _sha256(target) == sha256):
            _download_source(package, suite, target.parent)
        if _sha256(target) != sha256:
            raise RuntimeError(f"{orig}: sha256 {_sha256(target)}, expected {sha256} (Debian's archive no longer has this release?)")
    return target


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def _download_source(package: str, suite: str, directory: Path) -> None:
    from uni_agent_gym.workspaces.base_images import host_debian_mirror

    apt = SOURCES / f"apt-{suite}"
    for sub in ("lists/partial", "archives/partial", "sources"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "sources" / "src.list").write_text(f"deb-src {host_debian_mirror()} {suite} main\n")
    (apt / "apt.conf").write_text(
        f'Dir::Etc::sourcelist "{apt}/sources/src.list";\nDir::Etc::sourceparts "{apt}/sources";\n'
        f'Dir::State::lists "{apt}/lists";\nDir::Cache::archives "{apt}/archives";\nAPT::Sandbox::User "root";\n'
    )
    env = {**os.environ, "APT_CONFIG": str(apt / "apt.conf")}
    directory.mkdir(parents=True, exist_ok=True)
    # one apt at a time in these lists: two workers fetching two packages' sources at once on a new machine made
    # the second `apt-get update` fail on apt's own lock (exit 100)
    with blocking_machine_lock(f"debian apt {apt}"):
        updated = subprocess.run(["apt-get", "-qq", "update"], env=env, capture_output=True, text=True)
        if updated.returncode != 0:
            raise RuntimeError(f"apt-get update for Debian's sources failed ({updated.returncode}): {updated.stderr[-1000:]}")
        # not checked: Debian's own tarball of a package may answer 404 where its orig tarball (all we need) is there
        subprocess.run(["apt-get", "-qq", "source", "--download-only", package], env=env, capture_output=True, cwd=directory)


def source_directory(row: dict) -> Path:
    """The base tree of a derived row, made once: the unpacked orig tarball (its top directory stripped); for a
    row re-based the reverse way (the release already has the fix), that tree with the row's test patch and
    gold patch taken back out (`make_rows.py` made the row's patches so that they put them back)."""
    if row["derived_from"].get("reverse") and "instance_id" in row:
        target = CACHE / "debian-unpacked" / f"{row['derived_from']['orig']}-{row['instance_id']}"
        with blocking_machine_lock(f"debian unpacked {target}"):
            if not (target / ".complete").exists():
                reverted(orig_directory(row["derived_from"]), target / "src", [row["test_patch"], row.get("patch") or row["fix_patch"]])
                (target / ".complete").touch()
        return target / "src"
    return orig_directory(row["derived_from"])


def reverted(source: Path, target: Path, diffs: list[str]) -> Path:
    """A copy of `source` at `target` with each diff taken back out (`git apply -R`), in order."""
    subprocess.run(["rm", "-rf", str(target)], check=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    for diff in diffs:
        subprocess.run(["git", "apply", "-R", "-"], input=diff, text=True, check=True, cwd=target)
    return target


def orig_directory(source: dict) -> Path:
    """The unpacked orig tarball named by a row's `derived_from` (its top directory stripped), made once."""
    target = CACHE / "debian-unpacked" / source["orig"]
    with blocking_machine_lock(f"debian unpacked {target}"):
        if not (target / ".complete").exists():
            archive = debian_orig(source["debian_source"], source["orig"], source["sha256"], source.get("suite", "bookworm"))
            subprocess.run(["rm", "-rf", str(target)], check=True)
            (target / "src").mkdir(parents=True)
            with tarfile.open(archive) as tar:
                members = [member for member in tar.getmembers() if "/" in member.name]
                for member in members:
                    member.name = member.name.split("/", 1)[1]
                tar.extractall(target / "src", members=members, filter="fully_trusted")
            (target / ".complete").touch()
    return target / "src"


def repo_of(row: dict) -> str:
    """The repository of a row as its task names it (Multi-SWE-bench's rows name it apart from its org)."""
    return normalise(row).repo


def repo_mirror(repo: str) -> Path:
    """A bare git repository with the base of each derived row of `repo` as a branch named by its id."""
    mirror = CACHE / "mirrors" / repo.replace("/", "__")
    rows = [row for row in derived_rows().values() if repo_of(row) == repo]
    with blocking_machine_lock(f"fixture mirror {mirror}"):
        return mirror_of(mirror, rows, source_directory, lambda row: normalise(row).base_commit)


def build_config(rows: list[dict]):
    """The config that builds these fixtures' images: their mirrors, the test build cache, the bookworm base."""
    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.toolchains import TOOLCHAIN_PYTHON
    from uni_agent_gym.workspaces.base_images import bootstrap_base

    bootstrap_base(TOOLCHAIN_PYTHON, log=lambda message: None)
    mirrors = {repo: str(repo_mirror(repo)) for repo in sorted({repo_of(row) for row in rows})}
    return GymConfig.model_validate({"env": {"cache_dir": str(BUILD_CACHE), "mirrors": mirrors}})


async def ensure_images(rows: list[dict], *, log=lambda message: None) -> list[str]:
    """The images of these fixtures, built where missing; their names."""
    from uni_agent_gym.specs import load_environments
    from uni_agent_gym.workspaces.image_builder import build_instance_images

    names, failures = await build_instance_images([normalise(row) for row in rows], build_config(rows), load_environments(ENVIRONMENTS), log=log)
    if failures:
        raise RuntimeError(f"fixture images failed to build: {failures}")
    return names
