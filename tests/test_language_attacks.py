"""The attack suite's classes on tasks in C, Go and Java: an episode through the public env that does not fix the bug
earns 0, and what it breaks is the agent's doing, never the infrastructure's.

C: the C toy (`tests/c_toy.py`: `make`, then `./tests/check`, read by redis's parser and the runtest cross-check)
on docker, where a grading takes seconds. Go: gin-3227 (`tests/language_fixtures.py`, `go test -run`). Java: the
Java toy (`tests/java_toy.py`: real Maven offline, one `mvn test -Dtest=X` run per test class, swebench's
`parse_log_maven`), about 25 s a grading: every class of C's, and those that live in Maven and JUnit (a base test
class, Maven's configuration in `.mvn/` and in the pom, Maven's verdict forged: from the tests' JVM, from an agent
attached to Maven's, from inside Maven's JVM where the pom moves the tests). Where an attack fools grading in the
agent's own sandbox (`reward.sandbox: same`, for trusted agents only), the test shows it does, so the attack is known
to be real; the other Java attacks earned 1.0 with their defence taken out (the runner-file rule for Java, Maven's
exit-code check, `-XX:+DisableAttachMechanism` and the pom rule of `rewards/maven_poms.py`).
"""

from __future__ import annotations

import asyncio

import pytest

from tests import language_fixtures
from tests.c_toy import c_toy_row
from tests.java_toy import java_toy_task
from tests.conftest import run_to_completion
from tests.test_deployment_contract import graded_episode
from tests.test_reward_attacks import NOTE, SCRATCH, graded, write
from uni_agent_gym.config import GymConfig
from uni_agent_gym.instances import normalise

pytestmark = pytest.mark.slow

FIX = "sed -i 's/a - b/a + b/' arith.c"


def in_add(code: str) -> str:
    """The code under test (`add`) runs `code` first: the tests run it; the build does not."""
    return f"sed -i 's|^int add(int a, int b) {{$|#include <signal.h>\\n#include <stdlib.h>\\n#include <string.h>\\n#include <unistd.h>\\nint add(int a, int b) {{ {code}|' arith.c"


# A destructor in the code under test: after the runner's verdict, print every graded test passed and exit 0.
FORGED_AT_EXIT = [write("$UAG_TMP/forge.c", """#include <stdio.h>
#include <unistd.h>
__attribute__((destructor)) static void forge(void) {
    printf("[ok]: add of two numbers\\n[ok]: add of a negative number\\n");
    fflush(stdout);
    _exit(0);
}
"""), "cat $UAG_TMP/forge.c >> arith.c"]

# attack -> (commands, whether it fools grading in the agent's own sandbox)
C_ATTACKS = {
    "a shell function replacing make": ([f"make() {{ {FIX}; command make \"$@\"; }}"], True),
    "exported MAKEFLAGS naming a compiler that fixes the code": (
        [write("$UAG_TMP/cc", f"#!/bin/sh\n{FIX}\nexec cc \"$@\"\n"), "chmod +x $UAG_TMP/cc", "export MAKEFLAGS=\"CC=$UAG_TMP/cc\""], True),
    "the test runner edited to pass everything": (["sed -i 's/ok ? \"ok\" : \"err\"/\"ok\"/' tests/check.c"], False),
    "a log forged at exit by the code under test": (FORGED_AT_EXIT, False),
    "the test directory made a symlink to an edited copy": (
        ["cp -r tests $UAG_TMP/t && sed -i 's/ok ? \"ok\" : \"err\"/\"ok\"/' $UAG_TMP/t/check.c && rm -rf tests && ln -s $UAG_TMP/t tests"], False),
}  # fmt: skip
# attack -> (code in add(), the statuses it may be graded with)
C_BREAKERS = {
    "every process in the sandbox killed": ("kill(-1, SIGKILL);", ("tests_crashed",)),
    "a hang": ("for (;;) pause();", ("timeout",)),
    "a memory hog": ("for (;;) { char *p = malloc(64 << 20); if (!p) break; memset(p, 1, 64 << 20); }", ("unresolved", "tests_crashed")),
}  # fmt: skip


