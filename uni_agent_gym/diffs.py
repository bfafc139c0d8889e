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


class IrreversibleDiff(ValueError):
    """A diff that `reverse_diff` cannot turn around as text (a binary patch, a copy)."""


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_SWAPPED_HEADERS = {"old mode ": "new mode ", "new mode ": "old mode ", "new file mode ": "deleted file mode ",
                    "deleted file mode ": "new file mode ", "rename from ": "rename to ", "rename to ": "rename from "}  # fmt: skip


def reverse_diff(patch: str) -> str:
    """The git diff that undoes `patch` (what `git apply -R` applies), as text: SWE-smith's rows hold the diff that
    makes their bug, whose reverse is the fix. `IrreversibleDiff` for a binary patch or a copy."""
    out: list[str] = []
    lines = patch.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        body, end = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")):]
        hunk = _HUNK.match(body)
        if hunk:
            old_start, old_count, new_start, new_count, rest = hunk.groups()
            out.append(f"@@ -{new_start}{',' + new_count if new_count is not None else ''} +{old_start}{',' + old_count if old_count is not None else ''} @@{rest}{end}")
            old_left, new_left = int(old_count or 1), int(new_count or 1)
            i += 1
            changed: list[tuple[str, str]] = []  # a run of changed lines, reversed, each with its "\ No newline" marker
            while i < len(lines) and (old_left or new_left or lines[i].startswith("\\")):
                inner = lines[i]
                if inner.startswith("\\"):  # "\ No newline at end of file": belongs to the line before it
                    if changed:
                        changed[-1] = (changed[-1][0], changed[-1][1] + inner)
                    else:
                        out.append(inner)
                elif inner[:1] in ("+", "-"):
                    changed.append(("-" if inner[0] == "+" else "+", inner[1:]))
                    old_left, new_left = (old_left, new_left - 1) if inner[0] == "+" else (old_left - 1, new_left)
                else:  # context (" "), or an empty line some tools write for an empty context line
                    out += _removed_first(changed)
                    changed = []
                    out.append(inner)
                    old_left, new_left = old_left - 1, new_left - 1
                i += 1
            out += _removed_first(changed)
            continue
        if body.startswith(("GIT binary patch", "Binary files ", "copy from ", "copy to ")):
            what = "a copy" if body.startswith("copy") else "a binary patch"
            raise IrreversibleDiff(f"a diff with {what} cannot be reversed as text: {body[:80]}")
        if body.startswith("diff --git "):
            out.append(_reversed_header(body) + end)
        elif body.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            after = lines[i + 1].rstrip("\r\n")
            out += [f"--- {_other_side(after[4:], 'a/')}{end}", f"+++ {_other_side(body[4:], 'b/')}{end}"]
            i += 1
        elif body.startswith("index ") and ".." in body:
            hashes, _, mode = body[6:].partition(" ")
            before, _, after = hashes.partition("..")
            out.append(f"index {after}..{before}{' ' + mode if mode else ''}{end}")
        else:
            prefix = next((key for key in _SWAPPED_HEADERS if body.startswith(key)), None)
            out.append(_SWAPPED_HEADERS[prefix] + line[len(prefix):] if prefix else line)
        i += 1
    # git wants `rename from` before `rename to`, and `old mode` before `new mode`: put each swapped pair back in order
    text = "".join(out)
    text = re.sub(r"(?m)^(rename to .*\n)(rename from .*\n)", r"\2\1", text)
    return re.sub(r"(?m)^(new mode .*\n)(old mode .*\n)", r"\2\1", text)


def _removed_first(changed: list[tuple[str, str]]) -> list[str]:
    """A run of changed lines as git writes it: the removed ones, then the added ones, each in its order."""
    return [sign + text for sign, text in changed if sign == "-"] + [sign + text for sign, text in changed if sign == "+"]


def _other_side(path: str, prefix: str) -> str:
    """A `---`/`+++` path moved to the other side of the diff (`b/x` -> `a/x`); /dev/null stays."""
    if path == "/dev/null":
        return path
    quoted = path.startswith('"')
    inner = path[1:] if quoted else path
    if inner[:2] in ("a/", "b/"):
        inner = prefix + inner[2:]
    return f'"{inner}' if quoted else inner


def _reversed_header(line: str) -> str:
    """`diff --git a/old b/new` -> `diff --git a/new b/old` (the same line when the paths are equal)."""
    rest = line[len("diff --git "):]
    for split in range(len(rest)):
        if rest[split] == " " and rest[: split].lstrip('"')[:2] == "a/" and rest[split + 1 :].lstrip('"')[:2] == "b/":
            old, new = rest[:split], rest[split + 1 :]
            return f"diff --git {_other_side(new, 'a/')} {_other_side(old, 'b/')}"
    return line
