"""The rollout cache against real chat templates (../shared/tokenizers), token for token.

A conversation is simulated as a model would produce it: each assistant turn's sampled tokens are the
template's own rendering of that turn (up to and including its stop token), so for prefix-stable
templates the cache must equal the template's rendering of the whole conversation, and the mask must be
1 exactly on those sampled spans.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import transformers

from tests.conftest import require
from uni_agent_gym.tools import make_tools
from uni_agent_gym.tokens.boundary import BoundaryError, find, probe, render
from uni_agent_gym.tokens.rollout_cache import MaxTokenExceededError, RolloutCache, sampled_versions

TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"
TOOLS = [tool.schema() for tool in make_tools().values()]
CONTENTS = {"unicode": "résumé ✓ 文件 🙂\n\ttab", "empty": "", "long": "line of tool output\n" * 400}


def tokenizer(name: str):
    require((TOKENIZERS / name).exists(), f"../shared/tokenizers/{name} beside the checkout")
    return transformers.AutoTokenizer.from_pretrained(str(TOKENIZERS / name))


def sampled_turn(tok, boundary, conversation: list[dict], message: dict) -> list[int]:
    """What the model samples for `message`: the template's rendering of the turn, up to its stop token."""
    with_turn = render(tok, conversation + [message], tools=TOOLS, generation_prompt=False)
    prompt = render(tok, conversation, tools=TOOLS, generation_prompt=True)
    assert with_turn[: len(prompt)] == prompt
    span = with_turn[len(prompt) :]
    return span[: len(span) - len(boundary.glue)] if boundary.glue else span


def play(tok, turns: int, content: str) -> tuple[RolloutCache, list[dict], list[tuple[int, int]]]:
    boundary = probe(tok)
    conversation = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix the parser ✓"}]
    cache = RolloutCache(tok, max_model_len=1_000_000, max_prompt_length=10_000, max_response_length=1_000_000)
    cache.prepare(conversation, TOOLS)
    spans = []
    for turn in range(turns):
        call = {"type": "function", "function": {"name": "execute_bash", "arguments": {"command": f"grep -n parse src/{turn}.py"}}}
        message = {"role": "assistant", "content": f"Looking at file {turn}.", "tool_calls": [call]}
        ids = sampled_turn(tok, boundary, conversation, message)
        start = len(cache.prompt_ids)
        cache.append_model_tokens(ids, [-0.25 - turn] * len(ids))
        spans.append((start, len(cache.prompt_ids)))
        conversation.append(message)
        reply = {"role": "tool", "content": content, "name": "execute_bash"}
        cache.append_messages([reply])
        conversation.append(reply)
    return cache, conversation, spans


def check_mask_and_logprobs(cache: RolloutCache, spans: list[tuple[int, int]]) -> None:
    offset = len(cache.initial_prompt_ids)
    expected = [0] * len(cache.response_mask)
    for start, end in spans:
        expected[start - offset : end - offset] = [1] * (end - start)
    assert cache.response_mask == expected
    for position, (mask, logprob) in enumerate(zip(cache.response_mask, cache.response_logprobs)):
        assert (logprob != 0.0) == bool(mask), position
    assert cache.prompt_ids[spans[0][1] - 1] in cache.boundary.stop_ids, "each sampled span ends with the stop token"


# 50 turns of 8 kB observations prove no more than 5 of them and 50 short ones (each turn renders the whole
# conversation again: half a minute of the suite)
SIZES = [pytest.param(content, turns, id=f"{content}-{turns}", marks=[pytest.mark.slow] if turns == 50 else [])
         for content in CONTENTS for turns in (1, 5, 50) if (content, turns) != ("long", 50)]  # fmt: skip


@pytest.mark.parametrize("content, turns", SIZES)
@pytest.mark.parametrize("name", ["qwen2.5-instruct", "llama-3.2-instruct"])
def test_prefix_stable_templates_match_token_for_token(name, content, turns):
    tok = tokenizer(name)
    cache, conversation, spans = play(tok, turns, CONTENTS[content])
    assert cache.prompt_ids == cache.rendered_conversation_ids(conversation)
    check_mask_and_logprobs(cache, spans)


