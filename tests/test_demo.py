"""`uni-agent-gym demo` where an engine answers but the base image cannot be built (no debootstrap, not root): the
demo still shows its episode, on the local deployment, after one line that says why and what would enable docker."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import require, require_docker
from uni_agent_gym.cli import main
from uni_agent_gym.workspaces import base_images

# The base image looks absent (a bare machine's first demo), whatever this machine has built: the demo must build it.
WITHOUT_BASE_IMAGE = "from uni_agent_gym.workspaces import base_images\nbase_images.image_labels = lambda name: None\n"


@pytest.fixture
def engine_without_base_image(monkeypatch):
    require_docker()
    monkeypatch.setenv("COLUMNS", "250")  # rich wraps at the terminal's width
    monkeypatch.setattr(base_images, "image_labels", lambda name: None)


def the_line_saying(output: str, words: str) -> str:
    lines = [line for line in output.splitlines() if words in line]
    assert len(lines) == 1, output
    return lines[0]


def test_without_debootstrap_the_demo_runs_locally_and_says_why(engine_without_base_image, monkeypatch, capsys):
    path = [folder for folder in os.environ["PATH"].split(os.pathsep) if not os.path.exists(os.path.join(folder, "debootstrap"))]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    assert main(["demo"]) == 0
    output = capsys.readouterr().out
    line = the_line_saying(output, "debootstrap is not installed")
    assert "apt-get install -y debootstrap" in line and "local deployment" in line and base_images.base_image_name("3.11") in line
    assert "Toy task on a local deployment" in output and "reward: 1.0" in output


def user_namespaces() -> bool:
    try:
        return subprocess.run(["unshare", "--user", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def test_not_root_the_demo_runs_locally_and_says_why(engine_without_base_image):
    """A real non-root process: `unshare --user` (euid 65534) keeps its access to the engine's socket and the venv."""
    require(user_namespaces(), "user namespaces (`unshare --user`, util-linux)")
    code = WITHOUT_BASE_IMAGE + "from uni_agent_gym.cli import main\nraise SystemExit(main(['demo']))\n"
    done = subprocess.run(["unshare", "--user", sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "250"})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    line = the_line_saying(done.stdout, "debootstrap needs root")
    assert "local deployment" in line and base_images.base_image_name("3.11") in line
    assert "Toy task on a local deployment" in done.stdout and "reward: 1.0" in done.stdout
