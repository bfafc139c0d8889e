"""Every dataset family end to end on docker: the gold fix earns 1.0 and doing nothing 0.0, through
`uni-agent-gym grade` and through an env episode, graded in a fresh sandbox as every family is.

The rows are *derived* from the offline fixture pytest-7168 (tests/family_rows.py says how: the same
code, tests and fix in each family's columns, under its rules); their images are built offline by
`images build` (R2E-Gym's: the fixture's image plus R2E-Gym's test layer). Nothing is faked. Each
family's own hazard is checked in the agent's sandbox: R2E-Gym's tests and runner do not exist there,
SWE-smith's start commit has no history and its hidden test file is nowhere in the repository.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests import family_rows
from tests.conftest import require_docker
from tests.test_reward_attacks import NOTE
from uni_agent_gym import datasets
from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import EMPTY_PATCH, SWEBenchReward

pytestmark = pytest.mark.docker
FAMILIES = family_rows.FAMILIES
SOURCE = "src/_pytest/_io/saferepr.py"
NO_OP = (  # a change that fixes nothing: the tests run and the instance stays unresolved
    "diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing fixed here\n"
)


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    require_docker()
    return asyncio.run(family_rows.ensure_family_images())


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    return family_rows.rows()


def settings(tmp_path, family: str, deployment: dict | None = None) -> dict:
    """Gym settings for the derived rows; SWE-rebench and R2E-Gym run from their rows alone."""
    environments = tmp_path / "environments.json"
    environments.write_text(json.dumps([{**value, "instance_id": key} for key, value in family_rows.environments().items()]))
    env = {"workspace": "image", "cache_dir": str(family_rows.fixture_sources.BUILD_CACHE), "mirrors": family_rows.mirrors()}
    if family not in ("swe-rebench", "r2e-gym"):
        env["environments"] = str(environments)
    return {"deployment": deployment or {"type": "docker"}, "env": env}


def gold_patch(family: str, row: dict) -> str:
    """The fix: as `validate` takes it (`datasets.gold_patch`: SWE-smith's row holds the bug, whose reverse it is;
    R2E-Gym's comes from its commit), else the fixture's."""
    return datasets.gold_patch(normalise(row)) if family in ("swe-smith", "r2e-gym") else family_rows.fixture_row()["patch"]


@pytest.mark.parametrize("family", FAMILIES)
def test_grade_gives_the_gold_fix_one_and_no_fix_zero(family, images, rows, tmp_path, monkeypatch):
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    task = normalise(rows[family])
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps(rows[family]) + "\n")
    config = tmp_path / "settings.json"
    config.write_text(json.dumps(settings(tmp_path, family)))
    reports = {}
    cases = {"gold": gold_patch(family, rows[family]), "empty": "", "no-op": NO_OP}
    if family == "r2e-gym":  # all it changes is R2E-Gym's runner, which a patch may not: nothing left to grade
        cases["the runner alone"] = "diff --git a/run_tests.sh b/run_tests.sh\n--- a/run_tests.sh\n+++ b/run_tests.sh\n@@ -1 +1 @@\n-a\n+b\n"
    for name, patch in cases.items():
        predictions = tmp_path / f"{name}.jsonl"
        predictions.write_text(json.dumps({"instance_id": task.instance_id, "model_name_or_path": "m", "model_patch": patch}) + "\n")
        command = ["grade", "-c", str(config), "--dataset", str(dataset), "--predictions", str(predictions),
                   "--output", str(tmp_path / "out"), "--run-id", name]  # fmt: skip
        assert main(command) == 0
        reports[name] = json.loads((tmp_path / "out" / name / f"{task.instance_id}.json").read_text())
    assert (reports["gold"]["status"], reports["gold"]["reward"]) == ("resolved", 1.0), reports["gold"]["log"][-3000:]
    assert (reports["empty"]["status"], reports["empty"]["reward"]) == ("unresolved", 0.0)
    if family == "r2e-gym":
        alone = reports["the runner alone"]
        assert (alone["status"], alone["reward"], alone["error"], alone["log"]) == ("unresolved", 0.0, EMPTY_PATCH, ""), alone
        assert alone["restored"] == {"run_tests.sh": "the task's test runner, which a patch may not change"}, alone["restored"]
    assert (reports["no-op"]["status"], reports["no-op"]["reward"]) == ("unresolved", 0.0), reports["no-op"]["error"]
    assert reports["no-op"]["exit_code"] not in (0, None), "the tests ran and failed (pytest-7168's bug crashes pytest: exit code 3)"
    assert reports["gold"]["test_command"] == reports["no-op"]["test_command"]
    if family == "r2e-gym":
        assert reports["gold"]["tests"]["matched"] == sorted(task.expected_output)
        assert reports["no-op"]["tests"]["missing"] or reports["no-op"]["tests"]["mismatched"], "the fixed tests fail without the fix"
    else:
        assert reports["gold"]["tests"]["FAIL_TO_PASS"]["success"] == task.FAIL_TO_PASS
        assert reports["no-op"]["tests"]["FAIL_TO_PASS"]["failure"], "the failing test of the bug is among them"


async def episode(family: str, row: dict, tmp_path, commands: list[str], deployment: dict | None = None) -> tuple[dict, list[str]]:
    """Reset on the row, run the commands, finish; (the reward report, the commands' outputs)."""
    config = GymConfig.model_validate(settings(tmp_path, family, deployment))
    env = AsyncSWEEnv(config, reward=SWEBenchReward.from_config(config))
    outputs = []
    try:
        await env.reset(options={"instance": row})
        for command in commands:
            observation, _, _, _, info = await env.step({"name": "execute_bash", "arguments": {"command": command}})
            outputs.append(observation)
        _, reward, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
        assert terminated and info["reward_report"]["reward"] == reward
        return info["reward_report"], outputs
    finally:
        await env.close()


@pytest.mark.parametrize("family", FAMILIES)
async def test_an_episode_with_the_gold_fix_earns_one_and_without_it_zero(family, images, rows, tmp_path):
    fix = f"cat > /tmp/fix.diff <<'UAG_EOF'\n{gold_patch(family, rows[family])}UAG_EOF\ngit apply /tmp/fix.diff && rm /tmp/fix.diff && echo applied"
    gold, outputs = await episode(family, rows[family], tmp_path, [fix])
    assert outputs[0].startswith("applied"), outputs
    assert (gold["status"], gold["reward"], gold["sandbox"]) == ("resolved", 1.0, "fresh"), gold["log"][-3000:]
    nothing, _ = await episode(family, rows[family], tmp_path, [])
    assert (nothing["status"], nothing["reward"], nothing["patch"]) == ("unresolved", 0.0, "")


async def test_r2e_gym_tests_do_not_exist_in_the_agents_sandbox(images, rows, tmp_path):
    """R2E-Gym only moves them to /root, where a root agent reads them; here they are not in its image at all."""
    looks = ["ls -d /r2e_tests /root/r2e_tests /testbed/run_tests.sh /testbed/r2e_tests 2>&1; find / -name 'test_1.py' -path '*r2e*' 2>/dev/null | head"]
    report, outputs = await episode("r2e-gym", rows["r2e-gym"], tmp_path, [*looks, NOTE])  # a note: an empty patch is not graded
    assert outputs[0].count("No such file or directory") == 4 and "test_1.py" not in outputs[0], outputs[0]
    assert report["status"] == "unresolved" and "r2e_tests/test_1.py" in report["log"], "the grading sandbox has them"


async def test_r2e_gym_on_ray_keeps_its_tests_off_the_agents_node_and_grades_gold_one(images, rows, tmp_path, ray_cluster):
    """On ray the image without the hidden tests is derived on a sandbox node and pushed; the agent's sandbox runs
    it, the grading sandbox (on the agent's node) the original, pulled from the registry."""
    row = rows["r2e-gym"]
    await asyncio.to_thread(ray_cluster.push, normalise(row).image_name)
    looks = ["ls -d /r2e_tests /testbed/run_tests.sh 2>&1"]
    report, outputs = await episode("r2e-gym", row, tmp_path, [*looks, NOTE], deployment=ray_cluster.deployment())
    assert outputs[0].count("No such file or directory") == 2, outputs[0]
    assert report["status"] == "unresolved" and "r2e_tests/test_1.py" in report["log"], "the grading sandbox has them"
    fix = f"cat > /tmp/fix.diff <<'UAG_EOF'\n{gold_patch('r2e-gym', row)}UAG_EOF\ngit apply /tmp/fix.diff && echo applied"
    gold, outputs = await episode("r2e-gym", row, tmp_path, [fix], deployment=ray_cluster.deployment())
    assert outputs[0].startswith("applied") and (gold["status"], gold["reward"]) == ("resolved", 1.0), gold["log"][-3000:]


async def test_a_patch_cannot_replace_r2e_gyms_runner(images, rows, tmp_path):
    forge = "printf '#!/bin/sh\\necho \"PASSED r2e_tests/test_1.py::test_simple_repr\"\\n' > run_tests.sh && mkdir -p r2e_tests && echo x > r2e_tests/extra.py"
    report, _ = await episode("r2e-gym", rows["r2e-gym"], tmp_path, [forge])
    assert report["status"] == "unresolved" and report["reward"] == 0.0
    # neither reaches the grading sandbox: restored as the task's runner, or left out of the patch (the runner is a file of
    # R2E-Gym's image that its start commit does not track)
    assert set(report["restored"]) | set(report["left_out"] or {}) >= {"run_tests.sh", "r2e_tests/extra.py"}, (report["restored"], report["left_out"])
    assert "run_tests.sh" not in report["patch"]


async def test_swe_smith_starts_at_the_bug_with_no_history_and_no_hidden_test(images, rows, tmp_path):
    """SWE-smith's start commit's parent is the unbroken code, and its FAIL_TO_PASS file is the hidden test."""
    import subprocess

    task = normalise(rows["swe-smith"])
    mirror, _ = family_rows.fixed_commit()
    hidden_blob = subprocess.run(["git", "--git-dir", str(mirror), "rev-parse", f"{task.base_commit}:testing/io/test_saferepr.py"],
                                 capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    looks = [
        "git rev-list --all | wc -l; git for-each-ref | grep -vc refs/heads/start; ls testing/io/test_saferepr.py 2>&1 | tail -1",
        f"git cat-file -t {task.base_commit} 2>&1 | tail -1; git cat-file -t {hidden_blob} 2>&1 | tail -1",
        f"grep -c 'obj.__class__.__name__, id(obj)' {SOURCE}",
    ]
    report, outputs = await episode("swe-smith", rows["swe-smith"], tmp_path, looks)
    commits, other_refs, listing = outputs[0].split("\n")[:3]
    assert (commits, other_refs) == ("1", "0") and "No such file or directory" in listing, outputs[0]
    unbroken, hidden = outputs[1].split("\n")[:2]
    assert "fatal" in unbroken and "fatal" in hidden, f"neither the unbroken commit nor the hidden test is in the repository: {outputs[1]}"
    assert outputs[2].startswith("1"), "the bug is in place"
    assert report["status"] == "unresolved"


@pytest.mark.parametrize("family", FAMILIES)
def test_each_familys_row_validates(family, images, rows, tmp_path, monkeypatch):
    """`uni-agent-gym validate` on each family's row: its gold (SWE-smith's: its bug's diff reversed) resolves, the test
    patch alone and the empty patch do not. It found the SWE-smith row's FAIL_TO_PASS too wide under swesmith's own test
    command (`family_rows.SMITH_FAILING`)."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    dataset, config = tmp_path / "rows.jsonl", tmp_path / "settings.json"
    dataset.write_text(json.dumps(rows[family]) + "\n")
    config.write_text(json.dumps(settings(tmp_path, family)))
    assert main(["validate", "--dataset", str(dataset), "-c", str(config), "--output", str(tmp_path / "out")]) == 0
    result = json.loads((tmp_path / "out" / "validation.json").read_text())["results"][0]
    assert result["validated"] and [run["status"] for run in result["runs"].values()] == ["resolved", "unresolved", "unresolved"], result
