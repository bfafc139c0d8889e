"""Training really runs: verl's fully-async rollout client, its batch assembly and its trainer code, on CPU,
on what `UniAgentLoop` and `GatewayAgentLoop` produce under the shipped `configs/config.toml`.

verl's own classes and functions throughout: `AgentLoopWorker` behind `FullyAsyncLLMServerClient` and
`GlobalRequestLoadBalancer`; the dataset, `prepare_single_generation_data` and
`assemble_batch_from_rollout_samples` the fully-async rollouter and trainer call; the trainer's own reward,
old-log-prob and advantage steps (`SeparateRayPPOTrainer._fit_*`, which `FullyAsyncTrainer` runs); verl's
`logprobs_from_logits`, policy losses and `ActorConfig`; the v1 trainer's TransferQueue worker.

Stand-ins, because they cannot run here: the GPU inference server (`tests/weight_sync.py`: scripted turns
scored by a tiny CPU model, a weight sync half-way through one turn), Ray's actor transport (a direct call),
the TransferQueue store (the v1 test captures what is put into it), and verl's FSDP engine: the actor's
forward is the tiny model's on each row's valid tokens with verl's position ids, as verl's actor computes
log-probs. What only a GPU run shows (vLLM's sampling, the FSDP engine, NCCL weight sync) is not tested here.
"""

from __future__ import annotations

import copy
import json
import shlex
import sys
from pathlib import Path
from types import MethodType, SimpleNamespace

import numpy as np
import pytest
import ray
import torch
import yaml
from transformers import Qwen2Config, Qwen2ForCausalLM
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.experimental.fully_async_policy.detach_utils import (
    RolloutSample,
    assemble_batch_from_rollout_samples,
    prepare_single_generation_data,
)
from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer
from verl.protocol import DataProto
from verl.trainer.ppo.core_algos import get_policy_loss_fn
from verl.utils.config import omega_conf_to_dataclass
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn
from verl.utils.torch_functional import logprobs_from_logits

from tests import fixture_sources
from tests.conftest import require_docker, run_to_completion
from tests.token_server import tiny_model_dir
from tests.weight_sync import SyncingServer, fully_async_client
from uni_agent_gym import toy
from uni_agent_gym.cli import main
from uni_agent_gym.verl.gateway_loop import stop_worker_gateway
from uni_agent_gym.verl.trainer_config import compose_trainer_config
from uni_agent_gym.verl.training import load_training

pytestmark = pytest.mark.slow  # verl's worker and trainer on UniAgentLoop episodes: not in make test-fast

CONFIGS = Path(__file__).resolve().parents[1] / "uni_agent_gym" / "configs"
SHARED = Path(__file__).resolve().parents[2] / "shared"
HARNESS = Path(__file__).parent / "gateway_harness.py"
INSTANCE_ID = "pytest-dev__pytest-7168"
FINISH = '<tool_call>\n{"name": "finish", "arguments": {}}\n</tool_call>'


def bash_call(lead: str, command: str, tool: str = "execute_bash") -> str:
    return f"{lead}<tool_call>\n" + json.dumps({"name": tool, "arguments": {"command": command}}) + "\n</tool_call>"


def apply_gold(lead: str, patch: str) -> str:
    return bash_call(lead, f"cd /testbed && printf %s {shlex.quote(patch)} > /tmp/fix.diff && git apply /tmp/fix.diff && git status --short")


# the toy's fix through the gateway harness's `bash` tool (it runs in the repository)
TOY_FIX = bash_call("I will fix mean().\n", "sed -i 's/(len(values) - 1)/len(values)/' stats.py", tool="bash")
TOY_CHECK = bash_call("", "python3 -m unittest test_stats 2>&1 | tail -n 1", tool="bash")
GATEWAY_SCRIPTS = [[TOY_FIX, TOY_CHECK, "The tests pass."], ["I cannot fix this."]]
GATEWAY_REWARDS = [1.0, 0.0]


