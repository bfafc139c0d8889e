"""Canaries for karma: mocha `it`s that must fail, inserted beside a graded `it` in its own block.

preact's SWE-bench Multilingual rows run `npx karma start karma.conf.js --single-run --grep="test/browser/x.test.js"`
(the repository's karma.conf.js takes `--grep` as the test files to load), and karma-mocha-reporter prints a tree of
suites and `✔`/`✖` lines, which `parse_log_karma` reads into `suite > inner suite > title`. The parser tracks the
suites by indentation (and misses some: it skips the header of a suite that follows a deeper one), so a top-level
canary, appended to the file, could come out under any name. Instead a canary is an `it` inserted just before a graded
`it`, at its indentation, in the same block: mocha reports a suite's tests in the order they are defined, before its
inner suites, so the canary's line comes right beside the graded test's, under the suites the parser holds there,
whatever it makes of them. Its name is the graded test's with the title replaced: the graded title with words of the
file after it. The first asserts with the file's own `expect` (chai's, global in preact's tests) or `assert`, the
second throws.

Planted only in a test-patch file the command names (by its path, or as `--grep`'s), before a graded `it` whose title
is written once in the file and ends one graded name, on a line that starts a statement (the code line above ends a
statement or opens a block: an `it` under an `if (...)` without braces gets none); none under a filter the browser's
mocha applies (client arguments after `--`), nor where the karma configuration mentions mocha's `bail` (a failing
canary would end the run).
"""

from __future__ import annotations

import collections
import json
import re
import secrets

from uni_agent_gym.rewards.runner_canaries import MORE_WORDS, javascript_check, words_of

_IT = re.compile(r"""^([ \t]*)it\(\s*(['"])((?:(?!\2)[^\\\n])+)\2\s*,""", re.MULTILINE)
_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx")
_WORD = re.compile(r"[a-z]{3,}")
_ENDS_STATEMENT = (";", "{", "}", "})", "*/")
_ATTEMPTS = 20
BAILS = re.compile(r"\bbail\b")  # mocha's option (client.mocha.bail) in the karma configuration


def planted(command: str) -> bool:
    """Whether a karma run reports canaries beside the graded tests: none with client arguments (`-- ...`, where
    mocha's own `--grep` would filter the titles)."""
    return "--" not in words_of(command)


def configuration(command: str) -> str:
    """The karma configuration file the command starts with (`karma start <file>`; karma's default otherwise)."""
    words = words_of(command)
    if "start" in words:
        after = words[words.index("start") + 1 :]
        if after and not after[0].startswith("-"):
            return after[0]
    return "karma.conf.js"


def files(command: str, touched: list[str]) -> list[str]:
    """The test patch's JavaScript files that `command` names: by path, or as `--grep`'s value (preact's config loads those)."""
    words = words_of(command)
    named = set(words)
    named |= {word.split("=", 1)[1] for word in words if word.startswith("--grep=")}
    named |= {words[i + 1] for i, word in enumerate(words[:-1]) if word == "--grep"}
    return [path for path in touched if path.endswith(_SUFFIXES) and (path in named or f"./{path}" in named)]


def source(text: str, graded: list[str]) -> tuple[str, list[str]]:
    """The test file's text with two canary `it`s inserted before a graded one, and their names as the parser reports
    them; the text unchanged and no names where no graded `it` allows it."""
    calls = list(_IT.finditer(text))
    written = collections.Counter(call.group(3) for call in calls)
    suites: dict[str, list[str]] = collections.defaultdict(list)
    for test in graded:
        suite, separator, title = test.rpartition(" > ")
        if separator:
            suites[title].append(suite)
    beside = [call for call in calls if written[call.group(3)] == 1 and len(suites.get(call.group(3), [])) == 1 and _starts_statement(text, call.start())]
    if not beside:
        return text, []
    call = secrets.choice(beside)
    indent, title = call.group(1), call.group(3)
    suite = suites[title][0]
    words = sorted({word for other in written for word in _WORD.findall(other.lower())} | set(MORE_WORDS))
    taken = {f"{suite} > {other}" for other in written} | set(graded)
    titles: list[str] = []
    for _ in range(_ATTEMPTS):
        fresh = [word for word in words if word not in title.lower()]
        candidate = f"{title} {' '.join(secrets.SystemRandom().sample(fresh, 1 + secrets.randbelow(2)))}"
        if f"{suite} > {candidate}" not in taken and candidate not in titles:
            titles.append(candidate)
        if len(titles) == 2:
            break
    if len(titles) < 2:
        return text, []
    inner = indent + ("\t" if indent.startswith("\t") else "  ")
    check = javascript_check(text, "to.equal" if re.search(r"\bexpect\([^\n]*\)\.to\.", text) else None)  # chai's
    block = (f"{indent}it({json.dumps(titles[0])}, () => {{\n{inner}{check}\n{indent}}});\n\n"
             f"{indent}it({json.dumps(titles[1])}, () => {{\n{inner}throw new Error({json.dumps(titles[1].split()[-1])});\n{indent}}});\n\n")  # fmt: skip
    return text[: call.start()] + block + text[call.start() :], [f"{suite} > {name}" for name in titles]


def _starts_statement(text: str, start: int) -> bool:
    """Whether the line at `start` begins a statement: the code line above ends one or opens a block (comments and blank
    lines skipped)."""
    for line in reversed(text[:start].split("\n")):
        code = line.strip()
        if not code or code.startswith(("//", "*", "/*")):
            continue
        return code.endswith(_ENDS_STATEMENT)
    return True
