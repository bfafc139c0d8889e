"""The CPU integration test: verl's own `AgentLoopWorker` (no Ray, no GPU), configured from verl's
composed `ppo_trainer` config, runs the YAML-registered `UniAgentLoop` through `generate_sequences`
on a SWE-bench fixture instance in a Docker sandbox. The inference server is `TokenServer` (a tiny
random-weights transformers model on CPU with a real Qwen2.5 tokenizer): GPU serving is the only
thing not real here. Checks the padded batch verl trains on: masks, logprobs, `rm_scores`, exit reasons."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
import torch
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto

from tests import fixture_sources
from tests.conftest import require_docker
from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym.instances import normalise
from uni_agent_gym.verl.trainer_config import compose_trainer_config

pytestmark = pytest.mark.docker
INSTANCE_ID = "pytest-dev__pytest-7168"
PROMPT_LENGTH, RESPONSE_LENGTH = 8192, 2048


@pytest.fixture
async def instance() -> dict:
    require_docker()
    row = normalise(fixture_sources.derived_rows()[INSTANCE_ID])
    await fixture_sources.ensure_image(row)  # built once, then found
    return row


def make_worker(tmp_path: Path, server: TokenServer, model_dir: Path, gym: dict) -> AgentLoopWorker:
    (tmp_path / "gym.json").write_text(json.dumps(gym))
    loop_yaml = tmp_path / "uni_agent_loop.yaml"
    loop_yaml.write_text("- name: uni_agent\n  _target_: uni_agent_gym.verl.agent_loop.UniAgentLoop\n  settings: gym.json\n")
    config = compose_trainer_config([
        f"actor_rollout_ref.model.path={model_dir}",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.calculate_log_probs=true",  # as the gym's config sets it: verl asks for logprobs
        f"data.max_prompt_length={PROMPT_LENGTH}",
        f"data.max_response_length={RESPONSE_LENGTH}",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_yaml}",
    ])  # fmt: skip
    return AgentLoopWorker(config, server)


def batch_of(*extra_infos: dict) -> DataProto:
    size = len(extra_infos)
    return DataProto(non_tensor_batch={
        "agent_name": np.array(["uni_agent"] * size, dtype=object),
        "raw_prompt": np.array([[{"role": "user", "content": "(the env writes the task prompt)"}]] * size, dtype=object),
        "extra_info": np.array(list(extra_infos), dtype=object),
        "index": np.arange(size),
    })  # fmt: skip


def check_padding(out: DataProto) -> None:
    """verl's layout: prompts left-padded, responses right-padded, the mask inside the attention."""
    batch = out.batch
    assert batch["prompts"].shape[1] == PROMPT_LENGTH and batch["responses"].shape[1] == RESPONSE_LENGTH
    response_attention = batch["attention_mask"][:, PROMPT_LENGTH:]
    assert torch.all(batch["response_mask"] <= response_attention)
    assert torch.all(batch["rollout_log_probs"][batch["response_mask"] == 0] == 0.0)
    assert torch.equal(batch["input_ids"], torch.cat([batch["prompts"], batch["responses"]], dim=1))


