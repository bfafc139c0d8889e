"""`UniAgentLoop`: verl's agent loop over a uni-agent-gym SWE-bench episode.

verl instantiates it per sample from the YAML at `rollout.agent.agent_loop_config_path` (Hydra
`_target_`, every other key a keyword argument; no `register()`), e.g. `configs/uni_agent_loop.yaml`:

    - name: uni_agent
      _target_: uni_agent_gym.verl.agent_loop.UniAgentLoop
      settings: settings.json              # relative paths: to this YAML's directory
      deployment: deployment/docker.yaml
      overrides: ["env.max_turns=30"]

The entry's other keys are gym settings too, in the seed article's vocabulary (`max_turns: 12`, `tools: [...]`,
`env: {deployment: {type: local, timeout: 300}}`, `reward: {fail_to_pass_only: true}`; see
`uni_agent_gym.seed_vocabulary`), layered between the files and the overrides; an unknown key is an error.

Each `run()` starts an `AsyncSWEEnv` on the sample's instance and loops generate -> parse -> step
-> append into a `RolloutCache` until the agent finishes, `max_turns` or a token limit runs out,
the model sends `agent.max_format_errors` malformed calls in a row, the sandbox fails, the server
hands back a generation it aborted (a weight sync with `async_training.partial_rollout` off) or the
trajectory times out. The episode is graded at every normal end (the work so far counts), the
sandbox is always released, and abnormal exits (env_error, aborted, timeout) are fully masked when
`rollout.mask_abnormal_exit_traj` is on; format errors stay in so the model learns the format.
`extra_fields` carries `min_global_steps` / `max_global_steps`, the weight versions of the first and
the last sampled token (verl's fully-async and v1 trainers compute staleness from them), and `task_survivors`, how
many wrong fixes the task's tests accept (`advantages.survivor_share`: the share of rewards from weak tasks).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from functools import lru_cache
from pathlib import Path
from typing import Any
from uuid import uuid4

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput

from uni_agent_gym.advantages.survivor_share import SURVIVORS
from uni_agent_gym.agent.react import SYSTEM_PROMPT, shorten
from uni_agent_gym.config import GymConfig, load_config
from uni_agent_gym.datasets.task import deserialise
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.errors import ConfigError, DeploymentError
from uni_agent_gym.rewards.swebench import infrastructure_failed
from uni_agent_gym.seed_vocabulary import entry_layer
from uni_agent_gym.toolcalls import UnknownToolCallFormatError, detect_format, resolve_format, tools_prompt
from uni_agent_gym.toolcalls.template import CALL_ID
from uni_agent_gym.tokens.boundary import Boundary, content_ids, render
from uni_agent_gym.tokens.rollout_cache import MaxTokenExceededError, RolloutCache, aborted, sampled_versions
from uni_agent_gym.verl.records import bounded_report, output_record, write_record

logger = logging.getLogger(__name__)

# a trajectory's exit reasons: finished, max_turns, max_tokens, format_error (the model's), and these
ABNORMAL_EXITS = ("env_error", "aborted", "timeout")  # not the model's doing: never trained on when masking is on
_semaphores: dict[tuple[int, int], asyncio.Semaphore] = {}


def _plain(value: Any) -> Any:
    """Hydra hands nested YAML values over as DictConfig/ListConfig; the gym wants plain data."""
    return OmegaConf.to_container(value, resolve=True) if isinstance(value, (DictConfig, ListConfig)) else value


def gym_config_files(base: Path, settings: str | list[str] | None, deployment: str | None) -> list[str]:
    """The gym config files of an agent-loop entry in layering order; relative paths are taken from
    `base`, the agent-loop YAML's directory."""
    paths = [settings] if isinstance(settings, str) else list(settings or [])
    paths += [deployment] if deployment else []
    return [str(path if Path(path).is_absolute() else base / path) for path in paths]


def gym_config_of_entry(base: Path, entry: dict[str, Any], translations: list[str] | None = None) -> GymConfig:
    """The gym config an agent-loop entry asks for: its `settings` and `deployment` files (relative to `base`,
    the YAML's directory), then its own keys in the seed article's vocabulary (`max_turns`, `tools`,
    `env: {deployment: ...}`, `reward: {...}`, ...; a key that means nothing is an error naming the nearest),
    then its `overrides`. What was translated is appended to `translations`."""
    entry = {key: value for key, value in entry.items() if key not in ("name", "_target_")}
    settings, deployment, overrides = entry.pop("settings", None), entry.pop("deployment", None), entry.pop("overrides", None)
    if isinstance(deployment, dict):  # the section itself, not a file
        entry["deployment"], deployment = deployment, None
    layer, notes = entry_layer(entry, "the agent-loop entry")
    if translations is not None:
        translations += notes
    files = gym_config_files(base, settings, deployment)
    return load_config(*files, layers=[layer] if layer else [], overrides=overrides or [], translations=translations)


