"""A task in another language than Python: its environment is a toolchain (Debian packages), the spec's install
and build run in its image, its build again when grading (swebench's eval-script order), its test command as the
spec writes it."""

from __future__ import annotations

import dataclasses

import pytest

from tests import language_fixtures
from uni_agent_gym.datasets import normalise
from uni_agent_gym.specs import SpecError, build_of_tests, command_of_tests, environment_spec
from uni_agent_gym.toolchains import TOOLCHAIN_PYTHON, language_of
from uni_agent_gym.workspaces.image_builder import dockerfile, toolchain_dockerfile, toolchain_image_name

RAW_REDIS = language_fixtures.derived_rows()["redis__redis-12272"]
REDIS = normalise(RAW_REDIS)


def test_a_c_task_takes_its_toolchain_install_build_and_tests_from_swebenchs_spec():
    spec = environment_spec(REDIS)
    assert (spec.language, spec.python, spec.requirements) == ("c", TOOLCHAIN_PYTHON, [])
    assert {"build-essential", "tcl", "make"} - set(spec.toolchain) == {"make"}  # build-essential brings make
    assert spec.install == "make distclean && make" and spec.build == "make distclean && make" == build_of_tests(REDIS)
    # swebench's non-Python specs name their tests: nothing is appended (a Python spec gets the test files)
    assert spec.test_command == command_of_tests(REDIS) == 'TERM=dumb ./runtest --durable --single unit/type/string --only "/.*(GETRANGE|SETRANGE).*"'


def test_an_environments_file_overrides_each_part():
    override = {REDIS.instance_id: {"instance_id": REDIS.instance_id, "toolchain": ["libssl-dev"], "install_cmd": ["make -j2"],
                                       "build_cmd": "make", "test_cmd_as_run": "./runtest --single unit/type/string", "env": {"A": "1"}}}  # fmt: skip
    spec = environment_spec(REDIS, override)
    assert spec.toolchain[-1] == "libssl-dev" and spec.install == "make -j2" and spec.build == "make"
    assert spec.test_command == "./runtest --single unit/type/string" and spec.env == {"A": "1"} and spec.source == "environments file"


def test_a_python_task_builds_nothing_when_graded():
    python_task = normalise({**RAW_REDIS, "repo": "pytest-dev/pytest", "version": "5.4"})
    assert language_of(python_task) == "python" and build_of_tests(python_task) == ""


@pytest.mark.parametrize("row,error", [
    (REDIS.replace(language="cobol"), "no toolchain is known for language 'cobol' (known: python, c, cpp, go, java"),
    (normalise({**RAW_REDIS, "version": "1"}), "swebench has no spec for redis/redis version 1; give its toolchain"),
])  # fmt: skip
def test_a_task_with_no_toolchain_or_spec_says_what_to_give(row, error):
    with pytest.raises(SpecError, match=error.replace("(", r"\(").replace(")", r"\)")):
        environment_spec(row)


def test_the_toolchain_layer_installs_the_packages_by_apt_and_the_instance_layer_has_no_pip():
    spec = environment_spec(REDIS)
    toolchain = toolchain_dockerfile("uni-agent-gym/base:py3.11", spec)
    assert "apt-get install -y -qq --no-install-recommends build-essential" in toolchain and " tcl " in toolchain
    assert toolchain_image_name(spec).startswith("uni-agent-gym/toolchain:c-")
    instance = dockerfile(toolchain_image_name(spec), spec)
    assert "wheelhouse" not in instance and "\nRUN make distclean && make\n" in instance
    # C compiles through ccache, so the grading's `make distclean && make` hits what the image's build compiled
    assert " ccache " in toolchain and "\nENV PATH=/usr/lib/ccache:$PATH\n" in toolchain


def test_a_go_task_sits_at_its_import_path_in_a_gopath_with_debians_go_sources():
    from uni_agent_gym.specs import load_environments

    gin = normalise(language_fixtures.derived_rows()["gin-gonic__gin-3227"])
    spec = environment_spec(gin, load_environments(language_fixtures.ENVIRONMENTS))
    assert gin.workdir == "/go/src/github.com/gin-gonic/gin" and spec.build == "" and spec.env["GO111MODULE"] == "off"
    assert spec.toolchain[0] == "golang-go" and "golang-github-stretchr-testify-dev" in spec.toolchain
    assert "ccache" not in toolchain_dockerfile("base", spec)
    instance = dockerfile(toolchain_image_name(spec), spec, repo_dir=gin.workdir)
    assert "COPY testbed /go/src/github.com/gin-gonic/gin\n" in instance and "WORKDIR /go/src/github.com/gin-gonic/gin\n" in instance
    assert "sh /tmp/uni-agent-gym-clean-history.sh /go/src/github.com/gin-gonic/gin ancestry" in instance


def test_an_eval_report_gives_the_resolved_rate_per_language():
    from uni_agent_gym.eval.report import build_report

    def trajectory(instance_id: str, resolved: bool) -> dict:
        return {"instance_id": instance_id, "resolved": resolved, "exit_reason": "finished", "turns": 1, "seconds": 1.0,
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 0.0}, "reward_report": {"caused_by": None}}  # fmt: skip

    trajectories = [trajectory("a", True), trajectory("b", False), trajectory("c", True)]
    report = build_report(trajectories, {"a": "x/a", "b": "x/b", "c": "x/c"}, languages={"a": "c", "b": "c", "c": "go"})
    assert report["per_language"] == {"c": {"instances": 2, "graded": 2, "resolved": 1, "resolved_rate": 0.5}, "go": {"instances": 1, "graded": 1, "resolved": 1, "resolved_rate": 1.0}}


def test_a_toolchain_setup_runs_after_the_packages_and_names_its_own_image():
    from uni_agent_gym.specs import load_environments

    environments = load_environments(language_fixtures.ENVIRONMENTS)
    jackson = environment_spec(normalise(language_fixtures.derived_rows()["fasterxml__jackson-core-922"]), environments)
    assert jackson.toolchain[:2] == ["default-jdk-headless", "maven"] and jackson.toolchain_setup
    layer = toolchain_dockerfile("base", jackson)
    assert layer.index("apt-get install") < layer.index("apt-get source -qq --download-only jackson-core")
    plain = dataclasses.replace(jackson, toolchain_setup=[])
    assert toolchain_image_name(plain) != toolchain_image_name(jackson) and "apt-get source" not in toolchain_dockerfile("base", plain)


@pytest.mark.parametrize(
    "command, fetching",
    [("composer install --no-interaction", "composer install --no-interaction"), ("make distclean && make", None),
     ("npm ci --offline", None), ("cd x && npm install --unsafe-perm", "npm install --unsafe-perm"), ("mvn -o -B test", None),
     ("mvn clean install -B", "mvn clean install -B"), ("GO111MODULE=off go test -count=1 -run '^$' .", None), ("go mod download", "go mod download"),
     ("cargo test --offline", None), ("RUSTFLAGS=-Awarnings cargo test --no-run", "RUSTFLAGS=-Awarnings cargo test --no-run"),
     ("bundle install --local", None), ("bundle install --jobs=4", "bundle install --jobs=4"), ("yarn", "yarn"), ("yarn test", None),
     ("git submodule update --init", "git submodule update --init"), ("pip install --no-index -e .", None)],
)
def test_an_install_step_that_fetches_from_the_network_is_found(command, fetching):
    """Images build with the network off: such a step makes a row not buildable here (it said `composer: not found`
    at `images build` after `datasets` had counted the row buildable)."""
    from uni_agent_gym.toolchains import network_step

    assert network_step(command) == fetching
