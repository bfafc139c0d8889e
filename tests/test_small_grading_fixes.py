"""Issue 67's smaller items, each as the user meets it: Go's module-mode fetches count as network (and the failure says
how to build offline); an image records the directory it keeps the repository in, and a task looking elsewhere is
refused naming both; an environments file's unknown keys are named; `validate`'s table shows an error's last line;
`datasets`' "images here" counts images by whether they hold the row's environment."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.test_datasets import table_rows
from tests.test_languages_datasets import multilingual
from uni_agent_gym.datasets import normalise
from uni_agent_gym.specs import SpecError, environment_spec, load_environments
from uni_agent_gym.toolchains import network_step

GIN = "gin-gonic__gin-3227"
GOPATH_MODE = {"GO111MODULE": "off", "GOPROXY": "off", "GOPATH": "/go:/usr/share/gocode", "GOFLAGS": ""}  # tests/languages/environments.json's


# --- a. Go in module mode fetches what go.mod names --------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, env, fetching",
    [("go test -c ./binding", None, "go test -c ./binding"),  # swebench's gin, caddy, ... specs
     ("go build ./...", None, "go build ./..."), ("go mod tidy", None, "go mod tidy"), ("go vet ./...", None, "go vet ./..."),
     ("make && go run ./cmd/gen", None, "go run ./cmd/gen"), ("go test -v ./...", {"GOPROXY": "off"}, "go test -v ./..."),
     ("go test -count=1 -run '^$' .", GOPATH_MODE, None),  # GOPATH mode: the gin fixtures' entry
     ("GO111MODULE=off go test -c .", None, None), ("export GO111MODULE=off && go build .", None, None),
     ("go build -mod=vendor ./...", None, None), ("go test -c .", {"GOFLAGS": "-mod=vendor"}, None),
     ("GOFLAGS='-mod=vendor -v' go test -c .", None, None), ("go version && go env GOPATH", None, None)],
    ids=["test-c", "build", "mod-tidy", "vet", "run", "goproxy-off-still-fetches", "gopath-env", "gopath-inline", "gopath-export",
         "vendor-flag", "vendor-goflags-env", "vendor-goflags-inline", "version-env"],
)  # fmt: skip
def test_go_commands_that_load_packages_in_module_mode_fetch(command, env, fetching):
    assert network_step(command, env) == fetching


def test_a_swebench_go_row_is_not_buildable_offline_and_the_error_says_how_to_build_it(tmp_path, capsys, monkeypatch):
    """swebench's gin spec installs with `go test -c .`: in module mode it fetches gin's modules, and the image builds with
    the network off. `datasets` said "buildable offline" once given a mirror, and `images build` then failed in docker's
    output; now both say the step and how to build Go offline. The fixtures' GOPATH-mode entry builds."""
    from uni_agent_gym import dataset_summary
    from uni_agent_gym.cli import main
    from tests import language_fixtures

    row = multilingual(GIN)
    with pytest.raises(SpecError, match=re.escape("`go test -c .` fetches from the network")) as refused:
        environment_spec(normalise(row))
    for advice in ("GOPATH mode", "GO111MODULE=off", "golang-*-dev", "-mod=vendor"):
        assert advice in str(refused.value), str(refused.value)
    entry = load_environments(language_fixtures.ENVIRONMENTS)
    assert environment_spec(normalise(language_fixtures.derived_rows()[GIN]), entry).env["GO111MODULE"] == "off"

    monkeypatch.setenv("COLUMNS", "2000")
    monkeypatch.setattr(dataset_summary, "_image_checker", lambda: None)
    dataset = tmp_path / "gin.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    assert main(["datasets", "--dataset", str(dataset), "--mirror", f"gin-gonic/gin={tmp_path}"]) == 0
    (cells,) = table_rows(capsys.readouterr().out)
    assert cells[3:6] == ["1", "?", "0"] and "`go test -c .` fetches from the network" in cells[7], cells

    assert main(["images", "build", "--dataset", str(dataset), "--force", "--mirror", f"gin-gonic/gin={tmp_path}"]) == 1
    out = capsys.readouterr()
    assert f"{GIN}: FAILED: " in out.out and "GOPATH mode" in out.out, out


# --- c. an environments file's unknown keys --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry, named",
    [({"install_comand": "make"}, "'install_comand' in 'x__y-1' (did you mean 'install_cmd'?)"),
     ({"workdir": "/go/src/x"}, "'workdir' in 'x__y-1' (a column of the row: give it in the dataset)"),
     ({"pip_requirement": ["a==1"]}, "'pip_requirement' in 'x__y-1' (did you mean 'pip_requirements'?)"),
     ({"compiler": "gcc"}, "'compiler' in 'x__y-1'.")],
    ids=["typo", "row-column", "singular", "unknown"],
)  # fmt: skip
def test_an_unknown_key_of_an_entry_is_named_with_the_known_ones(tmp_path, entry, named):
    """Accepted silently, a typo'd `install_comand` built the spec's install instead of the one written."""
    path = tmp_path / "environments.json"
    path.write_text(json.dumps([{"instance_id": "x__y-1", "python": "3.11", "pip_requirements": [], **entry}]))
    with pytest.raises(SpecError) as refused:
        load_environments(path)
    message = str(refused.value)
    assert message.startswith(f"Environments file {path}: unknown key(s) {named}") and "An entry's keys: instance_id, python, " in message
    assert "notes for its reader, not read: notes, why" in message


