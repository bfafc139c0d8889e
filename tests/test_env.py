"""The env end to end: the built-in toy task, real fixture instances, format errors, budgets, faults."""

from __future__ import annotations

import json
import secrets
import warnings
from pathlib import Path

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import uni_agent_gym
from uni_agent_gym import toy
from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs import AsyncSWEEnv, ResetNeeded
from uni_agent_gym.errors import SandboxDiedError
from tests import fixture_sources
from tests.conftest import require_docker, run_to_completion

pytestmark = pytest.mark.slow  # env episodes on every deployment: not in make test-fast


def config_for(deployment_type: str, repo_dir: str, **env) -> GymConfig:
    """Local keeps the repository at `repo_dir` itself; docker puts it at the same path in the container."""
    deployment = {"type": deployment_type}
    if deployment_type == "local":
        deployment["workdir"] = repo_dir
    else:
        require_docker()
    return GymConfig.model_validate({"deployment": deployment, "env": {"repo_dir": repo_dir, **env}})


TOY_SOLUTION = [
    {"name": "str_replace_editor", "arguments": {"command": "view", "path": "{R}"}},
    {"name": "search", "arguments": {"search_term": "def mean"}},
    {"name": "execute_bash", "arguments": {"command": "python3 -m unittest test_stats 2>&1 | tail -n 1"}},
    '<tool_call>{"name": "str_replace_editor", "arguments": {"command": "str_replace", "path": "{R}/stats.py", '
    '"old_str": "sum(values) / (len(values) - 1)", "new_str": "sum(values) / len(values)"}}</tool_call>',
    "I think I am done.",  # no tool call: a format error, the episode goes on
    "<function=execute_bash>\n<parameter=command>python3 -m unittest test_stats 2>&1 | tail -n 1</parameter>\n</function>",
    {"name": "finish", "arguments": {}},
]


def fill(action, repo_dir: str):
    if isinstance(action, str):
        return action.replace("{R}", repo_dir)
    return {"name": action["name"], "arguments": {k: v.replace("{R}", repo_dir) for k, v in action["arguments"].items()}}


async def play(env: AsyncSWEEnv, actions: list, options: dict | None = None) -> list[tuple]:
    observation, info = await env.reset(options=options)
    steps = [(observation, 0.0, False, False, None)]
    for action in actions:
        observation, reward, terminated, truncated, info = await env.step(fill(action, env.repo_dir))
        steps.append((observation, reward, terminated, truncated, info["error"]))
    steps[-1] = steps[-1] + (info,)
    return steps


async def test_toy_episode_is_solved_and_identical_on_local_and_docker():
    repo_dir = f"/tmp/uag-env-{secrets.token_hex(4)}/testbed"
    runs = []
    for deployment_type in ("local", "docker"):
        env = AsyncSWEEnv(config_for(deployment_type, repo_dir))
        try:
            runs.append(await play(env, TOY_SOLUTION))
        finally:
            await env.close()
    local, docker = runs
    assert [step[:5] for step in local] == [step[:5] for step in docker]
    assert local[3][0] == "FAILED (failures=1, errors=1)\n"
    assert local[5][0].startswith("Invalid tool call: No tool call found.") and local[5][4] == "format_error"
    assert local[6][0] == "OK\n"
    observation, reward, terminated, truncated, error, info = local[-1]
    assert (reward, terminated, truncated, info["exit_reason"]) == (1.0, True, False, "finished")
    assert info["reward_report"]["exit_code"] == 0 and env.last_timings["reward"] > 0


async def test_unsolved_episode_truncates_at_max_turns_with_reward_zero():
    env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"max_turns": 2}}))
    try:
        await env.reset()
        first = await env.step({"name": "execute_bash", "arguments": {"command": "true"}})
        assert first[1:4] == (0.0, False, False)
        observation, reward, terminated, truncated, info = await env.step({"name": "execute_bash", "arguments": {"command": "ls"}})
        assert (reward, terminated, truncated, info["exit_reason"]) == (0.0, False, True, "max_turns")
        assert info["reward_report"]["exit_code"] != 0
        with pytest.raises(ResetNeeded):
            await env.step({"name": "finish", "arguments": {}})
    finally:
        await env.close()