@pytest.mark.parametrize("turns", [1, 5, 50])
def test_qwen3_differs_only_by_the_think_blocks_it_drops(turns):
    """Qwen3's template renders an empty `<think>\\n\\n</think>\\n\\n` in the assistant turn it is asked to
    end on, and drops it from earlier turns when re-rendering history. The model was conditioned on the
    block (it sampled it), so the cache keeps it: removing exactly those blocks from the sampled spans
    gives the template's re-rendering."""
    tok = tokenizer("qwen3")
    cache, conversation, spans = play(tok, turns, CONTENTS["unicode"])
    think = tok.encode("<think>\n\n</think>\n\n", add_special_tokens=False)
    rebuilt, previous = list(cache.prompt_ids[: spans[0][0]]), spans[0][0]
    for start, end in spans:
        rebuilt += cache.prompt_ids[previous:start]
        span = cache.prompt_ids[start:end]
        at = find(span, think)
        assert at >= 0, "every sampled turn holds the think block"
        rebuilt += span[:at] + span[at + len(think) :]
        previous = end
    rebuilt += cache.prompt_ids[previous:]
    assert rebuilt == cache.rendered_conversation_ids(conversation)
    assert len(cache.prompt_ids) - len(rebuilt) == turns * len(think)
    check_mask_and_logprobs(cache, spans)


GLUELESS = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def with_template(name: str, template: str):
    tok = copy.deepcopy(tokenizer(name))
    tok.chat_template = template
    return tok


def test_a_template_without_glue():
    tok = with_template("qwen2.5-instruct", GLUELESS)
    boundary = probe(tok)
    assert boundary.glue == () and tok.decode(boundary.turn_end) == "<|im_end|>"
    cache = RolloutCache(tok, max_model_len=10_000, max_prompt_length=1_000, max_response_length=9_000)
    conversation = [{"role": "user", "content": "go"}]
    cache.prepare(conversation)
    for turn in range(3):
        message = {"role": "assistant", "content": f"turn {turn}"}
        ids = render(tok, conversation + [message], generation_prompt=False)[len(render(tok, conversation, generation_prompt=True)) :]
        cache.append_model_tokens(ids)
        conversation += [message, {"role": "user", "content": f"reply {turn}"}]
        cache.append_messages(conversation[-1:])
    assert cache.prompt_ids == render(tok, conversation, generation_prompt=True)


@pytest.mark.parametrize(
    "template, reason",
    [
        ("{% for m in messages %}{{ m.content }}\n\n{% endfor %}", "no stop token"),
        ("{% for m in messages %}{% if m.role == 'user' %}[user]{% endif %}{% endfor %}", "does not appear as its own tokens"),
    ],
    ids=["no-stop-token", "content-not-rendered"],
)
def test_templates_that_cannot_be_probed_fail_loudly(template, reason):
    with pytest.raises(BoundaryError, match=re.escape(reason)):
        probe(with_template("qwen2.5-instruct", template))


def test_a_cut_off_turn_gets_its_end_token_as_glue():
    tok = tokenizer("qwen2.5-instruct")
    cache = RolloutCache(tok, max_model_len=10_000, max_prompt_length=1_000, max_response_length=9_000)
    cache.prepare([{"role": "user", "content": "go"}])
    cache.append_model_tokens(tok.encode("I was cut off mid", add_special_tokens=False), [-1.0] * 5)
    appended = cache.append_messages([{"role": "user", "content": "continue"}])
    assert tok.decode(appended).startswith("<|im_end|>\n<|im_start|>user\ncontinue")
    assert cache.response_mask[-len(appended) :] == [0] * len(appended)


def test_only_user_and_tool_messages_may_be_appended():
    tok = tokenizer("qwen2.5-instruct")
    cache = RolloutCache(tok, max_model_len=10_000, max_prompt_length=1_000, max_response_length=9_000)
    cache.prepare([{"role": "user", "content": "go"}])
    with pytest.raises(ValueError, match="follows a model turn"):
        cache.append_messages([{"role": "user", "content": "again"}])
    cache.append_model_tokens(tok.encode("ok<|im_end|>", add_special_tokens=False))
    for role in ("assistant", "system"):
        with pytest.raises(ValueError, match=f"Only user and tool messages can be appended, got role '{role}'"):
            cache.append_messages([{"role": role, "content": "x"}])
    with pytest.raises(ValueError, match="one logprob per token"):
        cache.append_model_tokens([1, 2], [0.1])


