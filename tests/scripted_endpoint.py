"""A small OpenAI-compatible chat endpoint on 127.0.0.1 that replays scripted assistant turns.

It stands in for a model server (the only thing faked in the eval tests). Each script is picked by a
marker found in the conversation's first user message; the turn is the number of assistant messages
in the request, so concurrent episodes and retries stay deterministic. A turn is one of:
  {"tool_call": {"name": ..., "arguments": {...}}}   native when the request offers tools, else as
                                                     <tool_call> text (what a model does without tools)
  {"text": "..."}                                    plain content (a text tool call, or a malformed one)
  {"status": 401}                                    an error answer, every time
and may carry "fail_first": [500, 429]: those errors are answered first (429 with retry-after: 0).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedEndpoint:
    def __init__(self, scripts: dict[str, list[dict[str, Any]]], path_prefix: str = "/v1") -> None:
        self.scripts = scripts
        self.path_prefix = path_prefix
        self.requests: list[dict[str, Any]] = []
        self._failures_served: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "ScriptedEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        messages = body.get("messages", [])
        first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        key = next((marker for marker in self.scripts if marker in first_user), None)
        if key is None:
            return 200, {}, self._completion(body, {"text": "pong"})
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        script = self.scripts[key]
        entry = script[min(turn, len(script) - 1)]
        with self._lock:
            self.requests.append({"key": key, "turn": turn, "tools": "tools" in body, "messages": len(messages)})
            served = self._failures_served.get((key, turn), 0)
            failures = entry.get("fail_first", [])
            if served < len(failures):
                self._failures_served[(key, turn)] = served + 1
                status = failures[served]
                return status, {"retry-after": "0"} if status == 429 else {}, {"error": {"message": f"scripted {status}", "type": "scripted"}}
        if "status" in entry:
            return entry["status"], {}, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
        return 200, {}, self._completion(body, entry)

    def _completion(self, body: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": entry.get("text", "")}
        finish = "stop"
        if "tool_call" in entry:
            call = entry["tool_call"]
            if body.get("tools"):
                message["content"] = None
                message["tool_calls"] = [{"id": f"call_{len(self.requests)}", "type": "function",
                                          "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]  # fmt: skip
                finish = "tool_calls"
            else:
                message["content"] = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4
        completion = max(1, len(json.dumps(message)) // 4)
        return {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }  # fmt: skip

    def _handler(self):
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                if self.path != f"{endpoint.path_prefix}/chat/completions":
                    self._send(404, {}, {"error": {"message": f"no route {self.path}"}})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                self._send(*endpoint.answer(body))

            def _send(self, status: int, headers: dict[str, str], payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler
