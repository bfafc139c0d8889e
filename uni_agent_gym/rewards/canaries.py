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
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.errors import SandboxFileNotFoundError
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards import junit_canaries, karma_canaries, phpunit_canaries, runner_canaries

PLANTED_FOR = ("pytest", "django", "sympy", "gotest", "redis", "googletest", "cargo", "jest", "vitest", "tap", "maven", "phpunit", "ruby_unit", "rspec", "karma")  # the runners whose test files and names the canaries follow
_JAVASCRIPT = ("jest", "vitest", "tap")
_EXACT_NAMES = ("gotest", "redis", "googletest", "cargo", "maven", "phpunit", "ruby_unit", "karma", *_JAVASCRIPT)  # their parsers name a test as it is written: a canary is that name, nothing around it
STOPS_AT_FIRST_FAILURE = re.compile(r"(?:^|\s)(?:-x|--exitfirst|--failfast|--maxfail(?:=|\s+)1)(?=\s|$)")
_RSPEC_FAILS_FAST = re.compile(r"fail[_-]fast")
_INSERTED = {  # runner -> (path, text, graded) -> the file's new text and the canaries' names: written into the file, not appended to it
    "phpunit": lambda path, text, graded: phpunit_canaries.source(text, graded),
    "karma": lambda path, text, graded: karma_canaries.source(text, graded),
    "cargo": runner_canaries.cargo_rewritten,  # appended beside a top-level graded test, or inserted into its module
}
_WORDS = re.compile(r"def test_?(\w+)")
_FALLBACK_WORDS = ("value", "result", "case", "input", "default", "output", "basic", "format", "empty", "order")


@dataclass
class Canaries:
    """The canaries of one grading: {test function name: repository file} and the runner that runs them."""

    runner: str
    planted: dict[str, str] = field(default_factory=dict)
    command: str | None = None  # the test command with runs of the canaries added (swebench's Maven rows: a run each), if it needs them

    def problems(self, statuses: dict[str, str]) -> list[str]:
        """Each canary must be reported failed or errored; `statuses` is the parsed log."""
        if not self.planted or not any(status == "PASSED" for status in statuses.values()):
            return []  # nothing passed: no verdict to doubt (a run that did not start is graded 0 anyway)
        problems = []
        for name, path in self.planted.items():
            reported = [status for test, status in statuses.items() if _reports(self.runner, test, name)]
            if not reported:
                problems.append(f"the canary test {name} (planted in {path}, it must fail) is missing from the log: the runner's verdicts were filtered")
            elif any(status not in ("FAILED", "ERROR") for status in reported):
                problems.append(f"the canary test {name} (planted in {path}, it must fail) is reported {reported[-1]}: the runner's verdict was forged")
        return problems


def _reports(runner: str, test: str, name: str) -> bool:
    """Whether the parsed test id `test` is the canary `name`."""
    if runner == "rspec":
        return runner_canaries.rspec_reports(test, name)
    return test == name if runner in _EXACT_NAMES else _names(test, name)


def _names(test: str, name: str) -> bool:
    """Whether a parsed test id is the function `name`: pytest `file::name[param]`, Django `name (module.Class)`,
    sympy `name`, or `file.py:name` (sympy's failure header: its verbose line for a file's last test ends in
    `[FAIL]`, which the parser does not read)."""
    return re.search(rf"(?:^|:|\.){re.escape(name)}(?:$|\s|\[)", test) is not None


def wanted(runner: str | None, command: str) -> bool:
    if runner == "googletest":
        return runner_canaries.googletest_planted(command)
    if runner == "cargo":
        return runner_canaries.cargo_planted(command)
    if runner in _JAVASCRIPT:
        return runner_canaries.javascript_planted(runner, command)
    if runner == "maven":
        return junit_canaries.planted(command) or junit_canaries.runs_each_test(command)
    if runner == "phpunit":
        return phpunit_canaries.planted(command)
    if runner == "ruby_unit":
        return runner_canaries.ruby_unit_planted(command)
    if runner == "rspec":
        return runner_canaries.rspec_planted(command)
    if runner == "karma":
        return karma_canaries.planted(command)
    return runner in PLANTED_FOR and STOPS_AT_FIRST_FAILURE.search(command) is None


def target_files(runner: str, test_patch: str, graded: list[str], command: str = "") -> list[str]:
    """The test files the test patch touches that hold graded tests (pytest: by the tests' ids), or that are
    test modules (Django, sympy: their ids do not name files); for go test and runtest, those `command` runs."""
    if runner == "gotest":
        packages = runner_canaries.go_packages(command) or []
        return [path for path in patch_files(test_patch) if path.endswith("_test.go") and runner_canaries.go_runs_file(path, packages)]
    if runner == "redis":
        return runner_canaries.redis_files(command, patch_files(test_patch))
    if runner == "googletest":
        return runner_canaries.googletest_files(patch_files(test_patch))
    if runner == "cargo":
        return runner_canaries.cargo_files(patch_files(test_patch))
    if runner in _JAVASCRIPT:
        return runner_canaries.javascript_files(command, patch_files(test_patch))
    if runner == "phpunit":
        return phpunit_canaries.files(command, patch_files(test_patch))
    if runner == "ruby_unit":
        return runner_canaries.ruby_unit_files(command, patch_files(test_patch))
    if runner == "rspec":
        return runner_canaries.rspec_files(command, patch_files(test_patch))
    if runner == "karma":
        return karma_canaries.files(command, patch_files(test_patch))
    touched = [path for path in patch_files(test_patch) if path.endswith(".py")]
    if runner == "pytest":
        files = {test.split("::")[0] for test in graded if "::" in test}
        return [path for path in touched if path in files]
    return [path for path in touched if re.fullmatch(r"tests?(_\w*)?\.py|\w+_tests?\.py", PurePosixPath(path).name)]


