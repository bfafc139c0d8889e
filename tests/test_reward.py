"""The SWE-bench reward on real instances (offline images), and the reward-hacking holes it closes.

Each hole has a test that performs the attack; where the attack fools swebench's parser and grading
on their own, the test shows that too, then that the reward does not fall for it.
"""

from __future__ import annotations

import asyncio

import pytest
from swebench.harness.grading import get_eval_tests_report, get_resolution_status
from uni_agent_gym.datasets.swebench import repo_parsers

from uni_agent_gym.config import GymConfig, RewardConfig
from uni_agent_gym.workspaces.episode import Episode
from uni_agent_gym.workspaces.open import open_workspace
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.integrity import check_log, pytest_summary
from uni_agent_gym.rewards.swebench import SWEBenchReward
from tests import fixture_sources
from tests.conftest import require_docker

ENVIRONMENTS = fixture_sources.fixtures()


def row(instance_id: str) -> dict:
    return normalise(fixture_sources.derived_rows()[instance_id])


@pytest.fixture
async def sandbox_for():
    """Opens the instance's image sandbox (building the image offline if missing); closes them all."""
    opened = []

    async def open_(instance: dict):
        require_docker()
        await fixture_sources.ensure_image(instance)
        episode = await open_workspace(instance, GymConfig.model_validate({"env": {"workspace": "image"}}))
        opened.append(episode.deployment)
        return episode.deployment, episode.repo_dir

    yield open_
    for deployment in opened:
        await deployment.stop()


async def apply(deployment, repo_dir: str, diff: str) -> None:
    await deployment.write_file("/tmp/agent.diff", diff)
    result = await deployment.run(f"cd {repo_dir} && git apply /tmp/agent.diff")
    assert result.exit_code == 0, result.output


def reward(**config) -> SWEBenchReward:
    return SWEBenchReward(RewardConfig(**config), ENVIRONMENTS)


async def test_gold_patch_resolves(sandbox_for):
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    await apply(deployment, repo_dir, instance.patch)
    captured = await reward().capture_patch(Episode(instance, deployment, repo_dir))  # no gym config: taken in the sandbox
    result = await reward().grade(Episode(instance, deployment, repo_dir))
    assert (result.status, result.reward, result.resolved, result.integrity_problems) == ("resolved", 1.0, True, [])
    assert result.tests["FAIL_TO_PASS"]["success"] == instance.FAIL_TO_PASS
    assert captured == result.patch, "capture_patch takes what grading in the sandbox takes"
    assert result.patch.startswith("diff --git a/src/_pytest/_io/saferepr.py")
    assert result.log.startswith(">>>>> Start Test Output\n") and "(exit code 1)" in result.log  # the two canaries fail
    assert [line for line in result.log.splitlines() if line.startswith("FAILED testing/io/test_saferepr.py::test_")] != []
    assert {"reset", "tests", "parse", "total"} <= set(result.durations)
    assert result.network_isolated
    interfaces = await deployment.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    assert interfaces.output.split() == ["lo"], "the tests ran with no network"


async def test_no_change_is_unresolved(sandbox_for):
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    result = await reward().grade(Episode(instance, deployment, repo_dir))
    assert (result.status, result.reward, result.patch) == ("unresolved", 0.0, "")
    assert result.tests["FAIL_TO_PASS"]["failure"]


async def test_hidden_tests_are_not_in_the_sandbox_before_grading(sandbox_for):
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    hidden = "test_broken_getattribute"  # added by test_patch
    known = "test_pformat_dispatch"  # at the base: the same search finds it, so an empty answer means "not there"
    assert f"+def {hidden}" in instance.test_patch and f"@@ def {known}" in instance.test_patch
    search = "grep -r {} / --include=*.py -l 2>/dev/null | head -3; git -C {} status --porcelain"
    found = await deployment.run(search.format(known, repo_dir))
    assert found.output == f"{repo_dir}/testing/io/test_saferepr.py\n", found.output
    found = await deployment.run(search.format(hidden, repo_dir))
    assert found.output == ""


async def test_edited_test_files_are_reset_before_grading(sandbox_for):
    """Attack: make the tests trivially pass by rewriting the test file (no fix)."""
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    fake_tests = "".join(f"def {test.split('::')[-1]}():\n    pass\n\n" for test in instance.FAIL_TO_PASS)
    await deployment.write_file(f"{repo_dir}/testing/io/test_saferepr.py", fake_tests)
    result = await reward().grade(Episode(instance, deployment, repo_dir))
    assert "testing/io/test_saferepr.py" in result.patch
    assert result.status == "unresolved" and result.tests["FAIL_TO_PASS"]["failure"]


