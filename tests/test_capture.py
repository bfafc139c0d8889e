"""Capturing the agent's patch without trusting its sandbox (`uni_agent_gym.rewards.capture`).

A small repository image (built here on the base image) stands for an instance: the agent's edits are
made in one container, the patch is computed from the Docker daemon's view of it in a second, fresh
container, and applied to a third to check that it carries exactly the agent's work. Every tampering
with the agent's own sandbox must leave the patch unchanged.
"""

from __future__ import annotations

import io
import os
import shlex

import pytest

from tests.conftest import require_docker
from tests.test_diffs import AWKWARD
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards.capture import PatchRejected, capture_from_container, capture_in_sandbox, capture_on_host

IMAGE = "uni-agent-gym/test-capture:1"
REPO = "/testbed"
DOCKERFILE = f"""FROM {{base}}
RUN mkdir -p {REPO}/pkg/sub {REPO}/docs && cd {REPO} && git init -q \\
 && printf 'a = 1\\n' > pkg/__init__.py && printf 'def f():\\n    return 1\\n' > pkg/mod.py \\
 && printf 'x\\n' > pkg/sub/data.txt && printf 'keep\\n' > pkg/sub/tracked.log \\
 && printf '*.log\\nbuild/\\n__pycache__/\\n' > .gitignore && printf 'doc\\n' > docs/index.txt \\
 && printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh && printf '\\000\\001\\002' > blob.bin \\
 && git add -f -A && git -c user.email=t@t.invalid -c user.name=t commit -qm base
WORKDIR {REPO}
"""
HONEST = (
    "printf 'def f():\\n    return 2\\n' > pkg/mod.py && printf 'new = True\\n' > pkg/new.py && rm docs/index.txt "
    "&& mkdir -p pkg/added/deeper && printf 'y\\n' > pkg/added/deeper/z.py && chmod -x run.sh "
    "&& printf '\\003\\004' > blob.bin && printf 'changed\\n' > pkg/sub/tracked.log "
    # what git ignores must not reach the patch (nor be copied out)
    "&& mkdir -p build/lib pkg/__pycache__ && printf junk > build/lib/x.py && printf junk > pkg/__pycache__/mod.pyc "
    "&& printf junk > debug.log"
)
EXPECTED_FILES = {"blob.bin", "docs/index.txt", "pkg/added/deeper/z.py", "pkg/mod.py", "pkg/new.py", "pkg/sub/tracked.log", "run.sh"}


@pytest.fixture(scope="session")
def capture_image(docker_image) -> str:
    """The small repository on the base image, built once."""
    from uni_agent_gym.deployments.docker import docker_client, image_exists

    if not image_exists(IMAGE):
        dockerfile = io.BytesIO(DOCKERFILE.format(base=docker_image).encode())
        docker_client().images.build(fileobj=dockerfile, tag=IMAGE, network_mode="none", rm=True)
    return IMAGE


@pytest.fixture
async def sandboxes(capture_image):
    """Starts docker sandboxes of the capture image; stops them all."""
    require_docker()
    started = []

    async def start():
        deployment = make_deployment({"type": "docker", "image": capture_image, "workdir": REPO})
        await deployment.start()
        started.append(deployment)
        return deployment

    yield start
    for deployment in started:
        await deployment.stop()


async def head(deployment) -> str:
    return (await deployment.run("git rev-parse HEAD")).output.strip()


async def agent_with(sandboxes, *commands: str):
    agent = await sandboxes()
    start = await head(agent)
    for command in commands:
        result = await agent.run(command)
        assert result.exit_code == 0, result.output
    return agent, start


async def tree_after(sandboxes, patch: str) -> str:
    """A listing (path, mode, content hash) of a fresh sandbox's files after applying `patch` with git."""
    target = await sandboxes()
    await target.write_file("/tmp/p.diff", patch)
    applied = await target.run("git apply --binary /tmp/p.diff")
    assert applied.exit_code == 0, applied.output
    return await listing(target)


async def listing(deployment) -> str:
    """Path, mode, type and content hash of every file git does not ignore here (the fixture's ignores)."""
    prune = "\\( -path ./.git -o -path ./build -o -name __pycache__ -o -name debug.log \\) -prune -o"
    result = await deployment.run(
        f"find . {prune} \\( -type f -o -type l \\) -printf '%p %m %y %l\\n' | LC_ALL=C sort; "
        f"find . {prune} -type f -print0 | LC_ALL=C sort -z | xargs -0 sha1sum"
    )
    assert result.exit_code == 0, result.output
    return result.output