@lru_cache(maxsize=16)
def _gym_config(base: str, entry_json: str) -> GymConfig:
    return gym_config_of_entry(Path(base), json.loads(entry_json))


@lru_cache(maxsize=16)
def _yaml_entry(path: str, mtime: float, name: str | None) -> dict[str, Any]:
    """The entry called `name` of the agent-loop YAML at `path`, as written ({} when there is none)."""
    entries = yaml.safe_load(Path(path).read_text()) or []
    return next((dict(entry) for entry in entries if isinstance(entry, dict) and entry.get("name") == name), {})


def entry_tools(tools: Any, loop_yaml: Path, name: str | None) -> Any:
    """The entry's own `tools`: verl passes its tool list (`ToolListWrap`) under that keyword, which replaces
    the YAML's, so the entry is read again where verl's wrapper arrived instead of a list."""
    if tools is None or isinstance(tools, (list, tuple, ListConfig)):
        return _plain(tools)
    if not loop_yaml.is_file():
        return None
    return _yaml_entry(str(loop_yaml), loop_yaml.stat().st_mtime, name).get("tools")


def instance_from_sample(sample: dict[str, Any]) -> dict[str, Any] | str:
    """The SWE-bench row of a verl sample (`extra_info.instance` / `tools_kwargs.instance`, a dict or
    its JSON), or just its `instance_id` (looked up in the gym's `env.dataset`)."""
    sources = [source for source in (_plain(sample.get(field)) for field in ("extra_info", "tools_kwargs")) if isinstance(source, dict)]
    for source in sources:
        if source.get("instance") is not None:
            instance = source["instance"]
            return dict(deserialise(instance))
    for source in sources:
        if source.get("instance_id"):
            return str(source["instance_id"])
    raise ValueError("The sample names no SWE-bench instance: put the row under extra_info.instance (or its id under extra_info.instance_id)")


def placeholder_response(boundary: Boundary) -> tuple[list[int], list[int], list[float]]:
    """(ids, mask, logprobs) of a trajectory with nothing sampled (cut at its first turn, out of tokens
    before it, a sandbox that never started): the template's turn-end stop, mask 0. verl's v1 trainer
    indexes each response's last token (`AgentLoopOutput.as_dict`), so no response may be empty."""
    ids = list(boundary.stop) or [min(boundary.stop_ids)]  # (a turn ended by the next header: any stop token)
    return ids, [0] * len(ids), [0.0] * len(ids)


def task_survivors(report: dict[str, Any] | None, sample: dict[str, Any]) -> int | None:
    """How many wrong variants of its gold the task's tests accepted (verl's metrics read it: `survivor_share`): the
    reward report's `strength` (env.validations, or this machine's `validate`), else the row's `extra_info.strength`
    (`prepare-data --validations`); None where neither measured it."""
    strength = (report or {}).get("strength")
    if strength is None:
        info = _plain(sample.get("extra_info"))
        strength = info.get("strength") if isinstance(info, dict) else None
    survivors = strength.get("survivors") if isinstance(strength, dict) else None
    return int(survivors) if survivors is not None else None


def reward_summary(report: dict[str, Any] | None, reward: float, error: str | None) -> dict[str, Any]:
    """The small part of a reward report verl keeps per sample: status, resolved, test counts, error, and the task's
    language (a run mixing languages can be read per language)."""
    report = report or {}
    return {
        "status": report.get("status"),
        "language": report.get("language"),
        "resolved": bool(report.get("resolved", reward >= 1.0)),
        "fail_to_pass": {k: len(v) for k, v in report.get("tests", {}).get("FAIL_TO_PASS", {}).items()},
        "pass_to_pass": {k: len(v) for k, v in report.get("tests", {}).get("PASS_TO_PASS", {}).items()},
        "error": error,
    }


