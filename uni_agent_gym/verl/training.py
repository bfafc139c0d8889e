"""A verl training run from our three seed configs: `config.toml` (verl side), the agent-loop YAML it
names, and the gym settings that YAML points to.

    run = load_training("configs/config.toml", settings="configs/settings.json")
    check = check_training(run)      # problems, warnings (each says what contradicts what, and the fix), notes
    run.command()                    # python -m verl.trainer.main_ppo key=value ...

The TOML's tables are verl's Hydra keys, with three shorthands: `[model]` is `actor_rollout_ref.model`,
`[rollout]` is `actor_rollout_ref.rollout` (so `[rollout.agent]`, `[rollout.multi_turn]`), and
`[rollouter]` is the fully-async trainer's top-level `rollout` (its GPUs and total steps). An
`[async_training]` table selects verl's fully-async trainer; without it, PPO (`main_ppo`).
`${VAR}` / `${VAR:-default}` are resolved from the environment; relative paths are taken from the
current directory and made absolute, so Ray workers started elsewhere find them.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from uni_agent_gym.config import GymConfig, interpolate, load_config, read_config_file
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.verl.trainer_config import ASYNC_ENTRY, PPO_ENTRY, compose_trainer_config

LOOP_TARGET = "uni_agent_gym.verl.agent_loop.UniAgentLoop"
SHORTHANDS = {"model": "actor_rollout_ref.model", "rollout": "actor_rollout_ref.rollout", "rollouter": "rollout"}
PATH_KEYS = ("data.train_files", "data.val_files", "actor_rollout_ref.rollout.agent.agent_loop_config_path")
ROLLOUT = "actor_rollout_ref.rollout"
_PLAIN = re.compile(r"[A-Za-z_/~][A-Za-z0-9_\-./:@~]*")


def flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}; lists and scalars are values."""
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def hydra_value(value: Any) -> str:
    """A value in Hydra's override grammar (strings quoted, so paths and spaces survive)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{hydra_value(item)}" for key, item in value.items()) + "}"
    text = str(value)
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text:  # unambiguous as it stands (a path, a name)
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class TrainingRun:
    """Everything a launch needs, resolved; `overrides` are verl's Hydra overrides."""

    toml_path: Path
    values: dict[str, Any]  # flattened verl keys -> values (shorthands expanded, paths absolute)
    async_training: bool
    loop_yaml: Path | None
    loop_entries: list[dict[str, Any]] = field(default_factory=list)
    settings: Path | None = None  # replaces the agent-loop entry's own `settings`
    generated_loop_yaml: Path | None = None  # set by `write_loop_yaml`

    @property
    def overrides(self) -> list[str]:
        values = dict(self.values)
        if self.generated_loop_yaml is not None:
            values[f"{ROLLOUT}.agent.agent_loop_config_path"] = str(self.generated_loop_yaml)
        return [f"{key}={hydra_value(value)}" for key, value in values.items()]

    @property
    def entry(self) -> str:
        return ASYNC_ENTRY if self.async_training else PPO_ENTRY

    def command(self) -> list[str]:
        return [sys.executable, "-m", self.entry, *self.overrides]

    def shell_command(self) -> str:
        return shlex.join(["python", "-m", self.entry, *self.overrides])

    def loop_entry(self) -> dict[str, Any] | None:
        """The agent-loop YAML's UniAgentLoop entry, with `--settings` applied."""
        for entry in self.loop_entries:
            if entry.get("_target_") == LOOP_TARGET:
                return {**entry, "settings": str(self.settings)} if self.settings else dict(entry)
        return None

    @property
    def loop_dir(self) -> Path:
        """Where the agent-loop entry's relative paths are taken from."""
        return self.loop_yaml.parent if self.loop_yaml else Path.cwd()

    def gym_config(self) -> GymConfig:
        """The gym config UniAgentLoop will load, through the same path rules."""
        from uni_agent_gym.verl.agent_loop import gym_config_files

        entry = self.loop_entry() or {}
        files = gym_config_files(self.loop_dir, entry.get("settings"), entry.get("deployment"))
        return load_config(*files, overrides=entry.get("overrides") or [])

    def write_loop_yaml(self, directory: Path) -> Path:
        """A copy of the agent-loop YAML with absolute paths (and `--settings`), for the launch."""
        directory.mkdir(parents=True, exist_ok=True)
        base = self.loop_dir

        def absolute(value: Any) -> Any:
            if isinstance(value, list):
                return [absolute(item) for item in value]
            return value if Path(value).is_absolute() else str((base / value).resolve())

        entries = []
        for entry in self.loop_entries:
            if entry.get("_target_") == LOOP_TARGET:
                entry = self.loop_entry()
                entry.update({key: absolute(entry[key]) for key in ("settings", "deployment") if entry.get(key)})
            entries.append(entry)
        self.generated_loop_yaml = directory / "uni_agent_loop.yaml"
        self.generated_loop_yaml.write_text(yaml.safe_dump(entries, sort_keys=False))
        return self.generated_loop_yaml


