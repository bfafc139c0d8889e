"""The seed configs (`configs/config.toml`, `configs/uni_agent_loop.yaml`, `configs/settings.json`):
`check-config --training` passes on them as shipped and explains each contradiction; `train` turns
them into the verl command; `prepare-data` writes rows verl's own dataset reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from uni_agent_gym.cli import main
from uni_agent_gym.verl.agent_loop import instance_from_sample
from uni_agent_gym.verl.trainer_config import compose_trainer_config
from uni_agent_gym.verl.training import check_training, load_training

pytestmark = pytest.mark.slow  # each check composes verl's trainer config: not in make test-fast

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SEED_TOML = (CONFIGS / "config.toml").read_text()
SHARED = Path(__file__).resolve().parents[2] / "shared"


def edited_toml(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """The seed config.toml with text replacements, the agent-loop path made absolute."""
    text = SEED_TOML.replace('"uni_agent_loop.yaml"', json.dumps(str(CONFIGS / "uni_agent_loop.yaml")))
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def ppo_toml(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """The seed config.toml made a PPO run: the fully-async tables and keys removed."""
    path = edited_toml(tmp_path, ("use_rollout_log_probs = true\n", ""), *edits)
    path.write_text(path.read_text().split("\n[rollouter]\n")[0])
    return path


def test_shipped_configs_are_consistent(capsys, monkeypatch):
    monkeypatch.chdir(CONFIGS.parent)
    assert main(["check-config", "--training", "configs/config.toml", "--settings", "configs/settings.json"]) == 0
    assert "training configs are consistent (verl fully-async trainer" in capsys.readouterr().out


def test_overrides_compose_into_verl_config_as_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MODEL_PATH", "/models/my model")
    run = load_training(edited_toml(tmp_path))
    trainer = compose_trainer_config(run.overrides, async_training=True)
    assert trainer.actor_rollout_ref.model.path == "/models/my model"  # ${VAR}, a space survives the quoting
    assert trainer.actor_rollout_ref.rollout.max_model_len == 32768 and trainer.actor_rollout_ref.rollout.prompt_length == 8192
    assert list(trainer.trainer.logger) == ["console"] and trainer.actor_rollout_ref.actor.optim.lr == 1e-6
    assert trainer.rollout.total_rollout_steps == 512 and trainer.async_training.staleness_threshold == 0.5
    assert trainer.actor_rollout_ref.rollout.agent.agent_loop_config_path == str(CONFIGS / "uni_agent_loop.yaml")
    assert run.gym_config().env.workspace == "image" and run.gym_config().deployment.type == "docker"


@pytest.mark.parametrize(
    "edits, expected",
    [
        ([("max_model_len = 32768", "max_model_len = 16384")], "8192 + 24576 = 32768 > rollout.max_model_len = 16384"),
        ([("enable = true", "enable = false")], "multi_turn.enable is false"),
        ([("max_parallel_calls = 1", "max_parallel_calls = 4")], "max_parallel_calls = 4"),
        ([("staleness_threshold = 0.5", "staleness_threshold = -1")], "staleness_threshold = -1"),
        ([("total_rollout_steps = 512", "total_rollout_steps = 16")], "training stalls at step 0"),
        ([("trigger_parameter_sync_step = 4", "trigger_parameter_sync_step = 0")], "weights would never sync"),
        ([("gen_batch_size = 1", "gen_batch_size = 4")], "data.gen_batch_size = 1"),
        ([("max_assistant_turns = 12", "max_assistant_turns = 10")], "max_assistant_turns = 10 but the gym's env.max_turns = 12"),
        ([("calculate_log_probs = true", "calculate_log_probs = false")], "actor.use_rollout_log_probs (algorithm.rollout_correction.bypass_mode) trains on them"),
        ([("ppo_micro_batch_size_per_gpu = 1\n", "")], "verl rejects actor_rollout_ref.actor"),
        ([("return_raw_chat = true", "return_raw_chat = true\nno_such_key = 3")], "verl has no key data.no_such_key"),
    ],
)
def test_each_contradiction_is_caught_and_explained(tmp_path, edits, expected):
    problems = check_training(load_training(edited_toml(tmp_path, *edits))).problems
    assert any(expected in problem for problem in problems), problems


def test_the_seed_values_are_consistent_and_each_reading_is_named(tmp_path):
    """The shipped config carries the seed's training values; check-config names how verl reads them and
    prints verl's staleness arithmetic beside what the rollout keeps in flight."""
    problems, warnings, notes, additions = check_training(load_training(edited_toml(tmp_path)))
    assert problems == [] and [w for w in warnings if "does not exist yet" not in w] == [], (problems, warnings)
    assert additions == {}, "the shipped config lacks nothing"
    trainer = compose_trainer_config(load_training(edited_toml(tmp_path)).overrides, async_training=True)
    assert trainer.async_training.partial_rollout is True and trainer.async_training.require_batches == 2
    assert trainer.actor_rollout_ref.rollout.n == 8 and trainer.actor_rollout_ref.rollout.agent.num_workers == 8
    assert any("max_assistant_turns = 12 is read by verl's own ToolAgentLoop" in note and "env.max_turns (12)" in note for note in notes)
    assert any("bounds GSPO's sequence-level ratio" in note for note in notes), notes
    staleness = "ppo_mini_batch_size 8 x require_batches 2 x (staleness_threshold 0.5 + 1) x trigger_parameter_sync_step 4 = 96 samples"
    assert any(staleness in note and "768 trajectories at n = 8" in note for note in notes), notes
    assert any("num_workers 8 x the gym's rollout.max_concurrency 32) = 256 trajectories at once" in note for note in notes), notes


