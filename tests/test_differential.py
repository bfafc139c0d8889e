"""The differential check of a resolved patch against gold (`reward.differential`, `rewards/differential.py`), on the
weak toy (`tests/weak_toy.py`, its wrong fixes written before the check): graded on local (python3 alone) through
the reward as an agent's patch and an episode are, nothing faked."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from tests import modules_toy, weak_toy
from tests.test_deployment_contract import graded_episode
from uni_agent_gym.config import GymConfig, RewardConfig, load_config
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.instances import normalise
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.rewards import differential, module_tests
from uni_agent_gym.rewards.swebench import SWEBenchReward

EVERY_CENT = "test_split_keeps_every_cent (test_money.TestMoney.test_split_keeps_every_cent)"
TO_CENTS = "test_to_cents (test_money.TestMoney.test_to_cents)"
# The gold's fix of to_cents with WRONG_REMAINDER_TO_FIRST's split: wrong (split(102, 4) is [27, 25, 25, 25]) in a way no
# test of the file tells apart; WRONG_REMAINDER_TO_FIRST alone lacks the to_cents fix, which test_to_cents tells apart
REMAINDER_TO_FIRST_WITH_TO_CENTS = weak_toy.GOLD_PATCH.split("@@ -19,4")[0] + weak_toy.WRONG_REMAINDER_TO_FIRST[weak_toy.WRONG_REMAINDER_TO_FIRST.index("@@"):]


def config(cache_dir, **reward) -> GymConfig:
    return GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(cache_dir), "workspace": "mirror"},
                                     "reward": {"differential": True, **reward}})  # fmt: skip


@pytest.fixture
def gold_gradings(monkeypatch) -> list[str]:
    """The instance ids of every grading of a weak-toy gold patch, counted at the reward's own method."""
    graded, grade_patch = [], SWEBenchReward.grade_patch

    async def counted(self, instance, patch):
        if patch == weak_toy.GOLD_PATCH or patch == instance.patch:
            graded.append(instance.instance_id)
        return await grade_patch(self, instance, patch)

    monkeypatch.setattr(SWEBenchReward, "grade_patch", counted)
    return graded


async def test_a_wrong_fix_the_listed_tests_accept_is_suspect_naming_the_test_of_its_file_that_tells_it_apart(tmp_path, gold_gradings):
    """Every patch earns 1.0 from the weak row's listed tests; the check marks the wrong ones by the tests of the graded
    file that gold passes and they fail, leaves gold and a correct alternative unmarked, and grades gold once."""
    row = normalise(await weak_toy.weak_toy_row(str(tmp_path / "cache")))
    reward = SWEBenchReward.from_config(config(tmp_path / "cache"))

    async def graded(patch: str) -> dict:
        result = await reward.grade_patch(row, patch)
        assert (result.status, result.reward) == ("resolved", 1.0), (result.error, result.log[-2000:])  # the check never changes the reward
        return result.to_dict()["differential"]

    alternative = await graded(weak_toy.ALTERNATIVE_FIX)  # the cache is cold: gold is graded here, once
    assert alternative["suspect"] is False and alternative["tests"] == [] and alternative["gold"] == "graded", alternative
    assert alternative["compared"] == 4 and alternative["unlisted"] == 2  # the two listed tests and the two the row does not grade
    special_case = await graded(weak_toy.WRONG_SPECIAL_CASE)
    assert special_case["suspect"] is True and special_case["gold"] == "cached", special_case
    assert special_case["tests"] == [EVERY_CENT, TO_CENTS] and special_case["outcomes"] == {EVERY_CENT: "FAILED", TO_CENTS: "FAILED"}
    assert (await graded(weak_toy.GOLD_PATCH))["suspect"] is False
    # the check's limit: no test of the file tells remainder-to-first from the fix; alone it lacks the to_cents fix, named
    assert (await graded(weak_toy.WRONG_REMAINDER_TO_FIRST))["tests"] == [TO_CENTS]
    assert (await graded(REMAINDER_TO_FIRST_WITH_TO_CENTS))["suspect"] is False
    assert gold_gradings == [row.instance_id, row.instance_id]  # ours (GOLD_PATCH above) and the check's, once

    # another process (a new reward) finds gold's outcomes on disk, keyed by the row and the start commit (no image)
    again = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.WRONG_SPECIAL_CASE)
    assert again.differential["gold"] == "cached" and again.differential["tests"] == [EVERY_CENT, TO_CENTS]
    assert len(gold_gradings) == 2
    stored = json.loads(differential.cache_path(tmp_path / "cache", differential.gold_key(row, again)).read_text())
    assert again.start_commit and stored["key"].endswith(f"@commit-{again.start_commit}") and stored["statuses"][EVERY_CENT] == "PASSED"


