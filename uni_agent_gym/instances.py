"""Dataset rows: load them, select some, normalise them into tasks, name their images.

Rows come from a Hugging Face dataset name (through `datasets`) or a local `.json`, `.jsonl` or
`.parquet` file, of any dataset family (SWE-bench, SWE-Gym, SWE-rebench, SWE-smith, R2E-Gym: see
`uni_agent_gym.datasets`). Every row is checked when loaded: a missing field or a patch that is not a
diff is an `InstanceError` naming the instance and the field, never a silent default (an empty
FAIL_TO_PASS would grade as resolved).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from uni_agent_gym import datasets
from uni_agent_gym.datasets import Task
from uni_agent_gym.datasets.base import InstanceError, patch_files, swebench_image_name
from uni_agent_gym.files import check_file, read_text

__all__ = ["InstanceError", "image_name", "load_instances", "normalise", "patch_files", "read_rows", "select"]

def image_name(instance_id: str) -> str:
    """The official SWE-bench evaluation image of an instance (`__` becomes `_1776_`, lower case)."""
    return swebench_image_name(instance_id)


def normalise(row: Mapping[str, Any], dataset_format: str = "auto") -> Task:
    """The checked task of a row of any dataset family (`uni_agent_gym.datasets`): test lists as lists,
    patches verified to be diffs, the family's image, test command, parser, grading rule and start state."""
    return datasets.normalise(row, dataset_format)


def read_rows(source: str | Path, split: str = "test") -> list[dict[str, Any]]:
    """Raw rows from a local .json/.jsonl/.parquet file, a directory of such files, or else a `datasets` name
    (or a dataset repository's layout, its files under data/)."""
    path = Path(source)
    files = _directory_files(path, split) if path.is_dir() else []
    if files:
        rows = [row for file in files for row in _file_rows(file)]
    elif path.suffix in ROW_FILE_SUFFIXES or path.is_file():
        rows = _file_rows(path)
    else:
        import datasets

        try:
            rows = list(datasets.load_dataset(str(source), split=split))
        except Exception as exc:  # noqa: BLE001 - datasets raises many unrelated types; say what failed
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise InstanceError(f"Cannot load dataset {source!r} (split {split!r}): {reason}") from None
    if not rows:
        raise InstanceError(f"Dataset {source} has no rows")
    return rows


ROW_FILE_SUFFIXES = (".json", ".jsonl", ".parquet")


def _directory_files(path: Path, split: str) -> list[Path]:
    """The row files directly in a directory, read as files: `datasets` would read them as one table, which fails
    when files' columns differ. Those named for the split (`test.jsonl`, `test-00000-of-00001.parquet`) if any."""
    files = sorted(file for file in path.iterdir() if file.suffix in ROW_FILE_SUFFIXES and file.is_file())
    named = [file for file in files if re.fullmatch(rf"{re.escape(split)}([-_.].*)?", file.stem)]
    return named or files


def _file_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a dataset file; each must be a JSON object (a mapping)."""
    if path.suffix == ".parquet":
        import datasets

        check_file(path, "Dataset file", InstanceError)
        try:
            return list(datasets.Dataset.from_parquet(str(path)))
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors have no common base worth naming
            raise InstanceError(f"Dataset file {path} is not valid Parquet: {type(exc).__name__}: {exc}") from None
    text = read_text(path, "Dataset file", InstanceError)
    if path.suffix == ".jsonl":
        return [_json_line(path, number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InstanceError(f"Dataset file {path} is not valid JSON: {exc}") from None
        rows = data.get("instances", data.get("rows")) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise InstanceError(f"Dataset file {path}: expects a JSON list of rows (or {{'instances': [...]}})")
    else:
        raise InstanceError(f"{path}: expects a .json, .jsonl or .parquet file, or a dataset name")
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise InstanceError(f"Dataset file {path}: row {number} is not a JSON object (got {type(row).__name__})")
    return rows


def _json_line(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}:{number}: not a JSON object ({exc})") from None
    if not isinstance(row, dict):
        raise InstanceError(f"{path}:{number}: not a JSON object (got {type(row).__name__})")
    return row


def select(
    rows: Iterable[dict[str, Any]],
    *,
    ids: Iterable[str] | None = None,
    pattern: str | None = None,
    repos: Iterable[str] | None = None,
    slice_spec: str | slice | None = None,
) -> list[dict[str, Any]]:
    """Filter rows by exact ids, an id regex (`re.search`), repos, then a slice such as "0:10"; a selection
    that keeps no row is an error (a run over nothing would look like a run)."""
    rows, ids, repos = list(rows), None if ids is None else list(ids), None if repos is None else list(repos)
    total = len(rows)
    if ids is not None:
        by_id = {datasets.instance_id_of(row): row for row in rows}
        unknown = [instance_id for instance_id in ids if instance_id not in by_id]
        if unknown:
            raise InstanceError(f"Unknown instance id(s): {', '.join(unknown)} (not among the dataset's {total} rows)")
        rows = [by_id[instance_id] for instance_id in ids]
    if pattern is not None:
        try:
            matcher = re.compile(pattern)
        except re.error as exc:
            raise InstanceError(f"The pattern {pattern!r} is not a regular expression: {exc}") from None
        rows = [row for row in rows if matcher.search(datasets.instance_id_of(row))]
    if repos is not None:
        repo_set = set(repos)
        rows = [row for row in rows if (row.get("repo") or row.get("repo_name")) in repo_set]
    if slice_spec is not None:
        rows = rows[_parse_slice(slice_spec)]
    if not rows and total:
        chosen = {"instance ids": None if ids is None else " ".join(ids), "pattern": pattern,
                  "repos": None if repos is None else " ".join(repos), "slice": slice_spec}  # fmt: skip
        described = ", ".join(f"{name} {value!r}" for name, value in chosen.items() if value is not None)
        raise InstanceError(f"The selection ({described}) matches none of the dataset's {total} rows")
    return rows


def _parse_slice(spec: str | slice) -> slice:
    if isinstance(spec, slice):
        return spec
    parts = spec.split(":")
    if len(parts) > 3 or not all(re.fullmatch(r"-?\d*", part) for part in parts):
        raise InstanceError(f"Expects a slice like '0:10' or '::2', got {spec!r}")
    if len(parts) == 1:
        return slice(None, int(parts[0]) if parts[0] else None)
    return slice(*(int(part) if part else None for part in parts))


def load_instances(
    source: str | Path,
    *,
    split: str = "test",
    ids: Iterable[str] | None = None,
    pattern: str | None = None,
    repos: Iterable[str] | None = None,
    slice_spec: str | slice | None = None,
    dataset_format: str = "auto",
) -> list[Task]:
    """Load, select and normalise rows: `load_instances("lite.jsonl", ids=[...])`; `dataset_format` names
    the family instead of detecting it per row."""
    rows = select(read_rows(source, split), ids=ids, pattern=pattern, repos=repos, slice_spec=slice_spec)
    return [normalise(row, dataset_format) for row in rows]