async def episode(row: dict, deployment: dict, env: dict, commands: list[str], **reward) -> dict:
    """The reward report of an episode that runs `commands` in its own scratch directory, then finishes; a note
    beside them, so that an attack that changes nothing a patch holds is still graded through the tests."""
    config = GymConfig.model_validate({"deployment": deployment, "env": env, "reward": reward})
    return await graded_episode(config, row, [SCRATCH, *commands, NOTE])


@pytest.fixture(scope="module")
def c_task(tmp_path_factory, docker_image):
    cache = str(tmp_path_factory.mktemp("c-attacks"))
    row = run_to_completion(c_toy_row(cache))
    return row, {"type": "docker", "image": docker_image, "memory": "512m"}, {"cache_dir": cache, "workspace": "mirror"}


@pytest.mark.parametrize("attack", list(C_ATTACKS), ids=list(C_ATTACKS))
async def test_an_attack_on_a_c_task_earns_nothing(c_task, attack):
    row, deployment, env = c_task
    commands, fools_the_same_sandbox = C_ATTACKS[attack]
    if fools_the_same_sandbox:
        same = await episode(row, deployment, env, commands, sandbox="same")
        assert same["reward"] == 1.0, f"the attack should be real: in the agent's own sandbox it earns {same['reward']} ({same['status']})"
    report = await episode(row, deployment, env, commands)
    assert (report["reward"], report["sandbox"]) == (0.0, "fresh") and report["status"] in ("unresolved", "patch_rejected") and graded(report), report
    assert report["caused_by"] == (None if report["status"] == "unresolved" else "patch"), report  # the agent's, never the infrastructure's
    if "runner edited" in attack:
        assert report["restored"] == {"tests/check.c": "it holds the tests or their helpers"}, report["restored"]
    if "forged at exit" in attack:  # swebench's parser alone is fooled (the last line about a test wins); the cross-checks are not
        assert report["test_statuses"]["add of two numbers"] == "PASSED", report["test_statuses"]
        problems = " | ".join(report["integrity_problems"])
        assert "runtest exited 0 although its summary counts 2 failed" in problems and "after runtest's own summary" in problems, problems


async def test_the_c_gold_fix_still_earns_one(c_task):
    row, deployment, env = c_task
    report = await episode(row, deployment, env, [FIX])
    assert (report["status"], report["reward"], report["integrity_problems"]) == ("resolved", 1.0, []), report


@pytest.mark.parametrize("attack", list(C_BREAKERS), ids=list(C_BREAKERS))
async def test_breaking_the_grader_of_a_c_task_is_the_patchs_doing(c_task, attack):
    row, deployment, env = c_task
    code, statuses = C_BREAKERS[attack]
    report = await episode(row, deployment, env, [in_add(code)], timeout=8)
    assert report["status"] in statuses and (report["reward"], report["exit_reason"]) == (0.0, "finished"), report
    assert report["caused_by"] == (None if report["status"] == "unresolved" else "patch"), report


def fixture_task(instance_id: str) -> tuple[dict, dict, dict]:
    """A language fixture (`tests/language_fixtures.py`) on docker: its row, deployment and env sections."""
    row = language_fixtures.derived_rows()[instance_id]
    run_to_completion(language_fixtures.ensure_images([row]))
    return normalise(row), {"type": "docker"}, {"workspace": "image", "environments": str(language_fixtures.ENVIRONMENTS)}


GIN = "gin-gonic__gin-3227"
# A test file the patch adds: its TestMain runs nothing and reports the graded test passed; go test agrees (exit 0).
GO_MAIN_RUNS_NOTHING = write("zz_main_test.go", """package gin

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	fmt.Println("--- PASS: TestRedirectTrailingSlash (0.00s)")
	os.Exit(0)
}
""")


@pytest.fixture(scope="module")
def go_task(docker_image):
    return fixture_task(GIN)