def load_training(toml_path: str | Path, *, settings: str | Path | None = None, environ: dict[str, str] | None = None) -> TrainingRun:
    """Read `config.toml` (and the agent-loop YAML it names); `ConfigError` for what cannot be read."""
    toml_path = Path(toml_path)
    data = interpolate(read_config_file(toml_path), environ)
    async_training = "async_training" in data
    values: dict[str, Any] = {}
    for table, content in data.items():
        prefix = SHORTHANDS.get(table, table)
        values.update(flatten(content, f"{prefix}.") if isinstance(content, dict) else {prefix: content})
    for key in PATH_KEYS:
        if isinstance(values.get(key), str):
            values[key] = str(Path(values[key]).expanduser().resolve())
        elif isinstance(values.get(key), list):
            values[key] = [str(Path(item).expanduser().resolve()) for item in values[key]]
    loop_path = values.get(f"{ROLLOUT}.agent.agent_loop_config_path")
    loop_yaml = Path(loop_path) if loop_path else None
    entries: list[dict[str, Any]] = []
    if loop_yaml is not None and loop_yaml.is_file():
        try:
            entries = yaml.safe_load(loop_yaml.read_text()) or []
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{loop_yaml} (rollout.agent.agent_loop_config_path in {toml_path}) is not valid YAML: {exc}") from None
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise ConfigError(f"{loop_yaml}: verl expects a list of agent loops (- name: ..., _target_: ...)")
    return TrainingRun(toml_path, values, async_training, loop_yaml, entries, Path(settings).resolve() if settings else None)


class TrainingCheck(NamedTuple):
    """What `check_training` found: problems (the run would fail or train on something else), warnings
    (it runs, likely not as meant) and notes (how verl reads a value, the staleness arithmetic)."""

    problems: list[str]
    warnings: list[str]
    notes: list[str]


