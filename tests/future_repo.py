"""A repository with a future: a base commit with a bug, a later commit that fixes it, and every place
git keeps history besides the ancestry of HEAD (a tag and an annotated tag, a branch, remote-tracking
refs, a stash, a replace ref that makes the base look like the fix, notes, reflogs). An instance row
starts at the base. `LOOK_FOR_THE_FUTURE` is what an agent would type to find the fix; `leaks` reads
its output. Made with a fixed identity and dates, so the same commits every time."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.fixture_sources import FIXED_IDENTITY

REPO = "uag-test/future"
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b  # FIXED-IN-THE-FUTURE\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
GOLD_PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


@dataclass(frozen=True)
class FutureRepo:
    path: Path  # a non-bare repository (HEAD on main, at the fix)
    base: str
    fix: str
    fix_blob: str  # calc.py as fixed
    annotated_tag: str  # the tag object of v1.0-announce

    def git(self, *args: str) -> str:
        return _git(self.path, *args)

    def row(self, instance_id: str = "uag-test__future-1", **extra) -> dict:
        """An instance row starting at the base (the fix is the gold patch)."""
        return {"instance_id": instance_id, "repo": REPO, "base_commit": self.base, "environment_setup_commit": self.base, "version": "1.0",
                "problem_statement": "add() subtracts.", "patch": GOLD_PATCH, "test_patch": "",
                "FAIL_TO_PASS": ["test_calc.py::test_add"], "PASS_TO_PASS": [], **extra}  # fmt: skip


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **FIXED_IDENTITY}
    done = subprocess.run(["git", "--no-replace-objects", "-c", "safe.directory=*", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_future_repo(root: Path) -> FutureRepo:
    path = root / "future-source"
    path.mkdir(parents=True)
    _git(path, "init", "--quiet", "--initial-branch", "main")
    (path / "calc.py").write_text(BUGGY)
    (path / "test_calc.py").write_text(TEST)
    (path / ".gitignore").write_text("build_stamp.txt\n__pycache__/\n")
    _git(path, "add", "-A")
    _git(path, "commit", "--quiet", "-m", "base")
    base = _git(path, "rev-parse", "HEAD")
    (path / "calc.py").write_text(FIXED)
    _git(path, "commit", "--quiet", "-am", "fix add()")
    fix = _git(path, "rev-parse", "HEAD")
    _git(path, "tag", "v1.0")
    _git(path, "tag", "-a", "v1.0-announce", "-m", "v1.0 fixes add()")
    _git(path, "branch", "fixed")
    _git(path, "update-ref", "refs/remotes/upstream/main", fix)
    (path / "calc.py").write_text("# STASHED-WORK\n" + FIXED)
    _git(path, "stash", "--quiet")
    _git(path, "notes", "add", "-m", "the fix is in the next commit", base)
    _git(path, "replace", base, fix)
    return FutureRepo(path, base, fix, _git(path, "rev-parse", f"{fix}:calc.py"), _git(path, "rev-parse", "v1.0-announce"))


def mirror_clone(repo: FutureRepo, cache_dir: Path) -> Path:
    """Seed `cache_dir`'s mirror cache with a `--mirror` clone: every ref of the source (stash, replace
    refs, notes, remote-tracking refs), as a mirror cache could hold them."""
    target = Path(cache_dir) / "mirrors" / f"{REPO.replace('/', '__')}.git"
    target.parent.mkdir(parents=True, exist_ok=True)
    _git(repo.path.parent, "clone", "--quiet", "--mirror", str(repo.path), str(target))
    return target


LOOK_FOR_THE_FUTURE = (
    "for probe in 'log --all --format=%H' 'for-each-ref --format=%(refname)' tag 'branch -a' reflog 'stash list' "
    "'fsck --unreachable --no-progress' 'cat-file --batch-all-objects --batch-check=%(objectname)' remote 'replace -l' "
    "'notes list' 'show v1.0:calc.py' 'rev-list --objects --all'; do echo \"@$probe\"; git $probe 2>&1; done; "
    "echo @files; ls -A .git; echo @head; git log --format='%H %P %T %s' HEAD"
)


def sections(output: str) -> dict[str, list[str]]:
    """The output of LOOK_FOR_THE_FUTURE by probe."""
    found: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if line.startswith("@"):
            current = line[1:]
            found[current] = []
        elif current is not None and line.strip():
            found[current].append(line.strip())
    return found


def leaks(output: str, repo: FutureRepo, allowed_branch: str | None = None) -> list[str]:
    """What of the future (or of anything but the start commit's history) the output shows; [] if nothing."""
    seen = sections(output)
    problems = []
    for secret in (repo.fix, repo.fix_blob, repo.annotated_tag, "FIXED-IN-THE-FUTURE", "STASHED-WORK", "the fix is in"):
        if secret in output:
            problems.append(f"{secret} is visible")
    refs = seen["for-each-ref --format=%(refname)"]
    if refs not in ([], [f"refs/heads/{allowed_branch}"] if allowed_branch else []):
        problems.append(f"refs: {refs}")
    for probe in ("tag", "reflog", "stash list", "remote", "replace -l", "notes list"):
        if seen[probe]:
            problems.append(f"git {probe}: {seen[probe]}")
    if any(line.startswith(("unreachable", "dangling")) for line in seen["fsck --unreachable --no-progress"]):
        problems.append(f"fsck: {seen['fsck --unreachable --no-progress']}")
    reachable = {line.split()[0] for line in seen["rev-list --objects --all"]}
    stored = set(seen["cat-file --batch-all-objects --batch-check=%(objectname)"])
    if stored != reachable:
        problems.append(f"{len(stored - reachable)} objects stored but not reachable")
    if any(branch for branch in seen["branch -a"] if "remotes/" in branch or "fixed" in branch):
        problems.append(f"branches: {seen['branch -a']}")
    if set(seen["files"]) & {"FETCH_HEAD", "ORIG_HEAD", "logs"}:
        problems.append(f".git holds {sorted(set(seen['files']) & {'FETCH_HEAD', 'ORIG_HEAD', 'logs'})}")
    return problems


def head_history(output: str) -> list[tuple[str, list[str], str, str]]:
    """(commit, parents, tree, subject) of HEAD's history, newest first."""
    rows = []
    for line in sections(output)["head"]:
        commit, *rest = line.split(" ")
        parents = [part for part in rest if len(part) == 40]
        tree = parents.pop()  # %P (zero or more) then %T
        subject = line.split(tree, 1)[1].strip()
        rows.append((commit, parents, tree, subject))
    return rows


def environments_file(root: Path, instance_id: str, python: str = "3.11") -> Path:
    """An environments file for the row: no packages, a pre_install edit (the environment commit) and
    an install that leaves an ignored file (as egg-info or a setuptools-scm _version.py would)."""
    path = root / "environments.json"
    entry = {"instance_id": instance_id, "python": python, "pip_requirements": [],
             "pre_install": ["echo '# environment' >> test_calc.py"],
             "install_cmd": "echo built > build_stamp.txt", "test_cmd_as_run": "python -m pytest -rA test_calc.py"}  # fmt: skip
    path.write_text(json.dumps([entry]))
    return path