@pytest.mark.parametrize(
    "action, message",
    [
        ({"name": "rm_rf", "arguments": {}}, "Invalid tool call: Unknown tool 'rm_rf'. Available tools: execute_bash, str_replace_editor, search, finish"),
        ('<tool_call>{"name": "execute_bash", "arguments": {"command": }</tool_call>', "Invalid tool call: Invalid JSON in <tool_call>: Expecting value"),
        ({"name": "execute_bash", "arguments": {}}, "Invalid tool call: Missing required argument 'command' for execute_bash"),
    ],
    ids=["unknown-tool", "broken-json", "missing-argument"],
)
async def test_format_errors_are_observations(action, message):
    env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "local"}}))
    try:
        await env.reset()
        observation, reward, terminated, truncated, info = await env.step(action)
        assert observation.startswith(message)
        assert (reward, terminated, truncated, info["error"], info["tool"]) == (0.0, False, False, "format_error", None)
    finally:
        await env.close()


async def test_local_reset_starts_from_a_fresh_checkout(tmp_path):
    repo_dir = str(tmp_path / "testbed")
    env = AsyncSWEEnv(config_for("local", repo_dir))
    try:
        await env.reset()
        await env.step({"name": "execute_bash", "arguments": {"command": "echo junk >> stats.py; touch new_file.py"}})
        await env.reset()
        status = await env.step({"name": "execute_bash", "arguments": {"command": "git status --porcelain; pwd"}})
        assert status[0] == f"{repo_dir}\n"
    finally:
        await env.close()


async def test_local_episodes_of_one_instance_take_turns_in_its_checkout(tmp_path):
    """On `local` an instance with an environment has one checkout (its venv's editable install points
    there), so a second episode of it (GRPO's next sample, another worker) waits until the first is
    closed, then starts from a fresh checkout; it never recreates the checkout under the first."""
    import asyncio

    from uni_agent_gym import toy

    instance = {**await toy.toy_instance(str(tmp_path)), "needs_environment": True,
                "environment": {"python": "3.11", "pip_requirements": [], "install_cmd": "true"}, "test_command": "python3 -m unittest -v test_stats"}  # fmt: skip
    config = GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path)}})
    first, second = AsyncSWEEnv(config), AsyncSWEEnv(config)
    try:
        await first.reset(options={"instance": instance})
        await first.step({"name": "execute_bash", "arguments": {"command": "echo mine > work.txt"}})
        waiting = asyncio.ensure_future(second.reset(options={"instance": instance}))
        await asyncio.sleep(3)
        assert not waiting.done(), "the second episode must wait for the checkout"
        mine = await first.step({"name": "execute_bash", "arguments": {"command": "cat work.txt"}})
        assert mine[0] == "mine\n", "the first episode's work is intact"
        await first.close()
        await asyncio.wait_for(waiting, 60)
        assert second.repo_dir == str(tmp_path / "workspaces" / instance["instance_id"] / "testbed")
        status = await second.step({"name": "execute_bash", "arguments": {"command": "git status --porcelain; echo end"}})
        assert status[0] == "end\n", "the second episode starts from a fresh checkout"
    finally:
        await first.close()
        await second.close()


async def test_the_dataset_toy_is_the_built_in_task_as_on_the_command_line():
    """`env.dataset: toy` went to the dataset hub, where `--dataset toy` is the toy."""
    env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"dataset": "toy"}}))
    try:
        _, info = await env.reset(options={"instance_id": toy.INSTANCE_ID})
        assert info["instance_id"] == toy.INSTANCE_ID and "stats.mean" in env.instance.problem_statement
    finally:
        await env.close()


