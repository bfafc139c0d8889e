"""No future in the repository (`env.history`): whatever workspace the agent gets (a docker mirror
checkout, an image built by `images build`, an image derived from a pulled one, a local checkout), its
repository holds the start commit's history and nothing later under `ancestry`, and one root commit
with the start tree (plus the environment commit in images) under `none`. The repository they come
from has a future (`tests/future_repo.py`). Nothing is faked: real git, real Docker, real local venvs;
a pulled official image is played by an image built here with the whole future left in /testbed."""

from __future__ import annotations

import asyncio
import re
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_docker
from tests.future_repo import BUGGY, LOOK_FOR_THE_FUTURE, REPO, environments_file, head_history, leaks, make_future_repo, mirror_clone
from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.workspaces.history import CLEAN_SCRIPT, HISTORY_LABEL, START_MESSAGE, clean_history
from uni_agent_gym.workspaces.history_images import SOURCE_LABEL
from uni_agent_gym.workspaces.local_checkout import local_workspace_dir, recreate_checkout, trusted_git_dir
from uni_agent_gym.workspaces.host_git import WorkspaceError

pytestmark = pytest.mark.slow  # episodes on every workspace kind: not in make test-fast

MODES = ["ancestry", "none"]
PULLED = "uni-agent-gym-test/pulled-future:latest"  # plays an official image: built here, history left in


def bash(command: str) -> dict:
    return {"name": "execute_bash", "arguments": {"command": command}}


def run_clean_script(repo: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", CLEAN_SCRIPT, "clean-history", str(repo), *arguments], capture_output=True, text=True)


def look(repo: Path) -> str:
    return subprocess.run(["bash", "-c", LOOK_FOR_THE_FUTURE], cwd=repo, capture_output=True, text=True).stdout


@pytest.fixture
def future(tmp_path):
    return make_future_repo(tmp_path)


def test_the_probe_sees_the_future_where_there_is_one(future, tmp_path):
    """The checks below can fail: in the repository itself, and in a plain clone of it at the base (the
    old workspace), the probe finds the fix."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(future.path), str(clone)], check=True)
    subprocess.run(["git", "checkout", "--quiet", "--detach", future.base], cwd=clone, check=True)
    for repo in (future.path, clone):
        found = leaks(look(repo), future)
        assert f"{future.fix} is visible" in found and any(problem.startswith("refs:") for problem in found)


@pytest.mark.parametrize("mode", MODES)
def test_the_clean_script_leaves_only_the_start_history(tmp_path, future, mode):
    """In place (what image builds and derived images run): every ref, remote, reflog, stash, note,
    replace ref, alternate and object outside the start's history goes; files and index stay."""
    work = tmp_path / "work"
    shutil.copytree(future.path, work, symlinks=True)
    subprocess.run(["git", "--no-replace-objects", "checkout", "--quiet", "--detach", future.base], cwd=work, check=True)
    alternate = tmp_path / "alternate.git"
    subprocess.run(["git", "clone", "--quiet", "--mirror", str(future.path), str(alternate)], check=True)
    (work / ".git" / "objects" / "info" / "alternates").write_text(f"{alternate / 'objects'}\n")
    (work / "untracked.txt").write_text("mine\n")

    done = run_clean_script(work, mode, future.base)
    assert done.returncode == 0, done.stderr
    output = look(work)
    assert leaks(output, future) == []
    base_tree = future.git("rev-parse", f"{future.base}^{{tree}}")
    start = (future.base, [], base_tree, "base") if mode == "ancestry" else (head_history(output)[0][0], [], base_tree, START_MESSAGE)
    assert head_history(output) == [start]
    assert (work / "calc.py").read_text() == BUGGY and (work / "untracked.txt").exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=work, capture_output=True, text=True, check=True).stdout
    assert status == "?? untracked.txt\n"
    assert not (work / ".git" / "objects" / "info" / "alternates").exists()


def test_the_clean_script_refuses_what_it_cannot_clean(tmp_path, future):
    (tmp_path / "plain").mkdir()
    done = run_clean_script(tmp_path / "plain", "ancestry")
    assert done.returncode != 0 and "not a git repository" in done.stderr
    later = run_clean_script(future.path, "none", "0" * 40)  # not an ancestor of HEAD
    assert later.returncode == 3 and f"{'0' * 40} is not HEAD or an ancestor of it" in later.stderr
    assert future.git("tag") == "v1.0\nv1.0-announce"  # a refusal changes nothing


