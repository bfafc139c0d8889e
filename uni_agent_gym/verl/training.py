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
TOML's own folder (wherever the command runs, a copied config keeps working) and made absolute, so Ray
workers started elsewhere find them, and `train` hands verl the agent-loop YAML by an absolute path.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from uni_agent_gym.config import GymConfig, interpolate, read_config_file
from uni_agent_gym.errors import ConfigError, UniAgentGymError
from uni_agent_gym.tokenizer_loading import FAITHFUL_CLASS, Fidelity, TokenizerCorruptsText, faithful_copy, reach, read_fidelity
from uni_agent_gym.toolchains import PYTHON
from uni_agent_gym.verl.trainer_config import ASYNC_ENTRY, PPO_ENTRY, compose_trainer_config

LOOP_TARGET = "uni_agent_gym.verl.agent_loop.UniAgentLoop"
SHORTHANDS = {"model": "actor_rollout_ref.model", "rollout": "actor_rollout_ref.rollout", "rollouter": "rollout"}
PATH_KEYS = ("data.train_files", "data.val_files", "actor_rollout_ref.rollout.agent.agent_loop_config_path")
# keys verl reads at every run whose defaults are its own examples: a run without them trains on those, silently
REQUIRED = {
    "data.train_files": ("train on its example data", "train_files", '"data/swe_train.parquet" (rows: uni-agent-gym prepare-data; '
                         "a relative path is taken from this file's folder)"),
    "data.val_files": ("validate on its example data", "val_files", '"data/swe_val.parquet" (rows: uni-agent-gym prepare-data; '
                       "a relative path is taken from this file's folder)"),
    "actor_rollout_ref.model.path": ("train its example model", "path", None),
}  # fmt: skip
ROLLOUT = "actor_rollout_ref.rollout"
# the seed article's names for verl keys, in whichever table it puts them
TOML_ALIASES = {"n_resp_per_prompt": f"{ROLLOUT}.n"}
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
    translations: list[str] = field(default_factory=list)  # the seed article's names read as verl's
    written_paths: dict[str, str] = field(default_factory=dict)  # each resolved path of PATH_KEYS -> as the TOML writes it

    @property
    def overrides(self) -> list[str]:
        return self.overrides_without(())

    def overrides_without(self, keys: Any) -> list[str]:
        """verl's Hydra overrides, less those of `keys` (ones verl does not have, while checking the rest)."""
        values = {key: value for key, value in self.values.items() if key not in keys}
        if self.generated_loop_yaml is not None:
            values[f"{ROLLOUT}.agent.agent_loop_config_path"] = str(self.generated_loop_yaml)
        return [f"{key}={hydra_value(value)}" for key, value in values.items()]

    @property
    def entry(self) -> str:
        return ASYNC_ENTRY if self.async_training else PPO_ENTRY

    def command(self) -> list[str]:
        return [sys.executable, "-m", self.entry, *self.overrides]

    def shell_command(self) -> str:
        """`command()` as one shell line: this interpreter, not `python` (outside the venv there is none, or another)."""
        return shlex.join(self.command())

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

    def gym_config(self, translations: list[str] | None = None) -> GymConfig:
        """The gym config UniAgentLoop will load, through the same path rules; what it reads in the seed
        article's names is appended to `translations`."""
        from uni_agent_gym.verl.agent_loop import gym_config_of_entry

        return gym_config_of_entry(self.loop_dir, self.loop_entry() or {}, translations)

    def write_loop_yaml(self, directory: Path) -> tuple[Path, str]:
        """A copy of the agent-loop YAML with absolute paths (and `--settings`), for the launch: (its absolute
        path, its text). A dry run writes it too: the command it prints names it, and must run as printed."""
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
        self.generated_loop_yaml = directory.resolve() / "uni_agent_loop.yaml"
        text = yaml.safe_dump(entries, sort_keys=False)
        directory.mkdir(parents=True, exist_ok=True)
        self.generated_loop_yaml.write_text(text)
        return self.generated_loop_yaml, text


