"""Standalone use: the gateway in front of inference servers over their token-id HTTP APIs (vLLM's
`/v1/completions`, SGLang's `/generate`), and `uni-agent-gym gateway serve` as a process writing every
session's chains to JSONL.

Faked: the inference servers, `TokenServer` behind `tests/token_http.py` (a tiny random-weights model
with the real Qwen2.5 tokenizer: real token ids and logprobs over HTTP)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.test_gateway_chains import TASK, check_exact, client, close_clients, play, step  # noqa: F401 - close_clients: autouse
from tests.token_http import token_app
from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym.cli import main
from uni_agent_gym.gateway.backends import HttpTokenBackend
from uni_agent_gym.gateway.server import Gateway, RunningServer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory.mktemp("model"))


@pytest.mark.parametrize("api", ["vllm", "sglang"])
async def test_http_engines_give_their_tokens_and_logprobs_and_a_session_sticks_to_one(model_dir, api):
    engines = [TokenServer(model_dir, step), TokenServer(model_dir, step)]
    servers = [await RunningServer(token_app(engine)).start() for engine in engines]
    backend = HttpTokenBackend([server.url for server in servers], api)  # vLLM's model name comes from /v1/models
    gateway = Gateway(engines[0].tokenizer, backend)
    front = await RunningServer(gateway.app).start()
    try:
        for index in range(4):
            await play(client(front.url, f"session-{index}"), 2, [{"role": "system", "content": f"You are agent {index}."}, TASK[1]])
        # a compacted history: the engine gets a prompt that does not extend the last one it got
        await play(client(front.url, "session-0"), 1, [{"role": "system", "content": "You are agent 0."}, {"role": "user", "content": "Summary."}])
    finally:
        for server in (front, *servers):
            await server.stop()
        await backend.aclose()
    calls = [call for engine in engines for call in engine.calls]
    for index in range(4):
        records = gateway.sessions[f"session-{index}"].records()
        assert [record["num_turns"] for record in records] == ([2, 1] if index == 0 else [2])
        assert check_exact(records, calls) == (3 if index == 0 else 2)
        served_by = {number for number, engine in enumerate(engines) for call in engine.calls
                     if f"You are agent {index}." in engine.tokenizer.decode(call["prompt_ids"])}  # fmt: skip
        assert len(served_by) == 1, f"session {index} was served by {served_by}"
        assert backend.url_for(f"session-{index}") == servers[served_by.pop()].url


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def wait_until_serving(url: str, process: asyncio.subprocess.Process, timeout: float = 120.0) -> None:
    deadline, last = time.monotonic() + timeout, None
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise AssertionError(f"gateway serve exited with {process.returncode}: {(await process.stdout.read()).decode()}")
            try:
                if (await http.get(f"{url}/v1/models")).status_code == 200:
                    return
            except httpx.HTTPError as exc:
                last = exc
            await asyncio.sleep(0.2)
    raise AssertionError(f"gateway serve did not answer on {url} within {timeout:.0f} s (last: {last!r})")


async def test_gateway_serve_writes_each_sessions_chains_to_jsonl(model_dir, tmp_path):
    """Session a is closed by its client; session b is still open when the server gets SIGINT: both
    chains are in the JSONL, token for token what the engine sampled."""
    engine = TokenServer(model_dir, step)
    backend = await RunningServer(token_app(engine)).start()
    port, output = free_port(), tmp_path / "runs" / "chains.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "uni_agent_gym.cli", "gateway", "serve", "--backend", backend.url, "--backend-api", "sglang",
        "--tokenizer", str(model_dir), "--port", str(port), "--output", str(output), "--max-tokens-per-turn", "128",
        cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        await wait_until_serving(url, process)
        await play(client(url, "a"), 2)
        async with httpx.AsyncClient() as http:
            closed = (await http.delete(f"{url}/sessions/a")).json()["chains"]
        await play(client(url, "b"), 1)
        process.send_signal(signal.SIGINT)
        log = (await asyncio.wait_for(process.communicate(), timeout=60))[0].decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await backend.stop()
    assert process.returncode == 0, log
    assert "OpenAI base URL" in log and f"2 chain(s) written to {output}" in log
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(record["session_id"], record["num_turns"], record["started_by"]) for record in records] == [("a", 2, "start"), ("b", 1, "start")]
    assert records[0] == closed[0]
    assert check_exact(records, engine.calls) == 3


def test_a_port_in_use_is_one_error_line(model_dir, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code = main(["gateway", "serve", "--backend", "http://127.0.0.1:9", "--tokenizer", str(model_dir), "--port", str(taken.getsockname()[1])])
    output = capsys.readouterr().out
    assert code == 1 and "Traceback" not in output
    assert "error: --port: cannot listen on 127.0.0.1:" in output and "Address already in use" in output
