"""One gateway session: its chains, its lock, and one completion at a time.

    request (history, tools) --plan--> extend / rollback / new chain, on a working copy of its record
      --> the engine samples from the record's exact ids (mask 1, the engine's logprobs)
      --> decode, parse tool calls --> commit --> the answer in the client's format

Requests of one session run one at a time; sessions are independent. Nothing is committed before the
engine has answered, so a failed request leaves the session as it was. A length budget ends a chain
with finish_reason "length". Logprobs are never invented: a chain the engine sent a turn without them
records None. Each sampled turn keeps the weight versions the engine tagged it with (verl's
`global_steps`); `aborted_last` says the latest request was one the engine aborted (a weight sync).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.gateway.backends import Backend, BackendError
from uni_agent_gym.gateway.chains import Chain, Plan, Turn, plan
from uni_agent_gym.gateway.messages import message_key, tool_call, tools_key
from uni_agent_gym.gateway.toolcalls import ParsedResponse, ToolCall, parse_turn
from uni_agent_gym.tokens.boundary import Boundary, content_ids, probe
from uni_agent_gym.tokens.rollout_cache import MaxTokenExceededError, RolloutCache, aborted, sampled_versions

CLIENT_SAMPLING = ("temperature", "top_p", "top_k", "seed", "stop", "presence_penalty", "frequency_penalty")


@dataclass(frozen=True)
class Limits:
    """Token budgets of every chain (verl's prompt/response lengths in training) and of one turn."""

    max_model_len: int = 32768
    max_prompt_length: int = 16384
    max_response_length: int = 16384
    max_tokens_per_turn: int = 4096


@dataclass(frozen=True)
class ChatRequest:
    """One request in the internal shape, whatever API it came through."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    max_tokens: int | None = None
    sampling: dict[str, Any] = field(default_factory=dict)  # the client's, among CLIENT_SAMPLING


@dataclass(frozen=True)
class Completion:
    """One sampled turn as the adapters answer it."""

    content: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str  # stop | tool_calls | length
    prompt_tokens: int
    completion_tokens: int
    chain: int | None  # the chain it was recorded in (None: nothing was sampled)


class Session:
    """A harness's conversation(s) with the engine, split into chains (see `chains`)."""

    def __init__(
        self,
        session_id: str,
        tokenizer: Any,
        backend: Backend,
        limits: Limits,
        *,
        sampling_params: dict[str, Any] | None = None,
        boundary: Boundary | None = None,
    ) -> None:
        """`sampling_params` (training: the trainer's) replace the client's sampling fields, so the
        logprobs are those of the distribution the trainer expects; `stop` from the client still applies."""
        self.session_id, self.tokenizer, self.backend, self.limits = session_id, tokenizer, backend, limits
        self.sampling_params = sampling_params
        self.boundary = boundary or probe(tokenizer)
        self.chains: list[Chain] = []
        self.last_chain: Chain | None = None  # the chain the latest sampled turn went into
        self.generate_seconds = 0.0
        self.requests = 0
        self.aborts = 0
        self.aborted_last = False  # the latest request ended in an engine abort (no completion came after it)
        self._lock = asyncio.Lock()

    async def complete(self, request: ChatRequest) -> Completion:
        """Sample the next turn of `request`'s conversation and record it in the right chain."""
        keys = [message_key(message) for message in request.messages]
        roles = [message["role"] for message in request.messages]
        tools = tools_key(request.tools)
        async with self._lock:
            self.requests += 1
            decision = plan(self.chains, keys, roles, tools)
            try:  # a new chain renders the whole history (in a worker thread); an extension only its new messages
                if decision.kind == "new":
                    work = await asyncio.to_thread(self._prepare, decision, request)
                else:
                    work = self._prepare(decision, request)
            except MaxTokenExceededError:
                return self._out_of_budget(decision)
            budget = min(self.limits.max_response_length - len(work.response_mask), self.limits.max_model_len - len(work.prompt_ids))
            if budget <= 0:
                return self._out_of_budget(decision)
            wanted = min(request.max_tokens or self.limits.max_tokens_per_turn, self.limits.max_tokens_per_turn)
            max_tokens = min(wanted, budget)
            prompt_tokens, start = len(work.prompt_ids), len(work.response_mask)
            ids, logprobs, versions = await self._sample(work.prompt_ids, self._sampling(request, max_tokens), max_tokens)
            work.append_model_tokens(ids, logprobs, versions)
            stopped = bool(ids) and ids[-1] in self.boundary.stop_ids
            parsed = self._read(ids, stopped, request.tools)
            finish = ("tool_calls" if parsed.tool_calls else "stop") if stopped or len(ids) < max_tokens else "length"
            chain = self._commit(decision, request, keys, tools, work, parsed, Turn(start, len(ids), finish), logprobs is not None)
            if finish == "length" and max_tokens == budget:
                chain.closed = "length"  # the chain's budget ran out, not the client's max_tokens
            return Completion(parsed.content, parsed.tool_calls, finish, prompt_tokens, len(ids), chain.index)

    def _prepare(self, decision: Plan, request: ChatRequest) -> RolloutCache:
        """The chain's record with this request's new messages, as a working copy (nothing committed)."""
        chain = decision.chain
        if decision.kind == "new":
            work = RolloutCache(
                self.tokenizer, max_model_len=self.limits.max_model_len, max_prompt_length=self.limits.max_prompt_length,
                max_response_length=self.limits.max_response_length, boundary=self.boundary,
            )  # fmt: skip
            work.prepare(request.messages, request.tools)
            return work
        work = chain.cache.copy()
        size = len(chain.keys)
        if decision.kind == "rollback":
            work.truncate(chain.turns[-1].start)
            work.append_context_turn(request.messages[size - 1])
        work.append_messages(request.messages[size:])
        return work

    async def _sample(
        self, prompt_ids: list[int], sampling_params: dict[str, Any], max_tokens: int
    ) -> tuple[list[int], list[float] | None, tuple[int | None, int | None]]:
        """(ids, logprobs, weight versions) the engine sampled; `BackendError` where it sent none."""
        started = time.monotonic()
        try:
            output = await self.backend.generate(self.session_id, prompt_ids=list(prompt_ids), sampling_params=sampling_params)
        except Exception as exc:  # noqa: BLE001 - whatever the engine raised, the request fails as the engine's fault
            raise BackendError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            self.generate_seconds += time.monotonic() - started
        self.aborted_last = aborted(output)
        if self.aborted_last:
            self.aborts += 1
            raise BackendError("the engine aborted the request (weights updating or shutting down); send it again")
        ids = list(output.token_ids)[:max_tokens]  # an engine that ignores max_tokens cannot overrun the budget
        if output.log_probs is None:
            return ids, None, sampled_versions(output)
        logprobs = list(output.log_probs)[: len(ids)]
        if len(logprobs) != len(ids):
            raise BackendError(f"the engine sent {len(output.log_probs)} logprobs for {len(ids)} tokens")
        return ids, logprobs, sampled_versions(output)

    def _sampling(self, request: ChatRequest, max_tokens: int) -> dict[str, Any]:
        """The client's sampling fields, asking for the logprobs the chains record (a verl-shaped engine sends
        them only when asked); in training, the trainer's fields instead (its `logprobs` is its choice)."""
        params = {key: value for key, value in request.sampling.items() if value is not None}
        if self.sampling_params is not None:
            params = {**{key: value for key, value in params.items() if key == "stop"}, **self.sampling_params}
        else:
            params["logprobs"] = True
        return {**params, "max_tokens": max_tokens}

    def _read(self, ids: list[int], stopped: bool, tools: list[dict[str, Any]] | None) -> ParsedResponse:
        """The sampled turn as text (special tokens kept: some tool-call formats are made of them; the stop token and the
        template's lead dropped)."""
        body = content_ids(self.boundary, ids)  # (the stop is its last token exactly when `stopped`)
        text = self.tokenizer.decode(body, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return parse_turn(text, tools, self.tokenizer)

    def _commit(self, decision: Plan, request: ChatRequest, keys: list[tuple], tools: str, work: RolloutCache,
                parsed: ParsedResponse, turn: Turn, has_logprobs: bool) -> Chain:  # fmt: skip
        assistant: dict[str, Any] = {"role": "assistant", "content": parsed.content}
        if parsed.tool_calls:
            assistant["tool_calls"] = [tool_call(call.name, call.arguments) for call in parsed.tool_calls]
        chain = decision.chain
        if chain is None:
            chain = Chain(len(self.chains), decision.reason or "start", tools, work)
            self.chains.append(chain)
            kept = 0
        else:
            kept = len(chain.keys) - (1 if decision.kind == "rollback" else 0)
            if decision.kind == "rollback":
                chain.turns.pop()
                chain.rollbacks += 1
        chain.cache = work
        chain.keys = [*chain.keys[:kept], *keys[kept:], message_key(assistant)]
        chain.messages = [*chain.messages[:kept], *request.messages[kept:], assistant]
        chain.turns.append(turn)
        chain.logprobs_complete = chain.logprobs_complete and has_logprobs
        self.last_chain = chain
        return chain

    def _out_of_budget(self, decision: Plan) -> Completion:
        """A length budget is spent before sampling: the chain ends there (the new messages are not kept)."""
        if decision.chain is not None:
            decision.chain.closed = "length"
        return Completion("", (), "length", len(decision.chain.cache.prompt_ids) if decision.chain else 0, 0,
                          decision.chain.index if decision.chain else None)  # fmt: skip

    def records(self) -> list[dict[str, Any]]:
        """Every chain as JSON data (`Chain.record`)."""
        return [chain.record(self.session_id) for chain in self.chains]

    def summary(self) -> dict[str, Any]:
        """How the session split: chains, why each started, rollbacks, the chain that went last."""
        return {
            "chains": len(self.chains),
            "started_by": [chain.started_by for chain in self.chains],
            "rollbacks": sum(chain.rollbacks for chain in self.chains),
            "last_chain": self.last_chain.index if self.last_chain else None,
            "requests": self.requests,
            "aborts": self.aborts,
        }
