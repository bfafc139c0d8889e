"""The wrong variants of a gold patch (`validation/variants.py`): each a git diff that real git applies to the base,
each operator's change where it should be and nowhere else, and the variants that say nothing left out or marked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from uni_agent_gym.validation.variants import OPERATORS, pick, variants

BASE = {
    "calc.py": "def clamp(value, low, high):\n    return value\n\n\ndef between(x, low, high):\n    return False\n\n\n"
               "def label(x):\n    return 'x'\n",
    "util.c": "int sign(int x) {\n    return 0;\n}\n",
}  # fmt: skip
GOLD = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,4 +1,8 @@
 def clamp(value, low, high):
+    if value < low:
+        return low
+    if value > high and high is not None:
+        return high
     return value
 
 
@@ -7,4 +11,5 @@ def between(x, low, high):
 
 
 def label(x):
-    return 'x'
+    \"\"\"The label of x.\"\"\"
+    return 'x' + str(x + 1)
"""
C_GOLD = """\
diff --git a/util.c b/util.c
--- a/util.c
+++ b/util.c
@@ -1,3 +1,5 @@
 int sign(int x) {
-    return 0;
+    if (x > 0 && x != 7) return 1; // "x < 2" in a comment
+    if (x < 0) { printf("<0"); return -1; }
+    return 0;
 }
"""


@pytest.fixture
def base(tmp_path: Path) -> Path:
    for name, text in BASE.items():
        (tmp_path / name).write_text(text)
    subprocess.run("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base", shell=True, cwd=tmp_path, check=True)
    return tmp_path


def applies(repo: Path, patch: str) -> bool:
    return subprocess.run(["git", "apply", "--check", "-"], input=patch, text=True, cwd=repo, capture_output=True).returncode == 0


def changes(patch: str) -> list[str]:
    return [line for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_every_variant_of_a_python_gold_applies_and_changes_one_thing(base):
    assert applies(base, GOLD)
    found = variants(GOLD)
    assert all(applies(base, variant.patch) for variant in found), [v.change for v in found if not applies(base, v.patch)]
    by_change = {(variant.operator, variant.change) for variant in found}
    assert ("comparison flipped", "- if value < low:  + if value <= low:") in by_change
    assert ("comparison flipped", "- if value > high and high is not None:  + if value > high and high is None:") in by_change
    assert ("and/or swapped", "- if value > high and high is not None:  + if value > high or high is not None:") in by_change
    assert ("condition negated", "- if value < low:  + if not (value < low):") in by_change
    assert ("return value replaced", "- return low  + return None") in by_change
    assert ("integer moved by one", "- return 'x' + str(x + 1)  + return 'x' + str(x + 2)") in by_change
    assert ("statement deleted", "- return high  + pass") in by_change
    hunks = [variant for variant in found if variant.operator == "hunk removed"]
    assert [variant.where for variant in hunks] == ["calc.py:2", "calc.py:14"]  # two hunks: each left out, no line removals
    assert not [variant for variant in found if variant.operator == "line removed"]
    docstring = next(variant for variant in found if variant.change.startswith('- """The label'))
    assert docstring.operator == "statement deleted" and docstring.equivalent == "a docstring or bare string"
    assert len({variant.patch for variant in found}) == len(found) and GOLD not in {variant.patch for variant in found}


def test_a_one_hunk_gold_loses_each_added_line(base):
    one_hunk = GOLD.split("@@ -7,4")[0]
    found = variants(one_hunk)
    removed = [variant for variant in found if variant.operator == "line removed"]
    assert [variant.change for variant in removed] == [f"- {line[1:].strip()}" for line in changes(one_hunk) if line.startswith("+")]
    assert all(applies(base, variant.patch) for variant in found)
    single = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,3 @@\n def clamp(value, low, high):\n+    low = 0\n     return value\n"
    assert [variant.operator for variant in variants(single)] == ["integer moved by one", "statement deleted"]  # none leaves it out: that is no patch


def test_a_line_inside_a_longer_expression_is_not_deleted_as_a_statement():
    """`exc_info, type(obj).__name__, id(obj)` alone parses as a statement; in its call it is the arguments."""
    gold = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,4 @@\n return \"<{} {}>\".format(\n"
            "-    obj.__class__.__name__, id(obj)\n+    type(obj).__name__, id(obj)\n )\n")  # fmt: skip
    assert "statement deleted" not in {variant.operator for variant in variants(gold)}


def test_other_languages_take_the_operators_on_the_lines_text_outside_strings_and_comments(base):
    found = variants(C_GOLD, "c")
    assert all(applies(base, variant.patch) for variant in found)
    mutated = {variant.change.split("  + ")[1] for variant in found if "  + " in variant.change}
    assert 'if (x >= 0 && x != 7) return 1; // "x < 2" in a comment' in mutated
    assert 'if (x > 0 || x != 7) return 1; // "x < 2" in a comment' in mutated
    assert 'if (x > 0 && x == 7) return 1; // "x < 2" in a comment' in mutated
    assert 'if (x > 0 && x != 8) return 1; // "x < 2" in a comment' in mutated
    assert 'if (!(x < 0)) { printf("<0"); return -1; }' not in mutated  # not a whole-line `if (...)`: no negation there
    assert not any('"x <= 2"' in line or '"<=0"' in line or "x < 3" in line for line in mutated)  # strings and comments kept
    go = ("diff --git a/t.go b/t.go\n--- a/t.go\n+++ b/t.go\n@@ -1,2 +1,3 @@\n func f(path string) bool {\n"
          "+\tif path == \"/\" && n > 0 {\n \treturn false\n")  # fmt: skip
    assert 'if !(path == "/" && n > 0) {' in {v.change.split("  + ")[1] for v in variants(go, "go") if v.operator == "condition negated"}
    java = ("diff --git a/A.java b/A.java\n--- a/A.java\n+++ b/A.java\n@@ -1,1 +1,2 @@\n class A {\n"
            "+    List<String> names = new ArrayList<>();\n")  # fmt: skip
    assert not [variant for variant in variants(java, "java") if variant.operator == "comparison flipped"]  # generics are no comparison


def test_pick_takes_every_operator_before_a_second_of_any():
    found = variants(GOLD)
    picked = pick(found, 5)
    assert len(picked) == 5 and len({variant.operator for variant in picked}) == 5
    assert [variant.operator for variant in picked] == [operator for operator in OPERATORS if operator in {v.operator for v in picked}]
    assert pick(found, 1000) and len(pick(found, 1000)) == len(found)


SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"


@pytest.mark.skipif(not (SHARED / "derived.jsonl").exists(), reason="../shared/swebench is not beside the checkout")
def test_every_fixture_gold_has_variants():
    rows = [json.loads(line) for line in (SHARED / "derived.jsonl").read_text().splitlines() if line.strip()]
    counts = {row["instance_id"]: len(variants(row["patch"])) for row in rows}
    # pytest-6116's gold adds one line (`"--co",`) and changes nothing else: leaving it out is no patch, and no operator reads a string
    assert [name for name, count in counts.items() if not count] == ["pytest-dev__pytest-6116"], counts