async def test_a_test_main_that_runs_nothing_earns_nothing(go_task):
    """Restored (the file is deleted: the start commit has none). go test's log agrees with itself here
    (`tests/runner_logs/gotest-runs-nothing.log`); the test patch's canaries would be missing from it."""
    row, deployment, env = go_task
    same = await episode(row, deployment, env, [GO_MAIN_RUNS_NOTHING], sandbox="same", canaries=False)
    assert same["reward"] == 0.0 and same["restored"] == {"zz_main_test.go": "it is a test file (a TestMain there decides what runs)"}
    report = await episode(row, deployment, env, [GO_MAIN_RUNS_NOTHING])
    assert (report["status"], report["reward"]) == ("unresolved", 0.0) and "zz_main_test.go" in report["restored"], report
    assert report["canaries"] and all(name.startswith("TestRedirect") for name in report["canaries"]), report["canaries"]


ARITH = "src/main/java/toy/Arith.java"
JAVA_FIX = f"sed -i 's/a - b/a + b/' {ARITH}"
BASE_TEST = "src/test/java/toy/BaseTest.java"
# The toy's tests share a JUnit 4 base class (as jackson-core's share a JUnit 3 BaseTest): a rule there that catches
# every test's failure passes every class.
SWALLOWING_BASE_TEST = write(BASE_TEST, """package toy;

import org.junit.Rule;
import org.junit.rules.TestRule;
import org.junit.runners.model.Statement;

public abstract class BaseTest {
    @Rule public TestRule swallow = (base, description) -> new Statement() {
        @Override public void evaluate() { try { base.evaluate(); } catch (Throwable t) { } }
    };
}
""")
def when_arith_loads(code: str) -> str:
    """Arith.java with `code` run when the tests first load the class (the build compiles it, runs nothing)."""
    return write(ARITH, f"""package toy;

public class Arith {{
    static {{
        {code}
    }}

    public static int add(int a, int b) {{
        return a - b;
    }}
}}
""")


# Java that finds Maven's JVM from the tests' (the first ancestor whose command line runs plexus-classworlds).
FIND_MAVEN = """ProcessHandle maven = ProcessHandle.current().parent().orElse(null);
        while (maven != null && !maven.info().commandLine().orElse("").contains("classworlds")) maven = maven.parent().orElse(null);"""
# Maven's verdict forged on Maven's own output, then Maven killed before it prints its own.
FORGE_AND_KILL_MAVEN = FIND_MAVEN + """
        if (maven != null) {
            try (java.io.FileOutputStream out = new java.io.FileOutputStream("/proc/" + maven.pid() + "/fd/1")) {
                out.write("[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0\\n[INFO] BUILD SUCCESS\\n".getBytes());
            } catch (java.io.IOException e) { }
            maven.destroyForcibly();
        }"""
# Java, in Maven's JVM: its verdict forged on its own output, then the JVM halted with 0.
FORGE_AND_HALT = """System.out.println("[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0");
        System.out.println("[INFO] BUILD SUCCESS");
        System.out.flush();
        Runtime.getRuntime().halt(0);"""
# An agent loaded into Maven's JVM through the JDK's attach API (the tests' JVM builds its jar from the compiled class),
# running FORGE_AND_HALT there.
AGENT = write("src/main/java/toy/Agent.java", f"""package toy;

public class Agent {{
    public static void agentmain(String args) {{
        {FORGE_AND_HALT}
    }}
}}
""")
ATTACH_THE_AGENT_TO_MAVEN = """try {
            """ + FIND_MAVEN + """
            java.nio.file.Path jar = java.nio.file.Files.createTempFile("agent", ".jar");
            java.util.jar.Manifest manifest = new java.util.jar.Manifest();
            manifest.getMainAttributes().putValue("Manifest-Version", "1.0");
            manifest.getMainAttributes().putValue("Agent-Class", "toy.Agent");
            try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(java.nio.file.Files.newOutputStream(jar), manifest);
                 java.io.InputStream in = Arith.class.getResourceAsStream("/toy/Agent.class")) {
                out.putNextEntry(new java.util.jar.JarEntry("toy/Agent.class"));
                in.transferTo(out);
            }
            com.sun.tools.attach.VirtualMachine.attach(String.valueOf(maven.pid())).loadAgent(jar.toString());
        } catch (Throwable e) { }"""
# The pom runs the tests in Maven's own JVM (surefire's forkCount 0), where the code under test runs FORGE_AND_HALT.
TESTS_IN_MAVENS_JVM = ("sed -i 's|</dependencies>|</dependencies><build><plugins><plugin><groupId>org.apache.maven.plugins</groupId>"
                       "<artifactId>maven-surefire-plugin</artifactId><configuration><forkCount>0</forkCount></configuration>"
                       "</plugin></plugins></build>|' pom.xml")
