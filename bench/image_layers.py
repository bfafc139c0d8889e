"""What an added instance costs in `images build` (base -> environment -> instance), measured here:

- the environment image shared by the instances with one Python and one set of exact packages: its
  size (built first if missing, with its time);
- per instance: the time to build its layer on the environment (`--force` rebuild of the instance
  layer only) and the disk it adds (its layers above the environment), against the image's total size.

The instances are SWE-Gym rows derived from offline fixtures that share one environment
(tests/family_rows.py: pytest-7168 and pytest-7220 have the same Python and pins).

Usage: python bench/image_layers.py [--instances pytest-dev__pytest-7168 pytest-dev__pytest-7220]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import family_rows, fixture_sources  # noqa: E402
from uni_agent_gym.deployments.docker import docker_client  # noqa: E402
from uni_agent_gym.workspaces.image_builder import build_instance_image, ensure_environment_image, environment_image_name  # noqa: E402
from uni_agent_gym.workspaces.base_images import base_image_name  # noqa: E402
from uni_agent_gym.instances import normalise  # noqa: E402
from uni_agent_gym.specs import environment_spec  # noqa: E402

MB = 1024 * 1024


async def main(instances: list[str]) -> None:
    tasks = [normalise(family_rows.swe_gym_row(instance_id)) for instance_id in instances]
    environments = fixture_sources.fixtures()
    config = family_rows.build_config(instances[0])
    config.env.mirrors.update({task.repo: str(fixture_sources.repo_mirror(task.repo)) for task in tasks})
    spec = environment_spec(tasks[0], environments)
    environment = environment_image_name(spec)
    present = docker_client().images.list(name=environment)
    started = time.monotonic()
    await ensure_environment_image(spec, base_image_name(spec.python), Path(config.env.cache_dir), lambda m: None)
    if not present:
        print(f"environment image built in {time.monotonic() - started:.1f} s")
    env_size = docker_client().images.get(environment).attrs["Size"]
    print(f"environment {environment}: {env_size / MB:.0f} MB")
    for task in tasks:
        assert environment_image_name(environment_spec(task, environments)) == environment, "the instances must share the environment"
        started = time.monotonic()
        name = await build_instance_image(task, config, environments, force=True, log=lambda m: None)
        seconds = time.monotonic() - started
        total = docker_client().images.get(name).attrs["Size"]
        print(f"{task['instance_id']}: instance layer built in {seconds:.1f} s, adds {(total - env_size) / MB:.1f} MB (image {total / MB:.0f} MB)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["pytest-dev__pytest-7168", "pytest-dev__pytest-7220"])
    args = parser.parse_args()
    asyncio.run(main(args.instances))