async def test_a_mirror_without_the_start_commit_is_a_clear_error(tmp_path, future):
    mirror = mirror_clone(future, tmp_path / "cache")
    with pytest.raises(WorkspaceError, match=re.escape(f"Instance 'x__y-1': the mirror {mirror} has no commit {'1' * 40}")):
        await clean_history(mirror, "1" * 40, "ancestry", "x__y-1")
    with pytest.raises(ValueError, match=re.escape("Expects env.history 'ancestry' or 'none', actual value: 'all'")):
        await clean_history(mirror, future.base, "all", "x__y-1")


def test_history_is_checked_at_load():
    with pytest.raises(ValueError, match="env.history\n  Input should be 'ancestry' or 'none'"):
        GymConfig.model_validate({"env": {"history": "all"}})


def mirror_config(tmp_path: Path, future, deployment: dict, history: str, **env) -> GymConfig:
    """A config whose mirror cache already holds every ref of the future repository (a --mirror clone)."""
    cache = tmp_path / "cache"
    if not (cache / "mirrors").exists():
        mirror_clone(future, cache)
    return GymConfig.model_validate({"deployment": deployment, "env": {"cache_dir": str(cache), "mirrors": {REPO: str(future.path)},
                                                                       "history": history, "workspace": "mirror", **env}})  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("deployment_type", ["local", "docker"])
async def test_a_mirror_workspace_shows_no_future(tmp_path, future, deployment_type, mode, request):
    deployment = {"type": deployment_type}
    if deployment_type == "docker":
        deployment["image"] = request.getfixturevalue("docker_image")
    else:
        deployment["workdir"] = str(tmp_path / "workdir" / "testbed")
    env = AsyncSWEEnv(mirror_config(tmp_path, future, deployment, mode))
    try:
        await env.reset(options={"instance": future.row(needs_environment=False)})
        start = env.episode.start_commit
        output = (await env.step(bash(LOOK_FOR_THE_FUTURE)))[0]
        files = (await env.step(bash("cat calc.py")))[0]
    finally:
        await env.close()
    assert leaks(output, future) == []
    [(commit, parents, tree, subject)] = head_history(output)
    assert (parents, tree, subject) == ([], future.git("rev-parse", f"{future.base}^{{tree}}"), "base" if mode == "ancestry" else START_MESSAGE)
    assert start == commit and (mode == "none" or commit == future.base)
    assert files == BUGGY


PYTHON_311 = shutil.which("python3.11")


@pytest.mark.needs(PYTHON_311 is not None, "a host Python 3.11 (python3.11 on PATH)")
async def test_a_local_reset_forgets_what_the_last_episode_planted(tmp_path, future):
    """Local with an environment (venv, environment commit, an ignored file the install made): the
    hooks, config, refs, commits, edits and deletions of one episode are gone at the next reset, the
    venv is reused, and the checkout has the same path and no future."""
    row = future.row()
    config = mirror_config(tmp_path, future, {"type": "local"}, "ancestry",
                           environments=str(environments_file(tmp_path, row["instance_id"])), interpreters={"3.11": PYTHON_311})  # fmt: skip
    workspace = local_workspace_dir(row["instance_id"], config)
    hook_ran = tmp_path / f"hook-ran-{secrets.token_hex(3)}"
    plant = (
        f"printf '#!/bin/sh\\ntouch {hook_ran}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout && "
        "git config core.hooksPath /tmp && git config alias.st status && git update-ref refs/heads/planted HEAD && "
        "git tag planted && echo '# edited' >> calc.py && rm build_stamp.txt && echo new > new_file.py && "
        "git -c user.name=a -c user.email=b commit -qam 'agent commit' && echo 'calc.py' >> .git/info/exclude"
    )
    env = AsyncSWEEnv(config)
    try:
        await env.reset(options={"instance": row})
        repo_dir, environment_commit = env.repo_dir, env.episode.start_commit
        stamp = workspace / "venv" / "uni-agent-gym-environment.json"
        made = stamp.stat().st_mtime_ns
        assert (await env.step(bash("cat build_stamp.txt; git log --format=%s")))[0] == "built\nuni-agent-gym environment\nbase\n"
        assert (await env.step(bash(plant)))[4]["exit_code"] == 0

        await env.reset(options={"instance": row})
        assert (env.repo_dir, env.episode.start_commit) == (repo_dir, environment_commit)
        assert stamp.stat().st_mtime_ns == made, "the venv must be reused"
        state = await env.step(bash(
            "ls .git/hooks | grep -v '[.]sample$'; git config --get core.hooksPath; git config --get alias.st; "
            "git status --porcelain; cat build_stamp.txt; ls new_file.py 2>&1; cat .git/info/exclude | grep -c calc; "
            "python -c 'import sys; print(sys.prefix)'"
        ))  # fmt: skip
        output = (await env.step(bash(LOOK_FOR_THE_FUTURE)))[0]
    finally:
        await env.close()
    assert state[0] == f"built\nls: cannot access 'new_file.py': No such file or directory\n0\n{workspace / 'venv'}\n"
    assert not hook_ran.exists()
    assert leaks(output, future) == []
    assert [(c, p, s) for c, p, _, s in head_history(output)] == [(environment_commit, [future.base], "uni-agent-gym environment"),
                                                                 (future.base, [], "base")]  # fmt: skip
    trusted = ["git", "--git-dir", str(trusted_git_dir(workspace))]
    assert subprocess.run(trusted + ["rev-parse", "environment", "start"], capture_output=True, text=True).stdout.split() == [environment_commit, future.base]


