"""What each test runner says about its own run when it finishes: counts, and where that report sits.

- pytest: the last `== 3 passed, 1 failed in 0.5s ==` line, and the `short test summary info` block
  before it (with `-rA` it lists every test's outcome). Exit 1 when tests failed or errored, else 0.
- Django (`tests/runtests.py`, unittest's runner): the last `Ran N tests in Xs` and the `OK` or
  `FAILED (failures=.., errors=..)` line after it. Exit 1 when tests failed or errored, else 0
  (unexpected successes alone: 0 in Django 3.0, 1 in 4.2).
- sympy (`bin/test`): the last `tests finished: N passed, M failed, ... in X seconds`, which wraps
  onto a second line when long. Exit 1 when tests failed or raised, else 0.
- go test: a line per package, `ok  <package> 0.01s` or `FAIL <package> 0.01s` (`[build failed]`,
  `[setup failed]`), after that package's tests; no count of tests. Exit 1 (2 for some build and setup
  errors) when a package failed, else 0.
- redis's `runtest`: after `The End`, either `All tests passed without errors!` or `The following tests
  failed:` and a `*** [err]: <test> in <file>` line each; no count of passes. Exit 1 when tests failed, else 0.
- Maven's surefire: the `Tests run: N, Failures: F, Errors: E, Skipped: S` total (without a class name) in its
  `Results:` block, then `BUILD SUCCESS` or `BUILD FAILURE`; a log of several runs (one `mvn test -Dtest=X`
  per test: swebench's Maven specs) has one each, summed. Exit 1 when tests failed or errored (the build
  fails), else 0 (several runs: the last failing run's code, `as_eval_script`).
- cargo test: a `test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s` line
  (`FAILED.` when tests failed) after each test binary's run (unit tests, each `tests/*.rs`, doc-tests), summed.
  Exit 101 when a test failed (cargo stops at the first failing binary unless `--no-fail-fast`), else 0.
- jest: `Test Suites: 1 failed, 1 passed, 2 total` then `Tests:       1 failed, 1 skipped, 2 passed, 4 total`; vitest:
  ` Test Files  1 failed | 1 passed (2)` then `      Tests  1 failed | 2 passed | 1 skipped (4)`; a log of several
  runs has one each, summed. Exit 1 when a test or a test file failed (one that could not load counts no test), else 0.
- PHPUnit (9 to 11): `OK (3 tests, 3 assertions)`, or a verdict (`FAILURES!`, `ERRORS!`, `WARNINGS!`, `OK, but ...`)
  and `Tests: 3, Assertions: 2, Errors: 1, Failures: 1, Skipped: 1.`; `No tests executed!` when none ran; a log of
  several runs has one each, summed. Exit 2 when a test errored, 1 when one failed, 0 after `OK (...)`; otherwise 0,
  or 1 where the configuration fails the run on warnings, risky, skipped or incomplete tests (`failOnWarning`...).
- TAP (mocha's `-R tap`, QUnit's CLI): a plan `1..N` and `# pass P` ... `# fail F` (mocha: `# tests`, `# pass`,
  `# fail`, then the plan; QUnit: the plan, then `# pass`, `# skip`, `# todo`, `# fail`). A skipped test is an `ok`
  line (`ok 3 name # SKIP -`), which parse_log_tap reads as passed: so no more passes than the plan's N less F. A log
  of several runs has one each, summed. Exit 0 without failures; with F failures 1 (QUnit) or F (mocha, up to 255).
- googletest (a test binary, or several under `ctest -V`, whose lines it prefixes with `1: `): each binary's
  `[==========] N tests from M test suites ran.`, then `[  PASSED  ] P tests.` and, with failures,
  `[  FAILED  ] F tests, listed below:` and a line naming each; summed over the binaries. Exit 0 without failures;
  with them 1 (the binary) or 8 (ctest).
- automake's test harness (`make check`: jq's rows): a `PASS:` / `FAIL:` / `SKIP:` line per test script, then the
  summary, `# TOTAL: N` and a `# PASS:`, `# SKIP:`, `# XFAIL:`, `# FAIL:`, `# XPASS:`, `# ERROR:` count each (FAIL,
  XPASS and ERROR fail the run); recursive makes print one per directory, summed. The scripts' own output goes to
  their `.log` files, not to the console. Exit 2 (make's) when the run failed, else 0.
- Ruby's test-unit (`ruby <test file> -v`: fluentd's and faker's rows): `3 tests, 2 assertions, 1 failures, 0 errors,
  0 pendings, 1 omissions, 0 notifications`, then `N% passed`; several runs summed. Exit 1 with failures or errors,
  else 0.
- doctest's XML reporter (`<binary> -s -r=xml`: nlohmann/json's rows): one `<doctest>` document a run, which closes with
  `<OverallResultsTestCases successes="P" failures="F" skipped="S"/>` and `</doctest>`; it counts test cases, where
  the parser names subcases, so no count of passes. Exit 1 with a failed test case, else 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # `--color yes` (sphinx's test command) colours the summary
_PYTEST_SUMMARY = re.compile(r"^=+ (?P<body>(?:\d+ \w+(?:, )?)+|no tests ran)(?: in [\d.]+s?.*?)? =+\s*$")
_PYTEST_COUNT = re.compile(r"(\d+) (\w+)")
_PYTEST_BLOCK = re.compile(r"^=+ short test summary info =+\s*$")
_DJANGO_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$")
_DJANGO_RESULT = re.compile(r"^(?P<word>OK|FAILED|NO TESTS RAN)(?: \((?P<counts>[^)]*)\))?\s*$")
_DJANGO_COUNT = re.compile(r"([a-z ]+)=(\d+)")
_DJANGO_HEADER = re.compile(r"^(?:FAIL|ERROR): (\S+ \([^()]*\))")  # the test a failure belongs to, subtest cut off
_UNITTEST_FIXTURES = ("setUpClass", "tearDownClass", "setUpModule", "tearDownModule")  # errors outside any counted test
_SYMPY_SUMMARY = re.compile(r"tests finished: (\d+) passed, (.*?)in [\d.]+ seconds", re.DOTALL)
_SYMPY_COUNT = re.compile(r"(\d+) (failed|skipped|expected to fail but passed|expected to fail|exceptions)")


@dataclass(frozen=True)
class RunnerReport:
    """A runner's own closing report. `passed` bounds the tests that can have passed; `end` is the
    report's last line (0-based): the runner writes no test outcome after it; outcomes before
    `counted_from` may be the tests' own output rather than the runner's (pytest prints captured
    output, where pytest's own test suite shows inner sessions, before its short test summary)."""

    runner: str
    passed: int | None  # None: the runner counts no passes (go test, redis's runtest)
    failed: int  # failures and errors: the runner exits 1 when there are any
    exit_codes: frozenset[int]  # the exit codes that agree with the report
    end: int
    counted_from: int = 0
    lists_outcomes: bool = False  # pytest's short test summary lists every test (-rA)
    text: str = ""


ReportReader = Callable[[list[str]], "RunnerReport | None"]  # the log's lines -> the runner's last closing report


def read_report(reader: ReportReader, lines: list[str]) -> RunnerReport | None:
    """The runner's last closing report in `lines` (colours taken out), or None when it printed none."""
    return reader([_ANSI.sub("", line) if "\x1b" in line else line for line in lines])


def pytest_counts(line: str) -> dict[str, int] | None:
    """The counts of a pytest summary line ({'passed': 3, 'failed': 1, ...}), or None if it is not one."""
    match = _PYTEST_SUMMARY.match(line)
    if not match:
        return None
    counts: dict[str, int] = {}
    for number, word in _PYTEST_COUNT.findall(match.group("body")):
        word = {"errors": "error", "warning": "warnings"}.get(word, word)
        counts[word] = counts.get(word, 0) + int(number)
    return counts


def pytest_report(lines: list[str]) -> RunnerReport | None:
    for end in range(len(lines) - 1, -1, -1):
        counts = pytest_counts(lines[end])
        if counts is not None:
            break
    else:
        return None
    failed = counts.get("failed", 0) + counts.get("error", 0)
    block = next((i for i in range(end - 1, -1, -1) if _PYTEST_BLOCK.match(lines[i]) or pytest_counts(lines[i]) is not None), None)
    lists_outcomes = block is not None and _PYTEST_BLOCK.match(lines[block]) is not None
    return RunnerReport(
        "pytest", counts.get("passed", 0), failed, frozenset({1 if failed else 0}), end,
        counted_from=block if lists_outcomes else 0, lists_outcomes=lists_outcomes, text=lines[end].strip(),
    )  # fmt: skip


def django_report(lines: list[str]) -> RunnerReport | None:
    ran_at = next((i for i in range(len(lines) - 1, -1, -1) if _DJANGO_RAN.match(lines[i])), None)
    if ran_at is None:
        return None
    end = next((i for i in range(ran_at + 1, len(lines)) if lines[i].strip()), None)
    result = _DJANGO_RESULT.match(lines[end]) if end is not None else None
    if result is None:
        return None
    counts = {name.strip(): int(number) for name, number in _DJANGO_COUNT.findall(result.group("counts") or "")}
    failures, errors = counts.get("failures", 0), counts.get("errors", 0)
    unexpected = counts.get("unexpected successes", 0)
    # A test that failed or errored did not pass; subtests give one test several failures, and
    # setUpClass-style errors belong to no counted test, so count the tests the headers name.
    failing = {
        header.group(1)
        for line in lines[:ran_at]
        if (header := _DJANGO_HEADER.match(line.strip())) and header.group(1).split(" ")[0] not in _UNITTEST_FIXTURES
    }
    ran = int(_DJANGO_RAN.match(lines[ran_at]).group(1))
    passed = max(0, ran - min(len(failing), failures + errors) - counts.get("expected failures", 0) - unexpected)
    exit_codes = {1} if failures + errors else ({0, 1} if unexpected else {0})
    return RunnerReport("django", passed, failures + errors, frozenset(exit_codes), end, text=f"{lines[ran_at].strip()}, {lines[end].strip()}")


def sympy_report(lines: list[str]) -> RunnerReport | None:
    start = next((i for i in range(len(lines) - 1, -1, -1) if "tests finished: " in lines[i]), None)
    if start is None:
        return None
    end = min(start + 1, len(lines) - 1)  # a long summary wraps onto a second line
    match = _SYMPY_SUMMARY.search("\n".join(lines[start : end + 1]))
    if match is None:
        return None
    if "seconds" in lines[start]:
        end = start
    counts: dict[str, int] = {}
    for number, word in _SYMPY_COUNT.findall(match.group(2)):
        counts[word] = counts.get(word, 0) + int(number)  # "failed" appears twice: tests and doctests
    failed = counts.get("failed", 0) + counts.get("exceptions", 0)
    text = " ".join(line.strip(" =") for line in lines[start : end + 1])
    return RunnerReport("sympy", int(match.group(1)), failed, frozenset({1 if failed else 0}), end, text=text)


_GO_PACKAGE = re.compile(r"^(ok|FAIL)\s+\S+\s+(?:\(cached\)|[\d.]+s|\[(?:build|setup) failed\]|\[no test files\])")


def gotest_report(lines: list[str]) -> RunnerReport | None:
    results = [(i, match.group(1)) for i, line in enumerate(lines) if (match := _GO_PACKAGE.match(line))]
    if not results:
        return None
    failed = sum(word == "FAIL" for _, word in results)
    text = ", ".join(lines[i].split()[0] + " " + lines[i].split()[1] for i, _ in results[-5:])
    return RunnerReport("gotest", None, failed, frozenset({1, 2} if failed else {0}), results[-1][0], text=text)


_REDIS_ALL_PASSED = re.compile(r"All tests passed without errors!")
_REDIS_FAILED = re.compile(r"The following tests failed:")


def redis_report(lines: list[str]) -> RunnerReport | None:
    the_end = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip() == "The End"), None)
    if the_end is None:
        return None
    for i in range(the_end + 1, len(lines)):
        if _REDIS_ALL_PASSED.search(lines[i]):
            return RunnerReport("redis", None, 0, frozenset({0}), i, text=lines[i].strip())
        if _REDIS_FAILED.search(lines[i]):
            listed = [j for j in range(i + 1, len(lines)) if lines[j].startswith("*** ")]
            end = listed[-1] if listed else i
            return RunnerReport("redis", None, max(1, len(listed)), frozenset({1}), end, text=f"{len(listed)} tests failed")
    return None


