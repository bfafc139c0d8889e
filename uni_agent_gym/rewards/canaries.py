"""Canary tests: tests that must fail, planted beside the hidden tests, to catch a verdict the runner forges.

Where the repository's own code is the test runner (the pytest repository is pytest) or helps it judge, a
patch can change how failures are judged from inside the code under test, and the guard, the log and the exit
code then agree, because they all come from the changed runner. Whatever turns the hidden tests' failures
into passes without the patch knowing which tests are hidden turns every failure into a pass. So after the
test patch is applied, the grader appends to each test file that holds graded tests a few tests that fail
(an assertion and an error), named after that file's own tests so that no pattern tells them apart. Each
must be reported failed (or errored). A canary reported passed, or missing while the graded tests ran, is a
forged verdict: the instance is not resolved and `integrity_problems` says which canary.

What it cannot see: a patch that reads the test files at run time and tells the canaries (their bodies) from
the hidden tests. That takes a policy reading and classifying test source at grading time, far past
swallowing exceptions; the guard and the runner-module rerun (`runner_modules.py`) stand beside it.
Canaries are not planted where the command stops at the first failure (`-x`, `--failfast`): a canary would
end the run early. go test's, redis's `runtest`'s, googletest's, `cargo test`'s, test-unit's, RSpec's and JavaScript's
(jest, vitest, mocha, QUnit) canaries (`runner_canaries.py`) are named to pass the command's filters (Rust's inside a
module are inserted there); JUnit's under Maven (`junit_canaries.py`) are classes of their own in new files: Maven's
parsers grade a class whole, and a failing method in a graded class would fail it (where the command runs one test a
run, each canary gets a run of its own); PHPUnit's (`phpunit_canaries.py`) are methods inserted into the graded class (a
PHP class cannot be reopened), and karma's (`karma_canaries.py`) `it`s inserted beside a graded one (its parser names a
test by the suites around it).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.errors import SandboxFileNotFoundError
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards import junit_canaries
from uni_agent_gym.rewards.runners import RUNNERS, Runner


@dataclass
class Canaries:
    """The canaries of one grading: {test function name: repository file} and the runner that runs them."""

    runner: Runner | str  # its record, or its name
    planted: dict[str, str] = field(default_factory=dict)
    command: str | None = None  # the test command with runs of the canaries added (swebench's Maven rows: a run each), if it needs them

    def problems(self, statuses: dict[str, str]) -> list[str]:
        """Each canary must be reported failed or errored; `statuses` is the parsed log."""
        if not self.planted or not any(status == "PASSED" for status in statuses.values()):
            return []  # nothing passed: no verdict to doubt (a run that did not start is graded 0 anyway)
        problems, rules = [], _runner(self.runner).canaries
        for name, path in self.planted.items():
            reported = [status for test, status in statuses.items() if rules.reports(test, name)]
            if not reported:
                problems.append(f"the canary test {name} (planted in {path}, it must fail) is missing from the log: the runner's verdicts were filtered")
            elif any(status not in ("FAILED", "ERROR") for status in reported):
                problems.append(f"the canary test {name} (planted in {path}, it must fail) is reported {reported[-1]}: the runner's verdict was forged")
        return problems


def _runner(runner: Runner | str | None) -> Runner | None:
    """A runner's record (by name for callers that have one), None for none."""
    return RUNNERS.get(runner) if isinstance(runner, str) or runner is None else runner


def wanted(runner: Runner | str | None, command: str) -> bool:
    """Whether canaries are planted for this runner under this command."""
    found = _runner(runner)
    return found is not None and found.canaries is not None and found.canaries.planted(command)


def target_files(runner: Runner | str, test_patch: str, graded: list[str], command: str = "") -> list[str]:
    """The test files of the test patch that take canaries: those holding graded tests (pytest: by the tests' ids),
    test modules (Django, sympy: their ids do not name files), those `command` runs (go test, runtest, ...)."""
    return _runner(runner).canaries.files(test_patch, list(graded), command)


def source(runner: Runner | str, text: str, graded: list[str] | tuple[str, ...] = (), command: str = "", path: str = "") -> tuple[str, list[str]]:
    """Canary code to append to a test file (its text; its repository path for Rust, whose modules are files), and the
    test names it defines (go test, runtest, googletest, cargo: named after `graded` tests, to pass `command`'s
    filters; none where they cannot be)."""
    return _runner(runner).canaries.source(path, text, list(graded), command)


