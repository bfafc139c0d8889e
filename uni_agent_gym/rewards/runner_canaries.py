"""Canaries for runners of other languages than Python: go test's `func TestX`, redis's Tcl `test`, googletest's
`TEST`, Rust's `#[test]` under `cargo test`, Ruby's test-unit `def test_x` / `test "x" do` and RSpec's `it`, and jest's,
vitest's and mocha's `test` / `it`, and QUnit's `QUnit.test`.

The rule is Python's (`canaries.py`): tests that must fail, appended to the test patch's files that hold graded
tests, named like those tests. These runners only run what the test command selects (`go test ./pkg -run
'^TestX'`, `runtest --single unit/x --only '/pattern'`), and a canary that is not run would read as a forged
verdict, so a canary goes only into a file the command runs, under a name its filters select: a graded test's
name with words of the file after it (the graded test matched the filter; the longer name still does unless the
filter is anchored at the end, and then no canary is planted there).

googletest's binaries run every test they hold unless `--gtest_filter` says otherwise (then none is planted); a
canary is a `TEST` of a graded test's suite. `cargo test`'s filters match a substring of a test's path
(`module::name`), so a canary is a function beside a graded one at the top level of the same module file, its name
the graded test's with words after it: every filter that selects the graded test selects it (not under `--exact`,
`--skip` or `--ignored`: then none is planted). cargo stops after the first test binary that fails unless told
`--no-fail-fast`: without it, canaries only where the command runs one target (`--lib`, `--test X`, `--bin X`). A
graded test inside a module (`mod tests { ... }`) gets its canaries inserted just above it, in that module.

Ruby's test-unit (`ruby test/x.rb -v -n '/pattern/'`) runs the file the command names: a canary is a test of the
file's top-level test class, appended in the class reopened (`class X ... end`: Ruby classes stay open), named after a
graded test defined directly in that class, with words after it (`-n`'s pattern still selects it); in the file's own
style (`def test_x` or `test "x" do`).

RSpec (`rspec spec/x_spec.rb --format json | jq ...`, each example named by its description, or its description and
id) runs the file the command names: the canaries are a top-level `RSpec.describe` group appended to it, two examples
described as a graded example with words after it (no name filter applies: none is planted under `-e`, `--tag`,
`--fail-fast` or `--only-failures`).

JavaScript's runners (jest, vitest, mocha's TAP reporter, QUnit's) run the files the command names: a canary goes only
into a test-patch file the command names by its path (SWE-bench Multilingual's shape: `yarn test <file> --verbose`), as
a top-level `it`/`test`/`QUnit.test` titled after a graded test with words after it, if the command's name filter
(`-t`, `--grep`, QUnit's `-f`) still selects it. The first asserts with the file's own `expect` or `assert`, the second
throws.
"""

from __future__ import annotations

