"""Canaries for PHPUnit: test methods that must fail, written into a graded test class.

SWE-bench Multilingual's PHP rows run one test file (`vendor/bin/phpunit --testdox --colors=never tests/XTest.php`),
read by `parse_log_phpunit`, which names a test `<suite> > <testdox sentence>` (`Round > Floor year` for `RoundTest::
testFloorYear`). A PHP class cannot be reopened, so the canaries are methods inserted before the closing brace of the
file's one class, not appended to the file: `test` + words of the file's own test methods (`testYearFloorValue`), the
first asserting through the class's own `$this->assertSame`, the second throwing. Their names are reported as PHPUnit's
testdox writes them (the words split at capitals, lower case after the first: `Year floor value`), under the suite of
the graded tests of that file.

Planted only in a test-patch file the command names by path (the runner runs that one), whose graded tests' suite is
known, and where no option keeps a canary from running or its failure from being reported beside the graded tests:
`--filter`, `--group`, `--testsuite`, `--stop-on-*`. A file with more than one class-like declaration, an abstract
class, or code after its class at the top level gets none (its last brace may not be the class's).
"""

from __future__ import annotations

import re
import secrets
import shlex

_CLASS = re.compile(r"^[ \t]*((?:(?:final|abstract|readonly)\s+)*)class\s+\w+", re.MULTILINE)
_OTHER_DECLARATIONS = re.compile(r"^[ \t]*(?:(?:final|abstract|readonly)\s+)*(?:trait|interface|enum)\s+\w+|^function\s", re.MULTILINE)
_TEST_METHOD = re.compile(r"\bfunction\s+(test\w+)\s*\(", re.IGNORECASE)
_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_STOPS = re.compile(r"(?:^|\s)(?:--filter|--group|--testsuite|--stop-on-[a-z]+)(?=[\s=]|$)")
_DATA_SET = re.compile(r" with data set .*$")
_ATTEMPTS = 20


def planted(command: str) -> bool:
    """Whether PHPUnit's testdox run reports canaries beside the graded tests: no filter picks the tests, none stops
    at the first failure."""
    return "--testdox" in command and _STOPS.search(command) is None


def files(command: str, touched: list[str]) -> list[str]:
    """The test patch's PHP files that `command` names by path."""
    try:
        named = set(shlex.split(command))
    except ValueError:
        named = set(command.split())
    return [path for path in touched if path.endswith(".php") and (path in named or f"./{path}" in named)]


def testdox(method: str) -> str:
    """A test method's name as PHPUnit's testdox writes it (`testFloorYear` -> `Floor year`; `test_floor_year` ->
    `Floor year`), for names of letters (the canaries' own)."""
    name = method[5:] if method.startswith("test_") else method[4:] if method.startswith("test") else method
    name = name[:1].upper() + name[1:]
    if "_" in name:
        return name.replace("_", " ").strip()
    return name[:1] + re.sub(r"[A-Z]", lambda capital: " " + capital.group(0).lower(), name[1:])


def source(text: str, graded: list[str]) -> tuple[str, list[str]]:
    """The test file's text with two canary methods inserted into its class, and their names as reported; the text
    unchanged and no names where the file does not allow them."""
    classes = _CLASS.findall(text)
    body = text.rstrip()
    if len(classes) != 1 or "abstract" in classes[0] or _OTHER_DECLARATIONS.search(text) or not body.endswith("\n}"):
        return text, []
    methods = {method.lower(): method for method in _TEST_METHOD.findall(text)}
    sentences = {testdox(method) for method in methods.values()}
    suites = {test.split(" > ", 1)[0] for test in graded if " > " in test and _DATA_SET.sub("", test.split(" > ", 1)[1]) in sentences}
    if len(suites) != 1:
        return text, []
    suite = suites.pop()
    words = sorted({word.title() for method in methods.values() for word in _WORD.findall(method[4:])})
    words += [word for word in ("Value", "Result", "Input", "Default") if word not in words] if len(words) < 4 else []
    names: list[str] = []
    for _ in range(_ATTEMPTS):
        name = "test" + "".join(secrets.SystemRandom().sample(words, 2 + secrets.randbelow(2)))
        if name.lower() not in methods and name not in names:
            names.append(name)
        if len(names) == 2:
            break
    if len(names) < 2:
        return text, []
    got, expected = secrets.randbelow(9) + 1, secrets.randbelow(80) + 20
    inserted = (f"\n\n    public function {names[0]}()\n    {{\n        $this->assertSame({expected}, strlen('{'x' * got}'));\n    }}\n\n"
                f"    public function {names[1]}()\n    {{\n        throw new \\RuntimeException('{testdox(names[1])}');\n    }}\n")  # fmt: skip
    return body[:-1].rstrip() + inserted + "}\n", [f"{suite} > {testdox(name)}" for name in names]
