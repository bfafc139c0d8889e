"""The token record of one multi-turn trajectory, append-only, as verl trains on it.

    prompt_ids:  [ initial prompt ........ | sampled turn 1 | glue + tool msg + gen prompt | sampled turn 2 | ...
    mask:                                  | 1 1 1 1 1 1 1  | 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 | 1 1 1 1 1 1    | ...
    logprobs:                              | model's        | 0.0 ...                       | model's        | ...

Invariants, checked after every append (3 on demand: it renders the template):
1. len(response_mask) == len(response_logprobs) == len(prompt_ids) - len(initial_prompt_ids);
2. the mask is 1 exactly on the tokens the model sampled, 0 on tool/user messages and template glue;
3. the ids are what the model was conditioned on at every turn (never re-rendered); for prefix-stable
   templates they equal the template's rendering of the whole conversation;
4. totals stay within max_model_len / max_prompt_length / max_response_length, else a
   `MaxTokenExceededError` naming the limit (and nothing is appended).

The gateway also takes a turn back (`truncate` to where the model began it) and records a client's
rewrite of an assistant turn as context (`append_context_turn`: mask 0, never 1 on unsampled tokens);
`copy()` gives a working copy to try appends on.

Each sampled turn also records the weight versions it was sampled under (verl's `global_steps` tags, see
`sampled_versions`): `global_steps()` gives the first turn's first and the last turn's last as the
`min_global_steps` / `max_global_steps` verl's fully-async and v1 trainers compute staleness from.
"""

from __future__ import annotations

import copy
from typing import Any

from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.tokens.boundary import PROBE_USER, Boundary, BoundaryError, delta_ids, probe, render

APPENDABLE_ROLES = ("user", "tool")
UNKNOWN_VERSION = 0  # a trajectory no output tagged: counted as sampled by the initial weights


def aborted(output: Any) -> bool:
    """Whether a generate output is one the server aborted (verl's `stop_reason` after a weight sync cut it)."""
    return getattr(output, "stop_reason", None) in ("aborted", "abort")


def sampled_versions(output: Any) -> tuple[int | None, int | None]:
    """(first, last) weight version of one generate output: verl's client tags `min_global_steps` /
    `max_global_steps` (a generation resumed after a weight sync spans two), a server `global_steps`;
    (None, None) where nothing is tagged (an HTTP engine, a test server)."""
    extra = getattr(output, "extra_fields", None) or {}
    first = extra.get("min_global_steps", extra.get("global_steps"))
    last = extra.get("max_global_steps", extra.get("global_steps"))
    return (None if first is None else int(first)), (None if last is None else int(last))


class MaxTokenExceededError(UniAgentGymError, ValueError):
    """An append would pass a token limit; `limit` says which (max_model_len, max_prompt_length, max_response_length)."""

    def __init__(self, limit: str, needed: int, allowed: int) -> None:
        super().__init__(f"{limit} exceeded: {needed} tokens needed, {allowed} allowed")
        self.limit, self.needed, self.allowed = limit, needed, allowed


