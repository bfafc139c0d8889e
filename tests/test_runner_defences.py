"""The reward's defences for other languages' runners, on the real test commands of the language fixtures
(`tests/languages/derived.jsonl`): the files a patch may not change (`runner_files.py`) and the canaries'
files and names (`runner_canaries.py`), which must pass the command's own filters or they would not run. The
gradings that plant them in real runs are `tests/test_languages_grade.py`'s."""

from __future__ import annotations

import re

import pytest

from tests import language_fixtures
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards import runner_canaries as rc
from uni_agent_gym.rewards.canaries import Canaries
from uni_agent_gym.rewards.runner_files import language_runner_files
from uni_agent_gym.specs import command_of_tests, load_environments

ENVIRONMENTS = load_environments(language_fixtures.ENVIRONMENTS)
ROWS = {instance_id: normalise(row) for instance_id, row in language_fixtures.derived_rows().items()}
ROWS = {instance_id: row.replace(test_command=command_of_tests(row, ENVIRONMENTS)) for instance_id, row in ROWS.items()}  # as the reward runs it

GO_FILE = '''package gin

import (
\t"net/http"
\t"testing"
)

func TestRedirectWithRelativePath(t *testing.T) {
\t_ = http.StatusOK
}

func TestRouteRawPath(t *testing.T) {}
'''


def test_go_commands_name_their_packages_and_run_patterns():
    assert rc.go_packages(ROWS["gin-gonic__gin-3227"].test_command) == [""]
    assert rc.go_packages(ROWS["gin-gonic__gin-3820"].test_command) == ["binding"]
    assert rc.go_packages("go test -v ./... -run X") == ["..."] and rc.go_packages("make test") is None
    assert rc.go_run_pattern(ROWS["gin-gonic__gin-3227"].test_command) == "^TestRedirect"
    assert rc.go_run_pattern("go test -run=^TestA/sub$ .") == "^TestA" and rc.go_run_pattern("go test .") is None
    assert rc.go_runs_file("context_test.go", [""]) and not rc.go_runs_file("binding/binding_test.go", [""])
    assert rc.go_runs_file("binding/binding_test.go", ["binding"]) and rc.go_runs_file("a/b/x_test.go", ["..."])


def test_go_canaries_are_selected_by_the_run_pattern_and_fail():
    code, names = rc.go_source(GO_FILE, ["TestRedirectWithRelativePath"], "^TestRedirect")
    assert len(names) == 2 and all(re.match("^TestRedirect", name) for name in names)
    assert all(f"func {name}(t *testing.T)" in code for name in names) and "t.Fatalf" in code and "t.Errorf" in code
    assert rc.go_source(GO_FILE, ["TestRedirectWithRelativePath"], "^TestRedirectWithRelativePath$") == ("", [])  # anchored: none runs
    assert rc.go_source(GO_FILE, ["TestElsewhere"], None) == ("", [])  # no graded test in this file
    assert rc.go_source(GO_FILE.replace('"testing"', 't "testing"'), ["TestRouteRawPath"], None) == ("", [])  # `testing` renamed


@pytest.mark.parametrize("instance_id", [i for i in ROWS if i.startswith("redis__")])
def test_redis_canaries_pass_the_only_filter(instance_id):
    row = ROWS[instance_id]
    command, graded = row.test_command, row.FAIL_TO_PASS + row.PASS_TO_PASS
    files = rc.redis_files(command, ["tests/unit/type/string.tcl", "tests/unit/geo.tcl", "tests/unit/type/zset.tcl",
                                     "tests/unit/type/stream-cgroups.tcl", "tests/helpers/x.tcl"])  # fmt: skip
    assert len(files) == 1, files  # the --single unit, never a helper
    text = "".join(f"    test {{{name}}} {{\n        r ping\n    }}\n" for name in graded)
    code, names = rc.redis_source(f"start_server {{}} {{\n{text}}}\n", graded, rc.redis_only(command))
    assert len(names) == 2 and all(rc.redis_selects(rc.redis_only(command), name) for name in names), (names, rc.redis_only(command))
    assert all(f"test {{{name}}}" in code for name in names) and "assert_equal" in code


def test_redis_only_is_a_regex_after_a_slash_else_a_glob():
    assert rc.redis_selects(["/.*GEOSEARCH .*"], "GEOSEARCH with small distance") and not rc.redis_selects(["BZMPOP"], "BZMPOP with x")
    assert rc.redis_selects(["BZMPOP*"], "BZMPOP with x") and rc.redis_selects([], "anything")


def test_a_canary_of_these_runners_is_its_exact_name():
    canaries = Canaries("gotest", {"TestRedirectWith": "context_test.go"})
    assert canaries.problems({"TestRedirectWithPath": "PASSED", "TestRedirectWith": "FAILED"}) == []
    assert "missing" in canaries.problems({"TestRedirectWithPath": "PASSED"})[0]
    assert "forged" in canaries.problems({"TestRedirectWithPath": "PASSED", "TestRedirectWith": "PASSED"})[0]