async def test_step_before_reset_and_close_twice():
    env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "local"}}))
    with pytest.raises(ResetNeeded, match="reset"):
        await env.step({"name": "finish", "arguments": {}})
    await env.close()
    await env.close()


async def test_a_dead_sandbox_raises_and_close_still_releases():
    require_docker()
    from uni_agent_gym.deployments.docker import docker_client

    env = AsyncSWEEnv(GymConfig())
    await env.reset()
    docker_client().api.kill(env.deployment.container_id)
    with pytest.raises(SandboxDiedError):
        await env.step({"name": "execute_bash", "arguments": {"command": "ls"}})
    await env.close()
    assert env.deployment is None


def test_gymnasium_make_registers_the_env():
    made = gymnasium.make("uni_agent_gym/SWEBench-v0", config={"deployment": {"type": "local"}})
    assert isinstance(made.unwrapped, uni_agent_gym.SWEEnv)
    made.close()


@pytest.mark.parametrize(
    "make, max_turns",
    [
        (lambda config: gymnasium.make("uni_agent_gym/SWEBench-v0", config=config, max_episode_steps=2), 50),
        (lambda config: gymnasium.wrappers.TimeLimit(uni_agent_gym.make_env(config), 2), 50),
        (lambda config: gymnasium.make("uni_agent_gym/SWEBench-v0", config=config, max_episode_steps=9), 2),  # the smaller wins
    ],
    ids=["gymnasium.make-max_episode_steps", "TimeLimit-by-hand", "max_turns-below-the-step-limit"],
)
def test_a_gymnasium_step_limit_ends_the_episode_graded_as_max_turns_does(make, max_turns):
    """Step 1 fixes the bug, step 2 is the limit's: truncated, and graded (1.0), not cut off at reward 0.0."""
    env = make({"deployment": {"type": "local"}, "env": {"max_turns": max_turns}})
    try:
        env.reset()
        fix = {"name": "execute_bash", "arguments": {"command": "sed -i 's/(len(values) - 1)/len(values)/' stats.py"}}
        assert env.step(fix)[1:4] == (0.0, False, False)
        _, reward, terminated, truncated, info = env.step({"name": "execute_bash", "arguments": {"command": "echo"}})
        assert (reward, terminated, truncated, info["exit_reason"]) == (1.0, False, True, "max_turns")
        assert info["reward_report"]["resolved"] is True
        env.reset()  # the next episode has the same limit
        _, reward, _, truncated, _ = env.step({"name": "execute_bash", "arguments": {"command": "echo"}})
        assert (reward, truncated) == (0.0, False)
    finally:
        env.close()


@pytest.fixture(scope="module")
def check_env_cache(tmp_path_factory) -> Path:
    """One cache for the checker's episodes: the fixture's mirror and clean history are made once."""
    return tmp_path_factory.mktemp("check-env-cache")


@pytest.fixture
def check_env_configs(tmp_path, monkeypatch, request, check_env_cache):
    """The config of each deployment for `check_env`, on the toy task or on a fixture instance from its
    mirror (tools only: the checker never runs its tests). Local is as shipped (its stable checkout path
    under the cache); the Modal stand-in runs on this host, so its repo_dir is a host path."""

    def config(deployment_type: str, task: str) -> dict:
        env: dict = {"cache_dir": str(check_env_cache)}
        deployment: dict = {"type": deployment_type}
        if task == "fixture":
            row = fixture_sources.derived_rows()["pytest-dev__pytest-7168"]
            dataset = tmp_path / "rows.jsonl"
            dataset.write_text(json.dumps({**row, "needs_environment": False}) + "\n")
            env.update(dataset=str(dataset), workspace="mirror", mirrors={row["repo"]: str(fixture_sources.sdist_directory(row["derived_from"]["sdist"]))})
        if deployment_type == "docker":
            require_docker()
            deployment["image"] = request.getfixturevalue("docker_image")
        if deployment_type == "modal":
            from tests import modal_standin

            modal_standin.install(monkeypatch)
            env["repo_dir"] = str(tmp_path / "modal" / "testbed")
        return {"deployment": deployment, "env": env}

    return config


