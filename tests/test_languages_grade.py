"""Instances in other languages than Python, graded the way every instance is: the agent's patch taken out of
its sandbox, applied in a fresh one, the test patch, the task's build, the tests, the dataset's own parser.
The rows are real SWE-bench Multilingual rows re-based onto Debian's source of a release
(`tests/language_fixtures.py`: redis in C, gin in Go, and a Multi-SWE-bench row, jackson-core in Java), on docker
and on ray. On every instance the agent types in the gold patch (1.0), the test patch alone (0.0: test files go back
to the start, the fix is missing) and nothing (0.0). In C, Go and Java the grader plants canary tests beside the
graded ones (`rewards/runner_canaries.py`, `rewards/junit_canaries.py`): gold resolves only if each ran and failed."""

from __future__ import annotations

import asyncio

import pytest

from tests import language_fixtures
from tests.conftest import run_to_completion
from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import EMPTY_PATCH
from uni_agent_gym.specs import environment_spec, load_environments
from uni_agent_gym.toolchains import toolchain_caches
from uni_agent_gym.workspaces.build_caches import directories_in

ROWS = language_fixtures.derived_rows()
pytestmark = pytest.mark.slow


async def episode(deployment: dict, row: dict, typed_in: str | None) -> dict:
    """The reward report of an episode in which the agent applies `typed_in` (a diff) or nothing."""
    config = GymConfig.model_validate({"deployment": deployment, "env": {"workspace": "image", "environments": str(language_fixtures.ENVIRONMENTS)}})
    env = AsyncSWEEnv(config)
    try:
        await env.reset(options={"instance": row})
        if typed_in is not None:
            command = f"cat > /tmp/typed.diff <<'UAG_EOF'\n{typed_in}UAG_EOF\ngit apply /tmp/typed.diff && rm /tmp/typed.diff"
            _, _, _, _, step = await env.step({"name": "execute_bash", "arguments": {"command": command}})
            assert step["exit_code"] == 0, step
        _, reward, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
        assert terminated and info["reward_report"]["reward"] == reward
        return info["reward_report"]
    finally:
        await env.close()


# Every instance on docker and on ray. What the ray deployment does differently is language-blind (the image goes
# through the cluster's registry to a node, the sandbox starts there at the task's working directory with the image's
# environment, commands and files go through the node's actor, the grading sandbox is a fresh one beside the agent's),
# but each language's image, working directory and runner take that road here: redis's build, gin's GOPATH, Debian's
# offline Maven under Multi-SWE-bench's harness with JUnit's canaries written on the node.
# Three episodes each: the gold patch typed in (1.0), the test patch alone (0.0: test files go back to the start, the
# fix is missing: the row's FAIL_TO_PASS tests fail, read by its runner's parser, and the canaries are planted and fail
# there too) and nothing at all (0.0: an empty patch is not graded, as the official harness does not grade one).
CASES = [(instance_id, kind) for kind in ("docker", "ray") for instance_id in sorted(ROWS)]


@pytest.mark.timeout(2400)  # a new machine first builds each toolchain and instance (redis: about 3 minutes)
@pytest.mark.parametrize("instance_id,kind", CASES, ids=[f"{instance_id}-{kind}" for instance_id, kind in CASES])
def test_gold_resolves_and_the_test_patch_or_nothing_does_not(instance_id, kind, docker_image, request):
    """On ray the image goes through the cluster's registry to the nodes, as a pulled image would. Each test builds
    only its own instance's image (and toolchain) where missing, so the worker groups build theirs side by side."""
    run_to_completion(language_fixtures.ensure_images([ROWS[instance_id]]))
    row = normalise(ROWS[instance_id])
    deployment: dict = {"type": "docker"}
    if kind == "ray":
        cluster = request.getfixturevalue("ray_cluster")
        deployment = cluster.deployment()
        cluster.push(row.image_name)  # a node's copy from before a rebuild is dropped: the nodes run this one
    if kind == "docker":  # its build filled its compiler caches where the toolchain keeps them: the next image's seed
        caches = toolchain_caches(environment_spec(row, load_environments(language_fixtures.ENVIRONMENTS)).toolchain)
        assert directories_in(row.image_name, caches) == caches and (caches != []) == (row.language in ("c", "go")), caches

    async def each() -> list[dict]:
        return await asyncio.gather(*(episode(deployment, row, diff) for diff in (row.patch, row.test_patch, None)))

    gold, test_patch_alone, nothing = run_to_completion(each())
    graded = row.FAIL_TO_PASS + row.PASS_TO_PASS
    assert gold["status"] == "resolved" and gold["reward"] == 1.0, (gold["error"], gold["test_statuses"], gold["build_log"][-2000:], gold["log"][-3000:])
    assert gold["test_statuses"] == {test: "PASSED" for test in graded} and gold["integrity_problems"] == []
    # canaries planted under names the command's filters select (Java: classes), each reported failed
    assert len(gold["canaries"]) >= 2 and len(test_patch_alone["canaries"]) >= 2, (gold["canaries"], gold["log"][-3000:])
    assert (test_patch_alone["status"], test_patch_alone["reward"]) == ("unresolved", 0.0), test_patch_alone["error"]
    assert sorted(test_patch_alone["tests"]["FAIL_TO_PASS"]["failure"]) == sorted(row.FAIL_TO_PASS), test_patch_alone["test_statuses"]
    assert test_patch_alone["tests"]["PASS_TO_PASS"]["failure"] == [], test_patch_alone["test_statuses"]
    assert (nothing["status"], nothing["reward"], nothing["patch"], nothing["error"], nothing["log"]) == ("unresolved", 0.0, "", EMPTY_PATCH, ""), nothing