def trainer_config(tmp_path: Path, model_dir: Path, entry: dict, *, n: int, **values):
    """verl's fully-async trainer config from the shipped config.toml, with the tiny model, `n` responses
    per prompt and `entry` as the only agent loop (plus any other verl key=value in `values`)."""
    loop_yaml = tmp_path / "agent_loop.yaml"
    loop_yaml.write_text(yaml.safe_dump([entry], sort_keys=False))
    run = load_training(CONFIGS / "config.toml")
    run.values.update({"actor_rollout_ref.model.path": str(model_dir), "actor_rollout_ref.rollout.n": n,
                       "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(loop_yaml), **values})  # fmt: skip
    return compose_trainer_config(run.overrides, async_training=run.async_training)


def gym_entry(tmp_path: Path, name: str, target: str, gym: dict, **entry) -> dict:
    (tmp_path / "gym.json").write_text(json.dumps(gym))
    return {"name": name, "_target_": target, "settings": str(tmp_path / "gym.json"), **entry}


def uni_agent_entry(tmp_path: Path, gym: dict) -> dict:
    return gym_entry(tmp_path, "uni_agent", "uni_agent_gym.verl.agent_loop.UniAgentLoop", gym)


def gateway_entry(tmp_path: Path, mode: str = "react") -> dict:
    return gym_entry(tmp_path, "gateway_agent", "uni_agent_gym.verl.gateway_loop.GatewayAgentLoop", {"deployment": {"type": "local"}},
                     harness={"command": f"{sys.executable} {HARNESS} {mode}"})  # fmt: skip


def toy_batch_dict(agent_name: str) -> dict:
    """One toy prompt as the rollouter's dataloader hands it over (the env writes the real task prompt)."""
    return {"agent_name": np.array([agent_name], dtype=object), "index": np.array([0]),
            "raw_prompt": np.array([[{"role": "user", "content": toy.PROBLEM_STATEMENT}]], dtype=object),
            "extra_info": np.array([{"index": 0, "instance_id": toy.INSTANCE_ID}], dtype=object)}  # fmt: skip


async def rollout(config, server: SyncingServer, batch_dict: dict) -> DataProto:
    """One prompt's group as the fully-async rollouter makes it and the trainer assembles it: repeated n
    times, run by verl's worker behind verl's fully-async client, a RolloutSample sent through the message
    queue's pickling, `assemble_batch_from_rollout_samples`."""
    group = prepare_single_generation_data(batch_dict, config)
    uid = np.array(["uid_sample_0_1"] * len(group), dtype=object)  # the rollouter's uid: one per prompt
    group.non_tensor_batch["uid"] = uid
    worker = AgentLoopWorker(config, fully_async_client(config, server))
    try:
        output = await worker.generate_sequences(group)
    finally:
        await stop_worker_gateway()
    output.non_tensor_batch["uid"] = uid
    sample = ray.cloudpickle.loads(ray.cloudpickle.dumps(RolloutSample(full_batch=output, sample_id="sample_0_1", epoch=0, rollout_status={})))
    return assemble_batch_from_rollout_samples([sample], worker.tokenizer, config)


def sampled_spans(batch: DataProto, calls: list[dict]) -> dict[int, list[tuple[int, int, dict]]]:
    """Where the server's sampled tokens sit in the batch, found by their ids alone: row -> [(start, end,
    call)] in response positions. The oracle for the mask: every other response token is glue or a tool's."""
    prompt_width = batch.batch["prompts"].shape[1]
    sequences = [batch.batch["input_ids"][row][batch.batch["attention_mask"][row].bool()].tolist() for row in range(len(batch))]
    prompt_lengths = batch.batch["attention_mask"][:, :prompt_width].sum(dim=1).tolist()
    spans: dict[int, list[tuple[int, int, dict]]] = {row: [] for row in range(len(batch))}
    for call in calls:
        prompt, ids = call["prompt_ids"], call["ids"]
        rows = [row for row, seq in enumerate(sequences) if seq[: len(prompt)] == prompt and seq[len(prompt) : len(prompt) + len(ids)] == ids]
        assert len(rows) == 1, f"call of trajectory {call['trajectory']} turn {call['turn']} found in rows {rows}"
        start = len(prompt) - prompt_lengths[rows[0]]
        spans[rows[0]].append((start, start + len(ids), call))
    return spans


def tiny_model(model_dir: Path, state_dict: dict) -> Qwen2ForCausalLM:
    model = Qwen2ForCausalLM(Qwen2Config.from_pretrained(model_dir))
    model.load_state_dict(state_dict)
    return model


def actor_log_probs(model: Qwen2ForCausalLM, batch: DataProto, temperature: float, *, grad: bool = False):
    """Response log-probs under `model` as verl's actor computes them: each row's valid tokens (the
    attention mask) with verl's position ids, the logits of the positions before each response token over
    the temperature, `logprobs_from_logits`. Returns [rows, response width] and each row's logits."""
    prompt_width, width = batch.batch["prompts"].shape[1], batch.batch["responses"].shape[1]
    rows, logits_of_rows = [], []
    for row in range(len(batch)):
        valid = batch.batch["attention_mask"][row].bool()
        length = int(batch.batch["attention_mask"][row, prompt_width:].sum())
        with torch.set_grad_enabled(grad):
            out = model(input_ids=batch.batch["input_ids"][row][valid][None], position_ids=batch.batch["position_ids"][row][valid][None],
                        logits_to_keep=length + 1)  # fmt: skip
            logits = out.logits[0, :-1].float() / temperature
            if grad:
                logits.retain_grad()
            log_probs = logprobs_from_logits(logits, batch.batch["responses"][row, :length])
        rows.append(torch.cat([log_probs, log_probs.new_zeros(width - length)]))
        logits_of_rows.append(logits)
    return torch.stack(rows), logits_of_rows


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model_dir(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="module")
def swe_group(tmp_path_factory, model_dir):
    """A GRPO group of four UniAgentLoop trajectories of pytest-7168 on docker, two solving it; the first
    one's first turn is cut half-way by a weight sync and resumed by verl's client."""
    require_docker()
    tmp_path = tmp_path_factory.mktemp("swe-group")
    row = fixture_sources.derived_rows()[INSTANCE_ID]
    run_to_completion(fixture_sources.ensure_image(row))
    data = tmp_path / "train.parquet"
    assert main(["prepare-data", "--dataset", str(SHARED / "swebench" / "derived.jsonl"), "--instance-ids", INSTANCE_ID, "--output", str(data)]) == 0
    gym = {"deployment": {"type": "docker"}, "env": {"workspace": "image"}}
    config = trainer_config(tmp_path, model_dir, uni_agent_entry(tmp_path, gym), n=4, **{"data.train_files": str(data), "data.val_files": str(data)})
    scripts = [[apply_gold("I will apply the fix.\n", row["patch"]), FINISH], [apply_gold("Applying the patch now.\n", row["patch"]), FINISH],
               [bash_call("", "cd /testbed && ls"), FINISH], [FINISH]]  # fmt: skip
    server = SyncingServer(model_dir, scripts, abort_at=(0, 0))
    dataset = RLHFDataset([str(data)], server.tokenizer, config.data)
    batch = run_to_completion(rollout(config, server, collate_fn([dataset[0]])))
    return SimpleNamespace(config=config, server=server, batch=batch, rewards=[1.0, 1.0, 0.0, 0.0], tmp_path=tmp_path)


@pytest.fixture(scope="module")
def gateway_group(tmp_path_factory, model_dir):
    """A GRPO group of two GatewayAgentLoop episodes (the test harness, an OpenAI-SDK loop) on the toy
    task in the local sandbox, one solving it; the first one's first turn is cut by a weight sync."""
    tmp_path = tmp_path_factory.mktemp("gateway-group")
    config = trainer_config(tmp_path, model_dir, gateway_entry(tmp_path), n=2)
    server = SyncingServer(model_dir, GATEWAY_SCRIPTS, abort_at=(0, 0))
    batch = run_to_completion(rollout(config, server, toy_batch_dict("gateway_agent")))
    return SimpleNamespace(config=config, server=server, batch=batch, rewards=GATEWAY_REWARDS, tmp_path=tmp_path)


GROUPS = ["swe_group", "gateway_group"]


def trajectory_rows(group) -> dict[int, int]:
    """The server's trajectory number (arrival order) of each batch row."""
    return {row: spans[0][2]["trajectory"] for row, spans in sampled_spans(group.batch, group.server.calls).items()}


@pytest.mark.parametrize("name", GROUPS)
def test_a_group_spanning_a_weight_sync_assembles_with_its_weight_versions(request, model_dir, name):
    """verl's batch assembly takes the group; the trajectory the sync cut says so (min < max) and verl's
    partial-rollout metrics count it; its cut turn is one contiguous sampled run with the old weights'
    logprobs before the cut and the new weights' after; and the log-probs the actor recomputes equal the
    rollout's on every sampled span under that span's weights, and not under the other's (the trainer sees
    exactly the tokens that were sampled, in place)."""
    group = request.getfixturevalue(name)
    batch, calls = group.batch, group.server.calls
    rows = trajectory_rows(group)
    assert list(batch.non_tensor_batch["traj_exit_reason"]) == ["finished"] * len(batch), batch.non_tensor_batch["reward_report"]
    spanning = [row for row, trajectory in rows.items() if trajectory == 0]
    assert len(spanning) == 1
    versions = {row: (batch.non_tensor_batch["min_global_steps"][row], batch.non_tensor_batch["max_global_steps"][row]) for row in rows}
    assert versions == {row: (0, 1) if row in spanning else (1, 1) for row in rows}
    assert all(isinstance(value, int) for pair in versions.values() for value in pair)
    meta = batch.meta_info
    assert meta["fully_async/partial/total_partial_num"] == 1 and meta["fully_async/partial/max_partial_span"] == 1
    assert meta["fully_async/partial/partial_ratio"] == 1 / len(batch)

    cut, resumed = [call for call in calls if call["trajectory"] == 0 and call["turn"] == 0]
    assert cut["aborted"] and cut["version"] == 0 and not resumed["aborted"] and resumed["version"] == 1
    (row,) = spanning
    start, end, _ = sampled_spans(batch, [cut])[row][0]
    turn = slice(start, end + len(resumed["ids"]))
    assert batch.batch["response_mask"][row, turn].tolist() == [1] * (end - start + len(resumed["ids"])), "one sampled run"
    assert torch.allclose(batch.batch["rollout_log_probs"][row, turn], torch.tensor(cut["logprobs"] + resumed["logprobs"]))
    rewards = batch.batch["rm_scores"].sum(dim=1).tolist()
    assert rewards == [group.rewards[rows[row]] for row in range(len(batch))]

    spans, temperature = sampled_spans(batch, calls), group.config.actor_rollout_ref.rollout.temperature
    for version, state in group.server.state_dicts.items():
        recomputed, _ = actor_log_probs(tiny_model(model_dir, state), batch, temperature)
        for row, row_spans in spans.items():
            for start, end, call in row_spans:
                same = torch.allclose(recomputed[row, start:end], batch.batch["rollout_log_probs"][row, start:end], atol=1e-5)
                assert same == (call["version"] == version), f"row {row} turn {call['turn']} (version {call['version']}) under version {version}"


LOSSES = {
    # the shipped config.toml: GSPO with the seed's clip ratio, old log-probs recomputed (decoupled mode)
    "shipped-gspo": {},
    # verl's fully-async recipe: rollout log-probs as the old policy's, token-level PPO-clip
    "recipe-bypass": {"algorithm.rollout_correction.bypass_mode": True, "actor_rollout_ref.actor.policy_loss.loss_mode": "vanilla",
                      "actor_rollout_ref.actor.clip_ratio_low": 0.2, "actor_rollout_ref.actor.clip_ratio_high": 0.2,
                      "actor_rollout_ref.actor.loss_agg_mode": "token-mean"},
    # vanilla PPO's loss on recomputed old log-probs
    "vanilla-ppo": {"actor_rollout_ref.actor.policy_loss.loss_mode": "vanilla", "actor_rollout_ref.actor.clip_ratio_low": 0.2,
                    "actor_rollout_ref.actor.clip_ratio_high": 0.2, "actor_rollout_ref.actor.loss_agg_mode": "token-mean"},
}  # fmt: skip


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("name", GROUPS)
def test_verls_trainer_trains_on_the_sampled_tokens_only(request, model_dir, name, loss):
    """verl's trainer steps on the assembled group, then verl's policy loss and a backward pass:
    - the mask is 1 exactly where the server sampled, and the loss's gradient on every other position's
      logits (tool output, template glue) is exactly zero;
    - the reward sits at the last response token, the advantage is the group-normalised reward on sampled
      tokens only; an optimizer step changes the weights."""
    group = request.getfixturevalue(name)
    batch, server = copy.deepcopy(group.batch), group.server
    (group.tmp_path / loss).mkdir(exist_ok=True)
    config = trainer_config(group.tmp_path / loss, model_dir, {"name": "unused", "_target_": "unused"}, n=len(batch), **LOSSES[loss])
    temperature = config.actor_rollout_ref.rollout.temperature
    policy = tiny_model(model_dir, server.state_dicts[server.version])  # the trainer's weights: the last synced

    def old_log_prob(data: DataProto):  # the trainer's actor forward (decoupled mode); entropy is only logged
        log_probs, _ = actor_log_probs(policy, data, temperature)
        return DataProto.from_dict({"old_log_probs": log_probs, "entropys": torch.zeros_like(log_probs)}), 0.0

    trainer = SimpleNamespace(config=config, metrics={}, timing_raw={}, use_rm=False, _compute_old_log_prob=old_log_prob)
    batch = SeparateRayPPOTrainer._fit_compute_reward(trainer, batch)
    batch = SeparateRayPPOTrainer._fit_compute_log_prob(trainer, batch)
    batch = SeparateRayPPOTrainer._fit_compute_advantage(trainer, batch)

    mask, spans = batch.batch["response_mask"], sampled_spans(batch, server.calls)
    lengths = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1] :].sum(dim=1).tolist()
    sampled = {row: torch.zeros(lengths[row], dtype=torch.bool) for row in spans}
    for row, row_spans in spans.items():
        for start, end, _ in row_spans:
            sampled[row][start:end] = True
        assert torch.equal(mask[row, : lengths[row]].bool(), sampled[row]) and int(mask[row, lengths[row] :].sum()) == 0, f"row {row}: mask != sampled"

    rewards = torch.tensor([group.rewards[trajectory] for _, trajectory in sorted(trajectory_rows(group).items())])
    for row in range(len(batch)):
        level = torch.zeros(batch.batch["responses"].shape[1])
        level[lengths[row] - 1] = rewards[row]
        assert torch.equal(batch.batch["token_level_rewards"][row], level)
    normalised = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
    assert torch.allclose(batch.batch["advantages"], normalised[:, None] * mask, atol=1e-5)

    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    log_prob, logits = actor_log_probs(policy, batch, temperature, grad=True)
    pg_loss, _ = get_policy_loss_fn(actor.policy_loss.loss_mode)(
        old_log_prob=batch.batch["old_log_probs"], log_prob=log_prob, advantages=batch.batch["advantages"],
        response_mask=mask.bool(), loss_agg_mode=actor.loss_agg_mode, config=actor, rollout_is_weights=batch.batch.get("rollout_is_weights"),
    )  # fmt: skip
    before = [parameter.detach().clone() for parameter in policy.parameters()]
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-3)
    pg_loss.backward()
    for row in range(len(batch)):
        moved = logits[row].grad.abs().sum(dim=1) != 0
        assert not moved[~sampled[row]].any(), f"row {row}: a gradient on a token the model did not sample"
        assert moved[sampled[row]].any(), f"row {row}: no gradient on its sampled tokens"
    optimizer.step()
    assert any(not torch.equal(old, new) for old, new in zip(before, policy.parameters())), "the optimizer step changed nothing"


