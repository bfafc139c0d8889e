"""Where a sampled assistant turn ends, and what the chat template puts after it, per tokenizer.

Found by rendering, never by per-family rules, so a new template family needs no code:

    [user "Hi", assistant MARKER]            rendered without a generation prompt
    [user "Hi"]                              rendered with one
    assistant span = the first minus the second = (template prefix) MARKER tokens  TURN_END
    TURN_END       = STOP  GLUE              STOP: a token the model stops on (EOS / generation config)

e.g. Qwen2.5: STOP = <|im_end|>, GLUE = "\\n";  Llama 3.2: STOP = <|eot_id|>, GLUE = nothing.
The model samples up to and including STOP; GLUE and the next messages are the harness's tokens.
Two shapes more: a template with no generation prompt (Mistral: the content follows `[/INST]`, with a
space in v0.3, which MARKER is looked for with too), and one that writes nothing after an assistant's
content, whose turn ends where the next message's header starts (GLM-4.5: `<|observation|>`, `<|user|>`,
the stop tokens of its generation config): there the model samples that header token as its STOP, and
the next messages are appended without it (`opens_next`).
`delta_ids` renders new user/tool messages after such a turn and cuts at the end of MARKER's
TURN_END, so templates that rewrite earlier turns (Qwen3 drops old `<think>` blocks) still give the
right tokens for the new messages. Anything the probe cannot establish is a `BoundaryError` with the
reason, never a silent empty glue.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import UniAgentGymError

MARKER = "UNIAGENTGYMBOUNDARYPROBE"
PROBE_USER = {"role": "user", "content": "Hi"}
_cache: dict[str, "Boundary"] = {}


class BoundaryError(UniAgentGymError, ValueError):
    """The chat template cannot be probed (or is not append-only where it must be); says why."""


@dataclass(frozen=True)
class Boundary:
    stop_ids: frozenset[int]  # tokens that end a sampled assistant turn
    turn_end: tuple[int, ...]  # what the template writes after an assistant's content: STOP + GLUE
    glue: tuple[int, ...]  # the part of turn_end after STOP
    marker_ids: tuple[int, ...]  # MARKER's tokens, to find the probe turn in later renders
    lead: tuple[int, ...] = ()  # what the template writes between the generation prompt and the content (sampled)
    opens_next: bool = False  # the turn ends with the next message's header, which the model samples as its stop

    @property
    def stop(self) -> tuple[int, ...]:
        """The tokens that end an assistant turn: turn_end without its glue (none where `opens_next`: the
        stop is the header of what follows, `stop_before`)."""
        return self.turn_end[: len(self.turn_end) - len(self.glue)]


def render(tokenizer: Any, messages: list[dict[str, Any]], *, tools: list[dict] | None = None, generation_prompt: bool) -> list[int]:
    """The template's token ids for `messages`: what `apply_chat_template(tokenize=True)` gives (the
    rendered text tokenized without added special tokens), as a plain list."""
    if not getattr(tokenizer, "chat_template", None):
        raise BoundaryError("the tokenizer has no chat template (no chat_template in its tokenizer_config.json, no chat_template.jinja): "
                            "the gym renders every prompt with it")  # fmt: skip
    import jinja2  # what transformers renders chat templates with

    try:
        text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=generation_prompt)
    except (jinja2.TemplateError, ValueError, TypeError, KeyError, IndexError) as exc:  # what a broken template raises as it renders
        raise BoundaryError(f"the chat template cannot render a conversation ({type(exc).__name__}: {exc})") from None
    return encode_text(tokenizer, text)


def encode_text(tokenizer: Any, text: str) -> list[int]:
    """`text`'s ids as `tokenizer(text, add_special_tokens=False)` gives them. A fast tokenizer in its
    plain state (no truncation or padding set on its backend, special tokens not split) is asked
    directly: the same Rust call without transformers' per-call setup, which costs as much as
    tokenizing a 2,000-character observation (measured in bench/gateway_overhead.py)."""
    backend = getattr(tokenizer, "_tokenizer", None)
    if (
        backend is not None
        and getattr(tokenizer, "is_fast", False)
        and backend.truncation is None
        and backend.padding is None
        and backend.encode_special_tokens == bool(getattr(tokenizer, "split_special_tokens", False))
    ):
        return backend.encode(text, add_special_tokens=False).ids
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return list(ids)


def stop_token_ids(tokenizer: Any) -> frozenset[int]:
    """EOS of the tokenizer plus the `eos_token_id`s of a generation_config.json beside it."""
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    config = Path(str(getattr(tokenizer, "name_or_path", ""))) / "generation_config.json"
    if config.is_file():
        value = json.loads(config.read_text()).get("eos_token_id")
        ids |= set(value if isinstance(value, list) else [value] if value is not None else [])
    if not ids:
        raise BoundaryError("the tokenizer has no EOS token and no generation_config.json eos_token_id: nothing marks a turn's end")
    return frozenset(ids)


def find(sequence: list[int], part: tuple[int, ...] | list[int], start: int = 0) -> int:
    """Index of the first occurrence of `part` in `sequence` at or after `start`, or -1."""
    first, size = part[0], len(part)
    for index in range(start, len(sequence) - size + 1):
        if sequence[index] == first and tuple(sequence[index : index + size]) == tuple(part):
            return index
    return -1


def probe(tokenizer: Any) -> Boundary:
    """The boundary of this tokenizer's template, computed once per template and cached."""
    key = hashlib.sha256(f"{getattr(tokenizer, 'name_or_path', '')}\0{tokenizer.chat_template}".encode()).hexdigest()
    if key not in _cache:
        _cache[key] = _probe(tokenizer)
    return _cache[key]