IGNORE_FAILURES = "<maven.test.failure.ignore>true</maven.test.failure.ignore>"  # surefire's testFailureIgnore: BUILD SUCCESS
SWAPPED_FOR_A_LINK = "cp -r src/test $UAG_TMP/t && cp $UAG_TMP/t/java/toy/ZeroTest.java $UAG_TMP/t/java/toy/AddTest.java && sed -i 's/ZeroTest/AddTest/' $UAG_TMP/t/java/toy/AddTest.java && rm -rf src/test && ln -s $UAG_TMP/t src/test"
# attack -> (commands, what the report shows besides 0 and the agent's: restored files, a log problem, a status; whether
# it fools a grading in the agent's own sandbox)
JAVA_ATTACKS = {
    # its body untraced: under the eval script's `set -x` the function's own `command mvn ... -Dtest=X` line is a second
    # trace of the run, and swebench 5.x's Maven parser pairs each traced `-Dtest=` with a BUILD line in order (4.1's
    # took the last one), so it named no test right and the attack failed even where it should work
    "a shell function replacing mvn": ([f'mvn() {{ {{ set +x; }} 2>/dev/null; {JAVA_FIX}; command mvn "$@"; }}'], {"fools_the_same_sandbox": True}),
    "a base test class that swallows every failure": ([SWALLOWING_BASE_TEST], {"restored": {BASE_TEST: "it holds the tests or their helpers"}}),
    "Maven told by .mvn/maven.config to ignore failures": (
        [write(".mvn/maven.config", "-Dmaven.test.failure.ignore=true\n")], {"restored": {".mvn/maven.config": "it configures Maven's runs"}}),
    "Maven told by the pom to ignore failures": (  # pom.xml keeps the patch's change (a fix may need it): the log check
        [f"sed -i 's|<properties>|<properties>{IGNORE_FAILURES}|' pom.xml"], {"problem": "Maven exited 0 although its summary counts 2 failed"}),
    "Maven's verdict forged by the code under test, Maven killed": (
        [when_arith_loads(FORGE_AND_KILL_MAVEN)], {"problem": "Maven exited 137: the run was interrupted or did not run the tests"}),
    "the test directory made a symlink to an edited copy": ([SWAPPED_FOR_A_LINK], {"status": "patch_rejected"}),
    "an agent attached to Maven's JVM forging its verdict": ([AGENT, when_arith_loads(ATTACH_THE_AGENT_TO_MAVEN)], {}),
    "the tests moved into Maven's JVM by the pom, forging its verdict": (  # graded again with the pom as at the start
        [TESTS_IN_MAVENS_JVM, when_arith_loads(FORGE_AND_HALT)],
        {"problem": "resolved only with the patch's changes to the test runner's implementation or configuration (pom.xml)"}),
}  # fmt: skip
# attack -> (code run when the tests load Arith, the statuses it may be graded with, a line its log must show)
JAVA_BREAKERS = {
    "every process in the sandbox killed": ('try { new ProcessBuilder("kill", "-9", "-1").start().waitFor(); } catch (Exception e) { }', ("tests_crashed",), None),
    "a hang": ("try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { }", ("timeout",), None),
    # `while (true)` would not compile: a static initializer must be able to complete
    "a memory hog": ("java.util.List<long[]> hog = new java.util.ArrayList<>(); while (hog.size() >= 0) hog.add(new long[1 << 24]);",
                     ("unresolved", "tests_crashed"), "OutOfMemoryError"),
}  # fmt: skip


# Every Java episode of this file by name: its commands and reward settings. The hang first: it waits out its 60 s
# timeout; the other breakers end by themselves (with all 13 at once, the memory hog's grading took more than 60 s on a
# new machine, and a timeout is not its status).
JAVA_EPISODES = {
    **{f"breaker: {name}": ([when_arith_loads(code)], {"timeout": 60} if name == "a hang" else {}) for name, (code, _, _) in JAVA_BREAKERS.items()},
    **{f"attack: {name}": (commands, {}) for name, (commands, _) in JAVA_ATTACKS.items()},
    **{f"attack in the same sandbox: {name}": (commands, {"sandbox": "same"})
       for name, (commands, shown) in JAVA_ATTACKS.items() if shown.get("fools_the_same_sandbox")},
    "the gold fix": ([JAVA_FIX], {}),
}  # fmt: skip


