"""`check-config --training` where uni-agent-gym's `verl.plugins` entry point fails to import: `import verl` logs that
only at debug level and goes on without the estimators it registers, so the check names the import error, not only the
missing estimator. The failure is real: the plugin's import of one of its modules is blocked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a fresh interpreter imports verl and composes its trainer config

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = "uni_agent_gym.advantages.masked_share"  # imported by the plugin module only


def test_check_config_names_the_plugins_import_error(tmp_path):
    from tests.test_verl_training import edited_toml

    toml = str(edited_toml(tmp_path))
    script = f"import sys; sys.modules[{BLOCKED!r}] = None; from uni_agent_gym.cli import main; sys.exit(main(['check-config', '--training', {toml!r}]))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=ROOT)
    out = " ".join(done.stdout.split())
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    assert "problem: algorithm.adv_estimator = 'grpo_drop_masked' is not an estimator verl knows" in out, out
    assert (f"entry point: importing it (uni_agent_gym.advantages.plugin) fails with ModuleNotFoundError: import of {BLOCKED} halted; "
            "None in sys.modules (verl logs that only at debug level and goes on without it): fix that import.") in out, out  # fmt: skip
