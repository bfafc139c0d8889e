"""The `uni-agent-gym` command as a user runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from uni_agent_gym.cli import main


def uni_agent_gym(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize(
    "args", [[], ["demo"], ["check-config"], ["cleanup"], ["images"], ["images", "bootstrap-base"]], ids=" ".join
)
def test_every_command_has_help(args):
    done = uni_agent_gym(*args, "--help")
    assert done.returncode == 0 and "usage: uni-agent-gym" in done.stdout


def test_help_shows_each_default_and_every_deployment_type(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--output OUTPUT directory for predictions, trajectories and report (default: runs/eval)" in out
    assert "--workers WORKERS episodes at once (default: 1)" in out and "--deployment {local,docker,modal,ray}" in out
    assert "(default: None)" not in out and "(default: [])" not in out


def test_deployment_ray_is_accepted_on_the_command_line(capsys):
    assert main(["check-config", "--deployment", "ray"]) == 0
    assert '"type": "ray"' in capsys.readouterr().out


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_works_before_and_after_the_subcommand(tmp_path, where):
    """--verbose adds the traceback to the error line, wherever it is written."""
    missing = str(tmp_path / "absent.yaml")
    words = ["--verbose", "check-config", "-c", missing] if where == "before" else ["check-config", "-c", missing, "--verbose"]
    done = uni_agent_gym(*words)
    assert done.returncode == 1 and f"error: --config: Config file {missing} does not exist" in done.stdout
    assert "Traceback" in done.stderr


def test_check_config_prints_the_validated_config(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("deployment:\n  type: docker\n  image: img:1\n")
    done = uni_agent_gym("check-config", "--config", str(path), "--set", "deployment.memory=1g")
    assert done.returncode == 0, done.stderr
    assert '"image": "img:1"' in done.stdout and '"memory": "1g"' in done.stdout and "config is valid" in done.stdout


def test_a_bad_config_is_a_clear_error_without_the_secret(tmp_path):
    import os

    path = tmp_path / "c.yaml"
    path.write_text("deployment:\n  type: docker\n  cpus: ${UAG_TEST_KEY}\n")
    done = uni_agent_gym("check-config", "--config", str(path), env={**os.environ, "UAG_TEST_KEY": "sk-very-secret"})
    assert done.returncode == 1
    assert "deployment.docker.cpus" in done.stdout and "sk-very-secret" not in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_deployment_options_without_a_type_are_the_default_types(tmp_path):
    """docs/configs.md's `--set deployment.memory=8g`, without a config file that names the type."""
    done = uni_agent_gym("check-config", "--set", "deployment.memory=8g")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"type": "docker"' in done.stdout and '"memory": "8g"' in done.stdout and "config is valid" in done.stdout


def test_a_memory_size_docker_cannot_read_fails_the_check(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("deployment: {type: docker, memory: 4gigs}\n")
    done = uni_agent_gym("check-config", "--config", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "deployment.docker.memory: expects a size Docker reads" in done.stdout and "e.g. 512m or 4g" in done.stdout


@pytest.fixture
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich wraps table cells to the terminal width


def test_demo_on_local(capsys, wide_terminal):
    assert main(["demo", "--deployment", "local"]) == 0
    output = capsys.readouterr().out
    assert "step 5: str_replace_editor" in output and "has been edited" in output
    assert "exit reason: finished   reward: 1.0   tests: exit code 0" in output


def test_demo_on_docker(capsys, wide_terminal, docker_image):
    assert main(["demo"]) == 0
    output = capsys.readouterr().out
    assert "Toy task on a docker deployment" in output and "/testbed/stats.py" in output
    assert "reward: 1.0" in output and "the sandbox is released" in output
