"""The served run page's questions to the index, answered in SQLite so that no answer holds every record: a
page of the run table (filtered and sorted), the choices its filters offer, and the charts' points over weight
versions, record time, repository or language (what tells an eval run's episodes apart: they carry no weight
version and land within seconds).

Filters (query parameters of `/api/rows`; each one narrows):

    instance      text the instance id contains            exit_reason, kind, language, repo   exact ("(none)": unset)
    reward_min, reward_max                                 masked   yes | no
    flags         flagged | clean | mask | length | logprob | unchecked
    v_from, v_to  weight versions, of v_of: max_global_steps (last sampled token, the default) or min_global_steps
    t_from, t_to  record time (seconds since the epoch), t_to excluded
"""

from __future__ import annotations

from typing import Any

from uni_agent_gym.advantages.masked_share import CAUSES
from uni_agent_gym.viewer.index import Index

SORTABLE = ("instance", "kind", "exit_reason", "reward", "masked", "turns", "tokens", "seconds", "flags", "error", "min_steps", "max_steps", "recorded", "id")
VERSION_COLUMNS = {"max_global_steps": "max_steps", "min_global_steps": "min_steps"}
EXACT = ("exit_reason", "kind", "language", "repo")
CATEGORIES = ("repo", "language")  # charts with one point per value
FLAG_FILTERS = {"flagged": "flags > 0", "clean": "flags = 0", "unchecked": "unchecked = 1"}
TIME_STEPS = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400)
MAX_POINTS = 60  # time buckets on a chart at most


class QueryError(ValueError):
    """A parameter the page sent cannot be used; says which."""


def _number(filters: dict[str, str], key: str) -> float | None:
    value = filters.get(key, "")
    if value == "":
        return None
    try:
        return float(value)
    except ValueError:
        raise QueryError(f"{key}: expects a number, got {value!r}") from None


def where(filters: dict[str, str]) -> tuple[str, list[Any]]:
    """The SQL condition and its parameters for `filters` (see the module docstring)."""
    clauses, parameters = ["1"], []
    if filters.get("instance"):
        escaped = filters["instance"].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("instance LIKE ? ESCAPE '\\'")
        parameters.append(f"%{escaped}%")
    for key in EXACT:
        if filters.get(key):
            clauses.append(f"{key} IS NULL" if filters[key] == "(none)" else f"{key} = ?")
            parameters += [] if filters[key] == "(none)" else [filters[key]]
    for key, operator in (("reward_min", ">="), ("reward_max", "<=")):
        if (value := _number(filters, key)) is not None:
            clauses.append(f"reward {operator} ?")
            parameters.append(value)
    if filters.get("masked") in ("yes", "no"):
        clauses.append(f"masked = {1 if filters['masked'] == 'yes' else 0}")
    flags = filters.get("flags", "")
    if flags in FLAG_FILTERS:
        clauses.append(FLAG_FILTERS[flags])
    elif flags in ("mask", "length", "logprob"):
        clauses.append("(',' || flag_kinds || ',') LIKE ?")
        parameters.append(f"%,{flags},%")
    elif flags:
        raise QueryError(f"flags: expects one of flagged, clean, mask, length, logprob, unchecked; got {flags!r}")
    column = VERSION_COLUMNS.get(filters.get("v_of") or "max_global_steps")
    if column is None:
        raise QueryError(f"v_of: expects max_global_steps or min_global_steps, got {filters['v_of']!r}")
    for key, operator in (("v_from", ">="), ("v_to", "<=")):
        if (value := _number(filters, key)) is not None:
            clauses.append(f"{column} {operator} ?")
            parameters.append(value)
    for key, operator in (("t_from", ">="), ("t_to", "<")):
        if (value := _number(filters, key)) is not None:
            clauses.append(f"recorded {operator} ?")
            parameters.append(value)
    return " AND ".join(clauses), parameters


def rows(index: Index, filters: dict[str, str], sort: str = "id", descending: bool = False, offset: int = 0, limit: int = 50) -> dict[str, Any]:
    """One page of the run table: {"total": rows matching, "offset", "rows": [...]}; unset values sort last."""
    if sort not in SORTABLE:
        raise QueryError(f"sort: expects one of {', '.join(SORTABLE)}; got {sort!r}")
    condition, parameters = where(filters)
    limit, offset = max(1, min(limit, 500)), max(0, offset)
    direction = "DESC" if descending else "ASC"
    names = ("id", "instance", "kind", "exit_reason", "reward", "resolved", "masked", "turns", "tokens", "seconds", "flags", "unchecked", "min_steps",
             "max_steps", "error", "repo", "language")  # fmt: skip
    with index.lock:
        total = index.connection.execute(f"SELECT COUNT(*) FROM trajectories WHERE {condition}", parameters).fetchone()[0]
        found = index.connection.execute(
            f"SELECT {', '.join(names)} FROM trajectories WHERE {condition} ORDER BY {sort} IS NULL, {sort} {direction}, id {direction} LIMIT ? OFFSET ?",
            [*parameters, limit, offset],
        ).fetchall()
    page = []
    for values in found:
        item = dict(zip(names, values))
        for key in ("resolved", "masked", "unchecked"):
            item[key] = None if item[key] is None else bool(item[key])
        page.append(item)
    return {"total": total, "offset": offset, "rows": page}


