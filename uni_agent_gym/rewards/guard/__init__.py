"""The grading guard: test outcomes through a channel the code under test does not own.

The code under test runs inside the test runner's process, so it can rewrite the verdict there (patch the
runner's report classes, register a hook that swallows failures) and the log, the runner's summary and the
exit code then all agree. For pytest, the grader writes a plugin (`pytest_plugin.py`, its key and record path
filled in) into the sandbox and has pytest load it before the code under test (`PYTEST_PLUGINS`). It records
each phase's outcome from the call itself and signs every line with a per-grading key; at the end it names
what of the runner's machinery was replaced and which plugins were registered from outside pytest.
`problems()` compares its record with the log: every test the log passes must be one the guard saw pass,
and the record must be whole (loaded, signed, ended, nothing replaced). An attacker has to defeat the guard,
the log cross-checks and the exit code at once.

What it cannot see: code that special-cases a test's inputs (a wrong fix, not a forged verdict); a runner
whose implementation is the repository itself (the pytest repository: the code under test loads before the
guard, and can swallow a test's exception before the guard's record is made: `canaries.py` catches that);
sympy's `bin/test` (its runner is the repository's own code: the log checks, the canaries and the
runner-module rerun guard it), pytest or Django's runner under tox or `python -I` (`can_load`), and tests
run by pytest-xdist's workers: the log checks alone guard those.

Django's `tests/runtests.py` is unittest's runner: there the guard is `unittest_sitecustomize.py`, written
as `sitecustomize.py` in a directory first on `PYTHONPATH`, which Python imports as it starts. It hands each
test a result that records what the test reports before the runner's own result sees it, and snapshots
`unittest`'s machinery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from uni_agent_gym.deployments import Deployment

PLUGIN_SOURCE = Path(__file__).with_name("pytest_plugin.py")
SITECUSTOMIZE_SOURCE = Path(__file__).with_name("unittest_sitecustomize.py")
# Commands whose pytest cannot load the guard: tox passes the test environment only the variables it is told
# to, and `python -I` / `-E` / `-S` ignore PYTHONPATH and PYTEST_PLUGINS or skip site. They are guarded by the
# log checks alone (as Django's and sympy's runners are).
CANNOT_LOAD = re.compile(r"\btox\b|\bpython[0-9.]*\s+(?:-\S+\s+)*-[a-zA-Z]*[IES]")


def can_load(command: str) -> bool:
    """Whether pytest, run by `command`, will load a guard put in its environment."""
    return CANNOT_LOAD.search(command) is None


@dataclass
class Guard:
    """One grading's guard: where its plugin and record live in the sandbox, and the key its lines are signed with."""

    runner: str = "pytest"  # a runner whose record is `guarded` (`runners/`): pytest, or Django's runtests.py (unittest's)
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    name: str = field(default_factory=lambda: f"uag_guard_{secrets.token_hex(6)}")

    @property
    def directory(self) -> str:
        return f"/tmp/{self.name}"

    @property
    def record(self) -> str:
        return f"/tmp/{self.name}.record"

    @property
    def file_name(self) -> str:
        """pytest loads a plugin by module name; Python imports `sitecustomize` as it starts."""
        return f"{self.name}.py" if self.runner == "pytest" else "sitecustomize.py"

    def source(self) -> str:
        text = (PLUGIN_SOURCE if self.runner == "pytest" else SITECUSTOMIZE_SOURCE).read_text()
        return text.replace("__UAG_KEY__", self.key.hex()).replace("__UAG_RECORD__", self.record)

    async def install(self, deployment: Deployment) -> str:
        """Write the guard into the sandbox; the shell lines that make the test command load it."""
        await deployment.write_file(f"{self.directory}/{self.file_name}", self.source())
        plugins = f"export PYTEST_PLUGINS={self.name}${{PYTEST_PLUGINS:+,$PYTEST_PLUGINS}}; " if self.runner == "pytest" else ""
        return f"{plugins}export PYTHONPATH={shlex.quote(self.directory)}${{PYTHONPATH:+:$PYTHONPATH}}; "

    async def collect(self, deployment: Deployment, limit: int) -> str:
        """The record the run left (read whole up to `limit` bytes, then removed with the plugin's directory)."""
        read = await deployment.run(f"cat {self.record} 2>/dev/null; rm -rf {self.record} {self.directory}", timeout=120, output_limit=limit)
        if read.truncated:
            return ""  # a record past the limit cannot be read whole: it vouches for nothing
        return read.output

    def problems(self, record: str, statuses: dict[str, str], parse: Callable[[str], dict[str, str]]) -> list[str]:
        """What the record says against the log's `statuses` (parsed with `parse`, which also reads the
        guard's outcomes, so both have the same test names)."""
        lines, forged = [], 0
        for line in record.splitlines():
            mac, _, body = line.partition(" ")
            if not hmac.compare_digest(mac, hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()):
                forged += 1
                continue
            lines.append(json.loads(body))
        problems = [f"{forged} line(s) of the grading guard's record are not its own (forged or cut)"] if forged else []
        kinds = [kind for kind, _ in lines]
        if "unguarded" in kinds:  # the guard loaded but cannot see the tests where they run (pytest-xdist)
            return problems
        if "start" not in kinds:
            return [*problems, "the grading guard never loaded in the test runner (or its record was too large to read whole), so no outcome is vouched for"]
        if kinds[-1] != "end":
            problems.append("the test run never reached the grading guard's end (it was unregistered, or the run was cut short)")
        else:
            end: dict[str, Any] = lines[-1][1]
            if end["changed"]:
                problems.append(f"the test runner's machinery was replaced during the run: {', '.join(end['changed'][:8])}")
            if end["plugins"]:
                problems.append(f"plugins were registered during the run from outside pytest: {', '.join(end['plugins'][:8])}")
        seen = sorted(_verdicts([payload for kind, payload in lines if kind == "test"]).items(), key=lambda item: item[1] == "FAILED")
        guarded = self._as_parsed(seen, parse)
        unvouched = sorted(test for test, status in statuses.items() if status == "PASSED" and guarded.get(test) != "PASSED")
        if unvouched:
            shown = ", ".join(unvouched[:5]) + (f" and {len(unvouched) - 5} more" if len(unvouched) > 5 else "")
            problems.append(f"the log passes {len(unvouched)} test(s) the grading guard did not see pass: {shown}")
        return problems

    def _as_parsed(self, seen: list[tuple[str, str]], parse: Callable[[str], dict[str, str]]) -> dict[str, str]:
        """The guard's verdicts under the log's test names: written as the runner writes them, read by its parser."""
        if self.runner == "django":  # unittest's verbose lines: "<description> ... ok"
            words = {"PASSED": "ok", "FAILED": "FAIL", "SKIPPED": "skipped 'guard'"}
            return parse("".join(f"{name} ... {words[verdict]}\n" for name, verdict in seen))
        # both line shapes pytest parsers read (`-rA`'s "PASSED id", `-v`'s "id PASSED"), failures last (the last line wins)
        return {**parse("".join(f"{nodeid} {verdict}\n" for nodeid, verdict in seen)),
                **parse("".join(f"{verdict} {nodeid}\n" for nodeid, verdict in seen))}  # fmt: skip


def _verdicts(phases: list[list[str]]) -> dict[str, str]:
    """nodeid -> PASSED (its call passed and no phase failed), FAILED, or SKIPPED, from the guard's phase lines."""
    outcomes: dict[str, dict[str, str]] = {}
    for nodeid, when, outcome in phases:
        outcomes.setdefault(nodeid, {})[when] = outcome
    verdicts = {}
    for nodeid, phases_of in outcomes.items():
        if "failed" in phases_of.values():
            verdicts[nodeid] = "FAILED"
        elif phases_of.get("call") == "passed":
            verdicts[nodeid] = "PASSED"
        else:
            verdicts[nodeid] = "SKIPPED"
    return verdicts
