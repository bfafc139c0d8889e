"""Where a deployment's images live is one site object per place (`deployments/sites.py`), named by the deployment
config as it names its implementation. The layers above call the site's primitives and never ask which place it
is: no comparison on `.images` or on a deployment's type, no `getattr` on a deployment or its config to find a
capability (checked here with `ast`). The primitives are checked per site with stand-ins for the engines."""

from __future__ import annotations

import ast
import asyncio
import importlib
import types
from pathlib import Path

import pytest

from uni_agent_gym.config import DockerDeploymentConfig, LocalDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig
from uni_agent_gym.deployments.sites import Derived, HereImages, NodeImages, NoImages, RemoteImages, Site, site_of
from uni_agent_gym.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent.parent / "uni_agent_gym"
SITE_MODULES = {Path("deployments/sites.py")}  # the one place that may tell the places apart
DEPLOYMENT_TYPES = {"local", "docker", "modal", "ray"}
MODELS = (LocalDeploymentConfig, DockerDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig)


# ----- no layer asks which place it is on -----


def _names(node: ast.AST) -> list[str]:
    """The names along an expression's chain: `self.gym.deployment.config` -> config, deployment, gym, self."""
    names = []
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names


def _of_a_deployment(node: ast.AST) -> bool:
    """Whether an expression reads as a deployment or a deployment config (`deployment`, `config.deployment`, ...)."""
    return any("deployment" in name.lower() or name == "config" or name.endswith("_config") for name in _names(node))


