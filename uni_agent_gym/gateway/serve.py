"""`uni-agent-gym gateway serve`: the gateway in front of vLLM or SGLang servers, for evaluation and data
collection with any harness.

    uni-agent-gym gateway serve --backend http://gpu1:8000 --tokenizer Qwen/Qwen2.5-Coder-7B-Instruct \\
        --output runs/gateway/trajectories.jsonl

A harness points its OpenAI base URL at `http://HOST:PORT/sessions/ANY-ID/v1` (Anthropic:
`http://HOST:PORT/sessions/ANY-ID`); a session opens on its first request. Its chains are appended to
`--output` when the session is closed (`DELETE /sessions/ID`) and, for sessions still open, when the
server stops (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uni_agent_gym.gateway.backends import HttpTokenBackend
from uni_agent_gym.gateway.server import Gateway, quiet_server
from uni_agent_gym.gateway.session import Limits


def load_tokenizer(source: str) -> Any:
    """The served model's tokenizer as its tokenizer.json declares it (a hub name fails at once where the hub does not
    answer), its round trip checked (recorded ids must be the text the model saw) and its chat template probed (a
    template the rollout cache cannot follow fails here, not at the first request)."""
    from uni_agent_gym.tokenizer_loading import load_tokenizer as load
    from uni_agent_gym.tokenizer_loading import require_round_trip
    from uni_agent_gym.tokens.boundary import probe

    tokenizer = load(source)
    require_round_trip(tokenizer, f"the tokenizer {source}")
    probe(tokenizer)
    return tokenizer


def serve(
    *,
    sock: socket.socket,
    tokenizer: Any,
    backends: list[str],
    api: str,
    backend_model: str | None,
    output: Path,
    limits: Limits,
    model_name: str,
    log: Callable[[str], None] = print,
) -> int:
    """Serve on `sock` (`listening_socket`) until Ctrl-C or SIGTERM; returns how
    many chains were written to `output`."""
    return asyncio.run(_serve(sock, tokenizer, backends, api, backend_model, output, limits, model_name, log))


async def _serve(sock, tokenizer, backends, api, backend_model, output, limits, model_name, log) -> int:  # noqa: ANN001
    backend = HttpTokenBackend(backends, api, model=backend_model)
    gateway = Gateway(tokenizer, backend, limits=limits, model_name=model_name, output=output)
    before = _lines(output)
    host, port = sock.getsockname()[:2]
    log(f"gateway on http://{host}:{port} ({api}: {', '.join(backends)}); OpenAI base URL http://{host}:{port}/sessions/<id>/v1, "
        f"Anthropic http://{host}:{port}/sessions/<id>; chains to {output}")  # fmt: skip
    server = quiet_server(gateway.app)
    loop = asyncio.get_running_loop()
    for stop in (signal.SIGINT, signal.SIGTERM):  # stopping is how this command ends: flush, then exit 0
        loop.add_signal_handler(stop, setattr, server, "should_exit", True)
    try:
        await server.serve(sockets=[sock])
    finally:
        gateway.close_all()
        await backend.aclose()
    written = _lines(output) - before
    log(f"{written} chain(s) written to {output}")
    return written


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open()) if path.is_file() else 0