def load_training(toml_path: str | Path, *, settings: str | Path | None = None, environ: dict[str, str] | None = None) -> TrainingRun:
    """Read `config.toml` (and the agent-loop YAML it names); `ConfigError` for what cannot be read."""
    toml_path = Path(toml_path)
    data = interpolate(read_config_file(toml_path), environ)
    async_training = "async_training" in data
    values = verl_keys(data)
    translations = translate_toml_keys(values, toml_path)
    folder = toml_path.resolve().parent
    written: dict[str, str] = {}

    def resolved(path: str) -> str:
        full = str((folder / Path(path).expanduser()).resolve())
        written[full] = path
        return full

    for key in PATH_KEYS:
        if isinstance(values.get(key), str):
            values[key] = resolved(values[key])
        elif isinstance(values.get(key), list):
            values[key] = [resolved(item) for item in values[key]]
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
    return TrainingRun(toml_path, values, async_training, loop_yaml, entries, Path(settings).resolve() if settings else None,
                       translations=translations, written_paths=written)  # fmt: skip


def verl_keys(data: dict[str, Any]) -> dict[str, Any]:
    """A config.toml's tables as flat verl keys, the shorthands expanded (`[rollout] n` -> actor_rollout_ref.rollout.n)."""
    values: dict[str, Any] = {}
    for table, content in data.items():
        prefix = SHORTHANDS.get(table, table)
        values.update(flatten(content, f"{prefix}.") if isinstance(content, dict) else {prefix: content})
    return values


def translate_toml_keys(values: dict[str, Any], toml_path: Path) -> list[str]:
    """The seed article's names (`TOML_ALIASES`) replaced by verl's in `values`; one line per translation."""
    translations = []
    for key in [key for key in values if key.rpartition(".")[2] in TOML_ALIASES]:
        target = TOML_ALIASES[key.rpartition(".")[2]]
        value = values.pop(key)
        if target in values and values[target] != value:
            raise ConfigError(f"{toml_path}: {key} = {value!r} and {target} = {values[target]!r} disagree: keep one of them")
        values[target] = value
        table, name = toml_place(target)
        translations.append(f"{toml_path.name}: {key} = {value!r} -> {target}, verl's name for it ([{table}] {name})")
    return translations


class TrainingCheck(NamedTuple):
    """What `check_training` found: problems (the run would fail or train on something else), warnings
    (it runs, likely not as meant), notes (how verl reads a value, the staleness arithmetic, the seed article's
    names translated) and additions: the lines the TOML lacks, where adding one resolves a problem."""

    problems: list[str]
    warnings: list[str]
    notes: list[str]
    additions: dict[str, Any] = {}  # verl keys the TOML lacks -> the value that resolves a problem (`toml_lines`)


def check_training(run: TrainingRun) -> TrainingCheck:
    """Contradictions between the configs and verl's own schema, each explained."""
    problems: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    additions: dict[str, Any] = {}
    notes += run.translations
    entry = _check_loop(run, problems)
    if entry is not None:
        notes.insert(0, f"agent-loop YAML: {run.loop_yaml} (rollout.agent.agent_loop_config_path; train hands verl a copy of it)")
    problems += _required_problems(run)
    defaults = compose_trainer_config([], async_training=run.async_training)
    unknown = _keys_verl_lacks(run, defaults)
    problems += unknown.values()
    mistyped = _mistyped_values(run, defaults)
    problems += [problem for problem, _ in mistyped.values()]
    # the rest is checked with each mistyped value as meant (or verl's default), so every other problem is listed too
    overrides = run.overrides_without(unknown.keys() | mistyped.keys())
    overrides += [f"{key}={hydra_value(meant)}" for key, (_, meant) in mistyped.items() if meant is not None]
    try:
        trainer = compose_trainer_config(overrides, async_training=run.async_training)
    except Exception as exc:  # Hydra's composition errors: bad values
        problems.append(f"verl's trainer config rejects the overrides from {run.toml_path}: {exc}".replace("\n", " "))
        return TrainingCheck(problems, warnings, notes)
    problems += _verl_schema_problems(trainer)
    notes.append(gpu_line(trainer, run.async_training))
    _missing_lines(run, trainer, additions)
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
            additions[f"{ROLLOUT}.agent.default_agent_loop"] = entry.get("name")
            warnings.append(
                f"rollout.agent.default_agent_loop is {rollout.agent.default_agent_loop!r}, not one of {names}: every row of the "
                "data must carry agent_name (prepare-data writes it)."
            )
        problems += _gym_problems(run, trainer, notes, additions)
    _advantage_estimator(run, trainer, problems, warnings)
    _tokenizer_lines(run, problems, warnings, notes)
    _policy_loss_readings(trainer, warnings, notes)
    _clip_ratio_reading(run, trainer, warnings)
    if run.async_training:
        problems += _staleness_problems(trainer)
        _async_lines(run, trainer, additions)
        _staleness_arithmetic(run, trainer, warnings, notes)
    elif not trainer.actor_rollout_ref.hybrid_engine or trainer.data.train_batch_size < 1:
        problems.append(
            "verl's PPO trainer (no [async_training] table) needs actor_rollout_ref.hybrid_engine = true and "
            f"data.train_batch_size >= 1 (got {trainer.actor_rollout_ref.hybrid_engine}, {trainer.data.train_batch_size})."
        )
    names = [item.get("name") for item in run.loop_entries]
    for key in ("data.train_files", "data.val_files"):
        paths = run.values.get(key)
        for path in [paths] if isinstance(paths, str) else paths or []:
            if not Path(path).exists():
                warnings.append(_missing_data_line(run, key, path))
            elif run.loop_entries:
                problems += _routing_problems(key, path, names, run.loop_yaml)
                problems += _language_problems(run, key, path)
    additions = {key: value for key, value in additions.items() if key not in run.values}  # a key set is fixed by the message
    return TrainingCheck(problems, warnings, notes, additions)


