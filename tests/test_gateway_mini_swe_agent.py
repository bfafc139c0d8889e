"""mini-swe-agent (PyPI, unmodified) trained through the gateway: verl's own `AgentLoopWorker` (no Ray, no
GPU) runs `GatewayAgentLoop` with the harness command of `configs/gateway_agent_loop.yaml` on a
SWE-bench fixture instance in a Docker sandbox. mini's commands run in the gym's container; the episode
is graded by the gym's reward; the batch verl trains on holds exactly the tokens the engine sampled.

Faked: only the inference server, `TokenServer` (a tiny random-weights model with the real Qwen2.5
tokenizer: real tokens and logprobs, sampled or scripted)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto

from tests import fixture_sources
from tests.conftest import require_docker
from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym.instances import normalise
from uni_agent_gym.verl.gateway_loop import stop_worker_gateway
from uni_agent_gym.verl.trainer_config import compose_trainer_config

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[1]
INSTANCE_ID = "pytest-dev__pytest-7168"
PROMPT_LENGTH, RESPONSE_LENGTH = 8192, 4096


@pytest.fixture
async def instance() -> dict:
    require_docker()
    row = normalise(fixture_sources.derived_rows()[INSTANCE_ID])
    await fixture_sources.ensure_image(row)  # built once, then found
    yield row
    await stop_worker_gateway()


def make_worker(tmp_path: Path, server: TokenServer, model_dir: Path, gym: dict) -> AgentLoopWorker:
    """The shipped agent-loop entry, with this test's gym settings and mini's trajectory kept in tmp_path."""
    (entry,) = yaml.safe_load((ROOT / "uni_agent_gym" / "configs" / "gateway_agent_loop.yaml").read_text())
    entry = {**entry, "settings": "gym.json", "deployment": None, "overrides": []}
    harness = entry["harness"]
    harness["command"] += f' && cp "$UNI_AGENT_GYM_OUTPUT_DIR/mini.traj.json" {shlex.quote(str(tmp_path))}/'
    harness["env"] = {**harness["env"], "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # `mini` of this venv
                      "PYTHONPATH": str(ROOT), "MSWEA_GLOBAL_CONFIG_DIR": str(tmp_path / "mini-config")}  # this checkout's package  # fmt: skip
    (tmp_path / "gym.json").write_text(json.dumps(gym))
    loop_yaml = tmp_path / "gateway_agent_loop.yaml"
    loop_yaml.write_text(yaml.safe_dump([entry]))
    config = compose_trainer_config([
        f"actor_rollout_ref.model.path={model_dir}",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.calculate_log_probs=true",  # as the gym's config sets it: verl asks for logprobs
        f"data.max_prompt_length={PROMPT_LENGTH}",
        f"data.max_response_length={RESPONSE_LENGTH}",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_yaml}",
        "trainer.use_v1=false",  # the legacy worker takes one output per sample: outputs auto gives the last chain
    ])  # fmt: skip
    return AgentLoopWorker(config, server)


def batch_of(instance: dict) -> DataProto:
    return DataProto(non_tensor_batch={
        "agent_name": np.array(["gateway_agent"], dtype=object),
        "raw_prompt": np.array([[{"role": "user", "content": "(the harness writes its own prompt)"}]], dtype=object),
        "extra_info": np.array([{"instance": instance}], dtype=object),
        "index": np.arange(1),
    })  # fmt: skip


def sampled_spans(out: DataProto, calls: list[dict]) -> None:
    """Mask 1 exactly on the given engine calls' tokens, each right after the prompt it was sampled from."""
    valid_prompt = int(out.batch["attention_mask"][0, :PROMPT_LENGTH].sum())
    prompt = out.batch["prompts"][0, PROMPT_LENGTH - valid_prompt :].tolist()
    responses, mask, logprobs = out.batch["responses"][0], out.batch["response_mask"][0], out.batch["rollout_log_probs"][0]
    sequence = prompt + responses.tolist()
    expected = torch.zeros_like(mask)
    for call in calls:
        start = len(call["prompt_ids"]) - valid_prompt
        assert sequence[: len(call["prompt_ids"])] == call["prompt_ids"], "the engine was conditioned on exactly the record"
        assert responses[start : start + len(call["ids"])].tolist() == call["ids"]
        assert torch.allclose(logprobs[start : start + len(call["ids"])], torch.tensor(call["logprobs"]))
        expected[start : start + len(call["ids"])] = 1
    assert torch.equal(mask, expected), "mask 1 on a token the engine did not sample"


