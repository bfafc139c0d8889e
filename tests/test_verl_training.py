"""The seed configs (`configs/config.toml`, `configs/uni_agent_loop.yaml`, `configs/settings.json`):
`check-config --training` passes on them as shipped and explains each contradiction; `train` turns
them into the verl command; `prepare-data` writes rows verl's own dataset reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from uni_agent_gym.cli import main
from uni_agent_gym.datasets import Task
from uni_agent_gym.verl.agent_loop import instance_from_sample
from uni_agent_gym.verl.trainer_config import compose_trainer_config
from uni_agent_gym.verl.training import check_training, load_training

pytestmark = pytest.mark.slow  # each check composes verl's trainer config: not in make test-fast

CONFIGS = Path(__file__).resolve().parents[1] / "uni_agent_gym" / "configs"
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


def test_train_dry_run_prints_a_command_that_runs_as_printed(tmp_path, capsys, monkeypatch):
    """--dry-run launches nothing; it writes the agent-loop YAML the command names (absolute paths, --settings
    applied), prints it, the GPUs the config takes, and a command that runs as printed: verl's own entry point
    composes it (Hydra's `--cfg job`, which stops before Ray and the GPUs) from a shell whose PATH has no `python`."""
    import subprocess
    import sys

    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("--dry-run must not launch"))
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / "my-settings.json"
    settings.write_text((CONFIGS / "settings.json").read_text())
    toml = edited_toml(tmp_path)
    assert main(["train", "--config", str(toml), "--settings", str(settings), "--dry-run", "--output", "runs"]) == 0
    out = capsys.readouterr().out
    generated = tmp_path / "runs" / "swe-grpo" / "uni_agent_loop.yaml"
    assert "note: GPUs: the config takes 8 (4 for training, [trainer] nnodes 1 x n_gpus_per_node 4, + 4 for rollout" in out
    command = next(line for line in out.splitlines() if " -m verl." in line)
    assert command.startswith(f"{sys.executable} -m verl.experimental.fully_async_policy.fully_async_main "), command
    assert f"actor_rollout_ref.rollout.agent.agent_loop_config_path={generated}" in command
    assert f"data.train_files={tmp_path.parent / 'data' / 'swe_train.parquet'}" in command
    printed = out[out.index(f"agent loop config: {generated}"):out.index(command)].split("\n", 1)[1]
    entry = yaml.safe_load(generated.read_text())[0]
    assert yaml.safe_load(printed)[0] == entry
    assert entry["settings"] == str(settings) and entry["deployment"] == str(CONFIGS / "deployment" / "docker.yaml")
    done = subprocess.run(["bash", "-c", f"{command} --cfg job"], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"agent_loop_config_path: {generated}" in done.stdout


def test_train_runs_verl_and_reports_its_failure(tmp_path, monkeypatch):
    """verl's trainer needs GPUs, so the launch itself is captured here, and this machine's GPU count is faked
    (it has none); the command is what runs."""
    import subprocess

    from uni_agent_gym.verl import training

    launched = []
    monkeypatch.setattr(subprocess, "call", lambda command: launched.append(command) or 3)
    monkeypatch.setattr(training, "visible_gpus", lambda: 4)
    monkeypatch.setenv("MODEL_PATH", str(SHARED / "tokenizers" / "qwen2.5-instruct"))  # train checks the tokenizer verl loads
    toml = ppo_toml(tmp_path, ("train_batch_size = 0", "train_batch_size = 8"), ("hybrid_engine = false", "hybrid_engine = true"))
    assert main(["train", "--config", str(toml), "--output", str(tmp_path / "runs")]) == 1
    assert launched[0][1:3] == ["-m", "verl.trainer.main_ppo"] and "data.train_batch_size=8" in launched[0]


def test_prepare_data_rows_read_back_by_verls_dataset(tmp_path, capfd):
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    output = tmp_path / "train.parquet"
    capfd.readouterr()
    assert main(["prepare-data", "--dataset", str(SHARED / "swebench" / "derived.jsonl"), "--slice", "0:3", "--output", str(output)]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("wrote 3 rows for agent loop 'uni_agent' to ") and err == "", err  # no progress bar on stderr
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


# config.toml values in quotes (issue 60, item 7): id -> (command, edits, the problem lines). Each file also has a
# typo, which must be listed beside them; the staleness arithmetic used to stop on the text with a TypeError.
TYPO = ("return_raw_chat = true", "return_raw_chat = true\nmax_promt_length = 3")
TYPO_LINE = "problem: config.toml: verl has no key data.max_promt_length ([data] max_promt_length): did you mean max_prompt_length?"
QUOTED = {
    "n": (["check-config"], [("\nn = 8\n", '\nn = "8"\n')],
          ["""[rollout] n = "8" is quoted: verl reads a number there and would get the text '8'; write n = 8, without quotes."""]),
    "n, train --dry-run": (["train", "--dry-run"], [("\nn = 8\n", '\nn = "8"\n')], ['[rollout] n = "8" is quoted']),
    "num_workers and n": (["check-config"], [("num_workers = 8", 'num_workers = "8"'), ("\nn = 8\n", '\nn = "8"\n')],
                          ['[rollout.agent] num_workers = "8" is quoted', '[rollout] n = "8" is quoted']),
    "a float": (["check-config"], [("staleness_threshold = 0.5", 'staleness_threshold = "0.5"')],
                ['[async_training] staleness_threshold = "0.5" is quoted: verl reads a number there', "write staleness_threshold = 0.5,"]),
    "a boolean": (["check-config"], [("enable = true", 'enable = "true"')],
                  ["""[rollout.multi_turn] enable = "true" is quoted: verl reads true or false there and would get the text 'true'; write enable = true"""]),
    "not a number": (["check-config"], [("num_workers = 8", 'num_workers = "eight"')],
                     ['[rollout.agent] num_workers = "eight" is quoted: verl reads a number there', "write a number there, without quotes."]),
    "a key verl leaves unset": (["check-config"], [("max_model_len = 32768", 'max_model_len = "32768"')],
                                ['[rollout] max_model_len = "32768" is quoted', "write max_model_len = 32768"]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(QUOTED))
def test_a_quoted_number_is_one_problem_line_and_every_other_problem_is_listed(case, tmp_path, capsys, monkeypatch):
    import subprocess

    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("must not launch"))
    command, edits, expected = QUOTED[case]
    toml = edited_toml(tmp_path, *edits, TYPO)
    argv = [command[0], "--training" if command[0] == "check-config" else "--config", str(toml), *command[1:]]
    assert main(argv + (["--output", str(tmp_path / "runs")] if command[0] == "train" else [])) == 1
    out = capsys.readouterr().out
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    assert "Traceback" not in out and TYPO_LINE in problems, out
    assert len(problems) == 1 + len(edits), problems  # one line each, nothing else
    for words in expected:
        assert any(words in line for line in problems), (words, problems)


# `train` checks the GPUs this machine shows before it starts verl (and its Ray): id -> (the PPO config or not,
# the GPUs shown, RAY_ADDRESS, the error line or None where it launches). Faked: the GPU count (this machine has
# no GPU; torch.cuda.device_count() is what is replaced) and the launch (verl needs the GPUs).
GPU_ROWS = {
    "none shown": (False, 0, None, "error: the config takes 8 GPUs (4 for training, [trainer] nnodes 1 x n_gpus_per_node 4, + 4 for "
                   "rollout, [rollouter] nnodes 1 x n_gpus_per_node 4), and this machine shows 0"),
    "one short": (False, 7, None, "error: the config takes 8 GPUs (4 for training"),
    "ppo, too few": (True, 2, None, "error: the config takes 4 GPUs ([trainer] nnodes 1 x n_gpus_per_node 4, shared by training and "
                     "rollout: hybrid engine), and this machine shows 2"),
    "enough": (False, 8, None, None),
    "ppo, enough": (True, 4, None, None),
    "a Ray cluster to join": (False, 0, "10.0.0.1:6379", None),
}  # fmt: skip


@pytest.mark.parametrize("case", list(GPU_ROWS))
def test_train_checks_the_gpus_this_machine_shows_before_it_starts_verl(case, tmp_path, capsys, monkeypatch):
    import subprocess

    from uni_agent_gym.verl import training

    ppo, shown, ray_address, error = GPU_ROWS[case]
    launched = []
    monkeypatch.setattr(subprocess, "call", lambda command: launched.append(command) or 0)
    monkeypatch.setattr(training, "visible_gpus", lambda: shown)
    monkeypatch.setenv("MODEL_PATH", str(SHARED / "tokenizers" / "qwen2.5-instruct"))  # train checks the tokenizer verl loads
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    if ray_address:
        monkeypatch.setenv("RAY_ADDRESS", ray_address)
    toml = ppo_toml(tmp_path, ("train_batch_size = 0", "train_batch_size = 8"), ("hybrid_engine = false", "hybrid_engine = true")) \
        if ppo else edited_toml(tmp_path)  # fmt: skip
    code = main(["train", "--config", str(toml), "--output", str(tmp_path / "runs")])
    out = " ".join(capsys.readouterr().out.split())
    if error is None:
        assert code == 0 and len(launched) == 1, out
    else:
        assert code == 1 and launched == [] and error in out and out.count("error:") == 1, out
        assert not (tmp_path / "runs").exists(), "nothing is written for a run that cannot start"


def _loop_yaml(folder: Path, deployment: str) -> Path:
    entry = yaml.safe_load((CONFIGS / "uni_agent_loop.yaml").read_text())[0]
    entry.update(settings=str(CONFIGS / "settings.json"), deployment=str(CONFIGS / "deployment" / deployment))
    path = folder / "uni_agent_loop.yaml"
    path.write_text(yaml.safe_dump([entry]))
    return path


# rows of a language bound for a deployment (issue 60, item 9): id -> (the rows' languages, the entry's deployment
# file, the problem's words or None). The rows are prepare-data's (verl_rows); the toy needs no environment.
LANGUAGE_ROWS = {
    "go and c on local": (["go", "c", "go", "python"], "local.yaml", "holds 1 c, 2 go row(s), and the UniAgentLoop entry's deployment "
                          "is local, which makes Python environments only (it refuses every other task at reset)"),
    "java and php on local": (["java", "php"], "local.yaml", "holds 1 java, 1 php row(s)"),
    "go on docker": (["go"], "docker.yaml", None),
    "python on local": (["python", None], "local.yaml", None),
}  # fmt: skip


@pytest.mark.parametrize("case", list(LANGUAGE_ROWS))
def test_rows_the_deployment_refuses_are_a_problem(case, tmp_path, capsys):
    from uni_agent_gym.verl.data import verl_rows, write_parquet

    languages, deployment, expected = LANGUAGE_ROWS[case]
    tasks = [Task(f"org__repo-{index}", "org/repo", "swe-bench", problem_statement="fix it", language=language or "python")
             for index, language in enumerate(languages)]  # fmt: skip
    data = write_parquet(verl_rows(tasks), tmp_path / "data" / "train.parquet")
    loop = _loop_yaml(tmp_path, deployment)
    toml = edited_toml(tmp_path, (json.dumps(str(CONFIGS / "uni_agent_loop.yaml")), json.dumps(str(loop))),
                       ('"../data/swe_train.parquet"', json.dumps(str(data))), ('"../data/swe_val.parquet"', json.dumps(str(data))))  # fmt: skip
    code = main(["check-config", "--training", str(toml)])
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem:")]
    if expected is None:
        assert code == 0 and problems == [], problems
    else:
        assert code == 1 and len(problems) == 2, problems  # train_files and val_files
        assert all(f"{data} {expected}" in line and str(loop) in line for line in problems), problems


def test_a_relative_data_path_that_is_not_there_is_reported_with_where_it_was_looked_for(tmp_path, capsys, monkeypatch):
    """Written relative to the folder the command runs in (where prepare-data wrote it), it is looked for
    beside config.toml: the warning names both, and the line that finds it."""
    configs, data = tmp_path / "configs", tmp_path / "data" / "train.parquet"
    configs.mkdir()
    data.parent.mkdir()
    data.write_bytes(b"")
    toml = edited_toml(configs, ('"../data/swe_train.parquet"', '"data/train.parquet"'))
    monkeypatch.chdir(tmp_path)
    assert main(["check-config", "--training", str(toml)]) == 0
    out = capsys.readouterr().out
    assert (f"warning: data.train_files: data/train.parquet does not exist yet: it is looked for at {configs / 'data' / 'train.parquet'} "
            f"(a relative path is taken from config.toml's folder {configs}, not from where the command runs); make it with "
            f"`uni-agent-gym prepare-data --output {configs / 'data' / 'train.parquet'}`. {data} exists: to train on it, write "
            'train_files = "../data/train.parquet".') in out, out  # fmt: skip