def _required_problems(run: TrainingRun) -> list[str]:
    """The keys of `REQUIRED` the TOML leaves to verl's example defaults, each with the line to add."""
    from uni_agent_gym.verl.trainer_config import example_default

    problems = []
    for key, (what, name, line) in REQUIRED.items():
        if key in run.values:
            continue
        if line is None:  # the model: the gym settings' model_name where they name one
            try:
                served = run.gym_config().model.model_name
            except ConfigError:
                served = "default"
            line = json.dumps(served) + " (the gym settings' model.model_name)" if served != "default" else \
                '"Qwen/Qwen2.5-Coder-7B-Instruct" (the model to train: a hub name or a directory)'
        table, _ = toml_place(key)
        problems.append(f"{key} is not set: verl would {what} ({example_default(key, run.async_training)}). "
                        f"Add to [{table}]: {name} = {line}")  # fmt: skip
    return problems


def _routing_problems(key: str, path: str, names: list[Any], loop_yaml: Path | None) -> list[str]:
    """Rows of a data file whose `agent_name` names no entry of the agent-loop YAML (verl fails on the first)."""
    from uni_agent_gym.verl.data import agent_names

    try:
        routed = agent_names(path)
    except ConfigError as exc:
        return [f"{key}: {exc}"]
    problems = []
    for name in sorted(routed - set(names)):
        close = difflib.get_close_matches(name, [str(known) for known in names], n=1)
        fix = f"did you mean {close[0]}? " if close else ""
        problems.append(
            f"{key}: the rows of {path} go to the agent loop {name!r} (their agent_name), which {loop_yaml} does not have "
            f"({', '.join(map(str, names))}): {fix}write them again with uni-agent-gym prepare-data --agent-name {close[0] if close else names[0]}."
        )
    return problems


def toml_place(key: str) -> tuple[str, str]:
    """Where a verl key goes in config.toml: (table, key), with the shorthands (`actor_rollout_ref.rollout.n`
    -> ("rollout", "n"))."""
    table, _, name = key.rpartition(".")
    for short, full in sorted(SHORTHANDS.items(), key=lambda item: -len(item[1])):
        if table == full or table.startswith(full + "."):
            return short + table[len(full) :], name
    return table, name


def _keys_verl_lacks(run: TrainingRun, defaults: Any) -> dict[str, str]:
    """Every key of the TOML that verl's trainer config (`defaults`) does not have, each with the nearest one
    it has (Hydra would stop at the first)."""
    from omegaconf import DictConfig, OmegaConf

    lacking = {}
    for key in run.values:
        parent_key, _, name = key.rpartition(".")
        parent = OmegaConf.select(defaults, parent_key, throw_on_missing=False) if parent_key else defaults
        if isinstance(parent, DictConfig) and name in parent.keys():  # `in parent` is False for a value left ??? 
            continue
        siblings = list(parent.keys()) if isinstance(parent, DictConfig) else []
        close = difflib.get_close_matches(name, [str(sibling) for sibling in siblings], n=1, cutoff=0.5)
        table, _ = toml_place(key)
        hint = f"did you mean {close[0]}?" if close else ("verl has no such table" if not isinstance(parent, DictConfig) else "")
        lacking[key] = f"{run.toml_path.name}: verl has no key {key} ([{table}] {name})" + (f": {hint}" if hint else "")
    return lacking


