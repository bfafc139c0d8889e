"""Chains: the token-exact trajectories one session splits into, and how a request finds its chain.

A chain is a `RolloutCache` plus the canonical keys of the messages it holds (ending on a sampled turn).
Each request's history is compared with every chain of the session, and one of three things happens:

    EXTEND    history == chain + new user/tool messages    -> append only the new messages (mask 0), sample
    ROLLBACK  history == chain with its last assistant turn rewritten, + new user/tool messages
                                                           -> take that sampled turn back, put the client's
                                                              version in as context (mask 0), sample
    NEW       anything else                                -> a new chain from the request's history

A NEW chain says why (`started_by`):

    start              the session's first request
    branch             the history is a chain's up to one of its model turns (a retry, or a second
                       request sent before the first one's answer came back)
    history_changed    a message the chain recorded was changed or dropped (compaction, an edited
                       observation, a rewrite canonicalisation does not absorb)
    new_conversation   nothing in common with any chain (a sub-agent, another system prompt)
    tools_changed      no chain was sampled with this tool list (tools are rendered into the prompt)
    not_appendable     the new messages hold a turn a chain cannot append (an assistant turn the
                       engine never sampled, a system message)
    after_length       the chain it extends was ended by a length budget
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.gateway.messages import APPENDABLE
from uni_agent_gym.tokens.rollout_cache import RolloutCache


@dataclass
class Turn:
    """One sampled turn of a chain: where in the response it starts (a rollback returns there) and how it ended."""

    start: int
    length: int
    finish_reason: str


@dataclass
class Chain:
    """One trajectory of a session, as the engine saw it."""

    index: int
    started_by: str
    tools_key: str
    cache: RolloutCache
    keys: list[tuple] = field(default_factory=list)  # canonical keys of the messages the record holds
    messages: list[dict[str, Any]] = field(default_factory=list)  # those messages, for the record
    turns: list[Turn] = field(default_factory=list)
    closed: str | None = None  # "length" once a budget ended the chain
    rollbacks: int = 0
    logprobs_complete: bool = True  # False once the engine sent a turn without logprobs (none are invented)

    def record(self, session_id: str) -> dict[str, Any]:
        """The chain as JSON data: its tokens, mask and logprobs, and the messages they hold."""
        cache = self.cache
        return {
            "session_id": session_id,
            "chain": self.index,
            "started_by": self.started_by,
            "finish_reason": self.closed or (self.turns[-1].finish_reason if self.turns else None),
            "num_turns": len(self.turns),
            "rollbacks": self.rollbacks,
            "prompt_ids": list(cache.initial_prompt_ids),
            "response_ids": cache.response_ids,
            "response_mask": list(cache.response_mask),
            "response_logprobs": list(cache.response_logprobs) if self.logprobs_complete else None,
            **cache.global_steps(),
            "messages": self.messages,
            "tools": cache.tools,
        }


@dataclass(frozen=True)
class Plan:
    """What a request does to the session: `kind` is extend, rollback or new; `reason` says why a new chain."""

    kind: str
    chain: Chain | None = None
    reason: str | None = None


def _common(a: list[tuple], b: list[tuple]) -> int:
    size = min(len(a), len(b))
    for index in range(size):
        if a[index] != b[index]:
            return index
    return size


def plan(chains: list[Chain], keys: list[tuple], roles: list[str], tools_key: str) -> Plan:
    """Where a request with these canonical `keys` (and `roles`) and tools goes; see the module docstring."""
    if not chains:
        return Plan("new", reason="start")
    same_tools = [chain for chain in chains if chain.tools_key == tools_key]
    if not same_tools:
        return Plan("new", reason="tools_changed")
    extendable, closed = None, False
    for chain in same_tools:
        size = len(chain.keys)
        if size < len(keys) and keys[:size] == chain.keys and all(role in APPENDABLE for role in roles[size:]):
            if chain.closed:
                closed = True
            elif extendable is None or size > len(extendable.keys):
                extendable = chain
    if extendable is not None:
        return Plan("extend", extendable)
    for chain in same_tools:
        size = len(chain.keys)
        if (
            not chain.closed
            and chain.turns
            and len(keys) > size
            and roles[size - 1] == "assistant"
            and keys[size - 1] != chain.keys[-1]
            and keys[: size - 1] == chain.keys[:-1]
            and all(role in APPENDABLE for role in roles[size:])
        ):
            return Plan("rollback", chain)
    if closed:
        return Plan("new", reason="after_length")
    best = max(same_tools, key=lambda chain: _common(keys, chain.keys))
    common = _common(keys, best.keys)
    if common == 0:
        return Plan("new", reason="new_conversation")
    if common == len(best.keys):  # all of the chain, then something it cannot append
        return Plan("new", reason="not_appendable")
    if common == len(keys) and best.messages[common]["role"] == "assistant":
        return Plan("new", reason="branch")  # the history stops where one of the chain's model turns began
    return Plan("new", reason="history_changed")
