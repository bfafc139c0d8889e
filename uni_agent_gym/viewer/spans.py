"""Which response positions hold which message, so the mask check can tell a token the model sampled from
one it never wrote. Best first:

1. the record's own `spans` (UniAgentLoop writes them as it records);
2. the chat template of the record's tokenizer (`view --tokenizer DIR`), through the gym's own boundary
   probe, so any template family works with no per-family rule: each sampled turn runs to the template's
   stop token, then its glue, then the template's rendering of the next user/tool messages as the rollout
   cache appended them (`tokens.boundary.delta_ids`, less the header a GLM-style turn sampled as its stop),
   checked token for token against the record;
3. the message headers of ChatML and Llama 3 read off the token texts (the two families whose headers say
   the role in plain tokens).

Where none applies, the record is not checked for masks and `why` says so (a page must not read "no flags"
for a record nothing looked at).
"""

from __future__ import annotations

from typing import Any

from uni_agent_gym.tokens.boundary import BoundaryError, delta_ids, probe
from uni_agent_gym.viewer.records import Trajectory

# Chat templates' message headers: the token that opens a header and the one that closes it (the role
# lies between). ChatML (Qwen) ends its header at the newline, Llama 3 at `<|end_header_id|>`.
HEADERS = {"<|im_start|>": "\n", "<|start_header_id|>": "<|end_header_id|>"}


class SpanError(ValueError):
    """The template's rendering does not explain the record's tokens; says where."""


def message_spans(record: Trajectory, tokenizer: Any = None) -> tuple[list[dict[str, Any]], str | None]:
    """(spans, why not): the record's message spans, or no spans and why none could be found."""
    if record.spans is not None:
        return record.spans, None
    if tokenizer is not None:
        try:
            return from_template(tokenizer, record), None
        except (SpanError, BoundaryError) as exc:
            return [], f"the chat template of --tokenizer does not explain this record's tokens: {exc}"
    if record.tokens:
        spans = from_headers(record.tokens)
        if spans:
            return spans, None
        return [], "no spans in the record, and its token texts have no ChatML or Llama 3 headers: give --tokenizer DIR to read its chat template"
    return [], "no spans and no token texts in the record: give --tokenizer DIR to read its chat template"


def from_template(tokenizer: Any, record: Trajectory) -> list[dict[str, Any]]:
    """The spans of the record's response as the template renders its messages (see the module docstring).
    The prompt holds the messages before the first assistant one."""
    boundary = probe(tokenizer)
    ids, messages = record.response_ids or [], record.messages
    first = next((index for index, message in enumerate(messages) if message.get("role") == "assistant"), None)
    if first is None:
        raise SpanError("the record has no assistant message to find its turns by")
    spans: list[dict[str, Any]] = []
    position, turn = 0, 0
    for role, group in _runs(messages[first:]):
        if position >= len(ids):
            break
        if role == "assistant":
            for _ in group:
                turn += 1
                stop = next((index for index in range(position, len(ids)) if ids[index] in boundary.stop_ids), len(ids) - 1)
                spans.append({"start": position, "end": stop + 1, "role": "assistant"})
                position = stop + 1
                glue = list(boundary.glue)
                if glue and ids[position : position + len(glue)] == glue:
                    spans.append({"start": position, "end": position + len(glue), "role": "glue"})
                    position += len(glue)
            continue
        expected = delta_ids(tokenizer, boundary, group, record.tools)
        if boundary.opens_next and position > 0 and expected[:1] == ids[position - 1 : position]:
            expected = expected[1:]  # the model sampled this header as its stop (GLM's <|observation|>), as the cache appends it
        found = ids[position : position + len(expected)]
        if found != expected[: len(found)]:
            at = position + next(index for index, (a, b) in enumerate(zip(found, expected)) if a != b)
            raise SpanError(f"response position {at} is not the template's rendering of the {role} message(s) after model turn {turn}")
        spans.append({"start": position, "end": position + len(found), "role": role})
        position += len(found)
    if position < len(ids):
        raise SpanError(f"{len(ids) - position} response token(s) from position {position} follow the last message the record holds")
    return spans


def _runs(messages: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Consecutive messages grouped: each assistant run, and each run of the others (as the loop appends
    them together), named by their roles ("tool", "user", "tool+user")."""
    runs: list[tuple[str, list[dict[str, Any]]]] = []
    for message in messages:
        sampled = message.get("role") == "assistant"
        if runs and (runs[-1][0] == "assistant") == sampled:
            runs[-1][1].append(message)
        else:
            runs.append(("assistant" if sampled else "", [message]))
    return [(role or "+".join(dict.fromkeys(str(m.get("role")) for m in group)), group) for role, group in runs]


def from_headers(tokens: list[str]) -> list[dict[str, Any]]:
    """The message spans read from ChatML / Llama 3 headers in the token texts; empty where there are none."""
    spans: list[dict[str, Any]] = []
    index = 0
    while index < len(tokens):
        closing = HEADERS.get(tokens[index].strip())
        if closing is None:
            index += 1
            continue
        role, cursor = "", index + 1
        while cursor < len(tokens) and closing not in tokens[cursor] and len(role) < 40:
            role += tokens[cursor]
            cursor += 1
        if cursor < len(tokens):  # the closing token may carry the role's end ("user\n")
            role += tokens[cursor].split(closing)[0]
        if spans:
            spans[-1]["end"] = index
        spans.append({"start": index, "end": len(tokens), "role": role.strip() or "unknown"})
        index = cursor + 1
    return spans
