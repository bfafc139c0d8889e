"""Patches in a grading sandbox: apply a prediction the harness's way, return files to a commit."""

from __future__ import annotations

import secrets
import shlex

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.diffs import file_diffs
from uni_agent_gym.errors import DeploymentError

# git as the grader runs it: /usr/bin/git (no shell function or PATH wrapper), no system or global config,
# no hooks, no fsmonitor, no replace objects, no pager or prompt.
GIT_ENV = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_NO_REPLACE_OBJECTS=1 GIT_TERMINAL_PROMPT=0 GIT_PAGER=cat GIT_OPTIONAL_LOCKS=0"
GIT = "/usr/bin/git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.untrackedCache=false -c safe.directory=* -c core.quotePath=false"
SAFE_GIT = f"{GIT_ENV} {GIT}"  # one simple command's worth

# The official harness's order of attempts for a prediction that does not apply cleanly.
APPLY_COMMANDS = ("git apply --verbose {patch}", "git apply --verbose --reject {patch}", "patch --batch --fuzz=5 -p1 -i {patch}")


def drop_files(patch: str, paths: list[str]) -> tuple[str, list[str]]:
    """The patch without its file sections on `paths` (or under them), and the paths it dropped."""
    sections = file_diffs(patch)
    kept, dropped = [patch[: len(patch) - sum(len(section.text) for section in sections)]], []  # what precedes them
    for section in sections:
        touched = {path for path in (section.old, section.new) if path is not None}
        if any(path == p or path.startswith(p + "/") for path in touched for p in paths):
            dropped.append(section.path)
        else:
            kept.append(section.text)
    return "".join(kept), dropped


async def git_in(deployment: Deployment, repo_dir: str, command: str, timeout: float = 120) -> str:
    """Run a git command in the repository; `DeploymentError` if it fails (the harness's own step)."""
    result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {command}", timeout=timeout)
    if result.exit_code != 0:
        raise DeploymentError(f"`{command[:80]}` failed in {repo_dir} ({result.exit_code}): {result.output[-1000:]}")
    return result.output


async def reset_files(deployment: Deployment, repo_dir: str, start_commit: str, paths: list[str]) -> None:
    """Return `paths` to `start_commit`: restored where they exist there, deleted where they do not."""
    if not paths:
        return
    quoted = " ".join(shlex.quote(path) for path in dict.fromkeys(paths))
    await git_in(
        deployment, repo_dir,
        f'for f in {quoted}; do if {SAFE_GIT} cat-file -e {start_commit}:"$f" 2>/dev/null; '
        f'then {SAFE_GIT} checkout {start_commit} -- "$f"; else rm -rf -- "$f"; fi; done',
    )  # fmt: skip


async def apply_patch(deployment: Deployment, repo_dir: str, diff: str, name: str) -> tuple[bool, str]:
    """Apply `diff` with the harness's fallbacks; (applied, the log of the attempts)."""
    path = f"/tmp/uni-agent-gym-{name}-{secrets.token_hex(6)}.diff"  # unique: local graders share the host's /tmp
    await deployment.write_file(path, diff if diff.endswith("\n") else diff + "\n")
    log = []
    for command in APPLY_COMMANDS:
        result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {command.format(patch=path)}", timeout=120)
        log.append(f"$ {command.format(patch=path)}\n{result.output}")
        if result.exit_code == 0:
            break
        await deployment.run(f"cd {shlex.quote(repo_dir)} && find . -name '*.rej' -newer {path} -delete", timeout=60)
    await deployment.run(f"rm -f {path}")
    return result.exit_code == 0, "\n".join(log)
