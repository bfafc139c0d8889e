"""`GatewayAgentLoop`: verl trains a black-box harness (mini-swe-agent, SWE-agent, ...) through the gateway.

verl instantiates it per sample from the agent-loop YAML, like `UniAgentLoop`
(`configs/gateway_agent_loop.yaml`):

    - name: gateway_agent
      _target_: uni_agent_gym.verl.gateway_loop.GatewayAgentLoop
      settings: settings.json
      deployment: deployment/docker.yaml
      harness: {command: "mini ...", where: host, timeout: 1800}
      outputs: auto                 # all chains (verl's v1 trainer) | last | auto

Per sample: open the gym workspace (any deployment) -> open a gateway session whose engine is verl's
server manager (sticky by session id) with the trainer's sampling parameters and lengths -> run the
harness pointed at the session -> grade the sandbox with the gym's reward -> one `AgentLoopOutput` per
chain the session split into (`outputs: all`, a list, for verl's v1 trainer, which takes a list per
sample and gives every chain the final reward) or the chain that ended the episode (`last`). `auto` is
`all` under `trainer.use_v1` without `async_training` (the fully-async rollouter takes one output).

Exit reasons: finished (the harness exited 0), max_tokens (its last chain ran out of a length budget),
harness_error (it exited non-zero), aborted (the engine aborted the session's last request: a weight
sync with `async_training.partial_rollout` off, whatever the harness did next), timeout (the harness or
the trajectory ran out of time), env_error (the sandbox failed). All but finished and max_tokens are
fully masked when `rollout.mask_abnormal_exit_traj` is on. `extra_fields["gateway"]` says how many chains
the session split into and why each started; each output's `min_global_steps` / `max_global_steps` are
its chain's weight versions.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any, Literal

from pydantic import Field
from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput

from uni_agent_gym.advantages.survivor_share import SURVIVORS
from uni_agent_gym.config import _Strict, validate
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.gateway.harness import HarnessConfig, HarnessResult, run_harness
from uni_agent_gym.gateway.server import Gateway, RunningServer
from uni_agent_gym.gateway.session import Limits, Session
from uni_agent_gym.named_locks import named_lock
from uni_agent_gym.rewards.swebench import infrastructure_failed
from uni_agent_gym.verl.agent_loop import UniAgentLoop, _plain, instance_from_sample, placeholder_response, reward_summary, task_survivors
from uni_agent_gym.verl.records import bounded_report, output_record, write_record
from uni_agent_gym.tokens.boundary import probe, render
from uni_agent_gym.tokens.rollout_cache import UNKNOWN_VERSION

logger = logging.getLogger(__name__)

ABNORMAL_EXITS = ("env_error", "aborted", "timeout", "harness_error")
_servers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Gateway, RunningServer]]" = weakref.WeakKeyDictionary()


class GatewayLoopConfig(_Strict):
    """The gateway side of a `GatewayAgentLoop` entry (the gym's own settings come from `settings`)."""

    harness: HarnessConfig = Field(description="The harness each sample runs.")
    outputs: Literal["auto", "all", "last"] = Field("auto", description="Every chain as a list, or the one that ended the episode.")
    host: str = Field("127.0.0.1", description="Address the worker's gateway listens on.")
    sandbox_host: str | None = Field(None, description="Address a harness in the sandbox reaches the gateway at (host when null).")
    model_name: str = Field("policy", description="Model name the gateway serves.")


async def worker_gateway(tokenizer: Any, host: str, model_name: str) -> tuple[Gateway, RunningServer]:
    """The gateway of this event loop (one verl worker) and its server: started on first use, shared by its samples."""
    loop = asyncio.get_running_loop()
    async with named_lock("worker gateway"):
        if loop not in _servers:
            gateway = Gateway(tokenizer, model_name=model_name, auto_open=False)
            _servers[loop] = (gateway, await RunningServer(gateway.app, host=host).start())
    return _servers[loop]


async def stop_worker_gateway() -> None:
    """Stop this event loop's gateway, if it has one (tests; a worker's ends with its process)."""
    _, server = _servers.pop(asyncio.get_running_loop(), (None, None))
    if server is not None:
        await server.stop()


class GatewayAgentLoop(UniAgentLoop):
    """One harness episode per `run()`, as the token-exact chains of its gateway session.

    The gym side (settings, deployment, overrides, the env and its reward, concurrency) is `UniAgentLoop`'s;
    the model loop is the harness's own."""

    def __init__(self, *args: Any, harness: Any = None, outputs: str = "auto", host: str = "127.0.0.1",
                 sandbox_host: str | None = None, model_name: str = "policy", **kwargs: Any) -> None:  # fmt: skip
        entry = {"harness": _plain(harness), "outputs": outputs, "host": host, "sandbox_host": sandbox_host, "model_name": model_name}
        self.loop_config = validate(GatewayLoopConfig, entry, "the GatewayAgentLoop entry of the agent-loop YAML")
        super().__init__(*args, **kwargs)

    def all_outputs(self) -> bool:
        """Whether `run()` returns every chain (a list) or only the last."""
        if self.loop_config.outputs != "auto":
            return self.loop_config.outputs == "all"
        return bool(self.config.trainer.get("use_v1", False)) and "async_training" not in self.config

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput | list[AgentLoopOutput]:
        """The sample's episode (verl's dataset fields in `kwargs`); `self.episode` keeps its state."""
        async with self._semaphore():
            started = time.monotonic()
            episode = self.episode = _Episode(self, dict(sampling_params), kwargs)
            try:
                await asyncio.wait_for(episode.play(), timeout=self.gym_config.rollout.trajectory_timeout)
            except asyncio.TimeoutError:
                episode.exit_reason = "timeout"
            except DeploymentError as exc:
                logger.warning("Sandbox failed, exit reason env_error: %s", exc)
                episode.exit_reason, episode.error = "env_error", str(exc)
            finally:
                await episode.close()
            outputs = episode.outputs()
            if self.gym_config.rollout.trajectory_dir:
                await episode.write_records(outputs, time.monotonic() - started)
            return outputs if self.all_outputs() else outputs[-1]


class _Episode:
    """The state of one `GatewayAgentLoop.run()`; `play()` fills it, `outputs()` turns it into verl's records."""

    def __init__(self, loop: GatewayAgentLoop, sampling_params: dict[str, Any], sample: dict[str, Any]) -> None:
        self.loop, self.sampling_params, self.sample = loop, sampling_params, sample
        self.env = loop._make_env()
        self.gateway: Gateway | None = None
        self.server: RunningServer | None = None
        self.session: Session | None = None
        self.harness: HarnessResult | None = None
        self.exit_reason: str | None = None
        self.error: str | None = None
        self.reward, self.report = 0.0, None
        self.instance_id, self.task = "", ""
        self.timings = {"harness": 0.0, "reward": 0.0}

    async def play(self) -> None:
        loop, config = self.loop, self.loop.loop_config
        instance = instance_from_sample(self.sample)
        _, info = await self.env.reset(options={"instance": instance} if isinstance(instance, dict) else {"instance_id": instance})
        self.instance_id, self.task = info["instance_id"], self.env.instance.problem_statement
        self.gateway, self.server = await worker_gateway(loop.tokenizer, config.host, config.model_name)
        limits = Limits(**loop.cache_limits, max_tokens_per_turn=loop.gym_config.rollout.max_tokens_per_turn)
        self.session = self.gateway.open_session(backend=loop.server_manager, limits=limits, sampling_params=self.sampling_params)
        url = self.server.url if config.harness.where == "host" else f"http://{config.sandbox_host or config.host}:{self.server.port}"
        self.harness = await run_harness(config.harness, episode=self.env.episode, url=url, session_id=self.session.session_id,
                                         model_name=config.model_name)  # fmt: skip
        self.timings["harness"] = self.harness.duration
        if self.session.aborted_last:  # the harness saw a 502 it may have given up on: the trainer's doing
            self.exit_reason, self.error = "aborted", "the engine aborted the session's last request (a weight sync without partial rollout)"
            return
        if self.harness.timed_out:
            self.exit_reason, self.error = "timeout", f"the harness ran past {config.harness.timeout:.0f} s"
            return
        if self.harness.exit_code != 0:
            self.exit_reason = "harness_error"
            self.error = f"the harness exited with {self.harness.exit_code}: {self.harness.output[-2000:]}"
            return
        last = self.session.last_chain
        self.exit_reason = "max_tokens" if last is not None and last.closed == "length" else "finished"
        started = time.monotonic()
        self.reward, step_info = await self.env.end(self.exit_reason)
        self.timings["reward"] = time.monotonic() - started
        self.report = step_info.get("reward_report")

    async def close(self) -> None:
        await self.env.close()
        if self.gateway is not None and self.session is not None:
            self.gateway.sessions.pop(self.session.session_id, None)

    async def write_records(self, outputs: list[AgentLoopOutput], seconds: float) -> None:
        """One token record per chain (`rollout.trajectory_dir`, for `uni-agent-gym view`); each carries the session."""
        session = self.session.session_id if self.session else "no-session"
        chains = {chain.index: chain for chain in (self.session.chains if self.session else [])}
        for output in outputs:
            index = output.extra_fields["gateway"]["chain"]
            chain = chains.get(index)
            record = output_record(output, self.loop.tokenizer, session_id=session, chain=index, error=self.error, seconds=seconds,
                                   messages=chain.messages if chain else [], tools=chain.cache.tools if chain else None,
                                   reward_report=bounded_report(self.report), patch=(self.report or {}).get("patch", ""))  # fmt: skip
            await write_record(self.loop.gym_config.rollout.trajectory_dir, f"{self.instance_id or 'unknown'}-{session}-{index}", record)

    def outputs(self) -> list[AgentLoopOutput]:
        """verl's record of every chain, the one that ended the episode last."""
        loop = self.loop
        if infrastructure_failed(self.report):  # grading failed before the patch was in place: not the model's doing
            self.exit_reason, self.error = "env_error", self.report.get("error")
        exit_reason = self.exit_reason or "env_error"
        masked = exit_reason in ABNORMAL_EXITS and loop.gym_config.rollout.mask_abnormal_exit_traj
        summary = reward_summary(self.report, self.reward, self.error)
        session = self.session
        chains = [chain for chain in (session.chains if session else []) if chain is not session.last_chain]
        chains += [session.last_chain] if session and session.last_chain else []
        gateway = {
            "session": session.session_id if session else None,
            **(session.summary() if session else {"chains": 0, "started_by": [], "rollbacks": 0, "last_chain": None, "requests": 0}),
            "harness_exit_code": self.harness.exit_code if self.harness else None,
            "harness_output": self.harness.output[-2000:] if self.harness else "",
        }
        metrics = AgentLoopMetrics(
            generate_sequences=session.generate_seconds if session else 0.0,
            tool_calls=max(0.0, self.timings["harness"] - (session.generate_seconds if session else 0.0)),
            compute_score=self.timings["reward"],
        )
        extra = {
            "traj_exit_reason": exit_reason,
            "traj_masked": masked,
            "instance_id": self.instance_id,
            "reward_report": summary,
            SURVIVORS: task_survivors(self.report, self.sample),
            # numbers only: verl averages these into metrics; every sample has the same keys
            "reward_extra_info": {"resolved": float(summary["resolved"]), "masked": float(masked), "chains": float(gateway["chains"])},
            "turn_scores": [],
            "tool_rewards": [],
        }
        reward = 0.0 if masked else float(self.reward)
        if not chains:  # the harness never asked: nothing sampled, the task as the prompt
            prompt = render(loop.tokenizer, [{"role": "user", "content": self.task}], generation_prompt=True)[-loop.prompt_length :]
            versions = {"min_global_steps": UNKNOWN_VERSION, "max_global_steps": UNKNOWN_VERSION}
            ids, mask, logprobs = placeholder_response(probe(loop.tokenizer))
            return [AgentLoopOutput(prompt_ids=prompt, response_ids=ids, response_mask=mask, response_logprobs=logprobs, reward_score=reward,
                                    num_turns=0, metrics=metrics, extra_fields={**extra, **versions, "gateway": {**gateway, "chain": None}})]  # fmt: skip
        outputs = []
        for chain in chains:
            cache = chain.cache
            response_ids = cache.response_ids[: loop.response_length]
            mask = [0] * len(response_ids) if masked else cache.response_mask[: loop.response_length]
            logprobs = cache.response_logprobs[: loop.response_length] if chain.logprobs_complete else None
            outputs.append(AgentLoopOutput(
                prompt_ids=list(cache.initial_prompt_ids)[-loop.prompt_length :], response_ids=response_ids, response_mask=mask,
                response_logprobs=logprobs, reward_score=reward, num_turns=len(chain.messages), metrics=metrics,
                extra_fields={**extra, **cache.global_steps(), "gateway": {**gateway, "chain": chain.index, "chain_started_by": chain.started_by,
                                                                             "finish_reason": chain.closed or chain.turns[-1].finish_reason}},
            ))  # fmt: skip
        return outputs
