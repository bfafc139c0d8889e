"""Canaries for Python's runners (pytest, Django's `runtests.py`, sympy's `bin/test`): two test functions (an assertion
and an error) appended to each test file that holds graded tests, named from the file's own words (`canaries.py`)."""

from __future__ import annotations

import re
import secrets
from pathlib import PurePosixPath

from uni_agent_gym.instances import patch_files

STOPS_AT_FIRST_FAILURE = re.compile(r"(?:^|\s)(?:-x|--exitfirst|--failfast|--maxfail(?:=|\s+)1)(?=\s|$)")
_WORDS = re.compile(r"def test_?(\w+)")
_FALLBACK_WORDS = ("value", "result", "case", "input", "default", "output", "basic", "format", "empty", "order")


def planted(command: str) -> bool:
    """Not where the command stops at the first failure (`-x`, `--failfast`): a canary would end the run early."""
    return STOPS_AT_FIRST_FAILURE.search(command) is None


def pytest_files(test_patch: str, graded: list[str], command: str = "") -> list[str]:
    """The test patch's Python files that hold graded tests (pytest's ids name their file)."""
    files = {test.split("::")[0] for test in graded if "::" in test}
    return [path for path in patch_files(test_patch) if path.endswith(".py") and path in files]


def module_files(test_patch: str, graded: list[str], command: str = "") -> list[str]:
    """The test patch's Python files that are test modules (Django's and sympy's ids do not name files)."""
    return [path for path in patch_files(test_patch) if path.endswith(".py") and re.fullmatch(r"tests?(_\w*)?\.py|\w+_tests?\.py", PurePosixPath(path).name)]


def function_source(path: str, text: str, graded: list[str], command: str = "") -> tuple[str, list[str]]:
    """Two module-level test functions (pytest, sympy)."""
    names, expected, got = _names(text), secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    body = (f"\n\ndef {names[0]}():\n    assert len({'x' * got!r}) == {expected}\n\n\n"
            f"def {names[1]}():\n    raise ValueError({names[1][5:]!r})\n")  # fmt: skip
    return _separator(text) + body, names


def django_source(path: str, text: str, graded: list[str], command: str = "") -> tuple[str, list[str]]:
    """A unittest class of two tests (Django's runner collects classes)."""
    names, expected, got = _names(text), secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    class_name = "".join(part.title() for part in names[0].split("_")[1:]) + "Tests"
    while _used(class_name, text):  # a class of the module's own name would replace it, and its tests
        class_name += secrets.choice("ABCDEFGH")
    body = (f"\n\nclass {class_name}(__import__('unittest').TestCase):\n"
            f"    def {names[0]}(self):\n        self.assertEqual(len({'x' * got!r}), {expected})\n\n"
            f"    def {names[1]}(self):\n        raise ValueError({names[1][5:]!r})\n")  # fmt: skip
    return _separator(text) + body, names


def reports(test: str, name: str) -> bool:
    """Whether a parsed test id is the function `name`: pytest `file::name[param]`, Django `name (module.Class)`,
    sympy `name`, or `file.py:name` (sympy's failure header: its verbose line for a file's last test ends in
    `[FAIL]`, which the parser does not read)."""
    return re.search(rf"(?:^|:|\.){re.escape(name)}(?:$|\s|\[)", test) is not None


def _names(text: str) -> list[str]:
    """Two test names made of the file's own words that the file does not have."""
    words = [word for found in _WORDS.findall(text) for word in found.split("_") if word.isidentifier() and not word[0].isdigit()]
    pool = sorted(set(words))
    pool += _FALLBACK_WORDS if len(pool) < 4 else ()  # enough words for names the file does not have
    names: list[str] = []
    while len(names) < 2:
        name = "test_" + "_".join(secrets.choice(pool) for _ in range(2 + secrets.randbelow(2)))
        if not _used(name, text) and name not in names:
            names.append(name)
    return names


def _separator(text: str) -> str:
    return "" if text.endswith("\n") or not text else "\n"


def _used(name: str, text: str) -> bool:
    """Whether the file already has `name` (a canary of the same name would replace it)."""
    return re.search(rf"\b{re.escape(name)}\b", text) is not None