async def test_mini_swe_agent_solves_a_fixture_through_the_gateway(tmp_path, instance):
    """Scripted turns: mini runs a bash call that applies the gold patch in the gym's container, then
    submits; the sandbox is graded resolved and the record is one chain, token for token."""
    fix = f"cd /testbed && printf %s {shlex.quote(instance.patch)} > /tmp/fix.diff && git apply /tmp/fix.diff && git status --short"
    script = [
        "I will apply the fix.\n<tool_call>\n" + json.dumps({"name": "bash", "arguments": {"command": fix}}) + "\n</tool_call>",
        '<tool_call>\n{"name": "bash", "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}\n</tool_call>',
    ]
    model_dir = tiny_model_dir(tmp_path / "model")
    server = TokenServer(model_dir, lambda turn, repo_dir: script[turn])
    worker = make_worker(tmp_path, server, model_dir, {"deployment": {"type": "docker"}, "env": {"workspace": "image"}})
    out = await worker.generate_sequences(batch_of(instance))

    gateway = out.non_tensor_batch["gateway"][0]
    assert out.non_tensor_batch["traj_exit_reason"][0] == "finished", gateway["harness_output"]
    assert out.non_tensor_batch["reward_report"][0]["resolved"] is True and float(out.batch["rm_scores"][0].sum()) == 1.0
    assert gateway["started_by"] == ["start"] and gateway["requests"] == 2
    sampled_spans(out, server.calls)
    shown = server.tokenizer.decode(server.calls[1]["prompt_ids"])  # mini's observation of the fix, as the model saw it next
    assert shown.endswith('"returncode": 0,\n  "output": " M src/_pytest/_io/saferepr.py\\n"\n}\n</tool_response><|im_end|>\n<|im_start|>assistant\n')
    mini = json.loads((tmp_path / "mini.traj.json").read_text())
    assert mini["info"]["exit_status"] == "Submitted" and mini["info"]["model_stats"]["api_calls"] == 2


async def test_mini_swe_agent_with_a_sampling_model_is_exact_and_graded(tmp_path, instance):
    """Random weights sample junk: mini answers each turn with a format error and drops the turn from its
    history, so each request starts a chain (history_changed) until mini gives up after three; the
    episode is graded (reward 0, kept: the model's doing), and the last chain holds exactly the last sample."""
    model_dir = tiny_model_dir(tmp_path / "model")
    server = TokenServer(model_dir)
    gym = {"deployment": {"type": "docker"}, "env": {"workspace": "image"}, "rollout": {"max_tokens_per_turn": 24}}
    worker = make_worker(tmp_path, server, model_dir, gym)
    out = await worker.generate_sequences(batch_of(instance))

    gateway = out.non_tensor_batch["gateway"][0]
    assert out.non_tensor_batch["traj_exit_reason"][0] == "finished", gateway["harness_output"]
    assert not out.non_tensor_batch["traj_masked"][0]
    assert out.non_tensor_batch["reward_report"][0]["status"] is not None and float(out.batch["rm_scores"][0].sum()) == 0.0
    assert len(server.calls) == 3 and all(len(call["ids"]) <= 24 for call in server.calls)
    assert gateway["started_by"] == ["start", "history_changed", "history_changed"] and gateway["chain"] == 2
    sampled_spans(out, server.calls[-1:])
    mini = json.loads((tmp_path / "mini.traj.json").read_text())
    assert mini["info"]["exit_status"] == "RepeatedFormatError"
