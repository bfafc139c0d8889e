"""Patches in the sandbox: capture the agent's work as a diff, apply a prediction the harness's way."""

from __future__ import annotations

import secrets
import shlex

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.errors import DeploymentError

# The official harness's order of attempts for a prediction that does not apply cleanly.
APPLY_COMMANDS = ("git apply --verbose {patch}", "git apply --verbose --reject {patch}", "patch --batch --fuzz=5 -p1 -i {patch}")


async def git_in(deployment: Deployment, repo_dir: str, command: str, timeout: float = 120) -> str:
    """Run a git command in the repository; `DeploymentError` if it fails (the harness's own step)."""
    result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {command}", timeout=timeout)
    if result.exit_code != 0:
        raise DeploymentError(f"`{command[:80]}` failed in {repo_dir} ({result.exit_code}): {result.output[-1000:]}")
    return result.output


async def capture_patch(deployment: Deployment, repo_dir: str, start_commit: str) -> str:
    """The agent's changes since `start_commit`, new and binary files included (the index is left as it was)."""
    await git_in(deployment, repo_dir, "git add -A")
    try:
        patch = await deployment.run(
            f"cd {shlex.quote(repo_dir)} && git -c core.fileMode=false diff --cached --binary {start_commit}", timeout=120
        )
    finally:
        await git_in(deployment, repo_dir, "git reset --quiet")
    if patch.exit_code != 0:
        raise DeploymentError(f"git diff failed in {repo_dir}: {patch.output[-1000:]}")
    return patch.output


async def reset_files(deployment: Deployment, repo_dir: str, start_commit: str, paths: list[str]) -> None:
    """Return `paths` to `start_commit`: restored where they exist there, deleted where they do not."""
    if not paths:
        return
    quoted = " ".join(shlex.quote(path) for path in dict.fromkeys(paths))
    await git_in(
        deployment, repo_dir,
        f'for f in {quoted}; do if git cat-file -e {start_commit}:"$f" 2>/dev/null; '
        f'then git checkout {start_commit} -- "$f"; else rm -rf -- "$f"; fi; done',
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
