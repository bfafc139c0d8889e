"""The agent's patch, captured without trusting anything the agent could change.

The patch is the difference between the repository's files at the end of an episode and the commit
the episode started from. Everything in the agent's sandbox may be the agent's: its shell (functions
named `git`, `PATH`), the `git` binary, the repository's `.git` (config, hooks, attributes, index,
refs, replace objects) and processes still running. So the patch is computed with none of them:

- docker (`capture_from_container`): the Docker daemon says which paths changed (`docker diff`, read
  from the container's filesystem layer) and copies them out (`get_archive`), with the container
  frozen; the patch is computed in the *fresh* grading container, which the agent never touched, by
  its git, with a private index, against the start commit. Paths git ignores are not copied.
- local (`capture_on_host`): the host's git reads the checkout's files with the instance's trusted
  repository (`workspaces/local_checkout.py`) as its git directory, never the checkout's own `.git`, a
  private index and object directory, and no system or global config;
- anywhere else (`capture_in_sandbox`: modal, `reward.sandbox: same`): in the sandbox, by
  `/usr/bin/git` (no shell function or PATH wrapper) with no system or global config, no hooks, no
  fsmonitor and a private index. The repository's objects are still read there: this path is for sandboxes
  the gym trusts or cannot see into.

Every capture runs git with a private git directory (`_PRIVATE_GIT`: no config, its objects those of
the repository as alternates, new blobs kept apart, the start's `info/exclude`) and a private index. All
diff with `--binary --full-index --no-textconv --no-ext-diff --no-renames`: new, deleted, binary and
mode-changed files are in the patch, a rename is a deletion plus an addition, and no diff driver runs.
Paths are C-quoted (`core.quotePath`), so a name that is not UTF-8 (or holds a newline) is ASCII in the
patch; a file whose content is not UTF-8 is written as a binary section (marked `binary` in the private
`info/attributes`, which no `.gitattributes` of the agent's overrides), so the patch is text and applies
to the same bytes. A symlink that leaves the repository, a special file, or more than
`max_bytes` of changed files or patch is `PatchRejected`: a clear status, never a crash.
"""

from __future__ import annotations

import asyncio
import io
import os
import posixpath
import secrets
import shlex
import shutil
import tarfile
import tempfile
from pathlib import Path

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.deployments.container import ArchiveTooLarge
from uni_agent_gym.diffs import attribute_pattern, file_diffs
from uni_agent_gym.errors import DeploymentError, UniAgentGymError
from uni_agent_gym.rewards.patches import GIT, GIT_ENV

# A bash with nothing of the calling shell: no functions, aliases or variables (GIT_DIR, PATH, BASH_ENV).
CLEAN_SHELL = "/usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 /bin/bash --noprofile --norc -o pipefail -c"
DIFF_FLAGS = "--binary --full-index --no-textconv --no-ext-diff --no-renames --no-color"
DIFF = f"{GIT} -c core.quotePath=true diff --cached {DIFF_FLAGS}"
# A git directory of the capture's own under $S (the scratch directory), reading the objects of the repository
# at $R: what git writes (blobs of the agent's files, attributes) stays in the scratch.
_PRIVATE_GIT = (
    'mkdir -p "$S/git/objects/info" "$S/git/info" "$S/git/refs" && echo ref: refs/heads/capture > "$S/git/HEAD" '
    '&& (cd "$R" && cd "$(env -u GIT_DIR -u GIT_INDEX_FILE /usr/bin/git -c safe.directory=* rev-parse --git-common-dir)" && pwd -P) > "$S/common" '
    '&& echo "$(cat "$S/common")/objects" > "$S/git/objects/info/alternates" '
    '&& { cat "$(cat "$S/common")/info/exclude" > "$S/git/info/exclude" 2>/dev/null || true; }'
)


class PatchRejected(UniAgentGymError, ValueError):
    """The agent's changes cannot be graded as a patch (too large, or leaving the repository)."""


def _clean(scratch: str, body: str) -> str:
    """`body` as a command for a clean bash (see CLEAN_SHELL) whose git uses the capture's private git
    directory and index under `scratch` (made by `_PRIVATE_GIT`)."""
    exports = f"export {GIT_ENV} S={shlex.quote(scratch)} GIT_DIR={shlex.quote(scratch)}/git GIT_INDEX_FILE={shlex.quote(scratch)}/index"
    return f"{CLEAN_SHELL} {shlex.quote(f'{exports}; {body}')}"


