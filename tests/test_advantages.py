"""Masked trajectories leave their group's statistics (`uni_agent_gym.advantages`), with verl's own code.

The estimators are reached the way verl's trainers reach them: by name, through verl's `compute_advantage`
(the dispatch every trainer calls) after `import verl` loaded our `verl.plugins` entry point; the stock
numbers are verl's own estimators'. The group of 8 with two dead sandboxes is a real rollout: verl's
`AgentLoopWorker` runs `UniAgentLoop` on the toy task in local sandboxes behind verl's fully-async client
(the GPU server is the stand-in of `tests/weight_sync.py`: scripted turns scored by a tiny CPU model), verl
assembles the batch, and the fully-async trainer's own reward, old-log-prob, advantage and metric steps and
verl's policy loss run on it under the shipped `configs/config.toml`. The masked share is read from what
verl's trainers log (`compute_data_metrics` as their modules hold it, `_fit_collect_metrics`).

Without the fix (verl's `compute_grpo_outcome_advantage` registered as `grpo_drop_masked`), the worked-group
and dead-sandbox tests fail: the real trajectories get 1.208 / -0.725 instead of 0.913 / -0.913.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import yaml
from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer
from verl.protocol import DataProto
from verl.trainer.config import AlgoConfig
from verl.trainer.ppo import ray_trainer
from verl.trainer.ppo.core_algos import get_policy_loss_fn
from verl.utils.config import omega_conf_to_dataclass

from tests.test_verl_fully_async import (  # noqa: F401 - model_dir is a fixture
    FINISH,
    actor_log_probs,
    bash_call,
    model_dir,
    rollout,
    sampled_spans,
    tiny_model,
    toy_batch_dict,
    trainer_config,
    trajectory_rows,
    uni_agent_entry,
)
from tests.conftest import run_to_completion
from tests.weight_sync import SyncingServer

pytestmark = pytest.mark.slow  # verl's worker and trainer on UniAgentLoop episodes: not in make test-fast
from uni_agent_gym.verl.training import check_training, load_training

CONFIGS = Path(__file__).resolve().parents[1] / "uni_agent_gym" / "configs"
# docs/training.md's worked group: rewards of 8 trajectories of one prompt, the 4th and the 7th masked
WORKED = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
DEAD = [3, 6]
REAL = [row for row in range(8) if row not in DEAD]
# ours, verl's own, algorithm.norm_adv_by_std_in_grpo
ESTIMATORS = [pytest.param("grpo_drop_masked", "grpo", True, id="grpo"), pytest.param("grpo_drop_masked", "grpo", False, id="dr-grpo"),
              pytest.param("rloo_drop_masked", "rloo", True, id="rloo")]  # fmt: skip
# (solved, unsolved) real trajectory's advantage: verl's on all 8, and on the 6 real ones alone (= ours on all 8)
WORKED_NUMBERS = {("grpo", True): ((1.2076, -0.7246), (0.9129, -0.9129)), ("grpo", False): ((0.625, -0.375), (0.5, -0.5)),
                  ("rloo", True): ((0.7143, -0.4286), (0.6, -0.6))}  # fmt: skip


def outcome_batch(rewards: list[float], uids: list[str], masked: list[int] = (), width: int = 6, seed: int = 0) -> DataProto:
    """Rows as verl's trainer holds them before the advantage: each response `1..width` tokens long (mask 1),
    its reward on its last token; a masked row keeps its length and reward 0 with mask all 0, as the gym's."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, width + 1, (len(rewards),), generator=generator)
    mask = (torch.arange(width)[None, :] < lengths[:, None]).long()
    scores = torch.zeros(len(rewards), width)
    scores[torch.arange(len(rewards)), lengths - 1] = torch.tensor(rewards, dtype=torch.float32)
    for row in masked:
        mask[row], scores[row] = 0, 0.0
    data = DataProto.from_dict({"response_mask": mask, "token_level_rewards": scores})
    data.non_tensor_batch["uid"] = np.array(uids, dtype=object)
    return data


