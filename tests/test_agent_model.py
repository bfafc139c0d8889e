"""The chat model against a real HTTP endpoint on 127.0.0.1 (tests/scripted_endpoint.py stands in for
a model server): native and text tool calls, retries, and the errors that stop a run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class _NotOpenAI(BaseHTTPRequestHandler):
    """A web server that is not a model server: a 200 HTML page on GET and POST, or, for `post_status`, that
    status (http.server's own answer to a POST is 501)."""

    post_status = 200
    requests: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        self.requests.append(self.path)
        body = b"<!doctype html><html><body>It works!</body></html>"
        self.send_response(self.post_status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def web_server(status: int):
    handler = type("Handler", (_NotOpenAI,), {"post_status": status, "requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def silent_port():
    """A port that accepts connections and closes them without a word (nothing answers); counts them."""
    accepted = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listener.settimeout(0.2)
        stop = threading.Event()

        def accept():
            while not stop.is_set():
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    continue
                accepted.append(1)
                connection.close()

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
        finally:
            stop.set()
            thread.join(timeout=5)


def ping(base_url: str, **options) -> tuple[str, float]:
    async def one() -> tuple[str, float]:
        model = ChatModel(ModelConfig(base_url=base_url, **options))
        try:
            return await model.ping()
        finally:
            await model.close()

    return asyncio.run(one())


def test_a_server_answering_200_with_html_is_a_model_error_naming_the_url():
    """(It raised AttributeError: 'str' object has no attribute 'choices', a 31-line traceback in `ping`.)"""
    with web_server(200) as (url, requests):
        with pytest.raises(ModelError) as caught:
            ping(url)
    assert str(caught.value) == (f"{url}/v1/chat/completions answered 200 with text/html, not an OpenAI chat completion: "
                                 "check model.base_url (an OpenAI-compatible server, e.g. http://host:8000/v1)")  # fmt: skip


def test_ping_asks_once_and_says_which_url_is_not_an_openai_server():
    """A 501 (http.server's answer to a POST) was retried for ~15 s and ended with "501" alone."""
    with web_server(501) as (url, requests):
        with pytest.raises(ModelError) as caught:
            ping(url)
    assert requests == ["/v1/chat/completions"], "ping asks once"
    assert str(caught.value).startswith(f"{url}/v1/chat/completions answered 501") and "check model.base_url (an OpenAI-compatible" in str(caught.value)


def test_ping_fails_at_the_first_attempt_where_nothing_answers():
    """A port that accepts and says nothing: one connection, not the SDK's retry loop (16 s)."""
    with silent_port() as (url, accepted):
        with pytest.raises(ModelError, match=re.escape(f"Cannot connect to {url}/v1: check model.base_url")):
            ping(url, max_retries=5)
    assert len(accepted) == 1


def test_ping_command_against_a_web_server_is_one_error_line(tmp_path, capsys):
    from uni_agent_gym.cli import main

    with web_server(200) as (url, _):
        config = tmp_path / "settings.json"
        config.write_text(json.dumps({"model": {"base_url": url}}))
        assert main(["ping", "-c", str(config)]) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out and out.count("error:") == 1 and f"{url}/v1/chat/completions answered 200 with text/html" in out