@pytest.mark.parametrize("agent", ["uni_agent", "gateway_agent"])
async def test_without_partial_rollout_an_aborted_turn_ends_the_trajectory_masked(tmp_path, model_dir, agent):
    """With partial rollout off, verl's client hands the aborted half back as it is: not the model's answer,
    so the trajectory ends as `aborted`, fully masked, ungraded; verl still assembles it."""
    entry = uni_agent_entry(tmp_path, {"deployment": {"type": "local"}}) if agent == "uni_agent" else gateway_entry(tmp_path)
    config = trainer_config(tmp_path, model_dir, entry, n=1, **{"async_training.partial_rollout": False})
    server = SyncingServer(model_dir, [[bash_call("Let me look around first.\n", "ls -la", tool="bash")]], abort_at=(0, 0))
    batch = await rollout(config, server, toy_batch_dict(agent))
    assert [call["aborted"] for call in server.calls] == [True], "not resumed"
    extra = batch.non_tensor_batch
    assert extra["traj_exit_reason"][0] == "aborted" and extra["traj_masked"][0], extra["reward_report"][0]
    assert "aborted" in extra["reward_report"][0]["error"] and extra["reward_report"][0]["status"] is None, "never graded"
    assert int(batch.batch["response_mask"].sum()) == 0 and float(batch.batch["rm_scores"].sum()) == 0.0
    assert (extra["min_global_steps"][0], extra["max_global_steps"][0]) == (0, 0)


