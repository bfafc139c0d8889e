"""`GatewayAgentLoop.run()` on the built-in toy task in the local sandbox: a black-box harness process
(`tests/gateway_harness.py`, an OpenAI-SDK loop) talks to the worker's gateway; the episode is graded
by the toy's tests; each chain comes back as verl's record, token for token what the engine sampled.

Faked: only the engine, `TokenServer` (scripted turns scored by a tiny random model with the real
Qwen2.5 tokenizer: real tokens, real logprobs)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset

from tests.test_gateway_chains import check_exact
from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym import toy
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.verl.gateway_loop import GatewayAgentLoop, stop_worker_gateway

pytestmark = pytest.mark.slow  # harness processes through the gateway: not in make test-fast

HARNESS = Path(__file__).parent / "gateway_harness.py"
TOY_SAMPLE = {"extra_info": {"index": 0, "instance_id": toy.INSTANCE_ID}, "raw_prompt": []}
FIX = 'I will fix mean().\n<tool_call>\n{"name": "bash", "arguments": {"command": "sed -i \'s/(len(values) - 1)/len(values)/\' stats.py"}}\n</tool_call>'
CHECK = '<tool_call>\n{"name": "bash", "arguments": {"command": "python3 -m unittest test_stats 2>&1 | tail -n 1"}}\n</tool_call>'


def fix_then_stop(turn: int, repo_dir: str | None) -> str:
    return [FIX, CHECK][turn] if turn < 2 else "The tests pass."


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model_dir(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(autouse=True)
async def worker_gateway_stopped():
    yield
    await stop_worker_gateway()


def make_loop(tmp_path: Path, server: TokenServer, harness: dict, *, outputs="auto", trainer: dict | None = None, gym: dict | None = None,
              **entry) -> GatewayAgentLoop:  # fmt: skip
    """A GatewayAgentLoop as verl's worker builds it, with a local-sandbox gym config beside its YAML."""
    (tmp_path / "gym.json").write_text(json.dumps({"deployment": {"type": "local"}, **(gym or {})}))
    loop_yaml = tmp_path / "gateway_agent_loop.yaml"
    loop_yaml.write_text("[]")
    config = OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"prompt_length": 4096, "response_length": 4096, "max_model_len": None,
                                          "agent": {"agent_loop_config_path": str(loop_yaml)}}, "model": {}},
        "data": {"apply_chat_template_kwargs": {}},
        "trainer": trainer or {"use_v1": False},
    })  # fmt: skip
    return GatewayAgentLoop(DictConfigWrap(config), server, server.tokenizer, None, RLHFDataset, DictConfigWrap(config.data),
                            settings="gym.json", name="gateway_agent", harness=harness, outputs=outputs, **entry)  # fmt: skip


def harness(mode: str, **options) -> dict:
    return {"command": f"{sys.executable} {HARNESS} {mode}", **options}


def records_of(outputs) -> list[dict]:
    """verl's outputs in the shape `check_exact` reads."""
    return [{"chain": output.extra_fields["gateway"]["chain"], "prompt_ids": output.prompt_ids, "response_ids": output.response_ids,
             "response_mask": output.response_mask, "response_logprobs": output.response_logprobs,
             "num_turns": sum(1 for a, b in zip([0, *output.response_mask], output.response_mask) if b and not a)}
            for output in outputs]  # fmt: skip


@pytest.mark.parametrize("where", ["host", "sandbox"])
async def test_a_harness_episode_is_graded_and_its_chain_is_exact(tmp_path, model_dir, where):
    server = TokenServer(model_dir, fix_then_stop)
    loop = make_loop(tmp_path, server, harness("react", where=where), sandbox_host="127.0.0.1")
    output = await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)
    extra = output.extra_fields
    assert extra["traj_exit_reason"] == "finished" and not extra["traj_masked"], extra["gateway"]["harness_output"]
    assert output.reward_score == 1.0 and extra["reward_report"]["status"] is None and extra["reward_extra_info"]["chains"] == 1.0
    assert extra["gateway"]["started_by"] == ["start"] and extra["gateway"]["requests"] == 3
    assert check_exact(records_of([output]), server.calls) == 3 == len(server.calls)
    assert "The tests pass." == server.tokenizer.decode(output.response_ids[-len(server.calls[-1]["ids"]) :], skip_special_tokens=True)
    assert all(call["sampling_params"]["temperature"] == 1.0 for call in server.calls), "the trainer's sampling, not the client's"
    assert loop.episode.session.session_id not in loop.episode.gateway.sessions, "the session is closed with the episode"