class RolloutCache:
    """Token ids, response mask and logprobs of one trajectory; see the module docstring."""

    def __init__(
        self,
        tokenizer: Any,
        *,
        max_model_len: int,
        max_prompt_length: int,
        max_response_length: int,
        boundary: Boundary | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.boundary = boundary or probe(tokenizer)
        self.max_model_len, self.max_prompt_length, self.max_response_length = max_model_len, max_prompt_length, max_response_length
        self.tools: list[dict[str, Any]] | None = None
        self.initial_prompt_ids: list[int] = []
        self.prompt_ids: list[int] = []
        self.response_mask: list[int] = []
        self.response_logprobs: list[float] = []
        self.turn_versions: list[tuple[int, int | None, int | None]] = []  # (response offset, first, last) per sampled turn
        self._awaiting = "prepare"  # what may come next: "model" (a turn starts) or "messages" (a turn ended)

    @property
    def response_ids(self) -> list[int]:
        return self.prompt_ids[len(self.initial_prompt_ids) :]

    def prepare(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
        """Render the initial prompt (with the generation prompt) and start the record; returns the ids."""
        ids = render(self.tokenizer, messages, tools=tools, generation_prompt=True)
        if len(ids) > self.max_prompt_length:
            raise MaxTokenExceededError("max_prompt_length", len(ids), self.max_prompt_length)
        if len(ids) > self.max_model_len:
            raise MaxTokenExceededError("max_model_len", len(ids), self.max_model_len)
        self.tools = tools
        self.initial_prompt_ids, self.prompt_ids = list(ids), list(ids)
        self.response_mask, self.response_logprobs = [], []
        self.turn_versions = []
        self._awaiting = "model"
        return list(ids)

    def append_model_tokens(
        self, ids: list[int], logprobs: list[float] | None = None, versions: tuple[int | None, int | None] = (None, None)
    ) -> None:
        """Tokens the model sampled (mask 1), with their logprobs (0.0 each when the server gives none)
        and the (first, last) weight version they were sampled under (`sampled_versions`)."""
        if logprobs is not None and len(logprobs) != len(ids):
            raise ValueError(f"Expects one logprob per token, got {len(logprobs)} for {len(ids)} tokens")
        start = len(self.response_mask)
        self._append(list(ids), 1, list(logprobs) if logprobs is not None else [0.0] * len(ids))
        self.turn_versions.append((start, *versions))
        self._awaiting = "messages"

    def global_steps(self) -> dict[str, int]:
        """verl's `min_global_steps` / `max_global_steps` of the record: the weight version of the first
        sampled token and of the last, over the turns that carry one; `UNKNOWN_VERSION` where none does."""
        tagged = [(first, last) for _, first, last in self.turn_versions if first is not None and last is not None]
        first, last = (tagged[0][0], tagged[-1][1]) if tagged else (UNKNOWN_VERSION, UNKNOWN_VERSION)
        return {"min_global_steps": first, "max_global_steps": last}

    def append_messages(self, messages: list[dict[str, Any]]) -> list[int]:
        """The glue after the last sampled turn plus the rendered `messages` and the next generation
        prompt (mask 0, logprob 0.0); only `user` and `tool` messages. Returns the appended ids."""
        for message in messages:
            if message.get("role") not in APPENDABLE_ROLES:
                raise ValueError(f"Only user and tool messages can be appended, got role {message.get('role')!r}")
        if not self.initial_prompt_ids:
            raise ValueError("append_messages() needs prepare() first")
        if self._awaiting != "messages":
            raise ValueError("append_messages() follows a model turn: call append_model_tokens() first")
        ended = self.prompt_ids[-1] in self.boundary.stop_ids
        glue = list(self.boundary.glue) if ended else list(self.boundary.turn_end)  # a cut-off turn still gets its end
        delta = delta_ids(self.tokenizer, self.boundary, messages, self.tools)
        if self.boundary.opens_next and ended and delta[:1] == self.prompt_ids[-1:]:
            delta = delta[1:]  # the model sampled this header as its stop (GLM's <|observation|>)
        ids = glue + delta
        self._append(ids, 0, [0.0] * len(ids))
        self._awaiting = "model"
        return ids

    def append_context_turn(self, message: dict[str, Any]) -> list[int]:
        """An assistant turn the model did not sample (a client's rewrite of one), where a model turn
        would start: the template's rendering of its content, mask 0, logprob 0.0; the next
        `append_messages()` ends it. Returns the appended ids.

            ... gen prompt | rewritten content (template's tokens) | STOP GLUE + next messages ...
                           | 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0  | 0 0 0 0 ... (append_messages)
        """
        if message.get("role") != "assistant":
            raise ValueError(f"A context turn is an assistant message, got role {message.get('role')!r}")
        if self._awaiting != "model":
            raise ValueError("append_context_turn() goes where a model turn would start (after prepare(), append_messages() or truncate())")
        prompt = render(self.tokenizer, [PROBE_USER], tools=self.tools, generation_prompt=True)
        turn = render(self.tokenizer, [PROBE_USER, message], tools=self.tools, generation_prompt=False)
        span = turn[len(prompt) :]
        if turn[: len(prompt)] != prompt or tuple(span[len(span) - len(self.boundary.turn_end) :]) != self.boundary.turn_end:
            raise BoundaryError("the template does not render an assistant turn after the generation prompt as probed")
        ids = span[: len(span) - len(self.boundary.turn_end)]
        self._append(ids, 0, [0.0] * len(ids))
        self._awaiting = "messages"
        return ids

    def truncate(self, response_length: int) -> None:
        """Roll the record back to `response_length` response tokens, a point where a model turn
        started (the gateway takes back a turn the client rewrote); the record then awaits that turn."""
        if not self.initial_prompt_ids:
            raise ValueError("truncate() needs prepare() first")
        if not 0 <= response_length <= len(self.response_mask):
            raise ValueError(f"Expects a response length between 0 and {len(self.response_mask)}, got {response_length}")
        del self.prompt_ids[len(self.initial_prompt_ids) + response_length :]
        del self.response_mask[response_length:], self.response_logprobs[response_length:]
        self.turn_versions = [turn for turn in self.turn_versions if turn[0] < response_length]
        self._awaiting = "model"
        self.check()

    def copy(self) -> "RolloutCache":
        """An independent record with the same contents (tokenizer and boundary shared), to try appends on."""
        twin = copy.copy(self)
        twin.initial_prompt_ids, twin.prompt_ids = list(self.initial_prompt_ids), list(self.prompt_ids)
        twin.response_mask, twin.response_logprobs = list(self.response_mask), list(self.response_logprobs)
        twin.turn_versions = list(self.turn_versions)
        return twin

    def _append(self, ids: list[int], mask: int, logprobs: list[float]) -> None:
        if not self.initial_prompt_ids:
            raise ValueError("append needs prepare() first")
        total = len(self.prompt_ids) + len(ids)
        if total > self.max_model_len:
            raise MaxTokenExceededError("max_model_len", total, self.max_model_len)
        response = total - len(self.initial_prompt_ids)
        if response > self.max_response_length:
            raise MaxTokenExceededError("max_response_length", response, self.max_response_length)
        self.prompt_ids += ids
        self.response_mask += [mask] * len(ids)
        self.response_logprobs += logprobs
        self.check()

    def check(self) -> None:
        """Invariants 1 and 4 (cheap: run after every append)."""
        response = len(self.prompt_ids) - len(self.initial_prompt_ids)
        if not len(self.response_mask) == len(self.response_logprobs) == response:
            raise AssertionError(
                f"rollout cache corrupted: mask {len(self.response_mask)}, logprobs {len(self.response_logprobs)}, response {response}"
            )
        if len(self.prompt_ids) > self.max_model_len or response > self.max_response_length:
            raise AssertionError("rollout cache over its limits")

    def rendered_conversation_ids(self, messages: list[dict[str, Any]]) -> list[int]:
        """Invariant 3 on demand: the template's rendering of `messages` (with the next generation
        prompt), to compare with `prompt_ids` on prefix-stable templates."""
        return render(self.tokenizer, messages, tools=self.tools, generation_prompt=True)