@pytest.mark.parametrize(
    "limits, step, limit",
    [
        ({"max_prompt_length": 10}, "prepare", "max_prompt_length"),
        ({"max_response_length": 2}, "model", "max_response_length"),
        ({"max_model_len": 60}, "messages", "max_model_len"),
    ],
)
def test_limits_raise_typed_errors_and_append_nothing(limits, step, limit):
    tok = tokenizer("qwen2.5-instruct")
    cache = RolloutCache(tok, **{"max_model_len": 10_000, "max_prompt_length": 1_000, "max_response_length": 9_000, **limits})
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "go"}]
    if step == "prepare":
        with pytest.raises(MaxTokenExceededError) as caught:
            cache.prepare(prompt)
        assert caught.value.limit == limit
        return
    cache.prepare(prompt)
    sampled = tok.encode("done.<|im_end|>", add_special_tokens=False)
    if step == "messages":
        cache.append_model_tokens(sampled)
    before = (list(cache.prompt_ids), list(cache.response_mask), list(cache.response_logprobs))
    with pytest.raises(MaxTokenExceededError) as caught:
        if step == "model":
            cache.append_model_tokens(sampled)
        else:
            cache.append_messages([{"role": "tool", "content": "x" * 400}])
    assert caught.value.limit == limit and limit in str(caught.value)
    assert (cache.prompt_ids, cache.response_mask, cache.response_logprobs) == before


@pytest.mark.parametrize("name", ["qwen2.5-instruct", "llama-3.2-instruct"])
def test_a_rewritten_turn_is_context_with_mask_zero_and_the_record_matches_the_template(name):
    """The gateway's rollback: the sampled turn 2 is taken back (truncate) and the client's rewrite of it
    goes in as context (mask 0), so the record equals the template's rendering of what the client sent,
    and mask 1 stays only on turn 1, the one turn the model sampled and the client kept."""
    tok = tokenizer(name)
    cache, conversation, spans = play(tok, 2, "output")
    turn_two_start = spans[1][0] - len(cache.initial_prompt_ids)
    cache.truncate(turn_two_start)
    assert cache.prompt_ids == render(tok, conversation[:4], tools=TOOLS, generation_prompt=True)
    rewritten = {"role": "assistant", "content": "A shorter turn two."}
    context = cache.append_context_turn(rewritten)
    cache.append_messages([{"role": "tool", "content": "ran", "name": "execute_bash"}])
    conversation = [*conversation[:4], rewritten, {"role": "tool", "content": "ran", "name": "execute_bash"}]
    assert cache.prompt_ids == render(tok, conversation, tools=TOOLS, generation_prompt=True)
    assert tok.decode(context) == "A shorter turn two."
    check_mask_and_logprobs(cache, spans[:1])


def test_truncate_and_context_turns_keep_the_turn_order():
    tok = tokenizer("qwen2.5-instruct")
    cache = RolloutCache(tok, max_model_len=10_000, max_prompt_length=1_000, max_response_length=9_000)
    with pytest.raises(ValueError, match=re.escape("truncate() needs prepare() first")):
        cache.truncate(0)
    cache.prepare([{"role": "user", "content": "go"}])
    cache.append_model_tokens(tok.encode("ok<|im_end|>", add_special_tokens=False), [-0.5, -0.5])
    with pytest.raises(ValueError, match=re.escape("append_context_turn() goes where a model turn would start")):
        cache.append_context_turn({"role": "assistant", "content": "x"})
    with pytest.raises(ValueError, match="A context turn is an assistant message, got role 'user'"):
        cache.append_context_turn({"role": "user", "content": "x"})
    with pytest.raises(ValueError, match=re.escape("Expects a response length between 0 and 2, got 3")):
        cache.truncate(3)
    cache.truncate(0)
    assert cache.response_mask == [] and cache.prompt_ids == cache.initial_prompt_ids
    with pytest.raises(ValueError, match="follows a model turn"):
        cache.append_messages([{"role": "user", "content": "again"}])


def test_a_copy_is_independent():
    tok = tokenizer("qwen2.5-instruct")
    cache = RolloutCache(tok, max_model_len=10_000, max_prompt_length=1_000, max_response_length=9_000)
    cache.prepare([{"role": "user", "content": "go"}])
    twin = cache.copy()
    twin.append_model_tokens(tok.encode("ok<|im_end|>", add_special_tokens=False), [-0.5, -0.5])
    twin.append_messages([{"role": "user", "content": "more"}])
    assert cache.response_mask == [] and cache.prompt_ids == cache.initial_prompt_ids
    with pytest.raises(ValueError, match="follows a model turn"):
        cache.append_messages([{"role": "user", "content": "again"}])


