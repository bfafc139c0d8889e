"""Which environments passed `uni-agent-gym validate`, remembered on this machine.

An environment is an instance image built here (its `recorded_environment` digest) as the engine holds it (its
image id: a rebuild of the same recipe is another environment until validated again). The record is one JSON file
under the cache directory, `validated.json`: `{"<digest>@<image id>": {"instance_id", "validated", "reasons", "when"}}`.
Grading reads it to decide whose a run that never started is (`rewards/swebench.py`, the zero rule); `uni-agent-gym validate` writes it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from uni_agent_gym.named_locks import blocking_machine_lock

STORE_NAME = "validated.json"


def store_path(cache_dir: str | Path) -> Path:
    return Path(cache_dir).expanduser() / STORE_NAME


def environment_key(digest: str, image_id: str) -> str:
    return f"{digest}@{image_id}"


def read_store(cache_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Every record ({} where there is none, or the file is not a JSON object: nothing counts as validated)."""
    try:
        data = json.loads(store_path(cache_dir).read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def is_validated(cache_dir: str | Path, digest: str | None, image_id: str | None) -> bool:
    """Whether this environment passed `validate` (False for one not built here: it records no digest)."""
    if not digest or not image_id:
        return False
    return bool(read_store(cache_dir).get(environment_key(digest, image_id), {}).get("validated"))


def record(cache_dir: str | Path, digest: str, image_id: str, instance_id: str, validated: bool, reasons: list[str]) -> None:
    """Remember one environment's result (replacing an earlier one), atomically, one writer at a time."""
    path = store_path(cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with blocking_machine_lock(f"validation store {path.resolve()}"):
        data = read_store(cache_dir)
        data[environment_key(digest, image_id)] = {"instance_id": instance_id, "validated": validated, "reasons": reasons, "when": time.time()}
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(data, indent=1, sort_keys=True))
        scratch.replace(path)