# The Modal stand-in plays the toy only: a fixture from its mirror there is the toy's path with a larger upload,
# which the contract suite's upload tests cover on every deployment (it cost a minute of the suite here)
CHECKED = [(kind, task) for kind in ("local", "docker", "modal") for task in ("toy", "fixture") if (kind, task) != ("modal", "fixture")]


@pytest.mark.parametrize("deployment_type, task", CHECKED, ids=[f"{kind}-{task}" for kind, task in CHECKED])
def test_gymnasiums_env_checker_passes_with_no_warning(check_env_configs, deployment_type, task):
    """`gymnasium.utils.env_checker.check_env` as a Gymnasium user runs it, with every warning an error:
    seeded resets give the same observation (local's checkout path is stable), and the same seed and
    action the same step, info included (wall-clock timings are in `env.last_timings`, not in info)."""
    env = uni_agent_gym.make_env(check_env_configs(deployment_type, task))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped, skip_render_check=True)
        first, _ = env.reset(seed=7)
        again, info = env.reset(seed=7)
        assert first == again and "timings" not in info and env.last_timings["reset"] > 0
        _, _, _, _, info = env.step("no tool call here")
        assert info["error"] == "format_error" and "timings" not in info and set(env.last_timings) == {"step", "tool", "reward"}
    finally:
        env.close()


def test_timings_in_info_on_request(check_env_configs):
    env = uni_agent_gym.make_env({**check_env_configs("local", "toy"), "env": {**check_env_configs("local", "toy")["env"], "timings_in_info": True}})
    try:
        _, info = env.reset()
        assert info["timings"] == env.last_timings and info["timings"]["reset"] > 0
    finally:
        env.close()


def test_local_checkouts_of_one_instance_side_by_side_take_slots_and_come_back_to_the_first(tmp_path):
    """Two toy episodes at once on local: two stable paths; the next episode alone gets the first again."""
    config = GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path / "cache")}})

    async def run() -> list[str]:
        envs = [AsyncSWEEnv(config) for _ in range(2)]
        try:
            first = [info["repo_dir"] for _, info in [await env.reset() for env in envs]]
            await envs[1].close()
            await envs[0].close()
            _, info = await envs[0].reset()
            return first + [info["repo_dir"]]
        finally:
            for env in envs:
                await env.close()

    one, two, again = run_to_completion(run())
    workspace = tmp_path / "cache" / "workspaces" / "uni-agent-gym__toy-1"
    assert (one, two, again) == (str(workspace / "testbed"), str(workspace / "slot-1" / "testbed"), one)