import collections
import fnmatch
import json
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
_GTEST = re.compile(r"^[ \t]*(TEST|TEST_F)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.MULTILINE)
_GTEST_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_RUST_ATTRIBUTE = re.compile(r"^#\[(?:[\w:]+::)?test\b")  # #[test], #[tokio::test], #[tokio::test(flavor = ...)]
_RUST_IMPORTS_TEST = re.compile(r"\buse\b[^;]*\btest\b[^;]*;")  # `use tokio::test;` would make #[test] tokio's
_SNAKE = re.compile(r"[a-z][a-z0-9_]*")
_RUST_MODULE = re.compile(r"^[ \t]*(?:pub(?:\([\w: ]+\))?\s+)?mod\s+(\w+)\s*\{\s*$")
_RUST_INLINE_FN = re.compile(r"^([ \t]+)(?:pub(?:\([\w: ]+\))?\s+)?(?:async\s+)?fn\s+(\w+)\s*\(")  # a function inside a module or impl
_RUBY_CLASS = re.compile(r"^( *)class\s+([\w:]+)\s*<\s*[\w:]+", re.MULTILINE)
_RUBY_WORD = re.compile(r"[A-Za-z]{3,}")
MORE_WORDS = ("value", "result", "input", "default")  # for files with few words of their own (karma's too)
_RSPEC_IT = re.compile(r"""^[ \t]*(?:it|specify|example)\s*\(?\s*(['"])((?:(?!\1)[^\\\n])+)\1""", re.MULTILINE)
_RSPEC_STOPS = re.compile(r"(?:^|\s)(?:-e|--example|--example-matches|-t|--tag|--fail-fast|--only-failures|--next-failure|--bisect)(?=[\s=]|$)")
_JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_JS_TEST = re.compile(r"""^[ \t]*(it|test)\(\s*(['"])((?:(?!\2)[^\\\n])+)\2""", re.MULTILINE)
_JS_STOPS = re.compile(r"(?:^|\s)(?:--bail|-b)(?=[\s=]|$)")
_MOCHA_INVERTS = re.compile(r"(?:^|\s)(?:--invert|-i)(?=[\s=]|$)")  # (jest's -i runs in band)
_JS_FILTERS = {"jest": ("-t", "--testNamePattern"), "vitest": ("-t", "--testNamePattern"), "tap": ("-g", "--grep", "-f", "--fgrep"),
               "qunit": ("-f", "--filter")}  # fmt: skip
_QUNIT = re.compile(r"\bqunit\b")  # QUnit's CLI: its TAP is read by the same parser as mocha's
_QUNIT_TEST = re.compile(r"""^[ \t]*(QUnit\.test)\(\s*(['"])((?:(?!\2)[^\\\n])+)\2""", re.MULTILINE)
_QUNIT_MODULES = re.compile(r"QUnit\.module\(")
_QUNIT_SCOPED_MODULES = re.compile(r"""QUnit\.module\(\s*(['"])(?:(?!\1)[^\\\n])+\1\s*,\s*(?:function\b|\(?\s*\w*\s*\)?\s*=>)""")
_QUNIT_MODULE_FILTER = re.compile(r"(?:^|\s)(?:-m|--module)(?=[\s=]|$)")
_JS_REGEX = re.compile(r"^/(.*)/([a-z]*)$")
_JS_WORD = re.compile(r"[a-z]{3,}")
_CARGO_ONE_TARGET = ("--lib", "--test", "--bin")
_CARGO_EVERY_TARGET = ("--tests", "--bins", "--all-targets", "--examples", "--benches", "--doc")


def words_of(command: str) -> list[str]:
    """A command's words as the shell splits them (on whitespace where its quotes do not close)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def go_packages(command: str) -> list[str] | None:
    """The package directories `go test` runs ("" the repository root, "binding/..." a tree); None: not a go test."""
    words = words_of(command)
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
    words = words_of(command)
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
    words = words_of(command)
    single = [f"tests/{words[i + 1]}.tcl" for i, word in enumerate(words[:-1]) if word == "--single"]
    tcl = [path for path in touched if path.endswith(".tcl") and path.startswith(("tests/unit/", "tests/integration/"))]
    return [path for path in tcl if path in single] if single else tcl


def redis_only(command: str) -> list[str]:
    words = words_of(command)
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


def googletest_planted(command: str) -> bool:
    """Whether googletest's canaries run where `command` runs the graded tests: not when a filter picks the tests, nor
    when the run stops at the first failure."""
    return re.search(r"gtest_filter|GTEST_FILTER|gtest_fail_fast|GTEST_FAIL_FAST|--stop-on-failure", command) is None


def googletest_files(touched: list[str]) -> list[str]:
    """The test patch's C++ sources (googletest's tests are compiled, so any of them may hold graded tests)."""
    return [path for path in touched if path.endswith((".cc", ".cpp", ".cxx", ".c++"))]


def googletest_source(text: str, graded: list[str]) -> tuple[str, list[str]]:
    """googletest canaries for a C++ test file (its text) that defines graded tests (`Suite.Name`): `TEST`s of a graded
    test's suite, or `TEST_F`s of its fixture where the file has no named namespace the fixture could be hidden in."""
    defined = {(suite, name): macro for macro, suite, name in _GTEST.findall(text)}
    fixtures_reachable = re.search(r"^\s*namespace\s+\w+", text, re.MULTILINE) is None
    bases = [f"{suite}.{name}" for (suite, name), macro in sorted(defined.items()) if f"{suite}.{name}" in graded and (macro == "TEST" or fixtures_reachable)]
    if not bases:
        return "", []
    macro_of = {suite: macro for (suite, _), macro in defined.items()}
    words = sorted({word.lower() for (_, name) in defined for word in _GTEST_WORD.findall(name)}) or ["value", "case"]
    joiner = "_" if any("_" in base or base.split(".")[1].islower() for base in bases) else ""
    shaped = words if joiner else [word.title() for word in words]
    names = _names(bases, shaped, lambda name: tuple(name.split(".")) not in defined, joiner=joiner)
    if len(names) < 2:
        return "", []
    expected, got = secrets.randbelow(80) + 20, secrets.randbelow(9) + 1  # from 20: never value * 2
    (suite0, test0), (suite1, test1) = (name.split(".") for name in names)
    body = (f"\n\n{macro_of[suite0]}({suite0}, {test0}) {{\n  const int value = {got};\n  EXPECT_EQ(value * 2, {expected});\n}}\n\n"
            f"{macro_of[suite1]}({suite1}, {test1}) {{\n  FAIL() << \"{test1}\";\n}}\n")  # fmt: skip
    return ("" if text.endswith("\n") else "\n") + body, names


