"""The flags that mean a token record would ruin the loss, found before the trainer sees it: a sampled
(mask 1) token where the model did not speak, masks or logprobs that do not line up with the ids, and a
logprob of exactly 0.0 on a sampled token (the placeholder written for mask-0 tokens, so the importance
ratio of that token is computed against nothing).

Two things are said without a flag: a record whose sampled tokens all have logprob 0.0 holds no logprobs
at all (the server returned none, as `probe`'s scripted tokens do: placeholders, nothing to check), and a
record whose message spans could not be found was not checked for masks (`unchecked` says why).
"""

from __future__ import annotations

import dataclasses
from itertools import compress
from typing import Any

from uni_agent_gym.viewer.records import Trajectory
from uni_agent_gym.viewer.spans import message_spans

PLACEHOLDER_LOGPROBS = (
    "logprobs: every sampled token's logprob is 0.0, the placeholder the rollout cache writes when the server "
    "returns none (as probe's scripted tokens do); this record holds no sampler logprobs to check"
)


@dataclasses.dataclass
class Check:
    """What the checks found in one record; `bad` holds the response positions a flag points at."""

    counts: dict[int, int] = dataclasses.field(default_factory=dict)  # tokens by mask value
    flags: list[str] = dataclasses.field(default_factory=list)
    bad: list[int] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)  # said on the page, not flags
    unchecked: str | None = None  # why the masks could not be checked against message spans
    spans: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        """The kinds of flag raised ("mask", "length", "logprob"), each once."""
        return list(dict.fromkeys(flag.split(":")[0] for flag in self.flags))


def check(record: Trajectory, tokenizer: Any = None) -> Check:
    """The counts by mask and every flag of a token record (an eval trajectory has nothing to check);
    `tokenizer` finds message spans for records without them (see `spans.py`)."""
    found = Check()
    ids, mask, logprobs = record.response_ids, record.response_mask, record.response_logprobs
    if ids is None:
        return found
    mask = mask or []
    ones, zeros = mask.count(1), mask.count(0)
    found.counts = {value: count for value, count in ((1, ones), (0, zeros)) if count}
    odd = [value for value in mask if value not in (0, 1)] if ones + zeros != len(mask) else []
    for value in odd:
        found.counts[value] = found.counts.get(value, 0) + 1
    if len(mask) != len(ids):
        found.flags.append(f"length: response_mask has {len(mask)} entries for {len(ids)} response ids")
    if logprobs is not None and len(logprobs) != len(ids):
        found.flags.append(f"length: response_logprobs has {len(logprobs)} entries for {len(ids)} response ids")
    if record.tokens is not None and len(record.tokens) != len(ids):
        found.flags.append(f"length: tokens has {len(record.tokens)} texts for {len(ids)} response ids")
    if odd:
        found.flags.append(f"mask: values other than 0 and 1: {sorted(set(odd))[:5]}")
    if ones:
        found.spans, found.unchecked = message_spans(record, tokenizer)
    else:
        found.spans = record.spans or []  # nothing sampled: nothing to find spans for
    for span in found.spans:
        if span["role"] == "assistant":
            continue
        sampled = [i for i in range(span["start"], min(span["end"], len(mask))) if mask[i] == 1]
        if sampled:
            found.flags.append(f"mask: {len(sampled)} token(s) of a {span['role']} span (positions {span['start']}-{span['end'] - 1}) "
                               f"have mask 1; the model did not sample them (first at {sampled[0]})")  # fmt: skip
            found.bad += sampled
    if logprobs is not None and ones:
        sampled_logprobs = list(compress(logprobs, (m == 1 for m in mask)))
        if sampled_logprobs and all(value == 0.0 for value in sampled_logprobs):
            found.notes.append(PLACEHOLDER_LOGPROBS)
        elif 0.0 in sampled_logprobs:
            zeros_at = [i for i, (m, lp) in enumerate(zip(mask, logprobs)) if m == 1 and lp == 0.0]
            found.flags.append(f"logprob: {len(zeros_at)} sampled token(s) (mask 1) have logprob exactly 0.0, "
                               f"the placeholder of a mask-0 token (first at {zeros_at[0]})")  # fmt: skip
            found.bad += zeros_at
    found.bad = sorted(set(found.bad))
    return found
