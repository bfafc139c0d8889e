"""Config loading: formats, layering, ${ENV} interpolation, one-line deployment switch, secrets."""

from __future__ import annotations

import re

import pytest

from uni_agent_gym.config import (
    DockerDeploymentConfig,
    LocalDeploymentConfig,
    ModalDeploymentConfig,
    RayDeploymentConfig,
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
    [("local", LocalDeploymentConfig), ("docker", DockerDeploymentConfig), ("modal", ModalDeploymentConfig), ("ray", RayDeploymentConfig)],
)
def test_switching_deployment_is_one_line(tmp_path, deployment_type, model):
    path = tmp_path / "c.yaml"
    path.write_text(f"deployment:\n  type: {deployment_type}\n")
    config = load_config(path).deployment
    assert isinstance(config, model)
    assert config.command_timeout == 120.0  # every option has a default


def test_a_later_switch_keeps_working_with_options_of_the_other_type(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("deployment:\n  type: docker\n  image: img:1\n  memory: 2g\n")
    assert load_config(path, overrides=["deployment.type=local"]).deployment == LocalDeploymentConfig()
    with pytest.raises(ConfigError, match=re.escape("deployment: imagee is not an option of any deployment type (did you mean image?)")):
        load_config(path, overrides=["deployment.type=local", "deployment.imagee=typo"])


@pytest.mark.parametrize(
    "text, overrides",
    [("deployment:\n  type: local\n  memory: 8g\n", []), ("deployment:\n  type: local\n", ["deployment.memory=8g"])],
    ids=["beside-the-type-in-a-file", "by-set"],
)
def test_an_option_the_type_in_force_lacks_is_the_same_error_in_a_file_and_by_set(tmp_path, text, overrides):
    """One rule: an option given with or after the type in force must be one of its options (the file case
    dropped `memory` silently while --set refused it)."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape("deployment: memory is an option of docker and ray, not of local (deployment.type)")):
        load_config(path, overrides=overrides)


def test_options_without_a_type_merge_with_the_default_type():
    assert load_config(overrides=["deployment.memory=8g"]).deployment == DockerDeploymentConfig(memory="8g")
    assert deployment_config({"cpus": 1}) == DockerDeploymentConfig(cpus=1)


SHIPPED = __import__("pathlib").Path(__file__).parent.parent / "uni_agent_gym" / "configs" / "deployment"


@pytest.mark.parametrize(
    "files, overrides, model",
    [
        (["docker.yaml"], ["deployment.type=local"], LocalDeploymentConfig),  # what --deployment local does
        (["modal.yaml"], ["deployment.type=docker"], DockerDeploymentConfig),  # docker is also the default type
        (["docker.yaml", "local.yaml"], [], LocalDeploymentConfig),
        (["docker.yaml"], ["deployment.memory=1g", "deployment.type=local"], LocalDeploymentConfig),
    ],
    ids=["file-then-switch", "switch-to-the-default-type", "second-file-switches", "option-then-switch"],
)
def test_a_switch_of_type_drops_the_options_it_leaves_behind(files, overrides, model):
    assert type(load_config(*(SHIPPED / name for name in files), overrides=overrides).deployment) is model


@pytest.mark.parametrize(
    "files, overrides, expected",
    [
        ([], ["deployment.memory_mb=512"],
         "deployment: memory_mb is an option of modal, not of docker (the default type): set deployment.type to modal, or remove memory_mb"),
        (["local.yaml"], ["deployment.image=img:1"],
         "deployment: image is an option of docker, modal and ray, not of local (deployment.type): set deployment.type to docker, modal or ray"),
        (["docker.yaml"], ["deployment.memory_mb=512", "deployment.type=docker"],
         "deployment: memory_mb is an option of modal, not of docker (deployment.type)"),
        (["docker.yaml"], ["deployment.type=local", "deployment.cpus=2"], "deployment: cpus is an option of docker and ray, not of local"),
        ([], ["deployment.memroy=8g"], "deployment: memroy is not an option of any deployment type (did you mean memory?)"),
    ],
    ids=["no-type", "on-top-of-a-file", "same-type-again-is-no-switch", "after-a-switch", "no-type-has-it"],
)  # fmt: skip
def test_an_option_the_type_lacks_is_an_error_naming_the_types_that_have_it(files, overrides, expected):
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(*(SHIPPED / name for name in files), overrides=overrides)


def test_a_dict_without_a_type_is_checked_against_the_default_type():
    with pytest.raises(ConfigError, match=re.escape("memory_mb is an option of modal, not of docker (the default type)")):
        deployment_config({"memory_mb": 512})
    with pytest.raises(ConfigError, match=re.escape("memory_mb is an option of modal, not of local (deployment.type)")):
        deployment_config({"type": "local", "memory_mb": 512})  # one dict, one layer: no switch left it behind


MEMORY = "deployment.docker.memory: expects a size Docker reads, a number with the unit b, k, m or g of at least 6m, e.g. 512m or 4g"
CPUS = "deployment.docker.cpus: expects a number of CPU cores of at least 0.01, e.g. 2 or 0.5"
PIDS = "deployment.docker.pids_limit: expects a whole number of processes of at least 1, e.g. 1024"


@pytest.mark.parametrize(
    "option, expected",
    [
        ("memory: 4gigs", MEMORY), ("memory: 4 GiB", MEMORY), ("memory: ''", MEMORY), ("memory: 5m", MEMORY),
        ("memory: -1", MEMORY), ("memory: [4g]", MEMORY), ("cpus: two", CPUS), ("cpus: 0.001", CPUS), ("cpus: 0", CPUS),
        ("pids_limit: 1k", PIDS), ("pids_limit: 0", PIDS), ("pids_limit: 2.5", PIDS),
    ],
    ids=["unit-word", "iec-unit", "empty", "below-docker-minimum", "negative", "a-list", "cpus-word", "cpus-below-0.01",
         "cpus-zero", "pids-with-unit", "pids-zero", "pids-fraction"],
)  # fmt: skip
def test_values_docker_would_reject_fail_when_the_config_loads(tmp_path, option, expected):
    path = tmp_path / "c.yaml"
    path.write_text(f"deployment:\n  type: docker\n  {option}\n")
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(path)


@pytest.mark.parametrize("memory, limit", [("512m", 512 << 20), ("4G", 4 << 30), ("4gb", 4 << 30), ("1.5g", 3 << 29), ("6m", 6 << 20)])
def test_memory_sizes_docker_reads_are_kept_as_written(memory, limit):
    from docker.utils import parse_bytes

    config = load_config(overrides=[f"deployment.memory={memory}"]).deployment
    assert config.memory == memory and parse_bytes(config.memory) == limit
    assert load_config(overrides=["deployment.memory=null", "deployment.cpus=null", "deployment.pids_limit=null"]).deployment.memory is None


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
        ("deployment:\n  type: docker\n  imgae: x\n", "deployment: imgae is not an option of any deployment type (did you mean image?)"),
        ("deployment:\n  type: podman\n", "deployment: Input tag 'podman' found using 'type' does not match"),
        ("deployment:\n  type: lcoal\n", "deployment: Input tag 'lcoal' found using 'type' does not match any of the expected tags: "
                                          "'local', 'docker', 'modal', 'ray' (did you mean local?)"),
        ("env:\n  workspace: imgae\n", "env.workspace: Input should be 'auto', 'image' or 'mirror' (did you mean image?)"),
        ("deployment:\n  type: docker\n  network: host\n", "deployment.docker.network: Input should be 'bridge' or 'none'"),
        ("deployment:\n  type: local\n  command_timeout: -1\n", "deployment.local.command_timeout: Input should be greater than 0"),
        ("deplyment: {}\n", "deplyment: Extra inputs are not permitted"),
        ("- a\n- b\n", "expects a mapping at the top level, got list"),
        ("- name: uni_agent\n  _target_: uni_agent_gym.verl.agent_loop.UniAgentLoop\n",
         "is an agent-loop YAML (a list of agent loops), not gym settings: name it in config.toml's [rollout.agent] "
         "agent_loop_config_path and check the run with `uni-agent-gym check-config --training CONFIG.toml`"),
        ("deployment: [\n", "is not valid YAML"),
    ],
    ids=["typo", "unknown-type", "type-typo", "value-typo", "bad-literal", "negative-timeout", "unknown-section", "not-a-mapping",
         "agent-loop-yaml", "bad-yaml"],
)
def test_bad_configs_name_the_problem(tmp_path, text, expected):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(path)


def test_verls_training_config_is_named_as_such_in_one_line():
    toml = SHIPPED.parent / "config.toml"
    with pytest.raises(ConfigError) as caught:
        load_config(toml)
    assert str(caught.value) == (
        f"Config file {toml} is verl's training config ([actor_rollout_ref], [algorithm], [async_training], [data], [rollouter], "
        f"[trainer]), not gym settings: check it with `uni-agent-gym check-config --training {toml}`"
    )


def test_unsupported_extension_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"expects \.yaml, \.yml, \.json or \.toml, got '\.ini'"):
        (tmp_path / "c.ini").write_text("")
        load_config(tmp_path / "c.ini")
    with pytest.raises(ConfigError, match="absent.yaml does not exist"):
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


def test_a_problem_names_the_file_or_override_that_gave_the_value(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text('{"deployment": {"type": "local"}, "env": {"max_turns": "many"}}')
    with pytest.raises(ConfigError) as caught:
        load_config(settings, overrides=["deployment.type=dokcer", "model.temperature=0.5"])
    message = str(caught.value)
    assert message.startswith(f"Invalid config ({settings}, --set deployment.type, --set model.temperature):"), message
    assert "deployment: Input tag 'dokcer'" in message and "(did you mean docker?) [from override deployment.type]" in message
    assert f"env.max_turns: Input should be a valid integer, unable to parse string as an integer [from {settings}]" in message
    with pytest.raises(ConfigError) as alone:  # one source: the headline names it, no attribution
        load_config(settings)
    assert "[from" not in str(alone.value)


def test_deployment_config_from_a_dict():
    assert deployment_config({"type": "local", "workdir": "/w"}) == LocalDeploymentConfig(workdir="/w")
    with pytest.raises(ConfigError, match="deployment.docker.pull: Input should be 'missing', 'never' or 'always'"):
        deployment_config({"type": "docker", "pull": "sometimes"})


def test_the_shipped_ray_config_lists_every_option_with_its_default():
    import yaml

    path = SHIPPED / "ray.yaml"
    assert set(yaml.safe_load(path.read_text())["deployment"]) == set(RayDeploymentConfig.model_fields)
    assert load_config(path).deployment == RayDeploymentConfig()
    # the docker options a switch leaves behind are the ray deployment's own, not dropped
    switched = load_config(SHIPPED / "docker.yaml", overrides=["deployment.type=ray", "deployment.memory=1g"]).deployment
    assert isinstance(switched, RayDeploymentConfig) and switched.memory == "1g"


@pytest.mark.parametrize("name", ["local", "docker", "modal", "ray"])
def test_shipped_deployment_configs_are_valid(name):
    from pathlib import Path

    config = load_config(Path(__file__).parent.parent / "uni_agent_gym" / "configs" / "deployment" / f"{name}.yaml").deployment
    assert config.type == name


def test_shipped_settings_are_valid():
    from pathlib import Path

    config = load_config(Path(__file__).parent.parent / "uni_agent_gym" / "configs" / "settings.json", environ={"OPENAI_API_KEY": "sk-x"})
    assert config.model.api_key.get_secret_value() == "sk-x" and config.model.native_tools == "auto"
    assert "sk-x" not in repr(config) and "sk-x" not in config.model_dump_json()