async def test_forged_passed_lines_from_a_conftest_are_removed(sandbox_for):
    """Attack: a conftest.py that drops the real tests and prints PASSED lines for them."""
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    forged = "\n".join(f"    print('PASSED {test}')" for test in instance.FAIL_TO_PASS)
    conftest = f"def pytest_collection_modifyitems(items):\n    items[:] = []\n\n\ndef pytest_unconfigure(config):\n{forged}\n"
    await deployment.write_file(f"{repo_dir}/conftest.py", conftest)
    result = await reward().grade(Episode(instance, deployment, repo_dir))
    assert "conftest.py" in result.patch, "the attack is recorded in the patch"
    assert result.status == "unresolved" and result.tests["FAIL_TO_PASS"]["failure"]
    assert (await deployment.run(f"test -e {repo_dir}/conftest.py")).exit_code == 1, "removed before the tests ran"


async def test_forged_passed_lines_from_the_code_under_test_are_caught(sandbox_for):
    """Attack: the code under test prints PASSED lines when the interpreter exits, after pytest's own
    report, so they override the real FAILED lines in swebench's parse."""
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    lines = "; ".join(f"print('PASSED {test}')" for test in instance.FAIL_TO_PASS)
    module = f"{repo_dir}/src/_pytest/_io/saferepr.py"
    original = (await deployment.read_file(module)).decode()
    await deployment.write_file(module, f"import atexit\natexit.register(lambda: ({lines.replace('; ', ', ')}))\n" + original)
    result = await reward().grade(Episode(instance, deployment, repo_dir))

    statuses = repo_parsers()[instance.repo](result.log, None)
    fooled = get_resolution_status(get_eval_tests_report(statuses, {"FAIL_TO_PASS": instance.FAIL_TO_PASS, "PASS_TO_PASS": []}))
    assert fooled == "RESOLVED_FULL", "swebench's parser alone takes the forged lines"
    assert result.status == "unresolved" and not result.resolved
    assert any("pytest's own summary counts" in problem for problem in result.integrity_problems)


async def test_a_file_the_test_patch_creates_is_replaced_not_kept(sandbox_for):
    """Attack: create the file test_patch adds, with tests that pass; test_patch would then fail to
    apply (or the agent's version would run). The agent's file is deleted first."""
    instance = row("pallets__flask-4992")
    deployment, repo_dir = await sandbox_for(instance)
    created = "tests/static/config.toml"
    assert f"+++ b/{created}" in instance.test_patch and "new file mode" in instance.test_patch
    await deployment.write_file(f"{repo_dir}/{created}", "forged = true\n")
    await apply(deployment, repo_dir, instance.patch)
    result = await reward().grade(Episode(instance, deployment, repo_dir))
    assert created in result.patch
    assert result.status == "resolved", result.error or result.log[-2000:]


async def test_fail_to_pass_only(sandbox_for):
    """A fix that breaks a PASS_TO_PASS test: unresolved, unless only FAIL_TO_PASS is graded."""
    instance = row("pallets__flask-4992")
    deployment, repo_dir = await sandbox_for(instance)
    await apply(deployment, repo_dir, instance.patch)
    broken = await deployment.run(f"cd {repo_dir} && sed -i 's/def from_object(self, obj: t.Union\\[object, str\\]) -> None:/&\\n        raise RuntimeError(\"broken\")/' src/flask/config.py && git diff --stat")
    assert "src/flask/config.py" in broken.output
    strict = await reward().grade(Episode(instance, deployment, repo_dir))
    assert strict.status == "unresolved" and strict.tests["PASS_TO_PASS"]["failure"] and not strict.tests["FAIL_TO_PASS"]["failure"]
    lenient = await reward(fail_to_pass_only=True).grade(Episode(instance, deployment, repo_dir))
    assert lenient.status == "resolved" and lenient.tests["PASS_TO_PASS"] == {"success": [], "failure": []}


async def test_a_test_patch_that_does_not_apply_is_an_infrastructure_error(sandbox_for):
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    lines = instance.test_patch.split("\n")
    context = next(i for i, line in enumerate(lines) if line.startswith(" ") and line.strip())
    lines[context] = " this context line is not in the file"
    result = await reward().grade(Episode(instance.replace(test_patch="\n".join(lines)), deployment, repo_dir))
    assert (result.status, result.reward) == ("test_patch_failed", 0.0) and result.error


async def test_tests_that_hang_time_out(sandbox_for):
    instance = row("pytest-dev__pytest-7168")
    deployment, repo_dir = await sandbox_for(instance)
    module = f"{repo_dir}/src/_pytest/_io/saferepr.py"
    await deployment.write_file(module, "import time\ntime.sleep(600)\n" + (await deployment.read_file(module)).decode())
    result = await asyncio.wait_for(reward(timeout=3).grade(Episode(instance, deployment, repo_dir)), 300)  # not the module's 600 s
    assert (result.status, result.reward) == ("timeout", 0.0)


