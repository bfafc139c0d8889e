"""The differential check (`reward.differential`): what it costs per grading and what it catches.

Cost: one patch graded with the check off (the baseline, measured in the same run), on with gold's outcomes not yet
cached (cold: gold is graded too) and on with them cached (warm), and the same with `differential_modules` (its second
run: the test files that import the modules gold changes); the median wall time of `grade_patch` over `--repeat`
gradings of each. Catches: the patches graded with both on, which resolve, and which of those it marks suspect, naming
the tests. Reach (`--reach`): for every fixture whose image is here, how many tests gold's run passes beyond the row's
listed ones, and how many test files import the modules gold changes (what the second run adds).

- the weak toy (tests/weak_toy.py) and the modules toy (tests/modules_toy.py) on local: hand-written wrong fixes, a
  correct alternative and gold;
- the SWE-bench fixtures whose instance image is here (../shared/swebench, on docker): cost on gold with a file added
  (a patch that is not gold's text, so a cold check grades gold), catches among `--variants` wrong variants of the
  gold (`validation/variants.py`: the survivors are the wrong fixes the listed tests accept).

Usage: python bench/differential_cost.py [--repeat 3] [--limit 2 | --instances ID,ID] [--variants 8] [--reach]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SHARED = HERE.parent / "shared" / "swebench"
sys.path.insert(0, str(HERE))

from uni_agent_gym.config import GymConfig  # noqa: E402
from uni_agent_gym.datasets import Task, normalise  # noqa: E402
from uni_agent_gym.rewards import differential  # noqa: E402
from uni_agent_gym.rewards.swebench import SWEBenchReward  # noqa: E402

ADDED_FILE = "diff --git a/UAG_BENCH_NOTE.txt b/UAG_BENCH_NOTE.txt\nnew file mode 100644\n--- /dev/null\n+++ b/UAG_BENCH_NOTE.txt\n@@ -0,0 +1 @@\n+a note\n"


async def timed(reward: SWEBenchReward, row: Task, patch: str):
    started = time.monotonic()
    result = await reward.grade_patch(row, patch)
    return time.monotonic() - started, result


def reward_with(config: dict, **checks: bool) -> SWEBenchReward:
    return SWEBenchReward.from_config(GymConfig.model_validate({**config, "reward": {**config.get("reward", {}), **checks}}))


async def cost(row: Task, patch: str, config: dict, repeat: int) -> dict[str, float]:
    """Median seconds of one grading of `patch`: the check off; on, cold (its cache removed first) and warm; the same
    with its second run."""
    cache = Path(config["env"]["cache_dir"]) / differential.DIRECTORY
    off = reward_with(config)
    await timed(off, row, patch)  # the workspace, mirror and image made once, outside the measure
    seconds: dict[str, list[float]] = {}
    for _ in range(repeat):
        seconds.setdefault("off", []).append((await timed(off, row, patch))[0])
        for name, on in (("on", reward_with(config, differential=True)), ("modules", reward_with(config, differential=True, differential_modules=True))):
            shutil.rmtree(cache, ignore_errors=True)
            took, result = await timed(on, row, patch)
            assert result.resolved and result.differential["gold"] == "graded", result.differential
            seconds.setdefault(f"{name}, cold", []).append(took)
            took, result = await timed(on, row, patch)
            assert result.differential["gold"] == "cached", result.differential
            seconds.setdefault(f"{name}, warm", []).append(took)
    return {mode: statistics.median(values) for mode, values in seconds.items()}


def show_cost(name: str, found: dict[str, float]) -> None:
    base = found["off"]
    shown = "   ".join(f"{mode} {seconds:6.2f} s ({seconds / base:4.2f}x)" for mode, seconds in found.items() if mode != "off")
    print(f"{name:32s} off {base:6.2f} s   {shown}", flush=True)


async def catches(row: Task, patches: dict[str, str], config: dict) -> None:
    on = reward_with(config, differential=True, differential_modules=True)
    resolved = marked = 0
    for name, patch in patches.items():
        result = await on.grade_patch(row, patch)
        checked = result.differential or {}
        resolved += result.resolved
        marked += bool(checked.get("suspect"))
        shown = f"suspect: {', '.join(checked['tests'])}" if checked.get("suspect") else ("not suspect" if result.resolved else "")
        modules = checked.get("modules") or {}
        print(f"  {name:40s} {result.status:10s} {shown}  (compared {checked.get('compared', '-')}, unlisted {checked.get('unlisted', '-')}, "
              f"modules' test files {len(modules.get('files', []))}, compared there {modules.get('compared', '-')})", flush=True)  # fmt: skip
    print(f"  resolved {resolved} of {len(patches)}, marked suspect {marked} of those", flush=True)


async def toys(work: Path, repeat: int) -> None:
    from tests import modules_toy, weak_toy

    config = {"deployment": {"type": "local"}, "env": {"cache_dir": str(work / "toy"), "workspace": "mirror"}}
    row = normalise(await weak_toy.weak_toy_row(config["env"]["cache_dir"]))
    show_cost("weak toy, local", await cost(row, weak_toy.WRONG_SPECIAL_CASE, config, repeat))
    names = ["WRONG_SPECIAL_CASE", "WRONG_REMAINDER_TO_FIRST", "ALTERNATIVE_FIX", "GOLD_PATCH"]
    await catches(row, {name: getattr(weak_toy, name) for name in names}, config)
    row = normalise(await modules_toy.modules_toy_row(config["env"]["cache_dir"]))
    show_cost("modules toy, local", await cost(row, modules_toy.WRONG_SPECIAL_CASE, config, repeat))
    await catches(row, {name: getattr(modules_toy, name) for name in ["WRONG_SPECIAL_CASE", "ALTERNATIVE_FIX", "GOLD_PATCH"]}, config)


async def reach(rows: list, config: dict) -> None:
    """Per fixture: the tests gold's run passes that the row does not list, and the test files of the modules it changes."""
    from uni_agent_gym.deployments.pool import release
    from uni_agent_gym.rewards import module_tests
    from uni_agent_gym.workspaces.start_state import open_task

    on = reward_with(config, differential=True)
    gym = GymConfig.model_validate(config)
    for row in rows:
        result = await on.grade_patch(row, row.patch)  # gold itself: its own run is gold's outcomes
        episode = await open_task(row, gym, grading=True)
        try:
            files = await module_tests.importing_test_files(episode.deployment, episode.repo_dir, row.patch)
        finally:
            await release(episode.deployment)
        named = [path for path in files if path not in result.test_command.split()]
        checked = result.differential or {}
        print(f"  {row.instance_id:28s} {result.status:10s} gold passes {checked.get('compared', '-')} tests, {checked.get('unlisted', '-')} unlisted; "
              f"{len(named)} more test file(s) import the modules it changes (runner: {module_tests.runner_of(result.test_command)})", flush=True)  # fmt: skip


