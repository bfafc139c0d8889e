"""No future in the repository: the agent's repository holds the start commit and its ancestry
(`env.history: ancestry`), or one root commit with the start tree (`none`), and nothing else.

Agents read the fix out of `git log --all`, a tag, `origin/*` or the reflog when the repository holds
history past `base_commit` (SWE-bench #465). So no workspace is a clone of a mirror:
- mirrors: once per (mirror, start commit, mode) a *clean* bare repository beside the mirror cache
  receives only the start commit's ancestry (a fetch of that one commit), or one root commit made of
  its tree; every workspace is a `fresh_checkout` of it: objects hard-linked, HEAD detached at the
  commit, no remote, branch, tag, reflog or FETCH_HEAD;
- images: `CLEAN_SCRIPT` scrubs a repository in place (the image builder's last step, and what derives
  a clean image from a pulled one, see `history_images.py`); it checks its own result and fails when
  anything outside the start commit's history is left.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.workspaces.host_git import FIXED_IDENTITY, WorkspaceError, git

START_MESSAGE = "uni-agent-gym start"  # the message of the root commit `history: none` makes
HISTORY_LABEL = "uni-agent-gym.history"  # on an image: the mode its repository was cleaned to
SCRIPT_PATH = "/tmp/uni-agent-gym-clean-history.sh"  # where image builds put CLEAN_SCRIPT (and remove it)


@dataclass(frozen=True)
class CleanHistory:
    """A bare repository holding one start commit's history (per the mode) and nothing else."""

    git_dir: Path
    start: str  # the commit workspaces start from: base_commit (ancestry) or the root commit of its tree (none)


async def clean_history(mirror: Path, commit: str, mode: str, instance_id: str) -> CleanHistory:
    """The clean repository of `commit` of the mirror cache `mirror`, made once (a fetch of the commit's
    ancestry into an empty repository, so nothing later can come along)."""
    if mode not in ("ancestry", "none"):
        raise ValueError(f"Expects env.history 'ancestry' or 'none', actual value: {mode!r}")
    try:
        await git("--git-dir", str(mirror), "cat-file", "-e", f"{commit}^{{commit}}")
    except WorkspaceError:
        raise WorkspaceError(f"Instance {instance_id!r}: the mirror {mirror} has no commit {commit}") from None
    target = mirror.with_name(f"{mirror.name.removesuffix('.git')}.history") / f"{mode}-{commit}.git"
    async with machine_lock(f"history {target.resolve()}"):
        if not (target / "HEAD").exists():
            await _make_clean_repository(mirror, commit, mode, target)
    start = (await git("--git-dir", str(target), "rev-parse", "refs/heads/start")).strip()
    return CleanHistory(target, start)