def branches_on_the_place(source: str) -> list[tuple[int, str]]:
    """(line, what) of each place in `source` that asks which deployment or image site it runs on."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            constants = {c.value for o in operands for c in ([o] if isinstance(o, ast.Constant) else getattr(o, "elts", [])) if isinstance(c, ast.Constant)}
            for operand in operands:
                if isinstance(operand, ast.Attribute) and operand.attr == "images":
                    found.append((node.lineno, "compares .images"))
                elif isinstance(operand, ast.Name) and operand.id == "CONTAINER_SITES":
                    found.append((node.lineno, "compares with CONTAINER_SITES"))
                elif isinstance(operand, ast.Attribute) and operand.attr == "type" and (_of_a_deployment(operand.value) or constants & DEPLOYMENT_TYPES):
                    found.append((node.lineno, "compares a deployment's type"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and _of_a_deployment(node.args[0]):
                found.append((node.lineno, f"{node.func.id} on a deployment or its config"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
            if len(node.args) == 2 and any(name.endswith(("Deployment", "DeploymentConfig")) for name in _names(node.args[1])):
                found.append((node.lineno, f"{node.func.id} on a deployment's class"))
    return found


def test_no_module_outside_the_sites_asks_which_place_it_is_on():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE) not in SITE_MODULES:
            found += [f"{path.relative_to(PACKAGE)}:{line}: {what}" for line, what in branches_on_the_place(path.read_text())]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        'if config.deployment.images == "here": pass',
        "x = deployment_config.images in CONTAINER_SITES",
        'if self.gym.deployment.type == "local": pass',
        "same = deployment.config.type == self.gym.deployment.type",
        'if kind.type in ("docker", "ray"): pass',
        'size = getattr(config.deployment, "pool_size", 0)',
        'if hasattr(deployment, "pool"): pass',
        "if isinstance(config.deployment, DockerDeploymentConfig): pass",
    ],
)
def test_the_check_sees_each_way_of_asking(source):
    assert branches_on_the_place(source), source


@pytest.mark.parametrize(
    "source",
    [
        'if site_of(config.deployment).runs_images: pass',
        'if token.type not in (tokenize.COMMENT, tokenize.NL): pass',
        "found = client.images.get(image)",
        'value = getattr(self._sandbox(sandbox_id).deployment.container, name)',
        'deployment = getattr(args, "deployment", None)',
    ],
)
def test_the_check_lets_the_rest_be(source):
    assert branches_on_the_place(source) == []


# ----- each config names its site -----


def test_each_config_names_its_site_as_it_names_its_implementation():
    named = {}
    for model in MODELS:
        module, name = model.site.split(":")
        assert issubclass(getattr(importlib.import_module(module), name), Site), model
        assert "site" not in model.model_fields and "images" not in model.model_fields, "a property of the type, not an option"
        assert not hasattr(model, "images")
        named[model().type] = type(site_of(model()))
    assert named == {"local": NoImages, "docker": HereImages, "modal": RemoteImages, "ray": NodeImages}


@pytest.mark.parametrize(
    "model, runs_images, containers, derives_images, engine_here",
    [
        (LocalDeploymentConfig, False, False, False, False),
        (DockerDeploymentConfig, True, True, True, True),
        (ModalDeploymentConfig, True, False, False, False),
        (RayDeploymentConfig, True, True, True, False),
    ],
)
def test_what_each_site_can_do(model, runs_images, containers, derives_images, engine_here):
    site = site_of(model())
    assert (site.runs_images, site.containers, site.derives_images, site.engine_here) == (runs_images, containers, derives_images, engine_here)


# ----- the primitives, per site -----


def test_where_tells_apart_the_places_images_are_made_in():
    assert site_of(DockerDeploymentConfig()).where != site_of(RayDeploymentConfig()).where
    assert site_of(RayDeploymentConfig(registry="r:5000")).where != site_of(RayDeploymentConfig(registry="s:5000")).where
    assert site_of(RayDeploymentConfig(resource="a")).where != site_of(RayDeploymentConfig(resource="b")).where
    assert site_of(DockerDeploymentConfig(image="a")).where == site_of(DockerDeploymentConfig(image="b")).where


def test_asks_each_time_only_under_pull_always():
    assert [site_of(DockerDeploymentConfig(pull=pull)).asks_each_time for pull in ("missing", "never", "always")] == [False, False, True]
    assert site_of(RayDeploymentConfig(pull="always")).asks_each_time
    assert not site_of(LocalDeploymentConfig()).asks_each_time and not site_of(ModalDeploymentConfig()).asks_each_time


def test_pool_size_is_the_configs_where_containers_are_pooled():
    assert site_of(DockerDeploymentConfig(pool_size=3)).pool_size == 3
    assert site_of(RayDeploymentConfig(pool_size=2)).pool_size == 2
    assert site_of(DockerDeploymentConfig()).pool_size == 0
    assert site_of(LocalDeploymentConfig()).pool_size == 0 and site_of(ModalDeploymentConfig()).pool_size == 0


def test_no_pool_where_the_site_keeps_none():
    from uni_agent_gym.deployments.pool import pool_for

    assert pool_for(LocalDeploymentConfig()) is None and pool_for(ModalDeploymentConfig()) is None  # asked before any loop


def test_run_id_labels_only_the_gyms_containers(monkeypatch):
    from uni_agent_gym.deployments.docker import RUN_ID_VARIABLE

    monkeypatch.setenv(RUN_ID_VARIABLE, "from-the-environment")
    assert site_of(DockerDeploymentConfig(run_id="r1")).run_id() == "r1"
    assert site_of(DockerDeploymentConfig()).run_id() == "from-the-environment"
    assert site_of(RayDeploymentConfig()).run_id() == "from-the-environment"
    assert site_of(LocalDeploymentConfig()).run_id() is None and site_of(ModalDeploymentConfig()).run_id() is None


async def test_has_image_asks_only_this_machines_engine(monkeypatch):
    import uni_agent_gym.deployments.docker as docker_deployment

    asked = []
    monkeypatch.setattr(docker_deployment, "image_exists", lambda name: asked.append(name) or name == "present")
    assert await site_of(DockerDeploymentConfig()).has_image("present") and not await site_of(DockerDeploymentConfig()).has_image("absent")
    for model in (LocalDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig):
        assert not await site_of(model()).has_image("present")
    assert asked == ["present", "absent"]


async def test_environment_image_is_built_here_found_on_the_registry_or_not_to_be_had():
    built = []

    async def build():
        built.append(1)

    assert await site_of(DockerDeploymentConfig()).environment_image(build) and built == [1]
    assert await site_of(RayDeploymentConfig()).environment_image(build) and built == [1]  # `images build` pushed it
    assert not await site_of(ModalDeploymentConfig()).environment_image(build)
    assert not await site_of(LocalDeploymentConfig()).environment_image(build) and built == [1]


async def _job(image: str, pull: str, suffix: str) -> str:
    return f"{image}{suffix}"


async def test_derive_here_runs_the_job_on_this_engine_and_reads_the_source(monkeypatch):
    import uni_agent_gym.deployments.docker as docker_deployment

    monkeypatch.setattr(docker_deployment, "image_identity", lambda name: (f"sha256:{name}", {"label": "x"}))
    site = site_of(DockerDeploymentConfig(pull="missing"))
    made = await site.derive(_job, "here-derive-a", "-clean", identify=True)
    assert made == Derived("here-derive-a-clean", "never", ("sha256:here-derive-a", {"label": "x"}))
    assert made.update == {"image": "here-derive-a-clean", "pull": "never"}
    same = await site.derive(_job, "here-derive-b", "")
    assert same == Derived("here-derive-b", "missing") and same.update == {"image": "here-derive-b", "pull": "missing"}


async def test_derive_remote_runs_the_image_as_it_is():
    made = await site_of(ModalDeploymentConfig()).derive(_job, "registry/image", "-clean", identify=True)
    assert made == Derived("registry/image", None) and made.update == {"image": "registry/image"}


async def test_derive_without_images_is_an_error():
    with pytest.raises(NotImplementedError, match="local deployment derives no images"):
        await site_of(LocalDeploymentConfig()).derive(_job, "image", "")


@pytest.fixture
def one_node(monkeypatch):
    """A Ray task run in a thread of this process, with the registry and the engine stood in for."""
    pytest.importorskip("ray")
    import uni_agent_gym.deployments.docker as docker_deployment
    import uni_agent_gym.deployments.ray as ray_deployment
    import uni_agent_gym.deployments.registry as registry

    calls = []

    async def run_on_a_node(config, function, *args):
        calls.append(("node", config.resource))
        return await asyncio.to_thread(function, *args)

    monkeypatch.setattr(ray_deployment, "run_on_a_node", run_on_a_node)
    monkeypatch.setattr(registry, "ensure_from_registry", lambda image, where, pull: calls.append(("pull", image, where, pull)))
    monkeypatch.setattr(registry, "push", lambda image, where: calls.append(("push", image, where)))
    monkeypatch.setattr(docker_deployment, "image_identity", lambda name: (f"sha256:{name}", {}))
    return calls


async def test_derive_on_the_nodes_pushes_what_a_node_made(one_node):
    site = site_of(RayDeploymentConfig(registry="r:5000", pull="always"))
    made = await site.derive(_job, "nodes-a", "-clean", identify=True)
    assert made == Derived("nodes-a-clean", "missing", ("sha256:nodes-a", {}))
    assert one_node == [("node", "uni_agent_gym_sandbox"), ("pull", "nodes-a", "r:5000", "always"), ("push", "nodes-a-clean", "r:5000")]
    one_node.clear()
    assert await site.derive(_job, "nodes-b", "") == Derived("nodes-b", "always")  # nothing made: nothing pushed
    assert [call[0] for call in one_node] == ["node", "pull"]


async def test_derive_on_the_nodes_needs_a_registry_to_share_what_it_made(one_node):
    with pytest.raises(ConfigError, match="set deployment.registry"):
        await site_of(RayDeploymentConfig()).derive(_job, "nodes-c", "-clean")


def test_diffs_and_on_host_say_how_a_sandboxs_changes_are_read():
    def sandbox(config, container=True):
        return types.SimpleNamespace(config=config, container=object() if container else None)

    docker, ray, local = site_of(DockerDeploymentConfig()), site_of(RayDeploymentConfig()), site_of(LocalDeploymentConfig())
    assert docker.diffs(sandbox(DockerDeploymentConfig())) and ray.diffs(sandbox(RayDeploymentConfig()))
    assert not docker.diffs(sandbox(DockerDeploymentConfig(read_only_root=True)))  # the workspace is a volume: no diff
    assert not docker.diffs(sandbox(RayDeploymentConfig()))  # the agent's sandbox is not of the gym's deployment
    assert not docker.diffs(sandbox(DockerDeploymentConfig(), container=False))
    assert not local.diffs(sandbox(LocalDeploymentConfig(), container=False))
    assert not site_of(ModalDeploymentConfig()).diffs(sandbox(ModalDeploymentConfig(), container=False))
    assert local.on_host(sandbox(LocalDeploymentConfig(), container=False))
    assert not local.on_host(sandbox(DockerDeploymentConfig())) and not docker.on_host(sandbox(LocalDeploymentConfig(), container=False))


def test_remove_at_exit_removes_this_engines_containers_only(monkeypatch):
    import uni_agent_gym.deployments.docker as docker_deployment

    removed = []
    api = types.SimpleNamespace(remove_container=lambda container_id, **options: removed.append((container_id, options)))
    idle = [types.SimpleNamespace(container_id="c1"), types.SimpleNamespace(container_id="c2")]
    with monkeypatch.context() as patched:  # undone before the suite's own fixture lists this engine's containers
        patched.setattr(docker_deployment, "docker_client", lambda: types.SimpleNamespace(api=api))
        site_of(RayDeploymentConfig()).remove_at_exit(idle)  # a node's host removes them once the job ends
        assert removed == []
        site_of(DockerDeploymentConfig()).remove_at_exit(idle)
    assert removed == [("c1", {"force": True, "v": True}), ("c2", {"force": True, "v": True})]


async def test_the_agents_image_is_asked_of_the_site_once_unless_pull_always():
    from uni_agent_gym.workspaces.agent_images import agent_image

    class Counting(Site):
        runs_images = derives_images = True
        asked = 0

        @property
        def asks_each_time(self):
            return self.config.pull == "always"

        async def derive(self, job, image, *args, identify=False):
            Counting.asked += 1
            return Derived(f"{image}-clean", "never")

    for pull, asked in (("missing", 1), ("always", 2)):
        Counting.asked = 0
        site = Counting(DockerDeploymentConfig(pull=pull))
        for _ in range(2):
            assert await agent_image(site, f"agent-image-{pull}", "clean", "abc", "/testbed", None) == Derived(f"agent-image-{pull}-clean", "never")
        assert Counting.asked == asked