async def test_recreate_checkout_replaces_only_checkouts_made_here(tmp_path, future):
    config = mirror_config(tmp_path, future, {"type": "local", "workdir": str(tmp_path / "first")}, "ancestry")
    env = AsyncSWEEnv(config)
    try:
        await env.reset(options={"instance": future.row(needs_environment=False)})
    finally:
        await env.close()
    workspace = local_workspace_dir("uag-test__future-1", config)
    other = tmp_path / "elsewhere"
    await recreate_checkout(workspace, future.base, other)  # absent: made
    assert (other / "calc.py").read_text() == BUGGY
    (other / "calc.py").write_text("# the agent's\n")
    await recreate_checkout(workspace, future.base, other)  # made here: replaced, the old one deleted
    assert (other / "calc.py").read_text() == BUGGY and list(tmp_path.glob(".elsewhere.old-*")) == []
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("mine\n")
    with pytest.raises(WorkspaceError, match="is neither empty nor a git checkout that uni-agent-gym made"):
        await recreate_checkout(workspace, future.base, stray)
    (tmp_path / "link").symlink_to(other)
    with pytest.raises(WorkspaceError, match="is neither empty nor a git checkout that uni-agent-gym made"):
        await recreate_checkout(workspace, future.base, tmp_path / "link")
    assert (stray / "notes.txt").exists() and (other / "calc.py").exists()


# --- images (docker) ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_image(docker_image, tmp_path_factory):
    """`images build` of the future repository's row (network off, history ancestry); (repo, image)."""
    from uni_agent_gym.datasets import normalise
    from uni_agent_gym.workspaces.image_builder import build_instance_image
    from uni_agent_gym.specs import load_environments

    root = tmp_path_factory.mktemp("built")
    future = make_future_repo(root)
    row = future.row()
    config = mirror_config(root, future, {"type": "docker"}, "ancestry")
    environments = load_environments(environments_file(root, row["instance_id"]))
    name = asyncio.run(build_instance_image(normalise(row), config, environments, force=True, log=lambda message: None))
    return future, name


@pytest.fixture(scope="module")
def pulled_image(docker_image, tmp_path_factory):
    """An image whose /testbed is the future repository itself, on branch main at the base: every
    ref, the stash, notes, the replace ref, remote-tracking refs and reflogs left in."""
    from uni_agent_gym.workspaces.image_builder import docker_build

    root = tmp_path_factory.mktemp("pulled")
    future = make_future_repo(root)
    context = root / "context"
    shutil.copytree(future.path, context / "testbed", symlinks=True)
    (context / "Dockerfile").write_text(
        f"FROM {docker_image}\nCOPY testbed /testbed\nWORKDIR /testbed\n"
        f"RUN git --no-replace-objects checkout -q -B main {future.base} && git --no-replace-objects status --short\n"
    )
    docker_build(context, PULLED, lambda message: None)
    return future


