"""The ReAct agent: model turn, tool call, env step, until the episode ends or a budget runs out.

    trajectory = await run_episode(env, model, instance, agent_config)

The episode ends when the agent calls `finish` or `env.max_turns` runs out (the env grades it), or
when the token or cost budget is spent or the model sends `max_format_errors` malformed calls in a
row; then the agent calls `finish` itself so the work so far is graded, and the trajectory keeps the
real reason. Observations are shortened for the model's context (head and tail kept).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from uni_agent_gym.agent.model import ChatModel
from uni_agent_gym.config import AgentConfig
from uni_agent_gym.datasets import Task, require_task
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.toolcalls import tools_prompt

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = """\
You are an expert software engineer working in a sandboxed repository. You act only through the tools you
are given, one tool call per turn, and you see each call's result before the next. Solve the task, check
your change, then call `finish`."""

def shorten(text: str, limit: int) -> str:
    """Head and tail of `text` within `limit` characters, the cut marked."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


async def run_episode(env: AsyncSWEEnv, model: ChatModel, instance: Task, config: AgentConfig) -> dict[str, Any]:
    """Play one episode of a task (a dataset row: `normalise(row)` first); return its trajectory (messages, steps,
    exit reason, reward, usage, timings)."""
    require_task(instance, "run_episode")
    started = time.monotonic()
    observation, info = await env.reset(options={"instance": instance})
    instance_id = info["instance_id"]
    system = config.system_prompt or SYSTEM_PROMPT
    if not model.native_tools:  # the tools and how to call them, in the format env.step parses
        system += tools_prompt(env.tool_format, env.tool_schemas)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": observation}]
    steps: list[dict[str, Any]] = []
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0, "model_seconds": 0.0, "retries": 0}
    exit_reason, reward, report, format_errors = None, 0.0, None, 0
    while exit_reason is None:
        native = model.native_tools
        turn = await model.complete(messages, env.tool_schemas)
        usage["prompt_tokens"] += turn.prompt_tokens
        usage["completion_tokens"] += turn.completion_tokens
        usage["cost"] += model.cost(turn.prompt_tokens, turn.completion_tokens)
        usage["model_seconds"] += turn.latency
        usage["retries"] += turn.retries
        if env.config.logging.log_query_timing:
            logger.info("query %s turn %d: %d tokens in %.3f s (%d retries)", instance_id, len(steps) + 1,
                        turn.completion_tokens, turn.latency, turn.retries)  # fmt: skip
        messages.append(turn.message)
        observation, reward, terminated, truncated, info = await env.step(turn.action)
        shown = shorten(observation, config.observation_limit)
        if native and turn.message.get("tool_calls"):
            messages += [{"role": "tool", "tool_call_id": call["id"], "content": shown} for call in turn.message["tool_calls"][:1]]
            messages += [{"role": "tool", "tool_call_id": call["id"], "content": "Not run: one tool call per turn."}
                         for call in turn.message["tool_calls"][1:]]  # fmt: skip
        else:
            messages.append({"role": "user", "content": shown})
        steps.append({
            "turn": info["turn"], "action": turn.action, "tool": info["tool"], "error": info["error"],
            "exit_code": info["exit_code"], "observation": observation, "prompt_tokens": turn.prompt_tokens,
            "completion_tokens": turn.completion_tokens, "model_latency": turn.latency, "retries": turn.retries,
            "timings": env.last_timings,
        })  # fmt: skip
        format_errors = format_errors + 1 if info["error"] == "format_error" else 0
        if terminated or truncated:
            exit_reason, report = info["exit_reason"], info.get("reward_report")
            break
        total_tokens = usage["prompt_tokens"] + usage["completion_tokens"]
        if format_errors >= config.max_format_errors:
            exit_reason = "format_error"
        elif config.token_budget is not None and total_tokens >= config.token_budget:
            exit_reason = "max_tokens"
        elif config.cost_budget is not None and usage["cost"] >= config.cost_budget:
            exit_reason = "cost_limit"
        if exit_reason is not None:  # grade the work so far
            reward, info = await env.end(exit_reason)
            report = info.get("reward_report")
    return {
        "instance_id": instance_id,
        "model_name_or_path": model.config.model_name,
        "exit_reason": exit_reason,
        "reward": reward,
        "resolved": bool(report and report.get("resolved")),
        "patch": (report or {}).get("patch", ""),
        "turns": len(steps),
        "usage": usage,
        "seconds": time.monotonic() - started,
        "messages": messages,
        "steps": steps,
        "reward_report": report,
    }
