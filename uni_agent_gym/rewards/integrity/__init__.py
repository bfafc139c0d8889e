"""Checks that a test log was written by the test runner, not forged by the code under test.

swebench's log parsers trust every `PASSED <test>` (or `<test> ... ok`, `<test> ok`) line, and the last
line about a test wins. The code under test can print such lines, before the runner's report or after
it (an exit hook), and can change the exit code. So the parsed outcomes are cross-checked, for the
runner the repository's parser reads (pytest, Django's `runtests.py`, sympy's `bin/test`, `go test`, redis's
`runtest`, Maven's surefire, `cargo test`, jest, vitest, ...: `runners/`), against what the runner itself reports:

- a runner that printed no closing report cannot vouch for any pass;
- the exit code must agree with the report's failure count (1 with failures or errors, else 0);
- no test outcome may follow the runner's report: the runner writes nothing after it;
- no more tests may pass than the report counts;
- with `-rA`, every passing test must be listed in pytest's short test summary;
- a test the parser grades as passed must not be reported failed, errored or skipped anywhere else
  in the log (`outcomes.py` reads the log line by line with the same parser to find both reports).

Any disagreement is a problem, and the instance is not resolved.
"""

from __future__ import annotations

from collections.abc import Iterable

from uni_agent_gym.rewards.runners import Runner, runner_for
from uni_agent_gym.rewards.runners.outcomes import FAILING, PASSING, Outcome, Parser
from uni_agent_gym.rewards.runners.reports import RunnerReport, pytest_counts, pytest_report, read_report

__all__ = ["check_log", "check_run", "pytest_summary"]

_SHOWN = 5  # tests named in one problem


def check_log(
    parser: str | Parser | None,
    test_command: str,
    log: str,
    statuses: dict[str, str],
    exit_code: int | None,
    tests: Iterable[str] | None = None,
) -> list[str]:
    """Problems that make the parsed outcomes untrustworthy (empty when the log is consistent).

    `parser` is the swebench parser that made `statuses` from `log` (function or name, e.g.
    "parse_log_sympy") or a runner name ("pytest", "django", "sympy"); `tests` are the graded tests
    (default: every parsed test), the ones whose passes must be uncontested. A log of an unknown
    runner gets no checks, nor one whose log the command reshapes (`Runner.cross_checked`)."""
    return check_run(runner_for(parser, test_command), log, statuses, exit_code, tests)


def check_run(
    found: tuple[Runner, Parser] | None, log: str, statuses: dict[str, str], exit_code: int | None, tests: Iterable[str] | None = None
) -> list[str]:
    """`check_log` for a runner already resolved (`runners.runner_for`: once per grading)."""
    if found is None or not found[0].cross_checked:
        return []
    runner, reader = found
    label = runner.label
    lines = log.split("\n")
    outcomes = runner.outcomes(reader, lines)
    graded = set(statuses) if tests is None else set(tests)
    passing = {test: status for test, status in statuses.items() if status in PASSING and test in graded}
    report = read_report(runner.report, lines)
    problems = []
    if report is None:
        if any(status == "PASSED" for status in statuses.values()):
            problems.append(f"{label} printed no summary line, so its PASSED lines cannot be verified")
    else:
        problems += _exit_code_problems(label, report, exit_code)
        problems += _after_report(label, report, outcomes, lines)
        problems += _too_many_passes(label, report, outcomes, statuses)
        problems += _unlisted_passes(report, outcomes, passing)
    problems += _contradictions(outcomes, passing)
    return problems


def pytest_summary(log: str) -> dict[str, int] | None:
    """The counts of pytest's last summary line ({'passed': 3, 'failed': 1, ...}), or None if it has none."""
    report = read_report(pytest_report, log.split("\n"))
    return None if report is None else pytest_counts(report.text)


def _exit_code_problems(label: str, report: RunnerReport, exit_code: int | None) -> list[str]:
    if exit_code not in {0, 1} | report.exit_codes:
        return [f"{label} exited {exit_code}: the run was interrupted or did not run the tests"]
    if exit_code in report.exit_codes:
        return []
    if report.failed:
        return [f"{label} exited {exit_code} although its summary counts {report.failed} failed or errors"]
    return [f"{label} exited {exit_code} although its summary counts no failures or errors ({report.text})"]


def _after_report(label: str, report: RunnerReport, outcomes: list[Outcome], lines: list[str]) -> list[str]:
    late = [outcome for outcome in outcomes if outcome.line > report.end]
    if not late:
        return []
    first = late[0].line
    return [
        f"{len(late)} test outcome{'s' if len(late) > 1 else ''} after {label}'s own summary, which the runner did not print "
        f"(log line {first + 1}: {lines[first].strip()[:120]!r})"
    ]


def _too_many_passes(label: str, report: RunnerReport, outcomes: list[Outcome], statuses: dict[str, str]) -> list[str]:
    if report.passed is None:
        return []  # the runner counts no passes
    counted = {outcome.test for outcome in outcomes if outcome.status == "PASSED" and outcome.line >= report.counted_from}
    passed = [test for test, status in statuses.items() if status == "PASSED" and test in counted]
    if len(passed) <= report.passed:
        return []
    return [f"the log has {len(passed)} PASSED lines but {label}'s own summary counts {report.passed} passed ({report.text})"]


def _unlisted_passes(report: RunnerReport, outcomes: list[Outcome], passing: dict[str, str]) -> list[str]:
    """With -rA, pytest's short test summary lists every test that passed; a pass outside it was printed by someone else."""
    listed = {(o.test, o.status) for o in outcomes if report.counted_from <= o.line <= report.end}
    if not report.lists_outcomes or not (report.passed == 0 or any(status == "PASSED" for _, status in listed)):
        return []  # no short test summary, or one without passes (no -rA)
    unlisted = sorted(test for test, status in passing.items() if (test, status) not in listed)
    if not unlisted:
        return []
    return [f"not listed as passed in pytest's short test summary, though parsed as passed: {_names(unlisted)}"]


def _contradictions(outcomes: list[Outcome], passing: dict[str, str]) -> list[str]:
    """Graded-as-passed tests that some line of the log reports failed, errored or skipped."""
    failing: dict[tuple[str, str], Outcome] = {}
    for outcome in outcomes:
        if outcome.status in FAILING:
            failing.setdefault((outcome.scope, outcome.test), outcome)
    problems, reported = [], set()
    for outcome in outcomes:
        if passing.get(outcome.test) != outcome.status or outcome.test in reported:
            continue
        parts = outcome.test.split("::")  # the test, its file (""), and the modules and classes holding it
        holders = ["", *("::".join(parts[:i]) for i in range(1, len(parts) + 1))]
        against = next((failing[key] for name in holders if (key := (outcome.scope, name)) in failing), None)
        if against is not None:
            reported.add(outcome.test)
            problems.append(
                f"{outcome.test} is reported {outcome.status} on log line {outcome.line + 1} "
                f"and {against.status} on log line {against.line + 1}"
            )
    return problems


def _names(tests: list[str]) -> str:
    shown = ", ".join(tests[:_SHOWN])
    return shown if len(tests) <= _SHOWN else f"{shown} and {len(tests) - _SHOWN} more"