def check_training(run: TrainingRun) -> TrainingCheck:
    """Contradictions between the configs and verl's own schema, each explained."""
    problems: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    entry = _check_loop(run, problems)
    try:
        trainer = compose_trainer_config(run.overrides, async_training=run.async_training)
    except Exception as exc:  # Hydra's composition errors: unknown keys, bad values
        problems.append(f"verl's trainer config rejects the overrides from {run.toml_path}: {exc}".replace("\n", " "))
        return TrainingCheck(problems, warnings, notes)
    problems += _verl_schema_problems(trainer)
    rollout = trainer.actor_rollout_ref.rollout
    prompt, response, model_len = rollout.prompt_length, rollout.response_length, rollout.get("max_model_len")
    if model_len is not None and prompt + response > model_len:
        problems.append(
            f"max_prompt_length + max_response_length = {prompt} + {response} = {prompt + response} > rollout.max_model_len = "
            f"{model_len}: the inference server cannot hold a whole trajectory. Raise max_model_len or lower the lengths."
        )
    if not rollout.multi_turn.enable:
        problems.append("rollout.multi_turn.enable is false: UniAgentLoop is a multi-turn agent loop. Set [rollout.multi_turn] enable = true.")
    if rollout.multi_turn.max_parallel_calls != 1:
        problems.append(
            f"rollout.multi_turn.max_parallel_calls = {rollout.multi_turn.max_parallel_calls}: the gym runs exactly one tool "
            "call per turn (more are a format error). Set it to 1."
        )
    if not rollout.calculate_log_probs:
        trains_on_them = trainer.actor_rollout_ref.actor.get("use_rollout_log_probs") or _bypass_mode(trainer)
        (problems if trains_on_them else warnings).append(
            "rollout.calculate_log_probs is false: the rollout cache records logprob 0.0 for every sampled token"
            + (", and actor.use_rollout_log_probs (algorithm.rollout_correction.bypass_mode) trains on them. Set calculate_log_probs = true."
               if trains_on_them else ".")
        )
    if entry is not None:
        names = [item.get("name") for item in run.loop_entries]
        if rollout.agent.default_agent_loop not in names:
            warnings.append(
                f"rollout.agent.default_agent_loop is {rollout.agent.default_agent_loop!r}, not one of {names}: every row of the "
                "data must carry agent_name (prepare-data writes it)."
            )
        problems += _gym_problems(run, trainer, notes)
    _policy_loss_readings(trainer, warnings, notes)
    if run.async_training:
        problems += _staleness_problems(trainer)
        _staleness_arithmetic(run, trainer, warnings, notes)
    elif not trainer.actor_rollout_ref.hybrid_engine or trainer.data.train_batch_size < 1:
        problems.append(
            "verl's PPO trainer (no [async_training] table) needs actor_rollout_ref.hybrid_engine = true and "
            f"data.train_batch_size >= 1 (got {trainer.actor_rollout_ref.hybrid_engine}, {trainer.data.train_batch_size})."
        )
    for key in ("data.train_files", "data.val_files"):
        paths = run.values.get(key)
        for path in [paths] if isinstance(paths, str) else paths or []:
            if not Path(path).exists():
                warnings.append(f"{key}: {path} does not exist yet (make it with `uni-agent-gym prepare-data`).")
    return TrainingCheck(problems, warnings, notes)


def _check_loop(run: TrainingRun, problems: list[str]) -> dict[str, Any] | None:
    if run.loop_yaml is None:
        problems.append("rollout.agent.agent_loop_config_path is not set: verl cannot find UniAgentLoop. Point it at configs/uni_agent_loop.yaml.")
        return None
    if not run.loop_yaml.is_file():
        problems.append(f"rollout.agent.agent_loop_config_path: {run.loop_yaml} does not exist.")
        return None
    entry = run.loop_entry()
    if entry is None:
        problems.append(f"{run.loop_yaml} has no entry with _target_: {LOOP_TARGET}.")
    elif not entry.get("name"):
        problems.append(f"{run.loop_yaml}: the UniAgentLoop entry needs a name (the data's agent_name).")
    return entry


def _verl_schema_problems(trainer: Any) -> list[str]:
    """verl's own dataclasses check their sections (types, required batch sizes, ...)."""
    from verl.utils.config import omega_conf_to_dataclass

    problems = []
    for name, section in (("actor_rollout_ref.rollout", trainer.actor_rollout_ref.rollout),
                          ("actor_rollout_ref.actor", trainer.actor_rollout_ref.actor), ("algorithm", trainer.algorithm)):  # fmt: skip
        try:
            omega_conf_to_dataclass(section)
        except Exception as exc:
            cause = exc.__cause__ or exc
            problems.append(f"verl rejects {name}: {cause}".replace("\n", " "))
    return problems


def _gym_problems(run: TrainingRun, trainer: Any, notes: list[str]) -> list[str]:
    """What the gym settings contradict in verl's; `notes` gets how verl's turn settings read beside them."""
    try:
        gym = run.gym_config()
    except ConfigError as exc:
        return [f"the gym settings of the UniAgentLoop entry: {exc}"]
    problems = []
    notes += _turn_notes(run, trainer, gym.env.max_turns)
    max_turns = trainer.actor_rollout_ref.rollout.multi_turn.get("max_assistant_turns")
    if max_turns is not None and max_turns != gym.env.max_turns:
        problems.append(
            f"rollout.multi_turn.max_assistant_turns = {max_turns} but the gym's env.max_turns = {gym.env.max_turns}: UniAgentLoop "
            "ends episodes at env.max_turns. Leave max_assistant_turns unset or make them equal."
        )
    if gym.rollout.max_tokens_per_turn > trainer.actor_rollout_ref.rollout.response_length:
        problems.append(
            f"the gym's rollout.max_tokens_per_turn = {gym.rollout.max_tokens_per_turn} exceeds max_response_length = "
            f"{trainer.actor_rollout_ref.rollout.response_length}: one turn could fill the whole response. Lower it."
        )
    return problems