@pytest.mark.parametrize(
    "edits, kind, expected",
    [
        ([("[rollout]\n", '[rollout]\nmode = "async"\n')], "notes", "verl 0.9.1 has only the async rollout"),
        ([("max_parallel_calls = 1", "max_parallel_calls = 1\nmax_user_turns = 11")], "notes", "max_user_turns = 11 is read by verl's own ToolAgentLoop only"),
        ([('loss_mode = "gspo"', 'loss_mode = "vanilla"')], "warnings", "clip ratio 0.0003/0.0004 (low/high) bounds a token-level ratio (vanilla)"),
        ([("bypass_mode = false", "bypass_mode = true")], "warnings", "loss_mode = 'gspo' is replaced by algorithm.rollout_correction.bypass_mode"),
        ([("bypass_mode = false", "bypass_mode = true")], "warnings", "bounds a token-level ratio (ppo_clip)"),
        ([("staleness_threshold = 0.5", "staleness_threshold = 0"), ("require_batches = 2", "require_batches = 1")], "warnings",
         "could keep 256 trajectories in flight but staleness lets 256 start per weight sync: generation pauses on staleness"),
    ],
    ids=["rollout-mode", "max-user-turns", "token-level-clip", "bypass-replaces-gspo", "bypass-clips-tokens", "staleness-paces"],
)
def test_each_seed_value_verl_reads_differently_is_explained(tmp_path, edits, kind, expected):
    check = check_training(load_training(edited_toml(tmp_path, *edits)))
    assert check.problems == [] and any(expected in line for line in getattr(check, kind)), check


def test_check_config_prints_the_notes(capsys, monkeypatch):
    monkeypatch.chdir(CONFIGS.parent)
    assert main(["check-config", "--training", "configs/config.toml"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "note: staleness: max_required_samples = ppo_mini_batch_size 8" in out


def test_ppo_needs_the_hybrid_engine_and_a_batch(tmp_path):
    problems = check_training(load_training(ppo_toml(tmp_path))).problems
    assert any("PPO trainer (no [async_training] table) needs actor_rollout_ref.hybrid_engine = true" in problem for problem in problems)
    problems = check_training(load_training(ppo_toml(tmp_path, ("train_batch_size = 0", "train_batch_size = 8"),
                                                        ("hybrid_engine = false", "hybrid_engine = true")))).problems  # fmt: skip
    assert problems == []


def test_a_missing_agent_loop_and_gym_contradictions(tmp_path):
    problems = check_training(load_training(edited_toml(tmp_path, (str(CONFIGS / "uni_agent_loop.yaml"), "/nowhere/loop.yaml")))).problems
    assert any("/nowhere/loop.yaml does not exist" in problem for problem in problems)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"rollout": {"max_tokens_per_turn": 30000}}))
    problems = check_training(load_training(edited_toml(tmp_path), settings=settings)).problems
    assert any("max_tokens_per_turn = 30000 exceeds max_response_length = 24576" in problem for problem in problems)