@pytest.mark.parametrize(
    "language,path,restored",
    [
        ("go", "zz_main_test.go", True), ("go", "testdata/golden.json", True), ("go", "context.go", False), ("go", "go.mod", False),
        ("c", "tests/test_helper.tcl", True), ("c", "tests/support/util.tcl", True), ("c", "src/t_string.c", False),
        ("java", "src/test/java/com/x/FooTest.java", True), ("java", ".mvn/maven.config", True), ("java", "pom.xml", False),
        ("java", "src/main/java/com/x/Foo.java", False),
        ("javascript", "jest.config.js", True), ("javascript", "src/a.test.ts", True), ("javascript", "__tests__/a.js", True),
        ("javascript", "package.json", False), ("rust", ".cargo/config.toml", True), ("rust", "src/lib.rs", False),
        ("php", "phpunit.xml.dist", True), ("ruby", ".rspec", True), ("ruby", "lib/x.rb", False), ("python", "tests/x.py", False),
    ],
)  # fmt: skip
def test_runner_files_of_each_language(language, path, restored):
    assert (path in language_runner_files(language, [path])) is restored


# jackson-core 2.14.1's own pom (Apache-2.0; the tracked pom.xml of the jackson-core-922 fixture's image, from Debian's
# source of the release), changed as a patch could change it
JACKSON_POM = language_fixtures.HERE / "jackson-core-pom-2.14.xml"
SUREFIRE = "<artifactId>maven-surefire-plugin</artifactId>\n        <version>${version.plugin.surefire}</version>\n        <configuration>\n"
POM_CHANGES = {  # change -> whether the tests are graded again with the pom as at the start
    "a dependency added": (("</dependencies>", "<dependency><groupId>x</groupId><artifactId>y</artifactId><version>1</version></dependency></dependencies>"), False),
    "a comment and blank lines": (("<packaging>", "<!-- why -->\n\n  <packaging>"), False),
    "a version property bumped": (("<properties>", "<properties><x.version>2.15</x.version>"), False),
    "surefire's forkCount in its configuration": ((SUREFIRE, SUREFIRE + "<forkCount>0</forkCount>"), True),
    "the forkCount property": (("<properties>", "<properties><forkCount>0</forkCount>"), True),
    "a test property": (("<properties>", "<properties><maven.test.failure.ignore>true</maven.test.failure.ignore>"), True),
    "a plugin added to the build": (("</build>", "<extensions><extension><groupId>x</groupId><artifactId>y</artifactId></extension></extensions></build>"), True),
    "a profile": (("</dependencies>", "</dependencies><profiles><profile><id>p</id></profile></profiles>"), True),
    "the parent": (("<parent>", "<parent><relativePath>evil.xml</relativePath>"), True),
}  # fmt: skip


@pytest.mark.parametrize("change", list(POM_CHANGES))
def test_a_pom_change_to_the_build_or_the_tests_is_graded_again(change):
    """`maven_poms.runner_view`: what in a pom configures the build and the test run; a fix's dependencies are not it."""
    from uni_agent_gym.rewards.maven_poms import runner_view

    pom = JACKSON_POM.read_text()
    (old, new), graded_again = POM_CHANGES[change]
    assert old in pom, old
    assert (runner_view(pom.replace(old, new, 1)) != runner_view(pom)) is graded_again
    assert runner_view(None) is None and runner_view("<project") == "<unparseable>"


SETUP_CFG = "[metadata]\nname = demo\n\n[tool:pytest]\naddopts = -q\n"
CONFIG_CHANGES = {  # file -> its text after the patch -> whether it goes back to the start (runner_files.py)
    "setup.cfg, its metadata": ("setup.cfg", SETUP_CFG.replace("name = demo", "name = demo2"), False),
    "setup.cfg, its pytest section": ("setup.cfg", SETUP_CFG.replace("-q", "-q -p forge"), True),
    "pyproject.toml added with a pytest section": ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p forge'\n", True),
    "pyproject.toml added without one": ("pyproject.toml", "[project]\nname = 'demo'\n", False),
}  # fmt: skip


@pytest.mark.parametrize("change", list(CONFIG_CHANGES))
async def test_a_python_config_file_goes_back_only_when_its_pytest_section_changed(tmp_path, change):
    """`runner_files_to_restore` reads the file as at the start commit and as the patch left it, in the sandbox (local here)."""
    import subprocess

    from uni_agent_gym.deployments import make_deployment
    from uni_agent_gym.rewards.runner_files import runner_files_to_restore

    path, text, restored = CONFIG_CHANGES[change]
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    (tmp_path / "setup.cfg").write_text(SETUP_CFG)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    start = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (tmp_path / path).write_text(text)
    subprocess.run([*git, "add", "-A"], check=True)
    patch = subprocess.run([*git, "diff", "--cached", start], check=True, capture_output=True, text=True).stdout
    sandbox = make_deployment({"type": "local", "workdir": str(tmp_path)})
    await sandbox.start()
    try:
        found = await runner_files_to_restore(sandbox, str(tmp_path), start, patch, "pytest tests")
    finally:
        await sandbox.stop()
    assert found == ({path: "its pytest section was changed"} if restored else {})
