"""swesmith's repository profiles under swebench 5.x.

swesmith 0.0.9 (the newest) imports from swebench names that 5.x removed: `DOCKER_USER`, `DOCKER_WORKDIR` and
`KEY_INSTANCE_ID` from `swebench.harness.constants`, and `get_dockerfile_env` from `swebench.harness.dockerfiles`
(gone with 5.x's image builder). Its profiles (test command, log parser, image, commit per repository) are what
SWE-smith rows are graded by, so the gym imports them with those names aliased: while `swesmith.profiles` is first
imported, the two module names resolve to modules of this file's making that hold 5.x's own constants plus 4.1.0's
values of the removed ones; after it, both names are swebench's again. swebench itself is not changed, and a swesmith
that no longer needs the aliases imports as it is.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

# swebench 4.1.0's values (harness/constants/__init__.py)
REMOVED_CONSTANTS = {"DOCKER_USER": "root", "DOCKER_WORKDIR": "/testbed", "KEY_INSTANCE_ID": "instance_id"}
_CONSTANTS, _DOCKERFILES = "swebench.harness.constants", "swebench.harness.dockerfiles"
_importing = threading.Lock()


def get_dockerfile_env(*args: Any, **kwargs: Any) -> str:
    """swebench 4.x's environment Dockerfile, which swesmith's Python profiles build their images from; 5.x has none."""
    raise NotImplementedError(
        "swesmith's profiles build their environment images with swebench 4.x's Dockerfiles, which swebench 5.x removed: "
        "build SWE-smith images with `uni-agent-gym images build` and an environments file, or pull the profile's image"
    )


def registry() -> Any:
    """swesmith's registry of repository profiles (`swesmith.profiles.registry`), imported once."""
    if "swesmith.profiles" not in sys.modules:
        with _importing, _aliases():
            importlib.import_module("swesmith.profiles")
    return sys.modules["swesmith.profiles"].registry


@contextlib.contextmanager
def _aliases() -> Iterator[None]:
    constants = importlib.import_module(_CONSTANTS)
    missing = {name: value for name, value in REMOVED_CONSTANTS.items() if not hasattr(constants, name)}
    has_dockerfiles = importlib.util.find_spec(_DOCKERFILES) is not None
    if not missing and has_dockerfiles:  # a swebench that still has them: nothing to alias
        yield
        return
    alias = types.ModuleType(_CONSTANTS, constants.__doc__)
    alias.__dict__.update({**vars(constants), **missing})
    dockerfiles = types.ModuleType(_DOCKERFILES, get_dockerfile_env.__doc__)
    dockerfiles.get_dockerfile_env = get_dockerfile_env
    saved = {name: sys.modules.get(name) for name in (_CONSTANTS, _DOCKERFILES)}
    sys.modules[_CONSTANTS] = alias
    if not has_dockerfiles:
        sys.modules[_DOCKERFILES] = dockerfiles
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
