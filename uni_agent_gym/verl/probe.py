"""`uni-agent-gym probe`: does the gym record this model's chat template correctly? Offline, no GPU.

The seed's checks before GPU time, as one command for any tokenizer:

    tokenizer  text survives the tokenizer: decode(encode(text)) is the text for code, spaces, newlines, tabs and
               non-ASCII, and what tokenizer.json declares beside what the loaded class runs (a class that
               replaces the file's pipeline records ids that are not the text the model saw)
    boundary   the glue after an assistant turn and the generation prompt, found from the template's own
               renders, and the tool-call format it writes (§5.1: print these when lengths disagree)
    cache      prepare a one-message conversation, append one sampled turn (the template's own rendering
               of a tool call, as a model samples it) and one tool turn: lengths, the mask as runs, and the
               rollout cache's four invariants (§4.2)
    episode    `UniAgentLoop.run()` on the built-in toy task with a token source that samples the toy's
               solution in the template's own format: lengths, exit reason, masked, reward, and whether the
               record is the template's rendering of the conversation (§4.3)

    report = run_probe(tokenizer, config)        # [Section(name, ok, lines, data)], in that order

A template that rewrites earlier turns when it renders later ones (Qwen3 drops old `<think>` blocks) gives
a record that differs from a fresh rendering inside sampled turns only: that is the documented difference
(the record holds what the model was conditioned on), not a failure. A difference anywhere else is.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uni_agent_gym.config import GymConfig
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.tokenizer_loading import FAITHFUL_CLASS, read_fidelity
from uni_agent_gym.toolcalls import ToolCall, ToolCallFormat, UnknownToolCallFormatError, call_text, detect_format, resolve_format
from uni_agent_gym.toolcalls.template import CALL_ID, assistant_call_message
from uni_agent_gym.tools import make_tools
from uni_agent_gym.tokens.boundary import PROBE_USER, Boundary, BoundaryError, probe, render, stop_before

LIMITS = {"max_prompt_length": 8192, "max_response_length": 24576, "max_model_len": 32768}  # configs/config.toml's
PROBE_TASK = "Fix the failing test in this repository."
PROBE_CALL = ToolCall("execute_bash", {"command": "ls"})
TOOL_OUTPUT = "stats.py\ntest_stats.py\n"


@dataclass
class Section:
    """One of the probe's four checks: whether it holds, what it printed, and the same as data (--json)."""

    name: str
    ok: bool = True
    lines: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def fail(self, line: str) -> None:
        self.ok = False
        self.lines.append(f"FAILED: {line}")


def text(tokenizer: Any, ids: list[int] | tuple[int, ...]) -> str:
    return tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


def shown(tokenizer: Any, ids: list[int] | tuple[int, ...]) -> str:
    """Token ids and their text, as §5.1 asks them printed."""
    return f"{list(ids)} {json.dumps(text(tokenizer, ids))}"


def mask_runs(mask: list[int]) -> str:
    """[1, 1, 0, 0, 0] -> '1 x 2, 0 x 3'."""
    runs: list[list[int]] = []
    for bit in mask:
        if runs and runs[-1][0] == bit:
            runs[-1][1] += 1
        else:
            runs.append([bit, 1])
    return ", ".join(f"{bit} x {count}" for bit, count in runs) or "(empty)"


def check_tokenizer(tokenizer: Any) -> Section:
    """The round trip, and what tokenizer.json declares beside what the loaded class runs."""
    section = Section("tokenizer")
    fidelity = read_fidelity(tokenizer)
    section.lines.append(fidelity.summary())
    section.data.update(loaded=fidelity.loaded, named=fidelity.named, declared=fidelity.declared, installed=fidelity.installed,
                        agrees=fidelity.agrees, round_trip=fidelity.holds)  # fmt: skip
    if not fidelity.holds:
        fix = "" if fidelity.agrees else (f": load it with uni_agent_gym.tokenizer_loading.load_tokenizer (probe, gateway serve and view "
                                          f"do), which loads {FAITHFUL_CLASS} where the class named replaces tokenizer.json's pipeline")  # fmt: skip
        section.fail(f"round trip: {fidelity.explanation()}{fix}")
    return section


