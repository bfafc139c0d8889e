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
`max_bytes` of changed files or patch is `PatchRejected`: a clear status, never a crash (the message names the
largest file).

What the agent's build made is not its fix (`build_outputs.py`): the patch leaves out what the start's rules
ignore (the repository's `.gitignore` files and the start's `.git/info/exclude`, where an image built here records
what its install made), a file the image holds untracked (a pulled image records nothing: docker and ray, whose
capture sees the image), and a new file that is compiled code or a library archive. The result (`Captured`) is the
patch with `left_out`, {path: why}; on docker and ray it names every path left out (an ignored directory once), in a
sandbox's or the host's git the build outputs (there `git add` drops ignored paths unseen, the start's with the
agent's). Leaving a file out never helps the agent: the grading sandbox then lacks it, as if it was never made.
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
from uni_agent_gym.rewards.build_outputs import HEAD_BYTES, MAX_CLASSIFIED, output_kind, regular_output_kind
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


UNTRACKED_AT_THE_START = "untracked in the start commit: the image's own file"
# the new files against the start (the private index staged): those a build may have made
ADDED = "diff --cached --name-only -z --no-renames --diff-filter=A"


class PatchRejected(UniAgentGymError, ValueError):
    """The agent's changes cannot be graded as a patch (too large, or leaving the repository)."""


class Captured(str):
    """The agent's patch (its text), with the files of its sandbox the capture left out of it: {path: why}."""

    left_out: dict[str, str]

    def __new__(cls, patch: str, left_out: dict[str, str] | None = None) -> "Captured":
        captured = super().__new__(cls, patch)
        captured.left_out = dict(sorted((left_out or {}).items()))
        return captured


def _noting(exc: PatchRejected, left_out: dict[str, str]) -> PatchRejected:
    """`exc` with what was left out named (it is the agent's other work, not what made the patch too large)."""
    if not left_out:
        return exc
    shown = ", ".join(list(left_out)[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
    return PatchRejected(f"{exc}; left out as not the agent's fix: {shown}")


def _clean(scratch: str, body: str) -> str:
    """`body` as a command for a clean bash (see CLEAN_SHELL) whose git uses the capture's private git
    directory and index under `scratch` (made by `_PRIVATE_GIT`)."""
    exports = f"export {GIT_ENV} S={shlex.quote(scratch)} GIT_DIR={shlex.quote(scratch)}/git GIT_INDEX_FILE={shlex.quote(scratch)}/index"
    return f"{CLEAN_SHELL} {shlex.quote(f'{exports}; {body}')}"


def _private_git(scratch: str, repo_dir: str) -> str:
    """The command making the private git directory of `repo_dir`'s objects under `scratch`."""
    return f"mkdir -p {shlex.quote(scratch)} && R={shlex.quote(repo_dir)} && {_PRIVATE_GIT}"


async def capture_in_sandbox(deployment: Deployment, repo_dir: str, start: str, max_bytes: int) -> Captured:
    """The patch, computed in `deployment` by `/usr/bin/git` with a private index (see the module docstring)."""
    scratch = f"/tmp/uni-agent-gym-capture-{secrets.token_hex(6)}"
    cd = f"cd {shlex.quote(repo_dir)} &&"
    try:
        await _must(deployment, scratch, _private_git(scratch, repo_dir), "make the capture's git directory", where="sandbox")
        stage = f"{cd} {GIT} read-tree {start} && {GIT} --work-tree=. add -A"
        await _must(deployment, scratch, stage, "stage the agent's files", where="sandbox")
        added = await _listed(deployment, scratch, f"{cd} {GIT} {ADDED} {start}", "list the new files", where="sandbox")
        await _write_list(deployment, f"{scratch}/added", added[:MAX_CLASSIFIED])
        heads = (
            f"{cd} while IFS= read -r -d '' f; do if [ -f \"$f\" ] && [ ! -L \"$f\" ]; then printf '%s\\0' \"$f\"; "
            f"head -c {HEAD_BYTES} -- \"$f\" | od -An -v -tx1 | tr -d ' \\n'; printf '\\0'; fi; done < $S/added > $S/heads"
        )
        await _must(deployment, scratch, heads, "read the new files' first bytes", where="sandbox")
        fields = (await deployment.read_file(f"{scratch}/heads")).split(b"\0")
        left_out = {}
        for name, head in zip(fields[0::2], fields[1::2]):
            kind = output_kind(os.fsdecode(name), bytes.fromhex(head.decode()))  # regular files only (the loop's test)
            if kind:
                left_out[os.fsdecode(name)] = kind
        if left_out:
            await _write_list(deployment, f"{scratch}/left", list(left_out))
            await _must(deployment, scratch, f"{cd} {GIT} update-index -z --force-remove --stdin < $S/left", "unstage build outputs", where="sandbox")
        try:
            return Captured(await _diff(deployment, scratch, start, max_bytes), left_out)
        except PatchRejected as exc:
            raise _noting(exc, left_out) from None
    finally:
        await deployment.run(f"rm -rf {scratch}")


async def capture_on_host(git_dir: Path, work_tree: str, start: str, max_bytes: int) -> Captured:
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
        added = [os.fsdecode(path) for path in (await _host(git + ADDED.split() + [start], env)).split(b"\0") if path]
        left_out = {path: kind for path in added[:MAX_CLASSIFIED] if (kind := _host_output_kind(work_tree, path))}
        if left_out:
            await _host(git + ["update-index", "-z", "--force-remove", "--stdin"], env, stdin=b"".join(os.fsencode(path) + b"\0" for path in left_out))
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
                raw = await _host(git + ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", start], env)
                sizes = await _host(git + ["cat-file", "--batch-check=%(objectsize) %(objectname)"], env, stdin="".join(f"{blob}\n" for blob in _new_blobs(raw)).encode())
                raise _noting(PatchRejected(f"the patch is {patch.stat().st_size} bytes, more than reward.max_patch_bytes ({max_bytes}){_largest(raw, sizes)}"), left_out)
            return patch.read_bytes()

        data = await diff()
        offending = _not_utf8(data)
        if offending:
            (private / "info/attributes").write_text("".join(f"{attribute_pattern(path)} binary\n" for path in offending))
            data = await diff()
        return Captured(_as_text(data), left_out)


def _host_output_kind(work_tree: str, path: str) -> str | None:
    """`build_outputs.output_kind` of a regular file of the host's checkout (links not followed)."""
    try:
        descriptor = os.open(os.path.join(work_tree, path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return regular_output_kind(path, os.fstat(descriptor).st_mode, os.read(descriptor, HEAD_BYTES))
    finally:
        os.close(descriptor)


async def _host(argv: list[str], env: dict[str, str], stdout=None, cwd: str | None = None, stdin: bytes | None = None) -> bytes:
    """Run git on the host with exactly `env` (plus PATH and HOME), `stdin` its input; its output, or `DeploymentError`."""
    process = await asyncio.create_subprocess_exec(
        *argv, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8", **env}, cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=stdout or asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate(stdin)
    if process.returncode != 0:
        raise DeploymentError(f"`{' '.join(argv[-3:])}` failed ({process.returncode}): {err.decode(errors='replace')[-1000:]}")
    return out or b""


async def capture_from_container(agent: Deployment, fresh: Deployment, repo_dir: str, start: str, max_bytes: int) -> Captured:
    """The patch of the container sandbox `agent` (docker, ray: its `container`), computed in the fresh one `fresh`
    of the same instance (its repository at `start`, untouched by the agent). `agent` is frozen meanwhile."""
    root = repo_dir.rstrip("/")
    changes = await asyncio.to_thread(agent.container.changes)
    changed = dict(sorted((path[len(root) + 1 :], kind) for kind, path in changes if path.startswith(root + "/")))
    changed = {path: kind for path, kind in changed.items() if path != ".git" and not path.startswith(".git/")}
    if not changed:
        return Captured("")
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
        left_out: dict[str, str] = {}
        await asyncio.to_thread(agent.container.pause)
        try:
            copier = _Copier(agent, root, max_bytes)
            agent_ignores = [path for path, kind in changed.items() if posixpath.basename(path) == ".gitignore" and kind != "D"]
            await copier.copy(fresh, tree, agent_ignores)
            copy, index_paths, left_out = await _plan(agent, fresh, cd, scratch, changed, root)
            await copier.copy(fresh, tree, [path for path in copy if path not in agent_ignores])
        except PatchRejected as exc:
            raise _noting(exc, left_out) from None
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
        try:
            return Captured(await _diff(fresh, scratch, start, max_bytes), left_out)
        except PatchRejected as exc:
            raise _noting(exc, left_out) from None
    finally:
        await fresh.run(f"rm -rf {scratch}")


async def _write_list(deployment: Deployment, path: str, items: list[str]) -> None:
    """A NUL-separated list of paths, each as the bytes of its name (`os.fsencode`: not-UTF-8 names kept)."""
    await deployment.write_file(path, b"".join(os.fsencode(item) + b"\0" for item in items))


async def _listed(
    deployment: Deployment, scratch: str, command: str, what: str, ok: tuple[int, ...] = (0,), where: str = "grading sandbox"
) -> list[str]:
    """The NUL-separated paths `command` prints, read as bytes (a name that is not UTF-8 stays itself)."""
    output = f"{scratch}/listed"
    result = await deployment.run(_clean(scratch, f"{command} > {output}"), timeout=300)
    if result.exit_code not in ok:
        raise DeploymentError(f"Could not {what} in the {where} ({result.exit_code}): {result.output[-1000:]}")
    return [os.fsdecode(path) for path in (await deployment.read_file(output)).split(b"\0") if path]


async def _plan(
    agent: Deployment, fresh: Deployment, cd: str, scratch: str, changed: dict[str, str], root: str
) -> tuple[list[str], list[str], dict[str, str]]:
    """(the paths to copy, the index paths the patch may change, the paths left out and why). Deleted paths are
    not copied, nor what is left out: what the start's rules ignore (a directory named once), a file of the image
    that the start commit does not track, a new file that is compiled code (`build_outputs.py`, read by the engine
    from `agent`); tracked files always count. A new directory is copied whole when nothing in it is left out,
    else entry by entry; a changed directory is not a path of its own (its entries are)."""
    directories = {path for path in changed if any(other.startswith(path + "/") for other in changed)}
    queries = [path + "/" if path in directories else path for path, kind in changed.items() if kind != "D"]
    await _write_list(fresh, f"{scratch}/queries", queries)
    check = f"{cd} {GIT} --work-tree={scratch}/tree check-ignore -v -z --stdin < {scratch}/queries"
    fields = await _listed(fresh, scratch, check, "run git check-ignore", ok=(0, 1))
    ignored = {
        path.rstrip("/"): f"ignored by {'.git/info/exclude' if source.endswith('/info/exclude') else source} ({pattern})"
        for source, pattern, path in zip(fields[0::4], fields[2::4], fields[3::4])
        if not pattern.startswith("!")  # the last pattern that matched a path un-ignores it
    }  # fmt: skip

    def under(path: str, parents) -> bool:
        return any(path == parent or path.startswith(parent + "/") for parent in parents)

    def below_one_of(path: str, paths) -> bool:
        parent = posixpath.dirname(path)
        while parent:
            if parent in paths:
                return True
            parent = posixpath.dirname(parent)
        return False

    left_out = {path: why for path, why in ignored.items() if not below_one_of(path, ignored)}
    files = [path for path, kind in changed.items() if kind != "D" and path not in directories and not below_one_of(path, ignored) and path not in ignored]
    await _write_list(fresh, f"{scratch}/files", [f":(literal){path}" for path in files])
    tracked = set(await _listed(fresh, scratch, f"{cd} xargs -0 -r {GIT} ls-files -z -- < {scratch}/files", "list the tracked files"))
    tracked |= {parent for path in tracked for parent in _parents(path)}  # a tracked directory (now a link, say) is tracked
    for path in files:
        if path not in tracked and changed[path] == "C":
            left_out[path] = UNTRACKED_AT_THE_START
    new = [path for path in files if path not in tracked and changed[path] == "A"][:MAX_CLASSIFIED]
    heads = await asyncio.to_thread(agent.container.read_heads, [f"{root}/{path}" for path in new], HEAD_BYTES) if new else {}
    for path in new:
        mode, head = heads.get(f"{root}/{path}", (0, b""))
        kind = regular_output_kind(path, mode, head)
        if kind:
            left_out[path] = kind
    out = set(ignored) | set(left_out)

    copy: list[str] = []
    index_paths: list[str] = []
    for path, kind in changed.items():
        if kind == "D":
            index_paths.append(path)  # gone: a deleted directory takes everything under it
        elif under(path, out) or under(path, copy):
            continue
        elif path not in directories:
            copy.append(path)
            index_paths.append(path)
        elif kind == "A" and not any(under(other, out) for other in changed if other.startswith(path + "/")):
            copy.append(path)
            index_paths.append(path)
    return copy, index_paths, left_out


def _parents(path: str) -> list[str]:
    """The directories holding `path` (`a/b/c` -> `a/b`, `a`)."""
    parents, parent = [], posixpath.dirname(path)
    while parent:
        parents.append(parent)
        parent = posixpath.dirname(parent)
    return parents


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
            raise PatchRejected(f"the patch is {int(size)} bytes, more than reward.max_patch_bytes ({max_bytes}){await _largest_in(deployment, scratch, start)}")
        return await deployment.read_file(f"{scratch}/patch")

    data = await diff()
    offending = _not_utf8(data)
    if offending:
        await deployment.write_file(f"{scratch}/git/info/attributes", "".join(f"{attribute_pattern(path)} binary\n" for path in offending))
        data = await diff()
    return _as_text(data)


async def _largest_in(deployment: Deployment, scratch: str, start: str) -> str:
    """`_largest` of the files staged in the capture's private index (in `deployment`)."""
    listed = f"{GIT} diff --cached --raw -z --no-renames --no-abbrev {start} > $S/raw"
    await _must(deployment, scratch, listed, "list the changed files", where="sandbox")
    raw = await deployment.read_file(f"{scratch}/raw")
    await deployment.write_file(f"{scratch}/blobs", "".join(f"{blob}\n" for blob in _new_blobs(raw)))
    sizes = await _must(deployment, scratch, f"{GIT} cat-file --batch-check='%(objectsize) %(objectname)' < $S/blobs", "size the changed files", where="sandbox")
    return _largest(raw, sizes.encode())


def _new_blobs(raw: bytes) -> list[str]:
    """The new object of each file in `git diff --raw -z` output (none for a deletion)."""
    fields = raw.split(b"\0")
    blobs = [header.split()[3].decode() for header in fields[0::2] if header.startswith(b":")]
    return [blob for blob in blobs if blob.strip("0")]


def _largest(raw: bytes, sizes: bytes) -> str:
    """"; its largest file: PATH (N bytes)" from `git diff --raw -z` output and `cat-file --batch-check` sizes."""
    size_of = {}
    for line in sizes.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            size_of[parts[1]] = int(parts[0])
    fields = raw.split(b"\0")
    files = [(size_of.get(header.split()[3].decode(), 0), os.fsdecode(path)) for header, path in zip(fields[0::2], fields[1::2]) if header.startswith(b":")]
    if not files:
        return ""
    size, path = max(files)
    return f"; its largest file: {path} ({size} bytes)"


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
