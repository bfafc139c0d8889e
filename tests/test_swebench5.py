"""swebench 5.x decides every row: its parsers by name (each bound to the task's `TestSpec`), its grading under the
row's `eval_type`, its rules for runs it will not grade, and the columns of a 5.x row (`image`, `log_parser`,
`eval_type`, `eval_script`); rows written for 4.x keep their 4.1.0 specs (`uni_agent_gym/swebench4`), and swesmith's
profiles still import. swebench itself is the oracle here wherever it can run: its `get_logs_eval` and
`get_eval_report` on the same logs the gym grades."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT, TEST_EXIT_CODE
from swebench.harness.grading import get_eval_report, get_logs_eval

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task, log_parser
from uni_agent_gym.datasets.base import swebench_parser, swebench_test_spec
from uni_agent_gym.datasets.eval_scripts import eval_script_steps
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.integrity import check_log
from uni_agent_gym.rewards.swebench import grade_fail_to_pass, graded_names, rejected_run

RUNNER_LOGS = Path(__file__).parent / "runner_logs"
LITE = Path(__file__).resolve().parents[2] / "shared" / "swebench" / "lite.jsonl"
# the parser each runner log of tests/runner_logs is graded with (its README says what ran)
LOG_PARSERS = {"django": "parse_log_django", "sympy": "parse_log_sympy", "gotest": "parse_log_gotest", "redis": "parse_log_redis",
               "cargo": "parse_log_cargo", "jest": "parse_log_jest", "vitest": "parse_log_vitest", "phpunit": "parse_log_phpunit",
               "googletest": "parse_log_googletest", "doctest": "parse_log_doctest", "ruby-unit": "parse_log_ruby_unit",
               "mocha-tap": "parse_log_tap", "qunit": "parse_log_tap", "automake": "parse_log_jq", "maven": "parse_log_maven"}  # fmt: skip


def swebench_log(tmp_path: Path, output: str, exit_code: int | None) -> Path:
    """`output` as swebench 5.x's harness writes an eval log: between its markers, the tests' exit code after them."""
    path = tmp_path / "test_output.txt"
    code = "" if exit_code is None else f"{TEST_EXIT_CODE}: {exit_code}\n"
    path.write_text(f"+ : '{START_TEST_OUTPUT}'\n{output}\n+ : '{END_TEST_OUTPUT}'\n{code}")
    return path


def runner_logs() -> list[tuple[str, str, int]]:
    """Every runner log with its parser and the exit code it was captured with (a failing run's: 1, cargo's 101)."""
    found = []
    for path in sorted(RUNNER_LOGS.glob("*.log")):
        prefix = max((name for name in LOG_PARSERS if path.stem.startswith(name)), key=len)
        failing = any(word in path.stem for word in ("fail", "broken", "error"))
        found.append((path.stem, LOG_PARSERS[prefix], (101 if prefix == "cargo" else 1) if failing else 0))
    return found


@pytest.mark.parametrize("wrong_exit_code", [False, True], ids=["its-exit-code", "the-other-exit-code"])
@pytest.mark.parametrize("name, parser, exit_code", runner_logs(), ids=[log[0] for log in runner_logs()])
def test_no_run_that_swebench_will_not_grade_is_a_pass_here(tmp_path, name, parser, exit_code, wrong_exit_code):
    """Over the suite's 59 runner logs, each with its own exit code and with the other one: where swebench 5.x's
    `get_logs_eval` refuses to grade a run (no outcome and no sign a suite ran; a non-zero exit with no test failed),
    the gym's checks refuse it too (its cross-checks, or `rejected_run`)."""
    exit_code = (0 if exit_code else 1) if wrong_exit_code else exit_code
    log = (RUNNER_LOGS / f"{name}.log").read_text()
    spec = swebench_test_spec(Task(instance_id="o__r-1", repo="o/r", family="swe-bench", version="1"), parser)
    _, graded_by_swebench = get_logs_eval(spec, str(swebench_log(tmp_path, log, exit_code)))
    statuses = swebench_parser(parser, "o__r-1")(log)
    problems = check_log(parser, "", log, statuses, exit_code) + [problem for problem in [rejected_run(statuses, log, exit_code)] if problem]
    passes_here = not problems and "PASSED" in statuses.values()
    assert graded_by_swebench or not passes_here, (problems, statuses)


