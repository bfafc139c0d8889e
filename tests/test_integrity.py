"""Log cross-checks (`uni_agent_gym.rewards.integrity`) on real logs of every runner swebench's Python
parsers read: pytest (parse_log_pytest, _options, _v2, matplotlib, seaborn), Django's runtests.py and
sympy's bin/test; and of go test, redis's runtest and Maven's surefire (captured in the language fixtures' images:
`tests/runner_logs/capture_languages.py`), cargo test, jest, vitest, PHPUnit, mocha's TAP, QUnit, googletest,
automake's harness, Ruby's test-unit and doctest (on toy projects: `capture_cargo.sh`, `capture_javascript.sh`,
`capture_phpunit.sh`, `capture_tap.sh`, `capture_googletest.sh`, `capture_automake.sh`, `capture_ruby_unit.sh`,
`capture_doctest.sh`).

pytest logs are real captures made here: each scenario's test files are written to a temporary folder
and run by this venv's pytest with the repository's test command (third-party plugins off). Django and
sympy logs are real captures kept in `tests/runner_logs/` (see its README for how they were made).
Rows marked "hand-made" change a real log's exit code or cut it, as noted; nothing is faked otherwise.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from uni_agent_gym.swebench4 import MAP_REPO_VERSION_TO_SPECS
from uni_agent_gym.datasets.swebench import repo_parsers
from swebench.harness.log_parsers import python as python_parsers
from swebench.harness.log_parsers.python import MAP_REPO_TO_PARSER_PY

from uni_agent_gym.rewards.integrity import check_log
from uni_agent_gym.rewards.runners import runner_for

RUNNER_LOGS = Path(__file__).parent / "runner_logs"

# What each problem says (one fragment per kind; `{runner}` is pytest, runtests.py or bin/test).
EXIT = "{runner} exited 0 although its summary counts"
EXIT_CLEAN = "{runner} exited 1 although its summary counts no failures"
EXIT_OTHER = "{runner} exited {code} although its summary counts"
INTERRUPTED = "{runner} exited {code}: the run was interrupted"
AFTER = "after {runner}'s own summary"
COUNT = "PASSED lines but {runner}'s own summary counts"
UNLISTED = "not listed as passed in pytest's short test summary"
TWICE = "is reported PASSED on log line"
NO_SUMMARY = "{runner} printed no summary line"

CODE_UNDER_TEST = '''
"""Stands for the code under test: prints lines in the runner's format when the interpreter exits."""
import atexit
import os
import re
import sys


def forge_at_exit(text, exit_code=None):
    def forge():
        sys.stdout.write(text)
        sys.stdout.flush()
        if exit_code is not None:
            os._exit(exit_code)

    atexit.register(forge)
'''

PASSING = '''
import pytest


def test_ok():
    print("output of the code under test")


@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert 0
'''

FAILING = '''

def test_fails():
    assert 1 == 2
'''

TEARDOWN_ERROR = '''

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")


def test_teardown_error(broken_teardown):
    pass  # pytest reports it PASSED, then ERROR: a genuine log with two outcomes for one test
'''

FORGED_BEFORE = '''

def test_prints_a_pass():
    print("PASSED test_demo.py::test_skipped_here")  # in the PASSES section, before pytest's short summary


def test_skipped_here():
    pytest.skip("the agent's code made it skip")


def test_fails_and_prints_a_pass():
    print("PASSED test_demo.py::test_fails_and_prints_a_pass")
    assert 1 == 2