def _mistyped_values(run: TrainingRun, defaults: Any) -> dict[str, tuple[str, Any]]:
    """The TOML's quoted numbers and booleans (`n = "8"`): verl would get text where it computes with a number.
    Each key -> (its problem line, the value meant, or None where the text is none), so the other checks go on
    with the value meant. A key verl leaves unset (null) counts where its text reads as a number."""
    from omegaconf import OmegaConf

    mistyped: dict[str, tuple[str, Any]] = {}
    for key, value in run.values.items():
        default = OmegaConf.select(defaults, key, throw_on_missing=False, default=KeyError)
        if not isinstance(value, str) or key in PATH_KEYS or default is KeyError:
            continue
        if isinstance(default, bool):
            kind, meant = "true or false", {"true": True, "false": False}.get(value.strip().lower())
        elif isinstance(default, (int, float)) or (default is None and _number(value) is not None):
            kind, meant = "a number", _number(value)
        else:
            continue
        table, name = toml_place(key)
        where = f"{run.toml_path.name}: {f'[{table}] ' if table else ''}{name} = {json.dumps(value)}"
        fix = f"write {name} = {_toml_value(meant)}, without quotes" if meant is not None else f"write {kind} there, without quotes"
        mistyped[key] = (f"{where} is quoted: verl reads {kind} there and would get the text {value!r}; {fix}.", meant)
    return mistyped


