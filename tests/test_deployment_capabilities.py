"""What differs between deployments is declared, not found: the container capability once (`deployments/container.py`:
the docker and ray deployments implement every member of `ContainerSandbox`, the others answer `container is None`,
no module finds it by duck typing), and where a deployment's images live (the site its config names), whose
primitives the layers above call instead of reading its type's name."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from uni_agent_gym.deployments.container import ContainerSandbox
from uni_agent_gym.deployments.ray_host import sandbox_state

MEMBERS = sorted({*ContainerSandbox.__annotations__, *(name for name in vars(ContainerSandbox) if not name.startswith("_"))})
PACKAGE = Path(__file__).resolve().parent.parent / "uni_agent_gym"


@pytest.mark.parametrize("module, name", [("docker", "DockerDeployment"), ("ray", "RayDeployment")])
def test_docker_and_ray_implement_every_member_with_its_signature(module, name):
    import importlib

    implementation = getattr(importlib.import_module(f"uni_agent_gym.deployments.{module}"), name)
    assert MEMBERS == ["changes", "container_id", "isolate_network", "on_this_engine", "pause", "read_archive", "read_heads", "restore_network", "unpause", "write_archive"]
    assert implementation.container.fget(object()) is not None  # the property answers the sandbox itself
    for member in MEMBERS:
        declared = getattr(ContainerSandbox, member, None)
        if member == "container_id":
            assert "self.container_id" in inspect.getsource(implementation.__init__)
            continue
        found = getattr(implementation, member)
        if callable(declared):
            assert list(inspect.signature(found).parameters) == list(inspect.signature(declared).parameters), member
            assert inspect.iscoroutinefunction(found) == inspect.iscoroutinefunction(declared), member


def test_local_and_modal_are_no_containers():
    from uni_agent_gym.deployments import make_deployment

    assert make_deployment({"type": "local"}).container is None
    from uni_agent_gym.deployments.base import Deployment
    from uni_agent_gym.deployments.modal import ModalDeployment

    assert ModalDeployment.container is Deployment.container


def test_no_module_finds_the_capability_by_duck_typing():
    capability = set(MEMBERS) | {"container"}
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
                if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in capability:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize(
    "labels, state",
    [
        ({"uni-agent-gym.ray-job": "01000000", "uni-agent-gym.ray-node": "n1"}, "alive"),
        ({"uni-agent-gym.ray-job": "02000000", "uni-agent-gym.ray-node": "n1"}, "gone"),  # its driver's job ended
        ({"uni-agent-gym.ray-job": "01000000", "uni-agent-gym.ray-node": "n9"}, "gone"),  # its host's node died
        ({"uni-agent-gym.owner": "h:1:2"}, "unknown"),  # not a host's: its creating process says (docker's rule)
    ],
)
def test_a_hosts_container_belongs_to_its_drivers_job_on_a_live_node(labels, state):
    assert sandbox_state(labels, ended={"02000000"}, alive={"n1"}) == state


def test_each_deployment_says_where_its_images_live():
    """Its config names its site (`deployments/sites.py`), whose primitives the layers above call; the site's own
    tests are `test_sites.py`, with the check that nothing above asks which place it is on."""
    from uni_agent_gym.config import DockerDeploymentConfig, LocalDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig
    from uni_agent_gym.deployments.sites import site_of

    sites = {model().type: type(site_of(model())).__name__ for model in (LocalDeploymentConfig, DockerDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig)}
    assert sites == {"local": "NoImages", "docker": "HereImages", "modal": "RemoteImages", "ray": "NodeImages"}
    assert "site" not in DockerDeploymentConfig.model_fields, "a property of the type, not an option"


def test_each_config_names_the_deployment_it_makes():
    import importlib

    from uni_agent_gym.config import DockerDeploymentConfig, LocalDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig
    from uni_agent_gym.deployments.base import Deployment

    for model in (LocalDeploymentConfig, DockerDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig):
        module, name = model.implementation.split(":")
        made = getattr(importlib.import_module(module), name)
        assert issubclass(made, Deployment) and name.lower() == f"{model().type}deployment", model