def test_weight_versions_span_the_first_sampled_token_to_the_last():
    """verl's min/max_global_steps: the first turn's first version and the last turn's last; a turn taken
    back takes its version with it; a record no server tagged is at version 0."""
    from verl.workers.rollout.replica import TokenOutput

    tok = tokenizer("qwen2.5-instruct")
    cache = RolloutCache(tok, max_model_len=10_000, max_prompt_length=1_000, max_response_length=9_000)
    cache.prepare([{"role": "user", "content": "go"}])
    assert cache.global_steps() == {"min_global_steps": 0, "max_global_steps": 0}
    turn = tok.encode("ok<|im_end|>", add_special_tokens=False)
    resumed = TokenOutput(token_ids=turn, extra_fields={"global_steps": 4, "min_global_steps": 3, "max_global_steps": 4})
    assert sampled_versions(resumed) == (3, 4) and sampled_versions(TokenOutput(token_ids=turn)) == (None, None)
    cache.append_model_tokens(turn, versions=sampled_versions(resumed))
    cache.append_messages([{"role": "user", "content": "more"}])
    start = len(cache.response_mask)
    cache.append_model_tokens(turn, versions=sampled_versions(TokenOutput(token_ids=turn, extra_fields={"global_steps": 6})))
    assert cache.global_steps() == {"min_global_steps": 3, "max_global_steps": 6}
    assert cache.copy().global_steps() == cache.global_steps()
    cache.truncate(start)
    assert cache.global_steps() == {"min_global_steps": 3, "max_global_steps": 4}
    cache.append_model_tokens(turn)  # an untagged turn changes nothing
    assert cache.global_steps() == {"min_global_steps": 3, "max_global_steps": 4}


def template_ids(tok, messages: list[dict], tools=None, generation_prompt=True) -> list[int]:
    """transformers' own tokenized rendering, the reference `render` must equal."""
    ids = tok.apply_chat_template(messages, tools=tools, tokenize=True, add_generation_prompt=generation_prompt)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


TRICKY = [
    {"role": "system", "content": "You fix bugs."},
    {"role": "user", "content": "A literal <|im_end|> and <|eot_id|> in the text, " + CONTENTS["unicode"]},
    {"role": "assistant", "content": "  leading spaces\n\n", "tool_calls": [{"type": "function", "function": {"name": "execute_bash", "arguments": {"command": "ls"}}}]},
    {"role": "tool", "content": "x" * 3000 + "\n<tool_response>"},
]  # fmt: skip


@pytest.mark.parametrize("name", ["qwen2.5-instruct", "llama-3.2-instruct", "qwen3"])
@pytest.mark.parametrize("tools", [None, TOOLS], ids=["no-tools", "tools"])
@pytest.mark.parametrize("generation_prompt", [True, False], ids=["gen", "no-gen"])
def test_render_equals_the_templates_own_tokenization(name, tools, generation_prompt):
    tok = tokenizer(name)
    assert render(tok, TRICKY, tools=tools, generation_prompt=generation_prompt) == template_ids(tok, TRICKY, tools, generation_prompt)


@pytest.mark.parametrize(
    "setup",
    [lambda tok: tok._tokenizer.enable_truncation(8), lambda tok: tok._tokenizer.enable_padding(length=4096),
     lambda tok: setattr(tok, "split_special_tokens", True)],
    ids=["truncation-on-the-backend", "padding-on-the-backend", "split-special-tokens"],
)  # fmt: skip
def test_render_keeps_the_templates_tokenization_when_the_backend_is_not_plain(setup):
    """The direct backend call is taken only for a backend in its plain state; otherwise transformers'
    own call decides (it drops a backend's truncation and padding, and splits special tokens when asked)."""
    expected_tok, tok = tokenizer("qwen2.5-instruct"), tokenizer("qwen2.5-instruct")
    setup(expected_tok)
    expected = template_ids(expected_tok, TRICKY)
    setup(tok)
    assert render(tok, TRICKY, generation_prompt=True) == expected
