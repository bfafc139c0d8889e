"""`uni-agent-gym view PATH --serve`: the viewer as a small local web app for a run of any size. The page
is one HTML document (no CDN; it works offline); the run table, its filters, the charts and each trajectory
come from the index (`index.py`) a page at a time, and every request first reads what landed since the last
one, so a training run's new records show on the next refresh. Loopback only unless `--host` says otherwise.
"""

from __future__ import annotations

import collections
import errno
import json
import socket
import threading
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from uni_agent_gym.arguments import BadArgument
from uni_agent_gym.tokens.texts import token_texts
from uni_agent_gym.viewer.checks import Check, check
from uni_agent_gym.viewer.html import document, embedded
from uni_agent_gym.viewer.index import Index
from uni_agent_gym.viewer.queries import QueryError, charts, rows, summary
from uni_agent_gym.viewer.records import Trajectory, ViewerInputError
from uni_agent_gym.viewer.shown import TURNS_MEANING, detail, token_page

OPENED = 4  # trajectories kept parsed (a 32k-token record is read once for all its token pages)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (0: a free port), before any work, so a bad one is one line at once."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise BadArgument(f"--host: {host!r} is not an address of this machine ({exc.strerror})") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        name = "--port" if exc.errno in (errno.EADDRINUSE, errno.EACCES) else "--host"
        raise BadArgument(f"{name}: cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)  # a browser that connects before uvicorn starts waits in the backlog
    return sock


class Opened:
    """The last few trajectories opened, parsed and checked (bounded: memory does not grow with the run)."""

    def __init__(self, index: Index, tokenizer: Any) -> None:
        self.index, self.tokenizer = index, tokenizer
        self.items: collections.OrderedDict[int, tuple[Trajectory, Check]] = collections.OrderedDict()
        self.lock = threading.Lock()

    def get(self, identifier: int) -> tuple[Trajectory, Check] | None:
        with self.lock:
            if identifier in self.items:
                self.items.move_to_end(identifier)
                return self.items[identifier]
        record = self.index.record(identifier)
        if record is None:
            return None
        if record.tokens is None and record.response_ids is not None and self.tokenizer is not None:
            record.tokens = token_texts(self.tokenizer, record.response_ids)
        item = (record, check(record, self.tokenizer))
        with self.lock:
            self.items[identifier] = item
            while len(self.items) > OPENED:
                self.items.popitem(last=False)
        return item


def make_app(index: Index, title: str, tokenizer: Any = None) -> FastAPI:
    """The FastAPI app over `index` (see the module docstring)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    run = {"title": title, "turns_meaning": TURNS_MEANING}
    html = document(title, "app.html", [f'<script type="application/json" id="run-data">{embedded(run)}</script>'], ["app.js"])
    opened = Opened(index, tokenizer)
    cached: dict[tuple[str, int], Any] = {}

    def answer(data: Any) -> Response:
        return Response(json.dumps(data, ensure_ascii=False, allow_nan=False, default=str), media_type="application/json")

    def trajectory(identifier: int) -> tuple[Trajectory, Check]:
        try:
            found = opened.get(identifier)
        except (ViewerInputError, OSError) as exc:
            raise HTTPException(410, f"trajectory {identifier} can no longer be read: {exc}") from None
        if found is None:
            raise HTTPException(404, f"no trajectory {identifier} in the index")
        return found

    @app.exception_handler(QueryError)
    async def bad_query(request: Request, exc: QueryError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.get("/", response_class=HTMLResponse)
    def home() -> str:
        return html

    @app.get("/api/summary")
    def run_summary() -> Response:
        index.update()
        return answer(summary(index))

    @app.get("/api/rows")
    def table(request: Request, sort: str = "id", descending: bool = False, offset: int = 0, limit: int = 50) -> Response:
        index.update()
        return answer(rows(index, dict(request.query_params), sort, descending, offset, limit))

    @app.get("/api/charts")
    def chart_points(by: str = "max_global_steps") -> Response:
        index.update()
        key = (by, index.generation)
        if key not in cached:
            cached.clear()
            cached[key] = charts(index, by)
        return answer(cached[key])

    @app.get("/api/trajectories/{identifier}")
    def one(identifier: int) -> Response:
        record, found = trajectory(identifier)
        return answer(detail(record, found, arrays=False))

    @app.get("/api/trajectories/{identifier}/tokens")
    def tokens(identifier: int, offset: int = 0, limit: int = 2000) -> Response:
        record, found = trajectory(identifier)
        return answer(token_page(record, found, max(0, offset), max(1, min(limit, 20000))))

    return app


def serve(sock: socket.socket, index: Index, title: str, tokenizer: Any, log) -> None:
    """Serve the app on `sock` until Ctrl-C."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    server = uvicorn.Server(uvicorn.Config(make_app(index, title, tokenizer), log_level="warning", access_log=False))
    log(f"serving http://{f'[{host}]' if ':' in host else host}:{port}/ (Ctrl-C stops)")
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shuts down on Ctrl-C, then raises it again for its caller: a stop asked for
        pass
    log("stopped")
