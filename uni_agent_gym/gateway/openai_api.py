"""The OpenAI chat-completions wire format: a request body in, a `Completion` out (JSON or SSE chunks).

Only the wire format lives here. What the gateway cannot do faithfully is refused with a 400 that says
why: `n > 1`, a forced `tool_choice`, `response_format` (constrained decoding), returned `logprobs`
(they are recorded in the session's trajectories), legacy `functions`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from uni_agent_gym.gateway.messages import BadRequest, from_openai, from_openai_tools
from uni_agent_gym.gateway.session import CLIENT_SAMPLING, ChatRequest, Completion


def positive_tokens(body: dict[str, Any], *names: str) -> int | None:
    """The first of `names` present in `body`, checked to be a whole number of at least 1."""
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadRequest(f"{name}: expects a whole number of at least 1, got {value!r}")
        return value
    return None


def parse_request(body: Any) -> ChatRequest:
    """A chat-completions body as a `ChatRequest`; `BadRequest` for what the gateway does not serve."""
    if not isinstance(body, dict):
        raise BadRequest("expects a JSON object body")
    if body.get("n") not in (None, 1):
        raise BadRequest(f"n={body['n']!r} is not supported: one request samples one turn of one trajectory; send n requests")
    if body.get("tool_choice") not in (None, "auto"):
        raise BadRequest(
            f"tool_choice {body['tool_choice']!r} is not supported: forcing a tool call changes what the model samples "
            "(only 'auto')"
        )
    response_format = body.get("response_format")
    if response_format and (not isinstance(response_format, dict) or response_format.get("type") != "text"):
        raise BadRequest("response_format is not supported: constrained decoding changes what the model samples")
    if body.get("logprobs") or body.get("top_logprobs"):
        raise BadRequest("logprobs are not returned: the gateway records them in the session's trajectories")
    if body.get("functions") or body.get("function_call"):
        raise BadRequest("functions/function_call are not supported: send tools (OpenAI's current format)")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not -(2**63) <= seed < 2**63):
        raise BadRequest(f"seed: expects a whole number that fits in 64 bits, got {seed!r}")
    sampling = {key: body[key] for key in CLIENT_SAMPLING if body.get(key) is not None}
    return ChatRequest(
        messages=from_openai(body.get("messages")),
        tools=from_openai_tools(body.get("tools")),
        max_tokens=positive_tokens(body, "max_completion_tokens", "max_tokens"),
        sampling=sampling,
    )


def _tool_calls(completion: Completion) -> list[dict[str, Any]]:
    return [
        {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
         "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
        for call in completion.tool_calls
    ]  # fmt: skip


def _usage(completion: Completion) -> dict[str, int]:
    return {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
            "total_tokens": completion.prompt_tokens + completion.completion_tokens}  # fmt: skip


def response(completion: Completion, model: str) -> dict[str, Any]:
    """The `chat.completion` object of one sampled turn."""
    message: dict[str, Any] = {"role": "assistant", "content": completion.content or None}
    if completion.tool_calls:
        message["tool_calls"] = _tool_calls(completion)
    elif message["content"] is None:
        message["content"] = ""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": completion.finish_reason, "logprobs": None}],
        "usage": _usage(completion),
    }


def stream(completion: Completion, model: str, *, include_usage: bool = False) -> Iterator[str]:
    """The same turn as server-sent `chat.completion.chunk` events, ending with `[DONE]`."""
    base = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        return f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish_reason}]})}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    if completion.content:
        yield chunk({"content": completion.content})
    for index, call in enumerate(_tool_calls(completion)):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, completion.finish_reason)
    if include_usage:
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': _usage(completion)})}\n\n"
    yield "data: [DONE]\n\n"


def error(message: str, status: int) -> dict[str, Any]:
    """OpenAI's error body."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}