def test_rejected_run_says_why():
    assert rejected_run({}, "nothing ran\n", 0).startswith("no test outcome in the log and no sign that a suite ran")
    assert rejected_run({}, "Tests:       3 passed, 3 total\n", 0) is None  # jest's summary: it ran (every test passed, none listed)
    assert rejected_run({"a": "PASSED"}, "", 1) == "the tests exited 1 although no test failed (swebench's rule: such a run is not graded)"
    assert rejected_run({"a": "PASSED", "b": "FAILED"}, "", 1) is None


def test_a_parser_gets_the_tasks_spec():
    """swebench 5.x's parsers of alibaba-fusion/next and lighthouse pick their format by the spec's `version`: the
    stand-in spec with the instance id alone raised, so every rollout of such a row was `tests_crashed`. The spec is
    swebench's own `TestSpec` of the task, and the parser keeps its name (the log cross-checks find its runner by it)."""
    from types import SimpleNamespace

    from uni_agent_gym.datasets.base import swebench_parser_functions

    tasks = {"parse_log_next": Task(instance_id="alibaba-fusion__next-1", repo="alibaba-fusion/next", family="swe-bench", version="1.27"),
             "parse_log_lighthouse": Task(instance_id="GoogleChrome__lighthouse-1", repo="GoogleChrome/lighthouse", family="swe-bench", version="10.0")}  # fmt: skip
    for name, task in tasks.items():
        parse = swebench_parser(name, task.replace(FAIL_TO_PASS=["a"], PASS_TO_PASS=[]))
        assert parse.__name__ == name and isinstance(parse("  ✓ a\n"), dict)
        with pytest.raises(AttributeError, match="version"):  # the stand-in of before
            swebench_parser_functions()[name]("  ✓ a\n", SimpleNamespace(instance_id=task.instance_id))
    spec = swebench_test_spec(tasks["parse_log_next"].replace(FAIL_TO_PASS=["a"], eval_type="fail_only"), "parse_log_next")
    assert (spec.instance_id, spec.version, spec.repo, spec.FAIL_TO_PASS, spec.eval_type) == ("alibaba-fusion__next-1", "1.27", "alibaba-fusion/next", ["a"], "fail_only")


def test_an_id_cut_short_inside_its_parameters_is_graded_as_swebench_5_grades_it():
    """sphinx-8713's listed ids were cut at a space inside their parameters (swebench issue #290); 5.x's
    `parse_log_pytest_v2` keeps the whole id and its grading matches the cut id by prefix. The outcome is reported
    under the listed id, and the log cross-checks vouch for every whole id it stands for: a pass forged for one of
    them, with pytest's real report of it failing, is found."""
    listed = "tests/test_ext_napoleon_docstring.py::TestNumpyDocstring::test_escape_args_and_kwargs[x,"
    whole = [f"{listed} y, z-x, y, z]", f"{listed} y-x, y]"]
    task = Task(instance_id="sphinx-doc__sphinx-8713", repo="sphinx-doc/sphinx", family="swe-bench", FAIL_TO_PASS=[listed], PASS_TO_PASS=[])
    log = "".join(f"PASSED {test}\n" for test in whole)
    statuses = swebench_parser("parse_log_pytest_v2", task)(log)
    assert set(statuses) == set(whole)  # 4.1's parser cut each at its first space: the listed id
    resolved, report, outcomes = grade_fail_to_pass(task, statuses)
    assert resolved and outcomes == {listed: "PASSED"} and report["FAIL_TO_PASS"]["success"] == [listed]
    assert graded_names(listed, statuses) == whole and graded_names("exact::id", statuses) == ["exact::id"]
    failing = {whole[0]: "FAILED", whole[1]: "PASSED"}
    assert not grade_fail_to_pass(task, failing)[0]  # the ids it stands for disagree: not passed
    forged = f"FAILED {whole[0]}\nPASSED {whole[1]}\nPASSED {whole[0]}\n"
    problems = check_log("parse_log_pytest_v2", "", forged, swebench_parser("parse_log_pytest_v2", task)(forged), 0, graded_names(listed, statuses))
    assert any(f"{whole[0]} is reported PASSED" in problem for problem in problems), problems