_MAVEN_TOTAL = re.compile(r"^(?:\[\w+\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$")
_MAVEN_BUILD = re.compile(r"^(?:\[\w+\] )?BUILD (SUCCESS|FAILURE)\s*$")


def maven_report(lines: list[str]) -> RunnerReport | None:
    """Each run's total (the last before its `BUILD` verdict: what the tests print comes before it), summed over the
    runs of the log (swebench's Maven specs run `mvn test -Dtest=X` once per test); the end is the last verdict."""
    verdicts = [i for i, line in enumerate(lines) if _MAVEN_BUILD.match(line)]
    totals, start = [], 0
    for stop in [*verdicts, len(lines)]:
        total = next((i for i in range(stop - 1, start - 1, -1) if _MAVEN_TOTAL.match(lines[i])), None)
        if total is not None:
            totals.append(total)
        start = stop + 1
    if not totals:
        return None
    counts = [tuple(map(int, _MAVEN_TOTAL.match(lines[i]).groups())) for i in totals]
    run, failed, skipped = (sum(c[0] for c in counts), sum(c[1] + c[2] for c in counts), sum(c[3] for c in counts))
    end = next((verdict for verdict in verdicts if verdict > totals[-1]), totals[-1])
    text = lines[totals[0]].strip() if len(totals) == 1 else f"{len(totals)} runs: Tests run: {run}, Failures and errors: {failed}, Skipped: {skipped}"
    return RunnerReport("maven", run - failed - skipped, failed, frozenset({1 if failed else 0}), end, text=text)