def cargo_planted(command: str) -> bool:
    """Whether `cargo test` runs canaries wherever it runs the graded tests: every `cargo test` of `command` without
    `--exact`, `--skip` or `--ignored`, and either `--no-fail-fast` or a single target."""
    words = words_of(command)
    runs = [i for i, word in enumerate(words) if word == "cargo" and _is_cargo_test(words[i + 1 : i + 3])]
    if not runs:
        return False
    for start in runs:
        end = next((j for j in range(start, len(words)) if words[j] in ("&&", ";", "|", "||")), len(words))
        run = [word.split("=", 1)[0] for word in words[start:end]]
        if {"--exact", "--skip", "--ignored"} & set(run):
            return False
        targets = sum(run.count(flag) for flag in _CARGO_ONE_TARGET) + sum(run.count(flag) for flag in _CARGO_EVERY_TARGET)
        if "--no-fail-fast" not in run and not (targets == 1 and not set(_CARGO_EVERY_TARGET) & set(run)):
            return False
    return True


def _is_cargo_test(after_cargo: list[str]) -> bool:
    """`cargo test`, or `cargo +toolchain test`."""
    return after_cargo[:1] == ["test"] or (len(after_cargo) == 2 and after_cargo[0].startswith("+") and after_cargo[1] == "test")


def rust_module(path: str) -> str | None:
    """The module path (`a::b::`) a Rust source file is within its crate: `src/lib.rs`, `src/main.rs`, `tests/x.rs`,
    `tests/x/main.rs` and `src/bin/x.rs` are roots (""); `src/a.rs` is `a::`, `src/a/b.rs` and `src/a/b/mod.rs` are `a::b::`; None: not
    under a package's `src/` or `tests/`."""
    parts = list(PurePosixPath(path).parts)
    anchor = next((i for i, part in enumerate(parts[:-1]) if part in ("src", "tests")), None)
    if anchor is None or not path.endswith(".rs"):
        return None
    inside = parts[anchor + 1 :]
    if inside[-1] in ("lib.rs", "main.rs") or (parts[anchor] == "tests" and len(inside) == 1) or (parts[anchor] == "src" and inside[:1] == ["bin"] and len(inside) == 2):
        return ""
    modules = inside[:-1] if inside[-1] == "mod.rs" else [*inside[:-1], inside[-1][:-3]]
    return "".join(f"{module}::" for module in modules)


def cargo_files(touched: list[str]) -> list[str]:
    return [path for path in touched if rust_module(path) is not None]


def cargo_source(path: str, text: str, graded: list[str]) -> tuple[str, list[str]]:
    """Rust canaries for a source file (its path and text): beside a graded test that is a function at the file's top
    level (`fn` at column 0, a test attribute just above it), named as their paths are reported (`module::name`)."""
    module = rust_module(path)
    if module is None or _RUST_IMPORTS_TEST.search(text):
        return "", []
    lines = text.splitlines()
    top_level = {match.group(1) for match in re.finditer(r"^(?:pub(?:\([\w: ]+\))?\s+)?(?:async\s+)?fn\s+(\w+)", text, re.MULTILINE)}
    tests = {name for name in top_level if _is_test(lines, name)}
    bases = sorted(test for test in graded if test.startswith(module) and test[len(module) :] in tests and _SNAKE.fullmatch(test[len(module) :]))
    if not bases:
        return "", []
    words = sorted({word for name in tests for word in name.split("_") if _SNAKE.fullmatch(word) and len(word) > 2}) or ["value", "case"]
    names = _names(bases, words, lambda name: name[len(module) :] not in top_level, joiner="_")
    if len(names) < 2:
        return "", []
    expected, got = secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    first, second = (name[len(module) :] for name in names)
    body = (f"\n\n#[test]\nfn {first}() {{\n    assert_eq!({'x' * got!r}.len(), {expected});\n}}\n\n"
            f"#[test]\nfn {second}() {{\n    assert!(\"{second}\".parse::<u32>().is_ok(), \"{got}\");\n}}\n").replace("'", '"')  # fmt: skip
    return ("" if text.endswith("\n") else "\n") + body, names