@pytest.mark.parametrize("statuses", [{"F1": "PASSED"}, {"F1": "PASSED", "F2": "ERROR"}, {"F1": "PASSED", "F2": "FAILED"},
                                      {"F1": "PASSED", "F2": "SKIPPED", "P1": "PASSED"}, {}], ids=str)  # fmt: skip
@pytest.mark.parametrize("eval_type", ["pass_and_fail", "fail_only"])
def test_each_eval_type_grades_as_swebench_5_grades_it(statuses, eval_type):
    """`fail_only`: a listed test fails only where its log says FAILED (missing, errored or skipped: passed), as swebench
    grades the repositories whose parsers record failures alone; `pass_and_fail`: it must pass."""
    from swebench.harness.constants import EvalType
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status

    task = Task(instance_id="o__r-1", repo="o/r", family="swe-bench", FAIL_TO_PASS=["F1", "F2"], PASS_TO_PASS=["P1"], eval_type=eval_type)
    official = get_eval_tests_report(statuses, {"FAIL_TO_PASS": ["F1", "F2"], "PASS_TO_PASS": ["P1"]}, eval_type=EvalType(eval_type))
    assert grade_fail_to_pass(task, statuses)[0] is (get_resolution_status(official) == "RESOLVED_FULL")
    assert grade_fail_to_pass(task, statuses)[0] is (eval_type == "fail_only" and "FAILED" not in statuses.values())


def test_the_lite_rows_whose_grading_path_moves_are_the_four_pytest_v2_rows_with_cut_ids():
    """Read, not run (their images cannot be built here): the Lite rows whose listed ids are cut inside their
    parameters and whose parser keeps whole ids under 5.x (`parse_log_pytest_v2`: astropy, scikit-learn, sphinx). 4.1's
    parser cut the parsed ids at the same space, so both matched exactly; 5.x matches by prefix. Their verdicts move
    only where the ids a cut one stands for disagree (then 5.x fails it, 4.1 took the last line's status)."""
    if not LITE.exists():
        pytest.skip("../shared/swebench/lite.jsonl is not beside the checkout")
    from uni_agent_gym.datasets.swebench import repo_parser_name

    moved = sorted(row["instance_id"] for row in map(json.loads, LITE.read_text().splitlines())
                   if repo_parser_name(row["repo"]) == "parse_log_pytest_v2"
                   and any(test.count("[") > test.count("]") for test in json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])))  # fmt: skip
    assert moved == ["scikit-learn__scikit-learn-25570", "scikit-learn__scikit-learn-25638", "sphinx-doc__sphinx-10451", "sphinx-doc__sphinx-8713"]


def test_a_5x_rows_eval_script_gives_its_exports_build_and_tests_and_nothing_of_the_harness():
    from tests.c_toy import swebench_5_row

    row = swebench_5_row("0" * 40, "uag-tests/c-toy-5:latest")
    steps = eval_script_steps(row["instance_id"], row["eval_script"])
    assert (steps.exports, steps.build, steps.tests) == (["export CFLAGS=-O0"], ["make"], ["./tests/check"])
    task = normalise(row)
    assert (task.language, task.image_name, task.log_parser, task.eval_type) == ("c", "uag-tests/c-toy-5:latest", "parse_log_redis", "pass_and_fail")
    assert (task.build_command, task.test_command, task.commands_from) == ("export CFLAGS=-O0 && make", "export CFLAGS=-O0; ./tests/check", None)
    with pytest.raises(Exception, match="field eval_script has no '>>>>> Start Test Output'"):
        normalise({**row, "eval_script": "#!/bin/bash\nmake\n./tests/check\n"})
    with pytest.raises(Exception, match="field eval_type is 'fail-only', expects pass_and_fail or fail_only"):
        normalise({**row, "eval_type": "fail-only"})


