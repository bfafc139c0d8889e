"""Wrong variants of a gold patch: what a task's tests must tell apart from the fix.

A task whose tests accept a wrong fix teaches a policy that fix (partial fixes, special cases, shortcuts). `validate
--strength` grades variants of the gold patch through the reward and counts those that still resolve (survivors).
The variants, each a git diff made from the gold's text (no sandbox needed to make them):

- **hunk removed**: each hunk of the gold left out (a gold of two or more hunks);
- **line removed**: each added line left out (a gold of one hunk);
- mutants of an added line, Python's read through its AST (the line parsed on its own, so its formatting is kept and
  only the node's text changes), other languages' by the same operators on the line's text:
  **comparison flipped** (`<` and `<=`, `>` and `>=`, `==` and `!=`, `is` and `is not`, `in` and `not in`),
  **condition negated** (an `if`, `while` or conditional expression's test), **and/or swapped** (`&&`/`||`),
  **integer moved by one**, **return value replaced** (Python: `None`), **statement deleted** (Python: `pass`).

A variant that changes only whitespace or comments is not made; one that does not apply is skipped when graded. A
variant is marked **suspected equivalent** when what it changes cannot change what the code does in all likelihood: a
docstring or other bare string, a `pass`, a log or print call, an `assert` (tests run with assertions on, but a removed
assert only removes a check). A survivor so marked says little about the tests.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field

from uni_agent_gym.diffs import file_diffs

OPERATORS = ("hunk removed", "line removed", "comparison flipped", "condition negated", "and/or swapped", "integer moved by one",
             "return value replaced", "statement deleted")  # fmt: skip
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_FLIPPED = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"), ast.Eq: ("==", "!="),
            ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"),
            ast.NotIn: ("not in", "in")}  # fmt: skip
_TEXT_FLIPS = [("<=", "<"), (">=", ">"), ("==", "!="), ("!=", "=="), ("<", "<="), (">", ">=")]
_OUTPUT_CALL = re.compile(r"^\s*(?:print\s*\(|log(?:ger|ging)?\.\w+\(|warnings\.warn\(|(?:f|s|v)?printf\s*\(|fmt\.Print|"
                          r"System\.(?:out|err)\.print|console\.\w+\(|puts\s|echo\s|LOG\w*\()")  # fmt: skip
_COMMENT = {"python": re.compile(r"#.*$"), "other": re.compile(r"//.*$|/\*.*?\*/|#.*$")}


@dataclass(frozen=True)
class Variant:
    """One wrong variant: its diff, the operator that made it, and where."""

    operator: str
    patch: str
    where: str  # `path:line` of the change in the gold's new file (for a hunk: its first line)
    change: str  # what changed, in a line (`- x < y` / `+ x <= y`)
    equivalent: str | None = None  # why it is suspected equivalent to the gold, or None


@dataclass
class _Hunk:
    old_start: int
    rest: str  # what follows the second @@ (a function's name)
    lines: list[str]  # each with its sign and its line ending; "\ No newline" lines kept after theirs


@dataclass
class _File:
    path: str
    header: list[str]
    hunks: list[_Hunk] = field(default_factory=list)
    text_only: bool = True  # no binary section: its hunks can be changed


def variants(gold: str, language: str = "python") -> list[Variant]:
    """Every variant of `gold` (a git diff), in the order of the patch; none of a patch that is only binary."""
    files = _parse(gold)
    hunks = [(f, h) for f, file in enumerate(files) if file.text_only for h in range(len(file.hunks))]
    found: list[Variant] = []
    if len(hunks) >= 2:
        for f, h in hunks:
            first = _first_change(files[f], h)
            found.append(Variant("hunk removed", _render(files, drop=(f, h)), first[0], f"the hunk at {first[0]}",
                                 _equivalent_lines(files[f].hunks[h], language)))  # fmt: skip
    for f, h in hunks:
        file, hunk = files[f], files[f].hunks[h]
        inside = _inside_brackets(hunk) if language == "python" else {}
        for index, line in enumerate(hunk.lines):
            if not line.startswith("+"):
                continue
            text = line[1:].rstrip("\r\n")
            where = f"{file.path}:{_new_line_number(file, h, index)}"
            if len(hunks) == 1 and _changes(hunk) > 1:
                found.append(Variant("line removed", _render(files, replace=(f, h, index, None)), where, f"- {text.strip()}",
                                     _equivalent(text, language)))  # fmt: skip
            for operator, mutated in _mutants(text, language):
                if _normalised(mutated, language) == _normalised(text, language):
                    continue  # whitespace or comments only
                if operator == "statement deleted" and inside.get(index):
                    continue  # a line of a longer expression (an argument, an item): no statement of its own
                patch = _render(files, replace=(f, h, index, mutated + line[len(line.rstrip("\r\n")) :]))
                found.append(Variant(operator, patch, where, f"- {text.strip()}  + {mutated.strip()}",
                                     _equivalent(text, language) if operator == "statement deleted" else None))  # fmt: skip
    unique: dict[str, Variant] = {}
    for variant in found:
        unique.setdefault(variant.patch, variant)  # a line removed and a statement deleted can be one patch
    return [variant for variant in unique.values() if variant.patch.strip() and variant.patch != gold]


def pick(found: list[Variant], limit: int) -> list[Variant]:
    """At most `limit` variants, taken round-robin over the operators in `OPERATORS`' order (each operator's in the
    patch's order): a small budget still tries every kind."""
    by_operator = {operator: [variant for variant in found if variant.operator == operator] for operator in OPERATORS}
    picked: list[Variant] = []
    while len(picked) < limit and any(by_operator.values()):
        for operator in OPERATORS:
            if by_operator[operator] and len(picked) < limit:
                picked.append(by_operator[operator].pop(0))
    return picked


