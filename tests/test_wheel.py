"""The package as a user installs it: the wheel built from this tree's sdist, installed by pip into a fresh venv
with its dependencies resolved by pip (no extras, nothing of this venv's), and the docs' commands run from an
empty folder: `init`, `check-config` and `ping` on the settings it wrote, `eval` against a scripted endpoint,
`validate` and `view` on the toy, and the README's tour on local and docker. The toy's commit there is the
checkout's, and an episode that ran the toy's tests has no bytecode in its patch.

pip installs with `--no-compile`, and the package alone is then byte-compiled as pip would have done
(`compileall`, which pip calls per file): the toy's `repo/` gets its `__pycache__/` as in a user's install, and
the dependencies' hundreds of modules are not compiled ahead, about 45 CPU-seconds of a 2-core machine. pip
downloads what its cache lacks from PyPI (CI's `make setup` has just filled that cache).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_packaging import ROOT, build_dists
from uni_agent_gym import toy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the install alone is about a minute


class Installed:
    """A venv holding the wheel and what pip resolved for it, and an empty folder to run the commands from; no
    trace of this process's environment (PYTHONPATH would show pip this tree as installed already)."""

    def __init__(self, venv: Path, folder: Path) -> None:
        self.venv, self.folder = venv, folder
        self.environ = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        self.environ |= {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}

    def run(self, *argv: str, check: bool = True, **environ: str) -> subprocess.CompletedProcess:
        done = subprocess.run(argv, cwd=self.folder, env=self.environ | environ, capture_output=True, text=True, timeout=600)
        if check and done.returncode:
            pytest.fail(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def python(self, code: str) -> str:
        return self.run(str(self.venv / "bin" / "python"), "-c", code).stdout.strip()


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    _, wheel = build_dists(base / "dist")
    (base / "empty").mkdir()
    venv = Installed(base / "venv", base / "empty")
    venv.run(sys.executable, "-m", "venv", str(venv.venv))
    venv.run("python", "-m", "pip", "install", "-q", "--no-compile", str(wheel))
    venv.run("python", "-m", "compileall", "-q", venv.python("import sysconfig; print(sysconfig.get_paths()['purelib'])") + "/uni_agent_gym")
    return venv


def test_the_wheel_installed_by_pip_runs_the_docs_commands_from_an_empty_folder(installed, tmp_path):
    assert not installed.python("import importlib.util as u; print([m for m in ('verl', 'torch', 'transformers') if u.find_spec(m)])").strip("[]")
    repo = Path(installed.python("from uni_agent_gym import toy; print(toy.REPO)"))
    assert repo.is_relative_to(installed.venv) and list((repo / "__pycache__").glob("stats.*.pyc")), "pip's bytecode beside the toy"
    assert installed.run("uni-agent-gym", "--version").stdout.strip() == installed.run("python", "-m", "uni_agent_gym", "--version").stdout.strip()
    # pip took the field's swebench (5.x: its parsers and grading decide every row) and left nothing broken
    assert installed.python("import swebench; print(swebench.__version__)").startswith("5."), "swebench 5.x beside the gym, no downgrade"
    assert installed.run("python", "-m", "pip", "check").returncode == 0

    out = " ".join(installed.run("uni-agent-gym", "init").stdout.split())
    assert "they need the verl extra (verl is not installed here)" in out
    configs = installed.folder / "configs"
    assert sorted(str(path.relative_to(configs)) for path in configs.rglob("*.*")) == [
        "deployment/docker.yaml", "deployment/local.yaml", "deployment/modal.yaml", "deployment/ray.yaml", "settings.json"]
    assert "config is valid" in installed.run("uni-agent-gym", "check-config", "-c", "configs/settings.json").stdout

    base_commit = installed.python(f"import asyncio; from uni_agent_gym import toy; print(asyncio.run(toy.toy_instance({str(tmp_path / 'installed')!r}))['base_commit'])")
    assert base_commit == asyncio.run(toy.toy_instance(str(tmp_path / "checkout")))["base_commit"]

    fix = {"tool_call": {"name": "execute_bash", "arguments": {"command": "sed -i 's/(len(values) - 1)/len(values)/' stats.py && python3 -m unittest test_stats"}}}
    with ScriptedEndpoint({"stats.mean": [fix, {"tool_call": {"name": "finish", "arguments": {}}}]}) as endpoint:
        model = {"MODEL_BASE_URL": endpoint.base_url, "MODEL_NAME": "scripted", "OPENAI_API_KEY": "sk-test"}
        assert "'pong'" in installed.run("uni-agent-gym", "ping", "-c", "configs/settings.json", **model).stdout
        installed.run("uni-agent-gym", "eval", "-c", "configs/settings.json", "--dataset", "toy", "--deployment", "local", "--output", "runs/eval", **model)
    trajectory = json.loads((installed.folder / "runs" / "eval" / "trajectories" / f"{toy.INSTANCE_ID}.json").read_text())
    assert trajectory["reward"] == 1.0, trajectory.get("error")
    assert "GIT binary patch" not in trajectory["patch"] and "__pycache__" not in trajectory["patch"], trajectory["patch"]  # the tests ran

    installed.run("uni-agent-gym", "validate", "--dataset", "toy", "--deployment", "local", "--output", "runs/validate")
    installed.run("uni-agent-gym", "view", "runs/eval")
    assert (installed.folder / "runs" / "eval" / "view.html").stat().st_size > 0
    assert tour(installed, "local") == "0.0 False"


def test_the_readmes_tour_on_docker_from_the_wheel(installed, docker_image):
    assert tour(installed, "docker") == "0.0 False"


def tour(installed: Installed, deployment: str) -> str:
    """The README's tour as written, on `deployment`: what it prints."""
    text = (ROOT / "README.md").read_text().split("## A tour", 1)[1]
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert '{"type": "docker"}' in code
    return installed.python(code.replace('{"type": "docker"}', json.dumps({"type": deployment})))