def summary(index: Index) -> dict[str, Any]:
    """What the run page's header and filters need: counts, the values each exact filter can take, the
    weight versions and times the records span, and the first skipped files or lines."""
    with index.lock:
        run = index.connection
        total, versioned, unchecked = run.execute(
            "SELECT COUNT(*), COUNT(max_steps), COALESCE(SUM(unchecked), 0) FROM trajectories").fetchone()  # fmt: skip
        choices = {key: [value if value is not None else "(none)" for (value,) in run.execute(f"SELECT DISTINCT {key} FROM trajectories ORDER BY {key}")]
                   for key in EXACT}  # fmt: skip
        skipped = run.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
        problems = [text for (text,) in run.execute("SELECT text FROM problems ORDER BY id LIMIT 50")]
    return {"total": total, "versioned": versioned, "unchecked": unchecked, "choices": choices, "skipped": skipped, "problems": problems}


def _time_step(low: float, high: float) -> int:
    """A round bucket width that puts at most MAX_POINTS buckets between two record times."""
    return next((step for step in TIME_STEPS if (high - low) / step < MAX_POINTS), TIME_STEPS[-1])


def charts(index: Index, by: str) -> dict[str, Any]:
    """The charts' points: per weight version (`by` max_global_steps or min_global_steps), per record-time
    bucket (`by` time), or per repository or language (`by` repo or language; `step` None): trajectories, graded and resolved ones, reward mean, masked and flagged ones, exit
    reasons, masked ones by cause, and median and p90 of model turns and of response tokens."""
    if by == "time":
        low, high = index.query("SELECT MIN(recorded), MAX(recorded) FROM trajectories")[0]
        step = _time_step(low or 0.0, high or 0.0)
        x = f"(CAST(recorded / {step} AS INTEGER) * {step})"
    elif by in VERSION_COLUMNS:
        step, x = 1, VERSION_COLUMNS[by]
    elif by in CATEGORIES:
        step, x = None, by
    else:
        raise QueryError(f"by: expects max_global_steps, min_global_steps, time, repo or language; got {by!r}")
    points: dict[Any, dict[str, Any]] = {}
    for value, n, graded, resolved, reward, masked, flagged in index.query(
        f"SELECT {x} AS x, COUNT(*), COUNT(resolved), COALESCE(SUM(resolved), 0), AVG(reward), COALESCE(SUM(masked), 0), "
        f"SUM(flags > 0) FROM trajectories WHERE {x} IS NOT NULL GROUP BY x ORDER BY x"
    ):
        points[value] = {"x": value, "n": n, "graded": graded, "resolved": resolved, "reward_mean": reward, "masked": masked,
                         "flagged": flagged, "exits": {}, "masked_by_cause": {}}  # fmt: skip
    for value, reason, masked, n in index.query(
        f"SELECT {x} AS x, exit_reason, masked, COUNT(*) FROM trajectories WHERE {x} IS NOT NULL GROUP BY x, exit_reason, masked"
    ):
        reason = reason if reason is not None else "(none)"
        point = points[value]
        point["exits"][reason] = point["exits"].get(reason, 0) + n
        if masked:  # the cause is the exit reason, as verl's uni_agent_gym/masked/<cause> metrics name it
            point["masked_by_cause"][reason] = point["masked_by_cause"].get(reason, 0) + n
    for point in points.values():  # the loops' abnormal exits on every point, as in those metrics
        point["masked_by_cause"] = {**dict.fromkeys(CAUSES, 0), **point["masked_by_cause"]}
    for column, name in (("turns", "turns"), ("response_tokens", "response_tokens")):
        for value, rank, n, measured in index.query(
            f"SELECT x, r, n, v FROM (SELECT {x} AS x, {column} AS v, ROW_NUMBER() OVER (PARTITION BY {x} ORDER BY {column}) AS r, "
            f"COUNT(*) OVER (PARTITION BY {x}) AS n FROM trajectories WHERE {column} IS NOT NULL AND {x} IS NOT NULL) "
            "WHERE r = (n * 5 + 9) / 10 OR r = (n * 9 + 9) / 10"
        ):
            if rank == (n * 5 + 9) // 10:  # nearest rank: the ceil(p * n)-th smallest
                points[value][f"{name}_p50"] = measured
            if rank == (n * 9 + 9) // 10:
                points[value][f"{name}_p90"] = measured
    without = index.query(f"SELECT COUNT(*) FROM trajectories WHERE {x} IS NULL")[0][0]
    return {"by": by, "step": step, "points": list(points.values()), "without_x": without}