def _parse(patch: str) -> list[_File]:
    files = []
    for section in file_diffs(patch):
        lines = section.text.splitlines(keepends=True)
        file = _File(section.path, [])
        for line in lines:
            body = line.rstrip("\r\n")
            match = _HUNK.match(body)
            if match:
                file.hunks.append(_Hunk(int(match.group(1)), match.group(5), []))
            elif file.hunks:
                file.hunks[-1].lines.append(line)
            else:
                file.header.append(line)
                if body.startswith(("GIT binary patch", "Binary files ")):
                    file.text_only = False
        files.append(file)
    return files


def _render(files: list[_File], drop: tuple[int, int] | None = None, replace: tuple[int, int, int, str | None] | None = None) -> str:
    """The patch with hunk `drop` left out, or line `replace` = (file, hunk, index, new text or None to leave it out)."""
    out: list[str] = []
    for f, file in enumerate(files):
        kept = []
        for h, hunk in enumerate(file.hunks):
            if drop == (f, h):
                continue
            lines = list(hunk.lines)
            if replace is not None and replace[:2] == (f, h):
                index, new = replace[2], replace[3]
                lines[index : index + 1] = [] if new is None else ["+" + new]
                if new is None and index < len(lines) and lines[index].startswith("\\"):
                    lines.pop(index)  # its "\ No newline" marker goes with it
            kept.append(_Hunk(hunk.old_start, hunk.rest, lines))
        if not kept or all(_changes(hunk) == 0 for hunk in kept):
            continue  # nothing of this file is changed any more
        out += file.header
        shift = 0
        for hunk in kept:
            old = sum(1 for line in hunk.lines if line[:1] in (" ", "-") or line in ("\n", "\r\n"))
            new = sum(1 for line in hunk.lines if line[:1] in (" ", "+") or line in ("\n", "\r\n"))
            new_start = hunk.old_start + shift if hunk.old_start else (1 if new else 0)
            if hunk.old_start and not new:
                new_start -= 1
            out.append(f"@@ -{hunk.old_start},{old} +{new_start},{new} @@{hunk.rest}\n")
            out += hunk.lines
            shift += new - old
    return "".join(out)


def _changes(hunk: _Hunk) -> int:
    return sum(1 for line in hunk.lines if line[:1] in ("+", "-"))


def _first_change(file: _File, h: int) -> tuple[str, str]:
    hunk = file.hunks[h]
    index = next((i for i, line in enumerate(hunk.lines) if line[:1] in ("+", "-")), 0)
    return f"{file.path}:{_new_line_number(file, h, index)}", hunk.lines[index] if hunk.lines else ""


def _new_line_number(file: _File, h: int, index: int) -> int:
    """The line number in the gold's new file of line `index` of hunk `h`."""
    shift = sum(sum(1 for line in hunk.lines if line[:1] == "+") - sum(1 for line in hunk.lines if line[:1] == "-") for hunk in file.hunks[:h])
    number = max(file.hunks[h].old_start, 1) + shift
    for line in file.hunks[h].lines[:index]:
        if line[:1] in (" ", "+") or line in ("\n", "\r\n"):
            number += 1
    return number


def _normalised(text: str, language: str) -> str:
    return re.sub(r"\s+", "", _COMMENT["python" if language == "python" else "other"].sub("", text))