def test_eval_through_a_scripted_endpoint_reports_each_language(tmp_path):
    """`uni-agent-gym eval` on two Go tasks against a scripted OpenAI-compatible endpoint on 127.0.0.1 (the only
    stand-in: the model): one applies the fix, one looks and finishes. The predictions, the report's per-language
    rate and each trajectory's language; `grade` of the predictions agrees."""
    import json
    import subprocess
    import sys

    from tests.scripted_endpoint import ScriptedEndpoint

    solved, looked = "gin-gonic__gin-3227", "gin-gonic__gin-3741"
    run_to_completion(language_fixtures.ensure_images([ROWS[solved], ROWS[looked]]))
    fix = f"cat > /tmp/fix.diff <<'UAG_EOF'\n{normalise(ROWS[solved]).patch}UAG_EOF\ngit apply /tmp/fix.diff && git diff --stat"
    scripts = {
        "RedirectFixedPath redirecting trailing slashes": [{"tool_call": {"name": "execute_bash", "arguments": {"command": fix}}},
                                                           {"tool_call": {"name": "finish", "arguments": {}}}],
        "Logging colour for < 200 should be white?": [{"tool_call": {"name": "execute_bash", "arguments": {"command": "go version && ls"}}},
                                                      {"tool_call": {"name": "finish", "arguments": {}}}],
    }  # fmt: skip
    dataset, environments = str(language_fixtures.DERIVED), str(language_fixtures.ENVIRONMENTS)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", *args], capture_output=True, text=True, timeout=1200)

    with ScriptedEndpoint(scripts) as endpoint:
        settings = tmp_path / "settings.json"
        settings.write_text(json.dumps({"model": {"base_url": endpoint.base_url, "model_name": "scripted/model", "api_key": "none"},
                                        "env": {"workspace": "image", "environments": environments}}))  # fmt: skip
        output = tmp_path / "run"
        done = cli("eval", "--config", str(settings), "--dataset", dataset, "--instance-ids", solved, looked, "--workers", "2",
                   "--output", str(output), "--deployment", "docker")  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((output / "report.json").read_text())
    assert (report["resolved"], report["instances"], report["resolved_ids"], report["empty_patch_ids"]) == (1, 2, [solved], [looked]), report
    assert report["per_language"] == {"go": {"instances": 2, "graded": 2, "resolved": 1, "resolved_rate": 0.5}}
    for instance_id in (solved, looked):
        trajectory = json.loads((output / "trajectories" / f"{instance_id}.json").read_text())
        assert trajectory["reward_report"]["language"] == "go" and trajectory["steps"][-1]["tool"] == "finish"
    graded = cli("grade", "--dataset", dataset, "--predictions", str(output / "predictions.jsonl"), "--environments", environments,
                 "--set", "env.workspace=image", "--output", str(tmp_path / "grade"), "--run-id", "check")  # fmt: skip
    assert graded.returncode == 0, graded.stdout + graded.stderr
    summary = json.loads((tmp_path / "grade" / "scripted__model.check.json").read_text())
    assert summary["resolved_ids"] == [solved] and summary["empty_patch_ids"] == [looked]


ENTRY_TEST_COMMAND = {item["instance_id"]: item.get("test_cmd_as_run") for item in load_environments(language_fixtures.ENVIRONMENTS).values()}