def test_the_repositories_swebench_grades_by_failures_only_are_fail_only():
    row = json.loads((Path(__file__).parent / "rows" / "swe-bench-multilingual.jsonl").read_text().splitlines()[0])
    bare = {key: value for key, value in row.items() if key not in ("eval_type", "eval_script", "log_parser", "image")}
    assert normalise({**bare, "repo": "eslint/eslint", "version": "9.0"}).eval_type == "fail_only"  # swebench's FAIL_ONLY_REPOS
    assert normalise(bare).eval_type == "pass_and_fail"
    assert normalise({**bare, "eval_type": "fail_only"}).eval_type == "fail_only"  # the row's own column wins


@pytest.fixture
async def c_toy_5x(tmp_path):
    """The C toy's 5.x-form row, on its mirror (it needs no environment: the host's compiler), and a local config."""
    from tests.c_toy import REPO, REPO_NAME, swebench_5_row
    from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

    base_commit = await head_commit(await mirror_repository(REPO_NAME, str(REPO), str(tmp_path)))
    config = GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path), "workspace": "mirror"}})

    def row(eval_type: str = "pass_and_fail") -> dict:
        return {**swebench_5_row(base_commit, "uag-tests/c-toy-5:latest", eval_type), "mirror": str(REPO), "needs_environment": False}

    return row, config


@pytest.mark.parametrize("eval_type", ["pass_and_fail", "fail_only"])
async def test_a_5x_row_grades_from_its_own_columns_as_swebench_5_grades_it(c_toy_5x, tmp_path, eval_type):
    """The C toy's 5.x-form row on local, graded by the reward with its eval script's build and tests (nothing else
    given): gold earns 1, the bug 0, and a patch whose tests print nothing and exit 0 earns 0. Under `fail_only` that
    last run passes every test by swebench's grading of its outcomes alone (none FAILED): swebench refuses to grade a run
    with no sign a suite ran, and the reward refuses it too. Each verdict is swebench 5.x's own `get_eval_report` on the
    same output."""
    from tests.test_deployment_contract import graded_episode

    from tests.c_toy import GOLD_PATCH

    row, config = c_toy_5x
    typed = "git apply <<'UAG_EOF'\n{}UAG_EOF"
    # the fix, and the test binary made to exit 0 before its main prints a line (tests/check.c is the test patch's)
    silent = "printf '#include <unistd.h>\\n__attribute__((constructor)) static void quit(void) { _exit(0); }\\n' >> arith.c"
    runs = {name: await graded_episode(config, row(eval_type), commands) for name, commands in
            {"gold": [typed.format(GOLD_PATCH)], "bug": ["echo '/* no fix */' >> arith.h"], "silent": [typed.format(GOLD_PATCH), silent]}.items()}  # fmt: skip
    assert (runs["gold"]["status"], runs["gold"]["reward"], runs["gold"]["build_command"]) == ("resolved", 1.0, "export CFLAGS=-O0 && make"), runs["gold"]
    assert (runs["bug"]["status"], runs["bug"]["reward"]) == ("unresolved", 0.0), runs["bug"]
    assert runs["bug"]["test_statuses"]["add of large numbers"] == "FAILED"  # the row's test patch ran
    assert (runs["silent"]["status"], runs["silent"]["reward"]) == ("unresolved", 0.0), runs["silent"]
    assert any("no sign that a suite ran" in problem for problem in runs["silent"]["integrity_problems"]), runs["silent"]
    spec = swebench_test_spec(normalise(row(eval_type)), "parse_log_redis")
    for name, report in runs.items():
        output = report["log"].split(f"{START_TEST_OUTPUT}\n", 1)[1].rsplit(f"\n{END_TEST_OUTPUT}", 1)[0]
        official = get_eval_report(spec, {"instance_id": spec.instance_id, "model_patch": report["patch"]},
                                   str(swebench_log(tmp_path, output, report["exit_code"])), include_tests_status=False)  # fmt: skip
        assert official[spec.instance_id]["resolved"] is report["resolved"], (name, official, report["integrity_problems"])


