"""`uni-agent-gym validate` (`validation/`): each task's gold patch resolves, its test patch alone does not, the empty
patch earns 0; a task that fails says why. On a real task (a Ruby toy graded by swebench's parser on the local
deployment, with the host's ruby) and three broken copies of it, through the command line as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import canary_toys
from tests.conftest import require
from uni_agent_gym.validation import REASONS

pytestmark = pytest.mark.slow


async def test_a_good_task_validates_and_each_broken_one_fails_with_its_reason(tmp_path):
    require(subprocess.run(["sh", "-c", "command -v ruby"], capture_output=True).returncode == 0, "ruby (make setup installs it)")
    row = (await canary_toys.toy_row(canary_toys.TOYS["ruby_unit"], str(tmp_path / "cache"))).to_dict()  # the row a dataset file holds
    context = row["test_patch"].splitlines()
    garbled = "\n".join(line.replace(" ", "  ", 1) if line.startswith(" ") and line.strip() else line for line in context) + "\n"
    rows = {
        "good": row,
        "test_patch": {**row, "instance_id": "toy-bad-test-patch", "test_patch": garbled},  # context lines the base does not have
        "base": {**row, "instance_id": "toy-passes-at-base", "FAIL_TO_PASS": row["PASS_TO_PASS"]},  # passes without the fix
        "started": {**row, "instance_id": "toy-no-runner", "test_command": "uag-no-such-runner test/test_arith.rb"},
    }
    assert garbled != row["test_patch"]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(value) + "\n" for value in rows.values()))
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "validate", "--dataset", str(dataset), "--deployment", "local",
                           "--set", f"env.cache_dir={tmp_path / 'cache'}", "--workers", "2", "--output", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "3 task(s) failed their self-check" in done.stdout and "validated 1 of 4 task(s)" in done.stdout, done.stdout
    report = json.loads((tmp_path / "out" / "validation.json").read_text())
    results = {result["instance_id"]: result for result in report["results"]}
    good = results[row["instance_id"]]
    assert good["validated"] and good["reasons"] == [], good
    assert [good["runs"][name]["status"] for name in ("gold", "test patch alone", "empty")] == ["resolved", "unresolved", "unresolved"]
    for kind, broken in list(rows.items())[1:]:
        result = results[broken["instance_id"]]
        assert not result["validated"] and [reason.split(":")[0] for reason in result["reasons"]] == [kind], result
        assert report["by_reason"][kind] == [broken["instance_id"]] and REASONS[kind] in done.stdout, (kind, report["by_reason"])
    assert "uag-no-such-runner: not found" in results["toy-no-runner"]["reasons"][0] or "command not found" in results["toy-no-runner"]["reasons"][0]
    assert results["toy-no-runner"]["runs"]["gold"]["status"] == "infra_error"  # the zero rule: not a 0 the policy learns from
    assert results["toy-passes-at-base"]["reasons"][0] == f"base: {row['PASS_TO_PASS'][0]}"


async def test_eval_prepare_data_and_rollouts_consult_what_validated_on_this_machine(tmp_path, docker_image):
    """`workspaces.validated.consult` on real labelled images: one recorded as validated, one not, and the toy (nothing to
    validate). warn runs all and names the other once; require leaves it out, naming it; skip does not look. An episode
    on the other under `env.validation: require` fails to start as the infrastructure's fault."""
    import docker

    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.datasets import Task
    from uni_agent_gym.envs import AsyncSWEEnv
    from uni_agent_gym.errors import DeploymentError
    from uni_agent_gym.workspaces.history import HISTORY_LABEL
    from uni_agent_gym.workspaces.image_builder import _relabel
    from uni_agent_gym.workspaces.recorded_environment import COMMIT_LABEL, DIGEST_LABEL, NAME_LABEL
    from uni_agent_gym.workspaces.validated import NothingValidated, consult, record

    client = docker.from_env()
    names = {"good": "uag-test/validated:good", "other": "uag-test/validated:other"}
    for kind, name in names.items():
        client.images.get(docker_image).tag(name)
        _relabel(name, {DIGEST_LABEL: f"digest-{kind}", COMMIT_LABEL: "a" * 40, HISTORY_LABEL: "ancestry", NAME_LABEL: name})
    cache = tmp_path / "cache"
    tasks = [Task("good-1", "o/r", "swe-bench", image_name=names["good"]), Task("other-1", "o/r", "swe-bench", image_name=names["other"]),
             Task("toy-1", "o/r", "swe-bench", needs_environment=False)]  # fmt: skip
    record(cache, tasks[0], "digest-good", client.images.get(names["good"]).id, True, [])
    record(cache, tasks[1], "digest-other", "sha256:another-build-of-it", True, [])  # validated, but not this image
    said: list[str] = []
    assert consult(tasks, "warn", cache, said.append) == tasks and len(said) == 1 and "1 of 3 task(s) not validated on this machine (other-1)" in said[0]
    assert consult(tasks, "require", cache, said.append) == [tasks[0], tasks[2]] and said[1].endswith("1 task(s) left out, not validated on this machine: other-1")
    assert consult(tasks, "skip", cache, said.append) == tasks and len(said) == 2
    with pytest.raises(NothingValidated, match="none of the 1 task"):
        consult(tasks[1:2], "require", cache, said.append)

    # a training rollout under validation: require: the episode's reset fails as the infrastructure's (masked), no sandbox started
    row = {"instance_id": "x__y-1", "repo": "x/y", "base_commit": "a" * 40, "version": "0", "problem_statement": "p", "test_patch": "",
           "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": [], "image_name": names["other"], "workdir": "/testbed"}  # fmt: skip
    config = GymConfig.model_validate({"deployment": {"type": "docker"}, "env": {"cache_dir": str(cache), "validation": "require", "workspace": "image"}})
    before = {container.id for container in client.containers.list(all=True)}
    env = AsyncSWEEnv(config)
    with pytest.raises(DeploymentError, match=f"its image {names['other']} has not passed `uni-agent-gym validate` on this machine"):
        await env.reset(options={"instance": row})
    await env.close()
    assert {container.id for container in client.containers.list(all=True)} == before
    for name in names.values():
        client.images.remove(name, force=True)
