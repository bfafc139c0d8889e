"""The gateway over HTTP with real clients (the `openai` SDK, Anthropic's wire format) and scripted
harness behaviours: each divergence a real harness shows (reformatted or edited history, compaction,
a sub-agent, two requests at once, a changed tool list, a rewritten last turn, length budgets) gives
the documented chain split, and in every chain mask 1 sits exactly on tokens the engine sampled, with
its logprobs, where the engine was conditioned on exactly the recorded tokens before them.

Faked: only the engine, `TokenServer` (a tiny random-weights model with the real Qwen2.5 tokenizer
replaying scripted turns, their logprobs scored by the model), as in the verl tests."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx
import pytest
from openai import AsyncOpenAI, BadRequestError

from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym.gateway.server import Gateway, RunningServer
from uni_agent_gym.gateway.session import Limits
from uni_agent_gym.tokens.boundary import render

pytestmark = pytest.mark.slow  # a sampling model behind the gateway's HTTP endpoints: not in make test-fast

BASH = {"type": "function", "function": {"name": "bash", "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}  # fmt: skip
EDIT = {"type": "function", "function": {"name": "edit", "description": "Edit a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}  # fmt: skip
TASK = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix the parser."}]


def step(turn: int, repo_dir: str | None = None) -> str:
    """The scripted model: a short thought and one bash call per turn."""
    return f'Step {turn}.\n<tool_call>\n{{"name": "bash", "arguments": {{"command": "echo {turn}", "verbose": true}}}}\n</tool_call>'


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory.mktemp("model"))


@pytest.fixture
def engine(model_dir) -> TokenServer:
    return TokenServer(model_dir, step)


@contextlib.asynccontextmanager
async def serving(engine, backend=None, **options):
    gateway = Gateway(engine.tokenizer, backend or engine, **options)
    server = await RunningServer(gateway.app).start()
    try:
        yield gateway, server.url
    finally:
        await server.stop()


_clients: list[AsyncOpenAI] = []


def client(url: str, session: str = "s") -> AsyncOpenAI:
    """An OpenAI SDK client on one session (closed after the test)."""
    _clients.append(AsyncOpenAI(base_url=f"{url}/sessions/{session}/v1", api_key="any", max_retries=0))
    return _clients[-1]


@pytest.fixture(autouse=True)
async def close_clients():
    yield
    while _clients:
        await _clients.pop().close()


async def ask(openai: AsyncOpenAI, messages: list[dict], tools=(BASH,), **options) -> dict:
    """One request; the assistant message exactly as the SDK hands it to a harness."""
    response = await openai.chat.completions.create(model="policy", messages=messages, tools=list(tools), **options)
    return response.choices[0].message.model_dump()


def observe(assistant: dict, output: str) -> dict:
    return {"role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"], "content": output}


async def play(openai: AsyncOpenAI, turns: int, messages: list[dict] | None = None, tools=(BASH,)) -> list[dict]:
    """A harness loop: ask, run the call, send its output back; returns the history."""
    messages = list(messages or TASK)
    for _ in range(turns):
        assistant = await ask(openai, messages, tools)
        messages += [assistant, observe(assistant, f"ran {assistant['tool_calls'][0]['function']['arguments']}")]
    return messages


def spans(mask: list[int]) -> list[tuple[int, int]]:
    found, start = [], None
    for index, value in enumerate([*mask, 0]):
        if value and start is None:
            start = index
        elif not value and start is not None:
            found.append((start, index))
            start = None
    return found


def check_exact(records: list[dict], calls: list[dict]) -> int:
    """Every mask-1 span is one engine call: its tokens and logprobs, right after exactly the prompt the
    engine was given. Returns how many sampled turns the chains hold."""
    kept = 0
    for record in records:
        full, offset = record["prompt_ids"] + record["response_ids"], len(record["prompt_ids"])
        assert len(record["response_mask"]) == len(record["response_ids"]) == len(record["response_logprobs"])
        assert all(value == 0.0 for value, bit in zip(record["response_logprobs"], record["response_mask"]) if not bit)
        sampled = spans(record["response_mask"])
        for start, end in sampled:
            matches = [call for call in calls if call["prompt_ids"] == full[: offset + start] and call["ids"] == full[offset + start : offset + end]]
            assert matches, f"chain {record['chain']}: tokens {start}:{end} are not what the engine sampled there"
            assert record["response_logprobs"][start:end] == pytest.approx(matches[0]["logprobs"])
        assert len(sampled) == record["num_turns"]
        kept += len(sampled)
    return kept


async def test_a_harness_that_extends_its_history_is_one_chain_equal_to_the_template(engine):
    async with serving(engine) as (gateway, url):
        messages = await play(client(url), 3)
        session = gateway.sessions["s"]
        (record,) = session.records()
    assert record["started_by"] == "start" and record["num_turns"] == 3 and record["finish_reason"] == "tool_calls"
    assert check_exact([record], engine.calls) == 3
    # the chat template's own rendering of what the client sent (prefix-stable Qwen2.5), minus the glue after the last turn
    internal = record["messages"]
    rendered = render(engine.tokenizer, internal, tools=[BASH], generation_prompt=False)
    assert record["prompt_ids"] + record["response_ids"] == rendered[: len(rendered) - len(session.boundary.glue)]
    assert [message["role"] for message in internal] == [m["role"] for m in messages[:-1]]
    assert internal[2]["tool_calls"] == [{"type": "function", "function": {"name": "bash", "arguments": {"command": "echo 0", "verbose": True}}}]


async def test_history_reformatted_within_canonicalisation_stays_one_chain(engine):
    """A harness that re-serialises its history (new tool-call ids, argument JSON with other spacing and
    key order, null content, extra fields, names on tool results, text parts) still extends the chain."""
    async with serving(engine) as (gateway, url):
        openai = client(url)
        messages = await play(openai, 2)
        for message in messages:
            if message["role"] == "assistant":
                call = message["tool_calls"][0]
                arguments = json.loads(call["function"]["arguments"])
                call["id"] = "call_renamed"
                call["function"]["arguments"] = json.dumps(dict(reversed(list(arguments.items()))), separators=(",", ":"))
                message["content"] = [{"type": "text", "text": message["content"]}]
                message["provider_specific_fields"] = {"x": 1}
            elif message["role"] == "tool":
                message.update(tool_call_id="call_renamed", name="bash", content=[{"type": "text", "text": message["content"] + "\n"}])
        await ask(openai, messages)
        records = gateway.sessions["s"].records()
    assert [record["started_by"] for record in records] == ["start"] and records[0]["num_turns"] == 3
    check_exact(records, engine.calls)


def edit_old_output(messages):
    return [*messages[:3], {**messages[3], "content": "an edited observation"}, *messages[4:]]


def compact(messages):
    return [*TASK, {"role": "user", "content": "Summary of the work so far: ran echo 0 and echo 1."}]


def sub_agent(messages):
    return [{"role": "system", "content": "You are a search sub-agent."}, {"role": "user", "content": "Find parse()."}]


def inject_turn(messages):
    return [*messages, {"role": "assistant", "content": "A turn the engine never sampled."}, {"role": "user", "content": "Go on."}]


@pytest.mark.parametrize(
    "diverge, tools, reason",
    [
        (edit_old_output, (BASH,), "history_changed"),
        (compact, (BASH,), "history_changed"),
        (sub_agent, (BASH,), "new_conversation"),
        (lambda messages: messages, (BASH, EDIT), "tools_changed"),
        (inject_turn, (BASH,), "not_appendable"),
    ],
    ids=["edited-observation", "compaction", "sub-agent", "changed-tools", "unsampled-assistant-turn"],
)
async def test_a_divergent_history_starts_a_new_chain_that_later_requests_extend(engine, diverge, tools, reason):
    async with serving(engine) as (gateway, url):
        openai = client(url)
        messages = diverge(await play(openai, 2))
        await play(openai, 2, messages, tools)  # the new history, continued for two turns
        records = gateway.sessions["s"].records()
    assert [record["started_by"] for record in records] == ["start", reason]
    assert [record["num_turns"] for record in records] == [2, 2]
    assert check_exact(records, engine.calls) == 4 == len(engine.calls)


async def test_two_requests_at_once_split_into_two_chains_each_continued(engine):
    """A harness that sends its next request before the first one's answer (parallel sampling, a retry
    on a slow response): the second becomes a branch, and each conversation then extends its own chain."""
    async with serving(engine) as (gateway, url):
        openai = client(url)
        first, second = await asyncio.gather(ask(openai, TASK), ask(openai, TASK))
        histories = [[*TASK, assistant, observe(assistant, "ok")] for assistant in (first, second)]
        await asyncio.gather(*(play(openai, 1, history) for history in histories))
        records = gateway.sessions["s"].records()
    assert sorted(record["started_by"] for record in records) == ["branch", "start"]
    assert [record["num_turns"] for record in records] == [2, 2]
    assert check_exact(records, engine.calls) == 4 == len(engine.calls)


async def test_a_rewritten_last_turn_is_rolled_back_and_kept_as_context(engine):
    """The client shows the model a shortened version of its last turn: that sampled turn is taken out
    of the chain (mask 1 only on what the client kept), the rewrite goes in as context (mask 0)."""
    async with serving(engine) as (gateway, url):
        openai = client(url)
        messages = await play(openai, 2)
        messages[-2] = {**messages[-2], "content": "Shortened."}
        await ask(openai, messages)
        session = gateway.sessions["s"]
        (record,) = session.records()
    assert record["started_by"] == "start" and record["rollbacks"] == 1 and record["num_turns"] == 2
    assert check_exact([record], engine.calls) == 2
    rolled_back = engine.calls[1]["ids"]
    full = record["prompt_ids"] + record["response_ids"]
    assert not any(full[i : i + len(rolled_back)] == rolled_back for i in range(len(full))), "the rolled-back turn is gone"
    assert "Shortened." in engine.tokenizer.decode(full) and record["messages"][4]["content"] == "Shortened."


async def test_anthropic_messages_with_tool_use_are_one_chain_and_stream(engine):
    """Anthropic's wire format: tool_use out, tool_result back in, text and tool-use blocks, SSE events."""
    tools = [{"name": "bash", "description": "Run a command", "input_schema": BASH["function"]["parameters"]}]
    body = {"model": "policy", "max_tokens": 256, "system": "You fix bugs.", "tools": tools,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Fix the parser."}]}]}  # fmt: skip
    async with serving(engine) as (gateway, url), httpx.AsyncClient(base_url=f"{url}/sessions/a") as http:
        for turn in range(2):
            reply = (await http.post("/v1/messages", json=body)).json()
            assert reply["type"] == "message" and reply["stop_reason"] == "tool_use"
            text, use = reply["content"]
            assert text == {"type": "text", "text": f"Step {turn}."} and use["name"] == "bash"
            assert use["input"] == {"command": f"echo {turn}", "verbose": True} and use["id"].startswith("toolu_")
            body["messages"] += [{"role": "assistant", "content": reply["content"]},
                                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "ok"}]}]  # fmt: skip
        async with http.stream("POST", "/v1/messages", json={**body, "stream": True}) as streamed:
            events = [json.loads(line[6:]) for line in [line async for line in streamed.aiter_lines()] if line.startswith("data: ")]
        records = gateway.sessions["a"].records()
    assert [event["type"] for event in events] == ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
                                                   "content_block_start", "content_block_delta", "content_block_stop",
                                                   "message_delta", "message_stop"]  # fmt: skip
    assert json.loads(events[5]["delta"]["partial_json"]) == {"command": "echo 2", "verbose": True}
    assert events[7]["delta"]["stop_reason"] == "tool_use"
    assert [record["started_by"] for record in records] == ["start"] and records[0]["num_turns"] == 3
    assert records[0]["messages"][3] == {"role": "tool", "content": "ok"}
    check_exact(records, engine.calls)


