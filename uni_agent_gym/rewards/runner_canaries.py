"""Canaries for runners of other languages than Python: go test's `func TestX` and redis's Tcl `test`.

The rule is Python's (`canaries.py`): tests that must fail, appended to the test patch's files that hold graded
tests, named like those tests. These runners only run what the test command selects (`go test ./pkg -run
'^TestX'`, `runtest --single unit/x --only '/pattern'`), and a canary that is not run would read as a forged
verdict, so a canary goes only into a file the command runs, under a name its filters select: a graded test's
name with words of the file after it (the graded test matched the filter; the longer name still does unless the
filter is anchored at the end, and then no canary is planted there).
"""

from __future__ import annotations

import fnmatch
import re
import secrets
import shlex
from pathlib import PurePosixPath

_GO_TEST = re.compile(r"^func (Test\w*)\(\s*\w+ \*testing\.T\s*\)", re.MULTILINE)
_GO_IMPORTS_TESTING = re.compile(r'^\s*(?:import\s+)?"testing"\s*$', re.MULTILINE)
_CAMEL = re.compile(r"[A-Z][a-z]+")
_TCL_TEST = re.compile(r"^\s*test\s+[{\"]([^{}\"$\[\]\\]+)[}\"]", re.MULTILINE)
_TCL_WORD = re.compile(r"[A-Za-z]{3,}")
_ATTEMPTS = 20


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def go_packages(command: str) -> list[str] | None:
    """The package directories `go test` runs ("" the repository root, "binding/..." a tree); None: not a go test."""
    words = _words(command)
    try:
        start = next(i for i in range(len(words) - 1) if words[i : i + 2] == ["go", "test"]) + 2
    except StopIteration:
        return None
    packages, i = [], start
    while i < len(words) and words[i] not in ("&&", ";", "|", "||"):
        word = words[i]
        if word in ("-run", "-skip", "-count", "-timeout", "-tags", "-p", "-parallel"):
            i += 2
            continue
        if word == "." or word.startswith("./"):
            packages.append("" if word == "." else word[2:].rstrip("/"))
        i += 1
    return packages or [""]


def go_run_pattern(command: str) -> str | None:
    """The top-level part of `go test -run`'s pattern (None: every test runs)."""
    words = _words(command)
    for i, word in enumerate(words):
        if word == "-run" and i + 1 < len(words):
            return words[i + 1].split("/")[0]
        if word.startswith("-run="):
            return word.split("=", 1)[1].split("/")[0]
    return None


def go_runs_file(path: str, packages: list[str]) -> bool:
    directory = str(PurePosixPath(path).parent)
    directory = "" if directory == "." else directory
    return any(directory == package or (package.endswith("...") and (directory + "/").startswith(package[:-3])) for package in packages)


def go_source(text: str, graded: list[str], run_pattern: str | None) -> tuple[str, list[str]]:
    """Go canaries for a `_test.go` file (its text) that defines graded tests; ("", []) where none can be named."""
    defined = set(_GO_TEST.findall(text))
    bases = sorted(defined & {test.split("/")[0] for test in graded})
    if not bases or not _GO_IMPORTS_TESTING.search(text):
        return "", []
    words = sorted(set(_CAMEL.findall(" ".join(defined)))) or ["Value", "Case"]
    names = _names(bases, words, lambda name: name not in defined and _go_selects(run_pattern, name), joiner="")
    if len(names) < 2:
        return "", []
    expected, got = secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    body = (f"\n\nfunc {names[0]}(t *testing.T) {{\n\tif got := len({'x' * got!r}); got != {expected} {{\n"
            f"\t\tt.Fatalf(\"len = %d, want {expected}\", got)\n\t}}\n}}\n\n"
            f"func {names[1]}(t *testing.T) {{\n\tt.Errorf(\"{names[1][4:]}: %v\", {got})\n}}\n").replace("'", '"')  # fmt: skip
    return ("" if text.endswith("\n") else "\n") + body, names


def _go_selects(pattern: str | None, name: str) -> bool:
    try:
        return pattern is None or re.search(pattern, name) is not None
    except re.error:
        return False


def redis_files(command: str, touched: list[str]) -> list[str]:
    """The test patch's Tcl test files that redis's `runtest` runs: its `--single` units, else every one."""
    words = _words(command)
    single = [f"tests/{words[i + 1]}.tcl" for i, word in enumerate(words[:-1]) if word == "--single"]
    tcl = [path for path in touched if path.endswith(".tcl") and path.startswith(("tests/unit/", "tests/integration/"))]
    return [path for path in tcl if path in single] if single else tcl


def redis_only(command: str) -> list[str]:
    words = _words(command)
    return [words[i + 1] for i, word in enumerate(words[:-1]) if word == "--only"]


def redis_selects(patterns: list[str], name: str) -> bool:
    """runtest's `--only`: a pattern starting with "/" is a regular expression, else a glob (`string match`)."""
    for pattern in patterns or ["*"]:
        try:
            if re.search(pattern[1:], name) if pattern.startswith("/") else fnmatch.fnmatchcase(name, pattern):
                return True
        except re.error:
            continue
    return False


def redis_source(text: str, graded: list[str], only: list[str]) -> tuple[str, list[str]]:
    """Tcl canaries for a redis test file (its text) that holds graded tests, appended after its servers' blocks."""
    defined = set(_TCL_TEST.findall(text))
    bases = sorted(defined & set(graded))
    if not bases:
        return "", []
    words = sorted({word.lower() for word in _TCL_WORD.findall(" ".join(defined))}) or ["value", "case"]
    names = _names(bases, words, lambda name: name not in defined and redis_selects(only, name), joiner=" ")
    if len(names) < 2:
        return "", []
    expected, got = secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    body = (f"\n\ntest {{{names[0]}}} {{\n    assert_equal {expected} [string length \"{'x' * got}\"]\n}}\n\n"
            f"test {{{names[1]}}} {{\n    assert_match \"*{names[1].split()[-1]}*\" {got}\n}}\n")  # fmt: skip
    return ("" if text.endswith("\n") else "\n") + body, names


def _names(bases: list[str], words: list[str], fits, joiner: str) -> list[str]:
    names: list[str] = []
    for _ in range(_ATTEMPTS):
        name = secrets.choice(bases) + joiner + joiner.join(secrets.choice(words) for _ in range(1 + secrets.randbelow(2)))
        if fits(name) and name not in names:
            names.append(name)
        if len(names) == 2:
            break
    return names