_CARGO_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out")


def cargo_report(lines: list[str]) -> RunnerReport | None:
    """The `test result:` line of each test binary's run, summed; the end is the last one."""
    results = [(i, match) for i, line in enumerate(lines) if (match := _CARGO_RESULT.match(line))]
    if not results:
        return None
    passed, failed = (sum(int(match.group(group)) for _, match in results) for group in (1, 2))
    end = results[-1][0]
    text = lines[end].strip() if len(results) == 1 else f"{len(results)} test binaries: {passed} passed, {failed} failed"
    return RunnerReport("cargo", passed, failed, frozenset({101} if failed else {0}), end, text=text)


_JEST_FILES = re.compile(r"^Test Suites:\s+(.*\d+ total)\s*$")
_JEST_TESTS = re.compile(r"^Tests:\s+(.*\d+ total)\s*$")
_VITEST_FILES = re.compile(r"^\s*Test Files\s+(.*\(\d+\))\s*$")
_VITEST_TESTS = re.compile(r"^\s*Tests\s+(.*\(\d+\)|no tests)\s*$")  # no tests: every file failed to load
_JS_COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo)")


def jest_report(lines: list[str]) -> RunnerReport | None:
    return _javascript("jest", _JEST_FILES, _JEST_TESTS, lines)


