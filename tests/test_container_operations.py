"""The container operations are declared once (the `ContainerSandbox` protocol, as data in `container.OPERATIONS`):
a Ray node's host answers exactly those, the ray deployment's forwards to it are made from them, and the host
drives the docker deployment through its public calls only. The forwards and the host's answers at work, on a
real cluster: `tests/test_ray_deployment.py`."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from uni_agent_gym.deployments import ray_host
from uni_agent_gym.deployments.container import OPERATIONS, ContainerSandbox
from uni_agent_gym.deployments.ray import RayDeployment

DEPLOYMENTS = Path(__file__).resolve().parent.parent / "uni_agent_gym" / "deployments"


def private_names_of_others(source: str) -> list[str]:
    """Where `source` uses a private name of another module or object: `x._name` on anything but `self`, a private
    module in an import's path, `from m import _name`."""
    private = lambda name: name.startswith("_") and not name.startswith("__")  # noqa: E731
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and private(node.attr) and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.append(f"{ast.unparse(node)} (line {node.lineno})")
        elif isinstance(node, ast.ImportFrom) and any(private(part) for part in [*(node.module or "").split("."), *(a.name for a in node.names)]):
            found.append(f"from {node.module} import {', '.join(a.name for a in node.names)} (line {node.lineno})")
        elif isinstance(node, ast.Import) and any(private(part) for a in node.names for part in a.name.split(".")):
            found.append(f"import {', '.join(a.name for a in node.names)} (line {node.lineno})")
    return found


def test_the_ray_host_uses_no_private_name_of_another_module():
    """The host drives the docker deployment through its public calls (`start_container`, `spawn_shell`, `run_beside`,
    `release_container`, `container`). One private name is Ray's: the job table, which Ray reads publicly only through
    a dashboard a cluster may run without (`ray_host.ended_jobs`)."""
    found = private_names_of_others((DEPLOYMENTS / "ray_host.py").read_text())
    assert [line.split(" (line")[0] for line in found] == ["from ray._private.state import state"], found


def test_the_check_sees_each_kind_of_private_name():
    source = "import a._b\nfrom a._b import c\nfrom a import _c\nx._y()\nself.d._e\nself._f\nx.__class__\n"
    assert sorted(line.split(" (line")[0] for line in private_names_of_others(source)) == [
        "from a import _c", "from a._b import c", "import a._b", "self.d._e", "x._y",
    ]  # fmt: skip


def test_the_operations_are_the_protocols_calls_each_blocking_or_a_coroutine():
    assert OPERATIONS == {
        "changes": True, "read_archive": True, "read_heads": True, "write_archive": True, "pause": True, "unpause": True,
        "isolate_network": False, "restore_network": False,
    }  # fmt: skip
    for name, blocking in OPERATIONS.items():
        assert inspect.iscoroutinefunction(getattr(ContainerSandbox, name)) is not blocking, name


def test_the_ray_deployments_forwards_are_made_from_the_protocol_one_per_operation():
    forwards = {name for name, member in vars(RayDeployment).items() if inspect.unwrap(member) is getattr(ContainerSandbox, name, None)}
    assert forwards == set(OPERATIONS)
    for name, blocking in OPERATIONS.items():
        forward, declared = getattr(RayDeployment, name), getattr(ContainerSandbox, name)
        assert inspect.signature(forward) == inspect.signature(declared) and forward.__doc__ == declared.__doc__, name
        assert inspect.iscoroutinefunction(forward) is not blocking, name


def test_no_operation_is_named_again_in_the_ray_modules():
    """Neither the host's dispatch nor the forwards spell an operation's name: a string of one is a second list."""
    for module in ("ray.py", "ray_host.py"):
        tree = ast.parse((DEPLOYMENTS / module).read_text())
        spelled = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in OPERATIONS]
        assert spelled == [], module
    assert not {"ASYNC_CALLS", "BLOCKING_CALLS"} & set(vars(ray_host))


async def test_a_host_refuses_a_call_that_is_no_container_operation():
    """Refused before any sandbox is looked up, with what it answers (`test_ray_deployment.py` asks a live host too)."""
    from uni_agent_gym.errors import DeploymentError

    host = ray_host.SandboxHost.__new__(ray_host.SandboxHost)  # no Ray here: `__init__` asks Ray where it runs
    ok, error = await host.call("any-sandbox", "remove_everything")
    assert not ok and isinstance(error, DeploymentError)
    assert str(error) == f"A sandbox host answers only the container operations ({', '.join(OPERATIONS)}), not 'remove_everything'"