def test_notes_for_the_reader_are_allowed_and_every_environments_file_of_the_suite_loads(tmp_path):
    """The suite's fixtures record where each base came from and its counts (`sdist`, `notes`, ...); the language
    fixtures' file has a top-level `why`. A key at the top other than those is named too."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "swebench" / "fixtures.json"
    here = Path(__file__).resolve().parent
    files = [here / "languages" / "environments.json", here / "java_toy_environments.json", *([shared] if shared.exists() else [])]
    for path in files:
        assert load_environments(path), path
    if shared.exists():
        assert {"sdist", "notes"} <= set(load_environments(shared)["pallets__flask-4045"])
    path = tmp_path / "environments.json"
    path.write_text(json.dumps({"why": "w", "instance": [], "instances": [{"instance_id": "a", "notes": ["n"], "env": {}}]}))
    with pytest.raises(SpecError, match=re.escape("unknown key(s) 'instance' at the top")):
        load_environments(path)
    path.write_text(json.dumps({"instancs": [{"instance_id": "a"}]}))  # not an object of entries: said, not a TypeError
    with pytest.raises(SpecError, match=re.escape('expects a list of objects with an instance_id, or {"instances": [...]}')):
        load_environments(path)


# --- d. validate's table: an error's last line ----------------------------------------------------------------------------


def test_validates_table_shows_the_last_line_of_an_error(tmp_path, capsys, monkeypatch):
    """The toy with a gold patch that does not apply: the report keeps the tail of git apply's and patch's output; the
    table showed its first 200 characters (the middle of `git apply --reject`'s output), and shows its last line."""
    import asyncio

    from uni_agent_gym.cli import main
    from uni_agent_gym.toy import toy_instance

    row = asyncio.run(toy_instance(str(tmp_path / "cache")))
    broken = {**row, "instance_id": "toy-bad-gold", "patch": row["patch"].replace("(len(values) - 1)\n+", "(len(values) - 2)\n+")}
    assert broken["patch"] != row["patch"]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps(broken) + "\n")
    monkeypatch.setenv("COLUMNS", "300")
    code = main(["validate", "--dataset", str(dataset), "--deployment", "local", "--set", f"env.cache_dir={tmp_path / 'cache'}",
                 "--output", str(tmp_path / "out")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    reason = json.loads((tmp_path / "out" / "validation.json").read_text())["results"][0]["reasons"][0]
    last = reason.splitlines()[-1]
    assert last == "1 out of 1 hunk FAILED -- saving rejects to file stats.py.rej", reason
    (cells,) = [cells for cells in table_rows(out) if cells[0] == "toy-bad-gold"]
    assert cells[3] == f"gold not resolved: {last}", cells


def test_a_long_last_line_is_cut_to_the_width():
    from uni_agent_gym.validation import Validation, table_reason

    result = Validation("t", "python", False, ["build: cc -c a.c\nerror: " + "x" * 300])
    assert table_reason(result, width=40) == "build fails: error: " + "x" * 19 + "…"
    assert table_reason(Validation("t", "python", True)) == ""


# --- b and e: what an image records of itself, on real images -------------------------------------------------------------

IMPORT_PATH = "/go/src/example.com/toy"


@pytest.fixture(scope="module")
def repo_image(docker_image, tmp_path_factory):
    """An image holding a one-commit repository at IMPORT_PATH (as a Go fixture in GOPATH mode has it), and its commit."""
    import docker

    from uni_agent_gym.workspaces.image_builder import docker_build

    name = "uag-test/small-fixes:workdir"
    context = tmp_path_factory.mktemp("workdir-image")
    (context / "Dockerfile").write_text(
        f"FROM {docker_image}\nRUN mkdir -p {IMPORT_PATH} && cd {IMPORT_PATH} && git init -q && echo 'x = 1' > toy.py && git add -A && "
        "git -c user.name=t -c user.email=t@t commit -qm base\n"
    )
    docker_build(context, name, lambda message: None)
    commit = subprocess.run(["docker", "run", "--rm", name, "git", "-C", IMPORT_PATH, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()  # fmt: skip
    yield name, commit
    docker.from_env().images.remove(name, force=True)


def labelled(source: str, name: str, row: dict, workdir: str, environments: dict | None = None, **extra: str) -> str:
    """`source` tagged `name` and labelled as `images build` labels the image of `row` built with its repository at
    `workdir` (and `extra` labels)."""
    import docker

    from uni_agent_gym.workspaces.history import HISTORY_LABEL
    from uni_agent_gym.workspaces.image_builder import _relabel
    from uni_agent_gym.workspaces.recorded_environment import environment_labels

    task = normalise(row)
    docker.from_env().images.get(source).tag(name)
    labels = environment_labels(environment_spec(task, environments or {}), task, workdir, name) if workdir else {}
    _relabel(name, {**labels, HISTORY_LABEL: "ancestry", **extra})
    return name


def python_row(commit: str, image: str, **columns) -> dict:
    return {"instance_id": "example__toy-1", "repo": "example/toy", "base_commit": commit, "version": "0", "problem_statement": "p",
            "test_patch": "", "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": [], "image_name": image, **columns}  # fmt: skip


ENTRY = {"instance_id": "example__toy-1", "python": "3.11", "pip_requirements": [], "install_cmd": "true", "test_cmd_as_run": "python3 toy.py"}


@pytest.mark.parametrize("with_environments", [False, True], ids=["spec-defaults", "environments-file"])
async def test_a_row_without_the_images_workdir_is_refused_naming_both_directories(repo_image, tmp_path, with_environments):
    """Built from a row with `workdir: /go/src/example.com/toy`, opened from a copy without it: the episode opened in a
    /testbed the image does not have (its grading then failed: "`git rev-parse HEAD` failed in /testbed"), or, with the
    environments file, the image was refused blaming the toolchain (the digests differ by the directory alone). The row
    with the workdir opens."""
    import docker

    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.envs import AsyncSWEEnv
    from uni_agent_gym.errors import DeploymentError

    source, commit = repo_image
    name = labelled(source, "uag-test/small-fixes:built-with-workdir", python_row(commit, "x", workdir=IMPORT_PATH), IMPORT_PATH,
                    {ENTRY["instance_id"]: ENTRY})  # fmt: skip
    env_config = {"cache_dir": str(tmp_path / "cache"), "workspace": "image"}
    if with_environments:
        (tmp_path / "environments.json").write_text(json.dumps([ENTRY]))
        env_config["environments"] = str(tmp_path / "environments.json")
    config = GymConfig.model_validate({"deployment": {"type": "docker"}, "env": env_config})
    client = docker.from_env()
    before = {container.id for container in client.containers.list(all=True)}
    try:
        env = AsyncSWEEnv(config)
        try:
            with pytest.raises(DeploymentError) as refused:
                await env.reset(options={"instance": python_row(commit, name)})
        finally:
            await env.close()
        message = str(refused.value)
        assert f"keeps the repository in {IMPORT_PATH}, the task looks for it in /testbed" in message, message
        assert f"give the row `workdir: {IMPORT_PATH}`" in message and "images build --force" in message, message
        env = AsyncSWEEnv(config)
        try:
            observation, _ = await env.reset(options={"instance": python_row(commit, name, workdir=IMPORT_PATH)})
            assert env.repo_dir == IMPORT_PATH
        finally:
            await env.close()
    finally:
        client.images.remove(name, force=True)
    assert {container.id for container in client.containers.list(all=True)} == before


def test_an_image_labelled_before_the_workdir_label_is_checked_as_before():
    """Old images record no working directory: nothing to compare, the digest check alone (as today)."""
    from tests.test_recorded_environment import ENTRY as REDIS_ENTRY
    from tests.test_recorded_environment import REDIS, built_with
    from uni_agent_gym.workspaces.recorded_environment import DIGEST_LABEL, WORKDIR_LABEL, recorded_image

    image_id, labels = built_with(REDIS_ENTRY)
    assert labels[WORKDIR_LABEL] == "/testbed"
    old = {key: value for key, value in labels.items() if key != WORKDIR_LABEL}
    assert recorded_image(REDIS, "redis-image", (image_id, old), {}, "/testbed").environment == labels[DIGEST_LABEL]


def test_images_here_counts_images_that_hold_the_rows_environment(docker_image, tmp_path, capsys, monkeypatch):
    """Three redis rows, each with an image of its name here: one built for its environment, one built for another
    commit, one pulled (no labels). "images here" said 3; it counts the first and the pulled one, and says which."""
    from uni_agent_gym.cli import main

    redis = multilingual("redis__redis-12272")
    rows = {kind: {**redis, "instance_id": f"redis__redis-{number}", "image_name": f"uag-test/small-fixes:images-here-{kind}"}
            for number, kind in ((1, "matching"), (2, "other-commit"), (3, "pulled"))}  # fmt: skip
    built = [labelled(docker_image, rows["matching"]["image_name"], rows["matching"], "/testbed"),
             labelled(docker_image, rows["other-commit"]["image_name"], {**rows["other-commit"], "base_commit": "b" * 40}, "/testbed"),
             labelled(docker_image, rows["pulled"]["image_name"], rows["pulled"], "")]  # fmt: skip
    try:
        dataset = tmp_path / "rows.jsonl"
        dataset.write_text("".join(json.dumps(row) + "\n" for row in rows.values()))
        monkeypatch.setenv("COLUMNS", "400")
        assert main(["datasets", "--dataset", str(dataset)]) == 0
        out = capsys.readouterr().out
        (cells,) = table_rows(out)
        assert cells[:5] == ["swe-bench", "redis/redis", "c", "3", "2 (1 unlabelled, 1 for another environment)"], cells
        assert "images here: unlabelled = an image not built here" in out and "for another environment = built here for another" in out
    finally:
        import docker

        for name in built:
            docker.from_env().images.remove(name, force=True)