def cargo_rewritten(path: str, text: str, graded: list[str]) -> tuple[str, list[str]]:
    """A Rust source file with canaries (`cargo_source`'s appended beside a top-level graded test; else two test
    functions inserted beside a graded test inside a module, `mod tests { ... }`), and their names; the text unchanged
    and no names where neither fits."""
    code, names = cargo_source(path, text, graded)
    return (text + code, names) if names else _cargo_inline(path, text, graded)


def _cargo_inline(path: str, text: str, graded: list[str]) -> tuple[str, list[str]]:
    """Canaries inserted just above a graded test function written inside a module of the file (indented, a test
    attribute among the lines above it), at its indentation, so they are in the same module: named as the graded test's
    path with its name replaced (`a::tests::parses_x` -> `a::tests::parses_x_value`), which every substring filter that
    selects the graded test selects. The function's name must be written once in the file, and its path (the file's
    module, the `mod`s around it) be a graded test's."""
    module = rust_module(path)
    if module is None or _RUST_IMPORTS_TEST.search(text):
        return text, []
    lines = text.split("\n")
    defined = collections.Counter(re.findall(r"\bfn\s+(\w+)", text))
    inline: dict[str, int] = {}  # a test function inside a module -> the line its attributes start on
    for i, line in enumerate(lines):
        found = _RUST_INLINE_FN.match(line)
        if found is None or defined[found.group(2)] != 1:
            continue
        start = i
        while start > 0 and lines[start - 1].strip().startswith(("#[", "///", "//")):
            start -= 1
        if any(_RUST_ATTRIBUTE.match(above.strip()) for above in lines[start:i]):
            inline[found.group(2)] = start
    paths = {name: f"{module}{''.join(f'{mod}::' for mod in mods)}{name}" for name, at in inline.items() if (mods := _enclosing_modules(lines, at))}
    bases = sorted(test for test in paths.values() if test in graded)
    if not bases:
        return text, []
    words = sorted({word for name in inline for word in name.split("_") if _SNAKE.fullmatch(word) and len(word) > 2}) or ["value", "case"]
    beside = secrets.choice(bases)
    names = _names([beside], words, lambda name: defined[name.rpartition("::")[2]] == 0, joiner="_")
    if len(names) < 2:
        return text, []
    start = inline[beside.rpartition("::")[2]]
    indent = re.match(r"[ \t]*", lines[start]).group(0)
    step = "\t" if indent.startswith("\t") else "    "
    expected, got = secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    first, second = (name.rpartition("::")[2] for name in names)
    block = [f"{indent}#[test]", f"{indent}fn {first}() {{", f'{indent}{step}assert_eq!("{"x" * got}".len(), {expected});', f"{indent}}}", "",
             f"{indent}#[test]", f"{indent}fn {second}() {{", f'{indent}{step}assert!("{second}".parse::<u32>().is_ok(), "{got}");', f"{indent}}}", ""]  # fmt: skip
    return "\n".join(lines[:start] + block + lines[start:]), names


def _enclosing_modules(lines: list[str], at: int) -> list[str]:
    """The modules a line is inside, outermost first, read from rustfmt's indentation: each enclosing block must open
    with `mod name {` ([] where one does not: an `impl`, a function, a macro)."""
    level, modules = len(lines[at]) - len(lines[at].lstrip()), []
    for line in reversed(lines[:at]):
        indent = len(line) - len(line.lstrip())
        if not line.strip() or indent >= level:
            continue
        opened = _RUST_MODULE.match(line)
        if opened is None:
            return []
        modules.insert(0, opened.group(1))
        level = indent
        if level == 0:
            return modules
    return []


def _is_test(lines: list[str], name: str) -> bool:
    """Whether the top-level function `name` carries a test attribute among the attribute lines just above it."""
    for i, line in enumerate(lines):
        if re.match(rf"(?:pub(?:\([\w: ]+\))?\s+)?(?:async\s+)?fn\s+{name}\b", line):
            j = i - 1
            while j >= 0 and lines[j].startswith(("#[", "///", "//")):
                if _RUST_ATTRIBUTE.match(lines[j]):
                    return True
                j -= 1
    return False