def source(runner: str, text: str, graded: list[str] | tuple[str, ...] = (), command: str = "", path: str = "") -> tuple[str, list[str]]:
    """Canary code to append to a test file (its text; its repository path for Rust, whose modules are files), and the
    test names it defines (go test, runtest, googletest, cargo: named after `graded` tests, to pass `command`'s
    filters; none where they cannot be)."""
    if runner == "googletest":
        return runner_canaries.googletest_source(text, list(graded))
    if runner == "cargo":
        return runner_canaries.cargo_source(path, text, list(graded))
    if runner in _JAVASCRIPT:
        return runner_canaries.javascript_source(runner, path, text, list(graded), command)
    if runner == "ruby_unit":
        return runner_canaries.ruby_unit_source(text, list(graded), command)
    if runner == "rspec":
        return runner_canaries.rspec_source(path, text, list(graded), command)
    if runner == "gotest":
        return runner_canaries.go_source(text, list(graded), runner_canaries.go_run_pattern(command))
    if runner == "redis":
        return runner_canaries.redis_source(text, list(graded), runner_canaries.redis_only(command))
    words = [word for found in _WORDS.findall(text) for word in found.split("_") if word.isidentifier() and not word[0].isdigit()]
    pool = sorted(set(words))
    pool += _FALLBACK_WORDS if len(pool) < 4 else ()  # enough words for names the file does not have
    names: list[str] = []
    while len(names) < 2:
        name = "test_" + "_".join(secrets.choice(pool) for _ in range(2 + secrets.randbelow(2)))
        if not _used(name, text) and name not in names:
            names.append(name)
    expected, got = secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    separator = "" if text.endswith("\n") or not text else "\n"
    if runner == "django":
        class_name = "".join(part.title() for part in names[0].split("_")[1:]) + "Tests"
        while _used(class_name, text):  # a class of the module's own name would replace it, and its tests
            class_name += secrets.choice("ABCDEFGH")
        body = (f"\n\nclass {class_name}(__import__('unittest').TestCase):\n"
                f"    def {names[0]}(self):\n        self.assertEqual(len({'x' * got!r}), {expected})\n\n"
                f"    def {names[1]}(self):\n        raise ValueError({names[1][5:]!r})\n")  # fmt: skip
    else:
        body = (f"\n\ndef {names[0]}():\n    assert len({'x' * got!r}) == {expected}\n\n\n"
                f"def {names[1]}():\n    raise ValueError({names[1][5:]!r})\n")  # fmt: skip
    return separator + body, names


def _used(name: str, text: str) -> bool:
    """Whether the file already has `name` (a canary of the same name would replace it)."""
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


async def plant(deployment: Deployment, repo_dir: str, runner: str, test_patch: str, graded: list[str], command: str = "") -> Canaries:
    """Append canaries to the test files of `test_patch` (after it is applied; JUnit's: new files beside them); the
    files are reset to the start commit by the next grading like every file of the test patch, and a grading
    sandbox is a fresh one (`reward.sandbox: fresh`), gone with its canaries."""
    canaries = Canaries(runner)
    if runner == "maven":
        return await _plant_classes(deployment, repo_dir, test_patch, graded, command, canaries)
    if runner == "rspec" and await _fails_fast(deployment, repo_dir, (".rspec", "spec/spec_helper.rb"), _RSPEC_FAILS_FAST):
        return canaries  # a failing canary would end the run
    if runner == "karma" and await _fails_fast(deployment, repo_dir, (karma_canaries.configuration(command),), karma_canaries.BAILS):
        return canaries
    if runner in _INSERTED:
        return await _plant_inside(deployment, repo_dir, runner, test_patch, graded, command, canaries)
    for path in target_files(runner, test_patch, graded, command):
        full = f"{repo_dir.rstrip('/')}/{path}"
        text = await _text_of(deployment, full)
        code, names = source(runner, text, graded, command, path) if text is not None else ("", [])
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


async def _plant_inside(deployment: Deployment, repo_dir: str, runner: str, test_patch: str, graded: list[str], command: str, canaries: Canaries) -> Canaries:
    """Canaries written into the test file rather than after it: PHPUnit's methods into the class of each test-patch
    file the command runs (`phpunit_canaries.py`), karma's `it`s beside a graded one (`karma_canaries.py`), Rust's
    functions inside the module of a graded test (`runner_canaries.cargo_rewritten`)."""
    for path in target_files(runner, test_patch, graded, command):
        full = f"{repo_dir.rstrip('/')}/{path}"
        text = await _text_of(deployment, full)
        rewritten, names = _INSERTED[runner](path, text, graded) if text is not None else ("", [])
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