def check_boundary(tokenizer: Any) -> tuple[Section, Boundary | None, ToolCallFormat | None]:
    """The template's glue, generation prompt and tool-call format."""
    section = Section("boundary")
    try:
        without, with_prompt = (render(tokenizer, [PROBE_USER], generation_prompt=flag) for flag in (False, True))
    except BoundaryError as exc:
        section.fail(str(exc))
        return section, None, None
    generation_prompt = with_prompt[len(without) :] if with_prompt[: len(without)] == without else None
    try:
        boundary = probe(tokenizer)
    except BoundaryError as exc:
        boundary, error = None, exc
    # No generation prompt is right only where the template writes the content straight after the user's turn
    # (Mistral's [/INST]); else the model would be asked to continue the user's message.
    if not generation_prompt and (boundary is None or text(tokenizer, boundary.lead).strip()):
        section.fail(
            "add_generation_prompt=True renders nothing after the user's turn, so the model would be asked to continue the "
            "user's message: check the template's add_generation_prompt branch (verl and the gym render every prompt with it)."
        )
        return section, None, None
    section.lines.append(f"generation prompt: {shown(tokenizer, generation_prompt)}" if generation_prompt
                         else "generation prompt: none (the template writes the assistant's content right after the user's turn)")  # fmt: skip
    if boundary is None:
        section.fail(f"{error}. Check that the template renders each turn the same whatever follows it (a template that rewrites "
                     "history breaks an append-only record) and that its end-of-turn token is an EOS of the tokenizer.")  # fmt: skip
        return section, None, None
    if boundary.opens_next:
        section.lines += [f"stop: the next message's header, which the model samples ({shown(tokenizer, stop_before(tokenizer, boundary, PROBE_USER))} "
                          f"before a user message; one of {sorted(boundary.stop_ids)})", "glue after it: none", "turn end: none"]  # fmt: skip
    else:
        section.lines += [f"stop: {shown(tokenizer, boundary.stop)} (the model samples up to and including it)",
                          f"glue after it: {shown(tokenizer, boundary.glue)}" if boundary.glue else "glue after it: none",
                          f"turn end: {shown(tokenizer, boundary.turn_end)}"]  # fmt: skip
    section.data.update(generation_prompt=list(generation_prompt or []), stop=list(boundary.stop), opens_next=boundary.opens_next, glue=list(boundary.glue),
                        turn_end=list(boundary.turn_end), stop_ids=sorted(boundary.stop_ids))  # fmt: skip
    try:
        template_format = detect_format(tokenizer)
    except UnknownToolCallFormatError as exc:
        section.fail(str(exc))
        return section, boundary, None
    if template_format is None:
        section.lines.append("tool calls: the template renders none; the gym's prompt describes the lenient default format")
        section.data["tool_call_format"] = None
        return section, boundary, resolve_format("auto", tokenizer)
    section.lines.append(f"tool calls: {template_format.name} (the format the template writes)")
    section.data["tool_call_format"] = template_format.name
    return section, boundary, template_format


def sampled_turn(tokenizer: Any, boundary: Boundary, messages: list[dict[str, Any]], tools: list[dict] | None, turn: dict[str, Any]) -> list[int]:
    """What a model samples for the assistant message `turn`: the template's rendering of it after the
    generation prompt, up to and including the stop token."""
    prompt = render(tokenizer, messages, tools=tools, generation_prompt=True)
    full = render(tokenizer, [*messages, turn], tools=tools, generation_prompt=False)
    if full[: len(prompt)] != prompt:
        raise BoundaryError("the template renders the conversation differently once an assistant turn follows it")
    span = full[len(prompt) :]
    return span[: len(span) - len(boundary.glue)] if boundary.glue else span


