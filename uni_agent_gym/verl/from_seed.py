"""`uni-agent-gym init --from-seed DIR`: the seed article's three config files as a complete, consistent set.

The article prints `config.toml` (verl's side, in its own vocabulary and missing what verl 0.9.1 requires),
`uni_agent_loop.yaml` (an agent-loop entry whose keys are gym settings) and `settings.json` (with its
`rollout_cache` and `logging` sections). Every value it sets is kept: the gym settings of the entry and of
`settings.json` go into one `settings.json` in the gym's names, the entry points at it, and `config.toml`
takes verl's names for the article's keys plus the lines `check-config` finds missing, until it is
consistent. `${VAR}` placeholders stay as written. A deployment file the entry names by a relative path is
copied beside it, so the set works where it is written. `init` with no seed writes the shipped set (`write_shipped`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from uni_agent_gym.config import merge, read_config_file
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.seed_vocabulary import entry_layer, translate
from uni_agent_gym.verl.training import (
    LOOP_TARGET,
    ROLLOUT,
    TrainingCheck,
    check_training,
    load_training,
    toml_lines,
    translate_toml_keys,
    verl_keys,
)

FILES = ("config.toml", "uni_agent_loop.yaml", "settings.json")
# the repository's configs/: a checkout's, or an editable install's (a wheel does not carry it)
SHIPPED = Path(__file__).resolve().parents[2] / "configs"
ENTRY_KEYS = ("name", "_target_", "target", "settings", "deployment", "overrides")


def write_from_seed(seed_dir: Path, output: Path, *, force: bool = False, rounds: int = 3) -> tuple[list[str], TrainingCheck]:
    """Write the consistent set into `output`; (what was translated or added, one line each; the final check)."""
    missing = [name for name in FILES if not (seed_dir / name).is_file()]
    if missing:
        raise ConfigError(f"{seed_dir}: expects the seed article's {', '.join(FILES)}; missing {', '.join(missing)}")
    said: list[str] = []
    entry, entry_settings = _loop_entry(seed_dir, said)
    deployment = entry.get("deployment")
    copied = [deployment] if deployment and not Path(deployment).is_absolute() and (seed_dir / deployment).is_file() else []
    _refuse_clobbering(output, [*FILES, *copied], force)
    settings = merge(_gym_settings(seed_dir, said), entry_settings)
    output.mkdir(parents=True, exist_ok=True)
    for name in copied:  # the entry names it relative to its own folder: beside the written entry, it is found
        (output / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(seed_dir / name, output / name)
        said.append(f"uni_agent_loop.yaml: its deployment {name} copied to {output / name}")
    (output / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    (output / "uni_agent_loop.yaml").write_text(yaml.safe_dump([entry], sort_keys=False))
    values = _verl_values(seed_dir, said)
    values[f"{ROLLOUT}.agent.agent_loop_config_path"] = "uni_agent_loop.yaml"  # beside it: relative paths are taken from the TOML's folder
    for _ in range(rounds):  # an added line can bring the next check further (lengths, then batch sizes)
        _write_toml(output / "config.toml", values, seed_dir)
        check = check_training(load_training(output / "config.toml"))
        if not check.additions:
            break
        for key, value in check.additions.items():
            line = toml_lines({key: value}).replace("\n", " ")  # as the file has it: [rollouter] total_rollout_steps = 64
            said.append(f"config.toml: added {line} ({key}: verl needs it, or the gym's settings imply it)")
        values.update(check.additions)
    return said, check


def write_shipped(output: Path, *, force: bool = False) -> tuple[list[str], TrainingCheck]:
    """Copy the shipped set (configs/, comments and all) into `output` and check it as `check-config --training`
    would; (what was written, one line; the check)."""
    if not (SHIPPED / "config.toml").is_file():
        raise ConfigError(f"the shipped configs are not beside this installation ({SHIPPED}): a wheel does not carry them; copy "
                          "configs/ from the repository, or give --from-seed DIR")  # fmt: skip
    names = sorted(str(path.relative_to(SHIPPED)) for path in SHIPPED.rglob("*") if path.is_file())
    _refuse_clobbering(output, names, force)
    shutil.copytree(SHIPPED, output, dirs_exist_ok=True)
    check = check_training(load_training(output / "config.toml"))
    return [f"wrote the shipped set from {SHIPPED}: {', '.join(names)}"], check


def _refuse_clobbering(output: Path, names: list[str], force: bool) -> None:
    clobbered = [name for name in names if (output / name).exists()]
    if clobbered and not force:
        raise ConfigError(f"{output} already has {', '.join(clobbered)}: choose another --output, or --force to replace them")


def _gym_settings(seed_dir: Path, said: list[str]) -> dict[str, Any]:
    settings, notes = translate(read_config_file(seed_dir / "settings.json"), "settings.json")
    said += notes
    return settings


def _loop_entry(seed_dir: Path, said: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The UniAgentLoop entry, pointing at the written settings, and its own gym keys (in the gym's names),
    which move into those settings."""
    entries = yaml.safe_load((seed_dir / "uni_agent_loop.yaml").read_text()) or []
    if not isinstance(entries, list) or not all(isinstance(item, dict) for item in entries) or not entries:
        raise ConfigError(f"{seed_dir / 'uni_agent_loop.yaml'}: expects a list of agent loops (- name: ..., _target_: ...)")
    source = next((item for item in entries if LOOP_TARGET in (item.get("_target_"), item.get("target"))), entries[0])
    target = source.get("_target_") or source.get("target")
    if "_target_" not in source:
        said.append("uni_agent_loop.yaml: target -> _target_ (Hydra instantiates `_target_`)")
    if target != LOOP_TARGET:
        said.append(f"uni_agent_loop.yaml: the class {target} -> {LOOP_TARGET}")
    gym_keys = {key: value for key, value in source.items() if key not in ENTRY_KEYS}
    deployment = source.get("deployment")
    if isinstance(deployment, dict):
        gym_keys["deployment"] = deployment
    layer, notes = entry_layer(gym_keys, "uni_agent_loop.yaml")
    said += notes
    entry: dict[str, Any] = {"name": source.get("name") or "uni_agent", "_target_": LOOP_TARGET, "settings": "settings.json"}
    if isinstance(deployment, str):
        entry["deployment"] = deployment
    if source.get("overrides"):
        entry["overrides"] = list(source["overrides"])
    return entry, layer


def _verl_values(seed_dir: Path, said: list[str]) -> dict[str, Any]:
    """The TOML's keys as verl's, flattened (shorthands expanded), placeholders kept."""
    values = verl_keys(read_config_file(seed_dir / "config.toml"))
    said += translate_toml_keys(values, seed_dir / "config.toml")
    return values


def _write_toml(path: Path, values: dict[str, Any], seed_dir: Path) -> None:
    header = (
        f"# Written by `uni-agent-gym init --from-seed {seed_dir}`: the seed article's config.toml in verl's names,\n"
        "# with what verl 0.9.1 requires added. Check it with `uni-agent-gym check-config --training` on this file.\n\n"
    )
    path.write_text(header + toml_lines(values) + "\n")
