"""The grading guard (rewards/guard) on this machine's own pytest: a tiny repository whose package the test
imports, honest and with the verdict rewritten in-process, run the way the grader runs it (the plugin written
with its key, `PYTEST_PLUGINS` and `PYTHONPATH` set, the record read back). The grader's docker and local
runs are in test_reward_attacks.py and test_grade.py (the 19 fixtures' gold with the guard on)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from swebench.harness.log_parsers.python import parse_log_pytest

from tests.verdict_attacks import PLUGIN_REGISTERED, REPORT_CLASS_PATCHED
from uni_agent_gym.rewards.guard import Guard, can_load

TEST = "import pkg\n\n\ndef test_adds():\n    assert pkg.add(2, 2) == 4\n\n\ndef test_other():\n    assert True\n"
BUGGY = "def add(a, b):\n    return a - b\n"
GUARD_UNREGISTERED = """import gc, sys
from _pytest.config import Config

for config in [o for o in gc.get_objects() if isinstance(o, Config)]:
    for plugin in list(config.pluginmanager.get_plugins()):
        if getattr(plugin, "__name__", "").startswith("uag_guard_"):
            config.pluginmanager.unregister(plugin)
"""
# ends the test process once a test calls it: the session never ends
EXITS_EARLY = "import os\n\n\ndef add(a, b):\n    os._exit(0)\n"


def run(tmp_path: Path, package: str, *options: str) -> tuple[dict[str, str], str, Guard]:
    """The tests of a repository whose package is `package`, as the grader runs them: (the log's statuses, the
    guard's record, the guard)."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True, exist_ok=True)
    (repo / "pkg" / "__init__.py").write_text(BUGGY + package)
    (repo / "test_pkg.py").write_text(TEST)
    guard = Guard()
    guard_dir = tmp_path / "guard"
    guard_dir.mkdir(exist_ok=True)
    record = tmp_path / "record"
    source = guard.source().replace(guard.record, str(record))
    (guard_dir / f"{guard.name}.py").write_text(source)
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST", "PYTHON"))}
    environ.update(PYTEST_PLUGINS=guard.name, PYTHONPATH=f"{guard_dir}:{repo}")
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *options, "test_pkg.py"], cwd=repo, env=environ,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert not guard_dir.exists() or not any(guard_dir.iterdir()), "the plugin takes its source (the key) off the disk"
    return parse_log_pytest(done.stdout, None), record.read_text() if record.exists() else "", guard


def problems(statuses: dict[str, str], record: str, guard: Guard) -> list[str]:
    return guard.problems(record, statuses, partial(parse_log_pytest, test_spec=None))


def test_an_honest_run_has_no_problem(tmp_path):
    statuses, record, guard = run(tmp_path, "")
    assert statuses == {"test_pkg.py::test_adds": "FAILED", "test_pkg.py::test_other": "PASSED"}
    assert problems(statuses, record, guard) == []


@pytest.mark.parametrize(
    "package, expected",
    [
        (REPORT_CLASS_PATCHED, ["machinery was replaced during the run: _pytest.reports.TestReport.from_item_and_call",
                          "the log passes 1 test(s) the grading guard did not see pass: test_pkg.py::test_adds"]),
        (PLUGIN_REGISTERED, ["plugins were registered during the run from outside pytest: forge (pytest_runtest_call in pkg/__init__.py)"]),
        (GUARD_UNREGISTERED, ["never reached the grading guard's end"]),
        (EXITS_EARLY, ["never reached the grading guard's end"]),
    ],
    ids=["report-class-patched", "plugin-registered", "guard-unregistered", "exits-early"],
)  # fmt: skip
def test_a_verdict_rewritten_in_process_is_seen(tmp_path, package, expected):
    statuses, record, guard = run(tmp_path, package)
    if package in (REPORT_CLASS_PATCHED, PLUGIN_REGISTERED):
        assert statuses["test_pkg.py::test_adds"] == "PASSED", "the attack is real: the log passes the failing test"
    found = problems(statuses, record, guard)
    for problem in expected:
        assert any(problem in line for line in found), found


def test_forged_lines_and_a_missing_guard_are_problems(tmp_path):
    statuses, record, guard = run(tmp_path, REPORT_CLASS_PATCHED)
    body = json.dumps(["test", ["test_pkg.py::test_adds", "call", "passed"]], sort_keys=True)
    forged = record + hmac.new(b"not the key", body.encode(), hashlib.sha256).hexdigest() + " " + body + "\n"
    assert any("1 line(s) of the grading guard's record are not its own" in line for line in problems(statuses, forged, guard))
    assert any("never loaded" in line for line in problems(statuses, "", guard))


def test_under_xdist_the_guard_says_it_cannot_see_the_workers(tmp_path):
    """pytest-xdist runs the tests in workers the guard is not loaded in: it says so, and vouches for nothing
    it did not see (an honest run is not failed for it; the log checks still apply)."""
    statuses, record, guard = run(tmp_path, "", "-n", "2")
    assert statuses["test_pkg.py::test_other"] == "PASSED"
    assert '"unguarded"' in record and problems(statuses, record, guard) == []


@pytest.mark.parametrize(
    "command, loads",
    [("pytest -rA tests/test_x.py", True), ("python -X dev -X warn_default_encoding -m pytest -rA", True),
     ("tox --current-env -epy39 -v --", False), ("python -I -m pytest", False), ("python3.9 -E -m pytest tests", False)],
)  # fmt: skip
def test_commands_whose_pytest_cannot_load_the_guard_are_known(command, loads):
    assert can_load(command) is loads
