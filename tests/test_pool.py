"""The warm container pool (`deployment.pool_size`): a reset reuses a finished episode's container only
after it is scrubbed back to where it started and verified clean; anything else evicts it."""

from __future__ import annotations


import pytest

from tests import fixture_sources
from tests.conftest import require_docker
from tests.test_docker_deployment import labelled_containers
from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments.docker import docker_client
from uni_agent_gym.deployments.pool import drain_pools
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import SWEBenchReward

pytestmark = pytest.mark.docker


def bash(command: str) -> dict:
    return {"name": "execute_bash", "arguments": {"command": command}}


@pytest.fixture
async def pooled(docker_image, container_run_id):
    """A config with a pool of one, and the guarantee that its idle containers are removed after."""
    run_id = container_run_id
    config = GymConfig.model_validate({"deployment": {"type": "docker", "image": docker_image, "run_id": run_id, "pool_size": 1}})
    yield config
    await drain_pools()
    assert labelled_containers(run_id) == []


async def test_a_graded_episode_leaves_nothing_for_the_next_one(pooled):
    """Image workspace (SWE-bench image, repository in the image): edits, new and ignored files, /tmp,
    variables, the working directory, background and detached processes and the cut network are all
    gone when the same container starts the next episode."""
    require_docker()
    row = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    await fixture_sources.ensure_image(row)
    config = pooled.model_copy(update={"env": pooled.env.model_copy(update={"workspace": "image"})})
    env = AsyncSWEEnv(config, reward=SWEBenchReward())
    try:
        await env.reset(options={"instance": row})
        first_container, commit = env.deployment.container_id, env.episode.start_commit
        for command in (
            "echo '# changed' >> src/_pytest/_io/saferepr.py && echo new > NEW_FILE.txt && mkdir -p .pytest_cache && touch .pytest_cache/x",
            "echo junk > /tmp/junk && export UAG_LEFTOVER=1 && cd /tmp && (sleep 1000 &) && (setsid sleep 1001 </dev/null >/dev/null 2>&1 &)",
        ):
            assert (await env.step(bash(command)))[4]["exit_code"] == 0
        _, reward, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
        assert terminated and info["reward_report"]["network_isolated"] is True
        pool = env.deployment.pool
    finally:
        await env.close()
    await pool.settle()
    assert env.deployment is None and len(labelled_containers(config.deployment.run_id)) == 1  # idle in the pool

    try:
        await env.reset(options={"instance": row})
        assert env.deployment.container_id == first_container and env.episode.start_commit == commit
        state = await env.step(bash(
            'pwd; git status --porcelain --ignored .pytest_cache NEW_FILE.txt; ls -A /tmp; echo "var=${UAG_LEFTOVER:-unset}"; '
            "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c '[s]leep 100'; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -vc lo"
        ))  # fmt: skip
        assert state[0] == "/testbed\nvar=unset\n0\n1\n"  # one network interface besides loopback again
    finally:
        await env.close()


async def test_changes_outside_the_repository_evict_the_container(pooled):
    env = AsyncSWEEnv(pooled)
    try:
        await env.reset()
        first = env.deployment.container_id
        pool = env.deployment.pool
        await env.step(bash("touch /etc/uag-poison"))
        await env.close()
        await pool.settle()
        assert pool.idle == [] and pool.stats["evicted"] == 1
        await env.reset()
        assert env.deployment.container_id != first
        assert (await env.step(bash("ls /etc/uag-poison")))[4]["exit_code"] != 0
    finally:
        await env.close()


async def test_toy_episodes_reuse_one_container_and_stay_solvable(pooled):
    """Mirror workspace (repository uploaded per episode): the upload is removed by the scrub."""
    env = AsyncSWEEnv(pooled)
    containers = set()
    try:
        for _ in range(3):
            await env.reset()
            containers.add(env.deployment.container_id)
            assert (await env.step(bash("git status --porcelain; ls /tmp | wc -l")))[0] == "0\n"
            await env.step(bash("sed -i 's/(len(values) - 1)/len(values)/' stats.py && python3 -c 'import stats' && touch /tmp/left"))
            _, reward, *_ = await env.step({"name": "finish", "arguments": {}})
            assert reward == 1.0
            pool = env.deployment.pool
            await env.close()
            await pool.settle()
    finally:
        await env.close()
    assert len(containers) == 1


async def test_the_pool_is_bounded_and_skips_dead_containers(pooled):
    envs = [AsyncSWEEnv(pooled) for _ in range(3)]
    try:
        for env in envs:
            await env.reset()
        pool = envs[0].deployment.pool
        ids = [env.deployment.container_id for env in envs]
        for env in envs:
            await env.close()
        await pool.settle()
        assert len(pool.idle) == 1 and len(labelled_containers(pooled.deployment.run_id)) == 1  # the rest removed
        docker_client().api.kill(pool.idle[0].container_id)  # dies while idle
        await envs[0].reset()
        assert envs[0].deployment.container_id not in ids and pool.stats["evicted"] == 1
    finally:
        for env in envs:
            await env.close()