async def test_an_episode_that_writes_a_wrong_fix_earns_one_with_a_suspect_report(tmp_path):
    """The env's reward (an agent's sandbox, its patch captured, graded fresh): the report of the episode says suspect."""
    row = normalise(await weak_toy.weak_toy_row(str(tmp_path / "cache")))
    report = await graded_episode(config(tmp_path / "cache"), row, [f"git apply <<'UAG_EOF'\n{weak_toy.WRONG_SPECIAL_CASE}UAG_EOF"])
    assert (report["status"], report["reward"]) == ("resolved", 1.0)
    assert report["differential"]["suspect"] is True and EVERY_CENT in report["differential"]["tests"], report["differential"]
    assert report["differential"]["gold"] == "graded"


async def test_gold_graded_first_fills_the_cache_with_its_own_run(tmp_path, gold_gradings):
    """`validate` grades gold: with the check on, that grading is gold's outcomes, no second one is made."""
    row = normalise(await weak_toy.weak_toy_row(str(tmp_path / "cache")))
    result = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.GOLD_PATCH)
    assert result.differential["suspect"] is False and result.differential["gold"] == "this grading" and len(gold_gradings) == 1
    later = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.WRONG_SPECIAL_CASE)
    assert later.differential["gold"] == "cached" and later.differential["suspect"] is True and len(gold_gradings) == 1


async def test_two_gradings_at_once_grade_gold_once(tmp_path, gold_gradings):
    row = normalise(await weak_toy.weak_toy_row(str(tmp_path / "cache")))
    reward = SWEBenchReward.from_config(config(tmp_path / "cache"))
    first, second = await asyncio.gather(reward.grade_patch(row, weak_toy.WRONG_SPECIAL_CASE), reward.grade_patch(row, weak_toy.ALTERNATIVE_FIX))
    assert first.differential["suspect"] is True and second.differential["suspect"] is False
    assert sorted([first.differential["gold"], second.differential["gold"]]) == ["cached", "graded"] and len(gold_gradings) == 1


async def test_off_or_unresolved_there_is_no_comparison(tmp_path, gold_gradings):
    row = normalise(await weak_toy.weak_toy_row(str(tmp_path / "cache")))
    off = await SWEBenchReward.from_config(config(tmp_path / "cache", differential=False)).grade_patch(row, weak_toy.WRONG_SPECIAL_CASE)
    assert off.resolved and off.differential is None and off.to_dict()["differential"] is None
    unresolved = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.GOLD_PATCH.split("@@ -19,4")[0])
    assert unresolved.status == "unresolved" and unresolved.differential is None
    assert gold_gradings == [] and not (tmp_path / "cache" / differential.DIRECTORY).exists()


async def test_a_gold_that_does_not_resolve_leaves_the_reward_as_graded_and_says_why_once(tmp_path, gold_gradings):
    """A row whose gold fixes only to_cents (it does not resolve its own row): the agent's fix keeps its 1.0, the report
    says there was nothing to compare with, and the next grading reads that from the cache instead of grading gold again."""
    row = normalise({**await weak_toy.weak_toy_row(str(tmp_path / "cache")), "patch": weak_toy.GOLD_PATCH.split("@@ -19,4")[0]})
    reward = SWEBenchReward.from_config(config(tmp_path / "cache"))
    for _ in range(2):
        result = await reward.grade_patch(row, weak_toy.ALTERNATIVE_FIX)
        assert (result.status, result.reward) == ("resolved", 1.0) and result.differential["suspect"] is None
        assert "gold's own grading of uag-tests__weak-toy-1 is unresolved" in result.differential["error"], result.differential
    assert "remembered in" in result.differential["error"] and len(gold_gradings) == 1


def test_the_check_needs_fresh_sandboxes_and_the_gym_config():
    with pytest.raises(ConfigError, match="reward.differential compares a fresh sandbox's run with gold's.*set reward.sandbox: fresh"):
        load_config(overrides=["reward.differential=true", "reward.sandbox=same"])
    with pytest.raises(ConfigError, match="reward.differential_modules adds a run to the differential check: set reward.differential: true too"):
        load_config(overrides=["reward.differential_modules=true"])
    with pytest.raises(ValueError, match=r"needs the gym config \(SWEBenchReward.from_config\)"):
        SWEBenchReward(RewardConfig(differential=True))


