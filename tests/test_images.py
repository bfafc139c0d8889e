"""Base images built offline with debootstrap + docker import (no registry involved)."""

from __future__ import annotations

import pytest

from uni_agent_gym.workspaces.base_images import DEBIAN_SUITE_BY_PYTHON, bootstrap_base, host_debian_mirror
from uni_agent_gym.errors import DeploymentError
from tests.conftest import require_docker


def run_in(image: str, command: str) -> str:
    """The command's output in a throwaway container, labelled with this test's run id like every container of
    the suite (without it, another worker's end-of-suite check counted a running one as left behind)."""
    from uni_agent_gym.deployments.docker import LABEL, RUN_ID_LABEL, default_run_id, docker_client

    labels = {LABEL: "1", RUN_ID_LABEL: default_run_id()}
    return docker_client().containers.run(image, ["bash", "-c", command], remove=True, labels=labels).decode()


def test_unsupported_python_is_refused_with_the_choices():
    with pytest.raises(DeploymentError, match=r"Expects --python one of 3\.9, 3\.11, 3\.13 .*got '3\.10'"):
        bootstrap_base("3.10")


@pytest.mark.parametrize(
    "files, expected",
    [
        ({"sources.list.d/debian.sources": "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n"}, "http://mirror.example/debian"),
        ({"sources.list": "deb [arch=amd64] http://other.example/debian bookworm main\n"}, "http://other.example/debian"),
        ({"sources.list.d/node.list": "deb https://deb.nodesource.com/node_20.x nodistro main\n"}, "http://deb.debian.org/debian"),
    ],
    ids=["deb822", "one-line", "no-debian-source"],
)
def test_mirror_comes_from_the_hosts_apt_sources(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert host_debian_mirror(tmp_path) == expected


def test_the_base_image_has_python_git_venv_and_a_compiler(docker_image):
    output = run_in(
        docker_image,
        "python3 -m venv /tmp/v && /tmp/v/bin/python --version && git --version && patch --version | head -1 && "
        "gcc --version | head -1 && test -f /usr/include/python3.11/Python.h && echo headers",
    )
    assert output.startswith("Python 3.11.") and "git version" in output and "GNU patch" in output
    assert "gcc" in output and output.endswith("headers\n"), "sdists with C extensions must build offline"


def test_building_again_is_a_no_op(docker_image):
    messages = []
    assert bootstrap_base("3.11", log=messages.append) == docker_image
    assert messages == [f"{docker_image} exists; nothing to do (--force rebuilds it)"]


@pytest.mark.slow
@pytest.mark.parametrize("python", sorted(set(DEBIAN_SUITE_BY_PYTHON) - {"3.11"}))
def test_other_pythons(python):
    """Builds the 3.9 (bullseye) and 3.13 (trixie) bases for real: about a minute each the first time."""
    require_docker()
    image = bootstrap_base(python, log=lambda message: None)
    assert run_in(image, "python3 --version").startswith(f"Python {python}.")
