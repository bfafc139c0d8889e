"""The flags that mean a token record would ruin the loss, found before the trainer sees it: a sampled
(mask 1) token where the model did not speak, masks or logprobs that do not line up with the ids, and a
logprob of exactly 0.0 on a sampled token (the placeholder written for mask-0 tokens, so the importance
ratio of that token is computed against nothing).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from uni_agent_gym.viewer.records import Trajectory

# Chat templates' message headers: the token that opens a header and the one that closes it (the role
# lies between). ChatML (Qwen) ends its header at the newline, Llama 3 at `<|end_header_id|>`.
HEADERS = {"<|im_start|>": "\n", "<|start_header_id|>": "<|end_header_id|>"}


@dataclasses.dataclass
class Check:
    """What the checks found in one record; `bad` holds the response positions a flag points at."""

    counts: dict[int, int] = dataclasses.field(default_factory=dict)  # tokens by mask value
    flags: list[str] = dataclasses.field(default_factory=list)
    bad: list[int] = dataclasses.field(default_factory=list)


def spans_of(record: Trajectory) -> list[dict[str, Any]]:
    """The record's own spans, else the message spans read from its token texts' headers, else none."""
    if record.spans is not None:
        return record.spans
    if not record.tokens:
        return []
    spans: list[dict[str, Any]] = []
    index = 0
    tokens = record.tokens
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


def check(record: Trajectory) -> Check:
    """The counts by mask and every flag of a token record (an eval trajectory has nothing to check)."""
    found = Check()
    ids, mask, logprobs = record.response_ids, record.response_mask, record.response_logprobs
    if ids is None:
        return found
    mask = mask or []
    for value in mask:
        found.counts[value] = found.counts.get(value, 0) + 1
    if len(mask) != len(ids):
        found.flags.append(f"length: response_mask has {len(mask)} entries for {len(ids)} response ids")
    if logprobs is not None and len(logprobs) != len(ids):
        found.flags.append(f"length: response_logprobs has {len(logprobs)} entries for {len(ids)} response ids")
    if record.tokens is not None and len(record.tokens) != len(ids):
        found.flags.append(f"length: tokens has {len(record.tokens)} texts for {len(ids)} response ids")
    odd = sorted({value for value in mask if value not in (0, 1)})
    if odd:
        found.flags.append(f"mask: values other than 0 and 1: {odd[:5]}")
    for span in spans_of(record):
        if span["role"] == "assistant":
            continue
        sampled = [i for i in range(span["start"], min(span["end"], len(mask))) if mask[i] == 1]
        if sampled:
            found.flags.append(f"mask: {len(sampled)} token(s) of a {span['role']} span (positions {span['start']}-{span['end'] - 1}) "
                               f"have mask 1; the model did not sample them (first at {sampled[0]})")  # fmt: skip
            found.bad += sampled
    if logprobs is not None:
        zeros = [i for i, (m, lp) in enumerate(zip(mask, logprobs)) if m == 1 and lp == 0.0]
        if zeros:
            found.flags.append(f"logprob: {len(zeros)} sampled token(s) (mask 1) have logprob exactly 0.0, "
                               f"the placeholder of a mask-0 token (first at {zeros[0]})")  # fmt: skip
            found.bad += zeros
    found.bad = sorted(set(found.bad))
    return found
