"""Dataset rows of any family as verl training data: one parquet row per task, routed to UniAgentLoop.

verl's `RLHFDataset` reads `prompt` (chat messages; the env writes the real task prompt at reset, so
this is the problem statement, used by verl for length filtering and logs), and passes `agent_name`
and `extra_info` to the agent loop, which takes the task from `extra_info.instance` (JSON). The
family travels as `extra_info.family` and as `data_source`, so verl reports metrics per family.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import ConfigError

def verl_rows(instances: list[dict[str, Any]], agent_name: str = "uni_agent") -> list[dict[str, Any]]:
    """The rows verl's dataset expects, in the order given."""
    return [
        {
            "data_source": row.get("family", "swe-bench"),
            "agent_name": agent_name,
            "prompt": [{"role": "user", "content": row["problem_statement"]}],
            "ability": "software-engineering",
            "reward_model": {"style": "rule", "ground_truth": row["instance_id"]},
            "extra_info": {"index": index, "instance_id": row["instance_id"], "family": row.get("family", "swe-bench"), "instance": json.dumps(row)},
        }
        for index, row in enumerate(instances)
    ]


def write_parquet(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write `rows` with `datasets` (the library verl reads them back with)."""
    from datasets import Dataset

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Dataset.from_list(rows).to_parquet(str(path))
    return path


def agent_names(path: str | Path) -> set[str]:
    """The agent loops a parquet file's rows go to (its `agent_name` column; none without one)."""
    import pyarrow
    import pyarrow.parquet as pq

    try:
        if "agent_name" not in pq.read_schema(path).names:
            return set()
        column = pq.read_table(path, columns=["agent_name"]).column("agent_name")
    except (pyarrow.ArrowException, OSError) as exc:
        raise ConfigError(f"{path} is not a parquet file verl can read: {exc}") from None
    return {str(name) for name in column.to_pylist() if name is not None}