async def test_the_patch_holds_exactly_the_agents_work(sandboxes):
    agent, start = await agent_with(sandboxes, HONEST)
    fresh = await sandboxes()
    patch = await capture_from_container(agent, fresh, REPO, start, 1_000_000)
    assert set(patch_files(patch)) == EXPECTED_FILES  # new, deleted, binary, mode-changed; nothing git ignores
    assert "old mode 100755\nnew mode 100644" in patch and "GIT binary patch" in patch and "deleted file mode" in patch
    assert await tree_after(sandboxes, patch) == await listing(agent)
    assert (await fresh.run("ls /tmp; git status --porcelain")).output.strip() == "", "the fresh sandbox is left as it was"


async def test_no_change_is_an_empty_patch(sandboxes):
    agent, start = await agent_with(sandboxes, "mkdir -p pkg/__pycache__ && printf junk > pkg/__pycache__/x.pyc && touch pkg/mod.py")
    assert await capture_from_container(agent, await sandboxes(), REPO, start, 1_000_000) == ""


TAMPERING = {
    "shell state": "git() { echo 'diff --git a/x b/x'; }; export -f git; export GIT_DIR=/nowhere PATH=/tmp/fake:$PATH",
    "a git wrapper earlier on PATH": "mkdir -p /usr/local/bin && printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/git && chmod +x /usr/local/bin/git",
    "git hooks": "for h in pre-commit post-index-change post-checkout reference-transaction; do printf '#!/bin/sh\\nrm -rf /testbed/pkg\\n' > .git/hooks/$h; chmod +x .git/hooks/$h; done",
    "git config": "git config diff.external /bin/false && git config core.fsmonitor 'rm -rf /testbed' && git config core.excludesFile /dev/null "
                  "&& git config filter.hide.clean 'echo hidden' && printf '* filter=hide\\n*.py -diff\\n' > .git/info/attributes",
    "a tampered index": "git update-index --assume-unchanged pkg/mod.py && git update-index --skip-worktree docs/index.txt 2>/dev/null; true",
    "a moved HEAD and replace refs": "git -c user.email=a@a -c user.name=a commit -qam wip && git replace $(git rev-parse HEAD~1) HEAD && git reset -q --soft HEAD~1",
    "a process rewriting files": "(setsid sh -c 'while true; do for n in 3 2; do printf \"def f():\\n    return $n\\n\" > build/t && mv build/t pkg/mod.py; done; done' >/dev/null 2>&1 &)",
}  # fmt: skip


@pytest.mark.parametrize("tampering", list(TAMPERING), ids=list(TAMPERING))
async def test_tampering_with_the_agents_sandbox_does_not_change_the_patch(sandboxes, tampering):
    honest, start = await agent_with(sandboxes, HONEST)
    expected = await capture_from_container(honest, await sandboxes(), REPO, start, 1_000_000)
    agent, start = await agent_with(sandboxes, HONEST, TAMPERING[tampering])
    patch = await capture_from_container(agent, await sandboxes(), REPO, start, 1_000_000)
    if tampering == "a process rewriting files":  # frozen mid-loop: either of the two contents it writes
        assert set(patch_files(patch)) == EXPECTED_FILES and ("+    return 2" in patch or "+    return 3" in patch)
    else:
        assert patch == expected


REJECTED = {
    "a symlink to an absolute path": ("ln -s /etc/passwd pkg/leak.py", "points outside the repository"),
    "a symlink climbing out": ("ln -s ../../../etc/shadow pkg/sub/leak", "points outside the repository"),
    "a fifo": ("mkfifo pkg/pipe", "special file"),
    "changed files over the limit": ("head -c 300000 /dev/urandom > big.bin", "larger than reward.max_patch_bytes"),
    "a patch over the limit": ("seq 1 40000 > numbers.txt", "more than reward.max_patch_bytes"),
}


@pytest.mark.parametrize("case", list(REJECTED), ids=list(REJECTED))
async def test_what_a_patch_cannot_hold_is_rejected_with_its_reason(sandboxes, case):
    command, reason = REJECTED[case]
    agent, start = await agent_with(sandboxes, command)
    with pytest.raises(PatchRejected, match=reason):
        await capture_from_container(agent, await sandboxes(), REPO, start, 250_000)


async def test_a_symlink_inside_the_repository_is_kept(sandboxes):
    agent, start = await agent_with(sandboxes, "ln -s ../mod.py pkg/sub/alias.py")
    patch = await capture_from_container(agent, await sandboxes(), REPO, start, 1_000_000)
    assert "new file mode 120000" in patch and "+../mod.py" in patch


