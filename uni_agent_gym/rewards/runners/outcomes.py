"""Every test outcome a log reports, line by line, read by the same swebench parser that grades it.

swebench's parsers return one outcome per test, so a later line silently overwrites an earlier one: a
`PASSED` line printed after the runner's real `FAILED` wins. Reading the log one line at a time with
the same parser keeps every outcome and where it was, so a test reported both ways can be found.

The parsers read each line on its own, with three exceptions replayed here as they read them: Django's
takes an `ok` on a later line for the last `<test> ... ` line (the test printed something between),
sympy's names tests by bare function name, so the file a line belongs to (the runner's
`path.py[N]` header before it) scopes the name, and PHPUnit's names a test by the last suite header
before it (`Arith (Tests\\Arith)`). Ruby test-unit's also names tests bare: the class header before them
(`ArithTest: `) scopes the name. doctest's reads an XML document, the first of the log: each document is read
whole, so a document printed before the binary's own is a second report of the same tests. The runners' own failure reports are outcomes too,
also where the repository's parser skips them: pytest's `ERROR path.py` for a module it could not
collect, Django's `FAIL: <test>` / `ERROR: <test>` headers, and sympy's `___ path.py:test ___`
headers and its `path.py[?]   Failed to import` line (both: every test of the file).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from xml.etree import ElementTree

from swebench.harness.log_parsers.python import parse_log_pytest

Parser = Callable[[str, object], dict[str, str]]  # swebench's parser signature: (log, test_spec) -> {test: status}

PASSING = ("PASSED", "XFAIL")  # what swebench's grading counts as passed
FAILING = ("FAILED", "ERROR", "SKIPPED")  # a report that the test did not pass

_PYTEST_WORDS = re.compile(r"PASSED|FAILED|SKIPPED|ERROR|XFAIL")  # lines without one hold no pytest outcome
_DJANGO_WORDS = re.compile(r" \.\.\. |^(?:FAIL|ERROR):|--version is equivalent")  # lines without one hold no outcome
_DJANGO_HEADER = re.compile(r"^(FAIL|ERROR): (.+)$")
_DJANGO_RULE = re.compile(r"^-{20,}$")  # unittest's separator between a failure header and its traceback
_SYMPY_FILE = re.compile(r"^(\S+\.py)\[(\d+|\?)\]")


@dataclass(frozen=True)
class Outcome:
    """One outcome one line of the log reports: `line` is 0-based, `scope` the test file where the
    runner names tests without it (sympy), `test` "" for a whole file."""

    line: int
    test: str
    status: str
    scope: str = ""


OutcomeReader = Callable[[Parser, list[str]], list["Outcome"]]  # (parser, the log's lines) -> every outcome, in log order


def each_line(words: str) -> OutcomeReader:
    """The outcomes of a runner whose parser reads each line on its own: every line with one of `words` (a regex), parsed."""
    pattern = re.compile(words)

    def outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
        return [Outcome(index, test, status) for index, line in enumerate(lines) if pattern.search(line) for test, status in parser(line, None).items()]

    return outcomes


_MAVEN_TOTALS = re.compile(r"Tests run: ")  # surefire's per-class and per-run totals (Multi-SWE-bench's parser reads them)
_MAVEN_RUN = re.compile(r"-Dtest=\S")  # the traced command of one run (swebench's Maven rows run one test a run)
_MAVEN_VERDICT = re.compile(r"BUILD (?:SUCCESS|FAILURE)\s*$")


def maven_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    """Maven's: surefire's `Tests run:` lines, each read alone, and every `BUILD` line read with the traced `-Dtest=`
    command of its run before it. swebench's parser names a run's test by that command and its status by one `BUILD`
    line of the run: 4.1's took the run's last, 5.x's takes its first, so a `BUILD SUCCESS` that the tests print before
    Maven's own `BUILD FAILURE` grades PASSED under 5.x. Each `BUILD` line is an outcome here, so a run that reports
    both is found."""
    outcomes: list[Outcome] = []
    command = None
    for index, line in enumerate(lines):
        if _MAVEN_RUN.search(line):
            command = line
        found = parser(line, None) if _MAVEN_TOTALS.search(line) else {}
        if command is not None and _MAVEN_VERDICT.search(line):
            found = {**found, **parser(f"{command}\n{line}", None)}
        outcomes.extend(Outcome(index, test, status) for test, status in found.items())
    return outcomes


_PHPUNIT_SUITE = re.compile(r"^(\w.+) \(.+\)$")  # what swebench's parse_log_phpunit takes for the suite of the tests after it
_PHPUNIT_WORDS = re.compile(r"[✔✘↩]")


def phpunit_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    """Each test line read by the parser after the suite header it belongs to (none: the parser names no suite)."""
    outcomes: list[Outcome] = []
    suite = None
    for index, line in enumerate(lines):
        if _PHPUNIT_SUITE.match(line):
            suite = line
        elif _PHPUNIT_WORDS.search(line):
            found = parser(line if suite is None else f"{suite}\n{line}", None)
            outcomes.extend(Outcome(index, test, status) for test, status in found.items())
    return outcomes


# test-unit -v heads a test case's (or sub case's) tests with its name; a failure's source excerpt has `     3: ` lines
_RUBY_UNIT_CASE = re.compile(r"^\s*([^\s\d].*): $")
_RUBY_UNIT_WORDS = re.compile(r":\s+(?:\.|E\b|F\b|O\b)")


def ruby_unit_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    """Each outcome line, scoped by the test case header before it (one test name in two cases is two tests)."""
    outcomes: list[Outcome] = []
    scope = ""
    for index, line in enumerate(lines):
        if header := _RUBY_UNIT_CASE.match(line):
            scope = header.group(1)
        elif _RUBY_UNIT_WORDS.search(line):
            outcomes.extend(Outcome(index, test, status, scope) for test, status in parser(line, None).items())
    return outcomes


def doctest_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    """Each `<doctest>` ... `</doctest>` document's outcomes, at the document's first line (one it cannot read: none)."""
    outcomes: list[Outcome] = []
    start = None
    for index, line in enumerate(lines):
        if start is None and "<doctest" in line:
            start = index
        if start is not None and "</doctest>" in line:
            try:
                found = parser("\n".join(lines[start : index + 1]), None)
            except ElementTree.ParseError:
                found = {}
            outcomes.extend(Outcome(start, test, status) for test, status in found.items())
            start = None
    return outcomes


def pytest_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for index, line in enumerate(lines):
        if not _PYTEST_WORDS.search(line):
            continue
        found = parser(line, None)
        if line.startswith("ERROR"):  # pytest's `ERROR path.py` for a module it could not collect, also where the
            # repository's parser skips ERROR lines (seaborn's): a report about every test in that module
            for test, status in parse_log_pytest(line, None).items():
                if status == "ERROR" and "::" not in test:
                    found.setdefault(test, status)
        outcomes.extend(Outcome(index, test, status) for test, status in found.items())
    return outcomes


def django_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    previous = None  # the parser's `prev_test`: the last line's text before " ... "
    for index, raw in enumerate(lines):
        line = raw.strip()
        found = parser(line, None) if _DJANGO_WORDS.search(line) else {}
        if " ... " in line:
            previous = line.split(" ... ")[0]
        if line.startswith("ok") and previous is not None:
            found[previous] = "PASSED"
        outcomes.extend(Outcome(index, test, status) for test, status in found.items())
        header = _DJANGO_HEADER.match(line)
        if header:  # the runner's own report of a failure, naming the test as its result line did
            status = "FAILED" if header.group(1) == "FAIL" else "ERROR"
            outcomes.append(Outcome(index, header.group(2), status))
            docstring = lines[index + 1].strip() if index + 1 < len(lines) else ""
            if docstring and not _DJANGO_RULE.match(docstring):  # verbosity 2 names a documented test by its docstring
                outcomes.append(Outcome(index + 1, docstring, status))
    return outcomes


def sympy_outcomes(parser: Parser, lines: list[str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    scope = ""
    for index, line in enumerate(lines):
        header = _SYMPY_FILE.match(line)
        if header:
            scope = header.group(1)
            if header.group(2) == "?":  # "path.py[?]   Failed to import": none of its tests ran
                outcomes.append(Outcome(index, "", "ERROR", scope))
        if not (".py:" in line or line.lstrip().startswith("test_")):
            continue  # nothing sympy's parser reads
        for test, status in parser(line, None).items():
            path, separator, name = test.partition(".py:")
            if separator:  # a failure header: "path.py:test" (sympy 1.14 writes "path.py::test" for failures)
                outcomes.append(Outcome(index, name.lstrip(":"), status, path + ".py"))
            else:
                outcomes.append(Outcome(index, test, status, scope))
    return outcomes