async def image_episode(config: GymConfig, row: dict) -> tuple[str, str]:
    """The image the episode ran and what LOOK_FOR_THE_FUTURE showed in it."""
    env = AsyncSWEEnv(config)
    try:
        await env.reset(options={"instance": row})
        return env.deployment.config.image, (await env.step(bash(LOOK_FOR_THE_FUTURE)))[0]
    finally:
        await env.close()


def image_labels(name: str) -> tuple[str, dict]:
    from uni_agent_gym.deployments.docker import docker_client

    image = docker_client().images.get(name)
    return image.id, image.labels


@pytest.mark.parametrize("mode", MODES)
async def test_an_image_built_here_shows_no_future(built_image, mode):
    """Built clean (labelled ancestry, used as is); under `none` a derived image has one root commit with
    the base tree and the environment commit rebuilt on it (same trees)."""
    require_docker()
    future, name = built_image
    ran, output = await image_episode(GymConfig.model_validate({"deployment": {"type": "docker"}, "env": {"workspace": "image", "history": mode}}), future.row())
    assert image_labels(name)[1][HISTORY_LABEL] == "ancestry"
    assert ran == (name if mode == "ancestry" else name.replace(":latest", ":latest-history-none"))
    assert leaks(output, future) == []
    (environment, environment_parents, environment_tree, subject), (start, start_parents, start_tree, start_subject) = head_history(output)
    assert subject == "uni-agent-gym environment" and environment_parents == [start] and start_parents == []
    assert start_tree == future.git("rev-parse", f"{future.base}^{{tree}}")
    assert (start, start_subject) == ((future.base, "base") if mode == "ancestry" else (start, START_MESSAGE))


@pytest.mark.parametrize("mode", MODES)
async def test_an_image_from_a_registry_is_derived_clean_once(pulled_image, mode):
    """A pulled image (no history label) is derived once per source image and mode; the derived image
    carries the source's id, and the next reset runs it without deriving again."""
    require_docker()
    future = pulled_image
    config = GymConfig.model_validate({"deployment": {"type": "docker"}, "env": {"workspace": "image", "history": mode}})
    row = future.row(image_name=PULLED)
    ran, output = await image_episode(config, row)
    derived = f"{PULLED}-history-{mode}"
    assert ran == derived
    assert leaks(output, future, allowed_branch="main") == []
    [(start, parents, tree, subject)] = head_history(output)
    assert (parents, tree) == ([], future.git("rev-parse", f"{future.base}^{{tree}}"))
    assert (start, subject) == ((future.base, "base") if mode == "ancestry" else (start, START_MESSAGE))
    derived_id, labels = image_labels(derived)
    assert (labels[HISTORY_LABEL], labels[SOURCE_LABEL]) == (mode, image_labels(PULLED)[0])
    again, _ = await image_episode(config, row)
    assert again == derived and image_labels(derived)[0] == derived_id  # not derived again


async def test_a_new_pull_of_the_source_is_derived_again(pulled_image, tmp_path):
    """The derived image is tied to its source's id: after the source changes (a new pull), the clean
    image is derived again instead of the old source's being reused. (A running process keeps the
    answer it got first, so one run uses one image; the next process derives.)"""
    require_docker()
    from uni_agent_gym.workspaces.history_images import clean_image
    from uni_agent_gym.workspaces.image_builder import docker_build

    future, source = pulled_image, "uni-agent-gym-test/pulled-future-changing:latest"
    derived_ids = []
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "Dockerfile").write_text(f"FROM {PULLED}\nRUN echo {version} > /etc/pulled-version\n")
        docker_build(tmp_path / version, source, lambda message: None)
        derived = await asyncio.to_thread(clean_image, source, "ancestry", future.base, "/testbed", "never", lambda message: None)
        derived_id, labels = image_labels(derived)
        assert derived == f"{source}-history-ancestry" and labels[SOURCE_LABEL] == image_labels(source)[0]
        derived_ids.append(derived_id)
    assert derived_ids[0] != derived_ids[1]
    ran, output = await image_episode(GymConfig.model_validate({"deployment": {"type": "docker"}, "env": {"workspace": "image"}}),
                                      future.row(image_name=source))  # fmt: skip
    assert ran == f"{source}-history-ancestry" and leaks(output, future, allowed_branch="main") == []