@pytest.mark.parametrize("kind", ["local", "docker"])
async def test_in_sandbox_capture_ignores_the_shell_path_hooks_and_index(sandboxes, kind, tmp_path):
    """The fallback for sandboxes the gym cannot see into: /usr/bin/git, no hooks, a private index."""
    if kind == "docker":
        agent, start = await agent_with(sandboxes, HONEST)
        expected = await capture_from_container(agent, await sandboxes(), REPO, start, 1_000_000)
    else:
        import subprocess

        repo = tmp_path / "repo"
        repo.mkdir()
        agent = make_deployment({"type": "local", "workdir": str(repo)})
        await agent.start()
        setup = DOCKERFILE.split("RUN ", 1)[1].split("\nWORKDIR")[0].replace("\\\n", "").replace(REPO, str(repo))
        subprocess.run(["bash", "-c", setup], check=True, capture_output=True)
        start = await head(agent)
        assert (await agent.run(HONEST)).exit_code == 0
        expected = None
    tamper = TAMPERING["shell state"] + "; " + TAMPERING["git hooks"] + "; " + TAMPERING["a tampered index"]
    assert (await agent.run(tamper)).exit_code == 0
    try:
        patch = await capture_in_sandbox(agent, str(tmp_path / "repo") if kind == "local" else REPO, start, 1_000_000)
    finally:
        if kind == "local":
            await agent.stop()
    assert set(patch_files(patch)) == EXPECTED_FILES
    if expected is not None:
        assert patch == expected


def creating(files: dict[bytes, bytes]) -> str:
    """A shell command writing each file (name and content as bytes, directories made) with python3."""
    script = f"import os\nfor name, data in {files!r}.items():\n    os.makedirs(os.path.dirname(name) or '.', exist_ok=True)\n    open(name, 'wb').write(data)\n"
    return f"python3 -c {shlex.quote(script)}"


# Every awkward name as a new file, a text file that is not UTF-8, and a tracked file changed to bytes that are not
AWKWARD_WORK = {**{name: b"x\n" for name in AWKWARD.values() if name != b"pkg/mod.py"},
                b"latin1.txt": b"caf\xe9\n", b"pkg/mod.py": b"def f():\n    return '\xff'\n"}  # fmt: skip


def touched(patch: str) -> list[bytes]:
    return sorted(os.fsencode(path) for path in patch_files(patch))


async def test_awkward_names_and_content_that_is_not_utf8_are_captured_as_they_are(sandboxes):
    """Names with newlines, quotes, spaces, a leading dash, other scripts or bytes that are not UTF-8, and
    content that is not UTF-8: the patch is text (it goes into JSON and reports), names every file, and
    applied elsewhere gives exactly the agent's files."""
    agent, start = await agent_with(sandboxes, creating(AWKWARD_WORK))
    patch = await capture_from_container(agent, await sandboxes(), REPO, start, 1_000_000)
    assert touched(patch) == sorted(AWKWARD_WORK)
    assert "\ufffd" not in patch and patch.count("GIT binary patch") == 2, "the two files that are not UTF-8 go as binary"
    assert await tree_after(sandboxes, patch) == await listing(agent)


@pytest.mark.parametrize("kind", ["in the sandbox", "on the host"])
async def test_awkward_names_are_captured_by_git_in_the_sandbox_and_on_the_host(sandboxes, kind, tmp_path):
    """The other two captures (modal and `reward.sandbox: same`; local), on a host checkout of the same repository."""
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    setup = DOCKERFILE.split("RUN ", 1)[1].split("\nWORKDIR")[0].replace("\\\n", "").replace(REPO, str(repo))
    subprocess.run(["bash", "-c", setup], check=True, capture_output=True)
    agent = make_deployment({"type": "local", "workdir": str(repo)})
    await agent.start()
    try:
        start = await head(agent)
        assert (await agent.run(creating(AWKWARD_WORK))).exit_code == 0
        if kind == "on the host":
            patch = await capture_on_host(repo / ".git", str(repo), start, 1_000_000)
        else:
            patch = await capture_in_sandbox(agent, str(repo), start, 1_000_000)
        expected = await listing(agent)
    finally:
        await agent.stop()
    assert touched(patch) == sorted(AWKWARD_WORK) and "\ufffd" not in patch
    assert await tree_after(sandboxes, patch) == expected
