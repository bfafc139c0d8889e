"""Tasks in any language, with no sandbox: real rows of SWE-bench Multilingual (tests/rows/, vendored),
Multi-SWE-bench and SWE-rebench-V2 (../shared/datasets) become tasks of the right family and language,
with swebench's build and test commands or the multi-swe-bench package's harness (its image, its
fix-run script's command, its own `parse_log`); rows the gym cannot run say why in one line, also in
`uni-agent-gym datasets`."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from uni_agent_gym import dataset_summary
from uni_agent_gym.datasets import FAMILIES, detect, log_parser, normalise
from uni_agent_gym.datasets.swebench import PARSERS_NAMING_TESTS_BY_COMMAND, as_eval_script
from uni_agent_gym.instances import InstanceError
from uni_agent_gym.rewards.integrity import check_log
from uni_agent_gym.rewards.swebench import grade_fail_to_pass
from uni_agent_gym.specs import SpecError, environment_spec

MULTILINGUAL = Path(__file__).resolve().parent / "rows" / "swe-bench-multilingual.jsonl"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
MULTI_SWE_BENCH = {"multi-swe-bench.jsonl": 5, "multi-swe-bench.fasterxml__jackson-core.jsonl": 18, "multi-swe-bench.fasterxml__jackson-dataformat-xml.jsonl": 5}  # rows each
needs_shared = pytest.mark.needs(SHARED.exists(), "../shared/datasets beside the checkout")


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def multilingual(instance_id: str) -> dict:
    return next(row for row in rows_of(MULTILINGUAL) if row["instance_id"] == instance_id)


def shared(name: str, instance_id: str | None = None) -> dict:
    rows = rows_of(SHARED / name)
    return next(row for row in rows if instance_id in (None, row["instance_id"]))


MULTILINGUAL_LANGUAGES = {  # swebench files C++ repositories (fmt, nlohmann/json) under c, TypeScript ones under js
    "redis__redis-12272": "c", "jqlang__jq-2235": "c", "fmtlib__fmt-3158": "c", "gin-gonic__gin-3227": "go",
    "immutable-js__immutable-js-2006": "javascript", "google__gson-2311": "java", "uutils__coreutils-6690": "rust",
    "laravel__framework-53949": "php", "jordansissel__fpm-1850": "ruby",
    # the other rows tests/languages/ re-bases onto Debian's releases
    "redis__redis-13338": "c", "redis__redis-11631": "c", "redis__redis-10764": "c", "gin-gonic__gin-3741": "go", "gin-gonic__gin-3820": "go",
}  # fmt: skip


def test_every_vendored_multilingual_row_is_a_swe_bench_task_in_its_language():
    rows = rows_of(MULTILINGUAL)
    assert {row["instance_id"] for row in rows} == set(MULTILINGUAL_LANGUAGES)
    for row in rows:
        family, why = detect(row)
        assert (family.name, why) == ("swe-bench", "SWE-bench columns with log_parser and eval_script (SWE-bench 5.x rows)")
        task = normalise(row)
        assert task.language == MULTILINGUAL_LANGUAGES[row["instance_id"]] == family.language(row)
        assert normalise(task) == task, "a task normalised again is the same task"
        assert task.image_name == row["image"]  # a 5.x row names its image (this branch's rows: `amd64.<id>:latest`)
        assert task.workdir == "/testbed" and task.log_parser == row["log_parser"]
        # swebench's eval script runs the build commands, then the test commands, which already name the tests
        tests = row["eval_script"].split(": '>>>>> Start Test Output'\n")[1].split("\n: '>>>>> End Test Output'")[0]
        assert task.test_command == as_eval_script(tests.split("\n"), row["log_parser"])
        if row["log_parser"] in PARSERS_NAMING_TESTS_BY_COMMAND:  # it names tests by the traced command: the script traces
            assert row["eval_script"].startswith("#!/bin/bash\nset -uxo pipefail\n")
        else:
            assert task.test_command == tests.replace("\n", "; ")
        before_tests = row["eval_script"].split(": '>>>>> Start Test Output'")[0].rstrip()
        assert task.build_command is None or before_tests.endswith("\n".join(task.build_command.split(" && ")))
        log_parser(task)  # swebench has the parser the row names
        # the commands come from the row's eval script, and are those swebench 4.1's spec of its repository gave
        from_spec = normalise({key: value for key, value in row.items() if key != "eval_script"})
        assert (task.test_command, task.build_command, task.commands_from) == (from_spec.test_command, from_spec.build_command, None)
        assert from_spec.commands_from == "swebench-spec"


def run_as_graded(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A task's test command run by real bash as the grader runs it: in a subshell, output and errors one log."""
    return subprocess.run(["bash", "-c", f"( {command} ) 2>&1"], env=env, capture_output=True, text=True, cwd=cwd)


