"""`uni-agent-gym init`: the shipped config set, or the seed article's three config files as a complete, consistent set.

The shipped set is package data (`uni_agent_gym/configs/`, read with `importlib.resources`, so a wheel has it
too); `init` writes it where the docs' commands look for it, `configs/`. Its training configs are read by
verl alone and checked with verl's own trainer config, so an install without the `verl` extra gets the gym's
settings and deployment files and a line saying what the rest needs.

The article prints `config.toml` (verl's side, in its own vocabulary and missing what verl 0.9.1 requires),
`uni_agent_loop.yaml` (an agent-loop entry whose keys are gym settings) and `settings.json` (with its
`rollout_cache` and `logging` sections). Every value it sets is kept: the gym settings of the entry and of
`settings.json` go into one `settings.json` in the gym's names, the entry points at it, and `config.toml`
takes verl's names for the article's keys plus the lines `check-config` finds missing, until it is
consistent. `${VAR}` placeholders stay as written. A deployment file the entry names by a relative path is
copied beside it, so the set works where it is written.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from uni_agent_gym.config import merge, read_config_file
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.seed_vocabulary import entry_layer, translate

if TYPE_CHECKING:  # the training modules need the verl extra: imported where a set is checked
    from importlib.resources.abc import Traversable

    from uni_agent_gym.verl.training import TrainingCheck

FILES = ("config.toml", "uni_agent_loop.yaml", "settings.json")
SHIPPED = resources.files("uni_agent_gym") / "configs"
# the shipped files only verl reads (and only verl's config can check): left out where the verl extra is not installed
TRAINING_FILES = ("config.toml", "gateway_agent_loop.yaml", "uni_agent_loop.yaml")
ENTRY_KEYS = ("name", "_target_", "target", "settings", "deployment", "overrides")


def write_from_seed(seed_dir: Path, output: Path, *, force: bool = False, rounds: int = 3) -> tuple[list[str], TrainingCheck]:
    """Write the consistent set into `output`; (what was translated or added, one line each; the final check)."""
    if missing := _training_extra_missing():  # checked with verl's own trainer config: nothing written that cannot be
        raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)
    from uni_agent_gym.verl.training import ROLLOUT, check_training, load_training, toml_lines

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


def write_shipped(shipped: dict[str, bytes], output: Path, *, force: bool = False) -> tuple[list[str], TrainingCheck | None]:
    """Write the shipped set (`shipped_files()`, comments and all) into `output` and check it as `check-config --training`
    would; (what was written, one line each; the check, None where the verl extra is missing and the training files
    were left out). A file already there with the shipped content is no clash: `init` again adds what is missing."""
    missing = _training_extra_missing()
    files = {name: data for name, data in shipped.items() if not (missing and name in TRAINING_FILES)}
    _refuse_clobbering(output, [name for name, data in files.items() if _differs(output / name, data)], force)
    for name, data in files.items():
        (output / name).parent.mkdir(parents=True, exist_ok=True)
        (output / name).write_bytes(data)
    said = [f"wrote the shipped configs: {', '.join(files)}"]
    if missing:
        said.append(f"left out the training configs ({', '.join(TRAINING_FILES)}): they need the verl extra ({missing} is not installed "
                    "here); pip install 'uni-agent-gym[verl]', then uni-agent-gym init again adds them")  # fmt: skip
        return said, None
    from uni_agent_gym.verl.training import check_training, load_training

    return said, check_training(load_training(output / "config.toml"))


def shipped_files() -> dict[str, bytes]:
    """The shipped set by path inside it (`deployment/docker.yaml`), from the installed package."""
    if not SHIPPED.is_dir():
        raise ConfigError(f"this installation of uni-agent-gym has no shipped configs ({SHIPPED}): install it again "
                          "(pip install --force-reinstall uni-agent-gym), or give init --from-seed DIR")  # fmt: skip

    def walk(folder: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
        for item in sorted(folder.iterdir(), key=lambda item: item.name):
            if item.is_dir():
                yield from walk(item, f"{prefix}{item.name}/")
            else:
                yield f"{prefix}{item.name}", item.read_bytes()

    return dict(walk(SHIPPED, ""))


def _training_extra_missing() -> str | None:
    """The first module the training check needs that is not installed (the verl extra brings them all)."""
    return next((name for name in ("verl", "hydra", "omegaconf") if importlib.util.find_spec(name) is None), None)


def _differs(path: Path, data: bytes) -> bool:
    return path.exists() and (not path.is_file() or path.read_bytes() != data)


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
    from uni_agent_gym.verl.training import LOOP_TARGET

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
    from uni_agent_gym.verl.training import translate_toml_keys, verl_keys

    values = verl_keys(read_config_file(seed_dir / "config.toml"))
    said += translate_toml_keys(values, seed_dir / "config.toml")
    return values


def _write_toml(path: Path, values: dict[str, Any], seed_dir: Path) -> None:
    from uni_agent_gym.verl.training import toml_lines

    header = (
        f"# Written by `uni-agent-gym init --from-seed {seed_dir}`: the seed article's config.toml in verl's names,\n"
        "# with what verl 0.9.1 requires added. Check it with `uni-agent-gym check-config --training` on this file.\n\n"
    )
    path.write_text(header + toml_lines(values) + "\n")