def rendering_difference(tokenizer: Any, record: list[int], rendered: list[int], mask_start: int, mask: list[int]) -> tuple[bool, str]:
    """(explained, what differs) between the record and the template's rendering of the same conversation:
    explained when every difference lies inside sampled tokens (a template rewriting earlier turns)."""
    if record == rendered:
        return True, "equal to the template's rendering of the conversation, token for token"
    sampled = {mask_start + i for i, bit in enumerate(mask) if bit}
    parts, explained = [], True
    for kind, a, b, c, d in difflib.SequenceMatcher(None, record, rendered, autojunk=False).get_opcodes():
        if kind == "equal":
            continue
        # an insertion counts where the record's token there is sampled: what a template writes differently
        # within or at the start of a sampled turn (Mistral v0.3 puts a space before a text turn, none before a call)
        inside = all(position in sampled for position in range(a, b)) if a < b else a in sampled
        explained = explained and inside
        parts.append(f"{kind} at record token {a}: record {json.dumps(text(tokenizer, record[a:b]))} vs rendering "
                     f"{json.dumps(text(tokenizer, rendered[c:d]))}" + ("" if inside else " (outside the sampled tokens)"))  # fmt: skip
    summary = "; ".join(parts[:4]) + ("; ..." if len(parts) > 4 else "")
    if explained:
        return True, ("differs from a fresh rendering only inside sampled turns: the template rewrites earlier turns "
                      f"(the record keeps what the model was conditioned on): {summary}")  # fmt: skip
    return False, f"differs from the template's rendering outside the sampled tokens: {summary}"


def check_cache(tokenizer: Any, boundary: Boundary, fmt: ToolCallFormat) -> Section:
    """§4.2: one sampled turn and one tool turn appended, lengths and the four invariants."""
    from uni_agent_gym.tokens.rollout_cache import MaxTokenExceededError, RolloutCache

    section = Section("cache")
    schemas = [tool.schema() for tool in make_tools().values()]
    messages = [{"role": "user", "content": PROBE_TASK}]
    native = render(tokenizer, messages, tools=schemas, generation_prompt=True) != render(tokenizer, messages, generation_prompt=True)
    tools = schemas if native else None
    if native:  # the template renders the call and its result (a `tool` message)
        assistant = assistant_call_message(PROBE_CALL)
        tool = {"role": "tool", "content": TOOL_OUTPUT, "tool_call_id": assistant["tool_calls"][0]["id"]}
    else:  # the call in the gym's format as text, its result a user message (as UniAgentLoop sends them)
        assistant, tool = {"role": "assistant", "content": fmt.write(PROBE_CALL)}, {"role": "user", "content": TOOL_OUTPUT}
    cache = RolloutCache(tokenizer, boundary=boundary, **LIMITS)
    try:
        cache.prepare(messages, tools)
        sampled = sampled_turn(tokenizer, boundary, messages, tools, assistant) if native \
            else tokenizer.encode(fmt.write(PROBE_CALL), add_special_tokens=False) + list(boundary.stop)  # fmt: skip
        sampled += list(stop_before(tokenizer, boundary, tool, tools)) if boundary.opens_next else []
        cache.append_model_tokens(sampled, [-0.5] * len(sampled))
        appended = cache.append_messages([tool])
    except MaxTokenExceededError as exc:
        section.fail(f"invariant 4 (within the token limits): {exc}")
        return section
    except BoundaryError as exc:
        section.fail(f"invariant 3 (the template's rendering of the conversation): {exc}")
        return section
    except (AssertionError, ValueError) as exc:
        section.fail(f"invariant 1 (lengths): {exc}")
        return section
    response = len(cache.prompt_ids) - len(cache.initial_prompt_ids)
    section.lines += [
        f"tools {'rendered by the template' if native else 'described in the system prompt'}; sampled turn {len(sampled)} tokens, "
        f"tool turn {len(appended)} tokens",
        f"prompt_ids {len(cache.prompt_ids)} (initial {len(cache.initial_prompt_ids)}), response_mask {len(cache.response_mask)}, "
        f"response_logprobs {len(cache.response_logprobs)}",
        f"mask: {mask_runs(cache.response_mask)}",
    ]
    section.data.update(prompt_ids=len(cache.prompt_ids), initial_prompt_ids=len(cache.initial_prompt_ids),
                        response_mask=list(cache.response_mask), response_logprobs=len(cache.response_logprobs))  # fmt: skip
    rendered = render(tokenizer, [*messages, assistant, tool], tools=tools, generation_prompt=True)
    explained, difference = rendering_difference(tokenizer, cache.prompt_ids, rendered, len(cache.initial_prompt_ids), cache.response_mask)
    checks = {
        "1 (len(response_mask) == len(response_logprobs) == len(prompt_ids) - len(initial_prompt_ids))":
            len(cache.response_mask) == len(cache.response_logprobs) == response,
        "2 (mask 1 exactly on the sampled tokens, 0 on glue and the tool turn)":
            cache.response_mask == [1] * len(sampled) + [0] * len(appended),
        "3 (the ids are the template's rendering of the conversation)": explained,
        "4 (within max_model_len, max_prompt_length, max_response_length)":
            len(cache.prompt_ids) <= LIMITS["max_model_len"] and response <= LIMITS["max_response_length"],
    }  # fmt: skip
    for name, holds in checks.items():
        if holds:
            section.lines.append(f"invariant {name}: holds")
        else:
            section.fail(f"invariant {name}")
    section.lines.append(f"record: {difference}")
    return section