# A stand-in for Maven's daemon (no JDK here; `test_language_attacks.py` runs the real Maven): surefire's closing lines
# for the one test `-Dtest=` names, failing those in $FAILING, exit 1 on failure, as `mvn test` prints and exits.
STAND_IN_MVND = """#!/bin/sh
test=$(printf '%s\\n' "$@" | sed -n 's/^-Dtest=//p')
case " $FAILING " in *" $test "*) failures=1 verdict=FAILURE code=1 level=ERROR ;; *) failures=0 verdict=SUCCESS code=0 level=INFO ;; esac
printf '[INFO] Running %s\\n[%s] Tests run: 1, Failures: %s, Errors: 0, Skipped: 0\\n[INFO] BUILD %s\\n' "${test%#*}" $level $failures $verdict
exit $code
"""


@pytest.mark.parametrize("failing", [[], ["com.google.gson.JsonPrimitiveTest#testEqualsIntegerAndBigInteger"], ["com.google.gson.JsonPrimitiveTest#testEqualsAcrossTypes"]])
def test_maven_runs_of_a_multilingual_row_name_each_test_by_its_command(tmp_path, failing):
    """gson-2311's three `mvnd test -Dtest=X` runs, as the task's command runs them (real bash, the row's own
    commands, swebench's `parse_log_maven`): each run's trace names its test, every run runs, a failure in the first
    run is in the exit code, and the log agrees with Maven's cross-check. Joined with `; ` as before (no trace), the
    parser names no test: a gold patch earned 0 on every Maven row of SWE-bench Multilingual."""
    (tmp_path / "mvnd").write_text(STAND_IN_MVND)
    (tmp_path / "mvnd").chmod(0o755)
    task = normalise(multilingual("google__gson-2311"))
    tests = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "FAILING": " ".join(failing)}

    def run(command: str) -> subprocess.CompletedProcess:
        return run_as_graded(command, tmp_path, env)

    ran, parse = run(task.test_command), log_parser(task)
    assert parse(ran.stdout) == {test: "FAILED" if test in failing else "PASSED" for test in tests}, ran.stdout
    assert ran.returncode == (1 if failing else 0)
    assert check_log(task.log_parser, task.test_command, ran.stdout, parse(ran.stdout), ran.returncode) == []
    assert check_log(task.log_parser, task.test_command, ran.stdout, parse(ran.stdout), 0 if failing else 137) != []
    assert parse(run("; ".join(f"mvnd test -B -Dtest={test}" for test in tests)).stdout) == {}  # (4.1's named one "---NO TEST NAME FOUND YET---")


