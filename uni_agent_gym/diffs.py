"""The files a git diff touches, read the way git reads them.

A path in a diff header is written as it is when it is plain, and in double quotes with C escapes when it
holds a quote, a backslash, a control character or (with `core.quotePath`, git's default) any byte past
ASCII; a name with a space stays unquoted, so `diff --git a/x y b/x y` is split by length, as git splits it.
Names that are not UTF-8 come back with their bytes kept as surrogates (`os.fsdecode`'s convention), so a
path taken from a diff names the same file again when it is encoded with `os.fsencode` or written to a shell
with `surrogateescape`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SECTION = re.compile(r"(?m)^(?=diff --git )")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(frozen=True)
class FileDiff:
    """One file's section of a diff: the path it had before (None: added) and after (None: deleted)."""

    old: str | None
    new: str | None
    text: str

    @property
    def path(self) -> str:
        """The path the section touches: its new one, or the deleted one."""
        return self.new if self.new is not None else self.old  # type: ignore[return-value]


def file_diffs(patch: str) -> list[FileDiff]:
    """The sections of `patch`, in order; text before the first `diff --git` line is not a section."""
    sections = []
    for text in _SECTION.split(patch):
        if text.startswith("diff --git "):
            old, new = _paths(text)
            sections.append(FileDiff(old, new, text))
    return sections


def patch_files(patch: str) -> list[str]:
    """The paths a git diff touches (the new path of each file; a deleted file's own), in order."""
    return [section.path for section in file_diffs(patch)]


def unquote(text: str) -> str:
    """A path as git writes it in a diff: C-quoted ("a/\\303\\251.py") or as it is."""
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        return text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            following = body[i + 1]
            if following in "0123" and re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            if following in _ESCAPES:
                out.append(_ESCAPES[following])
                i += 2
                continue
        out += char.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _paths(section: str) -> tuple[str | None, str | None]:
    """(old, new) of a section, from its `---`/`+++`, rename/copy or `diff --git` lines (in that order of trust)."""
    lines = section.split("\n")
    old = new = None
    named = {}
    for line in lines[1:]:
        if line.startswith(("@@", "GIT binary patch", "Binary files ", "diff --git ")):
            break
        for key in ("--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ", "deleted file mode", "new file mode"):
            if line.startswith(key):
                named[key] = line[len(key) :]
    if "+++ " in named or "--- " in named:
        old, new = _side(named.get("--- ")), _side(named.get("+++ "))
    header_old, header_new = _header_paths(lines[0][len("diff --git ") :])
    if "rename from " in named or "copy from " in named:
        old = unquote(named.get("rename from ", named.get("copy from ", "")))
        new = unquote(named.get("rename to ", named.get("copy to ", "")))
    elif "+++ " not in named and "--- " not in named:
        old, new = header_old, header_new
    if "new file mode" in named:
        old = None
    if "deleted file mode" in named:
        new = None
    return old, new


def _side(value: str | None) -> str | None:
    """The path of a `---` / `+++` line's value: None for /dev/null, prefix (a/, b/) dropped."""
    if value is None:
        return None
    value = value[:-1] if value.endswith("\t") else value  # git adds a tab after a name with a space
    if value == "/dev/null":
        return None
    return _drop_prefix(unquote(value))


def _header_paths(rest: str) -> tuple[str | None, str | None]:
    """(old, new) from what follows `diff --git `: two quoted names, or two equal plain ones split by length."""
    if rest.startswith('"'):
        end = _quoted_end(rest)
        first, second = rest[: end + 1], rest[end + 2 :]
        return _drop_prefix(unquote(first)), _drop_prefix(unquote(second))
    if rest.endswith('"'):
        start = rest.rfind(' "')
        return _drop_prefix(rest[:start]), _drop_prefix(unquote(rest[start + 1 :]))
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half][2:] == rest[half + 1 :][2:]:
        return _drop_prefix(rest[:half]), _drop_prefix(rest[half + 1 :])
    first, _, second = rest.partition(" b/")
    return _drop_prefix(first), second or None


def _quoted_end(text: str) -> int:
    """The index of the quote closing the quoted name that starts `text`."""
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return len(text) - 1


def _drop_prefix(path: str) -> str:
    return path[2:] if path[:2] in ("a/", "b/") else path


def attribute_pattern(path: str) -> str:
    """`path` as a gitattributes pattern matching exactly it (anchored, glob characters escaped, C-quoted)."""
    raw = ("/" + re.sub(r"([\\*?\[])", r"\\\1", path)).encode("utf-8", "surrogateescape")
    quoted = "".join(
        chr(byte) if 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C) else {0x22: '\\"', 0x5C: "\\\\"}.get(byte, f"\\{byte:03o}")
        for byte in raw
    )
    return f'"{quoted}"'