async def test_worker_batch_from_a_sampling_model(tmp_path, instance):
    """Random weights sample junk: the trajectory ends in format_error (kept, graded, reward 0); a
    sample whose image does not exist ends in env_error, fully masked."""
    model_dir = tiny_model_dir(tmp_path / "model")
    server = TokenServer(model_dir)
    gym = {"deployment": {"type": "docker"}, "env": {"workspace": "image"}, "agent": {"max_format_errors": 2},
           "rollout": {"max_tokens_per_turn": 24}}  # fmt: skip
    worker = make_worker(tmp_path, server, model_dir, gym)
    missing = {**instance.to_dict(), "instance_id": "nobody__nothing-1", "image_name": "uni-agent-gym/does-not-exist:latest"}
    out = await worker.generate_sequences(batch_of({"instance": instance}, {"instance": json.dumps(missing)}))

    check_padding(out)
    assert list(out.non_tensor_batch["traj_exit_reason"]) == ["format_error", "env_error"], out.non_tensor_batch["reward_report"]
    assert list(out.non_tensor_batch["traj_masked"]) == [False, True]
    assert list(out.non_tensor_batch["masked"]) == [0.0, 1.0] and out.meta_info["reward_extra_keys"] == ["resolved", "masked"]
    assert list(out.non_tensor_batch["instance_id"])[0] == INSTANCE_ID
    mask, logprobs, responses = out.batch["response_mask"][0], out.batch["rollout_log_probs"][0], out.batch["responses"][0]
    sampled = server.calls
    assert len(sampled) == 2 and all(len(call["ids"]) <= 24 for call in sampled)
    assert int(mask.sum()) == sum(len(call["ids"]) for call in sampled)
    for call in sampled:  # the sampled tokens sit where the model produced them, with its logprobs
        start = len(call["prompt_ids"]) - int(out.batch["attention_mask"][0, :PROMPT_LENGTH].sum())
        span = slice(start, start + len(call["ids"]))
        assert responses[span].tolist() == call["ids"] and mask[span].tolist() == [1] * len(call["ids"])
        assert torch.allclose(logprobs[span], torch.tensor(call["logprobs"]))
    assert int(out.batch["response_mask"][1].sum()) == 0
    assert torch.all(out.batch["rm_scores"] == 0.0)


async def test_worker_replays_a_solving_trajectory_to_reward_one(tmp_path, instance):
    """Scripted turns apply the gold patch and finish: the graded reward 1.0 sits at the last valid
    response token of `rm_scores`, and the sampled span decodes to exactly the scripted turns."""
    script = [
        "I will apply the fix.\n<tool_call>\n" + json.dumps({"name": "execute_bash", "arguments": {
            "command": f"cd /testbed && printf %s {shlex.quote(instance.patch)} > /tmp/fix.diff && git apply /tmp/fix.diff && git status --short"}})
        + "\n</tool_call>",
        '<tool_call>\n{"name": "finish", "arguments": {"message": "done"}}\n</tool_call>',
    ]  # fmt: skip
    model_dir = tiny_model_dir(tmp_path / "model")
    server = TokenServer(model_dir, lambda turn, repo_dir: script[turn])
    gym = {"deployment": {"type": "docker"}, "env": {"workspace": "image"}}
    worker = make_worker(tmp_path, server, model_dir, gym)
    out = await worker.generate_sequences(batch_of({"instance": instance}))

    check_padding(out)
    assert out.non_tensor_batch["traj_exit_reason"][0] == "finished"
    assert out.non_tensor_batch["reward_report"][0]["resolved"] is True and out.non_tensor_batch["resolved"][0] == 1.0
    valid = int(out.batch["attention_mask"][0, PROMPT_LENGTH:].sum())
    expected = torch.zeros(RESPONSE_LENGTH)
    expected[valid - 1] = 1.0
    assert torch.equal(out.batch["rm_scores"][0], expected)
    sampled = out.batch["responses"][0][out.batch["response_mask"][0].bool()].tolist()
    assert sampled == [token for call in server.calls for token in call["ids"]]
    assert server.tokenizer.decode(sampled) == "<|im_end|>".join(script) + "<|im_end|>"
    shown = server.tokenizer.decode(server.calls[1]["prompt_ids"])  # the tool result the model saw next
    assert shown.endswith("<tool_response>\n M src/_pytest/_io/saferepr.py\n\n</tool_response><|im_end|>\n<|im_start|>assistant\n")