def _staleness_problems(trainer: Any) -> list[str]:
    """What makes verl's fully-async rollouter refuse to start or never produce a training step."""
    sync, problems = trainer.async_training, []
    if sync.staleness_threshold < 0:
        problems.append(f"async_training.staleness_threshold = {sync.staleness_threshold} < 0: the rollouter refuses it (0 = on-policy).")
    if sync.trigger_parameter_sync_step < 1:
        problems.append("async_training.trigger_parameter_sync_step < 1: weights would never sync to the rollouter. Use 1 or more.")
    if sync.get("concurrent_samples_per_replica", 1) < 1:
        problems.append("async_training.concurrent_samples_per_replica < 1: the rollouter would never start a sample.")
    if trainer.data.train_batch_size != 0 or trainer.data.get("gen_batch_size") != 1:
        problems.append("the fully-async trainer needs data.train_batch_size = 0 and data.gen_batch_size = 1 (it streams samples).")
    if trainer.actor_rollout_ref.hybrid_engine:
        problems.append("the fully-async trainer needs actor_rollout_ref.hybrid_engine = false (rollout on its own GPUs).")
    per_step = trainer.actor_rollout_ref.actor.ppo_mini_batch_size * sync.require_batches * max(sync.trigger_parameter_sync_step, 1)
    total = trainer.rollout.get("total_rollout_steps")
    if total is not None and total < per_step:
        problems.append(
            f"rollouter.total_rollout_steps = {total} < ppo_mini_batch_size x require_batches x trigger_parameter_sync_step = "
            f"{per_step}: the rollouter stops before the trainer has one step of samples, so training stalls at step 0."
        )
    return problems


def _bypass_mode(trainer: Any) -> bool:
    """verl's rollout-correction bypass mode: the rollout's logprobs are the old policy's (no recompute)."""
    return bool((trainer.algorithm.get("rollout_correction") or {}).get("bypass_mode", False))


def _turn_notes(run: TrainingRun, trainer: Any, gym_max_turns: int) -> list[str]:
    """How verl's turn settings read beside UniAgentLoop, which ends episodes at the gym's env.max_turns."""
    multi_turn, notes = trainer.actor_rollout_ref.rollout.multi_turn, []
    if "actor_rollout_ref.rollout.mode" in run.values:
        notes.append(
            f"rollout.mode = {trainer.actor_rollout_ref.rollout.mode!r}: verl 0.9.1 has only the async rollout (sync was removed) and "
            "agent loops always ran on it; the line can go."
        )
    if multi_turn.get("max_assistant_turns") is not None:
        notes.append(
            f"rollout.multi_turn.max_assistant_turns = {multi_turn.max_assistant_turns} is read by verl's own ToolAgentLoop; "
            f"UniAgentLoop ends an episode at the gym's env.max_turns ({gym_max_turns})."
        )
    if multi_turn.get("max_user_turns") is not None:
        notes.append(
            f"rollout.multi_turn.max_user_turns = {multi_turn.max_user_turns} is read by verl's own ToolAgentLoop only: UniAgentLoop "
            f"sends one tool result per assistant turn, so the gym's env.max_turns ({gym_max_turns}) bounds both. Remove it, or "
            "set env.max_turns instead."
        )
    return notes


TOKEN_LEVEL_LOSSES = ("vanilla", "dppo_tv", "dppo_kl", "clip_cov", "kl_cov", "dro", "cispo")


