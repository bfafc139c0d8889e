"""Make `derived.jsonl` again: each real row below re-based onto Debian's source of a release.

    python -m tests.languages.make_rows

For each instance in RECIPES: its real row (vendored in `tests/rows/`), the orig tarball unpacked and
committed as the base (`language_fixtures`), the row's gold patch and test patch applied to it forward (the
release predates the fix) and written again as diffs of that base. The other columns are the real row's,
less what names the original commit or image (SWE-bench's `eval_script` and `image`; Multi-SWE-bench's run
results), and with PASS_TO_PASS as it holds on the release: the tests it does not have left out
(`not_in_release`), or the list a run of the release gave (`pass_to_pass_file`: the classes that passed
without patches, with the test patch and with both). Whether FAIL_TO_PASS fails before the gold patch and
passes after is checked by the tests that grade these rows (tests/test_languages_grade.py).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from tests import language_fixtures
from tests.fixture_sources import base_commit_of

ROWS = Path(__file__).resolve().parents[1] / "rows"
# The releases the rows are re-based onto: where their real rows are, the columns a derived row adds ("row"), the
# Debian source package and its orig tarball
REDIS_7_0_15 = {
    "rows": "swe-bench-multilingual.jsonl", "row": {"language": "c"},
    "debian_source": "redis", "suite": "bookworm", "orig": "redis_7.0.15.orig.tar.gz",
    "sha256": "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982",
}  # fmt: skip
GIN_1_8_1 = {  # Debian builds Go packages in GOPATH mode with its golang-*-dev sources (no module proxy here): the
    # repository sits at its import path in a GOPATH (environments.json has the toolchain and variables)
    "rows": "swe-bench-multilingual.jsonl", "row": {"language": "go", "workdir": "/go/src/github.com/gin-gonic/gin"},
    "debian_source": "golang-github-gin-gonic-gin", "suite": "bookworm", "orig": "golang-github-gin-gonic-gin_1.8.1.orig.tar.gz",
    "sha256": "9f6a9a6c2b96c323902d8ee1728152bafdf1894130554a93af5d3f1807c0403b",
}  # fmt: skip
RECIPES = {  # how each row is re-based ("route"), besides its release
    "redis__redis-12272": {
        **REDIS_7_0_15,
        "route": "forward: redis 7.0.15 (2024-01) does not have this fix of 7.2 (2023-06); patch and test patch apply with offsets",
        "not_in_release": ["GETRANGE against wrong key type"],
    },
    "gin-gonic__gin-3227": {
        **GIN_1_8_1,
        "route": "forward: gin 1.8.1 (2022-06) predates this fix (2022-07); patch and test patch apply as they are",
    },
    "redis__redis-13338": {
        **REDIS_7_0_15,
        "route": "forward: redis 7.0.15 does not have this fix of 7.4 (2024-06); patch and test patch apply",
        "not_in_release": [  # tests of unit/type/stream-cgroups that 7.0.15 does not have (7.0.15 spells one 'autclaim')
            "XGROUP CREATE: with ENTRIESREAD parameter", "XREAD and XREADGROUP against wrong parameter",
            "Blocking XREADGROUP for stream key that has clients blocked on list",
            "Blocking XREADGROUP for stream key that has clients blocked on stream - avoid endless loop",
            "Blocking XREADGROUP for stream key that has clients blocked on stream - reprocessing command",
            "Consumer seen-time and active-time", "XREADGROUP of multiple entries changes dirty by one",
            "XREADGROUP from PEL does not change dirty", "Loading from legacy (Redis <= v7.0.x, rdb_ver < 11) persistence",
            "Replication tests of XCLAIM with deleted entries (autoclaim=0)", "Replication tests of XCLAIM with deleted entries (autoclaim=1)",
            "XREADGROUP ACK would propagate entries-read", "XREADGROUP from PEL inside MULTI",
        ],
    },
    "gin-gonic__gin-3741": {
        **GIN_1_8_1,
        "route": "forward: gin 1.8.1 predates this fix; patch and test patch apply",
    },
    "gin-gonic__gin-3820": {
        **GIN_1_8_1,
        "route": "forward: gin 1.8.1 predates this fix; patch and test patch apply",
        "not_in_release": ["TestMappingPtrField"],
    },
    "redis__redis-11631": {
        **REDIS_7_0_15, "reverse": True,
        "route": "reverse: redis 7.0.15 has this fix (backported to 7.0): the base is 7.0.15 without the gold and test patches",
    },
    "redis__redis-10764": {
        **REDIS_7_0_15, "reverse": True,
        "route": "reverse: redis 7.0.15 has this fix; its spec's --only names a test exactly in 7.0.15's runtest (environments.json)",
    },
    "fasterxml__jackson-core-922": {
        # Debian's offline Maven (maven-debian-helper, /usr/share/maven-repo), its pom as its build makes it
        # (environments.json); the base is the orig tarball alone. A run of 2.14.1 with Debian's Maven: 177 classes
        # passed without patches, with the test patch and with both (of the row's 166, 5 are not in 2.14.1; 16 are
        # new in it); two generated doubleparser classes skip in every run and are left out, and so are the two
        # schubfach ToDecimal classes the fixture's pom excludes (environments.json: the suite's cost): 175.
        "rows": "multi-swe-bench.jsonl", "row": {},
        "debian_source": "jackson-core", "suite": "bookworm", "orig": "jackson-core_2.14.1.orig.tar.xz",
        "sha256": "d9eb6aa1898c4d5a582c52e69da249efae25e4d2c809c57dc6b6ee01c4b0fb3b",
        "route": "forward: jackson-core 2.14.1 (2022-11) predates this fix of 2.15 (2023-02); patch and test patch apply as they are",
        "pass_to_pass_file": "fasterxml__jackson-core-922.pass_to_pass",
    },
}  # fmt: skip
DROPPED = ("eval_script", "image", "run_result", "test_patch_result", "fix_patch_result", "fixed_tests")
PASSED_EVERYWHERE = {"run": "PASS", "test": "PASS", "fix": "PASS"}


def rebased(base: str, diff: str, workdir: Path) -> str:
    """`diff` applied to the base in a checkout of it, and written again as a diff of the base."""
    subprocess.run(["git", "-C", str(workdir), "checkout", "-q", "-f", base], check=True)
    subprocess.run(["git", "-C", str(workdir), "clean", "-q", "-fdx"], check=True)
    subprocess.run(["git", "-C", str(workdir), "apply", "-"], input=diff, text=True, check=True)
    subprocess.run(["git", "-C", str(workdir), "add", "-A"], check=True)
    return subprocess.run(["git", "-C", str(workdir), "diff", "--cached", base], check=True, capture_output=True, text=True).stdout


def derived_row(real: dict, recipe: dict) -> dict:
    row = {key: value for key, value in real.items() if key not in DROPPED}
    multi_swe_bench = "fix_patch" in real
    patch, base_field = ("fix_patch", "base") if multi_swe_bench else ("patch", "base_commit")
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "repo"
        subprocess.run(["git", "init", "-q", str(workdir)], check=True)
        source = language_fixtures.orig_directory(recipe)
        if recipe.get("reverse"):  # the release has the fix: the base is the release without the gold and test patches
            source = language_fixtures.reverted(source, Path(scratch) / "reverted", [real["test_patch"], real[patch]])
        base = base_commit_of(source, workdir / ".git", "make-rows")
        row[patch] = rebased(base, real[patch], workdir)
        row["test_patch"] = rebased(base, real["test_patch"], workdir)
    missing = set(recipe.get("not_in_release", []))
    if multi_swe_bench:
        row["base"] = {**real["base"], "sha": base}
        if recipe.get("pass_to_pass_file"):
            classes = (Path(__file__).parent / recipe["pass_to_pass_file"]).read_text().split()
            row["p2p_tests"] = {name: PASSED_EVERYWHERE for name in classes}
    else:
        row["base_commit"] = base
        row["PASS_TO_PASS"] = [test for test in real["PASS_TO_PASS"] if test not in missing]
    original = real["base"]["sha"] if multi_swe_bench else real["base_commit"]
    row.update(recipe["row"], derived_from={key: value for key, value in recipe.items() if key not in ("row", "rows")} | {"base_commit": original})
    return row


def main() -> None:
    lines = []
    for instance_id, recipe in RECIPES.items():
        real = [row for row in map(json.loads, (ROWS / recipe["rows"]).read_text().splitlines()) if row["instance_id"] == instance_id]
        if not real:
            raise SystemExit(f"{ROWS / recipe['rows']} lacks {instance_id}")
        lines.append(json.dumps(derived_row(real[0], recipe), sort_keys=True))
    (language_fixtures.HERE / "derived.jsonl").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} rows to {language_fixtures.HERE / 'derived.jsonl'}")


if __name__ == "__main__":
    main()
