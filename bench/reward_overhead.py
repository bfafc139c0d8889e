"""Reward overhead: what grading costs beyond the test command itself, on SWE-bench instance images, for
each way of grading, side by side in one run:

- `same`, cold: the tests run in the agent's own sandbox (no new container);
- `fresh`, cold: the patch is captured through the Docker daemon and graded in a new container;
- `fresh`, warm pool (`deployment.pool_size`): the grading container comes from the warm pool (each
  instance is played once first to fill it; the second episode is measured);
- `fresh`, cold, guard off (`reward.guard: false`): the grading guard's cost is the whole grading's time
  beside `fresh, cold` (the guard works inside the test run too: its plugin loads and records each test);
- `fresh`, cold, canaries off (`reward.canaries: false`): the canary tests' cost, the same way (they are
  planted in the test files and run with the tests).

For each offline fixture instance whose image exists here (`swebench/sweb.eval.x86_64.<id>`), an
episode applies the gold patch and calls `finish`; grading total and the test command's own time come
from the reward report. Overhead = grading total - tests (sandbox, patch capture, network cut, file
resets, test patch, log read, parsing). The baseline is `same`, measured in the same run.

Usage: python bench/reward_overhead.py [--limit 6]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path

from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments.docker import docker_client, image_exists
from uni_agent_gym.deployments.pool import drain_pools
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.instances import image_name, normalise
from uni_agent_gym.rewards.swebench import SWEBenchReward

SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"
ROWS, ENVIRONMENTS = SHARED / "derived.jsonl", SHARED / "fixtures.json"  # the fixtures' exact pins and test commands
ON = {"guard": True, "canaries": True}
MODES = {"same, cold": ("same", 0, ON), "fresh, cold": ("fresh", 0, ON), "fresh, warm pool": ("fresh", 2, ON),
         "fresh, cold, guard off": ("fresh", 0, {**ON, "guard": False}),
         "fresh, cold, canaries off": ("fresh", 0, {**ON, "canaries": False})}  # fmt: skip


async def grade_gold(row: dict, sandbox: str, pool_size: int, checks: dict) -> dict:
    config = GymConfig.model_validate({
        "deployment": {"type": "docker", "pool_size": pool_size},
        "env": {"workspace": "image", "environments": str(ENVIRONMENTS)},
        "reward": {"sandbox": sandbox, **checks},
    })  # fmt: skip
    env = AsyncSWEEnv(config, reward=SWEBenchReward.from_config(config))
    try:
        await env.reset(options={"instance": row})
        await env.deployment.write_file("/tmp/gold.diff", row.patch)
        await env.step({"name": "execute_bash", "arguments": {"command": "git apply /tmp/gold.diff && rm /tmp/gold.diff"}})
        _, reward, _, _, info = await env.step({"name": "finish", "arguments": {}})
        durations = info["reward_report"]["durations"]
        return {"reward": reward, "total": durations["total"], "tests": durations.get("tests", 0.0)}
    finally:
        await env.close()


async def measure(row: dict, sandbox: str, pool_size: int, checks: dict) -> dict:
    if pool_size:
        await grade_gold(row, sandbox, pool_size, checks)  # fills the pool with this image's containers
    result = await grade_gold(row, sandbox, pool_size, checks)
    await drain_pools()
    return result


async def main(limit: int) -> None:
    if not ROWS.is_file():
        print(f"skipped: needs the offline fixtures at {ROWS}")  # `make bench` goes on with the next bench
        return
    try:
        docker_client()
    except DeploymentError as exc:
        print(f"skipped: {exc}")
        return
    rows = [normalise(json.loads(line)) for line in ROWS.read_text().splitlines()]
    rows = [row for row in rows if image_exists(image_name(row.instance_id))][:limit]
    if not rows:  # building one takes many minutes and PyPI (tests/fixture_sources.py): left to the test suite
        print("skipped: no fixture instance image on this machine: run the test suite (or `uni-agent-gym images build`) first")
        return
    overheads: dict[str, list[float]] = {mode: [] for mode in MODES}
    totals: dict[str, list[float]] = {mode: [] for mode in MODES}
    test_times: dict[str, list[float]] = {mode: [] for mode in MODES}
    tests: list[float] = []
    for row in rows:
        line = f"{row.instance_id:32s}"
        for mode, (sandbox, pool_size, checks) in MODES.items():
            result = await measure(row, sandbox, pool_size, checks)
            assert result["reward"] == 1.0, (row.instance_id, mode, result)
            overheads[mode].append(result["total"] - result["tests"])
            totals[mode].append(result["total"])
            test_times[mode].append(result["tests"])
            tests.append(result["tests"])
            line += f"   {mode}: {overheads[mode][-1] * 1000:5.0f} ms"
        print(line, flush=True)
    baseline = statistics.median(overheads["same, cold"])
    print(f"\nmedian over {len(rows)} instances (tests themselves: median {statistics.median(tests) * 1000:.0f} ms):")
    for mode, values in overheads.items():
        added = statistics.median(values) - baseline
        print(f"  {mode:26s} overhead {statistics.median(values) * 1000:6.0f} ms   vs same: {added * 1000:+6.0f} ms")
    for check in ("guard", "canaries"):
        cost = statistics.median([on - off for on, off in zip(totals["fresh, cold"], totals[f"fresh, cold, {check} off"])])
        in_tests = statistics.median([on - off for on, off in zip(test_times["fresh, cold"], test_times[f"fresh, cold, {check} off"])])
        print(f"  {check}: {cost * 1000:+.0f} ms per grading (median of fresh, cold minus {check} off, whole grading; "
              f"a cold container's start varies by more), {in_tests * 1000:+.0f} ms in the test command's own time")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=6, help="instances to grade")
    asyncio.run(main(parser.parse_args().limit))
