"""The Anthropic messages wire format: a request body in, a `Completion` out (JSON or SSE events).

    system (text or blocks)          -> a system message
    user: text blocks, tool_result   -> user messages and tool messages, in their order
    assistant: text, tool_use        -> an assistant message with tool calls
    tools: name, input_schema        -> OpenAI function tools (what chat templates render)

Refused with a 400 that says why: a forced `tool_choice`, extended `thinking`, non-text blocks
(images, documents, earlier thinking blocks).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from uni_agent_gym.gateway.messages import BadRequest, text_of, tool_call
from uni_agent_gym.gateway.openai_api import positive_tokens
from uni_agent_gym.gateway.session import ChatRequest, Completion

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise BadRequest(f"{where}: expects content as a string or a list of blocks")
    return content


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    if body.get("system"):
        result.append({"role": "system", "content": text_of(_blocks(body["system"], "system"), "system")})
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: expects a non-empty list of messages")
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            raise BadRequest(f"{where}: expects role user or assistant, got {role!r}")
        blocks = _blocks(message.get("content"), where)
        if role == "assistant":
            texts, calls = [], []
            for block in blocks:
                if block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_use":
                    calls.append(tool_call(str(block.get("name")), block.get("input") or {}))
                else:
                    raise BadRequest(f"{where}: assistant blocks of type {block.get('type')!r} are not supported (text, tool_use)")
            result.append({"role": "assistant", "content": "".join(texts), **({"tool_calls": calls} if calls else {})})
            continue
        texts = []
        for block in blocks:
            if block.get("type") == "tool_result":
                if texts:
                    result.append({"role": "user", "content": "".join(texts)})
                    texts = []
                content = block.get("content")
                result.append({"role": "tool", "content": text_of(_blocks(content, where) if content is not None else None, where)})
            elif block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            else:
                raise BadRequest(f"{where}: user blocks of type {block.get('type')!r} are not supported (text, tool_result)")
        if texts:
            result.append({"role": "user", "content": "".join(texts)})
    return result


def _tools(tools: Any) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    if not isinstance(tools, list) or not all(isinstance(tool, dict) and isinstance(tool.get("name"), str) for tool in tools):
        raise BadRequest("tools: expects a list of {'name': ..., 'input_schema': {...}} tools")
    return [
        {"type": "function", "function": {"name": tool["name"], "description": tool.get("description", ""),
                                          "parameters": tool.get("input_schema") or {"type": "object", "properties": {}}}}
        for tool in tools
    ]  # fmt: skip


def parse_request(body: Any) -> ChatRequest:
    """A messages body as a `ChatRequest`; `BadRequest` for what the gateway does not serve."""
    if not isinstance(body, dict):
        raise BadRequest("expects a JSON object body")
    choice = body.get("tool_choice")
    if choice is not None and (not isinstance(choice, dict) or choice.get("type") != "auto"):
        raise BadRequest(f"tool_choice {choice!r} is not supported: forcing a tool call changes what the model samples (only auto)")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        raise BadRequest("thinking is not supported: the model thinks as its chat template lets it, in the text")
    sampling = {key: body[key] for key in ("temperature", "top_p", "top_k") if body.get(key) is not None}
    if body.get("stop_sequences"):
        sampling["stop"] = list(body["stop_sequences"])
    return ChatRequest(_messages(body), _tools(body.get("tools")), positive_tokens(body, "max_tokens"), sampling)


def _content(completion: Completion) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": completion.content}] if completion.content else []
    blocks += [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": call.name, "input": call.arguments}
               for call in completion.tool_calls]  # fmt: skip
    return blocks


def response(completion: Completion, model: str, message_id: str | None = None) -> dict[str, Any]:
    """The `message` object of one sampled turn."""
    return {
        "id": message_id or f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(completion),
        "stop_reason": STOP_REASONS[completion.finish_reason],
        "stop_sequence": None,
        "usage": {"input_tokens": completion.prompt_tokens, "output_tokens": completion.completion_tokens},
    }


def stream(completion: Completion, model: str) -> Iterator[str]:
    """The same turn as Anthropic's server-sent events."""

    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    whole = response(completion, model)
    yield event("message_start", {"message": {**whole, "content": [], "stop_reason": None,
                                              "usage": {**whole["usage"], "output_tokens": 0}}})  # fmt: skip
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            yield event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            yield event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            yield event("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
            yield event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        yield event("content_block_stop", {"index": index})
    yield event("message_delta", {"delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                                  "usage": {"output_tokens": completion.completion_tokens}})  # fmt: skip
    yield event("message_stop", {})


def error(message: str, status: int) -> dict[str, Any]:
    """Anthropic's error body."""
    return {"type": "error", "error": {"type": "invalid_request_error" if status < 500 else "api_error", "message": message}}
