"""The served viewer's index: one SQLite row per trajectory (what the run table sorts and filters on, what
the charts count) and where to read the whole record again, kept beside the records so a second start
reads nothing it has read before.

A training run keeps writing records while the page is open, so `update()` reads only what changed since the
last time: a new or replaced record file whole, a JSONL file from the last complete line it read. Nothing
is listed when no record directory changed (one `stat` each: records land by rename, which changes the
directory's mtime; appends change a JSONL file's size). The stamp is taken before the listing and out of
the clock tick of the last change, so a file that lands during the listing changes the next stamp. The
listing is compared with the known files inside SQLite, so memory does not grow with the number of records.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uni_agent_gym.viewer.checks import check
from uni_agent_gym.viewer.records import Trajectory, end_of_complete_lines, read_file, read_one, record_directories, scan

SCHEMA = "4"
FILE_NAME = ".uni-agent-gym-view.sqlite"
FOLDER = ".uni-agent-gym-view"  # inside a run directory: the index and its journal files
BATCH = 500  # files read between commits (and progress reports)
TICK = 0.02  # seconds: more than the coarse clock tick file times are stamped with (4 ms at HZ=250, 10 ms at 100)
COLUMNS = ("path", "offset", "line", "instance", "kind", "exit_reason", "reward", "resolved", "masked", "turns", "tokens",
           "response_tokens", "seconds", "flags", "flag_kinds", "unchecked", "language", "min_steps", "max_steps", "recorded", "repo", "error")  # fmt: skip
TABLES = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, read_to INTEGER, lines INTEGER);
CREATE TABLE IF NOT EXISTS trajectories (id INTEGER PRIMARY KEY AUTOINCREMENT, {", ".join(COLUMNS)});
CREATE INDEX IF NOT EXISTS trajectories_path ON trajectories (path);
CREATE TABLE IF NOT EXISTS problems (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, text TEXT);
CREATE INDEX IF NOT EXISTS problems_path ON problems (path);
"""


def index_file(path: Path) -> Path:
    """Where the index of `path` lives: inside a run directory whose records are in subdirectories (an eval
    run's `trajectories/`, a `grade` output's runs), in `.uni-agent-gym-view/`, so it goes where the run goes
    and its journal files never change the run directory's mtime; beside a record directory or file
    (`.NAME.uni-agent-gym-view.sqlite`: never inside a record directory, whose mtime says whether records
    landed); else, where neither is writable, under ~/.cache/uni-agent-gym/view/."""
    path = path.resolve()
    if path.is_dir() and record_directories(path) != [path] and os.access(path, os.W_OK):
        (path / FOLDER).mkdir(exist_ok=True)
        return path / FOLDER / "index.sqlite"
    beside = path.with_name(f".{path.name}{FILE_NAME}")
    if os.access(beside.parent, os.W_OK):
        return beside
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uni-agent-gym" / "view"
    cache.mkdir(parents=True, exist_ok=True)
    return cache / f"{hashlib.sha256(str(path).encode()).hexdigest()[:16]}.sqlite"


def row_of(record: Trajectory, offset: int, line: int, recorded: float, tokenizer: Any) -> tuple:
    """The index row of one record (in `COLUMNS` order, less the path)."""
    found = check(record, tokenizer)
    versions = record.weight_versions or {}
    return (offset, line, record.instance_id, record.kind, record.exit_reason, record.reward,
            None if record.resolved is None else int(bool(record.resolved)), None if record.masked is None else int(bool(record.masked)),
            record.turns, record.token_count, len(record.response_ids) if record.response_ids is not None else None, record.seconds,
            len(found.flags), ",".join(found.kinds), int(found.unchecked is not None), record.language,
            versions.get("min_global_steps"), versions.get("max_global_steps"), recorded, record.repo, record.error)  # fmt: skip


