"""The test runners the grader knows, one record each: how its log is recognised, read and cross-checked, and how
canaries are planted for it. Adding a runner is one `Runner` here (its readers and planters live beside the others).

    runner, parser = runner_for("parse_log_gotest")           # by the task's swebench parser (or a runner's name)
    runner, parser = runner_for(None, "go test -v ./...")     # else by its test command
    runner.report(lines), runner.outcomes(parser, lines)      # the runner's own closing report; every outcome a line gives
    runner.canaries.planted(command)                          # whether canaries run under this command (`canaries.py`)

A grading resolves its runner once (`SWEBenchReward._test`) and hands the record to the log checks (`integrity`), the
canaries and the guard.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from uni_agent_gym.datasets.base import swebench_parser_functions
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards import junit_canaries, karma_canaries, phpunit_canaries, python_canaries
from uni_agent_gym.rewards import runner_canaries as rc
from uni_agent_gym.rewards.maven_poms import ATTACH_CLOSED, poms_with_runner_changes
from uni_agent_gym.rewards.runners import outcomes, reports
from uni_agent_gym.rewards.runners.outcomes import OutcomeReader, Parser, each_line
from uni_agent_gym.rewards.runners.reports import ReportReader

__all__ = ["RUNNERS", "CanaryRules", "Runner", "runner_for"]

Files = Callable[[str, list[str], str], list[str]]  # (test patch, graded tests, command) -> the test files canaries go in
Source = Callable[[str, str, list[str], str], tuple[str, list[str]]]  # (path, text, graded, command) -> (code, canary names)


def _exact(test: str, name: str) -> bool:
    return test == name


@dataclass(frozen=True)
class CanaryRules:
    """How canaries are planted for one runner and found in its log (`canaries.py` plants them)."""

    planted: Callable[[str], bool]  # whether they run under this command (not where it stops at the first failure, ...)
    files: Files = lambda test_patch, graded, command: []
    source: Source | None = None  # the code appended to a file and its canaries' names
    rewrite: Source | None = None  # the file's new text, where canaries go inside it (PHPUnit's class, a Rust module)
    placement: Literal["append", "insert", "classes"] = "append"  # classes: new files of their own (JUnit under Maven)
    reports: Callable[[str, str], bool] = _exact  # whether a parsed test id is the canary of that name
    fail_fast: Callable[[str], tuple[tuple[str, ...], re.Pattern]] | None = None  # the runner's files that may stop it early


@dataclass(frozen=True)
class Runner:
    """One test runner."""

    name: str
    label: str  # how a problem names it ("runtests.py", "Maven")
    parsers: tuple[str, ...]  # swebench's parsers of its log (aliases are the same functions), its default first
    report: ReportReader | None = None  # its own closing report; None: its log is not cross-checked (the command reshapes it)
    outcomes: OutcomeReader | None = None  # every outcome a line of its log gives, read with the task's parser
    command: re.Pattern | None = None  # recognises it by the test command where the parser does not say
    canaries: CanaryRules | None = None
    guarded: bool = False  # the grading guard loads into it (`guard/`)
    configuration_changes: Callable | None = None  # what of a patch reconfigures it, rerun as at the start (`maven_poms.py`)
    run_prefix: str = ""  # set before its test command runs (Maven: no agent attaches to its JVM)

    @property
    def cross_checked(self) -> bool:
        return self.report is not None and self.outcomes is not None

    def parser(self) -> Parser:
        return _swebench_parser(self.parsers[0])


def _changed(function: Callable[[list[str], str], list[str]]) -> Files:
    """Files from a function of (the test patch's files, command)."""
    return lambda test_patch, graded, command: function(patch_files(test_patch), command)


_JAVASCRIPT_FILES = _changed(lambda touched, command: rc.javascript_files(command, touched))


def _javascript(name: str) -> CanaryRules:
    return CanaryRules(functools.partial(rc.javascript_planted, name), _JAVASCRIPT_FILES,
                       lambda path, text, graded, command: rc.javascript_source(name, path, text, graded, command))  # fmt: skip


# in this order a test command is matched against theirs (Django's and sympy's run under `python`, pytest's name inside)
RUNNERS: dict[str, Runner] = {runner.name: runner for runner in (
    Runner("django", "runtests.py", ("parse_log_django",), reports.django_report, outcomes.django_outcomes, re.compile(r"runtests\.py"),
           CanaryRules(python_canaries.planted, python_canaries.module_files, python_canaries.django_source, reports=python_canaries.reports),
           guarded=True),  # Django's runtests.py is unittest's runner
    Runner("sympy", "bin/test", ("parse_log_sympy",), reports.sympy_report, outcomes.sympy_outcomes, re.compile(r"\bbin/test\b"),
           CanaryRules(python_canaries.planted, python_canaries.module_files, python_canaries.function_source, reports=python_canaries.reports)),
    Runner("pytest", "pytest", ("parse_log_pytest", "parse_log_pytest_options", "parse_log_pytest_v2", "parse_log_matplotlib", "parse_log_seaborn"),
           reports.pytest_report, outcomes.pytest_outcomes, re.compile(r"\bpy\.?test\b"),
           CanaryRules(python_canaries.planted, python_canaries.pytest_files, python_canaries.function_source, reports=python_canaries.reports), guarded=True),
    Runner("gotest", "go test", ("parse_log_gotest",), reports.gotest_report, each_line(r"--- (?:PASS|FAIL|SKIP): "), re.compile(r"\bgo test\b"),
           CanaryRules(python_canaries.planted,
                       lambda test_patch, graded, command: [path for path in patch_files(test_patch) if path.endswith("_test.go")
                                                            and rc.go_runs_file(path, rc.go_packages(command) or [])],
                       lambda path, text, graded, command: rc.go_source(text, graded, rc.go_run_pattern(command)))),
    Runner("redis", "runtest", ("parse_log_redis",), reports.redis_report, each_line(r"\[(?:ok|err|skip|ignore)\]: "), re.compile(r"(?:^|\s|/)runtest\b"),
           CanaryRules(python_canaries.planted, _changed(lambda touched, command: rc.redis_files(command, touched)),
                       lambda path, text, graded, command: rc.redis_source(text, graded, rc.redis_only(command)))),
    Runner("maven", "Maven", ("parse_log_maven",), reports.maven_report, outcomes.maven_outcomes, re.compile(r"\bmvn[dw]?\b"),
           CanaryRules(lambda command: junit_canaries.planted(command) or junit_canaries.runs_each_test(command), placement="classes"),
           configuration_changes=poms_with_runner_changes, run_prefix=ATTACH_CLOSED),
    Runner("cargo", "cargo test", ("parse_log_cargo",), reports.cargo_report, each_line(r"^\s*test\s.*\.\.\."),
           re.compile(r"\bcargo\s+(?:\+\S+\s+)?test\b"),
           CanaryRules(rc.cargo_planted, _changed(lambda touched, command: rc.cargo_files(touched)),
                       lambda path, text, graded, command: rc.cargo_source(path, text, graded),
                       lambda path, text, graded, command: rc.cargo_rewritten(path, text, graded), placement="insert")),
    Runner("phpunit", "PHPUnit", ("parse_log_phpunit",), reports.phpunit_report, outcomes.phpunit_outcomes, re.compile(r"\bphpunit\b"),
           CanaryRules(phpunit_canaries.planted, _changed(lambda touched, command: phpunit_canaries.files(command, touched)),
                       rewrite=lambda path, text, graded, command: phpunit_canaries.source(text, graded), placement="insert")),
    # jest, vitest, googletest, automake, test-unit, doctest: known by the parser only (other JavaScript parsers read jest's output
    # reshaped; ctest runs other frameworks; `make check` and `ruby <file>` run anything; a doctest binary is the repository's)
    Runner("jest", "jest", ("parse_log_jest",), reports.jest_report, each_line(r"[✓✕○]"), canaries=_javascript("jest")),
    Runner("vitest", "vitest", ("parse_log_vitest",), reports.vitest_report, each_line(r"[✓×↓]"), canaries=_javascript("vitest")),
    Runner("tap", "the TAP runner", ("parse_log_tap",), reports.tap_report, each_line(r"^\s*(?:not )?ok \d+ "),
           re.compile(r"\bqunit\b|\bmocha\b.*(?:-R|--reporter)[ =]tap\b"), _javascript("tap")),
    Runner("googletest", "googletest", ("parse_log_googletest",), reports.googletest_report, each_line(r"\[\s*(?:OK|FAILED)\s*\]"),
           canaries=CanaryRules(rc.googletest_planted, _changed(lambda touched, command: rc.googletest_files(touched)),
                                lambda path, text, graded, command: rc.googletest_source(text, graded))),
    Runner("automake", "make check", ("parse_log_jq",), reports.automake_report, each_line(r"^\s*(?:PASS|FAIL):")),
    Runner("ruby_unit", "test-unit", ("parse_log_ruby_unit",), reports.ruby_unit_report, outcomes.ruby_unit_outcomes,
           canaries=CanaryRules(rc.ruby_unit_planted, _changed(lambda touched, command: rc.ruby_unit_files(command, touched)),
                                lambda path, text, graded, command: rc.ruby_unit_source(text, graded, command))),
    Runner("doctest", "doctest", ("parse_log_doctest",), reports.doctest_report, outcomes.doctest_outcomes),
    # rspec: the command reshapes the runner's JSON with jq (no summary; the pipeline's exit code is jq's); karma: the tests run
    # in the browser page the code under test runs in, and its reporter's summary counts the same in-page results (a verdict
    # forged there agrees with it): their logs are not cross-checked, their canaries are the defence
    Runner("rspec", "RSpec", ("parse_log_rspec_transformed_json",),
           canaries=CanaryRules(rc.rspec_planted, _changed(lambda touched, command: rc.rspec_files(command, touched)),
                                lambda path, text, graded, command: rc.rspec_source(path, text, graded, command), reports=rc.rspec_reports,
                                fail_fast=lambda command: ((".rspec", "spec/spec_helper.rb"), re.compile(r"fail[_-]fast")))),
    Runner("karma", "karma", ("parse_log_karma",),
           canaries=CanaryRules(karma_canaries.planted, _changed(lambda touched, command: karma_canaries.files(command, touched)),
                                rewrite=lambda path, text, graded, command: karma_canaries.source(text, graded), placement="insert",
                                fail_fast=lambda command: ((karma_canaries.configuration(command),), karma_canaries.BAILS))),
)}  # fmt: skip


def runner_for(parser: str | Parser | None, test_command: str = "") -> tuple[Runner, Parser] | None:
    """The runner a log comes from, and the parser to reread it with: by the parser (a swebench parser
    function, its name, or a runner's name), else by the test command; None when neither is known."""
    function = parser if callable(parser) else None
    if isinstance(parser, str):
        function = _swebench_parser(RUNNERS[parser].parsers[0] if parser in RUNNERS else parser)
    name = getattr(function, "__name__", "")
    runner = next((runner for runner in RUNNERS.values() if name in runner.parsers), None)
    if runner is None:
        runner = next((runner for runner in RUNNERS.values() if runner.command is not None and runner.command.search(test_command)), None)
    if runner is None:
        return None
    return runner, function or runner.parser()


def _swebench_parser(name: str) -> Parser:
    """swebench's log parser of that name, in any language (a typo must not silently skip the checks)."""
    parsers = swebench_parser_functions()
    if name not in parsers:
        raise ValueError(f"Unknown log parser {name!r}: expects a runner ({', '.join(RUNNERS)}) or one of swebench's parsers, such as {', '.join(sorted(parser for runner in RUNNERS.values() for parser in runner.parsers))}")
    return parsers[name]