def test_calypsos_jest_runs_are_traced_for_its_parser(tmp_path):
    """wp-calypso's parser reads only what follows a `./node_modules/.bin/jest` command line, which swebench's eval
    script traces: a row's two test files, as the task's command runs them (real bash, a stand-in jest printing
    jest's verbose lines), are both read; untraced, neither is."""
    (tmp_path / "node_modules/.bin").mkdir(parents=True)
    jest = tmp_path / "node_modules/.bin/jest"
    jest.write_text("#!/bin/sh\nfor last; do :; done\nprintf '  %s\\n    \\342\\234\\223 works (3ms)\\n' \"$last\"\n")
    jest.chmod(0o755)
    diff = "".join(f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n" for path in ("client/a/test/a.js", "client/b/test/b.js"))
    row = {"instance_id": "Automattic__wp-calypso-1", "repo": "Automattic/wp-calypso", "base_commit": "a" * 40, "version": "10.10.0",
           "problem_statement": "x", "patch": "", "test_patch": diff, "FAIL_TO_PASS": ["client/a/test/a.js - works"], "PASS_TO_PASS": []}  # fmt: skip
    task = normalise(row)
    assert task.log_parser == "parse_log_calypso" and task.test_command.count("(set -x; ./node_modules/.bin/jest") == 2

    def read(command: str) -> dict:
        return log_parser(task)(run_as_graded(command, tmp_path, {"PATH": "/usr/bin:/bin"}).stdout)

    assert read(task.test_command) == {"client/a/test/a.js - works": "PASSED", "client/b/test/b.js - works": "PASSED"}
    assert read(task.test_command.replace("set -x; ", "")) == {}


def test_a_parser_that_picks_its_format_by_the_instance_reads_the_log():
    """swebench's immutable-js parser (and jekyll's) chooses its runner's format by the instance id of the TestSpec it is
    given: the gym gave none, and every immutable-js-2006 log raised AttributeError (the reward's error, not the agent's)."""
    parse = log_parser(normalise(multilingual("immutable-js__immutable-js-2006")))
    log = "  ✓ sliced sequence works even on filtered sequence (3 ms)\n  ✕ keeps the order (1 ms)\n"
    assert parse(log) == {"sliced sequence works even on filtered sequence": "PASSED", "keeps the order": "FAILED"}


def test_a_multilingual_row_without_swebench_5_columns_is_known_by_its_repository():
    """The official Multilingual columns (no log_parser/eval_script, test lists as lists, no
    environment_setup_commit) looked like SWE-Gym's; the repository's language in swebench decides."""
    row = {key: value for key, value in multilingual("gin-gonic__gin-3227").items() if key not in ("log_parser", "eval_script", "eval_type", "image")}
    family, why = detect(row)
    assert (family.name, why) == ("swe-bench", "SWE-bench columns over a repository swebench lists under go")
    task = normalise(row)
    assert (task.language, task.log_parser) == ("go", "parse_log_gotest")
    python_row = {**row, "repo": "getmoto/moto", "instance_id": "getmoto__moto-1"}
    assert detect(python_row)[0].name == "swe-gym", "Python rows with these columns stay SWE-Gym's"


def test_the_redis_task_builds_then_runs_the_named_tests():
    task = normalise(multilingual("redis__redis-12272"))
    assert task.log_parser == "parse_log_redis"
    assert task.build_command == "make distclean && make"
    assert task.test_command == 'TERM=dumb ./runtest --durable --single unit/type/string --only "/.*(GETRANGE|SETRANGE).*"'
    statuses = log_parser(task)("[ok]: GETRANGE against string value (1 ms)\n[err]: GETRANGE against integer-encoded value in tests/unit/type/string.tcl\n")
    assert statuses == {"GETRANGE against string value": "PASSED", "GETRANGE against integer-encoded value": "FAILED"}
    spec = environment_spec(task)  # its toolchain image: the C packages, swebench's install and build
    assert (spec.language, spec.install, spec.build) == ("c", "make distclean && make", "make distclean && make") and "tcl" in spec.toolchain


def test_a_multilingual_row_of_a_version_swebench_has_no_spec_for_takes_its_environments_entry():
    """It loads (it used to be refused while loading, before the entry that the error itself asked for was read); its
    environment and commands are its entry's, and without one, building its image says what to give. A 5.x row brings
    its build and test commands in its eval script; a row without one has none until its entry gives them."""
    row = {**multilingual("redis__redis-12272"), "version": "0.1"}
    task = normalise(row)
    assert (task.test_command, task.build_command, task.log_parser) == (
        'TERM=dumb ./runtest --durable --single unit/type/string --only "/.*(GETRANGE|SETRANGE).*"', "make distclean && make", "parse_log_redis")
    bare = normalise({key: value for key, value in row.items() if key != "eval_script"})
    assert (bare.test_command, bare.build_command) == (None, None)
    with pytest.raises(SpecError, match="swebench has no spec for redis/redis version 0.1; give its toolchain, install_cmd, build_cmd and test_cmd_as_run"):
        environment_spec(task)
    entry = {"instance_id": task.instance_id, "toolchain": ["tcl"], "install_cmd": "make", "build_cmd": "make",
             "test_cmd_as_run": "./runtest --single unit/type/string"}  # fmt: skip
    spec = environment_spec(task, {task.instance_id: entry})
    assert (spec.install, spec.build, spec.test_command, spec.source) == ("make", "make", "./runtest --single unit/type/string", "environments file")


def test_python_families_say_python_and_build_nothing():
    row = {key: value for key, value in multilingual("gin-gonic__gin-3227").items() if key not in ("log_parser", "eval_script", "eval_type", "image")}
    task = normalise({**row, "repo": "getmoto/moto", "instance_id": "getmoto__moto-1"})
    assert (task.family, task.language, task.build_command) == ("swe-gym", "python", None)


@needs_shared
@pytest.mark.parametrize("name", MULTI_SWE_BENCH)
def test_every_real_multi_swe_bench_row_is_a_java_task_of_the_package(name):
    assert len(rows_of(SHARED / name)) == MULTI_SWE_BENCH[name]  # as ../shared/datasets/README.md lists them
    for row in rows_of(SHARED / name):
        family, why = detect(row)
        assert (family.name, why) == ("multi-swe-bench", "org, number, base and fix_patch columns (a pull request)")
        task = normalise(row)
        assert normalise(task) == task
        repo = f"{row['org']}/{row['repo']}"
        assert (task.family, task.language, task.repo, task.log_parser) == ("multi-swe-bench", "java", repo, "multi-swe-bench")
        assert task.image_name == f"mswebench/{row['org']}_m_{row['repo']}:pr-{row['number']}"
        assert task.workdir == f"/home/{row['repo']}" and task.base_commit == row["base"]["sha"] and task.patch == row["fix_patch"]
        assert task.FAIL_TO_PASS == [*row["f2p_tests"], *row["s2p_tests"], *row["n2p_tests"]] and task.PASS_TO_PASS == list(row["p2p_tests"])
        assert "test.patch" not in task.test_command and "fix.patch" not in task.test_command
        assert task.test_command.splitlines()[-1].startswith("mvn clean test ")


@needs_shared
def test_what_a_multi_swe_bench_row_becomes():
    task = normalise(shared("multi-swe-bench.jsonl", "google__gson-1555"))
    assert task.test_command == "set -e\ncd /home/gson\nmvn clean test -Dmaven.test.skip=false -DfailIfNoTests=false"
    assert task.FAIL_TO_PASS == ["com.google.gson.functional.JsonAdapterSerializerDeserializerTest"] and len(task.PASS_TO_PASS) == 94
    issue = shared("multi-swe-bench.jsonl", "google__gson-1555")["resolved_issues"][0]
    assert task.problem_statement == f"{issue['title']}\n{issue['body']}".strip()
    only_new = normalise(shared("multi-swe-bench.jsonl", "google__gson-1787"))  # its tests did not compile with the test patch alone
    assert len(only_new.FAIL_TO_PASS) == 8 and only_new.PASS_TO_PASS == [], "n2p tests must pass after the fix: they are FAIL_TO_PASS"
    with pytest.raises(SpecError, match=re.escape("its java toolchain and install steps come from its own image recipe, which needs the network: "
                                                  "give them in an environments file")):
        environment_spec(task)


GSON_LOG = """[INFO] Scanning for projects...
[INFO] Building Gson 2.8.7-SNAPSHOT
-------------------------------------------------------
 T E S T S
-------------------------------------------------------
Running com.google.gson.stream.JsonWriterTest
Tests run: 30, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.051 sec
Running com.google.gson.functional.JsonAdapterSerializerDeserializerTest
Tests run: 6, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.012 sec <<< FAILURE!
testJsonAdapterNullSafe(com.google.gson.functional.JsonAdapterSerializerDeserializerTest)  Time elapsed: 0.003 sec  <<< FAILURE!
junit.framework.ComparisonFailure: expected:<...> but was:<...>
Running com.google.gson.functional.ReflectionAccessTest
Tests run: 2, Failures: 0, Errors: 0, Skipped: 2, Time elapsed: 0 sec

Results :

Failed tests:   testJsonAdapterNullSafe(com.google.gson.functional.JsonAdapterSerializerDeserializerTest)

Tests run: 38, Failures: 1, Errors: 0, Skipped: 2
"""

JACKSON_LOG = """[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.fasterxml.jackson.core.io.NumberInputTest
[ERROR] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.041 s <<< FAILURE! - in com.fasterxml.jackson.core.io.NumberInputTest
[ERROR] testParseFloatTrailingDot(com.fasterxml.jackson.core.io.NumberInputTest)  Time elapsed: 0.004 s  <<< FAILURE!
[INFO] Running com.fasterxml.jackson.core.read.NumberParsingTest
[INFO] Tests run: 41, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.3 s - in com.fasterxml.jackson.core.read.NumberParsingTest
[INFO] Running com.fasterxml.jackson.core.json.async.AsyncTokenFilterTest
[WARNING] Tests run: 3, Failures: 0, Errors: 0, Skipped: 3, Time elapsed: 0.001 s - in com.fasterxml.jackson.core.json.async.AsyncTokenFilterTest
[ERROR] Tests run: 49, Failures: 1, Errors: 0, Skipped: 3
"""


@needs_shared
def test_the_multi_swe_bench_parser_is_the_packages_parse_log():
    gson = normalise(shared("multi-swe-bench.jsonl", "google__gson-1555"))
    assert log_parser(gson)(GSON_LOG) == {  # surefire 2's per-class lines, as gson's harness reads them
        "com.google.gson.stream.JsonWriterTest": "PASSED",
        "com.google.gson.functional.JsonAdapterSerializerDeserializerTest": "FAILED",
        "com.google.gson.functional.ReflectionAccessTest": "SKIPPED",
    }
    jackson = normalise(shared("multi-swe-bench.fasterxml__jackson-core.jsonl", "fasterxml__jackson-core-1309"))
    assert log_parser(jackson)(f"\x1b[1m{JACKSON_LOG}\x1b[m") == {  # surefire 3's "- in CLASS" lines
        "com.fasterxml.jackson.core.io.NumberInputTest": "FAILED",
        "com.fasterxml.jackson.core.read.NumberParsingTest": "PASSED",
        "com.fasterxml.jackson.core.json.async.AsyncTokenFilterTest": "SKIPPED",
    }


@needs_shared
def test_a_multi_swe_bench_task_grades_by_its_lists():
    task = normalise(shared("multi-swe-bench.jsonl", "google__gson-1555"))
    runs = "".join(f"Running {test}\nTests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 sec\n" for test in task.PASS_TO_PASS)
    fixed = "[INFO] T E S T S\n" + runs + f"Running {task.FAIL_TO_PASS[0]}\nTests run: 6, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 sec\n"
    assert grade_fail_to_pass(task, log_parser(task)(fixed))[0] is True
    broken = fixed.replace("Failures: 0", "Failures: 1", 1)  # the first PASS_TO_PASS class now fails
    assert grade_fail_to_pass(task, log_parser(task)(broken))[0] is False
    assert grade_fail_to_pass(task, log_parser(task)("[INFO] T E S T S\n" + runs))[0] is False, "the FAIL_TO_PASS class did not run"


@needs_shared
def test_a_multi_swe_bench_row_without_a_harness_says_so_in_one_line():
    row = {**shared("multi-swe-bench.jsonl"), "org": "nobody", "repo": "nothing", "instance_id": "nobody__nothing-1"}
    family, _ = detect(row)
    assert family.name == "multi-swe-bench" and family.language(row) is None
    assert family.language({**row, "lang": "Java"}) == "java", "the row's own lang where the package cannot tell"
    with pytest.raises(InstanceError) as caught:
        normalise(row)
    assert str(caught.value) == "Instance 'nobody__nothing-1': multi-swe-bench 1.1.2 has no harness for nobody/nothing"


@needs_shared
def test_swe_rebench_v2_takes_the_rows_language():
    task = normalise(shared("swe-rebench-v2.jsonl"))
    assert (task.family, task.language, task.workdir, task.build_command) == ("swe-rebench", "c", None, None)
    assert FAMILIES["swe-rebench"].language(shared("swe-rebench-v2.jsonl")) == "c"
    assert FAMILIES["swe-rebench"].language({"language": "JS"}) == "javascript" and FAMILIES["swe-rebench"].language({}) == "python"


def datasets_table(main, capsys, path: Path) -> dict[tuple[str, ...], list[str]]:
    """`uni-agent-gym datasets --dataset PATH`'s rows: (family, repository, language) -> [rows, images here, buildable,
    canaries, why not]."""
    from tests.test_datasets import table_rows

    assert main(["datasets", "--dataset", str(path)]) == 0
    return {tuple(row[:3]): row[3:] for row in table_rows(capsys.readouterr().out)}


def test_the_datasets_command_names_family_and_language_and_why_a_row_cannot_run(tmp_path, capsys, monkeypatch):
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(dataset_summary, "_image_checker", lambda: None)  # no Docker engine is asked
    table = datasets_table(main, capsys, MULTILINGUAL)
    assert {key[:3:2] for key in table} == {("swe-bench", language) for language in MULTILINGUAL_LANGUAGES.values()}
    assert table[("swe-bench", "redis/redis", "c")] == [
        "4", "?", "0", "4 redis", "4: no mirror of its repository (--mirror)"]  # their toolchain image can be built, given the repository
    # which rows' gradings plant canaries, under which runner (jq's `make check` and immutable-js's jest-through-jq: none)
    canaries = {key[1]: cells[3] for key, cells in table.items()}
    assert canaries == {"redis/redis": "4 redis", "jqlang/jq": "0", "fmtlib/fmt": "1 googletest", "gin-gonic/gin": "3 gotest",
                        "immutable-js/immutable-js": "0", "google/gson": "1 maven", "uutils/coreutils": "1 cargo",
                        "laravel/framework": "1 phpunit", "jordansissel/fpm": "1 rspec"}, canaries  # fmt: skip
    # an install step that fetches from a registry cannot run in an image build (the network is off): not buildable here
    # (gin's `go test -c` too: in module mode it fetches gin's modules; its fixtures build in GOPATH mode, environments.json)
    why = {key[1]: cells[4] for key, cells in table.items()}
    fetching = {repo: re.search(r"`([^`]*)` fetches from the network", reason) for repo, reason in why.items()}
    assert {repo: found.group(1).split()[0] for repo, found in fetching.items() if found} == {
        "jqlang/jq": "git", "immutable-js/immutable-js": "npm", "google/gson": "mvn", "uutils/coreutils": "cargo",
        "laravel/framework": "composer", "jordansissel/fpm": "bundle", "gin-gonic/gin": "go"}, why  # fmt: skip
    if not SHARED.exists():
        return
    mixed = tmp_path / "mixed.jsonl"
    unsupported = {**shared("multi-swe-bench.jsonl"), "org": "nobody", "repo": "nothing", "instance_id": "nobody__nothing-1"}
    no_spec = {**multilingual("redis__redis-12272"), "version": "0.1", "instance_id": "redis__redis-1"}
    rows = [*rows_of(SHARED / "multi-swe-bench.jsonl"), shared("swe-rebench-v2.jsonl"), unsupported, multilingual("redis__redis-12272"), no_spec]
    mixed.write_text("".join(json.dumps(row) + "\n" for row in rows))
    table = datasets_table(main, capsys, mixed)
    assert table[("multi-swe-bench", "google/gson", "java")][:3] == ["5", "?", "0"]
    assert table[("swe-rebench", "Unidata/netcdf-c", "c")][0] == "1"
    assert table[("multi-swe-bench", "nobody/nothing", "?")] == ["1", "?", "0", "0", "1: multi-swe-bench 1.1.2 has no harness for nobody/nothing"]
    redis = table[("swe-bench", "redis/redis", "c")]
    # the row of a version without a spec runs its eval script's tests (their canaries planted), and needs its toolchain
    assert redis[0] == "2" and redis[3] == "2 redis" and "1: swebench has no spec for redis/redis version 0.1; give its toolchain" in redis[4]


def test_the_families_table_lists_multi_swe_bench(capsys, monkeypatch):
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "2000")
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "multi-swe-bench" in out and "mswebench/<org>_m_<repo>:pr-<number>" in out