class ScriptedTokens:
    """A token source with verl's server-manager call shape (`generate(...) -> TokenOutput`) that samples
    each turn of the toy's solution as the chat template writes the call (no model weights): the turn's
    tokens and its stop token. `repo_dir()` says where the episode's repository is."""

    def __init__(self, tokenizer: Any, boundary: Boundary, fmt: ToolCallFormat, tools: Any, repo_dir: Any) -> None:
        self.tokenizer, self.boundary, self.fmt, self.tools, self.repo_dir = tokenizer, boundary, fmt, tools, repo_dir
        self.turns: dict[str, int] = {}

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        from uni_agent_gym import toy

        turn = self.turns.get(request_id, 0)
        self.turns[request_id] = turn + 1
        steps = toy.scripted_solution(self.repo_dir())
        call = ToolCall(**steps[min(turn, len(steps) - 1)])
        native = self.tools() is not None  # the template renders the call and its result (a `tool` message)
        text = call_text(self.tokenizer, call) if native else self.fmt.write(call)
        after = {"role": "tool", "content": "", "tool_call_id": CALL_ID} if native else {"role": "user", "content": ""}
        stop = stop_before(self.tokenizer, self.boundary, after, self.tools())
        ids = self.tokenizer.encode(text, add_special_tokens=False) + list(stop)
        return TokenOutput(token_ids=ids[: sampling_params["max_tokens"]], log_probs=None, stop_reason="completed")


async def play_toy_episode(tokenizer: Any, boundary: Boundary, fmt: ToolCallFormat, config: GymConfig) -> tuple[Any, Any]:
    """`UniAgentLoop.run()` on the toy task as verl's worker builds the loop, sampled by `ScriptedTokens`: (verl's
    `AgentLoopOutput`, the loop, whose `trajectory` holds the conversation and the rollout cache)."""
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from uni_agent_gym import toy
    from uni_agent_gym.verl.agent_loop import UniAgentLoop

    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-probe-") as scratch:
        (Path(scratch) / "gym.json").write_text(json.dumps(config.model_dump(mode="json")))
        loop_yaml = Path(scratch) / "uni_agent_loop.yaml"
        loop_yaml.write_text("[]")
        trainer = OmegaConf.create({
            "actor_rollout_ref": {"rollout": {"prompt_length": LIMITS["max_prompt_length"], "response_length": LIMITS["max_response_length"],
                                              "max_model_len": LIMITS["max_model_len"], "agent": {"agent_loop_config_path": str(loop_yaml)}},
                                  "model": {}},
            "data": {"apply_chat_template_kwargs": {}},
        })  # fmt: skip
        holder: dict[str, UniAgentLoop] = {}
        source = ScriptedTokens(tokenizer, boundary, fmt, tools=lambda: holder["loop"].trajectory.tools,
                                repo_dir=lambda: holder["loop"].trajectory.env.repo_dir)  # fmt: skip
        loop = holder["loop"] = UniAgentLoop(DictConfigWrap(trainer), source, tokenizer, None, RLHFDataset, DictConfigWrap(trainer.data),
                                             settings="gym.json", name="uni_agent")  # fmt: skip
        source.fmt = loop.tool_format  # the format the loop parses (the config's model.tool_format may name one)
        output = await loop.run({"temperature": 1.0}, extra_info={"index": 0, "instance_id": toy.INSTANCE_ID}, raw_prompt=[])
    return output, loop