async def test_fixture_instance_episode_reads_the_same_on_local_and_docker(tmp_path):
    """A real SWE-bench Lite instance (re-based onto its PyPI sdist), from a mirror on both deployments:
    the repository is at base_commit, and the same actions give the same observations. Grading belongs
    to the reward module."""
    row = fixture_sources.derived_rows()["pallets__flask-4992"]
    source = fixture_sources.sdist_directory(row["derived_from"]["sdist"])
    repo_dir = f"/tmp/uag-fixture-{secrets.token_hex(4)}/testbed"
    actions = [
        {"name": "execute_bash", "arguments": {"command": "git rev-parse HEAD && git status --porcelain"}},
        {"name": "search", "arguments": {"search_term": "def from_file"}},
        {"name": "str_replace_editor", "arguments": {"command": "view", "path": f"{repo_dir}/src/flask/config.py", "view_range": [232, 240]}},
        {"name": "str_replace_editor", "arguments": {"command": "str_replace", "path": f"{repo_dir}/src/flask/config.py",
                                                     "old_str": "        silent: bool = False,\n    ) -> bool:", "new_str": "        silent: bool = False,\n        text: bool = True,\n    ) -> bool:"}},
        {"name": "execute_bash", "arguments": {"command": "git diff --stat"}},
        {"name": "finish", "arguments": {}},
    ]  # fmt: skip
    transcripts = []
    for deployment_type in ("local", "docker"):
        config = config_for(deployment_type, repo_dir, mirrors={"pallets/flask": str(source)},
                            cache_dir=str(tmp_path / "cache"), workspace="mirror")  # fmt: skip
        env = AsyncSWEEnv(config)
        try:
            prompt, info = await env.reset(options={"instance": {**row, "needs_environment": False}})  # tools only: no venv
            transcripts.append([prompt] + [(await env.step(action))[0] for action in actions])
        finally:
            await env.close()
    local, docker = transcripts
    assert local == docker
    assert "config.from_file" in local[0] and local[1] == row["base_commit"] + "\n"
    assert "./src/flask/config.py (1 matches)" in local[2] and "has been edited" in local[4]
    assert local[5] == " src/flask/config.py | 1 +\n 1 file changed, 1 insertion(+)\n"


PYENV_39 = Path.home() / ".pyenv" / "versions" / "3.9.18" / "bin" / "python3.9"


@pytest.mark.needs(PYENV_39.exists(), f"a host Python 3.9 at {PYENV_39} (pyenv 3.9.18 on these machines)")
async def test_local_fixture_instance_gets_its_venv_once(tmp_path):
    """On `local`, a SWE-bench instance gets a venv of its spec's Python and packages; the gold patch
    then passes its FAIL_TO_PASS tests, and a second reset reuses the venv (the checkout is a fresh one
    at the same path); an episode that changes the venv leaves it to be rebuilt."""
    from uni_agent_gym.datasets.swebench import repo_parsers

    from uni_agent_gym.instances import normalise

    row = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    fixture = fixture_sources.fixtures()[row.instance_id]
    source = fixture_sources.sdist_directory(row.columns["derived_from"]["sdist"])
    config = GymConfig.model_validate({
        "deployment": {"type": "local"},
        "env": {"cache_dir": str(tmp_path), "mirrors": {row.repo: str(source)},
                "environments": str(fixture_sources.SHARED / "fixtures.json"), "interpreters": {"3.9": str(PYENV_39)}},
    })  # fmt: skip
    env = AsyncSWEEnv(config)
    try:
        await env.reset(options={"instance": row})
        assert env.repo_dir == str(tmp_path / "workspaces" / row.instance_id / "testbed")
        version = await env.step({"name": "execute_bash", "arguments": {"command": "python --version; python -c 'import pytest; print(pytest.__file__)'"}})
        assert version[0].startswith("Python 3.9.18\n") and f"{env.repo_dir}/src/pytest" in version[0]
        stamp = tmp_path / "workspaces" / row.instance_id / "venv" / "uni-agent-gym-environment.json"
        made = stamp.stat().st_mtime_ns
        await env.step({"name": "execute_bash", "arguments": {"command": "echo broken >> src/_pytest/main.py"}})

        await env.reset(options={"instance": row})
        assert stamp.stat().st_mtime_ns == made, "the venv must be reused, not rebuilt"
        status = await env.step({"name": "execute_bash", "arguments": {"command": "git status --porcelain; git log --format=%s -1"}})
        assert status[0] == "uni-agent-gym environment\n"
        await env.deployment.write_file("/tmp/uag-gold.patch", row.test_patch + row.patch)
        result = await env.deployment.run(f"git apply /tmp/uag-gold.patch && {fixture['test_cmd_as_run']}", timeout=300)
        statuses = repo_parsers()[row.repo](result.output, None)
        assert all(statuses.get(test) == "PASSED" for test in row.FAIL_TO_PASS), result.output[-2000:]

        # an episode that changes the shared venv and ends ungraded: marked for a rebuild as it stops, before
        # the checkout's lock goes, so no next episode (of any process) starts on it
        await env.step({"name": "execute_bash", "arguments": {"command": "touch $VIRTUAL_ENV/lib/python3.9/site-packages/forge.pth"}})
        deployment = env.deployment
    finally:
        await env.close()
    assert not stamp.exists(), "a changed venv must be rebuilt before the next episode"
    assert list(deployment.release_report.values()) == ["the episode changed 1 file(s) of the instance's venv "
                                                         "(lib/python3.9/site-packages/forge.pth): restored before grading"]  # fmt: skip
    # the next episode gets the venv as it was made: a copy kept beside it, not a new install
    site = tmp_path / "workspaces" / row.instance_id / "venv" / "lib" / "python3.9" / "site-packages"
    installed = (site / "pluggy" / "__init__.py").stat().st_mtime_ns
    env = AsyncSWEEnv(config)
    try:
        await env.reset(options={"instance": row})
        assert stamp.exists() and not (site / "forge.pth").exists()
        assert (site / "pluggy" / "__init__.py").stat().st_mtime_ns == installed, "copied with its times, not installed again"
        check = await env.step({"name": "execute_bash", "arguments": {"command": "python -c 'import pytest; print(pytest.__file__)'"}})
        assert f"{env.repo_dir}/src/pytest" in check[0]
        deployment = env.deployment
    finally:
        await env.close()
    assert deployment.release_report == {}


