"""Config loading: formats, layering, ${ENV} interpolation, one-line deployment switch, secrets."""

from __future__ import annotations

import re

import pytest

from uni_agent_gym.config import (
    DockerDeploymentConfig,
    LocalDeploymentConfig,
    ModalDeploymentConfig,
    deployment_config,
    load_config,
)
from uni_agent_gym.errors import ConfigError

DOCKER_YAML = "deployment:\n  type: docker\n  image: ${UAG_IMAGE}\n  cpus: 1.5\n"


@pytest.mark.parametrize(
    "filename, text",
    [
        ("c.yaml", "deployment:\n  type: docker\n  image: img:1\n  memory: 2g\n"),
        ("c.yml", "deployment: {type: docker, image: 'img:1', memory: 2g}\n"),
        ("c.json", '{"deployment": {"type": "docker", "image": "img:1", "memory": "2g"}}'),
        ("c.toml", '[deployment]\ntype = "docker"\nimage = "img:1"\nmemory = "2g"\n'),
    ],
    ids=["yaml", "yml", "json", "toml"],
)
def test_every_format_loads_the_same(tmp_path, filename, text):
    path = tmp_path / filename
    path.write_text(text)
    deployment = load_config(path).deployment
    assert isinstance(deployment, DockerDeploymentConfig)
    assert (deployment.image, deployment.memory, deployment.pids_limit) == ("img:1", "2g", 1024)


@pytest.mark.parametrize(
    "deployment_type, model",
    [("local", LocalDeploymentConfig), ("docker", DockerDeploymentConfig), ("modal", ModalDeploymentConfig)],
)
def test_switching_deployment_is_one_line(tmp_path, deployment_type, model):
    path = tmp_path / "c.yaml"
    path.write_text(f"deployment:\n  type: {deployment_type}\n")
    config = load_config(path).deployment
    assert isinstance(config, model)
    assert config.command_timeout == 120.0  # every option has a default


def test_switching_keeps_working_with_options_of_the_other_type(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("deployment:\n  type: local\n  image: img:1\n  memory: 2g\n  block_network: true\n")
    assert load_config(path).deployment == LocalDeploymentConfig()
    path.write_text("deployment:\n  type: local\n  image: img:1\n  imagee: typo\n")
    with pytest.raises(ConfigError, match="deployment.local.imagee: Extra inputs are not permitted"):
        load_config(path)


def test_defaults_without_any_file():
    assert load_config().deployment == DockerDeploymentConfig()


def test_environment_interpolation(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(DOCKER_YAML + "  workdir: ${UAG_WORKDIR:-/testbed}\n  env: {TOKEN: 'pre-${UAG_TOKEN}-post'}\n")
    config = load_config(path, environ={"UAG_IMAGE": "from-env:2", "UAG_TOKEN": "t0k"}).deployment
    assert (config.image, config.workdir, config.env) == ("from-env:2", "/testbed", {"TOKEN": "pre-t0k-post"})


def test_an_unset_variable_is_an_error_naming_it(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(DOCKER_YAML)
    with pytest.raises(ConfigError, match=re.escape("Environment variable UAG_IMAGE is not set (used at deployment.image)")):
        load_config(path, environ={})


def test_secrets_never_appear_in_validation_errors(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("deployment:\n  type: docker\n  cpus: ${UAG_SECRET}\n  memory: ['${UAG_SECRET}']\n")
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={"UAG_SECRET": secret})
    message = str(caught.value)
    assert "deployment.docker.cpus" in message and "deployment.docker.memory" in message
    assert secret not in message and secret not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize(
    "text, expected",
    [
        ("deployment:\n  type: docker\n  imgae: x\n", "deployment.docker.imgae: Extra inputs are not permitted"),
        ("deployment:\n  type: podman\n", "deployment: Input tag 'podman' found using 'type' does not match"),
        ("deployment:\n  type: docker\n  network: host\n", "deployment.docker.network: Input should be 'bridge' or 'none'"),
        ("deployment:\n  type: local\n  command_timeout: -1\n", "deployment.local.command_timeout: Input should be greater than 0"),
        ("deplyment: {}\n", "deplyment: Extra inputs are not permitted"),
        ("- a\n- b\n", "expects a mapping at the top level, got list"),
        ("deployment: [\n", "is not valid YAML"),
    ],
    ids=["typo", "unknown-type", "bad-literal", "negative-timeout", "unknown-section", "not-a-mapping", "bad-yaml"],
)
def test_bad_configs_name_the_problem(tmp_path, text, expected):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(path)


def test_unsupported_extension_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"expects \.yaml, \.yml, \.json or \.toml, got '\.ini'"):
        (tmp_path / "c.ini").write_text("")
        load_config(tmp_path / "c.ini")
    with pytest.raises(ConfigError, match="Cannot read config file"):
        load_config(tmp_path / "absent.yaml")


def test_layers_and_overrides(tmp_path):
    base, layer = tmp_path / "base.yaml", tmp_path / "layer.json"
    base.write_text("deployment:\n  type: docker\n  image: a\n  memory: 1g\n")
    layer.write_text('{"deployment": {"image": "b"}}')
    config = load_config(base, layer, overrides=["deployment.cpus=3", "deployment.env.X=1"]).deployment
    assert (config.image, config.memory, config.cpus, config.env) == ("b", "1g", 3.0, {"X": "1"})
    assert isinstance(load_config(base, overrides=["deployment.type=local"]).deployment, LocalDeploymentConfig)
    with pytest.raises(ConfigError, match="Override expects KEY=VALUE"):
        load_config(overrides=["deployment.type"])


def test_deployment_config_from_a_dict():
    assert deployment_config({"type": "local", "workdir": "/w"}) == LocalDeploymentConfig(workdir="/w")
    with pytest.raises(ConfigError, match="deployment.docker.pull: Input should be 'missing', 'never' or 'always'"):
        deployment_config({"type": "docker", "pull": "sometimes"})


@pytest.mark.parametrize("name", ["local", "docker", "modal"])
def test_shipped_deployment_configs_are_valid(name):
    from pathlib import Path

    config = load_config(Path(__file__).parent.parent / "configs" / "deployment" / f"{name}.yaml").deployment
    assert config.type == name


def test_shipped_settings_are_valid():
    from pathlib import Path

    config = load_config(Path(__file__).parent.parent / "configs" / "settings.json", environ={"OPENAI_API_KEY": "sk-x"})
    assert config.model.api_key.get_secret_value() == "sk-x" and config.model.native_tools == "auto"
    assert "sk-x" not in repr(config) and "sk-x" not in config.model_dump_json()
