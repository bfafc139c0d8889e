"""The built-in toy task as a row the full SWE-bench reward grades (capture, fresh sandbox, the official
grading): its tests need nothing but python3's unittest, so the same episode runs on every deployment (local,
docker, the Modal stand-in, ray) and in both workspace modes (its image, built here on the base image; its mirror,
the toy's own directory). The test names are unittest's verbose ones, which swebench's Django parser reads
(Python 3.11's `test_x (module.Class.test_x) ... ok`).
"""

from __future__ import annotations

import asyncio

from uni_agent_gym import toy
from uni_agent_gym.instances import normalise

REPO = "uag-tests/toy"  # not the toy's own name, which the env grades by the toy's command reward instead
IMAGE = "uni-agent-gym-test/graded-toy"


def _names(tests: list[str]) -> list[str]:
    return [f"{test.rsplit('.', 1)[1]} ({test})" for test in tests]


async def graded_toy_row(cache_dir: str) -> dict:
    """The toy as a SWE-bench row with its own test command and parser, normalised (a mirror, no image yet)."""
    row = await toy.toy_instance(cache_dir)
    raw = {**row, "repo": REPO, "test_command": toy.TEST_COMMAND, "log_parser": "parse_log_django",
           "FAIL_TO_PASS": _names(row["FAIL_TO_PASS"]), "PASS_TO_PASS": _names(row["PASS_TO_PASS"])}  # fmt: skip
    return normalise(raw).to_dict()


async def graded_toy_image(row: dict, base_image: str, cache_dir: str) -> str:
    """A toy's instance image (the base image with its start commit at /testbed), built here where missing."""
    from uni_agent_gym.workspaces.history import clean_history
    from uni_agent_gym.workspaces.mirror_images import _checkout_archive, build_workspace_image
    from uni_agent_gym.workspaces.mirrors import mirror_repository

    name = f"{IMAGE}:{row['base_commit'][:12]}"
    mirror = await mirror_repository(row["repo"], row["mirror"], cache_dir, row["base_commit"])
    history = await clean_history(mirror, row["base_commit"], "ancestry", row["instance_id"])
    await asyncio.to_thread(build_workspace_image, base_image, name, await _checkout_archive(history), "/testbed", history.start, "missing")
    return name