'''

FAKE_REPORT = "=== short test summary info ===\\nPASSED test_demo.py::test_fails\\n=== 1 passed in 0.01s ===\\n"
SCENARIOS = {  # name -> test_demo.py
    "pass": PASSING,
    "fail": PASSING + FAILING + TEARDOWN_ERROR,
    "forged-before": PASSING + FORGED_BEFORE,
    "forged-after": "from code_under_test import forge_at_exit\nforge_at_exit('PASSED test_demo.py::test_fails\\n')\n" + PASSING + FAILING,
    "forged-after-exit-0": "from code_under_test import forge_at_exit\nforge_at_exit('PASSED test_demo.py::test_fails\\n', 0)\n" + PASSING + FAILING,
    "fake-report-at-exit": f"from code_under_test import forge_at_exit\nforge_at_exit('{FAKE_REPORT}', 0)\n" + PASSING + FAILING,
    "collection-error-fake-report": (  # the test file cannot be collected; a whole fake report at exit
        f"from code_under_test import forge_at_exit\nforge_at_exit('{FAKE_REPORT}', 0)\nimport no_such_module\n" + PASSING + FAILING
    ),
    "killed": PASSING + "\n\ndef test_fails():\n    import os\n    print('\\nPASSED test_demo.py::test_fails', flush=True)\n    os._exit(0)\n",
    "inner-sessions": (  # pytest's own test suite: inner runs print PASSED/FAILED lines and summaries
        "pytest_plugins = 'pytester'\n\n\ndef test_inner(pytester):\n"
        "    pytester.makepyfile('def test_a():\\n    pass\\n\\ndef test_b():\\n    assert 0\\n')\n"
        "    pytester.runpytest('-rA').assert_outcomes(passed=1, failed=1)\n"
        "    pytester.runpytest('-rA', '-k', 'test_b', '-p', 'no:cacheprovider').assert_outcomes(failed=1)\n"
    ),
}

# The repositories' test commands, by parser (swebench's constants; sphinx's own tox.ini adds --color yes).
COMMANDS = {
    "parse_log_pytest": ("-rA",),  # flask, pytest, xarray, ...
    "parse_log_pytest_options": ("-rA",),  # requests, pydicom, pylint
    "parse_log_pytest_v2": ("-rA", "-vv", "-o", "console_output_style=classic", "--tb=no"),  # astropy
    "parse_log_pytest_v2 --color": ("-rA", "--durations", "25", "--color", "yes"),  # sphinx
    "parse_log_matplotlib": ("-rA",),
    "parse_log_seaborn": ("--no-header", "-rA"),
}
KILLED = ("-rA", "-s")  # -s lets what a test prints reach the log at once


@pytest.fixture(scope="session")
def pytest_log(tmp_path_factory):
    """(log, exit code) of a scenario run with a test command; every run is made on first use, in parallel."""
    runs = {(scenario, args): None for scenario in SCENARIOS for args in set(COMMANDS.values()) if scenario not in ("killed", "inner-sessions")}
    runs.update({("inner-sessions", COMMANDS["parse_log_pytest"]): None, ("killed", KILLED): None})

    def run(key: tuple[str, tuple[str, ...]], folder: Path) -> tuple[str, int]:
        scenario, args = key
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "code_under_test.py").write_text(CODE_UNDER_TEST)
        (folder / "test_demo.py").write_text(SCENARIOS[scenario])
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", COLUMNS="80")
        argv = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "test_demo.py"]
        done = subprocess.run(argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        return done.stdout, done.returncode

    def log(scenario: str, command: str) -> tuple[str, int]:
        if runs[("killed", KILLED)] is None:
            folders = [tmp_path_factory.mktemp(scenario) for scenario, _ in runs]  # mktemp is not thread-safe
            with ThreadPoolExecutor(max_workers=4) as pool:
                runs.update(zip(runs, pool.map(run, runs, folders)))
        return runs[(scenario, COMMANDS.get(command, KILLED))]

    return log


def check(parser: str, log: str, exit_code: int | None, tests: list[str] | None = None) -> list[str]:
    statuses = runner_for(parser)[1](log, None)
    return check_log(parser, "", log, statuses, exit_code, tests)


def assert_problems(problems: list[str], expected: list[str], **names) -> None:
    """Exactly one problem per expected fragment, in any order."""
    fragments = [fragment.format(**names) for fragment in expected]
    assert len(problems) == len(fragments) and all(any(f in p for p in problems) for f in fragments), (problems, fragments)


F = "test_demo.py::test_fails"
PYTEST_ROWS = [  # scenario, graded tests, exit code the log must have, expected problems
    ("pass", None, 0, []),
    ("fail", None, 1, []),
    # Printed during the tests: -rA shows it (not with --tb=no, astropy's command) before pytest's short summary.
    ("forged-before", ["test_demo.py::test_skipped_here", "test_demo.py::test_ok"], 1, [UNLISTED]),
    ("forged-before", ["test_demo.py::test_fails_and_prints_a_pass"], 1, []),  # pytest's own later FAILED wins; nothing gained
    ("forged-after", [F], 1, [AFTER, COUNT, UNLISTED, TWICE]),
    ("forged-after-exit-0", [F], 0, [EXIT, AFTER, COUNT, UNLISTED, TWICE]),
    ("fake-report-at-exit", [F], 0, [TWICE]),
]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    "scenario, tests, exit_code, expected", PYTEST_ROWS, ids=[f"{row[0]}-{i}" for i, row in enumerate(PYTEST_ROWS)]
)
def test_pytest_logs(pytest_log, command, scenario, tests, exit_code, expected):
    log, code = pytest_log(scenario, command)
    assert code == exit_code, log  # the scenario ran as intended
    if scenario == "forged-before" and "--tb=no" in COMMANDS[command]:
        assert "PASSED test_demo.py::test_skipped_here" not in log  # captured output is not shown: nothing forged
        expected = []
    if scenario == "fail" and command == "parse_log_pytest_v2":
        # swebench 5.x's v2 parser keeps an ERROR summary line's message in the name (`...test_teardown_error -
        # RuntimeError: teardown`), so the test's PASSED summary line stands; its -vv line says ERROR (4.1's map said
        # ERROR): a test that errors in teardown is still not graded passed
        expected = ["test_demo.py::test_teardown_error is reported PASSED on log line 13 and ERROR on log line 14"]
    parser = command.split()[0]
    assert_problems(check(parser, log, code, tests), expected, runner="pytest")


def test_the_forgeries_fool_the_parsers_on_their_own(pytest_log):
    """Without the cross-checks, every forged log grades the failing test as passed."""
    for scenario in ("forged-after", "forged-after-exit-0", "fake-report-at-exit", "collection-error-fake-report"):
        for command in COMMANDS:
            log, _ = pytest_log(scenario, command)
            assert runner_for(command.split()[0])[1](log, None).get(F) == "PASSED", (scenario, command)
    log, _ = pytest_log("forged-before", "parse_log_pytest")
    assert runner_for("parse_log_pytest")[1](log, None).get("test_demo.py::test_skipped_here") == "PASSED"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_collection_error_covers_the_tests_of_its_module(pytest_log, command):
    """The agent's code breaks the test file's import; a fake report at exit names the test PASSED.
    pytest's real `ERROR test_demo.py` is a report about every test in it."""
    log, code = pytest_log("collection-error-fake-report", command)
    assert code == 0 and "error during collection" in log
    assert_problems(check(command.split()[0], log, code, [F]), [TWICE], runner="pytest")


def test_a_run_killed_before_the_report_has_no_summary(pytest_log):
    """`-s` lets the printed pass reach the log; the process ends before pytest reports."""
    log, code = pytest_log("killed", "-s")
    assert code == 0 and "PASSED test_demo.py::test_fails" in log
    assert_problems(check("parse_log_pytest", log, code, [F]), [NO_SUMMARY], runner="pytest")


def test_inner_sessions_of_pytests_own_suite_are_not_forgeries(pytest_log):
    """pytest's own tests run inner sessions whose output (PASSED and FAILED lines, summaries) -rA
    prints before the outer short summary; only the outer run's report counts."""
    log, code = pytest_log("inner-sessions", "parse_log_pytest")
    statuses = repo_parsers()["pytest-dev/pytest"](log, None)
    assert code == 0 and log.count("short test summary info") == 3, log
    assert statuses["test_inner.py::test_a"] == "PASSED" and statuses["test_inner.py::test_b"] == "FAILED"
    assert check_log("parse_log_pytest", "pytest -rA", log, statuses, code, ["test_demo.py::test_inner"]) == []


@pytest.mark.parametrize(
    "scenario, exit_code, expected",
    [("fail", 0, [EXIT]), ("pass", 1, [EXIT_CLEAN]), ("pass", 2, [INTERRUPTED]), ("pass", None, [INTERRUPTED])],
    ids=["failures-exit-0", "clean-exit-1", "exit-2", "exit-unknown"],
)
def test_pytest_exit_code_must_agree_with_the_summary(pytest_log, scenario, exit_code, expected):
    """Hand-made: real logs given the wrong exit code."""
    log, _ = pytest_log(scenario, "parse_log_pytest")
    assert_problems(check("parse_log_pytest", log, exit_code), expected, runner="pytest", code=exit_code)


def runner_log(name: str) -> str:
    return (RUNNER_LOGS / f"{name}.log").read_text()


def cut_after(log: str, marker: str) -> str:
    """The log up to and including the line holding the last `marker`."""
    end = log.rindex(marker)
    return log[: log.index("\n", end) + 1]


def cut_before(log: str, marker: str) -> str:
    return log[: log.rindex(marker)]


RUNNER_LOG_ROWS = [  # log, how it is changed (hand-made) or None, exit code, expected problems
    *[(f"django-{v}-pass", None, 0, []) for v in ("3.0", "4.2")],
    ("django-3.0-basic", None, 0, []),
    *[(f"django-{v}-fail", None, 1, []) for v in ("3.0", "4.2")],
    *[(f"django-{v}-forged", None, 0, [EXIT, AFTER, COUNT, TWICE, TWICE]) for v in ("3.0", "4.2")],
    *[(f"django-{v}-forged", "cut after the runner's report", 1, [COUNT, TWICE]) for v in ("3.0", "4.2")],
    *[(f"django-{v}-exits", None, 0, [NO_SUMMARY]) for v in ("3.0", "4.2")],
    ("django-3.0-fail", "exit code", 0, [EXIT]),
    ("django-4.2-pass", "exit code", 1, [EXIT_CLEAN]),
    ("django-4.2-pass", "exit code", -9, [INTERRUPTED]),
    ("django-3.0-basic", "cut before 'Ran '", 0, [NO_SUMMARY]),
    *[(f"sympy-{v}-pass", None, 0, []) for v in ("1.1", "1.12")],
    *[(f"sympy-{v}-fail", None, 1, []) for v in ("1.1", "1.12")],
    *[(f"sympy-{v}-forged", None, 0, [EXIT, AFTER, COUNT, TWICE, TWICE]) for v in ("1.1", "1.12")],
    # The parser misses a file's last test (its line ends in [OK]/[FAIL]), so the forged pass fits the count.
    *[(f"sympy-{v}-forged", "cut after the runner's report", 1, [TWICE]) for v in ("1.1", "1.12")],
    *[(f"sympy-{v}-exits", None, 0, [NO_SUMMARY]) for v in ("1.1", "1.12")],
    ("sympy-1.12-fail", "exit code", 0, [EXIT]),  # its summary wraps onto a second line
    ("sympy-1.1-pass", "exit code", 1, [EXIT_CLEAN]),
    ("sympy-1.12-pass", "cut before 'tests finished'", 0, [NO_SUMMARY]),
    # Other languages' runners (`capture_languages.py`: each fixture's own command in its image): go test on gin-3227,
    # redis's runtest on redis-12272.
    ("gotest-pass", None, 0, []),
    ("gotest-fail", None, 1, []),
    ("gotest-forged", None, 0, [TWICE]),  # a TestMain prints a pass after the run and exits 0: go test says ok
    ("gotest-runs-nothing", None, 0, []),  # a TestMain runs nothing: the log agrees with itself (restored, and the canaries see it)
    ("gotest-fail", "exit code", 0, [EXIT]),
    ("gotest-pass", "exit code", 1, [EXIT_CLEAN]),
    ("gotest-pass", "exit code", -9, [INTERRUPTED]),
    ("gotest-pass", "cut before 'ok '", 0, [NO_SUMMARY]),
    ("redis-pass", None, 0, []),
    ("redis-fail", None, 1, []),
    ("redis-fail", "exit code", 0, [EXIT]),
    ("redis-pass", "exit code", 1, [EXIT_CLEAN]),
    ("redis-pass", "cut before 'The End'", 0, [NO_SUMMARY]),
    # cargo test on a toy crate (`capture_cargo.sh`): unit tests, an integration test and a doc-test, a binary each
    ("cargo-pass", None, 0, []),
    ("cargo-fail", None, 101, []),  # cargo stops at the first failing binary
    ("cargo-no-fail-fast", None, 101, []),
    ("cargo-forged", None, 0, [EXIT, TWICE]),  # an exit hook of the code under test prints a pass and exits 0, in each binary
    ("cargo-fail", "exit code", 0, [EXIT]),
    ("cargo-pass", "exit code", 101, [INTERRUPTED]),  # 101 with nothing failed: a test binary crashed, or the build failed
    ("cargo-pass", "cut before 'test result: ok. 2 passed'", 0, [NO_SUMMARY]),
    # jest and vitest on a toy package (`capture_javascript.sh`): two test files each
    *[(f"{runner}-pass", None, 0, []) for runner in ("jest", "vitest")],
    *[(f"{runner}-fail", None, 1, []) for runner in ("jest", "vitest")],
    # the code under test prints a pass for the failed test whenever it is called: the other file's call comes after the
    # runner's verdict, which the parser lets win
    *[(f"{runner}-prints", None, 1, [COUNT, TWICE]) for runner in ("jest", "vitest")],
    *[(f"{runner}-fail", "a pass appended", 0, [EXIT, AFTER, COUNT, TWICE]) for runner in ("jest", "vitest")],
    *[(f"{runner}-pass", "exit code", 1, [EXIT_CLEAN]) for runner in ("jest", "vitest")],
    *[(f"{runner}-broken", None, 1, []) for runner in ("jest", "vitest")],  # no test ran: the failed files alone mean exit 1
    ("jest-broken", "exit code", 0, [EXIT]),
    ("jest-pass", "cut before 'Test Suites:'", 0, [NO_SUMMARY]),
    ("vitest-pass", "cut before 'Test Files'", 0, [NO_SUMMARY]),
    # PHPUnit with --testdox on a toy class (`capture_phpunit.sh`), as SWE-bench Multilingual's PHP specs run it
    ("phpunit-pass", None, 0, []),  # a skipped test: `OK, but incomplete, skipped, or risky tests!`
    ("phpunit-fail", None, 1, []),  # the failed test is listed twice (the run, then the summary of non-successful tests)
    ("phpunit-error", None, 2, []),  # the code under test throws: errors, exit 2
    ("phpunit-forged", None, 0, [EXIT, TWICE]),  # a shutdown function of the code under test prints a pass and `OK (...)`, exits 0: a second run to the summing
    ("phpunit-fail", "exit code", 0, [EXIT]),
    ("phpunit-error", "exit code", 1, [EXIT_OTHER]),  # errors exit 2: a 1 is another run's
    ("phpunit-pass", "exit code", 2, [INTERRUPTED]),  # 2 with nothing failed: PHPUnit could not run (a bad configuration)
    ("phpunit-fail", "a pass appended", 0, [EXIT, AFTER, COUNT, TWICE]),
    ("phpunit-pass", "cut before 'OK, but'", 0, [NO_SUMMARY]),
    # TAP (`capture_tap.sh`): mocha's TAP reporter (axios's rows) and QUnit's CLI (three.js's), read by parse_log_tap,
    # which takes a skipped test's `ok ... # SKIP` line for a pass: the plan bounds the passes, not `# pass`
    *[(f"{runner}-pass", None, 0, []) for runner in ("mocha-tap", "qunit")],
    *[(f"{runner}-fail", None, 1, []) for runner in ("mocha-tap", "qunit")],
    # an exit hook of the code under test prints a pass for the failed test after the runner's summary and exits 0
    *[(f"{runner}-forged", None, 0, [EXIT, AFTER, COUNT, TWICE]) for runner in ("mocha-tap", "qunit")],
    *[(f"{runner}-forged", "cut after the runner's report", 1, []) for runner in ("mocha-tap", "qunit")],
    ("mocha-tap-fail", "exit code", 0, [EXIT]),
    ("qunit-pass", "exit code", 1, [EXIT_CLEAN]),
    ("qunit-pass", "exit code", 3, [INTERRUPTED]),
    ("mocha-tap-pass", "cut before '1..3'", 0, [NO_SUMMARY]),  # `# fail 0` without its plan: no count of the run's tests
    ("qunit-pass", "cut before '# fail'", 0, [NO_SUMMARY]),
    # googletest under `ctest -V` (`capture_googletest.sh`), as fmt's rows run it, read by parse_log_googletest
    ("googletest-pass", None, 0, []),
    ("googletest-fail", None, 8, []),  # the failed test is named again in the binary's failed list
    # an exit hook of the code under test prints a pass for the failed test and googletest's closing lines, exits 0
    ("googletest-forged", None, 0, [EXIT, TWICE]),
    ("googletest-fail", "exit code", 0, [EXIT]),
    ("googletest-pass", "exit code", 1, [EXIT_CLEAN]),
    ("googletest-pass", "exit code", 8, [INTERRUPTED]),  # ctest's 8 with no test failed: a binary crashed
    ("googletest-fail", "a pass appended", 0, [EXIT, AFTER, COUNT, TWICE]),
    ("googletest-pass", "cut before '[  PASSED  ]'", 0, [NO_SUMMARY]),
    # automake's test harness (`capture_automake.sh`), `make check` as jq's rows run it, read by parse_log_jq
    ("automake-pass", None, 0, []),
    ("automake-fail", None, 2, []),
    # a test script writes a pass and a summary to the console (its driver's output) before failing: the harness's own
    # FAIL line comes after it and wins, so nothing passed that did not
    ("automake-forged", None, 2, []),
    ("automake-fail", "exit code", 0, [EXIT]),
    ("automake-pass", "exit code", 2, [INTERRUPTED]),
    ("automake-fail", "a pass appended", 0, [EXIT, AFTER, COUNT, TWICE]),
    ("automake-pass", "cut before '# TOTAL'", 0, [NO_SUMMARY]),
    # Ruby's test-unit (`capture_ruby_unit.sh`), `ruby <file> -v` as fluentd's and faker's rows run it, read by
    # parse_log_ruby_unit, which names tests bare (the test case's header scopes them)
    ("ruby-unit-pass", None, 0, []),
    ("ruby-unit-fail", None, 1, []),
    ("ruby-unit-forged", None, 0, [EXIT, AFTER, COUNT, TWICE]),  # an exit hook prints a pass for the failed test, exits 0
    ("ruby-unit-fail", "exit code", 0, [EXIT]),
    ("ruby-unit-pass", "exit code", 1, [EXIT_CLEAN]),
    ("ruby-unit-pass", "cut before '3 tests'", 0, [NO_SUMMARY]),
    # doctest's XML reporter (`capture_doctest.sh`), `<binary> -s -r=xml` as nlohmann/json's row runs it, read by
    # parse_log_doctest, which reads the log's first document
    ("doctest-pass", None, 0, []),
    ("doctest-fail", None, 1, []),
    ("doctest-forged", None, 1, [TWICE]),  # the header's static initializer prints a document of its own first
    ("doctest-fail", "exit code", 0, [EXIT]),
    ("doctest-pass", "exit code", 1, [EXIT_CLEAN]),
    ("doctest-pass", "exit code", 139, [INTERRUPTED]),  # a crash after the document
    ("doctest-fail", "a pass appended", 1, [AFTER]),  # a document after the binary's: the parser reads the first
    ("doctest-pass", "the count line removed", 0, [NO_SUMMARY]),
]
APPENDED = {"jest": "    ✓ adds two numbers (1 ms)\n", "vitest": " ✓ vt/arith.spec.js > add > adds two numbers\n",
            "phpunit": " ✔ Adds two numbers\n", "googletest": "1: [       OK ] Arith.AddsTwoNumbers (0 ms)\n",
            "automake": "PASS: tests/adds.test\n",
            "doctest": '<doctest><TestSuite><TestCase name="add"><SubCase name="two numbers"/></TestCase></TestSuite></doctest>\n'}  # a pass for the failed test
RUNNER_OF_LOG = {"django": ("runtests.py", "parse_log_django"), "sympy": ("bin/test", "parse_log_sympy"), "gotest": ("go test", "parse_log_gotest"),
                 "redis": ("runtest", "parse_log_redis"), "cargo": ("cargo test", "parse_log_cargo"), "jest": ("jest", "parse_log_jest"),
                 "vitest": ("vitest", "parse_log_vitest"), "phpunit": ("PHPUnit", "parse_log_phpunit"),
                 "mocha": ("the TAP runner", "parse_log_tap"), "qunit": ("the TAP runner", "parse_log_tap"),
                 "googletest": ("googletest", "parse_log_googletest"), "automake": ("make check", "parse_log_jq"),
                 "ruby": ("test-unit", "parse_log_ruby_unit"), "doctest": ("doctest", "parse_log_doctest")}  # fmt: skip


@pytest.mark.parametrize(
    "name, change, exit_code, expected", RUNNER_LOG_ROWS, ids=[f"{row[0]}-{row[1] or 'real'}-{i}" for i, row in enumerate(RUNNER_LOG_ROWS)]
)
def test_real_runner_logs(name, change, exit_code, expected):
    log = runner_log(name)
    runner, parser = RUNNER_OF_LOG[name.split("-")[0]]
    if change == "cut after the runner's report":
        log = cut_after(log, {"django": "FAILED (failures=", "mocha": "1..3", "qunit": "# fail"}.get(name.split("-")[0], "DO *NOT* COMMIT!"))
    elif change and change.startswith("cut before"):
        log = cut_before(log, change.split("'")[1])
    elif change == "a pass appended":
        log += APPENDED[name.split("-")[0]]
    elif change == "the count line removed":
        log = re.sub(r".*<OverallResultsTestCases .*\n", "", log)
    assert_problems(check(parser, log, exit_code), expected, runner=runner, code=exit_code)


def test_the_forged_django_and_sympy_logs_fool_the_parsers_on_their_own():
    for name, test in [
        ("django-3.0-forged", "test_wrong (uag_demo.tests.Arithmetic)"),
        ("django-3.0-forged", "test_forged_during (uag_demo.tests.Arithmetic)"),
        ("django-4.2-forged", "test_wrong (uag_demo.tests.Arithmetic.test_wrong)"),
        ("django-4.2-forged", "test_forged_during (uag_demo.tests.Arithmetic.test_forged_during)"),
        ("sympy-1.1-forged", "test_wrong"),
        ("sympy-1.12-forged", "test_forged_during"),
        ("sympy-1.12-exits", "test_wrong"),
    ]:
        parser = repo_parsers()["django/django" if name.startswith("django") else "sympy/sympy"]
        assert parser(runner_log(name), None)[test] == "PASSED", (name, test)


def test_a_forged_pass_of_a_graded_test_is_named():
    log = runner_log("sympy-1.12-forged")
    problems = check("parse_log_sympy", log, 0, ["test_forged_during"])
    twice = [problem for problem in problems if TWICE in problem]
    assert twice == [twice[0]] and twice[0].startswith("test_forged_during is reported PASSED on log line 14 and FAILED on log line 27")


def test_a_test_name_in_two_sympy_files_is_not_a_contradiction():
    """sympy's parser keys tests by bare name: test_expand passes in one file and fails in another
    (sympy-*-fail.log). That is two tests, not one reported twice."""
    log = runner_log("sympy-1.12-fail")
    assert "test_expand ok" in log and "test_expand F" in log
    statuses = {"test_expand": "PASSED"}  # as if the passing file came last
    assert check_log("parse_log_sympy", "", log, statuses, 1) == []


def test_a_file_that_failed_to_import_covers_its_tests():
    """Hand-made from sympy-1.12-fail.log: a forged pass printed right after the runner's
    `Failed to import` line is about a test of that file."""
    log = runner_log("sympy-1.12-fail").replace("Failed to import            [FAIL]\n", "Failed to import            [FAIL]\ntest_never_runs ok\n")
    problems = check("parse_log_sympy", log, 1, ["test_never_runs"])
    assert_problems(problems, [TWICE], runner="bin/test")
    assert "and ERROR on log line 10" in next(p for p in problems if TWICE in p)


@pytest.mark.parametrize("exit_code", [0, 1])
def test_django_unexpected_successes_alone_allow_either_exit_code(exit_code):
    """Hand-written in unittest's format: Django 3.0 exits 0 on unexpected successes alone, 4.2 exits 1."""
    log = "test_a (app.tests.T) ... unexpected success\n\n" + "-" * 70 + "\nRan 1 test in 0.001s\n\nFAILED (unexpected successes=1)\n"
    assert check("parse_log_django", log, exit_code) == []


def test_django_subtests_and_class_errors_do_not_shrink_the_passes():
    """Two failing subtests are one failed test, and setUpClass's error is no counted test: in
    django-*-fail.log 7 tests ran with 6 failures and errors, yet one test passed."""
    for version in ("3.0", "4.2"):
        log = runner_log(f"django-{version}-fail")
        statuses = repo_parsers()["django/django"](log, None)
        assert sum(status == "PASSED" for status in statuses.values()) == 1 and "Ran 7 tests" in log
        assert check_log("parse_log_django", "", log, statuses, 1) == []


@pytest.mark.parametrize("repo", sorted(MAP_REPO_TO_PARSER_PY))
def test_every_python_repo_gets_its_runners_checks(repo):
    expected = {"django/django": "django", "sympy/sympy": "sympy"}.get(repo, "pytest")
    parser = MAP_REPO_TO_PARSER_PY[repo]
    assert runner_for(parser)[0].name == expected
    assert runner_for(parser.__name__)[0].name == expected


@pytest.mark.parametrize("name", sorted(name for name in vars(python_parsers) if name.startswith("parse_log_")))
def test_every_python_parser_name_is_known(name):
    """Rows name their parser (SWE-gym, SWE-rebench: `parse_log_flask`, `parse_log_astropy`, ...)."""
    assert runner_for(name)[1] is getattr(python_parsers, name)


@pytest.mark.parametrize(
    "repo, expected",
    [("django/django", "django"), ("sympy/sympy", "sympy"), ("pallets/flask", "pytest"), ("astropy/astropy", "pytest"), ("sphinx-doc/sphinx", None)],
)
def test_without_a_parser_the_test_command_decides(repo, expected):
    """SWE-bench's own test commands; sphinx's runs pytest through tox, so only its parser tells."""
    command = next(iter(MAP_REPO_VERSION_TO_SPECS[repo].values()))["test_cmd"]
    found = runner_for(None, command)
    assert (found[0].name if found else None) == expected


@pytest.mark.parametrize("runner", ["pytest", "django", "sympy"])
def test_a_runner_name_selects_its_parser(runner):
    assert runner_for(runner)[1].__name__ == f"parse_log_{runner}"


def test_an_unknown_parser_name_is_an_error():
    with pytest.raises(ValueError, match="Unknown log parser 'parse_log_pytset': expects a runner"):
        check_log("parse_log_pytset", "pytest -rA", "PASSED t::a\n", {"t::a": "PASSED"}, 0)


def test_a_log_of_an_unknown_runner_gets_no_checks():
    """A swebench parser of a runner whose report is not read (karma's: preact's), with its own command: nothing to
    check against."""
    log = "Starting browser ChromeHeadless\n  Components\n    ✔ renders\n"
    statuses = repo_parsers()["preactjs/preact"](log, None)
    assert statuses == {"Components > renders": "PASSED"}
    assert check_log("parse_log_karma", "npx karma start karma.conf.js --single-run", log, statuses, 1) == []


def test_the_forged_go_logs_fool_the_parser_on_its_own():
    for name in ("gotest-forged", "gotest-runs-nothing"):
        assert runner_for("parse_log_gotest")[1](runner_log(name), None) == {"TestRedirectTrailingSlash": "PASSED"}, name


@pytest.fixture(scope="module")
def maven_reader():
    """jackson-core-922's own parser (Multi-SWE-bench's `parse_log`), as the reward rereads logs with it."""
    from tests.language_fixtures import derived_rows
    from uni_agent_gym.datasets import log_parser
    from uni_agent_gym.instances import normalise

    parse = log_parser(normalise(derived_rows()["fasterxml__jackson-core-922"]))
    return lambda log, test_spec: parse(log)


@pytest.mark.parametrize(
    "name, change, exit_code, expected",
    [("maven-pass", None, 0, []), ("maven-fail", None, 1, []), ("maven-fail", "exit code", 0, [EXIT]), ("maven-pass", "exit code", 1, [EXIT_CLEAN]),
     ("maven-pass", "cut before the total", 0, [NO_SUMMARY]), ("maven-fail", "a class's line forged after the build's verdict", 1, [AFTER])],
)  # fmt: skip
def test_maven_logs(maven_reader, name, change, exit_code, expected):
    log = runner_log(name)
    statuses = maven_reader(log, None)
    if change == "cut before the total":
        log = log[: log.index("Results:")]
    elif change and change.startswith("a class's line"):  # hand-made: a failing class's own line, rewritten as a pass, at the end
        failing = next(line for line in log.splitlines() if "Tests run:" in line and "<<< FAILURE!" in line)
        log += re.sub(r"Failures: \d+, Errors: \d+", "Failures: 0, Errors: 0", failing.replace(" <<< FAILURE!", "")) + "\n"
    statuses = maven_reader(log, None)  # (multi-swe-bench's own parse_log raises on a class passed and failed: read line by line, the failure wins)
    assert statuses["com.fasterxml.jackson.core.base64.Base64Padding912Test"] == ("PASSED" if name == "maven-pass" else "FAILED")
    assert_problems(check_log(maven_reader, "mvn clean test", log, statuses, exit_code), expected, runner="Maven", code=exit_code)


# A swebench Maven row's runs, one test a run, each traced as `as_eval_script` runs them (`+ mvn ... -Dtest=X`): the
# first run's test fails, the second's passes
MAVEN_RUNS = """+ mvn -B test -Dtest=toy.AddTest
[INFO] Scanning for projects...
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running toy.AddTest
{printed}[ERROR] Tests run: 1, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.031 s <<< FAILURE! - in toy.AddTest
[ERROR] toy.AddTest.adds  Time elapsed: 0.012 s  <<< FAILURE!
[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   AddTest.adds:7 expected:<5> but was:<-1>
[INFO]
[ERROR] Tests run: 1, Failures: 1, Errors: 0, Skipped: 0
[INFO]
[INFO] BUILD FAILURE
+ mvn -B test -Dtest=toy.ZeroTest
[INFO] Running toy.ZeroTest
[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.02 s - in toy.ZeroTest
[INFO]
[INFO] Results:
[INFO]
[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0
[INFO]
[INFO] BUILD SUCCESS
"""


def test_a_build_success_the_tests_print_before_mavens_own_failure_is_found():
    """swebench 5.x's `parse_log_maven` takes a run's first `BUILD` line (4.1's took its last): code under test that
    prints `[INFO] BUILD SUCCESS` while its failing test runs grades that test PASSED. The Maven cross-check reads every
    `BUILD` line of a run with the run's command: the test is reported both ways, and the grading is not resolved."""
    graded = ["toy.AddTest", "toy.ZeroTest"]
    honest, forged = MAVEN_RUNS.format(printed=""), MAVEN_RUNS.format(printed="[INFO] BUILD SUCCESS\n")
    parse = runner_for("parse_log_maven")[1]
    assert parse(honest, None) == {"toy.AddTest": "FAILED", "toy.ZeroTest": "PASSED"}
    assert parse(forged, None) == {"toy.AddTest": "PASSED", "toy.ZeroTest": "PASSED"}  # fooled on its own
    assert check("parse_log_maven", honest, 1, graded) == []
    assert_problems(check("parse_log_maven", forged, 1, graded), ["toy.AddTest is reported PASSED on log line 7 and FAILED on log line 18",
                                                                   "the log has 2 PASSED lines but Maven's own summary counts 1 passed"])


def test_phpunit_tests_are_named_by_the_suite_header_before_them():
    """PHPUnit 10 and 11 head each class's testdox lines with `Name (Namespace\\Class)`, and swebench's parser names
    a test `<suite> > <test>` by the last such header (Debian's PHPUnit 9.6, whose logs are above, prints the bare
    name, which the parser does not take for one). Hand-made in 10's format: one name in two suites is two tests; a
    pass printed under the suite that failed it is that test's."""
    log = ("PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.2.0\n\n"
           "Arith (Tests\\Arith)\n ✔ Adds two numbers\n\nLegacy Arith (Tests\\LegacyArith)\n ✘ Adds two numbers\n   │\n"
           "   │ Failed asserting that -1 is identical to 5.\n   │\n\nTime: 00:00.010, Memory: 6.00 MB\n\n"
           "FAILURES!\nTests: 2, Assertions: 2, Failures: 1.\n")  # fmt: skip
    statuses = repo_parsers()["laravel/framework"](log, None)
    assert statuses == {"Arith > Adds two numbers": "PASSED", "Legacy Arith > Adds two numbers": "FAILED"}
    assert check_log("parse_log_phpunit", "vendor/bin/phpunit --testdox", log, statuses, 1) == []

    forged = log.replace("Failures: 1.\n", "Failures: 1.\nLegacy Arith (Tests\\LegacyArith)\n ✔ Adds two numbers\n")
    statuses = repo_parsers()["laravel/framework"](forged, None)
    assert statuses["Legacy Arith > Adds two numbers"] == "PASSED"
    problems = check_log("parse_log_phpunit", "vendor/bin/phpunit --testdox", forged, statuses, 1)
    assert [problem for problem in problems if TWICE in problem] == [
        "Legacy Arith > Adds two numbers is reported PASSED on log line 19 and FAILED on log line 9"], problems


def test_a_test_unit_name_in_two_test_cases_is_not_a_contradiction():
    """test-unit's parser names tests bare: `test_adds` passes in one test case and fails in another (hand-made from
    ruby-unit-fail.log's lines). That is two tests, not one reported twice; a pass under the case that failed it is."""
    log = ("Loaded suite test/test_arith\nStarted\nArithTest: \n  test_adds:\t\t\t\t\t.: (0.000068)\n"
           "LegacyArithTest: \n  test_adds:\t\t\t\t\tF\n====\nFailure: test_adds(LegacyArithTest)\n     3: \n====\n"
           ": (0.003242)\nArithTest: \n  test_zeros:\t\t\t\t\t.: (0.000055)\n\nFinished in 0.003978389 seconds.\n"
           "3 tests, 3 assertions, 1 failures, 0 errors, 0 pendings, 0 omissions, 0 notifications\n66.6667% passed\n")  # fmt: skip
    statuses = {"test_adds": "PASSED", "test_zeros": "PASSED"}  # as if the passing case came last
    assert check_log("parse_log_ruby_unit", "", log, statuses, 1) == []
    forged = log.replace("\n====\n: (0.003242)", "\n====\n  test_adds:\t\t\t\t\t.: (0.000100)\n: (0.003242)")
    problems = check_log("parse_log_ruby_unit", "", forged, statuses, 1)
    assert any(problem.startswith("test_adds is reported PASSED on log line 11 and FAILED on log line 6") for problem in problems), problems
