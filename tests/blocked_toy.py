"""The toy task set up to fail for the infrastructure's sake, deterministically and for real: its
one-row dataset, and a local workdir that holds a stray file, so no checkout can go there (the
workspace refuses a directory that is neither empty nor a git checkout). Removing the file fixes it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from uni_agent_gym import toy


@dataclass(frozen=True)
class BlockedToy:
    dataset: Path  # the toy row as a .jsonl
    cache: Path  # env.cache_dir
    workdir: Path  # deployment.workdir of a local deployment
    stray: Path  # the file that blocks it

    def settings(self, **sections: dict) -> dict:
        """A gym config for the local deployment in the blocked workdir, plus `sections`."""
        return {"env": {"cache_dir": str(self.cache)}, "deployment": {"type": "local", "workdir": str(self.workdir)}, **sections}


def blocked_toy(tmp_path: Path) -> BlockedToy:
    cache, workdir = tmp_path / "cache", tmp_path / "workdir"
    dataset = tmp_path / "toy.jsonl"
    dataset.write_text(json.dumps(asyncio.run(toy.toy_instance(str(cache)))) + "\n")
    workdir.mkdir()
    stray = workdir / "notes.txt"
    stray.write_text("left here by hand\n")
    return BlockedToy(dataset, cache, workdir, stray)
