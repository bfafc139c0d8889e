"""Make `derived.jsonl` again: each real row below re-based onto Debian's source of a release.

    python -m tests.languages.make_rows [REAL_ROWS.jsonl]      # default: tests/rows/swe-bench-multilingual.jsonl

For each instance in RECIPES: the orig tarball unpacked, committed as the base (`language_fixtures`), the
row's gold patch and test patch applied to it forward (the release predates the fix) and written again
as diffs of that base. The other columns are the real row's, less `eval_script` and `image` (they name
the original commit and image), and less the PASS_TO_PASS tests the release does not have (`not_in_release`). Whether FAIL_TO_PASS fails before the gold patch and passes after is
checked by the tests that grade these rows (tests/test_languages_grade.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import language_fixtures

RECIPES = {  # "row": columns the derived row adds; the rest is where its base comes from and how
    "redis__redis-12272": {
        "row": {"language": "c"},
        "debian_source": "redis", "suite": "bookworm", "orig": "redis_7.0.15.orig.tar.gz",
        "sha256": "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982",
        "route": "forward: redis 7.0.15 (2024-01) does not have this fix of 7.2 (2023-06); patch and test patch apply with offsets",
        "not_in_release": ["GETRANGE against wrong key type"],  # PASS_TO_PASS tests 7.0.15 does not have
    },
    "gin-gonic__gin-3227": {
        # Debian builds Go packages in GOPATH mode with its golang-*-dev sources (no module proxy here): the
        # repository sits at its import path in a GOPATH (environments.json has the toolchain and variables)
        "row": {"language": "go", "workdir": "/go/src/github.com/gin-gonic/gin"},
        "debian_source": "golang-github-gin-gonic-gin", "suite": "bookworm", "orig": "golang-github-gin-gonic-gin_1.8.1.orig.tar.gz",
        "sha256": "9f6a9a6c2b96c323902d8ee1728152bafdf1894130554a93af5d3f1807c0403b",
        "route": "forward: gin 1.8.1 (2022-06) predates this fix (2022-07); patch and test patch apply as they are",
    },
}  # fmt: skip
DROPPED = ("eval_script", "image")


def rebased(source: Path, base: str, diff: str, workdir: Path) -> str:
    """`diff` applied to the base in a checkout of it, and written again as a diff of the base."""
    subprocess.run(["git", "-C", str(workdir), "checkout", "-q", "-f", base], check=True)
    subprocess.run(["git", "-C", str(workdir), "clean", "-q", "-fdx"], check=True)
    subprocess.run(["git", "-C", str(workdir), "apply", "-"], input=diff, text=True, check=True)
    subprocess.run(["git", "-C", str(workdir), "add", "-A"], check=True)
    return subprocess.run(["git", "-C", str(workdir), "diff", "--cached", base], check=True, capture_output=True, text=True).stdout


def derived_row(real: dict, recipe: dict) -> dict:
    row = {key: value for key, value in real.items() if key not in DROPPED}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        subprocess.run(["git", "init", "-q", str(workdir)], check=True)
        source = language_fixtures.source_directory({"derived_from": recipe})
        base = language_fixtures.base_commit_of(source, workdir / ".git", "make-rows")
        row["patch"] = rebased(source, base, real["patch"], workdir)
        row["test_patch"] = rebased(source, base, real["test_patch"], workdir)
    missing = set(recipe.get("not_in_release", []))
    row["PASS_TO_PASS"] = [test for test in real["PASS_TO_PASS"] if test not in missing]
    row.update(base_commit=base, **recipe["row"], derived_from={key: value for key, value in recipe.items() if key != "row"} | {"base_commit": real["base_commit"]})
    return row


def main(real_rows: Path) -> None:
    real = {row["instance_id"]: row for row in map(json.loads, real_rows.read_text().splitlines()) if row["instance_id"] in RECIPES}
    missing = sorted(set(RECIPES) - set(real))
    if missing:
        raise SystemExit(f"{real_rows} lacks {', '.join(missing)}")
    lines = [json.dumps(derived_row(real[instance_id], recipe), sort_keys=True) for instance_id, recipe in RECIPES.items()]
    (language_fixtures.HERE / "derived.jsonl").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} rows to {language_fixtures.HERE / 'derived.jsonl'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "rows" / "swe-bench-multilingual.jsonl")
