"""verl's own trainer config, composed with Hydra exactly as `python -m verl.trainer.main_ppo` would.

    config = compose_trainer_config(["actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct", ...])

`check-config` validates our seed configs against it, the CPU integration test builds verl's
`AgentLoopWorker` from it, and `train` launches the entry point that reads the same file.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

PPO_ENTRY = "verl.trainer.main_ppo"
ASYNC_ENTRY = "verl.experimental.fully_async_policy.fully_async_main"


def config_dir(async_training: bool) -> tuple[Path, str]:
    """(directory, config name) of the trainer's Hydra config in the installed verl."""
    import verl

    root = Path(verl.__file__).parent
    if async_training:
        return root / "experimental" / "fully_async_policy" / "config", "fully_async_ppo_trainer"
    return root / "trainer" / "config", "ppo_trainer"


def compose_trainer_config(overrides: list[str], *, async_training: bool = False) -> DictConfig:
    """The trainer config with `overrides` applied (Hydra override syntax); raises Hydra's errors
    for keys verl does not have (a `+key=` adds one)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    directory, name = config_dir(async_training)
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(directory), version_base=None):
        return compose(name, overrides=list(overrides))


def example_default(key: str, async_training: bool = False) -> str:
    """The value verl's trainer config gives `key` when a run leaves it unset (its examples' data and model)."""
    from omegaconf import OmegaConf

    return str(OmegaConf.select(compose_trainer_config([], async_training=async_training), key))
