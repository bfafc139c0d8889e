"""The files a diff touches (`uni_agent_gym.diffs`), on diffs git itself writes: the grader restores runner files,
drops protected ones and resets test files by these paths, so a name git quotes or writes with a space must
come back as the very file."""

from __future__ import annotations

import os
import subprocess

import pytest

from uni_agent_gym.diffs import attribute_pattern, file_diffs, patch_files, unquote
from uni_agent_gym.rewards.patches import drop_files

# name -> bytes on disk; each must come back from git's own diff as itself
AWKWARD = {
    "plain": b"pkg/mod.py",
    "a space": b"my dir/conf test.py",
    "a newline": b"new\nline.txt",
    "quotes": b"it's \"quoted\".txt",
    "a leading dash": b"-rf.txt",
    "other scripts": "日本語/é.py".encode(),
    "bytes that are not UTF-8": b"bad\x01\xff.py",
    "a backslash and a tab": b"back\\slash\ttab.txt",
    "glob characters": b"star*[x]?.txt",
    "looks like a header": b"a b/c b/d",
}


def git(repo, *arguments: str, quote_path: bool = True) -> bytes:
    config = ["-c", f"core.quotePath={'true' if quote_path else 'false'}", "-c", "user.email=t@t.invalid", "-c", "user.name=t"]
    return subprocess.run(["git", *config, *arguments], cwd=repo, check=True, capture_output=True).stdout


@pytest.fixture
def repo(tmp_path):
    """A repository whose start commit has every awkward name, for diffs that change, add, delete and rename."""
    git(tmp_path, "init", "-q")
    for name in AWKWARD.values():
        path = os.path.join(os.fsencode(tmp_path), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(b"one\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "start")
    return tmp_path


@pytest.mark.parametrize("quote_path", [True, False], ids=["quotePath", "no quotePath"])
@pytest.mark.parametrize("change", ["modified", "deleted", "mode changed", "binary"])
def test_every_awkward_name_comes_back_as_itself(repo, change, quote_path):
    for name in AWKWARD.values():
        path = os.path.join(os.fsencode(repo), name)
        if change == "modified":
            with open(path, "ab") as out:
                out.write(b"two\n")
        elif change == "deleted":
            os.remove(path)
        elif change == "mode changed":
            os.chmod(path, 0o755)
        else:
            with open(path, "wb") as out:
                out.write(b"\0\1\2")
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", "HEAD", quote_path=quote_path).decode("utf-8", "surrogateescape")
    assert sorted(os.fsencode(path) for path in patch_files(patch)) == sorted(AWKWARD.values())


def test_added_and_renamed_files(repo):
    os.rename(os.path.join(repo, "my dir"), os.path.join(repo, "your dir"))
    with open(os.path.join(os.fsencode(repo), b"new \xfe.txt"), "wb") as out:
        out.write(b"x\n")
    git(repo, "add", "-A")
    sections = file_diffs(git(repo, "diff", "--cached", "-M", "HEAD").decode("utf-8", "surrogateescape"))
    moved = [section for section in sections if section.old != section.new]
    assert {(section.old, section.new) for section in moved} == {("my dir/conf test.py", "your dir/conf test.py"), (None, os.fsdecode(b"new \xfe.txt"))}


def test_drop_files_keeps_what_precedes_the_sections_and_drops_a_quoted_protected_path(repo):
    for name in (AWKWARD["a space"], AWKWARD["other scripts"], AWKWARD["plain"]):
        with open(os.path.join(os.fsencode(repo), name), "ab") as out:
            out.write(b"two\n")
    git(repo, "add", "-A")
    patch = "From: someone\n\n" + git(repo, "diff", "--cached", "HEAD").decode()
    kept, dropped = drop_files(patch, ["日本語", "my dir"])
    assert sorted(dropped) == ["my dir/conf test.py", "日本語/é.py"]
    assert kept.startswith("From: someone\n\n") and patch_files(kept) == ["pkg/mod.py"]


def test_unquote_reads_git_escapes():
    assert unquote('"a\\tb\\n\\"c\\\\\\303\\251"') == 'a\tb\n"c\\é'
    assert unquote("plain name") == "plain name"


def test_an_attribute_pattern_matches_exactly_its_file(repo):
    """The capture marks a file `binary` by such a pattern; git must match it to that file and no other."""
    for label in ("bytes that are not UTF-8", "glob characters", "a space", "quotes"):
        name = os.fsdecode(AWKWARD[label])
        (repo / ".git" / "info" / "attributes").write_text(f"{attribute_pattern(name)} binary\n", errors="surrogateescape")
        listed = git(repo, "check-attr", "-z", "binary", "--", *[os.fsdecode(path) for path in AWKWARD.values()])
        fields = listed.split(b"\0")
        marked = {fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] == b"set"}
        assert marked == {AWKWARD[label]}, label


# what a change does to the start commit's files, as a shell script run in the repository
CHANGES = {
    "modified": "printf 'one\\n-- a line like a header\\ntwo\\n' > pkg/mod.py",
    "a line removed that looks like a header": "printf '%s\\n' '--- x' '+++ y' 'keep' > pkg/mod.py && git add -A && git commit -qm base && printf 'keep\\n' > pkg/mod.py",
    "added": "mkdir -p new && printf 'a\\nb\\n' > new/file.py",
    "deleted": "git rm -q 'my dir/conf test.py'",
    "renamed and edited": "git mv pkg/mod.py pkg/moved.py && printf 'one\\nmore\\n' > pkg/moved.py",
    "mode changed": "chmod +x pkg/mod.py",
    "no newline at the end": "printf 'one\\ntwo' > pkg/mod.py",
    "a name with a space and a quote": "printf 'changed\\n' > \"it's \\\"quoted\\\".txt\" && printf 'x\\n' > 'my dir/conf test.py'",
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_reversed_diff_is_the_diff_git_writes_the_other_way_and_undoes_the_change(repo, change):
    """`reverse_diff` against git: its text is `git diff` of the change taken backwards, and `git apply` of it on the
    changed tree gives back the start (SWE-smith's fix is its bug's diff reversed)."""
    from uni_agent_gym.diffs import reverse_diff

    subprocess.run(["sh", "-c", CHANGES[change]], cwd=repo, check=True, env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
                                                                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"})  # fmt: skip
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    forward = git(repo, "diff", "-M", "--full-index", "HEAD~1", "HEAD").decode("utf-8", "surrogateescape")
    backward = git(repo, "diff", "-M", "--full-index", "HEAD", "HEAD~1").decode("utf-8", "surrogateescape")
    assert forward and reverse_diff(forward) == backward
    (repo.parent / "fix.diff").write_bytes(reverse_diff(forward).encode("utf-8", "surrogateescape"))
    git(repo, "apply", "--index", str(repo.parent / "fix.diff"))
    assert git(repo, "diff", "--cached", "HEAD~1") == b""


def test_a_binary_diff_is_not_reversed_as_text():
    from uni_agent_gym.diffs import IrreversibleDiff, reverse_diff

    with pytest.raises(IrreversibleDiff, match="a binary patch cannot be reversed"):
        reverse_diff("diff --git a/x.bin b/x.bin\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmZQz\n")