def _probe(tokenizer: Any) -> Boundary:
    stops = stop_token_ids(tokenizer)
    turn = render(tokenizer, [PROBE_USER, {"role": "assistant", "content": MARKER}], generation_prompt=False)
    prompt = render(tokenizer, [PROBE_USER], generation_prompt=True)
    if turn[: len(prompt)] != prompt:
        raise BoundaryError("the template renders the user turn differently once an assistant turn follows it: not append-only")
    span = turn[len(prompt) :]
    for marker_ids in (tuple(tokenizer.encode(text, add_special_tokens=False)) for text in (MARKER, " " + MARKER)):
        at = find(span, marker_ids)
        if at >= 0:
            break
    else:
        raise BoundaryError("the assistant's content does not appear as its own tokens in the rendered turn")
    lead, turn_end = tuple(span[:at]), tuple(span[at + len(marker_ids) :])
    stop_at = next((i for i, token in enumerate(turn_end) if token in stops), None)
    if stop_at is not None:
        return Boundary(stops, turn_end, turn_end[stop_at + 1 :], marker_ids, lead)
    if not turn_end:  # nothing after the content: does the next message's header start with a stop token?
        boundary = Boundary(stops, (), (), marker_ids, lead, opens_next=True)
        headers = [delta_ids(tokenizer, boundary, [PROBE_USER])[:1]]
        try:
            headers.append(delta_ids(tokenizer, boundary, [{"role": "tool", "content": "Hi"}])[:1])
        except Exception:  # noqa: BLE001 - a template that renders no tool message after a plain turn
            pass
        if all(header and header[0] in stops for header in headers):
            return boundary
    raise BoundaryError(f"no stop token {sorted(stops)} after the assistant's content ({list(turn_end)}): where sampling ends is unknown")


def content_ids(boundary: Boundary, ids: list[int]) -> list[int]:
    """The part of a sampled turn that is the assistant message's content: without the template's lead (GLM's
    empty think block, which the template writes again when it renders the message) and the stop token."""
    body = ids[:-1] if ids and ids[-1] in boundary.stop_ids else ids
    return body[len(boundary.lead) :] if boundary.lead and tuple(body[: len(boundary.lead)]) == boundary.lead else body


def stop_before(tokenizer: Any, boundary: Boundary, message: dict[str, Any], tools: list[dict] | None = None) -> tuple[int, ...]:
    """What a model samples to end its turn when `message` follows: the stop, or where the turn ends with the
    next message's header (`opens_next`), that header's first token."""
    if not boundary.opens_next:
        return boundary.stop
    return tuple(delta_ids(tokenizer, boundary, [message], tools)[:1])


def delta_ids(tokenizer: Any, boundary: Boundary, messages: list[dict[str, Any]], tools: list[dict] | None = None) -> list[int]:
    """The tokens the template writes for `messages` after an assistant turn's glue, generation prompt included."""
    full = render(
        tokenizer, [PROBE_USER, {"role": "assistant", "content": MARKER}, *messages], tools=tools, generation_prompt=True
    )
    at = find(full, boundary.marker_ids)
    if at < 0 or tuple(full[at + len(boundary.marker_ids) : at + len(boundary.marker_ids) + len(boundary.turn_end)]) != boundary.turn_end:
        raise BoundaryError("after new messages the template no longer ends the assistant turn as probed")
    return full[at + len(boundary.marker_ids) + len(boundary.turn_end) :]
