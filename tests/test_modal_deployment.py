"""The Modal deployment at the SDK boundary: what it sends and how the answers map.

Modal's cloud is not reachable here and the SDK has no local mode, so `tests/modal_standin.py`
stands in for `modal.Sandbox` (see its docstring). The live test runs only where Modal credentials
exist.
"""

from __future__ import annotations

import os

import pytest
from modal.stream_type import StreamType

import uni_agent_gym.deployments.modal as modal_deployment
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.errors import DeploymentError
from tests import modal_standin


async def test_what_is_sent_to_modal(monkeypatch):
    standin = modal_standin.install(monkeypatch)
    deployment = make_deployment(
        {"type": "modal", "image": "swebench/sweb.eval.x86_64.a:latest", "app_name": "my-app", "sandbox_timeout": 900,
         "cpu": 2, "memory_mb": 4096, "block_network": True, "env": {"A": "1"}}
    )  # fmt: skip
    await deployment.start()
    try:
        assert standin.lookups == [{"name": "my-app", "create_if_missing": True}]
        assert standin.images == ["swebench/sweb.eval.x86_64.a:latest"]
        [create] = standin.creates
        assert create == dict(
            args=("sleep", "infinity"), app="app:my-app", image="image:swebench/sweb.eval.x86_64.a:latest",
            timeout=900, workdir=None, cpu=2.0, memory=4096, block_network=True, env={"A": "1"},
        )  # fmt: skip
        shell_args, shell_options = standin.execs[0]
        assert shell_args == ("bash", "--noprofile", "--norc")
        assert shell_options["text"] is False and shell_options["stderr"] == StreamType.DEVNULL
        assert (await deployment.run("echo $A")).output == "1\n"
    finally:
        await deployment.stop()
    assert standin.sandboxes[0].terminated


async def test_a_timeout_interrupts_through_a_second_exec(monkeypatch):
    """ContainerProcess has no kill: the deployment must open another exec to kill the command."""
    standin = modal_standin.install(monkeypatch)
    deployment = make_deployment({"type": "modal"})
    await deployment.start()
    try:
        result = await deployment.run("sleep 300", timeout=1)
        assert result.timed_out and result.note == ""
        killer_args, _ = standin.execs[-1]
        assert killer_args[:2] == ("sh", "-c") and "kill -KILL" in killer_args[2]
        assert (await deployment.run("echo ok")).output == "ok\n"
    finally:
        await deployment.stop()


async def test_rate_limited_creation_is_retried(monkeypatch):
    standin = modal_standin.install(monkeypatch)
    monkeypatch.setattr(modal_deployment, "CREATE_BACKOFF", 0.01)
    standin.refuse_creates = 2
    deployment = make_deployment({"type": "modal"})
    await deployment.start()
    await deployment.stop()
    assert len(standin.creates) == 1
    standin.refuse_creates = modal_deployment.CREATE_ATTEMPTS
    with pytest.raises(DeploymentError, match="kept refusing new sandboxes"):
        await make_deployment({"type": "modal"}).start()


async def test_without_credentials_it_fails_at_once_and_sends_nothing(monkeypatch):
    standin = modal_standin.install(monkeypatch)
    monkeypatch.delenv("MODAL_TOKEN_ID")
    monkeypatch.delenv("MODAL_TOKEN_SECRET")
    monkeypatch.setenv("MODAL_CONFIG_PATH", "/nonexistent/.modal.toml")
    import modal.config

    monkeypatch.setattr(modal.config, "config", modal.config.Config())
    with pytest.raises(DeploymentError, match="No Modal credentials"):
        await make_deployment({"type": "modal"}).start()
    assert standin.lookups == [] and standin.creates == []


async def test_sandbox_terminated_from_outside(monkeypatch):
    from uni_agent_gym.errors import SandboxDiedError

    standin = modal_standin.install(monkeypatch)
    deployment = make_deployment({"type": "modal"})
    await deployment.start()
    await standin.sandboxes[0].terminate.aio()
    with pytest.raises(SandboxDiedError):
        await deployment.run("echo hi")
    assert not await deployment.is_alive()
    await deployment.stop()


async def test_the_standin_rejects_calls_the_sdk_would(monkeypatch):
    """The fakes bind each call to the real SDK's signature, so a call Modal would refuse fails here too
    (and every call the tests above make through the deployment is one that Modal accepts)."""
    import modal

    modal_standin.install(monkeypatch)
    with pytest.raises(TypeError, match="create_if_missin"):
        await modal.App.lookup.aio("my-app", create_if_missin=True)
    with pytest.raises(TypeError, match="timout"):
        await modal.Sandbox.create.aio("sleep", "infinity", app="app:my-app", timout=60)
    sandbox = await modal.Sandbox.create.aio("sleep", "infinity", app="app:my-app")
    try:
        with pytest.raises(TypeError, match="cwd"):
            await sandbox.exec.aio("true", cwd="/tmp")
        process = await sandbox.exec.aio("true", text=False)
        with pytest.raises(TypeError):
            process.stdin.write(b"a", b"b")
        with pytest.raises(TypeError):
            await process.wait.aio(5)
        assert await process.wait.aio() == 0
    finally:
        await sandbox.terminate.aio()


@pytest.mark.skipif(not os.environ.get("MODAL_TOKEN_ID"), reason="live Modal test needs MODAL_TOKEN_ID/SECRET")
async def test_live_modal_sandbox():
    deployment = make_deployment({"type": "modal", "image": "python:3.11-slim"})
    async with deployment:
        assert (await deployment.run("cd /tmp && export X=1")).exit_code == 0
        assert (await deployment.run("pwd; echo $X")).output == "/tmp\n1\n"
        assert (await deployment.run("sleep 60", timeout=2)).timed_out