def vitest_report(lines: list[str]) -> RunnerReport | None:
    return _javascript("vitest", _VITEST_FILES, _VITEST_TESTS, lines)


def _javascript(runner: str, files: re.Pattern, tests: re.Pattern, lines: list[str]) -> RunnerReport | None:
    """jest's and vitest's summaries: each run's tests line (and the files line before it), summed over the runs."""
    ends = [i for i, line in enumerate(lines) if tests.match(line)]
    if not ends:
        return None
    passed = failed = failed_files = 0
    for end in ends:
        counts = _js_counts(tests.match(lines[end]).group(1))
        passed, failed = passed + counts.get("passed", 0), failed + counts.get("failed", 0)
        header = files.match(lines[end - 1]) if end else None
        failed_files += _js_counts(header.group(1)).get("failed", 0) if header else 0
    text = lines[ends[0]].strip() if len(ends) == 1 else f"{len(ends)} runs: {passed} passed, {failed} failed"
    return RunnerReport(runner, passed, failed or failed_files, frozenset({1} if failed or failed_files else {0}), ends[-1], text=text)


def _js_counts(text: str) -> dict[str, int]:
    return {word: int(number) for number, word in _JS_COUNT.findall(text)}


_PHPUNIT_OK = re.compile(r"^OK \((\d+) tests?, \d+ assertions?\)\s*$")
_PHPUNIT_COUNTS = re.compile(r"^Tests: (\d+), Assertions: \d+((?:, [A-Za-z ]+: \d+)*)\.\s*$")
_PHPUNIT_NONE = re.compile(r"^No tests executed!\s*$")
_PHPUNIT_COUNT = re.compile(r"([A-Za-z ]+): (\d+)")
_PHPUNIT_NOT_PASSED = ("Errors", "Failures", "Skipped", "Incomplete")  # a test counted in one of these did not pass


