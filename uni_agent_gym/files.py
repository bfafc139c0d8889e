"""Files the user names (configs, datasets, predictions, environments): one check of what can go wrong
before a loader parses them, so every loader says "missing", "a directory", "empty" or "not UTF-8"
the same way instead of letting an `OSError` or `UnicodeDecodeError` escape as a traceback.
"""

from __future__ import annotations

from pathlib import Path

from uni_agent_gym.errors import UniAgentGymError


def check_file(path: str | Path, what: str, error: type[UniAgentGymError]) -> Path:
    """`path` as a Path if it is a non-empty regular file; else `error` saying what it is instead."""
    path = Path(path)
    try:
        status = path.stat()
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise error(f"{what} {path} cannot be read: {exc.strerror}") from None
    if path.is_dir():
        raise error(f"{what} {path} is a directory, not a file") from None
    if path.is_file() and status.st_size == 0:  # pipes (`<(...)`) have no size until read
        raise error(f"{what} {path} is empty")
    return path


def read_text(path: str | Path, what: str, error: type[UniAgentGymError]) -> str:
    """The UTF-8 text of a file the user named, or `error` saying why there is none to parse."""
    path = check_file(path, what, error)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise error(f"{what} {path} cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x}): a binary file?") from None
    if not text.strip():
        raise error(f"{what} {path} is empty")
    return text