def advantages(data: DataProto, estimator: str, norm_by_std: bool) -> torch.Tensor:
    """verl's trainer dispatch (`ray_trainer.compute_advantage`) with the algorithm config as the trainer passes it."""
    out = ray_trainer.compute_advantage(copy.deepcopy(data), adv_estimator=estimator, norm_adv_by_std_in_grpo=norm_by_std,
                                        config=AlgoConfig(adv_estimator=estimator, norm_adv_by_std_in_grpo=norm_by_std))  # fmt: skip
    assert torch.equal(out.batch["advantages"], out.batch["returns"])
    return out.batch["advantages"]


@pytest.mark.parametrize("ours, stock, norm_by_std", ESTIMATORS)
def test_the_worked_group_of_8_gets_what_its_6_real_members_get_alone(ours, stock, norm_by_std):
    """docs/training.md's numbers: verl's estimator counts the 2 masked rows as rewards 0 (more credit to the
    solved, less blame to the unsolved); ours gives the real rows exactly verl's advantages of the 6 alone."""
    group = outcome_batch(WORKED, ["p"] * 8, DEAD)
    alone = advantages(group.select_idxs(REAL), stock, norm_by_std)
    ours_all, stock_all = advantages(group, ours, norm_by_std), advantages(group, stock, norm_by_std)

    assert torch.equal(ours_all[REAL], alone) and torch.all(ours_all[DEAD] == 0)
    first = {row: float(ours_all[row][group.batch["response_mask"][row].bool()][0]) for row in REAL}
    stock_first = {row: float(stock_all[row][group.batch["response_mask"][row].bool()][0]) for row in REAL}
    (biased_solved, biased_unsolved), (solved, unsolved) = WORKED_NUMBERS[stock, norm_by_std]
    assert all(round(first[row], 4) == (solved if WORKED[row] else unsolved) for row in REAL)
    assert all(round(stock_first[row], 4) == (biased_solved if WORKED[row] else biased_unsolved) for row in REAL)