def _equivalent(text: str, language: str) -> str | None:
    """Why leaving this line out (or making it `pass`) is suspected equivalent to the gold, or None."""
    stripped = text.strip()
    if not _normalised(text, language):
        return "a blank or comment line"
    if language == "python":
        try:
            statement = ast.parse(stripped).body
        except SyntaxError:
            statement = []
        if len(statement) == 1:
            node = statement[0]
            if isinstance(node, ast.Pass):
                return "a pass"
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return "a docstring or bare string"
            if isinstance(node, ast.Assert):
                return "an assert"
    if _OUTPUT_CALL.match(stripped):
        return "a log or print call"
    return None


def _equivalent_lines(hunk: _Hunk, language: str) -> str | None:
    """A hunk whose every change is suspected equivalent (its reason, when they share one)."""
    reasons = {_equivalent(line[1:].rstrip("\r\n"), language) for line in hunk.lines if line[:1] in ("+", "-")}
    return reasons.pop() if len(reasons) == 1 and None not in reasons else None


def _mutants(text: str, language: str) -> Iterator[tuple[str, str]]:
    if language == "python":
        yield from _python_mutants(text)
    else:
        yield from _text_mutants(text)


def _python_mutants(line: str) -> Iterator[tuple[str, str]]:
    """Mutants of one added Python line through its AST: the line parsed alone (a block opener given a `pass` body,
    `elif` read as `if`), each node's text replaced at its offsets, the rest of the line as it was."""
    indent = line[: len(line) - len(line.lstrip())]
    body = line[len(indent) :]
    source = body.rstrip()
    if not source or source.startswith("#"):
        return
    parsed_source = re.sub(r"^elif\b", "if  ", source)
    opener = _block_opener(parsed_source)
    try:
        tree = ast.parse(parsed_source + (" pass" if opener else ""))
    except SyntaxError:
        return
    if len(tree.body) != 1:
        return
    statement = tree.body[0]

    def replaced(node: ast.AST, new: str, start: int | None = None, end: int | None = None) -> str:
        start = node.col_offset if start is None else start
        end = node.end_col_offset if end is None else end
        return indent + source[:start] + new + source[end:]

    for node in ast.walk(statement):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                old, new = _FLIPPED[type(op)]
                gap_start, gap_end = operands[i].end_col_offset, operands[i + 1].col_offset
                if operands[i].end_lineno != 1 or operands[i + 1].lineno != 1:
                    continue
                gap = source[gap_start:gap_end]  # the operator, between its operands (spaces, brackets, comments)
                word = r"\s+".join(old.split())
                found = re.search(rf"\b{word}\b" if old[0].isalpha() else rf"(?<![<>=!]){re.escape(old)}(?![<>=])", _strip_comment(gap))
                if found is None:
                    continue
                yield "comparison flipped", indent + source[: gap_start + found.start()] + new + source[gap_start + found.end() :]
        elif isinstance(node, ast.BoolOp):
            word, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            start, end = node.col_offset, node.end_col_offset
            if node.end_lineno == 1:
                yield "and/or swapped", indent + source[:start] + _swap_words(source[start:end], word, other, node) + source[end:]
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.end_lineno == 1:
            literal = source[node.col_offset : node.end_col_offset]
            if literal.isdigit():
                yield "integer moved by one", replaced(node, str(node.value + 1))
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) and node.test.end_lineno == 1:
            test = source[node.test.col_offset : node.test.end_col_offset]
            yield "condition negated", replaced(node.test, f"not ({test})")
    if isinstance(statement, ast.Return) and statement.value is not None and statement.end_lineno == 1:
        if not (isinstance(statement.value, ast.Constant) and statement.value.value is None):
            yield "return value replaced", replaced(statement.value, "None")
    if not opener and not isinstance(statement, ast.Pass):
        yield "statement deleted", indent + "pass"


def _inside_brackets(hunk: _Hunk) -> dict[int, bool]:
    """For each line of a hunk's new side: whether it starts inside brackets opened on an earlier line of the hunk
    (strings and comments skipped), so it continues an expression rather than starting a statement."""
    depth, quote, found = 0, None, {}
    for index, line in enumerate(hunk.lines):
        if line[:1] == "-":
            continue
        found[index] = depth > 0
        text, i = line[1:], 0
        while i < len(text):
            if quote:
                if text.startswith("\\", i):
                    i += 2
                    continue
                if text.startswith(quote, i):
                    i, quote = i + len(quote), None
                    continue
            elif text[i] == "#":
                break
            elif text.startswith(('"""', "'''"), i):
                quote = text[i : i + 3]
                i += 3
                continue
            elif text[i] in "\"'":
                quote = text[i]
            elif text[i] in "([{":
                depth += 1
            elif text[i] in ")]}":
                depth = max(0, depth - 1)
            i += 1
        if quote in ('"', "'"):
            quote = None  # a one-line string does not run on
    return found


