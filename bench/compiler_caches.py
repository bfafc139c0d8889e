"""What the compiler caches carried between instance images (`workspaces/build_caches.py`) save, measured here:
each instance image rebuilt (`--force`) twice in the same run, first with no seed (the baseline), then seeded with the
caches of the newest other image of its repository, and the ratio of the two build times.

The instances are the language fixtures (`tests/language_fixtures.py`: redis in C, gin in Go); each needs another
instance's image of its repository built here since the seeds' label came (2026-12-05); one without is built with
no seed and seeds the next instance of its repository in the list.

Usage: python bench/compiler_caches.py [--instances redis__redis-12272 gin-gonic__gin-3741 gin-gonic__gin-3820]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import language_fixtures  # noqa: E402
from uni_agent_gym.instances import normalise  # noqa: E402
from uni_agent_gym.datasets import Task  # noqa: E402
from uni_agent_gym.specs import load_environments  # noqa: E402
from uni_agent_gym.deployments.docker import docker_client  # noqa: E402
from uni_agent_gym.workspaces import build_caches, image_builder  # noqa: E402


def other_seed(row: Task) -> str | None:
    """The newest image of the row's repository built here under another name (the builder itself would take the
    image's own previous build, the same sources: a rebuild's best seed, not an added instance's)."""
    own = build_caches.tagged_name(row.image_name)
    images = docker_client().api.images(filters={"label": build_caches.CACHES_LABEL})
    named = [(image["Created"], tag) for image in images for tag in image.get("RepoTags") or []
             if image["Labels"][build_caches.CACHES_LABEL] == f"{row.repo} {tag}" and tag != own]  # fmt: skip
    return max(named)[1] if named else None


async def build(row: dict, environments: dict, seed: str | None) -> float:
    """Seconds to rebuild the row's image, seeded with `seed`'s caches (None: with none)."""
    real = build_caches.seed_image
    build_caches.seed_image = lambda repo, toolchain: seed
    try:
        started = time.monotonic()
        await image_builder.build_instance_image(row, language_fixtures.build_config([row]), environments, force=True, log=lambda m: None)
        return time.monotonic() - started
    finally:
        build_caches.seed_image = real


async def main(instances: list[str]) -> None:
    rows = language_fixtures.derived_rows()
    environments = load_environments(language_fixtures.ENVIRONMENTS)
    await language_fixtures.ensure_images([rows[instance_id] for instance_id in instances])
    for instance_id in instances:
        row = normalise(rows[instance_id])
        seed = other_seed(row)
        cold = await build(row, environments, None)
        if seed is None:
            print(f"{instance_id}: {cold:.1f} s with no seed; no other image of {row.repo} here to seed it (now it seeds the next)")
            continue
        warm = await build(row, environments, seed)
        print(f"{instance_id}: {cold:.1f} s with no seed, {warm:.1f} s seeded from {seed}: {cold / warm:.1f}x faster")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["redis__redis-12272", "gin-gonic__gin-3741", "gin-gonic__gin-3820"])
    asyncio.run(main(parser.parse_args().instances))