def phpunit_report(lines: list[str]) -> RunnerReport | None:
    """Each run's summary (`OK (...)`, a `Tests: ...` count line, or `No tests executed!`), summed over the runs."""
    ends = [i for i, line in enumerate(lines) if _PHPUNIT_OK.match(line) or _PHPUNIT_COUNTS.match(line) or _PHPUNIT_NONE.match(line)]
    if not ends:
        return None
    passed = failures = errors = 0
    clean = True  # every run said `OK (...)`: exit 0 exactly
    for end in ends:
        if ok := _PHPUNIT_OK.match(lines[end]):
            passed += int(ok.group(1))
        elif counts := _PHPUNIT_COUNTS.match(lines[end]):
            clean = False
            named = {name.strip(): int(number) for name, number in _PHPUNIT_COUNT.findall(counts.group(2))}
            passed += int(counts.group(1)) - sum(named.get(name, 0) for name in _PHPUNIT_NOT_PASSED)
            failures, errors = failures + named.get("Failures", 0), errors + named.get("Errors", 0)
        else:
            clean = False
    exit_codes = {2} if errors else {1} if failures else {0} if clean else {0, 1}
    text = lines[ends[0]].strip() if len(ends) == 1 else f"{len(ends)} runs: {passed} passed, {failures} failed, {errors} errors"
    return RunnerReport("phpunit", passed, failures + errors, frozenset(exit_codes), ends[-1], text=text)


_TAP_FAIL = re.compile(r"^# fail (\d+)\s*$")
_TAP_PLAN = re.compile(r"^1\.\.(\d+)\s*$")
_TAP_PLAN_NEAR = 5  # the plan is the line after a run's `# fail` (mocha) or 4 lines before it (QUnit)


def tap_report(lines: list[str]) -> RunnerReport | None:
    """Each run's `# fail F` and the plan beside it, summed over the runs; the end is the last of them."""
    fails = [i for i, line in enumerate(lines) if _TAP_FAIL.match(line)]
    if not fails:
        return None
    planned = failed = end = 0
    for fail in fails:
        near = [i for i in range(max(fail - _TAP_PLAN_NEAR, 0), min(fail + 2, len(lines))) if _TAP_PLAN.match(lines[i])]
        plan = min(near, key=lambda i: abs(i - fail), default=None)
        if plan is None:
            return None  # a run cut before its plan: no count of its tests
        planned, failed = planned + int(_TAP_PLAN.match(lines[plan]).group(1)), failed + int(_TAP_FAIL.match(lines[fail]).group(1))
        end = max(end, plan, fail)
    text = f"1..{planned}, # fail {failed}" if len(fails) == 1 else f"{len(fails)} runs: {planned} planned, {failed} failed"
    return RunnerReport("tap", planned - failed, failed, frozenset({1, min(failed, 255)} if failed else {0}), end, text=text)


_GTEST_RAN = re.compile(r"^(?:\d+: )?\[==========\] \d+ tests? from \d+ test (?:suites?|cases?) ran\.")
_GTEST_PASSED = re.compile(r"^(?:\d+: )?\[  PASSED  \] (\d+) tests?\.\s*$")
_GTEST_FAILED = re.compile(r"^(?:\d+: )?\[  FAILED  \] (\d+) tests?, listed below:\s*$")