class Index:
    """The index of the records at `path` (a directory or a file). `tokenizer` finds message spans for
    records without them; the index remembers which one it was built with (`checks_key`) and starts over
    when another is given. One lock serialises every use of the connection (a local app's few requests)."""

    def __init__(self, path: Path, database: Path | None = None, tokenizer: Any = None, checks_key: str = "") -> None:
        self.path = path.resolve()
        self.run = self.path if self.path.is_dir() else None
        self.database = database or index_file(self.path)
        self.tokenizer = tokenizer
        self.lock = threading.RLock()
        self.generation = 0  # grows with every change: cached answers keyed on it go stale
        self._found_directories: list[Path] | None = None
        self.connection = sqlite3.connect(self.database, check_same_thread=False, isolation_level=None)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("PRAGMA synchronous=NORMAL")
        self._open(f"{SCHEMA}:{checks_key}")
        stamp = self.connection.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
        self._stamp: tuple | None = tuple(tuple(entry) for entry in json.loads(stamp[0])) if stamp else None  # a second start lists nothing
        self._appendable: list[str] = [name for (name,) in self.connection.execute("SELECT path FROM files WHERE path LIKE '%.jsonl'")]  # few

    def _open(self, key: str) -> None:
        """Tables of this schema and checks, else a fresh index."""
        self.connection.executescript(TABLES)
        found = self.connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if found is None or found[0] != key:
            self.connection.executescript("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS trajectories; DROP TABLE IF EXISTS problems;")
            self.connection.executescript(TABLES)
            self.connection.execute("DELETE FROM meta")
            self.connection.execute("INSERT INTO meta VALUES ('version', ?)", (key,))

    def query(self, sql: str, parameters: tuple | list = ()) -> list[tuple]:
        with self.lock:
            return self.connection.execute(sql, parameters).fetchall()

    def _directories(self, again: bool = False) -> list[Path]:
        """The directories records land in (found again at each listing: a `grade` run may be added)."""
        if again or self._found_directories is None:
            self._found_directories = record_directories(self.path) if self.run is not None and self.path.is_dir() else [self.path.parent]
        return self._found_directories

    def _current_stamp(self) -> tuple:
        """What changes when a record lands: each record directory's mtime (a file renamed into place), the
        size and mtime of the file PATH names, and of every known JSONL file (appends leave the directory be)."""
        stamp: list[Any] = []
        watched = [*self._directories(), self.path] if self.run is not None else [self.path]
        for path in watched:
            try:
                stat = path.stat()
                stamp.append((str(path), stat.st_mtime_ns, stat.st_size))
            except FileNotFoundError:
                stamp.append((str(path), None, None))
        for name in self._appendable:
            try:
                stat = os.stat(name)
                stamp.append((name, stat.st_mtime_ns, stat.st_size))
            except FileNotFoundError:
                stamp.append((name, None, None))
        return tuple(stamp)

    def update(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Read what changed since the last update; the number of files read. `progress(done, total)` is
        called every `BATCH` files."""
        with self.lock:
            stamp = self._current_stamp()
            if stamp == self._stamp:
                return 0
            wait = max((entry[1] or 0 for entry in stamp), default=0) / 1e9 + TICK - time.time()
            if wait > 0:  # changed in this clock tick: a file landing later in it would leave the mtime as it is
                time.sleep(wait)
                stamp = self._current_stamp()
            self._stamp = stamp  # taken before the listing: whatever lands after it changes the stamp
            changed = self._list()
            removed = self.connection.execute("SELECT path FROM files WHERE path NOT IN (SELECT path FROM seen)").fetchall()
            self.connection.execute("BEGIN")
            for (name,) in removed:
                self._forget(name)
                self.connection.execute("DELETE FROM files WHERE path = ?", (name,))
            for done, (name, size, mtime_ns, read_to, lines) in enumerate(changed, start=1):
                self._read(name, size, mtime_ns, read_to, lines)
                if done % BATCH == 0:
                    self.connection.execute("COMMIT")
                    self.connection.execute("BEGIN")
                    if progress:
                        progress(done, len(changed))
            self.connection.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (json.dumps(stamp),))
            self.connection.execute("COMMIT")
            self.connection.execute("DROP TABLE seen")
            self._appendable = [name for (name,) in self.connection.execute("SELECT path FROM files WHERE path LIKE '%.jsonl'")]
            if changed or removed:
                self.generation += 1
            return len(changed)

    def _list(self) -> list[tuple]:
        """The record files now (into the temporary table `seen`), and those new or changed since the last
        read: (path, size, mtime_ns, bytes read of it, its lines read) each."""
        self.connection.execute("CREATE TEMP TABLE IF NOT EXISTS seen (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER)")
        self.connection.execute("DELETE FROM seen")

        def listing():
            if self.run is None:
                if self.path.is_file():
                    stat = self.path.stat()
                    yield str(self.path), stat.st_size, stat.st_mtime_ns
                return
            for directory in self._directories(again=True):
                if directory.is_dir():
                    for entry in scan(directory):
                        try:
                            stat = entry.stat()
                        except FileNotFoundError:  # replaced between the listing and the stat
                            continue
                        yield entry.path, stat.st_size, stat.st_mtime_ns

        self.connection.execute("BEGIN")
        self.connection.executemany("INSERT OR REPLACE INTO seen VALUES (?, ?, ?)", listing())
        self.connection.execute("COMMIT")
        return self.connection.execute(
            "SELECT s.path, s.size, s.mtime_ns, f.read_to, f.lines FROM seen s LEFT JOIN files f ON f.path = s.path "
            "WHERE f.path IS NULL OR f.size != s.size OR f.mtime_ns != s.mtime_ns ORDER BY s.path"
        ).fetchall()

    def _forget(self, name: str) -> None:
        self.connection.execute("DELETE FROM trajectories WHERE path = ?", (name,))
        self.connection.execute("DELETE FROM problems WHERE path = ?", (name,))

    def _read(self, name: str, size: int, mtime_ns: int, read_to: int | None, lines: int | None) -> None:
        """Index one new or changed file: a JSONL file that grew from where it was left, any other whole."""
        file = Path(name)
        appended = file.suffix == ".jsonl" and read_to is not None and size >= read_to
        start, first_line = (read_to, (lines or 0) + 1) if appended else (0, 1)
        if not appended:
            self._forget(name)
        rows, problems = [], []
        try:
            for item in read_file(file, self.run, start, first_line):
                if isinstance(item, str):
                    problems.append((name, item))
                else:
                    offset, line, record = item
                    rows.append((name, *row_of(record, offset, line, mtime_ns / 1e9, self.tokenizer)))
            end, more = end_of_complete_lines(file, start) if file.suffix == ".jsonl" else (size, 0)
        except OSError as exc:  # gone since the listing: the next update forgets it
            problems.append((name, f"{name}: cannot be read ({exc.strerror})"))
            end, more = size, 0
        self.connection.executemany(f"INSERT INTO trajectories ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", rows)
        self.connection.executemany("INSERT INTO problems (path, text) VALUES (?, ?)", problems)
        self.connection.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)", (name, size, mtime_ns, end, (lines or 0) * appended + more))

    def record(self, identifier: int) -> Trajectory | None:
        """The whole record of row `identifier`, read again from its file; None when there is no such row."""
        found = self.query("SELECT path, offset, line FROM trajectories WHERE id = ?", (identifier,))
        if not found:
            return None
        name, offset, line = found[0]
        return read_one(Path(name), offset, line, self.run)

    def close(self) -> None:
        with self.lock:
            self.connection.close()