def _private_git(scratch: str, repo_dir: str) -> str:
    """The command making the private git directory of `repo_dir`'s objects under `scratch`."""
    return f"mkdir -p {shlex.quote(scratch)} && R={shlex.quote(repo_dir)} && {_PRIVATE_GIT}"


async def capture_in_sandbox(deployment: Deployment, repo_dir: str, start: str, max_bytes: int) -> str:
    """The patch, computed in `deployment` by `/usr/bin/git` with a private index (see the module docstring)."""
    scratch = f"/tmp/uni-agent-gym-capture-{secrets.token_hex(6)}"
    try:
        await _must(deployment, scratch, _private_git(scratch, repo_dir), "make the capture's git directory", where="sandbox")
        stage = f"cd {shlex.quote(repo_dir)} && {GIT} read-tree {start} && {GIT} --work-tree=. add -A"
        await _must(deployment, scratch, stage, "stage the agent's files", where="sandbox")
        return await _diff(deployment, scratch, start, max_bytes)
    finally:
        await deployment.run(f"rm -rf {scratch}")


async def capture_on_host(git_dir: Path, work_tree: str, start: str, max_bytes: int) -> str:
    """The patch of a host checkout (`local`), computed by the host's git with `git_dir`'s objects."""
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-capture-") as scratch:
        private = Path(scratch) / "git"
        for directory in ("objects/info", "info", "refs"):
            (private / directory).mkdir(parents=True)
        (private / "HEAD").write_text("ref: refs/heads/capture\n")
        (private / "objects/info/alternates").write_text(f"{git_dir.resolve() / 'objects'}\n")
        if (git_dir / "info/exclude").is_file():
            shutil.copyfile(git_dir / "info/exclude", private / "info/exclude")
        env = {
            **dict(item.split("=", 1) for item in GIT_ENV.split()),
            "GIT_DIR": str(private), "GIT_WORK_TREE": work_tree, "GIT_INDEX_FILE": f"{scratch}/index",
        }  # fmt: skip
        git = [*GIT.split(), "-C", work_tree]
        for arguments in (["read-tree", start], ["add", "-A"]):
            await _host(git + arguments, env)
        raw = await _host(git + ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", start], env)
        fields = raw.split(b"\0")
        for header, path in zip(fields[0::2], fields[1::2]):
            new_mode, new_object = header.split()[1], header.split()[3]
            if new_mode == b"120000":  # a symlink: its blob is where it points
                target = await _host(git + ["cat-file", "blob", new_object.decode()], env)
                _check_link(os.fsdecode(path), os.fsdecode(target))
        patch = Path(scratch) / "patch"

        async def diff() -> bytes:
            with patch.open("wb") as out:
                await _host([*DIFF.split(), start], {**env, "PWD": work_tree}, stdout=out, cwd=work_tree)
            if patch.stat().st_size > max_bytes:
                raise PatchRejected(f"the patch is {patch.stat().st_size} bytes, more than reward.max_patch_bytes ({max_bytes})")
            return patch.read_bytes()

        data = await diff()
        offending = _not_utf8(data)
        if offending:
            (private / "info/attributes").write_text("".join(f"{attribute_pattern(path)} binary\n" for path in offending))
            data = await diff()
        return _as_text(data)


async def _host(argv: list[str], env: dict[str, str], stdout=None, cwd: str | None = None) -> bytes:
    """Run git on the host with exactly `env` (plus PATH and HOME); its output, or `DeploymentError`."""
    process = await asyncio.create_subprocess_exec(
        *argv, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8", **env}, cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL, stdout=stdout or asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    if process.returncode != 0:
        raise DeploymentError(f"`{' '.join(argv[-3:])}` failed ({process.returncode}): {err.decode(errors='replace')[-1000:]}")
    return out or b""


async def capture_from_container(agent: Deployment, fresh: Deployment, repo_dir: str, start: str, max_bytes: int) -> str:
    """The patch of the container sandbox `agent` (docker, ray: its `container`), computed in the fresh one `fresh`
    of the same instance (its repository at `start`, untouched by the agent). `agent` is frozen meanwhile."""
    root = repo_dir.rstrip("/")
    changes = await asyncio.to_thread(agent.container.changes)
    changed = dict(sorted((path[len(root) + 1 :], kind) for kind, path in changes if path.startswith(root + "/")))
    changed = {path: kind for path, kind in changed.items() if path != ".git" and not path.startswith(".git/")}
    if not changed:
        return ""
    scratch = f"/tmp/uni-agent-gym-capture-{secrets.token_hex(6)}"
    tree, cd = f"{scratch}/tree", f"cd {shlex.quote(repo_dir)} &&"
    try:
        await _must(fresh, scratch, f"{_private_git(scratch, repo_dir)} && mkdir -p {tree} && {cd} {GIT} read-tree {start}", "read the start commit")
        # The start's .gitignore files (but those the agent changed) so that git can tell which changed
        # paths it ignores; those are never copied.
        listed = await _listed(fresh, scratch, f"{cd} {GIT} ls-files -z -- ':(glob)**/.gitignore'", "list .gitignore files")
        start_ignores = [path for path in listed if path not in changed]
        await _write_list(fresh, f"{scratch}/ignores", start_ignores)
        await _must(fresh, scratch, f"{cd} {GIT} checkout-index -z --stdin --prefix={tree}/ < {scratch}/ignores", "lay out .gitignore files")
        await asyncio.to_thread(agent.container.pause)
        try:
            copier = _Copier(agent, root, max_bytes)
            agent_ignores = [path for path, kind in changed.items() if posixpath.basename(path) == ".gitignore" and kind != "D"]
            await copier.copy(fresh, tree, agent_ignores)
            copy, index_paths = await _plan(fresh, cd, scratch, changed)
            await copier.copy(fresh, tree, [path for path in copy if path not in agent_ignores])
        finally:
            await asyncio.to_thread(agent.container.unpause)
        # The index holds the start commit; git looks at the scratch tree only for the changed paths.
        await _write_list(fresh, f"{scratch}/paths", [f":(literal){path}" for path in index_paths + start_ignores])
        stage = (
            f"{cd} {GIT} ls-files -z | {GIT} update-index -z --skip-worktree --stdin "
            f"&& xargs -0 -r {GIT} ls-files -z -- < {scratch}/paths | {GIT} update-index -z --no-skip-worktree --stdin "
            f"&& {GIT} --work-tree={tree} add -A"
        )
        await _must(fresh, scratch, stage, "stage the agent's files")
        return await _diff(fresh, scratch, start, max_bytes)
    finally:
        await fresh.run(f"rm -rf {scratch}")


async def _write_list(deployment: Deployment, path: str, items: list[str]) -> None:
    """A NUL-separated list of paths, each as the bytes of its name (`os.fsencode`: not-UTF-8 names kept)."""
    await deployment.write_file(path, b"".join(os.fsencode(item) + b"\0" for item in items))


async def _listed(deployment: Deployment, scratch: str, command: str, what: str, ok: tuple[int, ...] = (0,)) -> list[str]:
    """The NUL-separated paths `command` prints, read as bytes (a name that is not UTF-8 stays itself)."""
    output = f"{scratch}/listed"
    result = await deployment.run(_clean(scratch, f"{command} > {output}"), timeout=300)
    if result.exit_code not in ok:
        raise DeploymentError(f"Could not {what} in the grading sandbox ({result.exit_code}): {result.output[-1000:]}")
    return [os.fsdecode(path) for path in (await deployment.read_file(output)).split(b"\0") if path]


async def _plan(fresh: Deployment, cd: str, scratch: str, changed: dict[str, str]) -> tuple[list[str], list[str]]:
    """(the paths to copy, the index paths the patch may change). Deleted and ignored paths are not
    copied (tracked files always count); a new directory is copied whole when nothing in it is
    ignored, else entry by entry; a changed directory is not a path of its own (its entries are)."""
    directories = {path for path in changed if any(other.startswith(path + "/") for other in changed)}
    queries = [path + "/" if path in directories else path for path, kind in changed.items() if kind != "D"]
    await _write_list(fresh, f"{scratch}/queries", queries)
    check = f"{cd} {GIT} --work-tree={scratch}/tree check-ignore -z --stdin < {scratch}/queries"
    ignored = {path.rstrip("/") for path in await _listed(fresh, scratch, check, "run git check-ignore", ok=(0, 1))}

    def under(path: str, parents) -> bool:
        return any(path == parent or path.startswith(parent + "/") for parent in parents)

    copy: list[str] = []
    index_paths: list[str] = []
    for path, kind in changed.items():
        if kind == "D":
            index_paths.append(path)  # gone: a deleted directory takes everything under it
        elif under(path, ignored) or under(path, copy):
            continue
        elif path not in directories:
            copy.append(path)
            index_paths.append(path)
        elif kind == "A" and not any(under(other, ignored) for other in changed if other.startswith(path + "/")):
            copy.append(path)
            index_paths.append(path)
    return copy, index_paths


class _Copier:
    """Copies changed paths out of the agent's container into a fresh one, checked, within one budget."""

    def __init__(self, agent, root: str, max_bytes: int) -> None:
        self.agent, self.root, self.left = agent, root, max_bytes

    async def copy(self, fresh, tree: str, paths: list[str]) -> None:
        """One archive of `paths` into the scratch tree, unpacked at its root with repository paths (so a
        link to a sibling directory stays inside it)."""
        if paths:
            await asyncio.to_thread(self._copy, fresh, tree, paths)

    def _copy(self, fresh, tree: str, paths: list[str]) -> None:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as batch:
            for path in paths:
                try:
                    data = self.agent.container.read_archive(f"{self.root}/{path}", max(self.left, 0))
                except ArchiveTooLarge:
                    raise PatchRejected(f"the changed files are larger than reward.max_patch_bytes (at {path})") from None
                if data is None:  # gone since it was listed
                    continue
                self.left -= len(data)
                _add_checked(batch, data, posixpath.dirname(path))
        fresh.container.write_archive(tree, out.getvalue())


def _add_checked(batch: tarfile.TarFile, data: bytes, parent: str) -> None:
    """Add a path's tar to `batch` with its members moved under `parent`, after refusing what a patch
    cannot hold safely: special files, and links that leave the repository."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            where = posixpath.normpath(posixpath.join(parent, member.name))
            if member.isdev() or member.isfifo():
                raise PatchRejected(f"{where} is a special file (device or fifo), which a patch cannot hold")
            if member.issym():
                _check_link(where, member.linkname)
            elif member.islnk():
                member.linkname = posixpath.normpath(posixpath.join(parent, member.linkname))
            member.name = where
            batch.addfile(member, tar.extractfile(member) if member.isreg() else None)


def _check_link(path: str, target: str) -> None:
    """A symlink at `path` (in the repository) may only point inside it."""
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if posixpath.isabs(target) or resolved == ".." or resolved.startswith("../"):
        raise PatchRejected(f"the symlink {path} -> {target} points outside the repository")


async def _must(deployment: Deployment, scratch: str, command: str, what: str, where: str = "grading sandbox") -> str:
    result = await deployment.run(_clean(scratch, command), timeout=300)
    if result.exit_code != 0:
        raise DeploymentError(f"Could not {what} in the {where} ({result.exit_code}): {result.output[-1000:]}")
    return result.output


async def _diff(deployment: Deployment, scratch: str, start: str, max_bytes: int) -> str:
    """The staged patch against `start`, unless too large. Sections of files whose content is not UTF-8 are
    made again as binary ones (the private `info/attributes`), so the patch is text that means the same bytes."""

    async def diff() -> bytes:
        result = await deployment.run(_clean(scratch, f"{DIFF} {start} > $S/patch && wc -c < $S/patch"), timeout=600)
        size = result.output.strip().splitlines()[-1] if result.exit_code == 0 and result.output.strip() else ""
        if not size.isdigit():
            raise DeploymentError(f"Could not capture the patch ({result.exit_code}): {result.output[-1000:]}")
        if int(size) > max_bytes:
            raise PatchRejected(f"the patch is {int(size)} bytes, more than reward.max_patch_bytes ({max_bytes})")
        return await deployment.read_file(f"{scratch}/patch")

    data = await diff()
    offending = _not_utf8(data)
    if offending:
        await deployment.write_file(f"{scratch}/git/info/attributes", "".join(f"{attribute_pattern(path)} binary\n" for path in offending))
        data = await diff()
    return _as_text(data)


def _not_utf8(patch: bytes) -> list[str]:
    """The files whose sections of `patch` are not UTF-8 (their content is not: the paths are quoted)."""
    try:
        patch.decode("utf-8")
        return []
    except UnicodeDecodeError:
        pass
    sections = file_diffs(patch.decode("utf-8", "surrogateescape"))
    return [section.path for section in sections if _has_surrogates(section.text)]


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _as_text(patch: bytes) -> str:
    """The patch as text; bytes that are still not UTF-8 (no section could be made binary) are replaced."""
    return patch.decode("utf-8", errors="replace")
