"""The grading guard for unittest-based runners (rewards/guard/unittest_sitecustomize.py) under Django's own
`tests/runtests.py`: Django 4.1.7's sdist from PyPI (its runner, settings and URLconf files, the `django`
package on PYTHONPATH), a test app whose package the tests import, honest and with the verdict rewritten
in-process, run the way the grader runs it (the guard written as `sitecustomize.py` with its key, PYTHONPATH
set, the record read back) and parsed with swebench's Django parser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from swebench.harness.log_parsers.python import parse_log_django

from tests.conftest import require
from tests.fixture_sources import CACHE, sdist_directory
from uni_agent_gym.named_locks import blocking_machine_lock
from uni_agent_gym.rewards.guard import Guard

DJANGO = "Django==4.1.7"
COMMAND = ["tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1", "uag_app"]  # SWE-bench's Django command
TESTS = '''from django.test import SimpleTestCase

from uag_app import add


class AddTests(SimpleTestCase):
    def test_adds(self):
        self.assertEqual(add(2, 2), 4)

    def test_other(self):
        """Other things work."""
        self.assertTrue(True)

    def test_in_parts(self):
        for value in (0, 1):
            with self.subTest(value=value):
                self.assertEqual(add(value, 0), value)
'''
BUGGY = "def add(a, b):\n    return a - b if a > 1 else a + b\n"
# unittest's result class patched at import: a failure is reported as a success (the log says ok, exit 0)
RESULT_CLASS_PATCHED = """import unittest


def _uag_forged(self, test, err):
    self.addSuccess(test)


unittest.TextTestResult.addFailure = _uag_forged
"""
# Django's runner made to use a result class that turns failures into successes (no unittest object replaced)
RUNNER_RESULT_CLASS = """import unittest

import django.test.runner


class _UagForgingResult(unittest.TextTestResult):
    def addFailure(self, test, err):
        self.addSuccess(test)


django.test.runner.DiscoverRunner.get_resultclass = lambda self: _UagForgingResult
"""
# the guard's wrapper taken off: each test reported passed without running
RUN_REPLACED = """import unittest


def _uag_run(self, result=None):
    result.startTest(self)
    result.addSuccess(self)
    result.stopTest(self)


unittest.TestCase.run = _uag_run
"""
EXITS_EARLY = "import os\n\n\ndef add(a, b):\n    os._exit(0)\n"


@pytest.fixture(scope="module")
def django() -> tuple[Path, Path]:
    """(Django's source, a venv with its dependencies), made once per machine."""
    source = sdist_directory(DJANGO)
    venv = CACHE / "django-4.1.7-venv"
    with blocking_machine_lock(f"django venv {venv}"):
        if not (venv / ".complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "asgiref>=3.5.2,<4", "sqlparse>=0.2.2"], check=True, timeout=600)
            (venv / ".complete").touch()
    return source, venv


def run(tmp_path: Path, django: tuple[Path, Path], package: str, tests: str = TESTS) -> tuple[dict[str, str], str, Guard, str]:
    """The app's `tests` with `package` in the app's package, as the grader runs them: (the log's statuses,
    the guard's record, the guard, the log)."""
    source, venv = django
    repo = tmp_path / "repo"
    (repo / "tests" / "uag_app").mkdir(parents=True, exist_ok=True)
    for name in ("runtests.py", "test_sqlite.py", "urls.py"):
        shutil.copy(source / "tests" / name, repo / "tests" / name)
    (repo / "tests" / "uag_app" / "__init__.py").write_text(BUGGY + package)
    (repo / "tests" / "uag_app" / "tests.py").write_text(tests)
    guard = Guard("django")
    guard_dir = tmp_path / "guard"
    guard_dir.mkdir(exist_ok=True)
    record = tmp_path / "record"
    (guard_dir / guard.file_name).write_text(guard.source().replace(guard.record, str(record)))
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "DJANGO"))}
    environ["PYTHONPATH"] = f"{guard_dir}:{source}"
    done = subprocess.run([str(venv / "bin" / "python"), *COMMAND], cwd=repo, env=environ, capture_output=True, text=True, timeout=300)
    assert not guard_dir.exists() or not any(guard_dir.iterdir()), "the guard takes its source (the key) off the disk"
    log = done.stdout + done.stderr
    return parse_log_django(log, None), record.read_text() if record.exists() else "", guard, log


def problems(statuses: dict[str, str], record: str, guard: Guard) -> list[str]:
    return guard.problems(record, statuses, partial(parse_log_django, test_spec=None))


ADDS, OTHER, IN_PARTS = ("test_adds (uag_app.tests.AddTests.test_adds)", "Other things work.",
                         "test_in_parts (uag_app.tests.AddTests.test_in_parts)")  # fmt: skip


def test_an_honest_run_has_no_problem(tmp_path, django):
    statuses, record, guard, log = run(tmp_path, django, "")
    assert (statuses.get(ADDS), statuses.get(OTHER)) == ("FAILED", "PASSED"), log
    assert problems(statuses, record, guard) == []
    assert '"start"' in record and '"end"' in record


