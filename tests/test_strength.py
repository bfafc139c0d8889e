"""A task's test strength (`validate --variants`): wrong variants of its gold graded through the reward, one sandbox
for all of them. The weak toy (`tests/weak_toy.py`) lists the tests of one of its gold's two hunks: the other hunk left
out survives, named with the test of its file that kills it; the strong row lists them all and kills every variant.
Both on local (python3 alone), through `uni-agent-gym validate` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.weak_toy import weak_toy_row
from uni_agent_gym.datasets import Task
from uni_agent_gym.workspaces.validated import is_validated, record, row_digest, validation_of

TO_CENTS = "test_to_cents (test_money.TestMoney.test_to_cents)"


def validate(tmp_path, rows: list[dict], *extra: str) -> dict:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "config.json").write_text(json.dumps({"env": {"cache_dir": str(tmp_path / "cache"), "workspace": "mirror"}}))
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "validate", "--dataset", str(tmp_path / "rows.jsonl"), "--deployment", "local",
                           "--config", str(tmp_path / "config.json"), "--output", str(tmp_path / "out"), *extra],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((tmp_path / "out" / "validation.json").read_text())


async def test_a_hunk_the_listed_tests_never_reach_survives_and_a_task_that_lists_them_all_kills_every_variant(tmp_path):
    rows = [await weak_toy_row(str(tmp_path / "cache")), await weak_toy_row(str(tmp_path / "cache"), strong=True)]
    report = validate(tmp_path, rows, "--variants", "30", "--strengthen", str(tmp_path / "stronger.jsonl"))
    weak, strong = (result["strength"] for result in report["results"])
    assert strong["tried"] == strong["killed"] == strong["variants"] and strong["strength"] == 1.0 and not strong["survivors"], strong
    assert weak["tried"] == strong["tried"] and weak["strength"] < 1.0
    survivors = {(survivor["operator"], survivor["where"]): survivor for survivor in weak["survivors"]}
    assert set(survivors) >= {("hunk removed", "money.py:6"), ("return value replaced", "money.py:6")}  # to_cents's fix, which no listed test reaches
    hunk = survivors[("hunk removed", "money.py:6")]
    assert hunk["ungraded_failures"] == [TO_CENTS] and hunk["equivalent"] is None
    assert "round(amount * 100)" not in hunk["patch"] and "extra = total_cents - share * parts" in hunk["patch"]  # split's fix alone
    assert all(survivor["where"] == "money.py:6" for survivor in weak["survivors"])  # split's fix, listed, kills every variant of it
    assert weak["by_operator"]["hunk removed"] == {"tried": 2, "killed": 1} and sum(c["tried"] for c in weak["by_operator"].values()) == weak["tried"]
    assert weak["killing_tests"] == {"FAIL_TO_PASS": [TO_CENTS], "PASS_TO_PASS": []}  # it fails without the fix: a FAIL_TO_PASS test
    assert report["strength"]["with_survivors"] == ["uag-tests__weak-toy-1"] and report["strength"]["ungraded_tests_that_kill"] == {
        "uag-tests__weak-toy-1": [TO_CENTS]}
    # the row written stronger grades the test too, and then kills every variant
    stronger = [json.loads(line) for line in (tmp_path / "stronger.jsonl").read_text().splitlines()]
    assert stronger[0]["FAIL_TO_PASS"] == [*rows[0]["FAIL_TO_PASS"], TO_CENTS] and stronger[1]["FAIL_TO_PASS"] == rows[1]["FAIL_TO_PASS"]
    (tmp_path / "again").mkdir()
    again = validate(tmp_path / "again", stronger[:1], "--variants", "30")
    assert again["results"][0]["strength"]["strength"] == 1.0, again["results"][0]["strength"]["survivors"]


async def test_no_variants_means_no_strength_and_the_verdict_alone(tmp_path):
    report = validate(tmp_path, [await weak_toy_row(str(tmp_path / "cache"))], "--variants", "0")
    assert report["results"][0]["validated"] and report["results"][0]["strength"] is None and report["strength"]["measured"] == 0


def test_a_broken_copy_of_a_row_leaves_the_good_rows_verdict_as_it_was(tmp_path):
    """A verdict is the row's in its environment: validating a copy with another FAIL_TO_PASS (on the same image) is
    another row's record. Keyed by the environment alone, the copy's failure overwrote the good row's pass."""
    good = Task("o__r-1", "o/r", "swe-bench", FAIL_TO_PASS=["t"], test_patch="diff --git a/t b/t\n")
    broken = good.replace(FAIL_TO_PASS=["no such test"])
    assert row_digest(good) != row_digest(broken) and row_digest(good) == row_digest(good.replace(hints_text="another column"))
    record(tmp_path, good, "digest", "sha256:image", True, [], {"strength": 1.0})
    record(tmp_path, broken, "digest", "sha256:image", False, ["gold: no such test did not pass"])
    assert is_validated(tmp_path, good, "digest", "sha256:image") and not is_validated(tmp_path, broken, "digest", "sha256:image")
    assert validation_of(tmp_path, good, "digest", "sha256:image")["strength"] == {"strength": 1.0}
    assert not is_validated(tmp_path, good, "digest", "sha256:rebuilt")  # another build of the image: not validated until checked


def test_the_digest_leaves_out_what_the_spec_and_the_start_state_fill_in():
    """A verdict is the row's: commands left to the spec's defaults (another swebench's defaults, or what an image records,
    which its environment digest covers) and the test patch of a task whose start state makes one are not in it; a
    row's own command is."""
    loaded = Task("o__r-1", "o/r", "swe-bench", FAIL_TO_PASS=["t"], commands_from="swebench-spec", test_command="make test", start_patch="diff")
    assert row_digest(loaded) == row_digest(loaded.replace(test_command="make check", test_patch="diff --git a/t b/t\n"))
    assert row_digest(loaded.replace(commands_from=None, test_command="make check")) != row_digest(loaded.replace(commands_from=None))


@pytest.mark.parametrize("name", ["GOLD_PATCH", "WRONG_SPECIAL_CASE", "WRONG_REMAINDER_TO_FIRST", "ALTERNATIVE_FIX"])
def test_the_weak_toys_patches_apply_to_its_repository(tmp_path, name):
    import shutil

    from tests import weak_toy

    shutil.copytree(weak_toy.REPO, tmp_path / "repo")
    subprocess.run("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base", shell=True, cwd=tmp_path / "repo", check=True)
    assert subprocess.run(["git", "apply", "--check", "-"], input=getattr(weak_toy, name), text=True, cwd=tmp_path / "repo").returncode == 0