async def fixtures(work: Path, repeat: int, limit: int, count: int, reach_all: bool, only: list[str]) -> None:
    from uni_agent_gym.deployments.docker import docker_client, image_exists
    from uni_agent_gym.errors import DeploymentError
    from uni_agent_gym.validation.variants import pick, variants

    try:
        docker_client()
    except DeploymentError as exc:
        print(f"fixtures skipped: {exc}")
        return
    rows = [normalise(json.loads(line)) for line in (SHARED / "derived.jsonl").read_text().splitlines() if line.strip()]
    rows = [row for row in rows if image_exists(row.image)]
    if not rows:
        print("fixtures skipped: no fixture instance image here (the test suite builds them)")
        return
    config = {"deployment": {"type": "docker"}, "env": {"cache_dir": str(work / "fixtures"), "workspace": "image",
                                                         "environments": str(SHARED / "fixtures.json")}}  # fmt: skip
    if reach_all:
        print(f"reach over the {len(rows)} fixtures whose image is here:")
        await reach(rows, config)
    for row in [row for row in rows if row.instance_id in only] if only else rows[:limit]:
        show_cost(f"{row.instance_id}, docker", await cost(row, row.patch + ADDED_FILE, config, repeat))
        chosen = pick(variants(row.patch, "python"), count)
        await catches(row, {f"{variant.operator} @ {variant.where}": variant.patch for variant in chosen}, config)


async def main(repeat: int, limit: int, count: int, reach_all: bool, only: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="uag-bench-differential-") as scratch:
        await toys(Path(scratch), repeat)
        await fixtures(Path(scratch), repeat, limit, count, reach_all, only)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="gradings of each kind per task (the median is shown)")
    parser.add_argument("--limit", type=int, default=2, help="SWE-bench fixtures (those whose image is here)")
    parser.add_argument("--variants", type=int, default=8, help="wrong variants of each fixture's gold graded for what the check catches")
    parser.add_argument("--reach", action="store_true", help="also grade every fixture's gold for what the check can reach")
    parser.add_argument("--instances", default="", help="the fixtures to measure, by id, comma-separated (instead of --limit)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.repeat, arguments.limit, arguments.variants, arguments.reach, [i for i in arguments.instances.split(",") if i]))