async def _make_clean_repository(mirror: Path, commit: str, mode: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    building = target.with_name(f"{target.name}.tmp-{secrets.token_hex(4)}")
    try:
        await git("init", "--bare", "--quiet", str(building))
        start = commit
        if mode == "none":  # the root commit is made in the mirror cache (an unreachable object there) and fetched alone
            tree = f"{commit}^{{tree}}"
            start = (await git("--git-dir", str(mirror), "commit-tree", tree, "-m", START_MESSAGE, env=FIXED_IDENTITY)).strip()
        fetch = ["-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "--quiet", "--no-tags", str(mirror), f"{start}:refs/heads/start"]
        await git("--git-dir", str(building), *fetch)
        await git("--git-dir", str(building), "symbolic-ref", "HEAD", "refs/heads/start")
        (building / "FETCH_HEAD").unlink(missing_ok=True)
        try:
            os.replace(building, target)
        except OSError:  # another process made it meanwhile
            if not (target / "HEAD").exists():
                raise
    finally:
        if building.exists():
            await asyncio.to_thread(shutil.rmtree, building, True)


def link_objects(source: Path, target: Path) -> None:
    """Hard-link (copy across file systems) the packs and loose objects of one objects directory into
    another; `info/` (alternates, commit-graph) is left behind."""
    for entry in os.scandir(source):
        if not entry.is_dir(follow_symlinks=False) or entry.name == "info":
            continue
        (target / entry.name).mkdir(exist_ok=True)
        for item in os.scandir(entry.path):
            if item.is_file(follow_symlinks=False) and not item.name.startswith("tmp_"):
                try:
                    os.link(item.path, target / entry.name / item.name)
                except OSError:
                    shutil.copy2(item.path, target / entry.name / item.name)


async def fresh_checkout(source: Path, commit: str, target: str | Path) -> None:
    """A checkout of `commit` in `target` (absent or empty) from the clean bare repository `source`,
    holding nothing else: HEAD detached at `commit`, no remote, no ref, no reflog."""
    target = Path(target)
    await git("-c", "init.defaultBranch=main", "init", "--quiet", str(target))
    await asyncio.to_thread(link_objects, Path(source) / "objects", target / ".git" / "objects")
    # no reflog is started (HEAD's would otherwise record the checkout)
    await git("-C", str(target), "-c", "core.logAllRefUpdates=false", "checkout", "--quiet", "--detach", commit)


CLEAN_SCRIPT = r"""
# clean-history REPO MODE [START]: leave REPO's git history at HEAD's ancestry (MODE ancestry), or at one
# root commit with START's tree plus the commits START..HEAD rebuilt on it (MODE none); remove every
# other ref, remote, reflog and object. The working tree and the index stay as they are. POSIX sh.
set -eu
cd "$1"; mode="$2"; start="${3:-}"
g() { git --no-replace-objects -c safe.directory='*' -c gc.auto=0 -c core.logAllRefUpdates=false "$@"; }
gitdir=$(cd "$(g rev-parse --git-dir)" && pwd)
(cd "$gitdir" && rm -rf logs FETCH_HEAD ORIG_HEAD MERGE_HEAD MERGE_MSG MERGE_MODE MERGE_RR AUTO_MERGE \
  CHERRY_PICK_HEAD REVERT_HEAD BISECT_* COMMIT_EDITMSG SQUASH_MSG TAG_EDITMSG NOTES_EDITMSG gc.log rebase-merge \
  rebase-apply sequencer rr-cache worktrees info/grafts info/refs objects/info/commit-graph objects/info/commit-graphs \
  objects/info/packs objects/pack/multi-pack-index* objects/pack/*.keep objects/pack/*.promisor objects/pack/tmp_* \
  objects/incoming-*)
head=$(g rev-parse --verify -q 'HEAD^{commit}') || { echo "clean-history: $1 has no HEAD commit" >&2; exit 3; }
branch=$(g symbolic-ref -q HEAD || true)
if [ "$mode" = none ]; then
  g merge-base --is-ancestor "$start" "$head" 2>/dev/null || { echo "clean-history: $start is not HEAD or an ancestor of it in $1" >&2; exit 3; }
  export GIT_AUTHOR_NAME="uni-agent-gym fixtures" GIT_AUTHOR_EMAIL=fixtures@uni-agent-gym.invalid GIT_AUTHOR_DATE=2000-01-01T00:00:00+0000
  export GIT_COMMITTER_NAME="uni-agent-gym fixtures" GIT_COMMITTER_EMAIL=fixtures@uni-agent-gym.invalid GIT_COMMITTER_DATE=2000-01-01T00:00:00+0000
  new=$(g commit-tree -m "uni-agent-gym start" "$start^{tree}")
  for commit in $(g rev-list --reverse --first-parent "$start..$head"); do
    new=$(g log -1 --format=%B "$commit" | g commit-tree -p "$new" "$commit^{tree}")
  done
  if [ -n "$branch" ]; then g update-ref "$branch" "$new"; else g update-ref --no-deref HEAD "$new"; fi
  head=$new
fi
for remote in $(g remote); do g config --remove-section "remote.$remote"; done
for name in $(g for-each-ref --format='%(refname:short)' refs/heads); do g config --remove-section "branch.$name" 2>/dev/null || true; done
g for-each-ref --format='%(refname)' | while read -r ref; do [ "$ref" = "$branch" ] || echo "delete $ref"; done | g update-ref --no-deref --stdin
rm -rf "$gitdir/logs"
count() { g count-objects -v | awk '$1 == "count:" || $1 == "in-pack:" { n += $2 } END { print n + 0 }'; }
reachable=$(g rev-list --objects --indexed-objects HEAD | wc -l)
if [ -s "$gitdir/objects/info/alternates" ] || [ "$(count)" -ne "$reachable" ]; then
  g repack -a -d -q
  rm -f "$gitdir/objects/info/alternates"
  g prune --expire=now
fi
[ "$(count)" -eq "$reachable" ] || { echo "clean-history: $(count) objects left, $reachable reachable from HEAD" >&2; exit 4; }
[ "$(g for-each-ref | wc -l)" -eq "$([ -n "$branch" ] && echo 1 || echo 0)" ] || { echo "clean-history: refs left" >&2; exit 4; }
echo "clean-history: $1 at $head ($mode), $reachable objects"
"""


def history_mode(instance: Task, config: GymConfig) -> str:
    """`env.history`, or `none` for a task whose ancestry would leak its fix (SWE-smith: the start's
    parent is the unbroken code)."""
    return "none" if instance.history == "none" else config.env.history