def _strip_comment(text: str) -> str:
    """`text` with a `#` comment blanked to spaces (offsets kept): an operator is looked for in code only."""
    at = text.find("#")
    return text if at < 0 else text[:at] + " " * (len(text) - at)


def _block_opener(source: str) -> bool:
    """Whether a line opens a block (ends with `:` outside strings and comments): it is parsed with a `pass` body."""
    try:
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(source).readline)
                  if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER)]  # fmt: skip
    except (tokenize.TokenError, IndentationError):
        return False
    return bool(tokens) and tokens[-1].string == ":"


def _swap_words(text: str, word: str, other: str, node: ast.BoolOp) -> str:
    """The `and`/`or` joining a BoolOp's own operands swapped (not those of operands nested in it)."""
    pieces, cursor = [], node.col_offset
    for left, right in zip(node.values, node.values[1:]):
        pieces.append(text[cursor - node.col_offset : left.end_col_offset - node.col_offset])
        gap = text[left.end_col_offset - node.col_offset : right.col_offset - node.col_offset]
        pieces.append(re.sub(rf"\b{word}\b", other, gap, count=1))
        cursor = right.col_offset
    pieces.append(text[cursor - node.col_offset :])
    return "".join(pieces)


def _text_mutants(line: str) -> Iterator[tuple[str, str]]:
    """The same operators on the text of a line in another language (C, Go, Java, JavaScript, ...), outside its
    strings and comments: each occurrence its own mutant."""
    code = _code_mask(line)
    for old, new in _TEXT_FLIPS:
        for match in re.finditer(rf"(?<![<>=!&|+\-*/%^]){re.escape(old)}(?![<>=&|])", line):
            if code[match.start()] and not _generic_bracket(line, match.start(), old):
                yield "comparison flipped", line[: match.start()] + new + line[match.end() :]
    for match in re.finditer(r"&&|\|\|", line):
        if code[match.start()]:
            yield "and/or swapped", line[: match.start()] + ("||" if match.group() == "&&" else "&&") + line[match.end() :]
    condition = re.match(r"^(\s*(?:\}\s*else\s+)?(?:if|while)\s*)\((.*)\)(\s*\{?\s*)$", line)
    if condition:
        yield "condition negated", f"{condition.group(1)}(!({condition.group(2)})){condition.group(3)}"
    elif braceless := re.match(r"^(\s*(?:\}\s*else\s+)?(?:if|for)\s+)([^;{]+?)(\s*\{\s*)$", line):  # Go: `if cond {`
        yield "condition negated", f"{braceless.group(1)}!({braceless.group(2)}){braceless.group(3)}"
    for match in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", line):
        if code[match.start()]:
            yield "integer moved by one", line[: match.start()] + str(int(match.group(1)) + 1) + line[match.end() :]


def _code_mask(line: str) -> list[bool]:
    """For each character: whether it is code (not in a string, a character literal or a comment)."""
    mask, quote, i = [True] * len(line), None, 0
    while i < len(line):
        char = line[i]
        if quote:
            mask[i] = False
            if char == "\\":
                if i + 1 < len(line):
                    mask[i + 1] = False
                i += 2
                continue
            if char == quote:
                quote = None
        elif char in "\"'`":
            quote, mask[i] = char, False
        elif line.startswith("//", i) or line.startswith("#", i) and not line[:i].strip():
            mask[i:] = [False] * (len(line) - i)
            break
        i += 1
    return mask


def _generic_bracket(line: str, at: int, operator: str) -> bool:
    """Whether a `<` or `>` is a generic's or an include's bracket (`List<String>`, `#include <x.h>`), not a comparison."""
    if operator not in ("<", ">"):
        return False
    if line.lstrip().startswith("#include"):
        return True
    before, after = line[:at], line[at + 1 :]
    if operator == "<":
        return bool(re.search(r"\b[A-Z]\w*\s*$", before)) and bool(re.match(r"\s*[\w?.,\s<>\[\]]*>", after))
    return bool(re.search(r"<\s*[\w?.,\s\[\]]*$", before))