async def test_a_parquet_mixing_every_dataset_family_runs_through_the_worker(tmp_path):
    """`prepare-data` on one row of each dataset family (derived from this fixture: tests/family_rows.py)
    writes one parquet; verl's worker runs UniAgentLoop on each of its samples, each in its family's
    image (R2E-Gym's without its tests), graded by its family's rules in a fresh sandbox: the scripted
    fix earns 1.0 in every family."""
    require_docker()
    import datasets

    from tests import family_rows
    from uni_agent_gym.cli import main

    images = await family_rows.ensure_family_images()
    rows = family_rows.rows()
    # An environments file is keyed by instance id, and SWE-rebench's row has the id of SWE-bench's: its image was built
    # from its row's own recipe, so here it takes an id of its own (and names its image) and no entry applies to it
    rebench = rows["swe-rebench"]
    rows["swe-rebench"] = {**rebench, "instance_id": rebench["instance_id"] + "-rebench", "image_name": images["swe-rebench"]}
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(row) + "\n" for row in rows.values()))
    assert main(["prepare-data", "--dataset", str(mixed), "--output", str(tmp_path / "train.parquet")]) == 0
    records = list(datasets.Dataset.from_parquet(str(tmp_path / "train.parquet")))
    assert [record["extra_info"]["family"] for record in records] == [record["data_source"] for record in records] == list(rows)

    fix = family_rows.fixture_row()["patch"]
    script = [
        "<tool_call>\n" + json.dumps({"name": "execute_bash", "arguments": {
            "command": f"cd /testbed && printf %s {shlex.quote(fix)} > /tmp/fix.diff && git apply /tmp/fix.diff && echo applied"}})
        + "\n</tool_call>",
        '<tool_call>\n{"name": "finish", "arguments": {}}\n</tool_call>',
    ]  # fmt: skip
    environments = tmp_path / "environments.json"
    environments.write_text(json.dumps([{**value, "instance_id": key} for key, value in family_rows.environments().items()]))
    gym = {"deployment": {"type": "docker"}, "env": {"workspace": "image", "environments": str(environments),
           "cache_dir": str(fixture_sources.BUILD_CACHE), "mirrors": family_rows.mirrors()}}  # fmt: skip
    model_dir = tiny_model_dir(tmp_path / "model")
    worker = make_worker(tmp_path, TokenServer(model_dir, lambda turn, repo_dir: script[turn]), model_dir, gym)
    out = await worker.generate_sequences(batch_of(*(record["extra_info"] for record in records)))

    check_padding(out)
    reports = list(out.non_tensor_batch["reward_report"])
    assert list(out.non_tensor_batch["traj_exit_reason"]) == ["finished"] * len(rows), reports
    assert [report["status"] for report in reports] == ["resolved"] * len(rows), reports
    assert out.batch["rm_scores"].sum(dim=1).tolist() == [1.0] * len(rows)


async def test_worker_replays_a_go_task_to_reward_one(tmp_path):
    """The same on a task in Go (gin-3227, `tests/language_fixtures.py`): the scripted fix at the task's own working
    directory (a GOPATH), graded with go test (and its canaries); the sample's report summary carries the language."""
    require_docker()
    from tests import language_fixtures

    raw = language_fixtures.derived_rows()["gin-gonic__gin-3227"]
    await language_fixtures.ensure_images([raw])
    row = normalise(raw)
    script = [
        "<tool_call>\n" + json.dumps({"name": "execute_bash", "arguments": {
            "command": f"printf %s {shlex.quote(row.patch)} > /tmp/fix.diff && git apply /tmp/fix.diff && pwd"}}) + "\n</tool_call>",
        '<tool_call>\n{"name": "finish", "arguments": {"message": "done"}}\n</tool_call>',
    ]  # fmt: skip
    model_dir = tiny_model_dir(tmp_path / "model")
    server = TokenServer(model_dir, lambda turn, repo_dir: script[turn])
    gym = {"deployment": {"type": "docker"}, "env": {"workspace": "image", "environments": str(language_fixtures.ENVIRONMENTS)}}
    worker = make_worker(tmp_path, server, model_dir, gym)
    out = await worker.generate_sequences(batch_of({"instance": row}))

    check_padding(out)
    report = out.non_tensor_batch["reward_report"][0]
    assert out.non_tensor_batch["traj_exit_reason"][0] == "finished" and report["resolved"] is True, report
    assert report["language"] == "go" and float(out.batch["rm_scores"][0].sum()) == 1.0
    shown = server.tokenizer.decode(server.calls[1]["prompt_ids"])  # the agent started in the task's working directory
    assert "<tool_response>\n/go/src/github.com/gin-gonic/gin\n" in shown