async def plant(deployment: Deployment, repo_dir: str, runner: Runner | str, test_patch: str, graded: list[str], command: str = "") -> Canaries:
    """Append canaries to the test files of `test_patch` (after it is applied; JUnit's: new files beside them); the
    files are reset to the start commit by the next grading like every file of the test patch, and a grading
    sandbox is a fresh one (`reward.sandbox: fresh`), gone with its canaries."""
    runner = _runner(runner)
    rules, canaries = runner.canaries, Canaries(runner)
    if rules.placement == "classes":
        return await _plant_classes(deployment, repo_dir, test_patch, graded, command, canaries)
    if rules.fail_fast is not None and await _fails_fast(deployment, repo_dir, *rules.fail_fast(command)):
        return canaries  # a failing canary would end the run
    if rules.placement == "insert":
        return await _plant_inside(deployment, repo_dir, runner, test_patch, graded, command, canaries)
    for path in rules.files(test_patch, graded, command):
        full = f"{repo_dir.rstrip('/')}/{path}"
        text = await _text_of(deployment, full)
        code, names = rules.source(path, text, graded, command) if text is not None else ("", [])
        if not names:
            continue
        await deployment.run(f"cat >> {shlex.quote(full)} <<'UAG_CANARY_EOF'\n{code}UAG_CANARY_EOF", timeout=60)
        canaries.planted.update({name: path for name in names})
    return canaries


async def _plant_classes(deployment: Deployment, repo_dir: str, test_patch: str, graded: list[str], command: str, canaries: Canaries) -> Canaries:
    """JUnit's canaries: new test classes beside the graded ones (`junit_canaries.py`), in files no class has yet; where
    the command runs one test a run (swebench's rows), a run of each canary added to it (`canaries.command`)."""
    root = repo_dir.rstrip("/")
    each_test = junit_canaries.runs_each_test(command)
    single = False
    if not each_test:  # the whole suite in a run: where the classes are picked up, and what a failure stops
        pom = await _text_of(deployment, f"{root}/{junit_canaries.pom_of(command)}")
        if pom is None:
            return canaries  # no pom where the command reads it: nothing to say where the tests run
        single = junit_canaries.single_module(pom)
        if not single and not junit_canaries.goes_on_past_a_failure(command):
            return canaries  # a failing module would skip the modules after it
    runs: dict[str, str] = {}  # canary test -> the graded class whose run it takes the shape of
    for path in junit_canaries.files(patch_files(test_patch), single_module=single):
        text = await _text_of(deployment, f"{root}/{path}")
        for name, (new_path, code) in (junit_canaries.classes(path, text, graded) if text is not None else {}).items():
            graded_class = f"{name.rpartition('.')[0]}.{PurePosixPath(path).stem}".lstrip(".")
            run = junit_canaries.run_test(command, graded_class, name, code) if each_test else (name, "")
            if run is None:
                continue  # no run of the command runs this class's tests
            written = await deployment.run(f"set -C && cat > {shlex.quote(f'{root}/{new_path}')} <<'UAG_CANARY_EOF'\n{code}UAG_CANARY_EOF", timeout=60)
            if written.exit_code != 0:  # set -C: a file of that name is the repository's own, left as it is
                continue
            test, beside = run
            canaries.planted[test] = new_path
            if each_test:
                runs[test] = beside
    if runs:
        canaries.command = junit_canaries.with_runs(command, runs)
    return canaries


async def _plant_inside(deployment: Deployment, repo_dir: str, runner: Runner, test_patch: str, graded: list[str], command: str, canaries: Canaries) -> Canaries:
    """Canaries written into the test file rather than after it: PHPUnit's methods into the class of each test-patch
    file the command runs (`phpunit_canaries.py`), karma's `it`s beside a graded one (`karma_canaries.py`), Rust's
    functions inside the module of a graded test (`runner_canaries.cargo_rewritten`)."""
    for path in runner.canaries.files(test_patch, graded, command):
        full = f"{repo_dir.rstrip('/')}/{path}"
        text = await _text_of(deployment, full)
        rewritten, names = runner.canaries.rewrite(path, text, graded, command) if text is not None else ("", [])
        if names:
            await deployment.write_file(full, rewritten)
            canaries.planted.update({name: path for name in names})
    return canaries


async def _fails_fast(deployment: Deployment, repo_dir: str, paths: tuple[str, ...], option: re.Pattern) -> bool:
    """Whether one of the runner's configuration files (RSpec's `.rspec` and `spec/spec_helper.rb`, karma's
    configuration) says to stop at the first failure."""
    for path in paths:
        text = await _text_of(deployment, f"{repo_dir.rstrip('/')}/{path}")
        if text is not None and option.search(text):
            return True
    return False


async def _text_of(deployment: Deployment, path: str) -> str | None:
    """A file's text; None where the test patch deleted it or it is not text (nothing runs from it)."""
    try:
        return (await deployment.read_file(path)).decode()
    except (SandboxFileNotFoundError, UnicodeDecodeError):
        return None
