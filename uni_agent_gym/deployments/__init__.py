"""Sandboxes behind one interface, chosen by `deployment.type` (local | docker | modal | ray).

Implementations are imported when first asked for, so a missing optional SDK (modal) never breaks
the others.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel

from uni_agent_gym.config import deployment_config
from uni_agent_gym.deployments.base import CommandResult, Deployment

__all__ = ["CommandResult", "Deployment", "make_deployment"]

def make_deployment(config: dict[str, Any] | BaseModel) -> Deployment:
    """A deployment, not yet started, from a config model or a dict like `{"type": "docker", "image": ...}`: the
    config names its implementation (`implementation`, `extra`), so a new kind of sandbox is one config model."""
    config = deployment_config(config)
    module_name, class_name = config.implementation.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = f" Install it with `pip install 'uni-agent-gym[{config.extra}]'`." if config.extra else ""
        raise ImportError(f"The {config.type} deployment needs the package {exc.name!r}.{hint}") from None
    return getattr(module, class_name)(config)