async def test_every_chain_is_an_output_the_one_that_ended_the_episode_last(tmp_path, model_dir):
    """The harness compacts its history after two turns: two chains, both returned (verl's v1 trainer
    takes a list per sample), the final reward on each, and the chain that ended the episode last."""
    server = TokenServer(model_dir, fix_then_stop)
    loop = make_loop(tmp_path, server, harness("compact"), trainer={"use_v1": True})
    outputs = await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)
    assert isinstance(outputs, list) and len(outputs) == 2
    assert [output.extra_fields["gateway"]["chain_started_by"] for output in outputs] == ["start", "history_changed"]
    assert [output.reward_score for output in outputs] == [1.0, 1.0]
    assert outputs[-1].extra_fields["gateway"]["chain"] == loop.episode.session.last_chain.index == 1
    assert check_exact(records_of(outputs), server.calls) == 3 == len(server.calls)


async def test_each_chain_is_a_record_the_viewer_reads(tmp_path, model_dir):
    """`rollout.trajectory_dir`: one record per chain, the session's, with what verl got of it."""
    from uni_agent_gym.viewer.records import load

    server = TokenServer(model_dir, fix_then_stop)
    loop = make_loop(tmp_path, server, harness("compact"), trainer={"use_v1": True}, gym={"rollout": {"trajectory_dir": str(tmp_path / "records")}})
    outputs = await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)
    records = sorted(load(tmp_path / "records"), key=lambda record: record.source)  # <instance>-<session>-<chain>.json
    assert [(record.kind, record.instance_id, record.exit_reason, record.reward) for record in records] == [("gateway", toy.INSTANCE_ID, "finished", 1.0)] * 2
    assert [record.source.endswith(f"-{loop.episode.session.session_id}-{index}.json") for index, record in enumerate(records)] == [True, True]
    assert [(record.response_ids, record.response_mask) for record in records] == [(o.response_ids, o.response_mask) for o in outputs]
    assert all(record.reward_report["resolved"] and record.messages for record in records)


@pytest.mark.parametrize(
    "mode, options, reason",
    [("fail", {}, "harness_error"), ("hang", {"timeout": 3}, "timeout")],
    ids=["harness-exits-non-zero", "harness-runs-past-its-timeout"],
)
async def test_abnormal_harness_exits_are_masked_and_not_graded(tmp_path, model_dir, mode, options, reason):
    server = TokenServer(model_dir, fix_then_stop)
    loop = make_loop(tmp_path, server, harness(mode, **options))
    output = await asyncio.wait_for(loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE), 300)  # a hang the loop missed fails here
    extra = output.extra_fields
    assert extra["traj_exit_reason"] == reason and extra["traj_masked"] and output.reward_score == 0.0
    assert output.response_ids == [server.stop_id] and output.response_mask == [0] and extra["gateway"]["chains"] == 0
    assert extra["reward_report"]["status"] is None
    if mode == "fail":
        assert extra["gateway"]["harness_exit_code"] == 3 and "the harness broke" in extra["reward_report"]["error"]


@pytest.mark.parametrize(
    "outputs, trainer, expected",
    [("auto", {"use_v1": True}, True), ("auto", {"use_v1": False}, False), ("all", {"use_v1": False}, True), ("last", {"use_v1": True}, False)],
)
def test_which_outputs_a_sample_returns(tmp_path, model_dir, outputs, trainer, expected):
    server = TokenServer(model_dir)
    assert make_loop(tmp_path, server, harness("react"), outputs=outputs, trainer=trainer).all_outputs() is expected


def test_the_fully_async_rollouter_gets_one_output(tmp_path, model_dir):
    server = TokenServer(model_dir)
    loop = make_loop(tmp_path, server, harness("react"), trainer={"use_v1": True})
    loop.config = OmegaConf.merge(loop.config, {"async_training": {"staleness_threshold": 0.1}})
    assert loop.all_outputs() is False


@pytest.mark.parametrize(
    "entry, expected",
    [({"harness": None}, "harness: Input should be a valid dictionary"), ({"harness": {"command": "x", "where": "moon"}}, "harness.where: Input should be 'host' or 'sandbox'"),
     ({"outputs": "some"}, "outputs: Input should be 'auto', 'all' or 'last'")],
    ids=["no-harness", "bad-where", "bad-outputs"],
)
def test_a_bad_entry_fails_at_construction_naming_the_field(tmp_path, model_dir, entry, expected):
    server = TokenServer(model_dir)
    arguments = {"harness": harness("react"), **entry}
    with pytest.raises(ConfigError, match=re.escape(expected)) as refused:
        make_loop(tmp_path, server, **arguments)
    assert str(refused.value).startswith("Invalid config (the GatewayAgentLoop entry of the agent-loop YAML):")
