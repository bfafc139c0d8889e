"""Command-line arguments that name files, directories and mirrors, checked before a command does any
work, so a bad one is one `error:` line that names the argument and says what is wrong with it.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from uni_agent_gym.errors import UniAgentGymError

_CLONE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[\w.-]+@[\w.-]+:")  # https://..., ssh://..., git@host:path
_GIT_BUNDLE = (b"# v2 git bundle", b"# v3 git bundle")


class BadArgument(UniAgentGymError, ValueError):
    """A command-line argument names something that cannot be used; the message names the argument."""


@contextlib.contextmanager
def argument(name: str) -> Iterator[None]:
    """Errors raised while reading what argument `name` names are reported against that argument."""
    try:
        yield
    except BadArgument:
        raise
    except (UniAgentGymError, OSError) as exc:
        raise BadArgument(f"{name}: {exc}") from exc


def output_directory(name: str, path: str) -> Path:
    """A directory a command writes into: absent (it will be made) or a directory, not a file."""
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise BadArgument(f"{name}: {path} is a file; expects a directory to write into")
    return directory


def input_directory(name: str, path: str) -> Path:
    """A directory a command reads: it must exist and be a directory."""
    directory = Path(path)
    if not directory.exists():
        raise BadArgument(f"{name}: {path} does not exist")
    if not directory.is_dir():
        raise BadArgument(f"{name}: {path} is a file; expects a directory")
    return directory


def output_file(name: str, path: str) -> Path:
    """A file a command writes: not a directory."""
    if Path(path).is_dir():
        raise BadArgument(f"{name}: {path} is a directory; expects a file name to write")
    return Path(path)


def parquet_file(name: str, path: str) -> Path:
    """A parquet file a command writes: named `.parquet`, as verl's data loader and every reader expect (a
    `.jsonl` name over parquet bytes is a file nothing reads as it says)."""
    output = output_file(name, path)
    if output.suffix != ".parquet":
        raise BadArgument(f"{name}: {path} is not a .parquet name; prepare-data writes parquet (verl reads it): e.g. {output.with_suffix('.parquet')}")
    return output


def mirror(text: str) -> tuple[str, str]:
    """`REPO=SOURCE` of `--mirror`: SOURCE is a clone URL, a git repository, a plain directory (not empty)
    or a git bundle."""
    repo, separator, source = text.partition("=")
    if not separator or not repo or not source:
        raise BadArgument(f"--mirror: expects REPO=PATH (e.g. pallets/flask=/src/flask), got {text!r}")
    if _CLONE_URL.match(source):
        return repo, source
    path = Path(source).expanduser()
    what = f"--mirror: the mirror of {repo}, {source},"
    try:
        if not path.exists():
            raise BadArgument(f"{what} does not exist (a mirror is a git repository, a directory, a git bundle or a clone URL)")
        if path.is_dir():
            if not any(path.iterdir()):
                raise BadArgument(f"{what} is an empty directory")
            return repo, source
        if not path.is_file():
            raise BadArgument(f"{what} is neither a directory nor a file")
        with path.open("rb") as file:
            if not file.read(16).startswith(_GIT_BUNDLE):
                raise BadArgument(f"{what} is a file but not a git bundle (`git bundle create` makes one)")
    except OSError as exc:
        raise BadArgument(f"{what} cannot be read: {exc.strerror}") from None
    return repo, source


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (0 workers would wait forever)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expects a whole number of at least 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number of at least 0 (0: none)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expects a whole number of at least 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expects a number above 0, got {text!r}")
    return value


def debian_mirror(text: str) -> str:
    """argparse type: the URL of a Debian mirror, as debootstrap takes it."""
    if not re.match(r"^(https?|ftp|file)://\S+$", text):
        raise argparse.ArgumentTypeError(f"expects a Debian mirror URL such as http://deb.debian.org/debian, got {text!r}")
    return text


def http_url(text: str) -> str:
    """argparse type: the URL of an HTTP server, e.g. http://gpu1:8000."""
    if not re.match(r"^https?://[^\s/]+", text):
        raise argparse.ArgumentTypeError(f"expects an http(s) URL such as http://127.0.0.1:8000, got {text!r}")
    return text


def registry_address(text: str) -> str:
    """argparse type: a registry as Docker names it, HOST:PORT (no scheme: the image names start with it)."""
    if not re.match(r"^[A-Za-z0-9.-]+:[0-9]{1,5}$", text):
        raise argparse.ArgumentTypeError(f"expects a registry as HOST:PORT such as 127.0.0.1:5000, got {text!r}")
    return text


def tokenizer_source(name: str, text: str) -> str:
    """A tokenizer directory (it must hold tokenizer_config.json or tokenizer.json); a text that is not a
    path on this machine is taken as a Hugging Face hub name."""
    path = Path(text).expanduser()
    if not path.exists():
        if text.startswith(("/", ".", "~")) or text.count("/") != 1:
            raise BadArgument(f"{name}: {text} does not exist (a tokenizer directory, or a hub name like Qwen/Qwen2.5-7B-Instruct)")
        return text
    if not path.is_dir():
        raise BadArgument(f"{name}: {text} is a file; expects a tokenizer directory")
    if not any((path / file).is_file() for file in ("tokenizer_config.json", "tokenizer.json")):
        raise BadArgument(f"{name}: {text} has no tokenizer (no tokenizer_config.json or tokenizer.json in it)")
    return str(path)