async def test_a_run_that_prints_an_infrastructure_sign_is_labelled_never_masked(c_toy_5x):
    """swebench 5.x reads an unresolved run's output for signs of a broken environment (`infra_failure`). The code under
    test can print them, so the reward report carries the label for people reading it, and the grading stays the
    patch's: unresolved, reward 0, not an infrastructure failure (which training would mask)."""
    from tests.test_deployment_contract import graded_episode

    row, config = c_toy_5x
    printing = "sed -i 's|return a - b;|puts(\"Could not resolve host: example.com\"); return a - b;|; 1i #include <stdio.h>' arith.c"
    report = await graded_episode(config, row(), [printing])
    assert (report["status"], report["reward"], report["caused_by"]) == ("unresolved", 0.0, None), report
    assert report["infra_label"] == {"reason": "network_unreachable", "tier": "environment"}


def test_swesmith_profiles_import_under_swebench_5_and_leave_swebench_as_it_was():
    """swesmith 0.0.9 imports `DOCKER_USER`, `DOCKER_WORKDIR`, `KEY_INSTANCE_ID` and `harness.dockerfiles`, which
    swebench 5.x removed; the gym imports its profiles with those names aliased for the import alone."""
    import subprocess

    code = ("import sys, swebench.harness.constants as c\n"
            "from uni_agent_gym.datasets import swesmith_profiles\n"
            "registry = swesmith_profiles.registry()\n"
            "print(len(list(registry.keys())) > 100, hasattr(c, 'DOCKER_USER'), sys.modules['swebench.harness.constants'] is c,\n"
            "      'swebench.harness.dockerfiles' in sys.modules)\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "False", "True", "False"], done.stdout + done.stderr
    plain = subprocess.run([sys.executable, "-c", "import swesmith.profiles"], capture_output=True, text=True, timeout=120)
    assert "cannot import name 'DOCKER_USER'" in plain.stderr  # why the aliases: swesmith on its own does not import


def test_rows_written_for_4x_keep_their_specs_and_grading():
    """A SWE-bench Lite row (no 5.x columns) keeps 4.1.0's spec and test directives and is graded `pass_and_fail`."""
    if not LITE.exists():
        pytest.skip("../shared/swebench/lite.jsonl is not beside the checkout")
    from uni_agent_gym.specs import command_of_tests

    row = next(row for row in map(json.loads, LITE.read_text().splitlines()) if row["instance_id"] == "pallets__flask-4992")
    task = normalise(row)
    assert (task.eval_type, task.log_parser) == ("pass_and_fail", "parse_log_pytest")
    assert command_of_tests(task) == "pytest -rA tests/test_config.py"
    assert log_parser(task)("PASSED tests/test_config.py::test_x\n") == {"tests/test_config.py::test_x": "PASSED"}


C_TOY_5X_IMAGE = "uni-agent-gym-tests/c-toy-5:latest"
# The image a 5.x harness would pull for the C toy's row: the repository at /testbed as one commit (a fixed author
# and date, so its id is the row's base_commit wherever it is built), on the base image (gcc and make).
C_TOY_5X_DOCKERFILE = """FROM {base}
COPY . /testbed
RUN cd /testbed && git init -q && git add -A \\
 && GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z \\
    git -c user.name=uag -c user.email=uag@example.com commit -qm base && git rev-parse HEAD > /base_commit
WORKDIR /testbed
"""


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_5x_row_of_a_repository_4x_never_listed_validates_from_its_own_columns(tmp_path, docker_image):
    """The C toy's 5.x-form row (a repository swebench 4.1 has no spec for: no environments entry, no mirror, nothing
    but its columns) on the image it names, through `uni-agent-gym validate` on docker: its eval script's build and
    tests grade the gold patch 1.0, its test patch alone 0.0, the empty patch 0.0."""
    import subprocess

    import docker

    from tests.c_toy import REPO, swebench_5_row

    client = docker.from_env()
    try:
        image = client.images.get(C_TOY_5X_IMAGE)
    except docker.errors.ImageNotFound:
        context = tmp_path / "context"
        subprocess.run(["cp", "-r", str(REPO), str(context)], check=True)
        (context / "Dockerfile").write_text(C_TOY_5X_DOCKERFILE.format(base=docker_image))
        (context / ".dockerignore").write_text("Dockerfile\n.dockerignore\n")
        image, _ = client.images.build(path=str(context), tag=C_TOY_5X_IMAGE, labels={"uni-agent-gym": "1"}, rm=True)
    base_commit = client.containers.run(image.id, "cat /base_commit", remove=True).decode().strip()
    (tmp_path / "rows.jsonl").write_text(json.dumps(swebench_5_row(base_commit, C_TOY_5X_IMAGE)) + "\n")
    (tmp_path / "config.json").write_text(json.dumps({"env": {"cache_dir": str(tmp_path / "cache"), "workspace": "image"},
                                                      "deployment": {"type": "docker", "image": docker_image}}))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "validate", "--dataset", str(tmp_path / "rows.jsonl"), "--config",
                           str(tmp_path / "config.json"), "--output", str(tmp_path / "out"), "--variants", "0"], capture_output=True, text=True, timeout=800)  # fmt: skip
    report = json.loads((tmp_path / "out" / "validation.json").read_text())
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:], report)
    runs = report["results"][0]["runs"]
    assert [(runs[name]["status"], runs[name]["reward"]) for name in ("gold", "test patch alone", "empty")] == [
        ("resolved", 1.0), ("unresolved", 0.0), ("unresolved", 0.0)], runs


