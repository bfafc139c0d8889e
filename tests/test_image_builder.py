"""Offline instance images: environment specs, the wheelhouse, the build, and the gold-patch check."""

from __future__ import annotations

import asyncio
import json
import re

import secrets

import pytest

from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.workspaces.image_builder import (
    ImageBuildError, build_instance_image, dockerfile, environment_dockerfile, environment_image_name, pip_target_flags,
)  # fmt: skip
from uni_agent_gym.datasets import Task
from uni_agent_gym.instances import image_name, normalise
from uni_agent_gym.specs import SpecError, environment_spec, load_environments
from tests import fixture_sources
from tests.conftest import require_docker

ROWS = {instance_id: normalise(row) for instance_id, row in fixture_sources.derived_rows().items()}
ENVIRONMENTS = fixture_sources.fixtures()


def lite_row(instance_id: str) -> Task:
    for line in (fixture_sources.SHARED / "lite.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["instance_id"] == instance_id:
            return normalise(row)
    raise KeyError(instance_id)


def test_override_wins_over_the_swebench_spec():
    spec = environment_spec(ROWS["sphinx-doc__sphinx-8721"], ENVIRONMENTS)
    assert spec.python == "3.9" and spec.source == "environments file"
    assert not any(r.lower().startswith("sphinx==") for r in spec.requirements) and "Jinja2==2.11.3" in spec.requirements
    assert spec.install == "python -m pip install -e .[test]"
    assert spec.pre_install[0] == "sed -i 's/pytest/pytest -rA/' tox.ini"


def test_swebench_spec_without_override():
    spec = environment_spec(lite_row("pytest-dev__pytest-7168"))
    assert (spec.python, spec.source, spec.install) == ("3.9", "swebench spec", "python -m pip install -e .")
    assert "pluggy==0.13.1" in spec.requirements


@pytest.mark.parametrize(
    "instance_id, message",
    [
        ("pallets__flask-4992", "installs requirements.txt from GitHub, which needs the network"),
    ],
)
def test_specs_that_need_github_ask_for_pins(instance_id, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        environment_spec(lite_row(instance_id))


def test_unknown_repo_and_bad_files(tmp_path):
    row = lite_row("pytest-dev__pytest-7168").replace(repo="someone/unknown")
    with pytest.raises(SpecError, match="swebench has no spec for someone/unknown version 5.4"):
        environment_spec(row)
    (tmp_path / "bad.json").write_text('[{"python": "3.9"}]')
    with pytest.raises(SpecError, match="expects a list of objects with an instance_id"):
        load_environments(tmp_path / "bad.json")
    with pytest.raises(SpecError, match="needs 'python' and 'pip_requirements'"):
        environment_spec(row, {row.instance_id: {"python": "3.9"}})


def test_an_environments_file_is_read_once_per_version_of_it(tmp_path):
    """Every sandbox opened and every grading asks for the environments file: read once, and again when it changes."""
    path = tmp_path / "environments.json"
    path.write_text('[{"instance_id": "a__b-1", "python": "3.9"}]')
    first = load_environments(path)
    assert load_environments(str(path)) is first and first["a__b-1"]["python"] == "3.9"
    path.write_text('[{"instance_id": "a__b-1", "python": "3.11"}]')
    assert load_environments(path)["a__b-1"]["python"] == "3.11"
    path.unlink()
    with pytest.raises(SpecError, match="Environments file"):
        load_environments(path)


def test_pip_targets_the_images_python_and_glibc():
    flags = pip_target_flags("3.9")
    assert flags[:6] == ["--python-version", "3.9", "--implementation", "cp", "--abi", "cp39"]
    assert "manylinux_2_31_x86_64" in flags and "manylinux_2_32_x86_64" not in flags  # bullseye has glibc 2.31


def test_dockerfile_installs_offline_and_commits_the_environment():
    text = dockerfile("uni-agent-gym/base:py3.9", environment_spec(ROWS["sphinx-doc__sphinx-8721"], ENVIRONMENTS))
    assert text.startswith("FROM uni-agent-gym/base:py3.9\n")
    pip_lines = [line for line in text.splitlines() if "pip install" in line]
    assert pip_lines and all("PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/wheelhouse" in line for line in pip_lines)
    assert "sed -i 's/pytest/pytest -rA/' tox.ini" in text and "git commit --allow-empty" in text
    assert text.endswith('LABEL uni-agent-gym.history="ancestry"\n')  # built clean: no derivation needed
    assert dockerfile("b", environment_spec(ROWS["sphinx-doc__sphinx-8721"], ENVIRONMENTS), "none").endswith('LABEL uni-agent-gym.history="none"\n')


async def test_a_python_without_base_image_is_a_clear_error(tmp_path):
    require_docker()
    row = ROWS["pytest-dev__pytest-7168"]
    environments = {row.instance_id: {**ENVIRONMENTS[row.instance_id], "python": "3.8.18"}}
    config = GymConfig.model_validate({"env": {"cache_dir": str(tmp_path)}})
    with pytest.raises(ImageBuildError, match=r"needs Python 3\.8, which has no base image"):
        await build_instance_image(row, config, environments, force=True, log=lambda m: None)


REBUILT_IMAGE = "uni-agent-gym-test/rebuilt-pytest-7168:latest"


def remove_image(name: str) -> None:
    import docker.errors

    from uni_agent_gym.deployments.docker import docker_client

    try:
        docker_client().images.remove(name, force=True)
    except docker.errors.ImageNotFound:
        pass


@pytest.mark.slow
@pytest.mark.parametrize("instance_id", ["pytest-dev__pytest-7168", "pallets__flask-4992", "sphinx-doc__sphinx-8721"])
async def test_built_image_passes_fail_to_pass_with_the_gold_patch(instance_id):
    """Builds the image offline (unless present), then inside it: with the test patch alone the
    FAIL_TO_PASS tests fail, with the gold patch too they pass (the official log parser decides)."""
    require_docker()
    from uni_agent_gym.datasets.swebench import repo_parsers

    row, fixture = ROWS[instance_id], ENVIRONMENTS[instance_id]
    rebuild = instance_id == "pytest-dev__pytest-7168"  # one real build every run (~10 s), the others when missing
    if rebuild:  # under a name of its own: the fixture image other tests run at the same time keeps its id (and
        # what is derived from it, and the ray nodes' copies); the previous run's build goes first, not left dangling
        row = row.replace(image_name=REBUILT_IMAGE)
        await asyncio.to_thread(remove_image, REBUILT_IMAGE)
    name = await fixture_sources.ensure_image(row, force=rebuild)
    assert name == (REBUILT_IMAGE if rebuild else image_name(instance_id))
    again: list[str] = []
    await fixture_sources.ensure_image(row, log=again.append)
    assert again == [f"{instance_id}: {name} exists, skipped"]

    parser = repo_parsers()[row.repo]
    async with make_deployment({"type": "docker", "image": name, "workdir": "/testbed", "network": "none"}) as sandbox:
        await sandbox.write_file("/tmp/test.patch", row.test_patch)
        await sandbox.write_file("/tmp/gold.patch", row.patch)
        before = await sandbox.run(f"git apply /tmp/test.patch && {fixture['test_cmd_as_run']}", timeout=600)
        statuses = parser(before.output, None)
        assert not all(statuses.get(test) == "PASSED" for test in row.FAIL_TO_PASS)
        after = await sandbox.run(f"git apply /tmp/gold.patch && {fixture['test_cmd_as_run']}", timeout=600)
        statuses = parser(after.output, None)
        assert {test: statuses.get(test) for test in row.FAIL_TO_PASS} == {test: "PASSED" for test in row.FAIL_TO_PASS}


def test_instances_with_the_same_python_and_pins_share_one_environment_image():
    """pytest-7168 and pytest-7220 pin the same packages on Python 3.9 (their variables differ): one
    environment image; sphinx-8721 pins others: its own. The instance layer starts from it."""
    specs = {i: environment_spec(ROWS[i], ENVIRONMENTS) for i in ("pytest-dev__pytest-7168", "pytest-dev__pytest-7220", "sphinx-doc__sphinx-8721")}
    assert specs["pytest-dev__pytest-7168"].env != specs["pytest-dev__pytest-7220"].env
    names = {i: environment_image_name(spec) for i, spec in specs.items()}
    assert names["pytest-dev__pytest-7168"] == names["pytest-dev__pytest-7220"] != names["sphinx-doc__sphinx-8721"]
    assert re.fullmatch(r"uni-agent-gym/env:py3\.9-[0-9a-f]{16}", names["sphinx-doc__sphinx-8721"])
    environment = environment_dockerfile("uni-agent-gym/base:py3.9", specs["pytest-dev__pytest-7168"])
    assert environment.startswith("FROM uni-agent-gym/base:py3.9\n") and "pip install -r /opt/requirements.txt" in environment
    assert "testbed" not in environment, "the environment layer holds no repository"
    instance = dockerfile(names["pytest-dev__pytest-7168"], specs["pytest-dev__pytest-7168"])
    assert instance.startswith(f"FROM {names['pytest-dev__pytest-7168']}\n") and "COPY testbed /testbed" in instance
    assert "requirements.txt" not in instance and "ENV SETUPTOOLS_SCM_PRETEND_VERSION=5.4.1" in instance


async def test_r2e_gym_rows_are_refused_by_the_builder_with_the_reason(tmp_path):
    from tests import family_rows

    task = normalise(family_rows.r2e_row())
    config = GymConfig.model_validate({"env": {"cache_dir": str(tmp_path)}})
    with pytest.raises(ImageBuildError, match="r2e-gym keeps its tests only in its image uni-agent-gym-derived/pytest_final:.*pull the image"):
        await build_instance_image(task, config, {}, log=lambda m: None)


@pytest.mark.parametrize(
    "errors, added, raises",
    [
        (["toml", "typed_ast"], ["toml", "typed_ast"], False),  # each missing package fetched once, then it builds
        (["toml", "toml"], ["toml"], True),  # fetched and still missing: the build's own error
        ([None], [], True),  # any other failure is not retried
    ],
)
async def test_a_package_the_install_needs_but_the_pins_lack_is_added_and_the_build_retried(tmp_path, monkeypatch, errors, added, raises):
    """A fixture's pins hold its environment, not its repository's own dependencies (pytest 6.2.5 needs toml):
    a new machine's build must fetch them rather than rely on another instance's wheels. Docker and the
    index are stood in for here; tests/conftest.py's `fixture_images` builds the real ones."""
    from uni_agent_gym.workspaces import image_builder

    failures, fetched = list(errors), []

    def fake_build(context, name, log, network="none", labels=None):
        if failures:
            package = failures.pop(0)
            detail = f"ERROR: No matching distribution found for {package}" if package else "gcc: error"
            raise ImageBuildError(f"docker build of {name} failed: non-zero code\n{detail}")

    monkeypatch.setattr(image_builder, "docker_build", fake_build)
    monkeypatch.setattr(image_builder, "download_wheelhouse", lambda requirements, *args, **kwargs: fetched.extend(requirements))
    build = image_builder._build_adding_what_the_install_lacks(tmp_path, "some/image", "3.11", lambda message: None)
    if raises:
        with pytest.raises(ImageBuildError):
            await build
    else:
        await build
    assert fetched == added


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a new machine may build the Java toolchain image here first
async def test_an_instance_image_built_from_other_inputs_is_built_again(docker_image):
    """An image built here carries the digest of its inputs: found again with the same inputs it is reused; with a
    changed spec (here an environments file's variable) it is built again; one without the label (pulled, or built
    before it) is reused as it is. On the Java toy (its toolchain image is shared with the Java attacks; its install
    is Maven's offline test-compile, seconds where a real fixture's build takes a minute)."""
    require_docker()
    from tests import java_toy
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.specs import load_environments
    from uni_agent_gym.workspaces.image_builder import INPUTS_LABEL, build_instance_image

    name = f"uni-agent-gym-test/inputs-{secrets.token_hex(3)}"
    row = (await java_toy.java_toy_row()).replace(image_name=f"{name}:latest")
    config = java_toy.build_config()
    environments = load_environments(java_toy.ENVIRONMENTS)
    changed = {key: {**entry, "env": {**entry.get("env", {}), "UAG_CHANGED": "1"}} if key == row.instance_id else entry
               for key, entry in environments.items()}  # fmt: skip
    said: list[str] = []
    images = docker_client().images
    try:
        await build_instance_image(row, config, environments, log=said.append)
        first = images.get(row.image_name)
        await build_instance_image(row, config, environments, log=said.append)
        assert said[-1].endswith("exists, skipped") and images.get(row.image_name).id == first.id
        await build_instance_image(row, config, changed, log=said.append)
        again = images.get(row.image_name)
        assert any("built from other inputs" in line for line in said) and again.id != first.id
        assert INPUTS_LABEL in first.labels and again.labels[INPUTS_LABEL] != first.labels[INPUTS_LABEL]
        images.get(docker_image).tag(name, "pulled")  # an image without the label: used as it is
        await build_instance_image(row.replace(image_name=f"{name}:pulled"), config, changed, log=said.append)
        assert said[-1].endswith("exists, skipped") and images.get(f"{name}:pulled").id == images.get(docker_image).id
    finally:
        for tag in ("latest", "pulled"):
            remove_image(f"{name}:{tag}")  # either may not be made: the test failed before


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a new machine may build the C toolchain image here first (redis's fixtures share it)
async def test_an_image_starts_with_the_compiler_caches_of_the_last_image_of_its_repository():
    """The C toy (`tests/c_toy.py`) built twice under two names: the second starts with the first's ccache and
    compiles nothing again (its compilations are hits), its inputs digest is the one it would have without the seed
    (found again, it is reused), and an image made from the first under another name is never taken as a seed."""
    require_docker()
    from tests.c_toy import REPO, REPO_NAME, c_toy_row
    from tests.fixture_sources import BUILD_CACHE
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.toolchains import TOOLCHAIN_CACHES, TOOLCHAIN_PYTHON
    from uni_agent_gym.workspaces.base_images import bootstrap_base
    from uni_agent_gym.workspaces.build_caches import seed_image
    from uni_agent_gym.workspaces.image_builder import TOOLCHAIN_LABEL

    bootstrap_base(TOOLCHAIN_PYTHON, log=lambda message: None)
    config = GymConfig.model_validate({"env": {"cache_dir": str(BUILD_CACHE), "mirrors": {REPO_NAME: str(REPO)}}})
    row = (await c_toy_row(str(BUILD_CACHE))).replace(needs_environment=True)
    # ccache caches a compiler call of one source file: the objects first, then the toy's own build
    environments = {row.instance_id: {"instance_id": row.instance_id, "install_cmd": "cc -c arith.c -o arith.o && cc -I. -c tests/check.c -o tests/check.o && make"}}
    prefix = f"uni-agent-gym-test/caches-{secrets.token_hex(3)}"
    first, second, derived = f"{prefix}-first:latest", f"{prefix}-second:latest", f"{prefix}-derived:latest"
    client = docker_client()

    def ccache_stats(image: str) -> dict[str, int]:
        output = client.containers.run(image, ["ccache", "--print-stats"], remove=True, network_disabled=True).decode()
        return {key: int(value) for key, value in (line.split("\t") for line in output.splitlines() if "\t" in line)}

    said: list[str] = []
    try:
        await build_instance_image(row.replace(image_name=first), config, environments, log=said.append)
        await build_instance_image(row.replace(image_name=second), config, environments, log=said.append)
        assert f"{row.instance_id}: compiler caches from {first}" in said, said
        before, after = ccache_stats(first), ccache_stats(second)  # the second's cache is the first's, then its own build
        assert after["direct_cache_hit"] - before["direct_cache_hit"] == 2 and after["cache_miss"] == before["cache_miss"], (before, after)
        await build_instance_image(row.replace(image_name=second), config, environments, log=said.append)
        assert said[-1].endswith("exists, skipped"), said[-1]
        toolchain = f"{TOOLCHAIN_LABEL}={client.images.get(first).labels[TOOLCHAIN_LABEL]}"
        client.images.get(first).tag(derived)  # made from the first: its label names the first, not this name
        client.images.remove(second)
        assert seed_image(REPO_NAME, toolchain) == first
        client.images.remove(first)
        assert seed_image(REPO_NAME, toolchain) is None and TOOLCHAIN_CACHES["ccache"] == "/root/.cache/ccache"
    finally:
        for name in (first, second, derived):
            remove_image(name)  # not made, or removed above, is fine
