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
from tests.browser import browser  # noqa: F401 (a fixture)
from tests.token_http import token_app
from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym.cli import main
from uni_agent_gym.gateway.backends import BackendError, HttpTokenBackend
from uni_agent_gym.gateway.server import Gateway, RunningServer

pytestmark = pytest.mark.slow  # gateway processes with a sampling model: not in make test-fast

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



@pytest.mark.parametrize("api", ["vllm", "sglang"])
async def test_a_stop_string_that_is_a_special_token_stops_the_engine(tmp_path, api):
    """vLLM matches a client's stop strings in the text it detokenizes, which by default leaves special
    tokens out: the backend asks it to keep them, so a stop at a tool-call delimiter the tokenizer marks
    special (as some do) still ends the turn there (SGLang matches stop strings in the raw decode)."""
    model_dir = tiny_model_dir(tmp_path / "model", special=("</tool_call>",))
    engine = TokenServer(model_dir, step)
    server = await RunningServer(token_app(engine)).start()
    backend = HttpTokenBackend([server.url], api)
    try:
        output = await backend.generate("s", prompt_ids=[1, 2, 3], sampling_params={"max_tokens": 64, "stop": ["</tool_call>"]})
    finally:
        await backend.aclose()
        await server.stop()
    end = engine.tokenizer.convert_tokens_to_ids("</tool_call>")
    assert output.token_ids[-1] == end and output.token_ids == engine.calls[0]["ids"]
    assert output.log_probs == pytest.approx(engine.calls[0]["logprobs"])

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


async def test_gateway_serve_writes_each_sessions_chains_to_jsonl(model_dir, tmp_path, browser):
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
    looked_at_in_chromium(browser, output, model_dir, records)


def looked_at_in_chromium(browser, output, model_dir, records) -> None:
    """`uni-agent-gym view` on the JSONL the gateway wrote: a row per chain, each token's mask class is the
    chain's mask, and the right masks raise no flag (the spans read from the template's headers)."""
    from selenium.webdriver.common.by import By

    from tests.browser import wait_for
    from uni_agent_gym.viewer.checks import check
    from uni_agent_gym.viewer.records import add_token_texts, load

    assert main(["view", str(output), "--tokenizer", str(model_dir)]) == 0
    browser.get(output.with_name("chains.view.html").as_uri())
    wait_for(browser, "return window.__uagRendered")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")) == 2
    browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")[0].click()
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'")
    shown = [1 if "m1" in token.get_attribute("class").split() else 0 for token in browser.find_elements(By.CSS_SELECTOR, "#tokens .tok")]
    assert shown == records[0]["response_mask"]
    viewed = load(output)
    add_token_texts(viewed, model_dir)
    assert check(viewed[0]).flags == [] and [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#flags li")] == ["no flags"]
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_a_port_in_use_is_one_error_line(model_dir, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code = main(["gateway", "serve", "--backend", "http://127.0.0.1:9", "--tokenizer", str(model_dir), "--port", str(taken.getsockname()[1])])
    output = capsys.readouterr().out
    assert code == 1 and "Traceback" not in output
    assert "error: --port: cannot listen on 127.0.0.1:" in output and "Address already in use" in output


def broken_engine_app():
    """An engine that fails in each way a real one can: an error status, a body that is not JSON."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def error(request):
        return PlainTextResponse("CUDA out of memory", status_code=500)

    async def not_json(request):
        return PlainTextResponse("<html>proxy page</html>")

    return Starlette(routes=[Route("/error/generate", error, methods=["POST"]), Route("/html/generate", not_json, methods=["POST"])])


@pytest.mark.parametrize(
    "path, expected",
    [("/error", "answered 500: CUDA out of memory"), ("/html", "answered with something that is not JSON: b'<html>proxy page</html>'")],
)
async def test_an_engine_that_fails_is_a_backend_error_naming_the_server(path, expected):
    server = await RunningServer(broken_engine_app()).start()
    backend = HttpTokenBackend([server.url + path], "sglang")
    try:
        with pytest.raises(BackendError) as failed:
            await backend.generate("s", prompt_ids=[1, 2], sampling_params={"max_tokens": 4})
    finally:
        await backend.aclose()
        await server.stop()
    assert f"{server.url}{path}/generate" in str(failed.value) and expected in str(failed.value)


async def test_an_engine_that_is_not_listening_is_a_backend_error():
    url = f"http://127.0.0.1:{free_port()}"
    backend = HttpTokenBackend([url], "vllm")
    try:
        with pytest.raises(BackendError, match=rf"{url}/v1/models: Client\w*Error"):
            await backend.generate("s", prompt_ids=[1], sampling_params={"max_tokens": 4})
    finally:
        await backend.aclose()


def test_one_backend_serves_successive_event_loops(model_dir):
    """Scripts (and tests) may drive one backend from more than one `asyncio.run`: its HTTP client
    belongs to one event loop, so each loop gets its own."""
    engine = TokenServer(model_dir, step)
    backend = HttpTokenBackend(["http://127.0.0.1:1"], "sglang")

    async def once() -> list[int]:
        server = await RunningServer(token_app(engine)).start()
        backend.urls = [server.url]  # a new port per loop
        try:
            return (await backend.generate("s", prompt_ids=[1, 2, 3], sampling_params={"max_tokens": 2})).token_ids
        finally:
            await server.stop()

    assert len(asyncio.run(once())) > 0 and len(asyncio.run(once())) > 0
    assert len(engine.calls) == 2


async def test_requests_are_not_queued_behind_a_connection_cap():
    """An engine batches what it is sent at once: 150 sessions generating together all reach it together
    (a client capped at 100 connections would hold 50 back until the first answered: here, never)."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    sessions, arrived, everyone = 150, [], asyncio.Event()

    async def generate(request):
        arrived.append(1)
        if len(arrived) == sessions:
            everyone.set()
        await everyone.wait()  # a batch that starts only when every request is in
        return JSONResponse({"output_ids": [7], "meta_info": {"output_token_logprobs": [[-0.5, 7, None]], "finish_reason": {"type": "stop"}}})

    server = await RunningServer(Starlette(routes=[Route("/generate", generate, methods=["POST"])])).start()
    backend = HttpTokenBackend([server.url], "sglang")
    try:
        calls = [backend.generate(f"s{n}", prompt_ids=[1, 2], sampling_params={"max_tokens": 1}) for n in range(sessions)]
        outputs = await asyncio.wait_for(asyncio.gather(*calls), timeout=30)
    finally:
        everyone.set()  # a failed run's held requests end, so the server stops
        await backend.aclose()
        await server.stop()
    assert len(arrived) == sessions and all(output.token_ids == [7] and output.log_probs == [-0.5] for output in outputs)