def test_check_config_fails_with_the_problems_listed(tmp_path, capsys):
    toml = edited_toml(tmp_path, ("enable = true", "enable = false"))
    assert main(["check-config", "--training", str(toml)]) == 1
    out = capsys.readouterr().out
    assert "problem: rollout.multi_turn.enable is false" in out and "1 problem(s)" in out


def test_a_malformed_agent_loop_yaml_is_one_error_line(tmp_path, capsys):
    loop = tmp_path / "loop.yaml"
    loop.write_text("- name: uni_agent\n  _target_: [unclosed\n")
    toml = edited_toml(tmp_path, (json.dumps(str(CONFIGS / "uni_agent_loop.yaml")), json.dumps(str(loop))))
    assert main(["check-config", "--training", str(toml)]) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out and f"{loop} (rollout.agent.agent_loop_config_path in {toml}) is not valid YAML" in out


def test_train_dry_run_prints_the_command_and_the_agent_loop_and_writes_nothing(tmp_path, capsys, monkeypatch):
    """--dry-run only prints: the agent-loop YAML train would write (absolute paths, --settings applied) and a
    command that names it by its absolute path, beside the absolute data paths, though --output is relative."""
    import subprocess

    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("--dry-run must not launch"))
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / "my-settings.json"
    settings.write_text((CONFIGS / "settings.json").read_text())
    toml = edited_toml(tmp_path)
    assert main(["train", "--config", str(toml), "--settings", str(settings), "--dry-run", "--output", "runs"]) == 0
    out = capsys.readouterr().out
    generated = tmp_path / "runs" / "swe-grpo" / "uni_agent_loop.yaml"
    assert not (tmp_path / "runs").exists(), "--dry-run wrote files"
    assert "python -m verl.experimental.fully_async_policy.fully_async_main" in out
    assert f"actor_rollout_ref.rollout.agent.agent_loop_config_path={generated}" in out and f"data.train_files={tmp_path.parent / 'data' / 'swe_train.parquet'}" in out
    printed = out[out.index("(not written: --dry-run)"):out.index("python -m verl")].split("\n", 1)[1]
    entry = yaml.safe_load(printed)[0]
    assert entry["settings"] == str(settings) and entry["deployment"] == str(CONFIGS / "deployment" / "docker.yaml")


def test_train_runs_verl_and_reports_its_failure(tmp_path, monkeypatch):
    """verl's trainer needs GPUs, so the launch itself is captured here; the command is what runs."""
    import subprocess

    launched = []
    monkeypatch.setattr(subprocess, "call", lambda command: launched.append(command) or 3)
    toml = ppo_toml(tmp_path, ("train_batch_size = 0", "train_batch_size = 8"), ("hybrid_engine = false", "hybrid_engine = true"))
    assert main(["train", "--config", str(toml), "--output", str(tmp_path / "runs")]) == 1
    assert launched[0][1:3] == ["-m", "verl.trainer.main_ppo"] and "data.train_batch_size=8" in launched[0]


def test_prepare_data_rows_read_back_by_verls_dataset(tmp_path):
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    output = tmp_path / "train.parquet"
    assert main(["prepare-data", "--dataset", str(SHARED / "swebench" / "derived.jsonl"), "--slice", "0:3", "--output", str(output)]) == 0
    tokenizer = AutoTokenizer.from_pretrained(SHARED / "tokenizers" / "qwen2.5-instruct")
    dataset = RLHFDataset([str(output)], tokenizer, compose_trainer_config(["actor_rollout_ref.rollout.name=vllm"]).data)
    rows = [json.loads(line) for line in (SHARED / "swebench" / "derived.jsonl").read_text().splitlines()[:3]]
    assert len(dataset) == 3
    sample = dataset[1]
    assert sample["agent_name"] == "uni_agent"
    instance = instance_from_sample(sample)
    assert instance["instance_id"] == rows[1]["instance_id"] and instance["patch"] == rows[1]["patch"]