class UniAgentLoop(AgentLoopBase):
    """One SWE-bench trajectory per `run()`, as exact token ids, loss mask and logprobs."""

    def __init__(
        self,
        trainer_config: Any,
        server_manager: Any,
        tokenizer: Any,
        processor: Any,
        dataset_cls: Any,
        data_config: Any,
        hf_model_type: str | None = None,
        **entry: Any,
    ) -> None:
        """The agent-loop entry's keys arrive as keywords: `settings` (one path or a list) and `deployment`
        (a file, or the section itself) are gym config files, layered in that order, then the entry's own
        settings in the seed article's vocabulary (`max_turns`, `tools`, `env`, `reward`, ...), then
        `overrides` (`key=value`); relative paths are taken from the agent-loop YAML's directory."""
        tools = entry.pop("tools", None)
        super().__init__(trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config, hf_model_type)
        loop_yaml = Path(self.rollout_config.agent.get("agent_loop_config_path") or "agent_loop.yaml").expanduser()
        entry = {key: _plain(value) for key, value in entry.items()}
        tools = entry_tools(tools, loop_yaml, entry.get("name"))
        if tools is not None:
            entry["tools"] = tools
        self.gym_config = _gym_config(str(loop_yaml.parent), json.dumps(entry, sort_keys=True))
        # verl's lengths shape the output; the rollout cache holds the gym's budgets where set, never past verl's
        self.prompt_length = self.rollout_config.prompt_length
        self.response_length = self.rollout_config.response_length
        self.max_model_len = self.rollout_config.get("max_model_len") or self.prompt_length + self.response_length
        budgets = self.gym_config.rollout
        self.cache_limits = {
            "max_model_len": min(budgets.max_model_len or self.max_model_len, self.max_model_len),
            "max_prompt_length": min(budgets.max_prompt_length or self.prompt_length, self.prompt_length),
            "max_response_length": min(budgets.max_response_length or self.response_length, self.response_length),
        }
        # the tool-call format of every trajectory: the chat template's own unless model.tool_format names one
        self.tool_format = resolve_format(self.gym_config.model.tool_format, tokenizer)

    def _make_env(self) -> AsyncSWEEnv:
        from uni_agent_gym.rewards.swebench import SWEBenchReward

        return AsyncSWEEnv(self.gym_config, reward=SWEBenchReward.from_config(self.gym_config), tool_format=self.tool_format)

    def _semaphore(self) -> asyncio.Semaphore:
        """One per event loop (one verl worker) and limit: verl builds a new agent loop per sample."""
        key = (id(asyncio.get_running_loop()), self.gym_config.rollout.max_concurrency)
        if key not in _semaphores:
            _semaphores[key] = asyncio.Semaphore(key[1])
        return _semaphores[key]

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """One trajectory of the sample in `kwargs` (verl's dataset fields); `self.trajectory` keeps its
        conversation and state for inspection."""
        async with self._semaphore():
            started = time.monotonic()
            trajectory = self.trajectory = _Trajectory(self, dict(sampling_params), kwargs)
            try:
                await asyncio.wait_for(trajectory.play(), timeout=self.gym_config.rollout.trajectory_timeout)
            except asyncio.TimeoutError:
                trajectory.exit_reason = "timeout"
            except DeploymentError as exc:
                logger.warning("Sandbox failed, exit reason env_error: %s", exc)
                trajectory.exit_reason, trajectory.error = "env_error", str(exc)
            finally:
                await trajectory.env.close()
            output = trajectory.output()
            directory = self.gym_config.rollout.trajectory_dir
            if directory:
                await write_record(directory, f"{trajectory.instance_id or 'unknown'}-{trajectory.request_id[:12]}", trajectory.record(output, time.monotonic() - started))
            return output