async def check_episode(tokenizer: Any, boundary: Boundary, fmt: ToolCallFormat, config: GymConfig) -> Section:
    """§4.3: a whole `UniAgentLoop.run()` on the toy task."""
    section = Section("episode")
    output, loop = await play_toy_episode(tokenizer, boundary, fmt, config)
    extra, trajectory = output.extra_fields, loop.trajectory
    section.lines += [
        f"prompt_ids {len(output.prompt_ids)}, response_ids {len(output.response_ids)}, response_mask {len(output.response_mask)}, "
        f"response_logprobs {len(output.response_logprobs or [])}, turns {output.num_turns}",
        f"mask: {mask_runs(output.response_mask)}",
        f"traj_exit_reason {extra['traj_exit_reason']}, traj_masked {extra['traj_masked']}, reward {output.reward_score}",
    ]
    section.data.update(prompt_ids=len(output.prompt_ids), response_ids=len(output.response_ids), response_mask=len(output.response_mask),
                        response_logprobs=len(output.response_logprobs or []), traj_exit_reason=extra["traj_exit_reason"],
                        traj_masked=extra["traj_masked"], reward=output.reward_score, num_turns=output.num_turns)  # fmt: skip
    record, ended = list(trajectory.cache.prompt_ids), trajectory.messages[-1]["role"] == "assistant"
    if ended:  # the record stops at the last sampled stop token; a rendering ends that turn with its glue
        record += list(boundary.glue)
    rendered = render(tokenizer, trajectory.messages, tools=trajectory.tools, generation_prompt=not ended)
    explained, difference = rendering_difference(tokenizer, record, rendered, len(trajectory.cache.initial_prompt_ids), trajectory.cache.response_mask)
    checks = {
        "len(response_mask) == len(response_ids) == len(response_logprobs)":
            len(output.response_mask) == len(output.response_ids) == len(output.response_logprobs or []),
        "traj_exit_reason == 'finished'": extra["traj_exit_reason"] == "finished",
        "traj_masked is false": not extra["traj_masked"],
        "reward 1.0 (the toy's tests pass)": output.reward_score == 1.0,
        "the record is the template's rendering of the conversation": explained,
    }  # fmt: skip
    for name, holds in checks.items():
        if holds:
            section.lines.append(f"{name}: holds")
        else:
            section.fail(f"{name}" + (f" ({extra['reward_report'].get('error')})" if extra["reward_report"].get("error") else ""))
    section.lines.append(f"record: {difference}")
    return section


def run_probe(tokenizer: Any, config: GymConfig) -> list[Section]:
    """The four sections; a later one runs only where the ones before it hold."""
    sections = [check_tokenizer(tokenizer)]
    if not sections[0].ok:
        return sections
    boundary_section, boundary, fmt = check_boundary(tokenizer)
    sections.append(boundary_section)
    if not boundary_section.ok:
        return sections
    sections.append(check_cache(tokenizer, boundary, fmt))
    if sections[-1].ok:
        sections.append(asyncio.run(check_episode(tokenizer, boundary, fmt, config)))
    return sections


class ProbeFailed(UniAgentGymError):
    """A probe section did not hold (each failure was printed)."""


def failed_summary(sections: list[Section]) -> str:
    """One line: the sections that failed, and the first failure's own line."""
    failed = [section for section in sections if not section.ok]
    if not failed:
        return ""
    first = next(line for line in failed[0].lines if line.startswith("FAILED: ")).removeprefix("FAILED: ")
    return f"the probe failed in {', '.join(section.name for section in failed)}: {first}"

