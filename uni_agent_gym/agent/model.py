"""A chat model behind any OpenAI-compatible endpoint, through the `openai` SDK.

Transient failures (408, 409, 429 with its `retry-after`, 5xx, timeouts, dropped connections) are retried by
the SDK itself (`model.max_retries`, its exponential backoff with jitter: 0.5 s doubling up to 8 s); failures
no retry can fix stop the run at once with a message that says which: a refused
key (401/403), a wrong `base_url` / `model_name` (404, or nothing listening), or a server that is not an
OpenAI-compatible one (405 or 501, or an answer that is not a chat completion, such as an HTML page). The
key is never in a message. Each turn records its token usage and latency. `ping` asks once, without retries:
it says what the server answers now, at once where nothing answers.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import openai

from uni_agent_gym.config import ModelConfig
from uni_agent_gym.errors import UniAgentGymError


class ModelError(UniAgentGymError, RuntimeError):
    """The endpoint cannot serve this run; retrying will not help."""


@dataclass
class ModelTurn:
    """One completion: the assistant message to append, the action for the env, usage and latency."""

    message: dict[str, Any]
    action: Any  # a tool-call dict (native), or the text to parse
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0
    retries: int = 0
    finish_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def normalise_base_url(url: str) -> str:
    """`http://host:8000` and `http://host:8000/v1/` both become `http://host:8000/v1`."""
    url = url.rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


class ChatModel:
    """Completions with tools, natively or as text; see the module docstring for retries and errors."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.base_url = normalise_base_url(config.base_url)
        key = config.api_key.get_secret_value() if config.api_key else "EMPTY"
        self._client = openai.AsyncOpenAI(base_url=self.base_url, api_key=key, max_retries=config.max_retries, timeout=config.timeout)
        self.native_tools = config.native_tools != "off"

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, retries: int | None = None) -> ModelTurn:
        """The next assistant turn for `messages`, with `tools` offered natively when that is on (`retries`:
        in place of `model.max_retries`)."""
        client = self._client if retries is None else self._client.with_options(max_retries=retries)
        url = f"{self.base_url}/chat/completions"
        request: dict[str, Any] = {
            "model": self.config.model_name,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
        }
        if self.config.top_p is not None:
            request["top_p"] = self.config.top_p
        if self.config.extra_body:
            request["extra_body"] = self.config.extra_body
        started = time.monotonic()
        while True:
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    **request, **({"tools": tools} if self.native_tools and tools else {})
                )
                break
            except openai.BadRequestError as exc:
                if self.native_tools and self.config.native_tools == "auto" and "tool" in str(exc).lower():
                    self.native_tools = False  # this endpoint does not take `tools`: text tool calls from now on
                    continue
                raise ModelError(f"The endpoint rejected the request (400): {_reason(exc)}") from None
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise ModelError(
                    f"The endpoint {self.base_url} refused the API key ({exc.status_code}): check model.api_key"
                ) from None
            except openai.NotFoundError:
                raise ModelError(f"{url} answered 404: check model.base_url and model.model_name ({self.config.model_name!r})") from None
            except openai.APIConnectionError as exc:  # the SDK's retries are spent (timeouts are connection errors too)
                if not isinstance(exc, openai.APITimeoutError):
                    raise ModelError(f"Cannot connect to {self.base_url}: check model.base_url ({exc})") from None
                raise ModelError(f"The endpoint kept failing after {client.max_retries} retries: {_reason(exc)}") from None
            except openai.APIStatusError as exc:  # 408, 409, 429, 5xx after the SDK's retries, or a status no retry fixes
                if exc.status_code in (405, 501):  # no such method or endpoint: another kind of server
                    raise ModelError(f"{url} answered {_reason(exc)}: {NOT_OPENAI}") from None
                if exc.status_code in (408, 409, 429) or exc.status_code >= 500:
                    raise ModelError(f"The endpoint kept failing after {client.max_retries} retries: {_reason(exc)}") from None
                raise ModelError(f"{url} answered {_reason(exc)}") from None
        response = raw.parse()
        if not getattr(response, "choices", None):  # the SDK hands back the body as text where it is not JSON
            kind = raw.headers.get("content-type", "no content type").split(";")[0]
            raise ModelError(f"{url} answered {raw.status_code} with {kind}, not an OpenAI chat completion: {NOT_OPENAI}")
        return self._turn(response, time.monotonic() - started, _retries_of(raw))

    def _turn(self, response: Any, latency: float, retries: int) -> ModelTurn:
        choice = response.choices[0]
        message = choice.message
        usage = response.usage
        content = message.content or ""
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        calls = message.tool_calls or []
        if calls:
            assistant["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
                for call in calls
            ]
        if len(calls) == 1:
            action: Any = {"name": calls[0].function.name, "arguments": calls[0].function.arguments}
        elif calls:
            action = json.dumps({"tool_calls": assistant["tool_calls"]})  # the env explains that one call is allowed
        else:
            action = content
        return ModelTurn(
            message=assistant,
            action=action,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            latency=latency,
            retries=retries,
            finish_reason=choice.finish_reason,
        )

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What the tokens cost at the configured prices."""
        return (prompt_tokens * self.config.cost_per_million_input + completion_tokens * self.config.cost_per_million_output) / 1e6

    async def ping(self) -> tuple[str, float]:
        """One tiny request, asked once: (the reply, seconds). Raises `ModelError` like any turn."""
        turn = await self.complete([{"role": "user", "content": "Reply with the single word: pong"}], tools=[], retries=0)
        return turn.message["content"], turn.latency

    async def close(self) -> None:
        await self._client.close()


def _retries_of(raw: Any) -> int:
    """How many times the SDK retried before this answer: it numbers each attempt in a request header."""
    try:
        return int(raw.http_request.headers.get("x-stainless-retry-count", 0))
    except (AttributeError, ValueError):
        return 0


def _reason(exc: Exception) -> str:
    """The status and the server's message; a body that is not JSON (a web page) by its reason phrase only."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status and response is not None and "json" not in response.headers.get("content-type", ""):
        return f"{status} {response.reason_phrase}"
    text = getattr(exc, "message", None) or str(exc)
    return f"{status} {text}"[:300] if status else text[:300]


NOT_OPENAI = "check model.base_url (an OpenAI-compatible server, e.g. http://host:8000/v1)"