def _number(text: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return None


TOKENIZER_PATH = "actor_rollout_ref.model.tokenizer_path"  # verl's tokenizer for the rollouts; model.path where unset


@dataclass(frozen=True)
class TokenizerReading:
    """The tokenizer verl loads for the rollouts, read as verl's `hf_tokenizer` loads it: what it does to text, and
    what `PreTrainedTokenizerFast` (tokenizer.json as declared) does where verl's class replaces the file's pipeline.
    `error` says why it could not be loaded here."""

    key: str  # the verl key that names it
    source: str
    fidelity: Fidelity | None
    faithful: Fidelity | None = None
    error: str | None = None

    @property
    def fixable(self) -> bool:
        """Text does not survive verl's class, and it does survive tokenizer.json as declared (a copy naming it fixes it)."""
        return self.fidelity is not None and not self.fidelity.holds and self.faithful is not None and self.faithful.holds


def read_verl_tokenizer(run: TrainingRun) -> TokenizerReading | None:
    """The reading of the tokenizer the run's verl loads (None where model.path is unset: a problem of its own)."""
    key = TOKENIZER_PATH if run.values.get(TOKENIZER_PATH) else "actor_rollout_ref.model.path"
    source = run.values.get(key)
    if not isinstance(source, str):
        return None
    return _verl_reading(key, source, bool(run.values.get("actor_rollout_ref.model.trust_remote_code", False)))


@lru_cache(maxsize=4)
def _verl_reading(key: str, source: str, trust_remote_code: bool) -> TokenizerReading:
    """Read once per command: check-config and train read the same files."""
    from transformers import PreTrainedTokenizerFast
    from verl.utils import hf_tokenizer

    table, name = toml_place(key)
    try:
        tokenizer = reach(source, lambda path, **kwargs: hf_tokenizer(path, trust_remote_code=trust_remote_code, **kwargs), what=f"[{table}] {name}")
    except ConfigError as exc:
        return TokenizerReading(key, source, None, error=str(exc))
    fidelity = read_fidelity(tokenizer)
    if fidelity.holds or fidelity.agrees:
        return TokenizerReading(key, source, fidelity)
    return TokenizerReading(key, source, fidelity, read_fidelity(reach(source, PreTrainedTokenizerFast.from_pretrained, local_only=True)))


def _tokenizer_lines(run: TrainingRun, problems: list[str], warnings: list[str], notes: list[str]) -> None:
    """Whether text survives the tokenizer verl loads: the rollout cache records the ids verl's tokenizer gives, so a
    class that replaces tokenizer.json's pipeline trains on ids that are not the text the model saw."""
    reading = read_verl_tokenizer(run)
    if reading is None:
        return
    where = f"the tokenizer verl loads ({toml_place(reading.key)[1]} = {reading.source}, by verl's hf_tokenizer)"
    if reading.fidelity is None:
        notes.append(f"{where} was not checked here: {reading.error}. train checks it before it starts verl, and refuses where it cannot.")
    elif reading.fidelity.holds:
        notes.append(f"{where}: {reading.fidelity.summary()}")
    elif reading.fixable:
        warnings.append(f"{where}: {reading.fidelity.explanation()}. train writes a copy of it whose tokenizer_config.json names "
                        f"{FAITHFUL_CLASS} beside the agent-loop YAML it hands verl, and sets model.tokenizer_path to it; to launch "
                        "verl yourself, set [model] tokenizer_path to the copy train --dry-run writes.")  # fmt: skip
    else:
        faithful = f" {FAITHFUL_CLASS} loses text too: {reading.faithful.explanation()}" if reading.faithful else ""
        problems.append(f"{where}: {reading.fidelity.explanation()}.{faithful}")


def faithful_tokenizer(run: TrainingRun, directory: Path, *, launch: bool = True) -> str | None:
    """Before train starts verl: where verl's `hf_tokenizer` would run another pipeline than tokenizer.json's, a copy of
    the tokenizer whose tokenizer_config.json names `PreTrainedTokenizerFast`, written in `directory` and set as
    model.tokenizer_path once verl's own loader is seen to round-trip text with it. Returns a line saying so (None:
    verl loads the tokenizer as it is). `ConfigError` where it cannot be made faithful, and for a `launch`, where it
    cannot be loaded here (a dry run says so and goes on)."""
    from verl.utils import hf_tokenizer

    reading = read_verl_tokenizer(run)
    if reading is None or (reading.fidelity is not None and reading.fidelity.holds):
        return None
    if reading.fidelity is None and not launch:
        return f"tokenizer: not checked here ({reading.error}); train without --dry-run refuses to start verl until it can check it"
    if reading.fidelity is None:
        raise ConfigError(f"train checks the tokenizer verl loads before it starts verl (a class that replaces tokenizer.json's pipeline "
                          f"trains on token ids that are not the text the model saw), and cannot load it here: {reading.error}")  # fmt: skip
    if not reading.fixable:
        raise TokenizerCorruptsText(f"{reading.source}: {reading.fidelity.explanation()}")
    copy = faithful_copy(reading.source, directory)
    trust = bool(run.values.get("actor_rollout_ref.model.trust_remote_code", False))
    loaded = hf_tokenizer(str(copy), trust_remote_code=trust, local_files_only=True)
    fidelity = read_fidelity(loaded)
    if not fidelity.holds:
        raise TokenizerCorruptsText(f"verl's hf_tokenizer on the copy {copy}: {fidelity.explanation()}")
    run.values[TOKENIZER_PATH] = str(copy)
    return (f"tokenizer: verl's hf_tokenizer loads {reading.source} as {reading.fidelity.loaded}, which does not round-trip text; verl "
            f"loads the copy {copy} instead (model.tokenizer_path): {fidelity.summary()}")  # fmt: skip


class NotEnoughGPUs(UniAgentGymError):
    """This machine shows fewer GPUs than the config's resource pools take."""


def gpus_needed(trainer: Any, async_training: bool) -> tuple[int, str]:
    """The GPUs verl's resource pools take: (how many, how they add up). The fully-async trainer gives the
    rollout GPUs of its own ([rollouter]); PPO's hybrid engine runs rollout on the trainer's."""
    nodes, per_node = trainer.trainer.nnodes, trainer.trainer.n_gpus_per_node
    training = f"[trainer] nnodes {nodes} x n_gpus_per_node {per_node}"
    if not async_training:
        return nodes * per_node, f"{training}, shared by training and rollout: hybrid engine"
    rollout_nodes, rollout_per_node = trainer.rollout.nnodes, trainer.rollout.n_gpus_per_node
    return nodes * per_node + rollout_nodes * rollout_per_node, (
        f"{nodes * per_node} for training, {training}, + {rollout_nodes * rollout_per_node} for rollout, "
        f"[rollouter] nnodes {rollout_nodes} x n_gpus_per_node {rollout_per_node}")  # fmt: skip


def gpu_line(trainer: Any, async_training: bool) -> str:
    needed, how = gpus_needed(trainer, async_training)
    return (f"GPUs: the config takes {needed} ({how}); train checks that this machine shows them before it starts verl, "
            "unless RAY_ADDRESS names a Ray cluster to join.")  # fmt: skip


def visible_gpus() -> int:
    """The GPUs this process can use: torch's count, which honours CUDA_VISIBLE_DEVICES (0 on a CPU build)."""
    import torch

    return torch.cuda.device_count()


def require_visible_gpus(run: TrainingRun, environ: dict[str, str] | None = None) -> None:
    """Before `train` starts verl: verl starts a Ray cluster on this machine, which then has only the GPUs
    this machine shows, and finds it lacks them only after Ray and its workers are up. With RAY_ADDRESS set
    verl joins that cluster instead, whose GPUs this machine cannot count: nothing is checked then."""
    if (os.environ if environ is None else environ).get("RAY_ADDRESS"):
        return
    needed, how = gpus_needed(compose_trainer_config(run.overrides, async_training=run.async_training), run.async_training)
    visible = visible_gpus()
    if visible < needed:
        raise NotEnoughGPUs(
            f"the config takes {needed} GPUs ({how}), and this machine shows {visible} (torch.cuda.device_count(), under CUDA_VISIBLE_DEVICES): "
            "lower n_gpus_per_node in [trainer] and [rollouter], or run train inside a Ray cluster that has them (RAY_ADDRESS)"
        )


def _missing_data_line(run: TrainingRun, key: str, path: str) -> str:
    """A data file that is not there, with the full path it was looked for at where the TOML names it relative."""
    written, fix = run.written_paths.get(path, path), f"make it with `uni-agent-gym prepare-data --output {path}`"
    if Path(written).expanduser().is_absolute():
        return f"{key}: {path} does not exist yet ({fix})."
    folder = run.toml_path.resolve().parent
    line = (f"{key}: {written} does not exist yet: it is looked for at {path} (a relative path is taken from {run.toml_path.name}'s "
            f"folder {folder}, not from where the command runs); {fix}.")  # fmt: skip
    here = Path.cwd() / written
    if here.exists():
        line += f" {here.resolve()} exists: to train on it, write {key.rpartition('.')[2]} = {json.dumps(os.path.relpath(here.resolve(), folder))}."
    return line


def _language_problems(run: TrainingRun, key: str, path: str) -> list[str]:
    """Rows of other languages bound for the local deployment, which makes Python environments only: each of
    their episodes would end at reset (env_error, masked), every time."""
    from uni_agent_gym.verl.data import row_languages

    try:
        deployment = run.gym_config().deployment.type
        languages = row_languages(path) if deployment == "local" else {}
    except ConfigError:
        return []  # the gym settings or the file: reported by the gym checks and the routing check
    others = ", ".join(f"{count} {language}" for language, count in sorted(languages.items()) if language != PYTHON)
    if not others:
        return []
    return [f"{key}: {path} holds {others} row(s), and the UniAgentLoop entry's deployment is local, which makes Python environments "
            f"only (it refuses every other task at reset): name deployment/docker.yaml (or ray.yaml) as the entry's deployment in "
            f"{run.loop_yaml}, with the rows' images built (uni-agent-gym images build)."]  # fmt: skip


def _check_loop(run: TrainingRun, problems: list[str]) -> dict[str, Any] | None:
    if run.loop_yaml is None:
        problems.append("rollout.agent.agent_loop_config_path is not set: verl cannot find UniAgentLoop. Point it at configs/uni_agent_loop.yaml.")
        return None
    if not run.loop_yaml.is_file():
        beside = run.toml_path.resolve().parent / run.loop_yaml.name
        hint = f' {beside.name} is beside it: write agent_loop_config_path = "{beside.name}".' if beside.is_file() else ""
        problems.append(f"rollout.agent.agent_loop_config_path: {run.loop_yaml} does not exist (a relative path is taken from "
                        f"{run.toml_path.name}'s folder).{hint}")  # fmt: skip
        return None
    entry = run.loop_entry()
    misspelt = [item for item in run.loop_entries if "_target_" not in item and "target" in item]
    for item in misspelt:
        problems.append(
            f"{run.loop_yaml}: the entry {item.get('name')!r} says `target: {item['target']}`: did you mean `_target_`? "
            "(Hydra instantiates the class named by `_target_`; verl would not build this entry.)"
        )
    if entry is None:
        if not misspelt:
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


def _gym_problems(run: TrainingRun, trainer: Any, notes: list[str], additions: dict[str, Any]) -> list[str]:
    """What the gym settings contradict in verl's; `notes` gets how verl's turn settings read beside them and
    the seed article's names the gym settings use, `additions` verl's lengths where the gym's budgets need them."""
    try:
        gym = run.gym_config(notes)
    except ConfigError as exc:
        return [f"the gym settings of the UniAgentLoop entry: {exc}"]
    problems = []
    rollout = trainer.actor_rollout_ref.rollout
    verl_lengths = {"max_prompt_length": ("data.max_prompt_length", rollout.prompt_length),
                    "max_response_length": ("data.max_response_length", rollout.response_length),
                    "max_model_len": (f"{ROLLOUT}.max_model_len", rollout.get("max_model_len"))}  # fmt: skip
    for name, (verl_key, verl_value) in verl_lengths.items():
        budget = getattr(gym.rollout, name)
        if budget is not None and verl_value is not None and budget > verl_value:
            problems.append(
                f"the gym's rollout.{name} = {budget} exceeds verl's {verl_key} = {verl_value}: verl pads and cuts every "
                f"trajectory to its own lengths. Set {verl_key} = {budget} (or lower the gym's)."
            )
        if budget is not None and verl_value != budget:
            additions[verl_key] = budget  # where the TOML leaves verl's at its default, the gym's budget is meant
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


def _missing_lines(run: TrainingRun, trainer: Any, additions: dict[str, Any]) -> None:
    """What verl requires and the TOML leaves unset: the inference engine, and a micro batch size."""
    from omegaconf import OmegaConf

    if OmegaConf.is_missing(trainer.actor_rollout_ref.rollout, "name"):
        additions[f"{ROLLOUT}.name"] = "vllm"
    actor = trainer.actor_rollout_ref.actor
    if not actor.use_dynamic_bsz and actor.get("ppo_micro_batch_size") is None and actor.get("ppo_micro_batch_size_per_gpu") is None:
        additions["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"] = 1


def _async_lines(run: TrainingRun, trainer: Any, additions: dict[str, Any]) -> None:
    """The fully-async trainer's streaming batch settings, and enough rollout steps for one training step."""
    additions.update({"data.train_batch_size": 0, "data.gen_batch_size": 1, "actor_rollout_ref.hybrid_engine": False})
    sync = trainer.async_training
    per_step = trainer.actor_rollout_ref.actor.ppo_mini_batch_size * sync.require_batches * max(sync.trigger_parameter_sync_step, 1)
    if (trainer.rollout.get("total_rollout_steps") or 0) < per_step:
        additions["rollout.total_rollout_steps"] = per_step


def toml_lines(values: dict[str, Any]) -> str:
    """verl keys and values as config.toml lines, one table each (`[rollout]` for actor_rollout_ref.rollout)."""
    tables: dict[str, list[str]] = {}
    for key, value in values.items():
        table, name = toml_place(key)
        tables.setdefault(table, []).append(f"{name} = {_toml_value(value)}")
    return "\n\n".join(f"[{table}]\n" + "\n".join(lines) if table else "\n".join(lines) for table, lines in tables.items())


def _toml_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(key))} = {_toml_value(item)}" for key, item in value.items()) + "}"
    return json.dumps(value)  # strings, numbers and booleans read the same in TOML


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