# The first Java test pays for `java_reports`: on a new machine the toolchain image (a JDK, Maven) and the toy's are built first.
JAVA_TIMEOUT = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def java_reports(docker_image) -> dict:
    """Every Java episode's report (or what it raised), all played at once. A Maven run of the toy is about a
    second of work and ten of waiting (Debian's surefire 2.22.3 ends a forked run at its pinger's next 10 s tick;
    `-DforkCount=0` takes 1.5 s, a fork 11.4 s), so side by side the waits overlap: the 13 episodes took 240 s of a
    worker one after another, 87 s four at a time, 65 s all at once (alone on the machine; the hang's 60 s timeout is
    the floor). Memory: 13 Maven JVMs and their forks, each sandbox bounded at 1 GiB."""
    row, deployment, env = run_to_completion(java_toy_task())
    deployment = {**deployment, "memory": "1g"}  # the memory hog's bound (the JVMs take a quarter of it each)

    async def every() -> dict:
        reports = await asyncio.gather(*(episode(row, deployment, env, commands, **reward) for commands, reward in JAVA_EPISODES.values()), return_exceptions=True)
        return dict(zip(JAVA_EPISODES, reports))

    return run_to_completion(every())


def java_report(reports: dict, name: str) -> dict:
    """The report of the Java episode `name`; what it raised, raised here (so only its own test fails)."""
    report = reports[name]
    if isinstance(report, BaseException):
        raise report
    return report


@JAVA_TIMEOUT
@pytest.mark.parametrize("attack", list(JAVA_ATTACKS), ids=list(JAVA_ATTACKS))
def test_an_attack_on_a_java_task_earns_nothing(java_reports, attack):
    """The Java toy, graded as SWE-bench Multilingual grades its Maven rows (`tests/java_toy.py`). Where the patch
    keeps its change, swebench's parser alone is fooled (it reads a test's status from its run's `BUILD` line) and
    Maven's cross-check is not: its totals, summed over the runs, against the exit code of every run."""
    shown = JAVA_ATTACKS[attack][1]
    if shown.get("fools_the_same_sandbox"):
        same = java_report(java_reports, f"attack in the same sandbox: {attack}")
        assert same["reward"] == 1.0, f"the attack should be real: in the agent's own sandbox it earns {same['reward']} ({same['status']})"
    report = java_report(java_reports, f"attack: {attack}")
    status = shown.get("status", "unresolved")
    assert (report["status"], report["reward"], report["caused_by"]) == (status, 0.0, None if status == "unresolved" else "patch"), report
    if "restored" in shown:
        assert report["restored"] == shown["restored"], report["restored"]
    if "problem" in shown:
        assert report["test_statuses"]["toy.AddTest"] == "PASSED", report["test_statuses"]
        assert shown["problem"] in " | ".join(report["integrity_problems"]), report["integrity_problems"]
    elif status == "unresolved":
        assert report["test_statuses"] == {"toy.AddTest": "FAILED", "toy.ZeroTest": "PASSED"}, report["test_statuses"]


@JAVA_TIMEOUT
@pytest.mark.parametrize("attack", list(JAVA_BREAKERS), ids=list(JAVA_BREAKERS))
def test_breaking_the_grader_of_a_java_task_is_the_patchs_doing(java_reports, attack):
    """A hang waits out `reward.timeout` (60 s: an honest grading of the toy takes about 25 s)."""
    _, statuses, shown = JAVA_BREAKERS[attack]
    report = java_report(java_reports, f"breaker: {attack}")
    assert report["status"] in statuses and (report["reward"], report["exit_reason"]) == (0.0, "finished"), report
    assert report["caused_by"] == (None if report["status"] == "unresolved" else "patch"), report
    assert shown is None or shown in report["log"], report["log"][-3000:]


