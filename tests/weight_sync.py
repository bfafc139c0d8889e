"""A rollout server whose weights change mid-generation, behind verl's own fully-async client.

`SyncingServer` stands where verl's `FullyAsyncLLMServerClient` expects a vLLM replica: scripted assistant
turns scored by the tiny CPU model of `tests/token_server.py` (real tokens, real logprobs), each output
tagged with its weight version (`extra_fields["global_steps"]`) as verl's servers tag theirs. At `abort_at`
(trajectory, turn) it does what a weight sync does to a generation in flight: hands back the tokens so far
with `stop_reason="aborted"`, then moves to new weights and bumps the version. verl's client then resumes
the generation (partial rollout) or hands the aborted half to the agent loop.

verl's client sends every turn under a fresh request id, so the trajectory a request belongs to is read off
its prompt: a prompt extending what the server sampled for a trajectory is that trajectory's; one that
extends nothing starts a new trajectory, numbered in arrival order.

`in_process(target)` gives `target` the call shape of a Ray actor handle (`handle.method.remote(...)`, an
awaitable), so verl's client and verl's `GlobalRequestLoadBalancer` run as they are in this process: the
GPU server is the only stand-in, Ray's transport is a direct call.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any, Callable

import torch
from verl.workers.rollout.llm_server import FullyAsyncLLMServerClient
from verl.workers.rollout.replica import TokenOutput
from verl.workers.rollout.router import GlobalRequestLoadBalancer

from tests.token_server import TokenServer


class _RemoteMethod:
    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method

    def remote(self, *args: Any, **kwargs: Any) -> asyncio.Future:
        """The call's result as a future: awaited by some callers, left to finish by others (as Ray's are)."""
        future = asyncio.get_running_loop().create_future()
        try:
            result = self.method(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a Ray call raises where it is awaited
            future.set_exception(exc)
            return future
        if inspect.isawaitable(result):
            return asyncio.ensure_future(result)
        future.set_result(result)
        return future


class in_process:  # noqa: N801 - reads as the function it stands in for
    """`target` called as a Ray actor handle is: `handle.method.remote(...)`."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> _RemoteMethod:
        return _RemoteMethod(getattr(self._target, name))


def fully_async_client(config: Any, server: Any) -> FullyAsyncLLMServerClient:
    """verl's fully-async client over verl's load balancer with `server` as its one replica."""
    balancer = GlobalRequestLoadBalancer({"replica-0": in_process(server)})
    return FullyAsyncLLMServerClient(config, load_balancer_handle=in_process(balancer))


class SyncingServer(TokenServer):
    """`scripts[trajectory][turn]` is the text of each assistant turn (the stop token is added; past the
    last, the last again). `abort_at` = (trajectory, turn) is aborted half-way, once, and the weights
    change there; `state_dicts[version]` keeps each version's weights for the trainer-side checks."""

    def __init__(self, model_dir: Path, scripts: list[list[str]], abort_at: tuple[int, int] | None = (0, 0), seed: int = 0) -> None:
        super().__init__(model_dir, seed=seed)
        self.scripts, self.abort_at = scripts, abort_at
        self.version = 0
        self.state_dicts = {0: {name: value.clone() for name, value in self.model.state_dict().items()}}
        self.trajectories = 0
        self.sampled: dict[tuple[int, ...], tuple[int, int, list[int]]] = {}  # prompt + ids -> (trajectory, turn, ids left of it)

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any) -> TokenOutput:
        async with self._lock:
            trajectory, turn, ids = self._next(list(prompt_ids))
            ids = ids[: sampling_params["max_tokens"]]
            aborted, rest = (trajectory, turn) == self.abort_at and self.version == 0, []
            if aborted:  # once: the weights change there
                ids, rest = ids[: len(ids) // 2], ids[len(ids) // 2 :]
            logprobs = await asyncio.to_thread(self._score, list(prompt_ids), ids)
            version = self.version
            self.sampled[tuple(prompt_ids) + tuple(ids)] = (trajectory, turn, rest)
            if aborted:
                self._sync_weights()
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "ids": ids, "logprobs": logprobs, "version": version,
                           "trajectory": trajectory, "turn": turn, "aborted": aborted, "sampling_params": dict(sampling_params)})  # fmt: skip
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="aborted" if aborted else "completed",
                           extra_fields={"global_steps": version})  # fmt: skip

    def _next(self, prompt_ids: list[int]) -> tuple[int, int, list[int]]:
        """(trajectory, turn, the ids to sample) of a prompt: the rest of an aborted turn, or the next turn."""
        known = [key for key in self.sampled if len(key) <= len(prompt_ids) and tuple(prompt_ids[: len(key)]) == key]
        if not known:
            self.trajectories += 1
            return self.trajectories - 1, 0, self._turn_ids(self.trajectories - 1, 0)
        trajectory, turn, rest = self.sampled[max(known, key=len)]
        return (trajectory, turn, rest) if rest else (trajectory, turn + 1, self._turn_ids(trajectory, turn + 1))

    def _turn_ids(self, trajectory: int, turn: int) -> list[int]:
        script = self.scripts[trajectory % len(self.scripts)]
        return self.tokenizer.encode(script[min(turn, len(script) - 1)], add_special_tokens=False) + [self.stop_id]

    @torch.no_grad()
    def _sync_weights(self) -> None:
        """New weights, as a trainer step would make them: every parameter moved by seeded noise."""
        self.version += 1
        generator = torch.Generator().manual_seed(1000 + self.version)
        for parameter in self.model.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.05)
        self.state_dicts[self.version] = {name: value.clone() for name, value in self.model.state_dict().items()}
