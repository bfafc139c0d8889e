"""The gateway's HTTP server: per-session OpenAI and Anthropic endpoints over one tokenizer and an engine.

    POST   /sessions/{id}/v1/chat/completions   OpenAI chat (tools and tool_calls; stream: true as SSE)
    POST   /sessions/{id}/v1/messages           Anthropic messages (tool_use / tool_result; stream)
    GET    /v1/models, /sessions/{id}/v1/models the one model the gateway serves
    POST   /sessions                            open a session: its id and base URLs
    GET    /sessions/{id}/trajectories          its chains so far, as JSON records
    DELETE /sessions/{id}                       close it: its chains (also appended to the output JSONL)

A harness needs only a base URL: `http://HOST:PORT/sessions/ID/v1` (OpenAI) or
`http://HOST:PORT/sessions/ID` (Anthropic). API keys are accepted and ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.gateway import anthropic_api, openai_api
from uni_agent_gym.gateway.backends import Backend, BackendError
from uni_agent_gym.gateway.messages import BadRequest
from uni_agent_gym.gateway.session import Limits, Session

logger = logging.getLogger(__name__)


class UnknownSession(UniAgentGymError, KeyError):
    """A request names a session the gateway does not have (HTTP 404)."""


class Gateway:
    """Sessions by id, each with its engine, limits and sampling; `app` serves them over HTTP."""

    def __init__(
        self,
        tokenizer: Any,
        backend: Backend | None = None,
        *,
        limits: Limits = Limits(),
        model_name: str = "policy",
        auto_open: bool = True,
        output: str | Path | None = None,
    ) -> None:
        """`auto_open`: a request to an unknown session opens it (standalone use); otherwise it is a 404
        (training opens each session itself). `output`: a JSONL file each closed session's chains go to."""
        self.tokenizer, self.backend, self.limits, self.model_name = tokenizer, backend, limits, model_name
        self.auto_open, self.output = auto_open, Path(output) if output else None
        self.sessions: dict[str, Session] = {}
        self._app = None

    def open_session(
        self,
        session_id: str | None = None,
        *,
        backend: Backend | None = None,
        limits: Limits | None = None,
        sampling_params: dict[str, Any] | None = None,
    ) -> Session:
        """A new session (a fresh id unless given); `backend` and `limits` default to the gateway's."""
        session_id = session_id or uuid.uuid4().hex
        if session_id in self.sessions:
            raise ValueError(f"Session {session_id!r} is already open")
        engine = backend or self.backend
        if engine is None:
            raise ValueError("A session needs a backend: give the gateway one or pass backend=")
        session = Session(session_id, self.tokenizer, engine, limits or self.limits, sampling_params=sampling_params)
        self.sessions[session_id] = session
        return session

    def session(self, session_id: str) -> Session:
        if session_id not in self.sessions:
            if not self.auto_open:
                raise UnknownSession(f"No session {session_id!r} is open on this gateway")
            return self.open_session(session_id)
        return self.sessions[session_id]

    def close_session(self, session_id: str) -> list[dict[str, Any]]:
        """Remove a session; returns its chains' records and appends them to the output file."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise UnknownSession(f"No session {session_id!r} is open on this gateway")
        records = session.records()
        if self.output is not None and records:
            self.output.parent.mkdir(parents=True, exist_ok=True)
            with self.output.open("a") as file:
                file.writelines(json.dumps(record) + "\n" for record in records)
        return records

    def close_all(self) -> None:
        for session_id in list(self.sessions):
            self.close_session(session_id)

    @property
    def app(self) -> FastAPI:
        """The FastAPI application (built on first use)."""
        if self._app is None:
            self._app = _build_app(self)
        return self._app


def _build_app(gateway: Gateway) -> FastAPI:
    app = FastAPI(title="uni-agent-gym gateway", docs_url=None, redoc_url=None)

    async def body_of(request: Request) -> Any:
        raw = await request.body()
        try:  # orjson reads a long history ~5x faster; what it refuses (NaN, huge ints) gets the stdlib's say
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest(f"the body is not JSON: {exc}") from None

    async def serve(request: Request, session_id: str, api) -> Any:
        try:
            body = await body_of(request)
            chat = api.parse_request(body)
            session = gateway.session(session_id)
            completion = await session.complete(chat)
        except BadRequest as exc:
            return JSONResponse(api.error(str(exc), 400), status_code=400)
        except UnknownSession as exc:
            return JSONResponse(api.error(str(exc.args[0]), 404), status_code=404)
        except BackendError as exc:
            return JSONResponse(api.error(f"the engine failed: {exc}", 502), status_code=502)
        except Exception as exc:  # noqa: BLE001 - the HTTP boundary: the session is unchanged, the client is told
            logger.exception("gateway request failed (session %s)", session_id)
            return JSONResponse(api.error(f"{type(exc).__name__}: {exc}", 500), status_code=500)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = (
                openai_api.stream(completion, gateway.model_name, include_usage=include_usage)
                if api is openai_api
                else anthropic_api.stream(completion, gateway.model_name)
            )
            return StreamingResponse(events, media_type="text/event-stream")
        return JSONResponse(api.response(completion, gateway.model_name))

    @app.post("/sessions/{session_id}/v1/chat/completions")
    async def chat_completions(session_id: str, request: Request):
        return await serve(request, session_id, openai_api)

    @app.post("/sessions/{session_id}/v1/messages")
    async def messages(session_id: str, request: Request):
        return await serve(request, session_id, anthropic_api)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": gateway.model_name, "object": "model", "created": int(time.time()), "owned_by": "uni-agent-gym"}]}

    @app.get("/sessions/{session_id}/v1/models")
    async def session_models(session_id: str) -> dict[str, Any]:
        return await models()

    @app.post("/sessions")
    async def open_session(request: Request):
        session = gateway.open_session()
        base = str(request.base_url).rstrip("/")
        return {"id": session.session_id, "openai_base_url": f"{base}/sessions/{session.session_id}/v1",
                "anthropic_base_url": f"{base}/sessions/{session.session_id}"}  # fmt: skip

    @app.get("/sessions/{session_id}/trajectories")
    async def trajectories(session_id: str):
        if session_id not in gateway.sessions:
            return JSONResponse(openai_api.error(f"No session {session_id!r} is open on this gateway", 404), status_code=404)
        session = gateway.sessions[session_id]
        # a JSONResponse as it is: FastAPI's encoder would walk every token id (0.6 s for a 50-turn chain)
        return JSONResponse({"summary": session.summary(), "chains": session.records()})

    @app.delete("/sessions/{session_id}")
    async def close(session_id: str):
        try:  # writing the output file is blocking I/O: off the event loop
            return JSONResponse({"chains": await asyncio.to_thread(gateway.close_session, session_id)})
        except UnknownSession as exc:
            return JSONResponse(openai_api.error(str(exc.args[0]), 404), status_code=404)

    return app


def quiet_server(app: Any):
    """uvicorn's server without its own signal handling: the embedding process (a verl worker, `gateway
    serve`) decides what Ctrl-C means; `server.should_exit = True` stops it."""
    import uvicorn

    class Server(uvicorn.Server):
        def capture_signals(self):
            return contextlib.nullcontext()

    return Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (0: a free port); `OSError` says when it is taken."""
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without it
    # every response on a kept-alive connection waits ~40 ms for a delayed ACK
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"--port: cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


class RunningServer:
    """An ASGI app (the gateway's) served by uvicorn on the running event loop: in training, beside
    verl's agent loops; `port=0` picks a free port."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app, self.host, self.port = app, host, port
        self._server = None
        self._task: asyncio.Task | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self, timeout: float = 30.0) -> "RunningServer":
        sock = listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._server = quiet_server(self.app)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise RuntimeError("the gateway server stopped before it started")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the gateway did not start listening on {self.url} within {timeout:.0f} s")
            await asyncio.sleep(0.01)
        return self

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = self._task = None