@pytest.mark.parametrize(
    "removed, expected",
    [
        ('train_files = "../data/swe_train.parquet"\n', 'data.train_files is not set: verl would train on its example data '
                                                     '(~/data/rlhf/gsm8k/train.parquet). Add to [data]: train_files = "'),
        ('val_files = "../data/swe_val.parquet"\n', 'data.val_files is not set: verl would validate on its example data '
                                                 '(~/data/rlhf/gsm8k/test.parquet). Add to [data]: val_files = "'),
        ('path = "${MODEL_PATH:-Qwen/Qwen2.5-Coder-7B-Instruct}"\n', "actor_rollout_ref.model.path is not set: verl would train its "
                                                                      'example model (~/models/deepseek-llm-7b-chat). Add to [model]: path = "'),
    ],
    ids=["train-files", "val-files", "model-path"],
)  # fmt: skip
def test_the_data_and_the_model_are_required_with_the_line_to_add(tmp_path, capsys, monkeypatch, removed, expected):
    """verl has defaults for both (its example data and model): a set without them is not consistent, in
    check-config --training and in train --dry-run alike."""
    import subprocess

    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("must not launch"))
    toml = edited_toml(tmp_path, (removed, ""))
    assert any(expected in problem for problem in check_training(load_training(toml)).problems)
    for command in (["check-config", "--training", str(toml)], ["train", "--config", str(toml), "--dry-run", "--output", str(tmp_path / "runs")]):
        assert main(command) == 1
        assert expected in " ".join(capsys.readouterr().out.split()), command


@pytest.mark.parametrize("given", [["--config", "/nowhere/settings.yaml"], ["--set", "bogus.key=1"], ["--deployment", "local"]],
                         ids=["config", "set", "deployment"])  # fmt: skip
def test_check_config_training_refuses_gym_options_it_would_not_apply(tmp_path, capsys, given):
    assert main(["check-config", "--training", str(edited_toml(tmp_path)), *given]) == 1
    out = capsys.readouterr().out
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert out.startswith(f"error: {given[0]}: not used with --training (the run's gym settings are its agent-loop entry's"), out


def test_the_agent_loop_yaml_checked_is_the_one_the_toml_names_from_its_own_folder(tmp_path, capsys, monkeypatch):
    """Run from a directory that has a YAML of the same relative name, check-config --training still checks
    (and prints) the one beside the TOML, the one train hands verl."""
    seed, elsewhere = tmp_path / "seed", tmp_path / "elsewhere"
    for folder in (seed, elsewhere):
        folder.mkdir()
    entry = yaml.safe_load((CONFIGS / "uni_agent_loop.yaml").read_text())[0]
    entry.update(settings=str(CONFIGS / "settings.json"), deployment=str(CONFIGS / "deployment" / "docker.yaml"))
    (seed / "uni_agent_loop.yaml").write_text(yaml.safe_dump([entry]))
    (elsewhere / "uni_agent_loop.yaml").write_text(yaml.safe_dump([{**entry, "name": "another_loop"}]))
    toml = edited_toml(seed, (json.dumps(str(CONFIGS / "uni_agent_loop.yaml")), '"uni_agent_loop.yaml"'))
    monkeypatch.chdir(elsewhere)
    assert main(["check-config", "--training", str(toml)]) == 0, capsys.readouterr().out
    out = " ".join(capsys.readouterr().out.split())
    assert f"agent-loop YAML: {seed / 'uni_agent_loop.yaml'}" in out and str(elsewhere) not in out, out


def test_relative_paths_in_the_toml_are_taken_from_its_folder(tmp_path, monkeypatch):
    """A copied config.toml keeps working wherever it is run from."""
    folder, elsewhere = tmp_path / "copied", tmp_path / "elsewhere"
    elsewhere.mkdir()
    toml = edited_toml(tmp_path, (json.dumps(str(CONFIGS / "uni_agent_loop.yaml")), '"loops/uni_agent_loop.yaml"'))
    folder.mkdir()
    toml = toml.rename(folder / "config.toml")
    monkeypatch.chdir(elsewhere)
    run = load_training(toml)
    assert run.values["data.train_files"] == str(tmp_path / "data" / "swe_train.parquet")  # ../data/ from the TOML's folder
    assert run.values["data.val_files"] == str(tmp_path / "data" / "swe_val.parquet")
    assert run.loop_yaml == folder / "loops" / "uni_agent_loop.yaml"