@pytest.mark.parametrize(
    "agent,gold,suspect",
    [
        ({"a": "PASSED", "b": "PASSED"}, {"a": "PASSED", "b": "PASSED"}, {}),
        ({"a": "PASSED", "b": "ERROR"}, {"a": "PASSED", "b": "PASSED"}, {"b": "ERROR"}),
        ({"a": "PASSED", "b": "SKIPPED"}, {"a": "PASSED", "b": "PASSED"}, {"b": "SKIPPED"}),  # a test the patch skips
        ({"a": "PASSED"}, {"a": "PASSED", "b": "PASSED"}, {"b": "missing"}),  # or makes vanish
        ({"a": "PASSED", "b": "FAILED"}, {"a": "PASSED", "b": "FAILED"}, {}),  # gold fails it too: it says nothing
        ({"a": "PASSED", "c": "FAILED"}, {"a": "PASSED"}, {}),  # a test gold's run does not have
    ],
    ids=["same", "errors", "skipped", "missing", "fails-with-gold", "new-test"],
)
def test_what_counts_as_not_passing_what_gold_passes(agent, gold, suspect):
    assert differential.not_passed(agent, gold) == suspect


# A wrong fix that forges the unlisted test's verdict where only that test calls it (the listed ones never do, so the
# row's own grading sees nothing): unittest's result made to report the failure as a success
FORGED = modules_toy.WRONG_SPECIAL_CASE.replace("@@ -4,4 +4,6 @@", "@@ -4,4 +4,9 @@").replace("+        return [34, 33, 33]\n", (
    "+        return [34, 33, 33]\n+    if (total_cents, parts) == (101, 4):\n+        import unittest\n"
    "+        unittest.TextTestResult.addFailure = lambda self, test, err: self.addSuccess(test)\n"))
# A wrong fix that also rewrites the unlisted test to pass
TEST_REWRITTEN = modules_toy.WRONG_SPECIAL_CASE + """\
diff --git a/tests/test_receipt.py b/tests/test_receipt.py
--- a/tests/test_receipt.py
+++ b/tests/test_receipt.py
@@ -5,4 +5,4 @@ from shop import money
 
 class TestReceipt(unittest.TestCase):
     def test_shares_add_up_to_the_total(self):
-        self.assertEqual(sum(money.split(101, 4)), 101)
+        self.assertEqual(sum(money.split(100, 4)), 100)
"""


async def test_the_tests_of_the_modules_gold_changes_tell_apart_a_wrong_fix_the_graded_file_cannot(tmp_path, gold_gradings):
    """The modules toy lists every test of its graded file, so the first comparison has nothing unlisted; the second run
    (`differential_modules`) adds the test file that imports `shop.money` (not the one of `shop.labels`), with the row's
    runner: it marks the special case, not gold or the alternative fix; the files and gold's run of them are cached."""
    row = normalise(await modules_toy.modules_toy_row(str(tmp_path / "cache")))
    reward = SWEBenchReward.from_config(config(tmp_path / "cache", differential_modules=True))
    found = {}
    for name in ("ALTERNATIVE_FIX", "WRONG_SPECIAL_CASE", "GOLD_PATCH"):
        result = await reward.grade_patch(row, getattr(modules_toy, name))
        assert (result.status, result.reward) == ("resolved", 1.0), (result.error, result.log[-2000:])
        found[name] = result.differential
    assert found["ALTERNATIVE_FIX"]["unlisted"] == 0 and found["ALTERNATIVE_FIX"]["modules"]["files"] == ["tests/test_receipt.py"]
    assert found["WRONG_SPECIAL_CASE"]["suspect"] is True and found["WRONG_SPECIAL_CASE"]["tests"] == [modules_toy.RECEIPT]
    assert found["WRONG_SPECIAL_CASE"]["modules"]["outcomes"] == {modules_toy.RECEIPT: "FAILED"}
    assert found["ALTERNATIVE_FIX"]["suspect"] is False and found["GOLD_PATCH"]["suspect"] is False
    assert len(gold_gradings) == 4  # gold's graded file once and its run of the modules' tests once; ours and its second run
    without = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, modules_toy.WRONG_SPECIAL_CASE)
    assert without.differential["suspect"] is False and "modules" not in without.differential  # the first comparison alone misses it
    stored = json.loads(differential.cache_path(tmp_path / "cache", differential.gold_key(row, without) + ".modules").read_text())
    assert stored["command"] == "python3 -m unittest -v tests.test_money tests.test_receipt" and stored["statuses"][modules_toy.RECEIPT] == "PASSED"


