"""Shared fixtures: a deployment of each type for the contract suite, and the Docker base image.

Docker tests skip where no engine is reachable, except under CI=true, where that is a failure.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from uni_agent_gym.deployments import make_deployment

IN_CI = os.environ.get("CI") == "true"
# The Hugging Face hub is unreachable on these machines; offline mode fails at once instead of
# retrying for ~25 s. Set before anything imports datasets / huggingface_hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
DEPLOYMENT_TYPES = ["local", "docker", "modal"]


def docker_engine_reachable() -> bool:
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.errors import DeploymentError

    try:
        docker_client()
        return True
    except DeploymentError:
        return False


def require_docker() -> None:
    if docker_engine_reachable():
        return
    if IN_CI:
        pytest.fail("CI=true but no Docker engine is reachable: .ci/run must start dockerd")
    pytest.skip("no Docker engine reachable")


@pytest.fixture(scope="session")
def docker_image() -> str:
    """The Python 3.11 base image, built offline with debootstrap on first use (about a minute)."""
    require_docker()
    from uni_agent_gym.deployments.images import bootstrap_base

    return bootstrap_base("3.11", log=lambda message: None)


@pytest.fixture(scope="session", autouse=True)
def no_container_left_behind():
    """After the whole suite, no container labelled uni-agent-gym may remain."""
    yield
    if not docker_engine_reachable():
        return
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=uni-agent-gym"], capture_output=True, text=True
    ).stdout.split()
    assert not left, f"containers left behind by the tests: {left}"


@pytest.fixture
async def deployment_factory(request, monkeypatch):
    """Makes (not starts) deployments of one type; stops every one of them at teardown."""
    made = []

    def factory(deployment_type: str, **options):
        if deployment_type == "docker":
            options.setdefault("image", request.getfixturevalue("docker_image"))
        if deployment_type == "modal" and not made_modal_standin:
            from tests import modal_standin

            made_modal_standin.append(modal_standin.install(monkeypatch))
        deployment = make_deployment({"type": deployment_type, **options})
        made.append(deployment)
        return deployment

    made_modal_standin: list = []
    factory.modal_standin = made_modal_standin
    yield factory
    for deployment in made:
        await deployment.stop()


@pytest.fixture(params=DEPLOYMENT_TYPES)
async def deployment(request, deployment_factory):
    """A started deployment of each type (modal through the SDK stand-in)."""
    deployment = deployment_factory(request.param, command_timeout=60)
    await deployment.start()
    yield deployment
    await deployment.stop()