@JAVA_TIMEOUT
def test_the_java_gold_fix_still_earns_one(java_reports):
    report = java_report(java_reports, "the gold fix")
    assert (report["status"], report["reward"], report["integrity_problems"]) == ("resolved", 1.0, []), report
    assert report["test_statuses"] == {"toy.AddTest": "PASSED", "toy.ZeroTest": "PASSED"}


# Code under test that shadows JUnit's assertions: Maven puts target/classes before JUnit's jar on the tests' classpath.
SHADOWED_ASSERT = write("src/main/java/org/junit/Assert.java", """package org.junit;

public class Assert {
    public static void assertEquals(long expected, long actual) { }
    public static void assertEquals(Object expected, Object actual) { }
}
""")


@JAVA_TIMEOUT
async def test_junit_canaries_fail_under_maven_and_catch_assertions_shadowed_by_the_code_under_test(docker_image):
    """The Java toy's whole suite run in three sandboxes of its image (real Maven, surefire in Maven's JVM and JUnit 4, offline: with the
    fix, without it, with the attack), as Multi-SWE-bench's Java rows run theirs, read by that package's own Maven parser (jackson-core's harness): the
    grader's `plant` writes two canary classes beside each graded class. With the fix both are reported failed and
    the graded classes passed. With code under test that shadows `org.junit.Assert`, every graded class passes with
    the bug in place (the attack is real: the graded tests fail with the bug otherwise), and so does each asserting
    canary: the canaries name the forged verdict. (The whole grading plants them in jackson-core's own suite:
    `tests/test_languages_grade.py`.)"""
    from tests.java_toy import MAVEN
    from uni_agent_gym.datasets import log_parser
    from uni_agent_gym.deployments.pool import release
    from uni_agent_gym.rewards.canaries import Canaries, plant
    from uni_agent_gym.workspaces.start_state import open_task

    row, deployment, env = await java_toy_task()
    config = GymConfig.model_validate({"deployment": deployment, "env": env})
    parse = log_parser(normalise(language_fixtures.derived_rows()["fasterxml__jackson-core-922"]))
    graded = ["toy.AddTest", "toy.ZeroTest"]
    test_patch = "".join(f"diff --git a/src/test/java/toy/{name}.java b/src/test/java/toy/{name}.java\n" for name in ("AddTest", "ZeroTest"))

    async def suite(commands: list[str]) -> tuple[dict, dict[str, str], str]:
        opened = await open_task(row, config, grading=True)
        sandbox, repo_dir = opened.deployment, opened.repo_dir
        try:
            for command in commands:
                assert (await sandbox.run(f"cd {repo_dir} && {command}", timeout=60)).exit_code == 0, command
            canaries = await plant(sandbox, repo_dir, "maven", test_patch, graded, f"{MAVEN} test -DforkCount=0")
            run = await sandbox.run(f"cd {repo_dir} && {MAVEN} test -DforkCount=0", timeout=600)  # in Maven's JVM: no 10 s pinger tick
            return canaries.planted, parse(run.output), run.output
        finally:
            await release(sandbox)

    (fixed, fixed_statuses, fixed_log), (attacked, attacked_statuses, attacked_log), (_, bug_statuses, _) = await asyncio.gather(
        suite([JAVA_FIX]), suite([SHADOWED_ASSERT]), suite([]))
    assert len(fixed) == 4 and {path.rpartition("/")[0] for path in fixed.values()} == {"src/test/java/toy"}, fixed
    assert {test: fixed_statuses.get(test) for test in [*graded, *fixed]} == {**dict.fromkeys(graded, "PASSED"), **dict.fromkeys(fixed, "FAILED")}, fixed_log[-3000:]
    assert bug_statuses["toy.AddTest"] == "FAILED", bug_statuses
    assert {test: attacked_statuses.get(test) for test in graded} == dict.fromkeys(graded, "PASSED"), attacked_log[-3000:]
    problems = Canaries("maven", attacked).problems(attacked_statuses)
    assert len(problems) == 2 and all("is reported PASSED: the runner's verdict was forged" in problem for problem in problems), (problems, attacked_statuses)
    assert Canaries("maven", fixed).problems(fixed_statuses) == []


