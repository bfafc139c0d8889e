"""Token-in/token-out engines the gateway samples from.

A backend is anything with verl's server-manager call shape:

    output = await backend.generate(request_id, prompt_ids=[...], sampling_params={"max_tokens": ..., ...})
    output.token_ids, output.log_probs (None: the engine gave none), output.stop_reason

Inside training that is verl's own server manager, as it is (`request_id` = the session id, so verl's
load balancer keeps a session on one server and its prefix cache hits). For evaluation and data
collection, `HttpTokenBackend` calls vLLM or SGLang servers through their token-id APIs, one server per
session (a stable hash of the session id), for the same reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import aiohttp

from uni_agent_gym.errors import UniAgentGymError


class BackendError(UniAgentGymError, RuntimeError):
    """The engine did not answer with tokens; the message says which server and what it said."""


class Backend(Protocol):
    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class Sampled:
    """What an engine sampled (verl's `TokenOutput` fields)."""

    token_ids: list[int]
    log_probs: list[float] | None
    stop_reason: str | None = None


_SHARED = ("temperature", "top_p", "top_k", "seed", "stop", "presence_penalty", "frequency_penalty", "repetition_penalty")


class HttpTokenBackend:
    """vLLM (`/v1/completions` with token ids in and out) or SGLang (`/generate`) servers.

    aiohttp, not httpx: httpx's async client cost ~2.5 ms more per request than the gateway's own work
    (bench/gateway_overhead.py at turn 50: 4.5 ms added with httpx, 1.9 ms with aiohttp). No cap on
    connections: an engine batches every request it is sent at once (httpx's default capped them at 100)."""

    def __init__(self, urls: list[str], api: Literal["vllm", "sglang"] = "vllm", *, model: str | None = None, timeout: float = 600.0) -> None:
        if not urls:
            raise ValueError("HttpTokenBackend needs at least one server URL")
        self.urls = [url.rstrip("/").removesuffix("/v1") for url in urls]
        self.api, self.model, self.timeout = api, model, timeout
        self._client: aiohttp.ClientSession | None = None  # made in the event loop that uses it
        self._client_loop: asyncio.AbstractEventLoop | None = None
        # request id -> (the last prompt sent, its JSON): a chain only appends, so only its new ids are encoded
        self._encoded: OrderedDict[str, tuple[list[int], str]] = OrderedDict()

    def url_for(self, request_id: str) -> str:
        """The server of a session: the same one for every request of it."""
        digest = hashlib.sha256(request_id.encode()).digest()
        return self.urls[int.from_bytes(digest[:8], "big") % len(self.urls)]

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any]) -> Sampled:
        url = self.url_for(request_id)
        shared = {key: sampling_params[key] for key in _SHARED if sampling_params.get(key) is not None}
        ids = self._ids_json(request_id, list(prompt_ids))
        if self.api == "sglang":
            body = {"return_logprob": True,
                    "sampling_params": {**shared, "max_new_tokens": sampling_params["max_tokens"], "skip_special_tokens": False}}  # fmt: skip
            return _from_sglang(await self._post(f"{url}/generate", body, "input_ids", ids), url)
        body = {"model": self.model or await self._model(url), "max_tokens": sampling_params["max_tokens"],
                "logprobs": 0, "return_tokens_as_token_ids": True, "skip_special_tokens": False, **shared}  # fmt: skip
        return _from_vllm(await self._post(f"{url}/v1/completions", body, "prompt", ids), url)

    def _ids_json(self, request_id: str, ids: list[int]) -> str:
        """`ids` as JSON, encoding only what was appended since this request id's last prompt."""
        last = self._encoded.pop(request_id, None)
        if last is not None and len(last[0]) <= len(ids) and ids[: len(last[0])] == last[0]:
            tail = ids[len(last[0]) :]
            text = last[1] if not tail else json.dumps(tail) if not last[0] else f"{last[1][:-1]}, {json.dumps(tail)[1:]}"
        else:
            text = json.dumps(ids)
        self._encoded[request_id] = (ids, text)
        while len(self._encoded) > 1024:  # the sessions served last
            self._encoded.popitem(last=False)
        return text

    def _session(self) -> aiohttp.ClientSession:
        """The HTTP client of the running event loop (a client is bound to the loop it was made in)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.closed or self._client_loop is not loop:
            self._client = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=self.timeout))
            self._client_loop = loop
        return self._client

    async def _request(self, method: str, url: str, content: bytes | None = None) -> Any:
        """The JSON an engine answered; `BackendError` names the server and what went wrong."""
        try:
            headers = {"content-type": "application/json"} if content is not None else None
            async with self._session().request(method, url, data=content, headers=headers) as response:
                raw = await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise BackendError(f"{url}: {type(exc).__name__}: {exc}") from None
        if response.status != 200:
            raise BackendError(f"{url} answered {response.status}: {raw[:500].decode(errors='replace')}")
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BackendError(f"{url} answered with something that is not JSON: {raw[:200]!r}") from None

    async def _model(self, url: str) -> str:
        data = await self._request("GET", f"{url}/v1/models")
        try:
            self.model = data["data"][0]["id"]
        except (KeyError, IndexError, TypeError) as exc:
            raise BackendError(f"{url}/v1/models names no model ({type(exc).__name__}: {exc}); pass the model name") from None
        return self.model

    async def _post(self, url: str, body: dict[str, Any], ids_key: str, ids_json: str) -> dict[str, Any]:
        return await self._request("POST", url, f'{json.dumps(body)[:-1]}, "{ids_key}": {ids_json}}}'.encode())

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def _from_vllm(data: dict[str, Any], url: str) -> Sampled:
    try:
        choice = data["choices"][0]
        logprobs = choice["logprobs"]
        ids = [int(token.removeprefix("token_id:")) for token in logprobs["tokens"]]
        values = [float(value) for value in logprobs["token_logprobs"]]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise BackendError(f"{url} sent no token ids with logprobs ({type(exc).__name__}: {exc}); is it vLLM?") from None
    return Sampled(ids, values, "aborted" if choice.get("finish_reason") == "abort" else "completed")


def _from_sglang(data: dict[str, Any], url: str) -> Sampled:
    meta = data.get("meta_info") or {}
    pairs = meta.get("output_token_logprobs")
    if pairs:
        ids, values = [int(pair[1]) for pair in pairs], [float(pair[0]) for pair in pairs]
    elif "output_ids" in data:
        ids, values = [int(token) for token in data["output_ids"]], None
    else:
        raise BackendError(f"{url} sent no output token ids; is it SGLang?")
    finish = (meta.get("finish_reason") or {}).get("type")
    return Sampled(ids, values, "aborted" if finish == "abort" else "completed")