def ruby_unit_planted(command: str) -> bool:
    """Whether test-unit runs canaries beside the graded tests: a run by file, not stopped at the first failure
    (`--stop-on-failure`), nor filtered by test case (`-t`) or by a name the canaries cannot have (`-n name`, not a
    `/pattern/`)."""
    words = words_of(command)
    if "--stop-on-failure" in words or any(word == "-t" or word.startswith("--testcase") for word in words):
        return False
    return all(len(name) > 1 and name.startswith("/") and name.endswith("/") for name in _ruby_name_filters(words))


def _ruby_name_filters(words: list[str]) -> list[str]:
    """The values of test-unit's `-n` / `--name` options."""
    return [words[i + 1] for i, word in enumerate(words[:-1]) if word in ("-n", "--name")] + [word[len("--name=") :] for word in words if word.startswith("--name=")]


def ruby_unit_files(command: str, touched: list[str]) -> list[str]:
    """The test patch's Ruby files that `command` names by path."""
    named = set(words_of(command))
    return [path for path in touched if path.endswith(".rb") and (path in named or f"./{path}" in named)]


def ruby_unit_source(text: str, graded: list[str], command: str) -> tuple[str, list[str]]:
    """test-unit canaries for a Ruby test file: appended in its one top-level test class reopened, beside a graded test
    defined directly in it (`def test_x` or `test "x" do`, one level in), named as the parser reports them."""
    classes = _RUBY_CLASS.findall(text)
    if len(classes) != 1:
        return "", []
    indent, constant = classes[0]
    inner = indent + "  "
    defined = {match.group(1) for match in re.finditer(rf"^{inner}def (test\w*)", text, re.MULTILINE)}
    described = {match.group(2) for match in re.finditer(rf"^{inner}test\s*\(?\s*(['\"])((?:(?!\1)[^\\\n#])+)\1", text, re.MULTILINE)}
    patterns = [name[1:-1] for name in _ruby_name_filters(words_of(command))]

    def selects(name: str) -> bool:  # test-unit's -n /regexp/, against the method's name
        try:
            return all(re.search(pattern, name) for pattern in patterns)
        except re.error:
            return False

    style, bases = ("def", sorted(set(graded) & defined)) if set(graded) & defined else ("test", sorted(set(graded) & described))
    if not bases:
        return "", []
    tests = defined if style == "def" else described
    words = sorted({word.lower() for name in defined | described for word in _RUBY_WORD.findall(name)})
    words += [word for word in MORE_WORDS if word not in words] if len(words) < 10 else []  # enough names that fit

    def fits(name: str) -> bool:
        local = name if style == "def" else f"test: {name}"  # the method's name: test-unit's -n and its verbose line
        # test-unit pads `  <name>:` to a tab stop, with no tab at all when it ends on one near the line's end, and the
        # parser needs the space: no canary's line ends on a tab stop
        return name not in tests and selects(local) and (len(f"  {local}:") % 8) != 0

    names = _names(bases, words, fits, joiner="_" if style == "def" else " ")
    if len(names) < 2:
        return "", []
    expected, got = secrets.randbelow(80) + 20, secrets.randbelow(9) + 1
    checks = [f"assert_equal({expected}, {'x' * got!r}.length)", f"raise {_ruby_string(names[1])}"]
    opening = "def {}" if style == "def" else "test {} do"
    body = "".join(f"\n  {opening.format(name if style == 'def' else _ruby_string(name))}\n    {check}\n  end\n" for name, check in zip(names, checks))
    reopened = f"\nclass {_ruby_outer(text, indent)}{constant}{body}end\n"  # at the top level: the class's full constant path
    return ("" if text.endswith("\n") else "\n") + reopened, names


def rspec_planted(command: str) -> bool:
    """Whether RSpec runs every example of the files it is given and goes on past a failure."""
    return _RSPEC_STOPS.search(command) is None


def rspec_files(command: str, touched: list[str]) -> list[str]:
    """The test patch's spec files that `command` names by path (a path with a line or an id selects examples)."""
    named = set(words_of(command))
    return [path for path in touched if path.endswith("_spec.rb") and (path in named or f"./{path}" in named)]