@pytest.mark.parametrize("columns, width", [("100", 100), (None, 120)])
def test_piped_tables_are_as_wide_as_columns_and_wrap_image_names_rather_than_cut_them(capsys, monkeypatch, columns, width):
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", columns) if columns else monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) == width and "…" not in "".join(lines)
    images = "".join(line.split("│")[3].strip() for line in lines if line.count("│") == 5)  # the images column, top to bottom
    assert "mswebench/<org>_m_<repo>:pr-<number>" in images and "swebench/swesmith.x86_64.<owner>_1776_<repo>.<commit8>" in images


def test_a_directory_of_row_files_is_read_as_local_files(tmp_path, capsys, monkeypatch):
    """Files whose columns differ (`datasets` would read them as one table and fail); those named for the split."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(dataset_summary, "_image_checker", lambda: None)
    (tmp_path / "mixed").mkdir()
    for path in (MULTILINGUAL, MULTILINGUAL.with_name("multi-swe-bench.jsonl")):
        (tmp_path / "mixed" / path.name).write_text(path.read_text())
    table = datasets_table(main, capsys, tmp_path / "mixed")
    assert table[("multi-swe-bench", "fasterxml/jackson-core", "java")][0] == "1" and table[("swe-bench", "redis/redis", "c")][0] == "4"
    (tmp_path / "splits").mkdir()
    (tmp_path / "splits" / "test.jsonl").write_text(MULTILINGUAL.read_text())
    (tmp_path / "splits" / "train.jsonl").write_text(MULTILINGUAL.with_name("multi-swe-bench.jsonl").read_text())
    assert {key[0] for key in datasets_table(main, capsys, tmp_path / "splits")} == {"swe-bench"}