def googletest_report(lines: list[str]) -> RunnerReport | None:
    """Each binary's closing lines after its `ran.` line, summed; the end is the last of them (the failed list's)."""
    runs = [i for i, line in enumerate(lines) if _GTEST_RAN.match(line)]
    if not runs:
        return None
    passed = failed = end = 0
    for start, stop in zip(runs, [*runs[1:], len(lines)]):
        ran_passed = next((i for i in range(start + 1, stop) if _GTEST_PASSED.match(lines[i])), None)
        if ran_passed is None:
            return None  # a binary cut before its count of passes
        passed, end = passed + int(_GTEST_PASSED.match(lines[ran_passed]).group(1)), ran_passed
        listed = next((i for i in range(ran_passed + 1, stop) if _GTEST_FAILED.match(lines[i])), None)
        if listed is not None:
            count = int(_GTEST_FAILED.match(lines[listed]).group(1))
            failed, end = failed + count, min(listed + count, stop - 1)
    text = f"{passed} passed, {failed} failed" if len(runs) == 1 else f"{len(runs)} test binaries: {passed} passed, {failed} failed"
    return RunnerReport("googletest", passed, failed, frozenset({1, 8} if failed else {0}), end, text=text)


_AUTOMAKE_TOTAL = re.compile(r"^# TOTAL: (\d+)\s*$")
_AUTOMAKE_COUNT = re.compile(r"^# (PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):\s+(\d+)\s*$")


def automake_report(lines: list[str]) -> RunnerReport | None:
    """Each `# TOTAL:` block's counts, summed; the end is the last count line."""
    totals = [i for i, line in enumerate(lines) if _AUTOMAKE_TOTAL.match(line)]
    if not totals:
        return None
    counts: dict[str, int] = {}
    end = 0
    for total in totals:
        index = total + 1
        while index < len(lines) and (count := _AUTOMAKE_COUNT.match(lines[index])):
            counts[count.group(1)] = counts.get(count.group(1), 0) + int(count.group(2))
            end, index = index, index + 1
    failed = counts.get("FAIL", 0) + counts.get("XPASS", 0) + counts.get("ERROR", 0)
    text = ", ".join(f"{word}: {number}" for word, number in counts.items()) + ("" if len(totals) == 1 else f" ({len(totals)} summaries)")
    return RunnerReport("automake", counts.get("PASS", 0), failed, frozenset({2} if failed else {0}), end, text=text)


_RUBY_UNIT = re.compile(r"^(\d+) tests, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) pendings, (\d+) omissions, \d+ notifications\s*$")


def ruby_unit_report(lines: list[str]) -> RunnerReport | None:
    """Each run's count line, summed; the end is the last one."""
    ends = [i for i, line in enumerate(lines) if _RUBY_UNIT.match(line)]
    if not ends:
        return None
    counts = [tuple(map(int, _RUBY_UNIT.match(lines[i]).groups())) for i in ends]
    tests, failures, errors, pendings, omissions = (sum(count[k] for count in counts) for k in range(5))
    text = lines[ends[0]].strip() if len(ends) == 1 else f"{len(ends)} runs: {tests} tests, {failures} failures, {errors} errors"
    failed = failures + errors
    return RunnerReport("ruby_unit", tests - failed - pendings - omissions, failed, frozenset({1} if failed else {0}), ends[-1], text=text)


_DOCTEST_CASES = re.compile(r'<OverallResultsTestCases successes="(\d+)" failures="(\d+)"')


def doctest_report(lines: list[str]) -> RunnerReport | None:
    """The last document's count of test cases; the end is that document's `</doctest>`."""
    counts = next((i for i in range(len(lines) - 1, -1, -1) if _DOCTEST_CASES.search(lines[i])), None)
    if counts is None:
        return None
    end = next((i for i in range(counts, len(lines)) if "</doctest>" in lines[i]), counts)
    failed = int(_DOCTEST_CASES.search(lines[counts]).group(2))
    return RunnerReport("doctest", None, failed, frozenset({1} if failed else {0}), end, text=lines[counts].strip())