def _policy_loss_readings(trainer: Any, warnings: list[str], notes: list[str]) -> None:
    """What the clip ratio bounds under the selected policy loss (bypass mode replaces the loss_mode)."""
    actor = trainer.actor_rollout_ref.actor
    low = actor.get("clip_ratio_low") if actor.get("clip_ratio_low") is not None else actor.clip_ratio
    high = actor.get("clip_ratio_high") if actor.get("clip_ratio_high") is not None else actor.clip_ratio
    configured = actor.policy_loss.get("loss_mode", "vanilla")
    bypass = _bypass_mode(trainer)
    loss = "ppo_clip" if bypass else configured
    if bypass and configured != "vanilla":
        warnings.append(
            f"actor.policy_loss.loss_mode = {configured!r} is replaced by algorithm.rollout_correction.bypass_mode, whose loss is "
            "token-level PPO-clip (or REINFORCE): set bypass_mode = false to train with it."
        )
    token_level = bypass or configured in TOKEN_LEVEL_LOSSES
    if token_level and min(low, high) < 0.01:
        warnings.append(
            f"clip ratio {low:g}/{high:g} (low/high) bounds a token-level ratio ({loss}): nearly every token off the sampling "
            "policy by that much is clipped, and its gradient is zero. That range is GSPO's (a sequence-level ratio): set "
            'actor.policy_loss.loss_mode = "gspo" with algorithm.rollout_correction.bypass_mode = false, or clip_ratio = 0.2.'
        )
    elif loss == "gspo":
        notes.append(f"clip ratio {low:g}/{high:g} (low/high) bounds GSPO's sequence-level ratio (the length-normalised one).")


def _staleness_arithmetic(run: TrainingRun, trainer: Any, warnings: list[str], notes: list[str]) -> None:
    """verl's staleness budget per weight sync beside what the rollout can keep in flight; warns where the
    budget, not the capacity, sets the pace (generation then pauses on staleness every cycle)."""
    sync, rollout = trainer.async_training, trainer.actor_rollout_ref.rollout
    if sync.trigger_parameter_sync_step < 1 or sync.staleness_threshold < 0:
        return  # a problem already
    n, mini_batch = rollout.n, trainer.actor_rollout_ref.actor.ppo_mini_batch_size
    per_sync = mini_batch * sync.require_batches * sync.trigger_parameter_sync_step
    max_required = int(per_sync * (sync.staleness_threshold + 1))  # verl's max_required_samples
    replica_gpus = rollout.tensor_model_parallel_size * rollout.get("data_parallel_size", 1) * rollout.get("pipeline_model_parallel_size", 1)
    replicas = max(trainer.rollout.nnodes * trainer.rollout.n_gpus_per_node // replica_gpus, 1)
    per_replica, workers, concurrency = sync.get("concurrent_samples_per_replica", 16), rollout.agent.num_workers, _gym_concurrency(run)
    capacity = min(replicas * per_replica * n, workers * concurrency)  # trajectories the rollout could run at once
    notes.append(
        f"staleness: max_required_samples = ppo_mini_batch_size {mini_batch} x require_batches {sync.require_batches} x "
        f"(staleness_threshold {sync.staleness_threshold:g} + 1) x trigger_parameter_sync_step {sync.trigger_parameter_sync_step} = "
        f"{max_required} samples ({max_required * n} trajectories at n = {n}) may start per weight sync; the trainer takes {per_sync} "
        f"({per_sync * n} trajectories) per sync."
    )
    notes.append(
        f"in flight: min({replicas} rollout replicas x concurrent_samples_per_replica {per_replica} x n {n}, num_workers {workers} x "
        f"the gym's rollout.max_concurrency {concurrency}) = {capacity} trajectories at once, "
        f"{min(capacity, max_required * n)} within the staleness budget."
    )
    if capacity >= max_required * n:
        warnings.append(
            f"the rollout could keep {capacity} trajectories in flight but staleness lets {max_required * n} start per weight sync: "
            "generation pauses on staleness every cycle, waiting for the trainer, with capacity idle. Raise "
            f"async_training.staleness_threshold to {capacity / n / per_sync - 1:.2g} or more, or lower the concurrency."
        )


def _gym_concurrency(run: TrainingRun) -> int:
    """The gym's rollout.max_concurrency of the agent-loop entry (its default where the settings do not load)."""
    try:
        return run.gym_config().rollout.max_concurrency
    except ConfigError:
        return GymConfig().rollout.max_concurrency
