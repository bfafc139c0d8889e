"""What a container changed, read from its overlay2 layers on this host instead of asked of the daemon.

`docker diff` costs the daemon a second or more per container here (even with its native overlay
diff), and grading (the patch capture) and the warm pool's scrub both need it. Where the engine is
local and uses overlay2, its layers are directories on this host (`GraphDriver.Data`): the upper
directory holds exactly what the container wrote, a whiteout (a 0/0 character device) marks a deleted
path and an opaque directory hides everything of the layers below. Reading them answers the same
question in milliseconds; nothing in the container takes part. Where they cannot be read (a remote
engine, another storage driver, overlay features that keep data below: `redirect_dir`, `metacopy`),
`layers` says None and the caller asks the daemon.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPAQUE = ("trusted.overlay.opaque", "user.overlay.opaque")
DATA_ELSEWHERE = ("trusted.overlay.redirect", "trusted.overlay.metacopy", "user.overlay.redirect", "user.overlay.metacopy")


class TooLarge(ValueError):
    """An archive would exceed the size it was allowed."""


@dataclass(frozen=True)
class Layers:
    """A container's writable layer and the image's layers below it (top first)."""

    upper: Path
    lowers: tuple[Path, ...]

    def in_image(self, relative: str) -> bool:
        return any(os.path.lexists(lower / relative) for lower in self.lowers)


def layers(inspected: dict[str, Any]) -> Layers | None:
    """The overlay2 layers of an inspected container, when this host can read them; else None."""
    driver = inspected.get("GraphDriver") or {}
    data = driver.get("Data") or {}
    if driver.get("Name") != "overlay2" or not data.get("UpperDir") or not data.get("LowerDir"):
        return None
    upper, lowers = Path(data["UpperDir"]), tuple(Path(p) for p in data["LowerDir"].split(":"))
    if not os.access(upper, os.R_OK | os.X_OK) or not all(os.access(lower, os.X_OK) for lower in lowers):
        return None
    return Layers(upper, lowers)


def changes(layers: Layers) -> list[tuple[str, str]] | None:
    """(kind, absolute path) as `docker diff` lists them (A added, C changed, D deleted), or None when
    the upper layer keeps data elsewhere (a renamed directory, a metadata-only copy)."""
    found: list[tuple[str, str]] = []
    for directory, names, files in os.walk(layers.upper):
        relative_dir = os.path.relpath(directory, layers.upper)
        for name in sorted(names + files):
            full = os.path.join(directory, name)
            relative = os.path.normpath(os.path.join(relative_dir, name))
            info = os.lstat(full)
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                found.append(("D", "/" + relative))
                continue
            attributes = _xattrs(full)
            if any(name in attributes for name in DATA_ELSEWHERE):
                return None
            found.append(("C" if layers.in_image(relative) else "A", "/" + relative))
            if stat.S_ISDIR(info.st_mode) and any(name in attributes for name in OPAQUE):
                found += [("D", f"/{relative}/{hidden}") for hidden in _below(layers, relative) if not os.path.lexists(os.path.join(full, hidden))]
    return found


def archive(layers: Layers, path: str, max_bytes: int) -> bytes | None:
    """A tar of `path` (absolute, in the container) as it is in the upper layer (links not followed),
    named by its last component like the daemon's archives; None when the upper layer lacks it."""
    source = layers.upper / path.lstrip("/")
    if not os.path.lexists(source) or _whiteout(source):
        return None
    out = _Capped(max_bytes)
    with tarfile.open(fileobj=out, mode="w") as tar:
        tar.add(source, arcname=source.name, recursive=True, filter=lambda member: None if member.ischr() and member.devmajor == member.devminor == 0 else member)
    return out.getvalue()


def head(layers: Layers, path: str, size: int) -> tuple[int, bytes] | None:
    """(mode, the first `size` bytes of a regular file, else b"") of `path` (absolute, in the container) as the upper
    layer holds it (links not followed); None when the upper layer lacks it or a link on the way leads out of it."""
    source = layers.upper / path.lstrip("/")
    upper = os.path.realpath(layers.upper)
    if os.path.commonpath([upper, os.path.realpath(source.parent)]) != upper or not os.path.lexists(source) or _whiteout(source):
        return None
    info = os.lstat(source)
    if not stat.S_ISREG(info.st_mode):
        return info.st_mode, b""
    descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        return info.st_mode, os.read(descriptor, size)
    finally:
        os.close(descriptor)


def _whiteout(path: Path) -> bool:
    info = os.lstat(path)
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _below(layers: Layers, relative: str) -> set[str]:
    names: set[str] = set()
    for lower in layers.lowers:
        try:
            names.update(os.listdir(lower / relative))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return names


def _xattrs(path: str) -> list[str]:
    try:
        return os.listxattr(path, follow_symlinks=False)
    except OSError:
        return []


class _Capped(io.BytesIO):
    """A buffer that refuses to grow past its limit."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.tell() + len(data) > self.limit:
            raise TooLarge(f"more than {self.limit} bytes")
        return super().write(data)
