"""Reward overhead: what grading costs beyond the test command itself, on SWE-bench instance images.

For each offline fixture instance whose image exists here (`swebench/sweb.eval.x86_64.<id>`), an episode
applies the gold patch, then `SWEBenchReward` grades it; the baseline is the test command's own time
inside that grading. Overhead = grading total - tests (patch capture, network cut, file resets, test
patch, log read, parsing).

Usage: python bench/reward_overhead.py [--limit 6]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path

from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments.docker import image_exists
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import image_name, normalise
from uni_agent_gym.rewards.swebench import SWEBenchReward
from uni_agent_gym.specs import load_environments

SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"
ROWS, ENVIRONMENTS = SHARED / "derived.jsonl", SHARED / "fixtures.json"  # the fixtures' exact pins and test commands


async def grade_gold(row: dict) -> dict:
    env = AsyncSWEEnv(GymConfig.model_validate({"env": {"workspace": "image"}}), reward=SWEBenchReward(environments=load_environments(str(ENVIRONMENTS))))
    try:
        await env.reset(options={"instance": row})
        await env.deployment.write_file("/tmp/gold.diff", row["patch"])
        await env.step({"name": "execute_bash", "arguments": {"command": "git apply /tmp/gold.diff && rm /tmp/gold.diff"}})
        _, reward, _, _, info = await env.step({"name": "finish", "arguments": {}})
        return {"reward": reward, **info["reward_report"]["durations"]}
    finally:
        await env.close()


async def main(limit: int) -> None:
    if not ROWS.is_file():
        raise SystemExit(f"needs the offline fixtures at {ROWS}")
    rows = [normalise(json.loads(line)) for line in ROWS.read_text().splitlines()]
    rows = [row for row in rows if image_exists(image_name(row["instance_id"]))][:limit]
    if not rows:
        raise SystemExit("no fixture instance image on this machine: run the test suite (or `uni-agent-gym images build`) first")
    overheads, tests = [], []
    for row in rows:
        result = await grade_gold(row)
        overhead = result["total"] - result.get("tests", 0.0)
        overheads.append(overhead)
        tests.append(result.get("tests", 0.0))
        print(f"{row['instance_id']:32s} reward {result['reward']:.0f}   grading {result['total'] * 1000:7.0f} ms   "
              f"tests {result.get('tests', 0) * 1000:7.0f} ms   overhead {overhead * 1000:5.0f} ms")
    print(f"median over {len(rows)}: overhead {statistics.median(overheads) * 1000:.0f} ms vs the tests' own "
          f"{statistics.median(tests) * 1000:.0f} ms ({statistics.median(overheads) / statistics.median(tests):.1%} of the test time)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=6, help="instances to grade")
    asyncio.run(main(parser.parse_args().limit))
