"""A warm pool of docker sandboxes: a finished episode's container, scrubbed back to the state it was
first handed out in and verified clean, starts the next episode of the same image without a new container.

    deployment = await acquire(config, repo_dir)    # an idle verified container, else a fresh one
    ... episode ...
    await release(deployment)                       # returns at once; scrub + verify -> idle, else removed

On (`deployment.pool_size` > 0, docker and ray; on ray a pool holds sandboxes of any node, and a grading
sandbox's pool those of its agent's node). Scrubbing: a fresh shell session (no variables,
functions or working directory carried over), every other process killed, the repository reset to
the commit it had when the container was first handed out and cleaned, what `docker diff` shows added
under the repository and /tmp since then removed, the network reconnected (grading cuts it).
Verified: `git status --porcelain` empty, /tmp empty, no process but init and the shell, and nothing
else new in `docker diff` (bytecode aside). Anything else, or any error, evicts the container.
(`docker diff` does not see volumes: with `read_only_root` the workspace is one, so there only git's
view of it is verified, and files git ignores that the episode added stay.)
The scrub runs in the background (`docker diff` alone costs the daemon ~0.5 s), so `close()` does not
wait for it; `acquire` only hands out containers whose scrub is done, and `settle()` waits for them.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.deployments.base import Deployment
from uni_agent_gym.deployments.sites import site_of

logger = logging.getLogger(__name__)

# Shell builtins only (a fork bomb's leftovers cannot stop them). KEEP is init, the container's main
# process and this shell; FIND_MAIN prints init's children at the start (the main process only).
FIND_MAIN = 'for d in /proc/[0-9]*; do { read -r l < "$d/stat"; } 2>/dev/null || continue; set -- ${l##*) }; [ "$2" = 1 ] && echo ${d#/proc/}; done'
OTHERS = 'keep=" 1 {main} $$ "; n=0; for d in /proc/[0-9]*; do p=${{d#/proc/}}; case "$keep" in *" $p "*) ;; *) {action};; esac; done'
KILL_OTHERS = OTHERS.replace("{action}", 'kill -9 "$p" 2>/dev/null')
COUNT_OTHERS = OTHERS.replace("{action}", "[ -d $d ] && n=$((n+1))") + "; echo $n"


@dataclass
class _Baseline:
    """What a pooled container looked like when it was first handed out."""

    repo_dir: str
    commit: str | None  # HEAD of repo_dir then (None: no repository there yet, e.g. it is uploaded per episode)
    changes: set[tuple[str, str]]
    main_pid: str  # the container's main process (it must survive: the container stops with it)


@dataclass
class SandboxPool:
    """Idle containers of one deployment config (so one image), at most `size` of them."""

    config: Any
    size: int
    idle: list[Deployment] = field(default_factory=list)
    scrubbing: dict[asyncio.Task, Deployment] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=lambda: {"reused": 0, "fresh": 0, "evicted": 0, "scrub_seconds": 0.0})

    async def acquire(self, repo_dir: str) -> Deployment:
        while self.idle:
            deployment = self.idle.pop()
            if await deployment.is_alive():
                self.stats["reused"] += 1
                return deployment
            await self._evict(deployment, "it died while idle")
        from uni_agent_gym.deployments import make_deployment

        deployment = make_deployment(self.config)
        await deployment.start()
        try:
            head = await deployment.run(f"git -C {shlex.quote(repo_dir)} rev-parse HEAD 2>/dev/null")
            main = await deployment.run(FIND_MAIN)
            changes = await asyncio.to_thread(deployment.container.changes)
        except BaseException:
            await deployment.stop()
            raise
        commit = head.output.strip() if head.exit_code == 0 else None
        main_pid = min(main.output.split(), key=int, default="1")
        deployment.pool, deployment.baseline = self, _Baseline(repo_dir, commit, set(changes), main_pid)
        self.stats["fresh"] += 1
        return deployment

    async def release(self, deployment: Deployment) -> None:
        if len(self.idle) + len(self.scrubbing) >= self.size:
            await deployment.stop()
            return
        task = asyncio.ensure_future(self._return(deployment))
        self.scrubbing[task] = deployment
        task.add_done_callback(lambda done: self.scrubbing.pop(done, None))

    async def _return(self, deployment: Deployment) -> None:
        started = time.monotonic()
        try:
            problem = await self._scrub(deployment)
        except Exception as exc:  # noqa: BLE001 - any failure to scrub means: do not reuse
            problem = f"scrubbing failed: {exc}"
        self.stats["scrub_seconds"] += time.monotonic() - started
        if problem:
            await self._evict(deployment, problem)
        else:
            self.idle.append(deployment)

    async def settle(self) -> None:
        """Wait until every released container is idle or removed."""
        while self.scrubbing:
            await asyncio.gather(*self.scrubbing, return_exceptions=True)

    async def _scrub(self, deployment: Any) -> str | None:
        """Return the container to its baseline; the reason it cannot be reused, or None."""
        baseline: _Baseline = deployment.baseline
        repo = shlex.quote(baseline.repo_dir)
        await deployment.restart_shell()
        kill = KILL_OTHERS.format(main=baseline.main_pid)
        await deployment.run(f"{kill}; {kill}; cd / && rm -rf /tmp/* /tmp/.[!.]* /tmp/..?*", timeout=60)  # twice: what forked meanwhile
        new = set(await asyncio.to_thread(deployment.container.changes)) - baseline.changes
        tracked: set[str] = set()
        if baseline.commit:
            reset = await deployment.run(f"git -C {repo} reset -q --hard {baseline.commit} && git -C {repo} clean -qfd", timeout=120)
            if reset.exit_code != 0:
                return f"the repository does not reset: {reset.output.strip()[-300:]}"
            tracked = await self._tracked(deployment, baseline.repo_dir, [path for kind, path in new if kind == "C"])
        removable, unexplained = [], []
        parents = {parent for _, path in new for parent in _parents(path)}
        for kind, path in new:
            in_repo = _under(path, baseline.repo_dir)
            if (_is_bytecode(path) and not in_repo) or (baseline.commit and _under(path, f"{baseline.repo_dir}/.git")):
                continue  # system bytecode; git's own bookkeeping of the reset (an uploaded repository goes entirely)
            if kind == "A" and (_under(path, "/tmp") or in_repo):
                removable.append(path)
            elif kind == "C" and (path in {"/tmp", baseline.repo_dir} | tracked or path in parents):
                continue  # a directory that holds changes is judged by them
            elif kind == "D" and _under(path, "/tmp"):
                continue
            else:
                unexplained.append(f"{kind} {path}")
        if unexplained:
            return f"changes outside the repository and /tmp: {', '.join(sorted(unexplained)[:5])}"
        topmost = [path for path in removable if not any(_under(path, other) and path != other for other in removable)]
        if topmost:
            await deployment.run("rm -rf -- " + " ".join(shlex.quote(path) for path in sorted(topmost)), timeout=120)
        checks = await deployment.run(f"git -C {repo} status --porcelain 2>/dev/null; ls -A /tmp", timeout=60)
        if checks.output.strip():
            return f"not clean after scrubbing: git status or /tmp shows leftovers ({checks.output.strip()[-200:]})"
        for _ in range(20):  # killed processes take a moment to be reaped
            others = await deployment.run(COUNT_OTHERS.format(main=baseline.main_pid), timeout=30)
            if others.output.strip() == "0":
                break
            await asyncio.sleep(0.05)
        else:
            return f"{others.output.strip()} stray processes survive"
        await deployment.container.restore_network()
        if deployment.workdir:
            await deployment.run(f"cd {shlex.quote(deployment.workdir)}")  # where a new session starts
        return None

    @staticmethod
    async def _tracked(deployment: Deployment, repo_dir: str, paths: list[str]) -> set[str]:
        """Which of `paths` (changed in the repository) git tracks, or holds tracked files (directories):
        git status vouches for those."""
        inside = [path for path in paths if _under(path, repo_dir) and path != repo_dir]
        if not inside:
            return set()
        quoted = " ".join(shlex.quote(path) for path in inside)
        listed = await deployment.run(
            f"cd {shlex.quote(repo_dir)} && for p in {quoted}; do git ls-files --error-unmatch -- \"$p\" >/dev/null 2>&1 && echo \"$p\"; done",
            timeout=120,
        )
        return set(listed.output.splitlines()) & set(inside)

    async def _evict(self, deployment: Deployment, reason: str) -> None:
        logger.info("evicting a pooled sandbox: %s", reason)
        self.stats["evicted"] += 1
        await deployment.stop()

    async def drain(self) -> None:
        """Remove every idle container (after the scrubs in progress end)."""
        await self.settle()
        idle, self.idle = self.idle, []
        await asyncio.gather(*(deployment.stop() for deployment in idle))


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _parents(path: str) -> list[str]:
    parts = path.rstrip("/").split("/")
    return ["/".join(parts[:end]) for end in range(2, len(parts))]


def _is_bytecode(path: str) -> bool:
    return path.endswith(".pyc") or "/__pycache__" in path


_pools: dict[tuple[int, str], SandboxPool] = {}


def pool_for(config: Any) -> SandboxPool | None:
    """The pool of this deployment config on the running event loop (containers' sessions belong to
    it), or None when pooling is off."""
    size = site_of(config).pool_size
    if not size:
        return None
    key = (id(asyncio.get_running_loop()), config.model_dump_json())
    if key not in _pools:
        _pools[key] = SandboxPool(config, size)
    return _pools[key]


async def acquire(config: Any, repo_dir: str) -> Deployment:
    """A started deployment of `config`: from its pool when pooling is on, else a new one."""
    pool = pool_for(config)
    if pool is not None:
        return await pool.acquire(repo_dir)
    from uni_agent_gym.deployments import make_deployment

    deployment = make_deployment(config)
    await deployment.start()
    return deployment


async def release(deployment: Deployment) -> None:
    """Back to its pool if it came from one (scrubbed, or evicted), else stopped."""
    if deployment.pool is None:
        await deployment.stop()
    else:
        await deployment.pool.release(deployment)


async def drain_pools() -> None:
    """Remove the idle containers of every pool on the running loop."""
    loop = id(asyncio.get_running_loop())
    await asyncio.gather(*(pool.drain() for (owner, _), pool in list(_pools.items()) if owner == loop))


@atexit.register
def _remove_idle_containers() -> None:
    """A process that exits with idle containers removes them, as their site does (synchronously: the loop is gone)."""
    for pool in _pools.values():
        site_of(pool.config).remove_at_exit([*pool.idle, *pool.scrubbing.values()])
        pool.idle = []