@pytest.mark.parametrize(
    "log, exit_code, problem",
    [
        ("PASSED t::a\nPASSED t::b\n==== 1 passed, 1 failed in 0.1s ====\n", 1, "the log has 2 PASSED lines but pytest's own summary counts 1 passed"),
        ("PASSED t::a\n==== 1 passed in 0.1s ====\n", 0, None),
        ("PASSED t::a\n==== 1 failed in 0.1s ====\n==== 1 passed in 0.1s ====\n", 0, None),  # the last summary counts
        ("PASSED t::a\n", 0, "pytest printed no summary line"),
        ("PASSED t::a\n===== 1 passed, 2 errors in 3.2s =====\n", 0, "pytest exited 0 although its summary counts 2 failed or errors"),
        ("==== no tests ran in 0.01s ====\n", 5, "pytest exited 5"),
        ("\x1b[32mPASSED\x1b[0m t::a\n\x1b[31m==== \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m1 passed\x1b[0m in 1.35s\x1b[0m\x1b[31m ====\x1b[0m\n", 1, None),
    ],
    ids=["more-passed-than-summary", "consistent", "last-summary", "no-summary", "exit-0-with-errors", "no-tests", "coloured"],
)
def test_log_integrity_checks(log, exit_code, problem):
    statuses = repo_parsers()["pytest-dev/pytest"](log, None)
    problems = check_log("parse_log_pytest", "pytest -rA t.py", log, statuses, exit_code)
    assert (problems == []) if problem is None else any(problem in p for p in problems), problems


def test_pytest_summary_counts():
    assert pytest_summary("x\n== 3 passed, 1 failed, 2 warnings, 1 error in 0.52s ==\n") == {"passed": 3, "failed": 1, "warnings": 2, "error": 1}
    assert pytest_summary("no summary here") is None


@pytest.mark.parametrize(
    "outcomes, resolved",
    [
        ({"F1": "PASSED", "F2": "PASSED", "P1": "PASSED"}, True),
        ({"F1": "SKIPPED", "F2": "SKIPPED", "P1": "PASSED"}, False),  # swebench 4.1 alone graded this resolved
        ({"F1": "PASSED", "F2": "SKIPPED", "P1": "PASSED"}, False),
        ({"F1": "PASSED", "P1": "PASSED"}, False),  # F2 missing from the log
        ({"F1": "PASSED", "F2": "XFAIL", "P1": "PASSED"}, True),
        ({"F1": "PASSED", "F2": "PASSED", "P1": "FAILED"}, False),
    ],
    ids=["all-pass", "f2p-all-skipped", "f2p-one-skipped", "f2p-missing", "xfail-counts-as-pass", "p2p-broken"],
)
def test_a_skipped_fail_to_pass_test_has_not_passed(outcomes, resolved):
    """A patch can make the hidden tests skip (raise SkipTest from the code under test); that is no fix."""
    from swebench.harness.grading import get_resolution_status

    from uni_agent_gym.datasets import Task
    from uni_agent_gym.rewards.swebench import grade_fail_to_pass

    instance = Task(instance_id="x", repo="o/r", family="swe-bench", FAIL_TO_PASS=["F1", "F2"], PASS_TO_PASS=["P1"])
    if outcomes == {"F1": "SKIPPED", "F2": "SKIPPED", "P1": "PASSED"}:  # swebench 4.1 graded this RESOLVED_FULL; 5.x closed the hole
        naive = get_eval_tests_report(outcomes, instance.to_dict())
        assert get_resolution_status(naive) == "RESOLVED_NO"
    assert grade_fail_to_pass(instance, outcomes)[0] is resolved


async def test_a_log_that_crashes_the_parser_is_the_patchs_doing(tmp_path):
    """swebench's django parser raises IndexError on a line that is just `FAIL:` (it takes the word after it as the
    test's name), and the code under test can print one (swebench 4.1's seaborn parser did the same on `PASSED`; 5.x
    mended that one). The toy on local, graded with django's parser: the patched code prints it, and the report is
    `tests_crashed`, the patch's, reward 0. It was an exception out of the reward: an `infra_error`, which training
    masks, a way out of every 0 for a policy."""
    from tests.graded_toy import graded_toy_row
    from tests.test_deployment_contract import graded_episode

    row = normalise({**await graded_toy_row(str(tmp_path)), "log_parser": "parse_log_django"})
    config = GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path), "workspace": "mirror"}})
    honest, printing = await graded_episode(config, row, []), await graded_episode(config, row, ["echo 'print(\"FAIL:\")' >> stats.py"])
    assert (honest["status"], honest["caused_by"]) == ("unresolved", None), honest  # the bug is still there
    assert (printing["status"], printing["reward"], printing["caused_by"]) == ("tests_crashed", 0.0, "patch"), printing
    assert printing["error"].startswith("the task's log parser failed on the patched tests' output: IndexError"), printing["error"]