class _Trajectory:
    """The state of one `UniAgentLoop.run()`; `play()` fills it, `output()` turns it into verl's record."""

    def __init__(self, loop: UniAgentLoop, sampling_params: dict[str, Any], sample: dict[str, Any]) -> None:
        self.loop, self.sampling_params, self.sample = loop, sampling_params, sample
        self.env = loop._make_env()
        self.cache = RolloutCache(loop.tokenizer, **loop.cache_limits)
        self.request_id = uuid4().hex
        self.exit_reason: str | None = None
        self.error: str | None = None
        self.reward, self.report = 0.0, None
        self.instance_id = ""
        self.messages: list[dict[str, Any]] = []  # the conversation as the model saw it
        self.tools: list[dict[str, Any]] | None = None
        self.num_turns = 0
        self.timings = {"generate": 0.0, "tools": 0.0, "reward": 0.0}
        self.spans: list[dict[str, Any]] = []  # response positions of each sampled turn and each message after one

    async def play(self) -> None:
        config = self.loop.gym_config
        instance = instance_from_sample(self.sample)
        started = time.monotonic()
        observation, info = await self.env.reset(options={"instance": instance} if isinstance(instance, dict) else {"instance_id": instance})
        self.timings["tools"] += time.monotonic() - started
        self.instance_id = info["instance_id"]
        self.messages, self.tools, tool_role = self._first_messages(observation)
        try:
            self.cache.prepare(self.messages, self.tools)
        except MaxTokenExceededError as exc:  # nothing to train on: verl gets the prompt's tail and no response
            self.exit_reason, self.error = "max_tokens", str(exc)
            self.cache.initial_prompt_ids = render(self.loop.tokenizer, self.messages, tools=self.tools, generation_prompt=True)
            return
        self.num_turns = 1
        format_errors = 0
        while self.exit_reason is None:
            budget = min(
                self.cache.max_response_length - len(self.cache.response_mask), self.cache.max_model_len - len(self.cache.prompt_ids)
            )
            if budget <= 0:
                await self._finish_early("max_tokens")
                break
            text = await self._generate(min(config.rollout.max_tokens_per_turn, budget))
            if text is None:  # the server cut the turn: not the model's answer, nothing to grade
                break
            started = time.monotonic()
            observation, reward, terminated, truncated, info = await self.env.step(text)
            self.timings["tools"] += time.monotonic() - started - self.env.last_timings["reward"]
            self.timings["reward"] += self.env.last_timings["reward"]
            if terminated or truncated:
                self.exit_reason, self.reward, self.report = info["exit_reason"], reward, info.get("reward_report")
                break
            format_errors = format_errors + 1 if info["error"] == "format_error" else 0
            if format_errors >= config.agent.max_format_errors:
                await self._finish_early("format_error")
                break
            message = {"role": tool_role, "content": shorten(observation, config.agent.observation_limit)}
            if tool_role == "tool":  # templates that render the call id with the result (Mistral's) need one
                message["tool_call_id"] = CALL_ID
            start = len(self.cache.response_ids)
            try:
                self.cache.append_messages([message])
            except MaxTokenExceededError as exc:
                self.error = str(exc)
                await self._finish_early("max_tokens")
                break
            self.spans.append({"start": start, "end": len(self.cache.response_ids), "role": tool_role})
            self.messages.append(message)
            self.num_turns += 1

    def _first_messages(self, task: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, str]:
        """System + task messages, and how tools reach the model: through the chat template when it
        renders them (tool results then go back as `tool` messages), else described in the system prompt,
        with an example call in the trajectory's tool-call format."""
        config = self.loop.gym_config
        system = config.agent.system_prompt or SYSTEM_PROMPT
        schemas = self.env.tool_schemas
        bare = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        tokenizer = self.loop.tokenizer
        native = config.model.native_tools != "off" and render(tokenizer, bare, tools=schemas, generation_prompt=True) != render(
            tokenizer, bare, generation_prompt=True
        )
        if native:
            self._check_named_format(tokenizer)
            return bare, schemas, "tool"
        described = system + tools_prompt(self.loop.tool_format, schemas)
        return [{"role": "system", "content": described}, {"role": "user", "content": task}], None, "user"

    def _check_named_format(self, tokenizer: Any) -> None:
        """A template that renders the tools also tells the model how to call them: a format named in the
        config must be that one, or the conversation would ask for one format and parse another."""
        named = self.loop.gym_config.model.tool_format
        try:
            template = detect_format(tokenizer) if named != "auto" else None
        except UnknownToolCallFormatError:  # a shape the gym does not know: the named format is the user's answer
            template = None
        if template is not None and template.name != self.loop.tool_format.name:
            raise ConfigError(
                f"model.tool_format is {named!r}, but the chat template renders the tools and asks for {template.name!r} "
                "tool calls: set model.tool_format to auto (or to that format), or model.native_tools to off"
            )

    async def _generate(self, max_tokens: int) -> str | None:
        """The next sampled turn as text, recorded; None (exit reason `aborted`) when the server hands
        back a generation it aborted: verl's fully-async client resumes those itself under
        `partial_rollout`, so one that still comes back cut was cut by the trainer, not ended by the model."""
        started = time.monotonic()
        output = await self.loop.server_manager.generate(
            self.request_id, prompt_ids=list(self.cache.prompt_ids), sampling_params={**self.sampling_params, "max_tokens": max_tokens}
        )
        self.timings["generate"] += time.monotonic() - started
        ids = list(output.token_ids)[:max_tokens]  # a server that ignores max_tokens still cannot overrun the limits
        if self.loop.gym_config.logging.log_query_timing:
            logger.info("query %s turn %d: %d tokens in %.3f s", self.instance_id, self.num_turns, len(ids), time.monotonic() - started)
        if aborted(output):
            self.exit_reason = "aborted"
            self.error = f"the server aborted the generation after {len(ids)} tokens (a weight sync without async_training.partial_rollout)"
            return None
        logprobs = list(output.log_probs)[: len(ids)] if output.log_probs is not None else None
        start = len(self.cache.response_ids)
        self.cache.append_model_tokens(ids, logprobs, sampled_versions(output))
        self.spans.append({"start": start, "end": len(self.cache.response_ids), "role": "assistant"})
        self.num_turns += 1
        # special tokens stay (some formats are made of them: [TOOL_CALLS], <|python_tag|>); the stop token and the
        # template's lead go
        body = content_ids(self.cache.boundary, ids)
        text = self.loop.tokenizer.decode(body, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        self.messages.append({"role": "assistant", "content": text})
        return text

    async def _finish_early(self, reason: str) -> None:
        """End the episode for `reason` and grade the work so far (as the eval agent does)."""
        self.exit_reason = reason
        self.reward, info = await self.env.end(reason)
        self.timings["reward"] += self.env.last_timings["reward"]
        self.report = info.get("reward_report")

    def record(self, output: AgentLoopOutput, seconds: float) -> dict[str, Any]:
        """The trajectory for `uni-agent-gym view` (a token record): what verl got, which response positions
        hold a sampled turn or a message, the conversation and the whole (bounded) report."""
        length = len(output.response_ids)
        spans = [{**span, "end": min(span["end"], length)} for span in self.spans if span["start"] < length]
        return output_record(output, self.loop.tokenizer, spans=spans, error=self.error, seconds=seconds, messages=self.messages,
                             tools=self.tools, reward_report=bounded_report(self.report), patch=(self.report or {}).get("patch", ""),
                             timings=dict(self.timings))  # fmt: skip

    def output(self) -> AgentLoopOutput:
        """verl's record: the ids as sampled and shown, within the trainer's lengths, masked if abnormal."""
        loop, cache = self.loop, self.cache
        if infrastructure_failed(self.report):  # grading failed before the patch was in place: not the model's doing
            self.exit_reason, self.error = "env_error", self.report.get("error")
        exit_reason = self.exit_reason or "env_error"
        masked = exit_reason in ABNORMAL_EXITS and loop.gym_config.rollout.mask_abnormal_exit_traj
        prompt_ids = list(cache.initial_prompt_ids)[-loop.prompt_length :]
        response_ids = cache.response_ids[: loop.response_length]
        mask = [0] * len(response_ids) if masked else cache.response_mask[: loop.response_length]
        logprobs = cache.response_logprobs[: loop.response_length]
        if not response_ids:
            response_ids, mask, logprobs = placeholder_response(cache.boundary)
        if not len(mask) == len(response_ids) == len(logprobs):
            raise AssertionError(f"trajectory corrupted: {len(response_ids)} ids, {len(mask)} mask, {len(logprobs)} logprobs")
        summary = reward_summary(self.report, self.reward, self.error)
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=mask,
            response_logprobs=logprobs,
            reward_score=0.0 if masked else float(self.reward),
            num_turns=self.num_turns,
            metrics=AgentLoopMetrics(
                generate_sequences=self.timings["generate"], tool_calls=self.timings["tools"], compute_score=self.timings["reward"]
            ),
            extra_fields={
                "traj_exit_reason": exit_reason,
                "traj_masked": masked,
                "instance_id": self.instance_id,
                "reward_report": summary,
                SURVIVORS: task_survivors(self.report, self.sample),
                # numbers only: verl averages these into metrics; every sample has the same keys
                "reward_extra_info": {"resolved": float(summary["resolved"]), "masked": float(masked)},
                "turn_scores": [],
                "tool_rewards": [],
                **cache.global_steps(),
            },
        )