def _advantage_estimator(run: TrainingRun, trainer: Any, problems: list[str], warnings: list[str]) -> None:
    """The estimator verl looks up by name at its first step (ours come from the package's `verl.plugins` entry
    point), and a loop that masks abnormal exits beside one of verl's own group estimators: every masked
    trajectory is a reward-0 member of its group's mean and std (docs/training.md); ours leave it out."""
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY

    from uni_agent_gym.advantages.estimators import ESTIMATORS, REPLACEMENTS
    from uni_agent_gym.verl.agent_loop import gym_config_of_entry

    estimator = trainer.algorithm.adv_estimator
    if estimator not in ADV_ESTIMATOR_REGISTRY:
        why = _plugin_missing() if ESTIMATORS.keys() - ADV_ESTIMATOR_REGISTRY.keys() else \
            "install the package (pip install -e .) and leave VERL_USE_EXTERNAL_PLUGINS unset or naming uni_agent_gym"  # fmt: skip
        problems.append(
            f"algorithm.adv_estimator = {estimator!r} is not an estimator verl knows ({', '.join(sorted(ADV_ESTIMATOR_REGISTRY))}): "
            f"verl would stop at the first training step. grpo_drop_masked and rloo_drop_masked come from uni-agent-gym's verl.plugins "
            f"entry point: {why}."
        )
    if estimator not in REPLACEMENTS:
        return
    masking = []
    for entry in run.loop_entries:
        if entry.get("_target_") == LOOP_TARGET:
            entry = run.loop_entry()
        elif entry.get("_target_") == "uni_agent_gym.verl.gateway_loop.GatewayAgentLoop":
            from uni_agent_gym.verl.gateway_loop import GatewayLoopConfig  # its own keys are not gym settings

            entry = {key: value for key, value in entry.items() if key not in GatewayLoopConfig.model_fields}
        else:
            continue
        try:
            if gym_config_of_entry(run.loop_dir, entry).rollout.mask_abnormal_exit_traj:
                masking.append(entry.get("name"))
        except ConfigError:
            continue  # reported by the gym checks
    if masking:
        line = toml_lines({"algorithm.adv_estimator": REPLACEMENTS[estimator]}).replace("\n", " ")
        warnings.append(
            f"the agent loop {', '.join(map(str, masking))} masks trajectories that end abnormally (rollout.mask_abnormal_exit_traj) but "
            f"algorithm.adv_estimator = {estimator!r} is verl's own: each masked trajectory stays in its group's statistics as a fake "
            f"reward 0 and shifts every real member's advantage. Write {line} (verl's {estimator} over the real members)."
        )


