"""The runner registry (`rewards/runners/`): one record per test runner, the only place a runner is described, and
all a new runner needs for its log to be cross-checked and canaries to be planted for it."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from uni_agent_gym.datasets.base import swebench_parser_functions
from uni_agent_gym.rewards import canaries
from uni_agent_gym.rewards.integrity import check_log
from uni_agent_gym.rewards.runners import RUNNERS, CanaryRules, Runner, runner_for
from uni_agent_gym.rewards.runners.outcomes import each_line
from uni_agent_gym.rewards.runners.reports import tap_report


def test_each_parser_belongs_to_one_runner_and_each_record_is_complete():
    parsers = Counter(parser for runner in RUNNERS.values() for parser in runner.parsers)
    assert [parser for parser, count in parsers.items() if count > 1] == []
    assert set(parsers) <= set(swebench_parser_functions()), set(parsers) - set(swebench_parser_functions())
    for runner in RUNNERS.values():
        assert runner_for(runner.parsers[0])[0] is runner and runner_for(runner.name)[0] is runner
        assert (runner.report is None) == (runner.outcomes is None), runner.name  # both readers, or a log not cross-checked
        rules = runner.canaries
        if rules is not None:
            assert {"append": rules.source, "insert": rules.rewrite, "classes": True}[rules.placement] is not None, runner.name
    assert sorted(name for name, runner in RUNNERS.items() if not runner.cross_checked) == ["karma", "rspec"]
    assert sorted(name for name, runner in RUNNERS.items() if runner.canaries is None) == ["automake", "doctest"]


TAP_LOG = """ok 1 arith adds
not ok 2 arith subtracts
# tests 2
# pass 1
# fail 1
1..2
ok 2 arith subtracts
"""  # the code under test's exit hook prints a pass for the failed test after the runner's report, and exits 0


def test_a_new_runner_is_one_record(monkeypatch):
    """A runner nobody here knows: its log gets no checks and no canaries. Registered as one record (a reader of its
    report, of its outcome lines, a canary writer), its forged log is caught and canaries are written for it."""
    statuses = {"arith adds": "PASSED", "arith subtracts": "PASSED"}
    command = "uag-runner --tap test/arith.js"
    assert runner_for(None, command) is None and check_log(None, command, TAP_LOG, statuses, 0) == []
    assert not canaries.wanted(None, command)

    def source(path: str, text: str, graded: list[str], command: str) -> tuple[str, list[str]]:
        return "\ntest('arith uag canary', () => { throw new Error('x') })\n", ["arith uag canary"]

    record = Runner("uag", "uag-runner", ("parse_log_tap",), tap_report, each_line(r"^\s*(?:not )?ok \d+ "), re.compile(r"\buag-runner\b"),
                    CanaryRules(lambda command: "--bail" not in command, lambda test_patch, graded, command: ["test/arith.js"], source))  # fmt: skip
    monkeypatch.setitem(RUNNERS, "uag", record)
    assert runner_for(None, command)[0] is record
    problems = check_log(None, command, TAP_LOG, statuses, 0)
    assert any("after uag-runner's own summary" in problem for problem in problems), problems
    assert canaries.wanted("uag", command) and not canaries.wanted("uag", command + " --bail")
    assert canaries.target_files("uag", "", [], command) == ["test/arith.js"]
    assert canaries.source("uag", "", [], command) == ("\ntest('arith uag canary', () => { throw new Error('x') })\n", ["arith uag canary"])
    planted = canaries.Canaries(record, {"arith uag canary": "test/arith.js"})
    assert planted.problems({**statuses, "arith uag canary": "PASSED"})[0].endswith("the runner's verdict was forged")


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_every_runner_is_found_by_its_name_and_its_default_parser(name):
    runner, parser = runner_for(name)
    assert runner.name == name and parser.__name__ == runner.parsers[0]