@pytest.mark.parametrize(
    "package, expected",
    [
        (RESULT_CLASS_PATCHED, ["machinery was replaced during the run: unittest.runner.TextTestResult.addFailure",
                                "the log passes 1 test(s) the grading guard did not see pass: test_adds"]),
        (RUNNER_RESULT_CLASS, ["the log passes 1 test(s) the grading guard did not see pass: test_adds"]),
        (RUN_REPLACED, ["machinery was replaced during the run: unittest.case.TestCase.run",
                        "the log passes 3 test(s) the grading guard did not see pass"]),
        (EXITS_EARLY, ["never reached the grading guard's end"]),
    ],
    ids=["result-class-patched", "runner-result-class", "run-replaced", "exits-early"],
)  # fmt: skip
def test_a_verdict_rewritten_in_process_is_seen(tmp_path, django, package, expected):
    statuses, record, guard, log = run(tmp_path, django, package)
    if package != EXITS_EARLY:
        assert statuses.get(ADDS) == "PASSED", f"the attack is real: the log passes the failing test\n{log[-2000:]}"
    found = problems(statuses, record, guard)
    for problem in expected:
        assert any(problem in line for line in found), found


def test_the_interpreters_own_sitecustomize_still_runs(tmp_path, django):
    """A sandbox's Python may have its own sitecustomize (Debian's, a venv's): the guard imports it too."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.environ['UAG_OWN_SITECUSTOMIZE'] = 'ran'\n")
    statuses, record, guard, log = run(tmp_path, django, "import os\nassert os.environ.get('UAG_OWN_SITECUSTOMIZE') == 'ran'\n")
    assert statuses == {}, "without it on the path the app's package fails to import"
    source, _ = django
    guard_dir = tmp_path / "guard"
    guard_dir.mkdir(exist_ok=True)
    (guard_dir / guard.file_name).write_text(guard.source().replace(guard.record, str(tmp_path / "record2")))
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "DJANGO"))}
    environ["PYTHONPATH"] = f"{guard_dir}:{source}:{own}"
    done = subprocess.run([str(django[1] / "bin" / "python"), *COMMAND], cwd=tmp_path / "repo", env=environ, capture_output=True, text=True, timeout=300)
    assert parse_log_django(done.stdout + done.stderr, None).get(OTHER) == "PASSED", done.stderr[-2000:]


OLDEST = Path.home() / ".pyenv" / "versions" / "3.6.15" / "bin" / "python"


def test_the_guard_is_python_3_5_syntax_and_runs_plain_unittest_on_3_6(tmp_path):
    """SWE-bench's Django images run Python 3.5 (Django <= 2.2) to 3.11: the guard's source parses as 3.5, and
    under `python3.6 -m unittest -v` (the same verbose lines Django's runner prints) it vouches for the passes."""
    import ast

    guard = Guard("django")
    ast.parse(guard.source(), feature_version=(3, 5))
    require(OLDEST.exists(), f"a Python 3.6 at {OLDEST} (pyenv)")
    (tmp_path / "test_plain.py").write_text(
        "import unittest\n\n\nclass Plain(unittest.TestCase):\n    def test_ok(self):\n        pass\n\n"
        "    def test_bad(self):\n        self.fail('no')\n\n    @unittest.skip('later')\n    def test_later(self):\n        pass\n"
    )
    guard_dir = tmp_path / "guard"
    guard_dir.mkdir()
    (guard_dir / guard.file_name).write_text(guard.source().replace(guard.record, str(tmp_path / "record")))
    environ = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    done = subprocess.run([str(OLDEST), "-m", "unittest", "-v", "test_plain"], cwd=tmp_path, env={**environ, "PYTHONPATH": str(guard_dir)},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    statuses = parse_log_django(done.stderr, None)
    names = ("test_ok (test_plain.Plain)", "test_bad (test_plain.Plain)", "test_later (test_plain.Plain)")
    assert [statuses.get(name) for name in names] == ["PASSED", "FAILED", "SKIPPED"], done.stderr
    assert problems(statuses, (tmp_path / "record").read_text(), guard) == []
    forged = {**statuses, "test_bad (test_plain.Plain)": "PASSED"}
    assert problems(forged, (tmp_path / "record").read_text(), guard) == [
        "the log passes 1 test(s) the grading guard did not see pass: test_bad (test_plain.Plain)"
    ]


def test_canaries_fail_under_djangos_runner_and_the_guard_agrees(tmp_path, django):
    """The canaries in Django's shape (a unittest.TestCase appended to the test module), run by runtests.py and
    read by swebench's Django parser: both reported failed, no canary problem, no guard problem."""
    from uni_agent_gym.rewards.canaries import Canaries, source

    code, names = source("django", TESTS)
    statuses, record, guard, log = run(tmp_path, django, "", TESTS + code)
    assert statuses.get(OTHER) == "PASSED", log
    canaries = Canaries("django", {name: "tests/uag_app/tests.py" for name in names})
    assert canaries.problems(statuses) == [] and problems(statuses, record, guard) == [], log
    assert sorted(status for test, status in statuses.items() if any(test.startswith(name + " ") for name in names)) == ["ERROR", "FAILED"]
