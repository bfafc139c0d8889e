"""The Makefile's two commands install what each needs: `make demo` the package alone (no torch, verl or the tests'
Debian packages), `make test` everything, in one venv whose stamps do not fight: either order installs each part once.

GNU make runs the real Makefile on a venv whose `python` only writes down how it was called."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO_INSTALL = "-m pip install -q --no-compile -e ."
TEST_INSTALL = '-m pip install -q -e ".[dev]"'
TEST_ONLY = ["torch==", TEST_INSTALL, "ensure-chromium.sh", "ensure-registry.sh", "ensure-test-runners.sh"]


@pytest.fixture
def venv(tmp_path) -> Path:
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/../calls"\n')
    python.chmod(0o755)
    return python.parents[1]


def make(venv: Path, *args: str) -> str:
    done = subprocess.run(["make", "-C", str(ROOT), f"VENV={venv}", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def installs(venv: Path) -> list[str]:
    """What the venv's pip was asked to install, in order (pip's own upgrade left out)."""
    calls = (venv / "calls").read_text().splitlines() if (venv / "calls").exists() else []
    return [call.removeprefix("-m pip install -q ") for call in calls if call != "-m pip install -q --upgrade pip"]


def test_make_demo_installs_the_package_alone_and_make_test_everything(venv):
    demo = make(venv, "-n", "demo")
    assert DEMO_INSTALL in demo and "scripts/ensure-docker.sh" in demo
    assert not [word for word in TEST_ONLY if word in demo], demo
    test = make(venv, "-n", "test")
    assert all(word in test for word in TEST_ONLY) and "scripts/ensure-docker.sh" in test, test


def test_make_test_after_make_demo_adds_the_rest_and_the_demo_installs_nothing_again(venv):
    make(venv, f"{venv}/.installed-core")
    assert installs(venv) == ["--no-compile -e ."]
    assert "pip install" not in make(venv, "-n", "demo")
    make(venv, f"{venv}/.installed")
    assert [call.split("==")[0] for call in installs(venv)] == ["--no-compile -e .", "torch", "-e .[dev]"]
    assert "pip install" not in make(venv, "-n", "demo") + make(venv, "-n", "test")


def test_make_demo_after_make_test_installs_nothing(venv):
    make(venv, f"{venv}/.installed")
    assert "pip install" not in make(venv, "-n", "demo")
    assert [call.split("==")[0] for call in installs(venv)] == ["torch", "-e .[dev]"]