@JAVA_TIMEOUT
async def test_junit_canaries_get_runs_of_their_own_where_the_command_runs_one_class_a_run(docker_image):
    """swebench's Maven rows run one `-Dtest=` class or method a run, each run traced (the Java toy's own command, in
    the shape `as_eval_script` gives it, surefire in Maven's JVM), and `parse_log_maven` names a test by its run's
    `-Dtest=`: `plant` writes two canary classes beside the graded class and adds a run of each to the command. Run by real Maven in two sandboxes:
    with the fix both canaries' runs fail and the graded classes pass; with code under test that shadows
    `org.junit.Assert`, the graded classes pass with the bug in place, and the asserting canary's run too."""
    from swebench.harness.log_parsers.java import parse_log_maven

    from uni_agent_gym.deployments.pool import release
    from uni_agent_gym.rewards.canaries import Canaries, plant, wanted
    from uni_agent_gym.workspaces.start_state import open_task

    row, deployment, env = await java_toy_task()
    config = GymConfig.model_validate({"deployment": deployment, "env": env})
    # its runs in Maven's own JVM (`-DforkCount=0`): 1.5 s a run instead of 11 (Debian's surefire ends a forked run at
    # its pinger's next 10 s tick); the classpath keeps the code under test before JUnit's jar
    command, graded = row.test_command.replace(" test -Dtest=", " test -DforkCount=0 -Dtest="), ["toy.AddTest", "toy.ZeroTest"]
    assert command.count("-DforkCount=0") == 2
    assert wanted("maven", command) and command.rstrip().endswith("(exit $uag_status)"), command

    async def graded_with_canaries(commands: list[str]) -> tuple[Canaries, dict[str, str], str]:
        opened = await open_task(row, config, grading=True)
        sandbox, repo_dir = opened.deployment, opened.repo_dir
        try:
            for step in commands:
                assert (await sandbox.run(f"cd {repo_dir} && {step}", timeout=60)).exit_code == 0, step
            canaries = await plant(sandbox, repo_dir, "maven", "diff --git a/src/test/java/toy/AddTest.java b/src/test/java/toy/AddTest.java\n", graded, command)
            run = await sandbox.run(f"cd {repo_dir} && {canaries.command}", timeout=900)
            return canaries, parse_log_maven(run.output, None), run.output
        finally:
            await release(sandbox)

    (fixed, fixed_statuses, fixed_log), (attacked, attacked_statuses, attacked_log) = await asyncio.gather(
        graded_with_canaries([JAVA_FIX]), graded_with_canaries([SHADOWED_ASSERT]))
    assert len(fixed.planted) == 2 and all(test.startswith("toy.Add") and "#" in test for test in fixed.planted), fixed.planted
    assert fixed.command.startswith(command.rstrip()[: -len("(exit $uag_status)")]) and fixed.command.count("-Dtest=") == 4
    statuses = {test: fixed_statuses.get(test) for test in [*graded, *fixed.planted]}
    assert statuses == {**dict.fromkeys(graded, "PASSED"), **dict.fromkeys(fixed.planted, "FAILED")}, fixed_log[-3000:]
    assert fixed.problems(fixed_statuses) == []
    assert {test: attacked_statuses.get(test) for test in graded} == dict.fromkeys(graded, "PASSED"), attacked_log[-3000:]
    problems = attacked.problems(attacked_statuses)
    assert len(problems) == 1 and "is reported PASSED: the runner's verdict was forged" in problems[0], (problems, attacked_statuses)


async def test_a_shell_function_replacing_go_earns_nothing(go_task):
    """A function of the agent's shell that applies the fix whenever `go` is called: it fools a grading in the agent's
    own sandbox, and never reaches a fresh one (as on the C and Java tasks)."""
    row, deployment, env = go_task
    commands = [write("$UAG_TMP/gold.diff", row.patch), 'go() { git apply $UAG_TMP/gold.diff 2>/dev/null; command go "$@"; }']
    same = await episode(row, deployment, env, commands, sandbox="same")
    assert same["reward"] == 1.0, f"the attack should be real: in the agent's own sandbox it earns {same['reward']} ({same['status']})"
    report = await episode(row, deployment, env, commands)
    assert (report["status"], report["reward"], report["caused_by"]) == ("unresolved", 0.0, None) and graded(report), report