@pytest.mark.parametrize("ours, stock, norm_by_std", ESTIMATORS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_no_masked_member_it_is_verls_estimator_exactly(ours, stock, norm_by_std, seed):
    """Groups of 8, 3, 2 and 1 interleaved, real-valued rewards: the same tensors as verl's, bit for bit."""
    rng = np.random.default_rng(seed)
    uids = [f"p{group}" for group, size in enumerate([8, 3, 2, 1]) for _ in range(size)]
    order = rng.permutation(len(uids))
    data = outcome_batch(rng.normal(size=len(uids)).round(3).tolist(), [uids[i] for i in order], seed=seed)
    ours_out, stock_out = advantages(data, ours, norm_by_std), advantages(data, stock, norm_by_std)
    assert ours_out.shape == stock_out.shape and ours_out.dtype == stock_out.dtype
    assert torch.equal(ours_out, stock_out)


@pytest.mark.parametrize("ours, stock, norm_by_std", ESTIMATORS)
def test_a_group_left_with_one_gets_verls_rule_for_one_and_with_none_nothing(ours, stock, norm_by_std):
    """Group a: 7 of 8 masked, the one left gets what verl gives a group of one (mean 0, std 1: its reward).
    Group b: all 4 masked, all 0. Group c, unmasked, is unaffected by either."""
    uids = ["a"] * 8 + ["b"] * 4 + ["c"] * 4
    data = outcome_batch([1.0] + [0.0] * 7 + [0.0] * 4 + [1.0, 0.0, 0.0, 1.0], uids, masked=list(range(1, 12)))
    out = advantages(data, ours, norm_by_std)
    assert torch.equal(out[[0]], advantages(data.select_idxs([0]), stock, norm_by_std))
    assert float(out[0].max()) == pytest.approx(1.0, abs=1e-5), "verl's rule for a group of one: the reward itself"
    assert torch.all(out[1:12] == 0)
    assert torch.equal(out[12:], advantages(data.select_idxs(list(range(12, 16))), stock, norm_by_std))
    everything_masked = outcome_batch([0.0] * 4, ["a"] * 4, masked=[0, 1, 2, 3])
    assert torch.all(advantages(everything_masked, ours, norm_by_std) == 0)


def test_verl_finds_them_by_name_in_a_fresh_process():
    """`import verl` alone loads our entry point (nothing of ours imported first): the estimators by name, and
    the metric in the data metrics of verl's PPO, separated (fully-async) and v1 trainers."""
    code = """
import sys
import verl
assert "uni_agent_gym.advantages.plugin" in sys.modules
from verl.trainer.ppo.core_algos import get_adv_estimator_fn
import verl.trainer.ppo.ray_trainer, verl.experimental.separation.ray_trainer, verl.trainer.ppo.v1.trainer_base
print(get_adv_estimator_fn("grpo_drop_masked").__module__, get_adv_estimator_fn("rloo_drop_masked").__name__)
print(sorted({module.compute_data_metrics.__uni_agent_gym_masked_share__ for module in (verl.trainer.ppo.ray_trainer,
      verl.experimental.separation.ray_trainer, verl.trainer.ppo.v1.trainer_base)}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["uni_agent_gym.advantages.estimators rloo_drop_masked", "[True]"]


def test_the_masked_share_per_cause_is_in_verls_data_metrics():
    """verl's `compute_data_metrics` (as its PPO trainer holds it) adds the share masked per cause from the
    batch's `traj_masked` / `traj_exit_reason` columns; a batch without them gets nothing of ours."""
    data = outcome_batch([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], ["p"] * 8, masked=[1, 2, 3])
    prompts = torch.ones(8, 3, dtype=torch.long)
    data.batch.update({"prompts": prompts, "responses": torch.ones_like(data.batch["response_mask"]), "token_level_scores": data.batch["token_level_rewards"],
                       "attention_mask": torch.cat([torch.ones_like(prompts), torch.ones_like(data.batch["response_mask"])], dim=1)})  # fmt: skip
    data = ray_trainer.compute_advantage(data, adv_estimator="grpo_drop_masked", config=AlgoConfig())
    stock = ray_trainer.compute_data_metrics(batch=data, use_critic=False)
    assert not any(key.startswith("uni_agent_gym/") for key in stock)
    data.non_tensor_batch["traj_masked"] = np.array([False, True, True, True, False, False, False, None], dtype=object)
    data.non_tensor_batch["traj_exit_reason"] = np.array(["finished", "env_error", "timeout", "harness_error", "finished",
                                                          "format_error", "max_tokens", None], dtype=object)  # fmt: skip
    metrics = ray_trainer.compute_data_metrics(batch=data, use_critic=False)
    ours = {key: value for key, value in metrics.items() if key.startswith("uni_agent_gym/")}
    assert ours == {"uni_agent_gym/masked/share": 3 / 8, "uni_agent_gym/masked/env_error": 1 / 8, "uni_agent_gym/masked/timeout": 1 / 8,
                    "uni_agent_gym/masked/aborted": 0.0, "uni_agent_gym/masked/harness_error": 1 / 8}  # fmt: skip
    assert metrics["critic/score/mean"] == stock["critic/score/mean"], "verl's own metrics unchanged"


def loop_yaml(tmp_path: Path, mask: bool, target: str) -> Path:
    entry = {"name": "swe", "_target_": target, "settings": str(CONFIGS / "settings.json"),
             "deployment": str(CONFIGS / "deployment" / "docker.yaml"), "overrides": [f"rollout.mask_abnormal_exit_traj={str(mask).lower()}"]}  # fmt: skip
    if target.endswith("GatewayAgentLoop"):
        entry["harness"] = {"command": "mini", "where": "host", "timeout": 1800}
    path = tmp_path / "loops.yaml"
    path.write_text(yaml.safe_dump([entry]))
    return path


@pytest.mark.parametrize("target", ["uni_agent_gym.verl.agent_loop.UniAgentLoop", "uni_agent_gym.verl.gateway_loop.GatewayAgentLoop"])
@pytest.mark.parametrize("estimator, mask, line", [
    ("grpo", True, '[algorithm] adv_estimator = "grpo_drop_masked"'),
    ("rloo", True, '[algorithm] adv_estimator = "rloo_drop_masked"'),
    ("grpo_vectorized", True, '[algorithm] adv_estimator = "grpo_drop_masked"'),
    ("grpo", False, None),
    ("grpo_drop_masked", True, None),
])  # fmt: skip
def test_check_config_asks_for_ours_where_loops_mask_beside_verls_own(tmp_path, target, estimator, mask, line):
    text = (CONFIGS / "config.toml").read_text().replace('adv_estimator = "grpo_drop_masked"', f'adv_estimator = "{estimator}"')
    text = text.replace('"uni_agent_loop.yaml"', json.dumps(str(loop_yaml(tmp_path, mask, target))))
    (tmp_path / "config.toml").write_text(text)
    check = check_training(load_training(tmp_path / "config.toml"))
    said = [warning for warning in check.warnings if "adv_estimator" in warning]
    if line is None:
        assert said == []
    else:
        assert len(said) == 1 and "the agent loop swe masks" in said[0] and f"{estimator!r} is verl's own" in said[0] and line in said[0]


# ---- the group of 8 with two dead sandboxes, through verl's worker and trainer ----

FIX = "sed -i 's/(len(values) - 1)/len(values)/' stats.py"
# the sandbox's checkout removed and its shell ended: no new shell can start there, the sandbox is gone (env_error)
KILL = 'here=$(pwd); cd / && rm -rf "$here" && exit 3'


def script(trajectory: int) -> list[str]:
    """Each trajectory's turns (its number in the text: the sampled ids tell the rows apart)."""
    if trajectory in DEAD:
        return [bash_call(f"Trajectory {trajectory}.\n", KILL), FINISH]
    return [bash_call(f"Trajectory {trajectory}.\n", FIX if WORKED[trajectory] else "ls"), FINISH]


@pytest.fixture(scope="module")
def dead_group(tmp_path_factory, model_dir):
    """docs/training.md's group: 8 UniAgentLoop trajectories of the toy in local sandboxes under the shipped
    config.toml, 3 fixing the bug, 3 not, and 2 whose sandboxes die at their first command."""
    tmp_path = tmp_path_factory.mktemp("dead-group")
    config = trainer_config(tmp_path, model_dir, uni_agent_entry(tmp_path, {"deployment": {"type": "local"}}), n=8)
    server = SyncingServer(model_dir, [script(trajectory) for trajectory in range(8)], abort_at=None)
    batch = run_to_completion(rollout(config, server, toy_batch_dict("uni_agent")))
    return SimpleNamespace(config=config, server=server, batch=batch, tmp_path=tmp_path)


def trainer_steps(config, batch: DataProto, policy) -> tuple[SimpleNamespace, DataProto]:
    """verl's fully-async trainer's steps up to the advantage (`SeparateRayPPOTrainer._fit_*`)."""
    temperature = config.actor_rollout_ref.rollout.temperature

    def old_log_prob(data: DataProto):  # the trainer's actor forward (decoupled mode); entropy is only logged
        log_probs, _ = actor_log_probs(policy, data, temperature)
        return DataProto.from_dict({"old_log_probs": log_probs, "entropys": torch.zeros_like(log_probs)}), 0.0

    trainer = SimpleNamespace(config=config, metrics={}, timing_raw={"step": 1.0}, use_rm=False, use_critic=False, _compute_old_log_prob=old_log_prob,
                              resource_pool_manager=SimpleNamespace(get_n_gpus=lambda: 1))  # fmt: skip
    batch = SeparateRayPPOTrainer._fit_compute_reward(trainer, copy.deepcopy(batch))
    batch = SeparateRayPPOTrainer._fit_compute_log_prob(trainer, batch)
    return trainer, SeparateRayPPOTrainer._fit_compute_advantage(trainer, batch)


def test_two_dead_sandboxes_leave_the_group_of_8(dead_group, model_dir):
    """Under the shipped config (grpo_drop_masked): the 6 real trajectories' advantages equal verl's GRPO of
    the same 6 as a group alone, and verl's stock GRPO on the same batch gives them others (1.208 / -0.725
    instead of 0.913 / -0.913); the dead ones' advantage and gradient are 0; the step's metrics say 2 of 8
    masked, both env_error."""
    group, server = dead_group, dead_group.server
    assert group.config.algorithm.adv_estimator == "grpo_drop_masked", "the shipped config.toml selects it"
    rows = trajectory_rows(group)  # row -> trajectory
    extra = group.batch.non_tensor_batch
    assert [(extra["traj_exit_reason"][row], bool(extra["traj_masked"][row])) for row in range(8)] == [
        ("env_error", True) if rows[row] in DEAD else ("finished", False) for row in range(8)], extra["reward_report"]  # fmt: skip
    assert group.batch.batch["rm_scores"].sum(dim=1).tolist() == [0.0 if rows[row] in DEAD else WORKED[rows[row]] for row in range(8)]

    policy = tiny_model(model_dir, server.state_dicts[server.version])
    trainer, batch = trainer_steps(group.config, group.batch, policy)
    mask = batch.batch["response_mask"].bool()
    real = [row for row in range(8) if rows[row] not in DEAD]
    dead = [row for row in range(8) if rows[row] in DEAD]
    assert not mask[dead].any() and all(mask[row].any() for row in real)

    alone = ray_trainer.compute_advantage(batch.select_idxs(real), adv_estimator="grpo", norm_adv_by_std_in_grpo=True)
    assert torch.equal(batch.batch["advantages"][real], alone.batch["advantages"]), "the 6 real ones as a group alone"
    assert torch.all(batch.batch["advantages"][dead] == 0)
    fair = {row: round(float(batch.batch["advantages"][row][mask[row]].unique().item()), 3) for row in real}
    assert fair == {row: 0.913 if WORKED[rows[row]] else -0.913 for row in real}

    stock_config = copy.deepcopy(group.config)
    stock_config.algorithm.adv_estimator = "grpo"
    _, stock = trainer_steps(stock_config, group.batch, policy)
    biased = {row: round(float(stock.batch["advantages"][row][mask[row]].unique().item()), 3) for row in real}
    assert biased == {row: 1.208 if WORKED[rows[row]] else -0.725 for row in real}, "verl's GRPO counts the dead as rewards 0"

    actor = omega_conf_to_dataclass(group.config.actor_rollout_ref.actor)
    log_prob, logits = actor_log_probs(policy, batch, group.config.actor_rollout_ref.rollout.temperature, grad=True)
    pg_loss, _ = get_policy_loss_fn(actor.policy_loss.loss_mode)(
        old_log_prob=batch.batch["old_log_probs"], log_prob=log_prob, advantages=batch.batch["advantages"], response_mask=mask,
        loss_agg_mode=actor.loss_agg_mode, config=actor, rollout_is_weights=batch.batch.get("rollout_is_weights"),
    )  # fmt: skip
    pg_loss.backward()
    for row in dead:
        assert torch.all(logits[row].grad == 0), f"row {row}: a dead sandbox's trajectory has a gradient"
    spans = sampled_spans(batch, server.calls)
    for row in real:
        start, end, _ = spans[row][0]
        assert logits[row].grad[start:end].abs().sum() > 0, f"row {row}: no gradient on its sampled tokens"

    SeparateRayPPOTrainer._fit_collect_metrics(trainer, batch)  # what the fully-async trainer logs for the step
    ours = {key: value for key, value in trainer.metrics.items() if key.startswith("uni_agent_gym/")}
    assert ours == {"uni_agent_gym/masked/share": 0.25, "uni_agent_gym/masked/env_error": 0.25, "uni_agent_gym/masked/aborted": 0.0,
                    "uni_agent_gym/masked/timeout": 0.0,  # and the toy's strength, never measured: no reward from a weak task
                    "uni_agent_gym/survivors/positive_share": 0.0, "uni_agent_gym/survivors/task_share": 0.0,
                    "uni_agent_gym/survivors/unmeasured_share": 1.0}  # fmt: skip


def test_check_config_stops_an_estimator_verl_does_not_know(tmp_path):
    """verl looks the name up only at its first training step, after the rollout: check-config says it first."""
    text = (CONFIGS / "config.toml").read_text().replace('adv_estimator = "grpo_drop_masked"', 'adv_estimator = "grpo_dropmasked"')
    (tmp_path / "config.toml").write_text(text.replace('"uni_agent_loop.yaml"', json.dumps(str(CONFIGS / "uni_agent_loop.yaml"))))
    problems = check_training(load_training(tmp_path / "config.toml")).problems
    assert any("adv_estimator = 'grpo_dropmasked' is not an estimator verl knows" in problem and "grpo_drop_masked" in problem
               for problem in problems), problems  # fmt: skip
