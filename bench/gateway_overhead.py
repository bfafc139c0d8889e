"""Latency the gateway adds to one request, at turn 1 and at turn 50 of a session, over calling the
engine directly with the same token ids, both measured in this run.

The engine is an HTTP server with SGLang's `/generate` that answers at once with a canned tool-call turn
(so only the gateway's own work shows); it and the gateway run in a child process. Per turn the client
sends the whole OpenAI history (observations of ~2,000 characters, as a SWE harness sends) through the
gateway, then the very prompt ids the engine got straight to the engine. Added = through the gateway -
direct, as wall time and as CPU time of the serving process (which a loaded machine does not inflate),
medians over sessions. The target is < 5 ms at turn 50, and turn 50 should cost about what turn 1 does:
the rollout cache appends only the new messages, and the history is compared, never re-rendered.

Usage: python bench/gateway_overhead.py [--tokenizer DIR] [--turns 50] [--sessions 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from transformers import AutoTokenizer

from uni_agent_gym.gateway.backends import HttpTokenBackend
from uni_agent_gym.gateway.server import Gateway, RunningServer
from uni_agent_gym.gateway.session import Limits

TOKENIZER = Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "qwen2.5-instruct"
BASH = {"type": "function", "function": {"name": "bash", "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}  # fmt: skip
TURN = 'Let me look at the parser.\n<tool_call>\n{"name": "bash", "arguments": {"command": "grep -n parse src/parser.py"}}\n</tool_call><|im_end|>'


def engine_app(tokenizer) -> Starlette:
    """An engine that samples nothing: the same turn at once, with logprobs. It keeps the last prompt it
    got (`GET /last`) so the client can send the very same ids straight to it, and tells the CPU time
    of its process (`GET /cpu`)."""
    ids = tokenizer.encode(TURN, add_special_tokens=False)
    answer = {"output_ids": ids, "meta_info": {"output_token_logprobs": [[-0.1, token, None] for token in ids], "finish_reason": {"type": "stop"}}}
    last: dict = {}

    async def generate(request):
        last["input_ids"] = json.loads(await request.body())["input_ids"]
        return JSONResponse(answer)

    async def last_prompt(request):
        return JSONResponse(last)

    async def cpu(request):
        return JSONResponse(time.process_time())

    return Starlette(routes=[Route("/generate", generate, methods=["POST"]), Route("/last", last_prompt), Route("/cpu", cpu)])


def serve(tokenizer_dir: str) -> None:
    """The engine and the gateway in this process (the benchmark's child), until it is killed."""

    async def run() -> None:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        engine = await RunningServer(engine_app(tokenizer)).start()
        gateway = Gateway(tokenizer, HttpTokenBackend([engine.url], "sglang"), limits=Limits(10**6, 10**5, 10**6, 4096))
        front = await RunningServer(gateway.app).start()
        print(json.dumps({"engine": engine.url, "gateway": front.url}), flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


def measure(url: str, engine: str, turns: int, sessions: int) -> dict[int, dict[str, float]]:
    """Per turn, medians over sessions (ms): wall time through the gateway and straight to the engine, and
    the serving process's CPU time for each."""
    samples = {turn: {"through": [], "direct": [], "cpu_through": [], "cpu_direct": []} for turn in range(1, turns + 1)}
    with httpx.Client(timeout=60) as http:
        for number in range(sessions + 1):  # session 0 warms up (template compile, connections)
            messages = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix the parser. " * 50}]
            for turn in range(1, turns + 1):
                cpu_start = http.get(f"{engine}/cpu").json()
                started = time.perf_counter()
                response = http.post(f"{url}/sessions/bench-{number}/v1/chat/completions", json={"model": "policy", "messages": messages, "tools": [BASH]})
                through = time.perf_counter() - started
                cpu_through = http.get(f"{engine}/cpu").json() - cpu_start
                message = response.raise_for_status().json()["choices"][0]["message"]
                prompt_ids = http.get(f"{engine}/last").json()["input_ids"]
                cpu_start = http.get(f"{engine}/cpu").json()
                started = time.perf_counter()
                body = {"input_ids": prompt_ids, "return_logprob": True, "sampling_params": {"max_new_tokens": 4096}}
                http.post(f"{engine}/generate", json=body).raise_for_status()
                direct = time.perf_counter() - started
                cpu_direct = http.get(f"{engine}/cpu").json() - cpu_start
                if number:
                    for key, value in (("through", through), ("direct", direct), ("cpu_through", cpu_through), ("cpu_direct", cpu_direct)):
                        samples[turn][key].append(value * 1000)
                observation = "\n".join(f"src/parser.py:{line}: def parse_{turn}_{line}(text): return text.split()" for line in range(30))
                messages += [message, {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": observation}]
            chains = http.get(f"{url}/sessions/bench-{number}/trajectories").json()["summary"]["chains"]
            assert chains == 1, "the benchmark's history must stay one chain"
    return {turn: {key: statistics.median(values) for key, values in by_key.items()} for turn, by_key in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", default=str(TOKENIZER))
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.serve:
        return serve(args.tokenizer)
    if not Path(args.tokenizer).is_dir():  # `make bench` goes on with the next bench
        print(f"skipped: no tokenizer directory {args.tokenizer} (../shared/tokenizers beside the checkout, or --tokenizer DIR)")
        return
    child = subprocess.Popen([sys.executable, __file__, "--serve", "--tokenizer", args.tokenizer], stdout=subprocess.PIPE, text=True)
    try:
        urls = json.loads(child.stdout.readline())
        results = measure(urls["gateway"], urls["engine"], args.turns, args.sessions)
    finally:
        child.kill()
        child.wait()
    wall = {turn: result["through"] - result["direct"] for turn, result in results.items()}
    cpu = {turn: result["cpu_through"] - result["cpu_direct"] for turn, result in results.items()}
    print(f"{'turn':>5} {'through gateway':>16} {'engine direct':>14} {'added':>8} {'added CPU':>10}   (median ms, {args.sessions} sessions)")
    for turn in sorted({1, 10, 25, args.turns} & set(results)):
        print(f"{turn:>5} {results[turn]['through']:>16.2f} {results[turn]['direct']:>14.2f} {wall[turn]:>8.2f} {cpu[turn]:>10.2f}")
    last = args.turns
    print(f"added at turn {last}: {wall[last]:.2f} ms wall, {cpu[last]:.2f} ms CPU of the serving process (target < 5 ms); "
          f"turn {last} / turn 1: {wall[last] / wall[1]:.2f}x wall, {cpu[last] / cpu[1]:.2f}x CPU "
          f"(the engine call alone: {results[last]['direct'] / results[1]['direct']:.2f}x)")  # fmt: skip
    print(f"load average after the run: {', '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