async def test_a_patch_cannot_forge_or_rewrite_the_tests_it_is_compared_on(tmp_path):
    """The second run is graded as the reward grades: the guard sees a verdict forged where only the unlisted test looks
    (and with the guard off the forgery passes: the attack is real), and the files it runs go back to the start first."""
    row = normalise(await modules_toy.modules_toy_row(str(tmp_path / "cache")))
    reward = SWEBenchReward.from_config(config(tmp_path / "cache", differential_modules=True))
    forged = await reward.grade_patch(row, FORGED)
    assert forged.status == "resolved" and forged.differential["suspect"] is True, forged.differential
    assert any("did not see pass: " + modules_toy.RECEIPT in problem for problem in forged.differential["modules"]["problems"])
    unguarded = await SWEBenchReward.from_config(config(tmp_path / "cache", differential_modules=True, guard=False)).grade_patch(row, FORGED)
    assert unguarded.status == "resolved" and unguarded.differential["suspect"] is False, unguarded.differential
    rewritten = await reward.grade_patch(row, TEST_REWRITTEN)
    assert rewritten.status == "resolved" and rewritten.differential["tests"] == [modules_toy.RECEIPT], rewritten.differential


@pytest.mark.parametrize(
    "path,packages,module",
    [("src/flask/config.py", {"src/flask"}, "flask.config"), ("sphinx/ext/viewcode.py", {"sphinx", "sphinx/ext"}, "sphinx.ext.viewcode"),
     ("a/b/__init__.py", {"a", "a/b"}, "a.b"), ("money.py", set(), "money"), ("scripts/tool.py", set(), "tool")],
    ids=["src-layout", "nested", "package", "top-level", "not-a-package"],
)  # fmt: skip
def test_a_changed_files_module_is_its_path_below_the_packages_above_it(path, packages, module):
    assert module_tests.module_name(path, packages) == module


@pytest.mark.parametrize(
    "command,runner,named",
    [("pytest -rA tests/test_config.py", "pytest", "tests/test_x.py"),
     ("export PYTHONWARNINGS=all; python -X dev -m pytest -rA --durations 25 tests/test_ext_viewcode.py", "pytest", "tests/test_x.py"),
     ("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views.tests", "django", "test_x"),
     ("python3 -m unittest -v tests.test_money", "unittest", "tests.test_x"),
     ("bin/test -C --verbose sympy/core/tests/test_basic.py", "sympy", "tests/test_x.py"),
     ("go test ./...", None, None), ("tox --current-env -epy39 -v --", None, None)],
    ids=["pytest", "pytest-last-step", "django", "unittest", "sympy", "go", "tox"],
)  # fmt: skip
def test_the_runner_is_given_the_files_as_it_is_given_the_rows_own(command, runner, named):
    assert module_tests.runner_of(command) == runner
    if runner is not None:
        assert module_tests.command_with(command, ["tests/test_x.py"], runner) == f"{command} {named}"


async def test_the_test_files_that_import_a_changed_module_are_found_by_their_imports(tmp_path):
    files = {"src/shop/__init__.py": "", "src/shop/money.py": "x = 1\n", "tests/test_a.py": "from shop.money import split\n",
             "tests/test_b.py": "import shop.money as m\n", "tests/test_c.py": "from shop import (money)\n",
             "tests/test_d.py": "from shop import moneybags\nimport shop.moneyx\nfrom shop import Money\n",
             "other/util_test.py": "    from shop import thing, money\n", "tests/helpers.py": "from shop.money import x\n"}  # fmt: skip
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    subprocess.run("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base", shell=True, cwd=tmp_path, check=True)
    patch = "diff --git a/src/shop/money.py b/src/shop/money.py\n--- a/src/shop/money.py\n+++ b/src/shop/money.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    sandbox = make_deployment({"type": "local", "workdir": str(tmp_path)})
    await sandbox.start()
    try:
        found = await module_tests.importing_test_files(sandbox, str(tmp_path), patch)
    finally:
        await sandbox.stop()
    assert found == ["other/util_test.py", "tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]  # not a helper, a name alike, a re-export