async def test_a_real_anthropic_client_is_one_chain(engine, monkeypatch):
    """litellm's Anthropic provider (what mini-swe-agent uses for Claude models) speaks the Anthropic
    wire format to the gateway: tool_use out, tool_result back, one chain."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm fetches its price list from GitHub otherwise
    import litellm  # mini-swe-agent's dependency, in the [dev] extra
    async with serving(engine) as (gateway, url):
        messages = list(TASK)
        for turn in range(2):
            reply = await litellm.acompletion(model="anthropic/policy", api_base=f"{url}/sessions/a", api_key="any", messages=messages,
                                              tools=[BASH], max_tokens=256)  # fmt: skip
            message = reply.choices[0].message
            assert message.content == f"Step {turn}." and json.loads(message.tool_calls[0].function.arguments)["command"] == f"echo {turn}"
            messages += [message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "ok"}]
        records = gateway.sessions["a"].records()
    assert [(record["started_by"], record["num_turns"]) for record in records] == [("start", 2)]
    check_exact(records, engine.calls)


async def test_streamed_chat_completions_carry_the_same_turn(engine):
    async with serving(engine) as (gateway, url):
        openai = client(url)
        stream = await openai.chat.completions.create(model="policy", messages=TASK, tools=[BASH], stream=True,
                                                      stream_options={"include_usage": True})  # fmt: skip
        chunks = [chunk async for chunk in stream]
        call = chunks[2].choices[0].delta.tool_calls[0]
        assistant = {"role": "assistant", "content": chunks[1].choices[0].delta.content,
                     "tool_calls": [{"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}]}  # fmt: skip
        await play(openai, 1, [*TASK, assistant, observe(assistant, "ok")])
        records = gateway.sessions["s"].records()
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[1].choices[0].delta.content == "Step 0."
    assert chunks[3].choices[0].finish_reason == "tool_calls" and chunks[4].usage.completion_tokens == len(engine.calls[0]["ids"])
    assert [record["num_turns"] for record in records] == [2]


async def test_length_budgets_end_a_chain(engine):
    """The chain's response budget runs out mid-turn: finish_reason length, the chain closed; the harness
    goes on and its next history cannot fit a new chain either (prompt budget): length, nothing sampled."""
    prompt_tokens = len(render(engine.tokenizer, TASK, tools=[BASH], generation_prompt=True))
    limits = Limits(max_model_len=4096, max_prompt_length=prompt_tokens + 40, max_response_length=60, max_tokens_per_turn=64)
    async with serving(engine, limits=limits) as (gateway, url):
        openai = client(url)
        finishes = []
        messages = list(TASK)
        for _ in range(3):
            response = await openai.chat.completions.create(model="policy", messages=messages, tools=[BASH])
            choice = response.choices[0]
            finishes.append(choice.finish_reason)
            message = choice.message.model_dump()
            messages += [message, {"role": "user", "content": "continue"}]
        records = gateway.sessions["s"].records()
    assert finishes == ["tool_calls", "length", "length"]
    (record,) = records
    assert record["finish_reason"] == "length" and len(record["response_ids"]) == 60 and record["num_turns"] == 2
    check_exact(records, engine.calls)
    assert len(engine.calls) == 2, "no engine call once no budget is left"


OPENAI_REFUSALS = [
    ({"n": 2}, "n=2 is not supported"),
    ({"tool_choice": "required"}, "tool_choice 'required' is not supported"),
    ({"tool_choice": {"type": "function", "function": {"name": "bash"}}}, "forcing a tool call changes what the model samples"),
    ({"response_format": {"type": "json_object"}}, "response_format is not supported"),
    ({"logprobs": True}, "logprobs are not returned"),
    ({"max_tokens": 0}, "max_tokens: expects a whole number of at least 1, got 0"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}, "only text content is supported"),
    ({"messages": []}, "messages: expects a non-empty list"),
    ({"messages": [{"role": "function", "content": "x"}]}, "expects a role among system, developer, user, assistant, tool, got 'function'"),
]  # fmt: skip
ANTHROPIC_REFUSALS = [
    ({"tool_choice": {"type": "any"}}, "tool_choice {'type': 'any'} is not supported"),
    ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, "thinking is not supported"),
    ({"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]}, "user blocks of type 'image' are not supported"),
]


@pytest.mark.parametrize("change, expected", OPENAI_REFUSALS, ids=[expected[:30] for _, expected in OPENAI_REFUSALS])
async def test_unsupported_openai_requests_get_a_clear_400_and_change_nothing(engine, change, expected):
    async with serving(engine) as (gateway, url):
        with pytest.raises(BadRequestError) as refused:
            await client(url).chat.completions.create(**{"model": "policy", "messages": TASK, "tools": [BASH], **change})
        assert refused.value.status_code == 400 and expected in refused.value.body["message"]
        assert "s" not in gateway.sessions and not engine.calls


@pytest.mark.parametrize("change, expected", ANTHROPIC_REFUSALS, ids=[expected[:30] for _, expected in ANTHROPIC_REFUSALS])
async def test_unsupported_anthropic_requests_get_a_clear_400(engine, change, expected):
    body = {"model": "policy", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}], **change}
    async with serving(engine) as (gateway, url), httpx.AsyncClient() as http:
        response = await http.post(f"{url}/sessions/a/v1/messages", json=body)
    assert response.status_code == 400 and response.json()["type"] == "error"
    assert expected in response.json()["error"]["message"] and not engine.calls


async def test_a_body_that_is_not_json_is_a_400(engine):
    async with serving(engine) as (gateway, url), httpx.AsyncClient() as http:
        response = await http.post(f"{url}/sessions/s/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 400 and "the body is not JSON" in response.json()["error"]["message"]



async def test_a_body_only_the_stdlib_reads_is_served_as_the_stdlib_reads_it(engine):
    """The fast JSON parser refuses a lone surrogate; Python's json takes it, so the request is served."""
    body = b'{"model": "policy", "messages": [{"role": "user", "content": "hi"}], "stop": ["\\ud800"]}'
    async with serving(engine) as (gateway, url), httpx.AsyncClient() as http:
        response = await http.post(f"{url}/sessions/s/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    assert engine.calls[0]["sampling_params"]["stop"] == ["\ud800"]


@pytest.mark.parametrize("seed", [2**64, 1.5, True])
async def test_a_seed_that_is_not_a_64_bit_whole_number_is_a_400(engine, seed):
    async with serving(engine) as (gateway, url), httpx.AsyncClient() as http:
        body = {"model": "policy", "messages": [{"role": "user", "content": "hi"}], "seed": seed}
        response = await http.post(f"{url}/sessions/s/v1/chat/completions", json=body)
    assert response.status_code == 400 and "seed: expects a whole number that fits in 64 bits" in response.json()["error"]["message"]
    assert not engine.calls


class FailingOnce:
    """An engine whose first call fails (a server restarting), then answers as `engine`."""

    def __init__(self, engine: TokenServer) -> None:
        self.engine, self.failed = engine, False

    async def generate(self, request_id, **kwargs):
        if not self.failed:
            self.failed = True
            raise ConnectionError("server restarting")
        return await self.engine.generate(request_id, **kwargs)


async def test_an_engine_failure_is_an_error_and_leaves_the_session_as_it_was(engine):
    async with serving(engine) as (gateway, url):
        openai = client(url)
        messages = await play(openai, 1)
        gateway.sessions["s"].backend = FailingOnce(engine)
        with pytest.raises(Exception) as failed:
            await ask(openai, messages)
        assert failed.value.status_code == 502 and "ConnectionError: server restarting" in failed.value.body["message"]
        await ask(openai, messages)  # the same request again: it extends the chain as if nothing happened
        records = gateway.sessions["s"].records()
    assert [(record["started_by"], record["num_turns"]) for record in records] == [("start", 2)]
    check_exact(records, engine.calls)


class NoLogprobs:
    def __init__(self, engine: TokenServer) -> None:
        self.engine = engine

    async def generate(self, request_id, **kwargs):
        output = await self.engine.generate(request_id, **kwargs)
        return output.model_copy(update={"log_probs": None})


async def test_logprobs_are_never_invented(engine):
    async with serving(engine, NoLogprobs(engine)) as (gateway, url):
        await play(client(url), 1)
        (record,) = gateway.sessions["s"].records()
    assert record["response_logprobs"] is None and sum(record["response_mask"]) == len(engine.calls[0]["ids"])


async def test_a_closed_gateway_knows_only_the_sessions_it_opened(engine):
    async with serving(engine, auto_open=False) as (gateway, url):
        with pytest.raises(Exception) as unknown:
            await ask(client(url, "nobody"), TASK)
        session = gateway.open_session()
        await ask(client(url, session.session_id), TASK)
        async with httpx.AsyncClient() as http:
            models = (await http.get(f"{url}/sessions/{session.session_id}/v1/models")).json()
            listed = (await http.get(f"{url}/sessions/{session.session_id}/trajectories")).json()
            closed = (await http.delete(f"{url}/sessions/{session.session_id}")).json()
            again = await http.delete(f"{url}/sessions/{session.session_id}")
    assert unknown.value.status_code == 404 and "No session 'nobody'" in unknown.value.body["message"]
    assert models["data"][0]["id"] == "policy"
    assert listed["summary"]["chains"] == 1 and closed["chains"] == listed["chains"] and again.status_code == 404