def rspec_source(path: str, text: str, graded: list[str], command: str) -> tuple[str, list[str]]:
    """RSpec canaries for a spec file: a top-level group of two examples described as a graded one with words after it
    (a graded name is a description, or a description and ` - ./<file>[<id>]`: the file's, or any where the command
    runs this file alone); named by their descriptions."""
    own = re.compile(rf" - \./{re.escape(path)}\[[\d:]+\]$")
    described = _RSPEC_IT.findall(text)
    alone = [word for word in words_of(command) if word.endswith("_spec.rb")] in ([path], [f"./{path}"])
    bases = sorted({own.sub("", test) for test in graded if own.search(test) or (alone and " - ./" not in test) or test in {d for _, d in described}})
    if not bases:
        return "", []
    words = sorted({word.lower() for _, description in described for word in _RUBY_WORD.findall(description)})
    words += [word for word in MORE_WORDS if word not in words] if len(words) < 6 else []
    taken = {description for _, description in described}
    names = _names(bases, words, lambda name: name not in taken, joiner=" ")
    if len(names) < 2:
        return "", []
    expected, got = secrets.randbelow(80) + 20, secrets.randbelow(9) + 1
    group = PurePosixPath(path).name.removesuffix("_spec.rb").replace("_", " ")
    body = (f"\nRSpec.describe {_ruby_string(group)} do\n  it {_ruby_string(names[0])} do\n    expect({'x' * got!r}.length).to eq({expected})\n  end\n\n"
            f"  it {_ruby_string(names[1])} do\n    raise {_ruby_string(names[1])}\n  end\nend\n")  # fmt: skip
    return ("" if text.endswith("\n") else "\n") + body, names


def _ruby_string(text: str) -> str:
    """A Ruby double-quoted string of `text` (JSON's escapes, and `#` escaped: `#{`, `#$`, `#@` interpolate)."""
    return json.dumps(text).replace("#", "\\#")


def rspec_reports(test: str, name: str) -> bool:
    """Whether a parsed RSpec example is the canary described `name` (the command's jq may add ` - ./<file>[<id>]`)."""
    return test == name or (test.startswith(f"{name} - ./") and test.endswith("]"))


def _ruby_outer(text: str, indent: str) -> str:
    """The modules around an indented class, as a constant path prefix (`module Fluent` then `  class X` -> `Fluent::`)."""
    modules = re.findall(r"^( *)module\s+([\w:]+)", text, re.MULTILINE)
    return "".join(f"{name}::" for spaces, name in modules if len(spaces) < len(indent))


def javascript_planted(runner: str, command: str) -> bool:
    """jest, vitest and mocha (TAP) runs that do not stop at the first failing file (`--bail`) nor invert the filter;
    QUnit's (TAP) that pick no module (`-m`: a canary is a test of no module)."""
    if runner == "tap" and _QUNIT.search(command):
        return _QUNIT_MODULE_FILTER.search(command) is None
    if runner == "tap" and (re.search(r"\bmocha\b", command) is None or _MOCHA_INVERTS.search(command)):
        return False
    return _JS_STOPS.search(command) is None


def javascript_files(command: str, touched: list[str]) -> list[str]:
    """The test patch's JavaScript and TypeScript files that `command` names by path (the runner runs those)."""
    named = set(words_of(command))
    return [path for path in touched if path.endswith(_JS_SUFFIXES) and (path in named or f"./{path}" in named)]


def _javascript_selects(runner: str, command: str, title: str) -> bool:
    """Whether the command's name filter (jest and vitest `-t`, a case-insensitive pattern; mocha `--grep`, a pattern,
    `--fgrep`, a string; QUnit's `-f`) selects a top-level test of this title (its full name is the title; QUnit's is
    `: <title>`, no module). Each runner's own flags: mocha's `-t` is a timeout, jest's `-f` runs only failures, QUnit's
    `-f` is a filter."""
    words = words_of(command)
    for i, word in enumerate(words):
        flag, _, value = word.partition("=")
        if flag not in _JS_FILTERS[runner]:
            continue
        value = value or (words[i + 1] if i + 1 < len(words) else "")
        if runner == "qunit":
            if not _qunit_selects(value, f": {title}"):
                return False
            continue
        if flag in ("-f", "--fgrep"):
            if value not in title:
                return False
            continue
        try:
            if re.search(value, title, re.IGNORECASE if runner != "tap" else 0) is None:
                return False
        except re.error:
            return False
    return True


