"""Checks that a test log was written by the test runner, not forged by the code under test.

The log parsers trust every `PASSED <test>` line. A `conftest.py` or the code under test can print
such lines, so the parsed outcomes are cross-checked with what the runner itself reports: its exit
code and its own summary line (pytest's `== 3 passed, 1 failed in 0.5s ==`, Django's `Ran N tests`).
Any disagreement is a problem and the instance is not resolved.
"""

from __future__ import annotations

import re

_PYTEST_SUMMARY = re.compile(r"^=+ (?P<body>(?:\d+ \w+(?:, )?)+|no tests ran)(?: in [\d.]+s?.*?)? =+\s*$", re.MULTILINE)
_PYTEST_COUNT = re.compile(r"(\d+) (\w+)")
_DJANGO_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$", re.MULTILINE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # `--color yes` (sphinx's test command) colours the summary


def pytest_summary(log: str) -> dict[str, int] | None:
    """The counts of pytest's last summary line ({'passed': 3, 'failed': 1, ...}), or None if it has none."""
    matches = list(_PYTEST_SUMMARY.finditer(_ANSI.sub("", log)))
    if not matches:
        return None
    counts: dict[str, int] = {}
    for number, word in _PYTEST_COUNT.findall(matches[-1].group("body")):
        word = {"errors": "error", "warning": "warnings"}.get(word, word)
        counts[word] = counts.get(word, 0) + int(number)
    return counts


def check_log(test_command: str, log: str, statuses: dict[str, str], exit_code: int | None) -> list[str]:
    """Problems that make the parsed outcomes untrustworthy (empty when the log is consistent)."""
    passed = sum(1 for status in statuses.values() if status == "PASSED")
    problems = []
    if "pytest" in test_command:
        summary = pytest_summary(log)
        if summary is None:
            if passed:
                problems.append("pytest printed no summary line, so its PASSED lines cannot be verified")
            return problems
        if passed > summary.get("passed", 0) + summary.get("xpassed", 0):
            problems.append(
                f"the log has {passed} PASSED lines but pytest's own summary counts {summary.get('passed', 0)} passed"
            )
        failures = summary.get("failed", 0) + summary.get("error", 0)
        if exit_code == 0 and failures:
            problems.append(f"pytest exited 0 although its summary counts {failures} failed or errors")
        if exit_code not in (0, 1):
            problems.append(f"pytest exited {exit_code}: the run was interrupted or did not run the tests")
    elif "runtests.py" in test_command:  # Django's runner
        ran = _DJANGO_RAN.findall(_ANSI.sub("", log))
        if passed and not ran:
            problems.append("Django's runner printed no 'Ran N tests' line, so its results cannot be verified")
        elif ran and passed > int(ran[-1]):
            problems.append(f"the log has {passed} passing tests but Django's runner says it ran {ran[-1]}")
    return problems