async def test_instance_image_episode():
    """docker with the instance's own image (built offline here unless present): the repository is at
    /testbed on the environment commit over base_commit, and the agent's fix passes FAIL_TO_PASS."""
    require_docker()
    from uni_agent_gym.datasets.swebench import repo_parsers

    from uni_agent_gym.instances import normalise

    row = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    fixture = fixture_sources.fixtures()[row.instance_id]
    await fixture_sources.ensure_image(row)

    env = AsyncSWEEnv(GymConfig.model_validate({"env": {"workspace": "image"}}))
    try:
        prompt, info = await env.reset(options={"instance": row})
        assert info["repo_dir"] == "/testbed" and "<uploaded_files>\n/testbed\n" in prompt
        parent = await env.step({"name": "execute_bash", "arguments": {"command": "git rev-parse HEAD~1; git status --porcelain"}})
        assert parent[0] == row.base_commit + "\n"
        for diff in (row.test_patch, row.patch):
            await env.step({"name": "str_replace_editor", "arguments": {"command": "create", "path": "/tmp/p.diff", "file_text": diff}})
            applied = await env.step({"name": "execute_bash", "arguments": {"command": "git apply /tmp/p.diff && rm /tmp/p.diff"}})
            assert applied[0] == "Your command ran successfully and did not produce any output."
        tests = await env.step({"name": "execute_bash", "arguments": {"command": fixture["test_cmd_as_run"]}})
        statuses = repo_parsers()[row.repo](tests[0], None)
        assert all(statuses.get(test) == "PASSED" for test in row.FAIL_TO_PASS)
    finally:
        await env.close()


async def test_an_env_made_without_a_reward_grades_as_make_env_does(tmp_path):
    """`AsyncSWEEnv(config)` and `make_env(config)` grade a real instance the same way (SWEBenchReward); the
    first scored every real instance 0.0 with no report."""
    from tests.graded_toy import graded_toy_row

    row = await graded_toy_row(str(tmp_path / "cache"))
    env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path / "cache")}}))
    try:
        await env.reset(options={"instance": row})
        await env.step({"name": "execute_bash", "arguments": {"command": f"git apply <<'UAG_EOF'\n{toy.GOLD_PATCH}UAG_EOF"}})
        _, reward, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
    finally:
        await env.close()
    assert terminated and reward == 1.0 and info["reward_report"]["status"] == "resolved"