def test_a_c_image_built_with_its_environments_entry_grades_through_grade_without_them(tmp_path):
    """`images build` made redis-10764's image with its environments entry (`--only "/BZMPOP"`: swebench's spec of this
    version filters with `BZMPOP`, which no test name matches exactly). `grade` without `--environments` takes the
    commands the image records: gold 1.0, the test patch alone 0.0; both reports name the image's environment."""
    import json
    import subprocess
    import sys

    instance_id = "redis__redis-10764"
    row = normalise(ROWS[instance_id])
    run_to_completion(language_fixtures.ensure_images([ROWS[instance_id]]))
    noop = "diff --git a/UAG_NOOP.txt b/UAG_NOOP.txt\nnew file mode 100644\n--- /dev/null\n+++ b/UAG_NOOP.txt\n@@ -0,0 +1 @@\n+no fix\n"
    for name, patch in (("gold", row.patch), ("alone", noop)):
        predictions = tmp_path / f"{name}.jsonl"
        predictions.write_text(json.dumps({"instance_id": instance_id, "model_name_or_path": name, "model_patch": patch}) + "\n")
        done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "grade", "--dataset", str(language_fixtures.DERIVED), "--predictions",
                               str(predictions), "--set", "env.workspace=image", "--output", str(tmp_path / name), "--run-id", "check"],
                              capture_output=True, text=True, timeout=1200)  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        summary = json.loads((tmp_path / name / f"{name}.check.json").read_text())
        report = json.loads((tmp_path / name / "check" / f"{instance_id}.json").read_text())
        assert summary["resolved_ids"] == ([instance_id] if name == "gold" else []) and summary["error_ids"] == [], (name, summary, report["error"], report["log"][-2000:])
        assert report["test_command"] == ENTRY_TEST_COMMAND[instance_id] and report["build_command"] == "make distclean && make", report["test_command"]
        assert report["environment"] and report["test_statuses"], report


def test_a_version_swebench_lacks_with_a_mirror_and_no_image_builds_and_validates_through_the_cli(tmp_path, docker_image):
    """A Go row of a version swebench has no spec for (so no commands of its own), its environments entry giving its
    toolchain, install and test command, a mirror and no instance image, on docker's `auto` workspace, through
    `uni-agent-gym validate`. Before, such a task fell back to the mirror checked out into the deployment's plain image
    (no Go toolchain: `go: not found`, the gold patch graded 0.0); now its instance image is built from the mirror (once,
    under the task's name) and graded there: gold 1.0, the test patch alone 0.0, the empty patch 0.0."""
    import json
    import subprocess
    import sys

    import docker

    instance_id = "gin-gonic__gin-3227"
    row = {**ROWS[instance_id], "version": "uag-unknown", "image_name": f"uag-test/unknown-version:{instance_id.lower()}"}
    client = docker.from_env()
    try:
        client.images.remove(row["image_name"], force=True)
    except docker.errors.ImageNotFound:
        pass
    entry = {**load_environments(language_fixtures.ENVIRONMENTS)[instance_id], "test_cmd_as_run": 'go test -v . -run "^TestRedirect"'}
    (tmp_path / "environments.json").write_text(json.dumps([entry]))
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    built = language_fixtures.build_config([ROWS[instance_id]])
    (tmp_path / "config.json").write_text(json.dumps({"env": {"cache_dir": built.env.cache_dir, "mirrors": built.env.mirrors, "workspace": "auto"},
                                                      "deployment": {"type": "docker", "image": docker_image}}))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "validate", "--dataset", str(tmp_path / "rows.jsonl"), "--config",
                           str(tmp_path / "config.json"), "--environments", str(tmp_path / "environments.json"), "--output", str(tmp_path / "out"),
                           "--variants", "0"],
                          capture_output=True, text=True, timeout=1200)  # fmt: skip
    report = json.loads((tmp_path / "out" / "validation.json").read_text())
    assert done.returncode == 0, (done.stdout[-2000:], report["results"][0]["runs"] if report["results"] else report)
    runs = report["results"][0]["runs"]
    assert [(runs[name]["status"], runs[name]["reward"]) for name in ("gold", "test patch alone", "empty")] == [
        ("resolved", 1.0), ("unresolved", 0.0), ("unresolved", 0.0)], runs
    assert client.images.get(row["image_name"]).labels["uni-agent-gym.task-environment"] == report["results"][0]["environment"]
    client.images.remove(row["image_name"], force=True)