def _qunit_selects(value: str, full_name: str) -> bool:
    """QUnit's `--filter`: `!` negates; `/re/flags` a regular expression; else a case-insensitive substring."""
    negated = value.startswith("!")
    value = value[1:] if negated else value
    regex = _JS_REGEX.match(value)
    if regex is None:
        return (value.lower() in full_name.lower()) is not negated
    try:
        return (re.search(regex[1], full_name, re.IGNORECASE if "i" in regex[2] else 0) is not None) is not negated
    except re.error:
        return False


def javascript_source(runner: str, path: str, text: str, graded: list[str], command: str) -> tuple[str, list[str]]:
    """jest, vitest, mocha or QUnit canaries for a test file (its path and text) that defines graded tests, as reported:
    jest by title, vitest by `<file> > <title>`, mocha's and QUnit's TAP by the full title (describe titles or modules,
    then the test's). A QUnit file gets none where a module is not a callback's (`QUnit.module('x');`: the tests after
    it, an appended one too, are that module's)."""
    if runner == "tap" and _QUNIT.search(command):
        runner = "qunit"
        if len(_QUNIT_MODULES.findall(text)) != len(_QUNIT_SCOPED_MODULES.findall(text)):
            return "", []
    calls = (_QUNIT_TEST if runner == "qunit" else _JS_TEST).findall(text)
    if not calls:
        return "", []
    prefix = f"{path} > " if runner == "vitest" else ""
    titles = {title for _, _, title in calls}

    def graded_title(title: str) -> bool:  # a graded test's own title, nested in describe blocks or not
        if runner == "vitest":
            return any(test.startswith(prefix) and (test == prefix + title or test.endswith(f" > {title}")) for test in graded)
        return title in graded or (runner in ("tap", "qunit") and any(test.endswith(f" {title}") for test in graded))

    bases = sorted(title for title in titles if graded_title(title))
    if not bases:
        return "", []
    words = sorted({word for title in titles for word in _JS_WORD.findall(title.lower())}) or ["value", "case"]
    taken = {prefix + title for title in titles} | set(graded)
    names = _names(bases, words, lambda title: prefix + title not in taken and _javascript_selects(runner, command, title), joiner=" ")
    if len(names) < 2:
        return "", []
    check = javascript_check(text, "toBe" if runner in ("jest", "vitest") else None)
    function, parameters = calls[0][0], "(assert)" if runner == "qunit" else "()"  # QUnit's assertions are its callback's
    body = (f"\n\n{function}({json.dumps(names[0])}, {parameters} => {{\n  {check}\n}});\n\n"
            f"{function}({json.dumps(names[1])}, {parameters} => {{\n  throw new Error({json.dumps(names[1].split()[-1])});\n}});\n")  # fmt: skip
    return ("" if text.endswith("\n") else "\n") + body, [prefix + name for name in names]


def javascript_check(text: str, matcher: str | None) -> str:
    """A failing assertion in the test file's own style: its `expect` with `matcher` (jest's `toBe`, chai's `to.equal`;
    None: the file's `expect` is not one of those), else its `assert.strictEqual` or `assert.equal` (node's, QUnit's),
    else a throw."""
    expected, got = secrets.randbelow(90) + 10, secrets.randbelow(9) + 1
    value = f"{'x' * got!r}.length"
    if matcher and re.search(r"\bexpect\(", text):
        return f"expect({value}).{matcher}({expected});"
    for assertion in ("assert.strictEqual", "assert.equal"):
        if re.search(rf"\b{re.escape(assertion)}\(", text):
            return f"{assertion}({value}, {expected});"
    return f"throw new Error('length ' + {value});"


def _names(bases: list[str], words: list[str], fits, joiner: str) -> list[str]:
    """Two names, each a graded test's with one or two of the file's words after it (words it does not hold yet)."""
    names: list[str] = []
    for _ in range(_ATTEMPTS):
        base = secrets.choice(bases)
        fresh = [word for word in words if word.lower() not in base.lower()]
        fresh = fresh if len(fresh) >= 2 else words
        name = base + joiner + joiner.join(secrets.SystemRandom().sample(fresh, min(len(fresh), 1 + secrets.randbelow(2))))
        if fits(name) and name not in names:
            names.append(name)
        if len(names) == 2:
            break
    return names
