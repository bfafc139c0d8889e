"""The chat model against a real HTTP endpoint on 127.0.0.1 (tests/scripted_endpoint.py stands in for
a model server): native and text tool calls, retries, and the errors that stop a run."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests.scripted_endpoint import ScriptedEndpoint
from uni_agent_gym.agent.model import ChatModel, ModelError, normalise_base_url
from uni_agent_gym.config import ModelConfig
from uni_agent_gym.tools import make_tools

TOOLS = [tool.schema() for tool in make_tools().values()]
LS = {"tool_call": {"name": "execute_bash", "arguments": {"command": "ls"}}}


def ask(marker: str) -> list[dict]:
    return [{"role": "system", "content": "s"}, {"role": "user", "content": f"task {marker}"}]


def model_for(endpoint: ScriptedEndpoint, **options) -> ChatModel:
    return ChatModel(ModelConfig(base_url=endpoint.base_url, model_name="scripted", **options))


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_base_url_with_or_without_v1(suffix):
    assert normalise_base_url("http://h:8000" + suffix) == "http://h:8000/v1"


async def test_native_tool_call_and_usage():
    with ScriptedEndpoint({"A": [LS]}) as endpoint:
        model = model_for(endpoint)
        turn = await model.complete(ask("A"), TOOLS)
        assert turn.action == {"name": "execute_bash", "arguments": '{"command": "ls"}'}
        assert turn.message["tool_calls"][0]["function"]["name"] == "execute_bash"
        assert turn.prompt_tokens > 0 and turn.completion_tokens > 0 and turn.latency > 0
        assert endpoint.requests[-1]["tools"] is True
        await model.close()


async def test_text_tool_calls_when_native_is_off():
    with ScriptedEndpoint({"A": [LS]}) as endpoint:
        model = model_for(endpoint, native_tools="off")
        turn = await model.complete(ask("A"), TOOLS)
        assert turn.action.startswith("<tool_call>") and '"execute_bash"' in turn.action
        assert endpoint.requests[-1]["tools"] is False
        await model.close()


async def test_500_then_success_and_429_with_retry_after_are_retried():
    with ScriptedEndpoint({"A": [{**LS, "fail_first": [500, 429, 500]}]}) as endpoint:
        model = model_for(endpoint)
        turn = await model.complete(ask("A"), TOOLS)
        assert turn.retries == 3 and turn.action["name"] == "execute_bash"
        await model.close()


async def test_too_many_failures_stop_with_the_reason():
    with ScriptedEndpoint({"A": [{**LS, "fail_first": [500] * 10}]}) as endpoint:
        model = model_for(endpoint, max_retries=2)
        with pytest.raises(ModelError, match="kept failing after 2 retries: 500"):
            await model.complete(ask("A"), TOOLS)
        await model.close()


async def test_401_stops_at_once_without_printing_the_key():
    with ScriptedEndpoint({"A": [{"status": 401}]}) as endpoint:
        model = model_for(endpoint, api_key="sk-secret-value-123")
        with pytest.raises(ModelError) as caught:
            await model.complete(ask("A"), TOOLS)
        assert "refused the API key (401)" in str(caught.value) and "sk-secret" not in str(caught.value)
        assert len(endpoint.requests) == 1, "no retry of a refused key"
        await model.close()


async def test_wrong_base_url_stops_at_once():
    with ScriptedEndpoint({"A": [LS]}, path_prefix="/api") as endpoint:
        model = model_for(endpoint)
        with pytest.raises(ModelError, match=r"chat/completions answered 404: check model.base_url"):
            await model.complete(ask("A"), TOOLS)
        await model.close()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ChatModel(ModelConfig(base_url=f"http://127.0.0.1:{port}", max_retries=1))
    with pytest.raises(ModelError, match=f"Cannot connect to http://127.0.0.1:{port}/v1: check model.base_url"):
        await model.complete(ask("A"), TOOLS)
    await model.close()


def test_ping_command(tmp_path, monkeypatch):
    with ScriptedEndpoint({}) as endpoint:
        config = tmp_path / "settings.json"
        config.write_text('{"model": {"base_url": "%s", "model_name": "scripted", "api_key": "${UAG_KEY}"}}' % endpoint.base_url)
        env = {"UAG_KEY": "sk-ping-secret", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "ping", "-c", str(config)], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "scripted at" in done.stdout and "'pong'" in done.stdout and "sk-ping-secret" not in done.stdout