@pytest.mark.parametrize("agent", ["uni_agent", "gateway_agent"])
async def test_verls_v1_trainer_path_takes_every_output(tmp_path, model_dir, monkeypatch, agent):
    """verl's v1 trainer (trainer.use_v1): its TransferQueue worker runs a prompt's sessions and puts each
    output into the store (captured here: TransferQueue is a Ray service). The gateway's compacting harness
    splits its session into two chains, both put, the final reward on each; the tags' weight versions take
    the v1 trainer's int cast; verl's multi-trajectory advantage gives every chain its session's."""
    from verl.trainer.ppo.v1 import agent_loop_tq
    from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories

    if agent == "uni_agent":
        entry, scripts, sessions = uni_agent_entry(tmp_path, {"deployment": {"type": "local"}}), [[FINISH]], 2
    else:
        entry, scripts, sessions = gateway_entry(tmp_path, "compact"), [[TOY_FIX, TOY_CHECK], ["The tests pass."]], 1
    loop_yaml = tmp_path / "agent_loop.yaml"
    loop_yaml.write_text(yaml.safe_dump([entry], sort_keys=False))
    config = compose_trainer_config([f"actor_rollout_ref.model.path={model_dir}", "actor_rollout_ref.rollout.name=vllm", "trainer.use_v1=true",
                                     "data.max_prompt_length=4096", "data.max_response_length=4096", f"actor_rollout_ref.rollout.n={sessions}",
                                     f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_yaml}"])  # fmt: skip
    server = SyncingServer(model_dir, scripts, abort_at=(0, 0))
    worker = AgentLoopWorker(config, fully_async_client(config, server))
    tq_worker = agent_loop_tq.AgentLoopWorkerTQ.__ray_actor_class__
    worker._agent_loop_postprocess = MethodType(tq_worker._agent_loop_postprocess, worker)
    put, statuses = [], []

    async def batch_put(keys, fields, tags, partition_id):
        put.append((keys, fields, tags))

    async def kv_put(key, partition_id, tag):
        statuses.append(tag["status"])

    monkeypatch.setattr(agent_loop_tq.tq, "async_kv_batch_put", batch_put)
    monkeypatch.setattr(agent_loop_tq.tq, "async_kv_put", kv_put)
    prompt = {"uid": "uid0", "agent_name": entry["name"], "index": 0, "global_steps": 1, "extra_info": {"index": 0, "instance_id": toy.INSTANCE_ID},
              "raw_prompt": [{"role": "user", "content": toy.PROBLEM_STATEMENT}]}  # fmt: skip
    sampling = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
    try:
        await tq_worker._run_prompt(worker, prompt, sampling, trajectory={"step": 1, "sample_index": 0, "rollout_n": 0, "validate": False})
    finally:
        await stop_worker_gateway()
    assert statuses == ["running", "finished"]
    keys = [key for session_keys, _, _ in put for key in session_keys]
    tags = [tag for _, _, session_tags in put for tag in session_tags]
    expected = ["uid0_0_0", "uid0_1_0"] if agent == "uni_agent" else ["uid0_0_0", "uid0_0_1"]
    assert sorted(keys) == expected
    versions = np.array([[tag["min_global_steps"], tag["max_global_steps"]] for tag in tags], dtype=int)  # the v1 trainer's cast
    assert (versions[:, 0] <= versions[:, 1]).all() and versions.max() == 1

    def column(name: str) -> torch.Tensor:  # the v1 trainer reads the store's jagged fields back padded
        return torch.nn.utils.rnn.pad_sequence([fields[name][i] for _, fields, _ in put for i in range(len(fields))], batch_first=True)

    data = DataProto.from_dict({"response_mask": column("response_mask"), "rm_scores": column("rm_scores")})
    data.batch["token_level_rewards"] = data.batch["rm_scores"]
    data.non_tensor_batch["uid"] = np.array(["uid0"] * len(keys), dtype=object)
    data = compute_advantage_for_multi_trajectories(data, batch_keys=keys, adv_estimator="grpo")
    rewards = data.batch["rm_scores"].sum(dim=1).tolist()
    assert rewards == ([0.0, 0.0] if agent == "uni_agent" else [1.0, 1.0]), "the final reward on every chain"
    advantage = {}  # session -> the advantage on its sampled tokens
    for row, key in enumerate(keys):
        mask, values = data.batch["response_mask"][row].bool(), data.batch["advantages"][row]
        assert torch.all(values[~mask] == 0) and mask.any()
        advantage.setdefault(key.rsplit("_", 1)[0], float(values[mask][0]))
        assert torch.all(values[mask] == advantage[key.rsplit("_", 1)[0]]), f"{key}: its session's advantage on every sampled token"
