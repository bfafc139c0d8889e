"""The seed article's names for gym settings, read as the gym's own.

Users copy the article's `settings.json` and agent-loop YAML entry as printed. Its names differ from ours in a
few places (`rollout_cache.*` is our `rollout.*`, an entry's `max_turns` is `env.max_turns`, its
`env.deployment` is our `deployment` section, a deployment's `timeout` is our `command_timeout`). Each is
translated where a config layer is read (`config.load_config` does it for every file and override), the
translation is said (`check-config` lists them), and a key that means nothing to us stays an error naming
the nearest known key: nothing is dropped. Our own names keep working; a layer giving both names with
different values is an error naming both.
"""

from __future__ import annotations

import copy
import difflib
from typing import Any

from uni_agent_gym.errors import ConfigError

# article key -> ours, applied in this order (a moved section is translated again under its new name)
ALIASES: dict[str, str] = {
    "env.deployment": "deployment",
    "deployment.timeout": "deployment.command_timeout",
    "rollout_cache.mask_abnormal_exit_traj": "rollout.mask_abnormal_exit_traj",
    "rollout_cache.max_prompt_length": "rollout.max_prompt_length",
    "rollout_cache.max_response_length": "rollout.max_response_length",
    "rollout_cache.max_model_len": "rollout.max_model_len",
}
# what an agent-loop entry may say at its top level, the article's way
ENTRY_ALIASES: dict[str, str] = {
    "max_turns": "env.max_turns",
    "tools": "env.tools",
    "max_model_len": "rollout.max_model_len",
    "max_prompt_length": "rollout.max_prompt_length",
    "max_response_length": "rollout.max_response_length",
    "mask_abnormal_exit_traj": "rollout.mask_abnormal_exit_traj",
}
PROBE_SWITCH = "rollout_cache.enable_boundary_probe"
GYM_SECTIONS = ("deployment", "env", "reward", "model", "agent", "rollout", "logging")


def _pop(data: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    """Remove `dotted` from nested `data`: (found, value); a section left empty goes too."""
    head, _, rest = dotted.partition(".")
    if head not in data:
        return False, None
    if not rest:
        return True, data.pop(head)
    if not isinstance(data[head], dict):
        return False, None
    found, value = _pop(data[head], rest)
    if found and not data[head]:
        del data[head]
    return found, value


def _get(data: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        data = data.setdefault(part, {})
        if not isinstance(data, dict):
            raise ConfigError(f"{'.'.join(parents)} is not a section")
    if isinstance(value, dict) and isinstance(data.get(last), dict):
        data[last] = {**value, **data[last]}  # a moved section joins ours; clashes were found before
    else:
        data[last] = value


def _clashes(ours: Any, theirs: Any, prefix: str) -> list[str]:
    """Dotted keys set on both sides with different values."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [clash for key in ours.keys() & theirs.keys() for clash in _clashes(ours[key], theirs[key], f"{prefix}.{key}")]
    return [] if ours == theirs else [prefix]


def translate(layer: dict[str, Any], source: str, aliases: dict[str, str] = ALIASES) -> tuple[dict[str, Any], list[str]]:
    """`layer` in the gym's own names, and one line per translation made. `ConfigError` for a switch the gym
    cannot turn off, an article key that means nothing here, or a value given under both names that disagree."""
    data = copy.deepcopy(layer)
    notes = []
    found, probe = _pop(data, PROBE_SWITCH)
    if found:
        if probe is not True:
            raise ConfigError(
                f"{source}: {PROBE_SWITCH} is {probe!r}, but the gym cannot record a trajectory without the boundary probe (the "
                "template's glue after each sampled turn; without it the masks no longer line up with the tokens). Remove the "
                "key or set it to true."
            )
        notes.append(f"{source}: {PROBE_SWITCH} = true: the gym always probes each tokenizer's boundary (nothing to set)")
    for article, ours in aliases.items():
        found, value = _pop(data, article)
        if not found:
            continue
        present, existing = _get(data, ours)
        clashes = _clashes(existing, value, ours) if present else []
        if clashes:
            names = ", ".join(clashes)
            raise ConfigError(f"{source}: {article} and {ours} are both given and disagree ({names}): keep one of them")
        _set(data, ours, value)
        notes.append(f"{source}: {article} -> {ours}")
    leftover = data.pop("rollout_cache", None)
    if leftover is not None:
        known = [key.partition(".")[2] for key in [*ALIASES, PROBE_SWITCH] if key.startswith("rollout_cache.")]
        raise ConfigError(f"{source}: " + "; ".join(_unknown(f"rollout_cache.{key}", key, known) for key in leftover))
    return data, notes


def entry_layer(entry: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """The gym settings an agent-loop entry gives in its own keys (the article's way: `max_turns: 12`,
    `env: {deployment: {...}}`, `reward: {...}`), in the gym's names, with the translations made."""
    known = [*ENTRY_ALIASES, *GYM_SECTIONS]
    unknown = [key for key in entry if key not in known]
    if unknown:
        raise ConfigError(f"{source}: " + "; ".join(_unknown(key, key, known) for key in unknown))
    return translate(entry, source, {**ENTRY_ALIASES, **ALIASES})


def _unknown(shown: str, key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
    return f"{shown} means nothing to the gym" + (f" (did you mean {close[0]}?)" if close else f" (known: {', '.join(known)})")