PLUGIN = "uni_agent_gym"  # our entry point's name in verl.plugins (pyproject.toml)


def _plugin_missing() -> str:
    """Why verl's registry lacks our estimators: the entry point not installed, left out by VERL_USE_EXTERNAL_PLUGINS,
    or its import failing, which `import verl` logs only at debug level (so the error is shown here)."""
    from importlib.metadata import entry_points

    found = [point for point in entry_points(group="verl.plugins") if point.name == PLUGIN]
    if not found:
        return "it is not installed in this environment: install the package (pip install -e . in a checkout)"
    policy = os.environ.get("VERL_USE_EXTERNAL_PLUGINS", "auto").strip().lower()
    if policy == "none" or (policy != "auto" and PLUGIN not in {name.strip() for name in policy.split(",")}):
        return f"VERL_USE_EXTERNAL_PLUGINS={policy!r} leaves it out: unset it, or name {PLUGIN} in it"
    try:
        found[0].load()
    except Exception as exc:  # what verl's loader caught and logged at debug level
        return (f"importing it ({found[0].value}) fails with {type(exc).__name__}: {exc} (verl logs that only at debug level and "
                "goes on without it): fix that import")  # fmt: skip
    return "it imports here, so verl imported before it was installed: run in a fresh process"


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


def _clip_ratio_reading(run: TrainingRun, trainer: Any, warnings: list[str]) -> None:
    """The seed's `clip_ratio` alone: verl's losses clip with clip_ratio_low/high, which it sets to 0.2 itself."""
    actor, prefix = trainer.actor_rollout_ref.actor, "actor_rollout_ref.actor."
    if f"{prefix}clip_ratio" not in run.values or {f"{prefix}clip_ratio_low", f"{prefix}clip_ratio_high"} & run.values.keys():
        return
    if actor.get("clip_ratio_low") is not None and actor.get("clip_ratio_high") is not None:
        warnings.append(
            f"actor.clip_ratio = {actor.clip_ratio:g} is not the range verl clips with: its losses read clip_ratio_low / "
            f"clip_ratio_high ({actor.clip_ratio_low:g} / {actor.clip_ratio_high:g} by default) and fall back to clip_ratio only "
            f"where they are null. To clip at {actor.clip_ratio:g}, write clip_ratio_low and clip_ratio_high in "
            "[actor_rollout_ref.actor] (a range that small bounds GSPO's sequence-level ratio, loss_mode gspo; on a token-level "
            "loss it clips nearly every token)."
        )


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