# A real log of the runner of each vendored 5.x row's parser (tests/runner_logs; gson's Maven runs and fpm's rspec are
# run for real in tests/test_languages_datasets.py and tests/test_canaries.py)
RUNNER_LOG_OF = {"parse_log_redis": "redis-pass", "parse_log_jq": "automake-pass", "parse_log_googletest": "googletest-pass",
                 "parse_log_gotest": "gotest-pass", "parse_log_immutable_js": "jest-pass", "parse_log_cargo": "cargo-pass",
                 "parse_log_phpunit": "phpunit-pass"}  # fmt: skip


def test_each_vendored_5x_rows_parser_reads_a_real_log_of_its_runner():
    rows = [json.loads(line) for line in (Path(__file__).parent / "rows" / "swe-bench-multilingual.jsonl").read_text().splitlines()]
    for row in rows:
        if row["log_parser"] not in RUNNER_LOG_OF:
            assert row["log_parser"] in ("parse_log_maven", "parse_log_rspec_transformed_json"), row["log_parser"]
            continue
        statuses = log_parser(normalise(row))((RUNNER_LOGS / f"{RUNNER_LOG_OF[row['log_parser']]}.log").read_text())
        assert statuses and set(statuses.values()) <= {"PASSED", "SKIPPED", "XFAIL"}, (row["instance_id"], statuses)


def test_the_docs_name_every_parser_of_swebench_as_tested_here_or_not():
    """docs/rewards.md lists the parsers run on a real log of their runner in the suite, then the rest of swebench's
    registry as untested: together, every parser once."""
    import re

    from uni_agent_gym.datasets.base import swebench_parser_functions

    section = (Path(__file__).resolve().parents[1] / "docs" / "rewards.md").read_text().split("Parsers run on a real log")[1].split("swesmith 0.0.9")[0]
    named = [name if name.startswith("parse_log") else f"parse_log{name}" for name in re.findall(r"`((?:parse_log)?_?\w+)`", section)
             if name.startswith(("_", "parse_log"))]  # fmt: skip
    assert sorted(named) == sorted(swebench_parser_functions()), set(named) ^ set(swebench_parser_functions())
