"""The contract every deployment keeps, run against local, docker and the Modal stand-in alike."""

from __future__ import annotations

import asyncio
import hashlib
import re
import resource
import secrets

import pytest
import pytest_asyncio

from tests.conftest import DEPLOYMENT_TYPES, SESSION_RUN_ID
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.errors import DeploymentNotStartedError, SandboxDiedError, SandboxFileNotFoundError
from uni_agent_gym.rewards.swebench import EMPTY_PATCH

RESTART_NOTE = "a new shell session was started"
# The tests that leave a sandbox as they found it (they read, write under a fresh name and run commands; none
# kills the shell, times out, exits or stops it) share one started sandbox of each type: starting one is most
# of such a test's time (a second on docker, three on ray). The others get a `deployment` of their own.
SHARED = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=DEPLOYMENT_TYPES)
async def sandbox(request):
    """One started deployment of each type for the module's sharing tests (its containers carry a run id of
    their own under the session's, so the per-test container checks leave them and the session's finds them)."""
    kind = request.param
    options: dict = {"type": kind, "command_timeout": 60}
    if kind in ("docker", "ray"):
        options["run_id"] = f"{SESSION_RUN_ID}-shared-{kind}"
    if kind in ("docker", "ray"):
        options["image"] = request.getfixturevalue("docker_image")
    if kind == "ray":
        options = {**request.getfixturevalue("ray_cluster").deployment(), **options}
    with pytest.MonkeyPatch.context() as patch:
        if kind == "modal":
            from tests import modal_standin

            modal_standin.install(patch)
        deployment = make_deployment(options)
        await deployment.start()
        try:
            yield deployment
        finally:
            await deployment.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def scratch(sandbox):
    """A directory of the test's own in the shared sandbox, removed after it (on local it is this machine's /tmp)."""
    directory = f"/tmp/uag-contract-{secrets.token_hex(4)}"
    yield directory
    await sandbox.run(f"rm -rf {directory}")


def count_processes(pattern: str) -> str:
    """A command printing how many processes have `pattern` in their command line (no ps needed)."""
    return (
        "n=0; for f in /proc/[0-9]*/cmdline; do "  # 2> before <: a process gone since the glob fails the redirection
        f"tr '\\0' ' ' 2>/dev/null < $f | grep -q -- '{pattern}' && n=$((n+1)); done; echo $n"
    )


async def test_cwd_and_exported_variables_persist(deployment):
    assert (await deployment.run("cd /tmp && export UAG_VALUE='a b'")).exit_code == 0
    result = await deployment.run('pwd; echo "$UAG_VALUE"')
    assert result.output == "/tmp\na b\n"
    assert result.exit_code == 0 and not result.timed_out and not result.truncated


@pytest.mark.parametrize(
    "command, output, exit_code",
    [
        ("false", "", 1),
        ("echo to-stderr >&2; exit_code() { return 42; }; exit_code", "to-stderr\n", 42),
        ("ls /no/such/dir", "ls: cannot access '/no/such/dir': No such file or directory\n", 2),
        ("printf 'no newline'", "no newline", 0),
        ("printf 'two\\n\\n'", "two\n\n", 0),
        ("cat <<'EOF'\nline one\n$HOME stays literal\nEOF", "line one\n$HOME stays literal\n", 0),
        ("for i in 1 2 3; do\n  echo $i\ndone", "1\n2\n3\n", 0),
        ("{ echo grouped; }", "grouped\n", 0),
    ],
    ids=["false", "stderr-and-status", "missing-path", "no-newline", "blank-lines", "heredoc", "multiline", "group"],
)
@SHARED
async def test_output_and_exit_code(sandbox, command, output, exit_code):
    result = await sandbox.run(command)
    assert (result.output, result.exit_code) == (output, exit_code)


@SHARED
async def test_a_syntax_error_is_a_failed_command_not_a_hang(sandbox):
    """bash 5.2 mis-parses `{` on the line after an eval syntax error; the framing must not trip on it."""
    broken = await sandbox.run("echo 'unbalanced")
    assert broken.exit_code == 2 and "unexpected EOF while looking for matching" in broken.output
    result = await sandbox.run("{ echo ok; }")
    assert (result.output, result.exit_code) == ("ok\n", 0)


async def test_timeout_interrupts_the_command_inside_the_sandbox(deployment):
    await deployment.run("cd /tmp")
    seconds = 600 + secrets.randbelow(10_000)
    # bounded far below the sleep: a timeout that did not interrupt it fails here instead of hanging
    result = await asyncio.wait_for(deployment.run(f"sleep {seconds}", timeout=2), 120)
    assert result.timed_out and result.exit_code is None
    assert result.note == "", "the shell itself was not busy, so it must have survived"
    after = await deployment.run(count_processes(f"sleep {seconds}") + "; pwd")
    assert after.output == "0\n/tmp\n", "the sleep must be gone and the session (with its cwd) intact"


async def test_a_busy_shell_is_replaced_and_says_so(deployment):
    await deployment.run("cd /tmp")
    result = await deployment.run("while :; do :; done", timeout=1)
    assert result.timed_out and RESTART_NOTE in result.note
    after = await deployment.run("echo alive")
    assert (after.output, after.exit_code) == ("alive\n", 0)


async def test_exit_ends_the_shell_and_a_new_one_takes_over(deployment):
    result = await deployment.run("exit 3")
    assert result.exit_code == 3 and RESTART_NOTE in result.note
    assert (await deployment.run("echo back")).output == "back\n"


async def test_a_gigabyte_of_output_is_capped_without_memory_growth(deployment):
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await deployment.run("yes | head -c 1G", timeout=120)
    peak_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert result.exit_code == 0 and result.truncated
    limit = deployment.config.output_limit
    assert len(result.output.encode()) < limit + 100
    elided = int(re.search(r"\[\.\.\. (\d+) bytes of output elided \.\.\.\]", result.output).group(1))
    kept = len(result.output.encode()) - len(f"\n[... {elided} bytes of output elided ...]\n")
    assert kept + elided == 1 << 30
    assert result.output.startswith("y\ny\n") and result.output.endswith("y\ny\n")
    assert peak_growth_mb < 200


@SHARED
async def test_binary_output_is_replaced_not_raised(sandbox):
    result = await sandbox.run("printf 'ok\\377\\376\\000end'; head -c 4096 /dev/urandom")
    assert result.exit_code == 0
    assert result.output.startswith("ok\ufffd\ufffd\x00end")


@SHARED
async def test_a_fake_sentinel_cannot_end_a_command(sandbox):
    fakes = "".join(f"printf '\\n%s:0\\n' {secrets.token_hex(16)}; " for _ in range(3))
    result = await sandbox.run(fakes + "echo after; (exit 7)")
    assert result.exit_code == 7
    assert result.output.endswith("after\n")
    assert result.output.count(":0\n") == 3


@SHARED
async def test_commands_reading_stdin_get_eof(sandbox):
    result = await sandbox.run('cat; read -r line; echo "read=$? line=[$line]"', timeout=10)
    assert (result.output, result.exit_code, result.timed_out) == ("read=1 line=[]\n", 0, False)


@SHARED
async def test_missing_file(sandbox):
    with pytest.raises(SandboxFileNotFoundError, match="/no/such/file"):
        await sandbox.read_file("/no/such/file")
    with pytest.raises(FileNotFoundError):  # ours is also the builtin
        await sandbox.read_file("/no/such/file")
    with pytest.raises(IsADirectoryError):
        await sandbox.read_file("/tmp")
    result = await sandbox.run("cat /no/such/file")
    assert result.exit_code == 1 and "No such file" in result.output


@pytest.mark.parametrize(
    "name",
    ["plain.txt", "with space.txt", "ünïcødé – 文件.txt", "quote's \"double\".txt", "-starts-with-dash", "$(not run).txt"],
)
@SHARED
async def test_files_with_awkward_names(sandbox, scratch, name):
    directory = f"{scratch}/uag dir/sub dir"
    path = f"{directory}/{name}"
    await sandbox.write_file(path, "content ✓\n")
    assert await sandbox.read_file(path) == "content ✓\n".encode()
    listing = await sandbox.run(f"ls -- '{directory}'")
    assert listing.output == f"{name}\n"


@SHARED
async def test_binary_file_roundtrip(sandbox):
    data = bytes(range(256)) * 4096 + b"\n\x00tail"  # 1 MiB, every byte value, larger than the output cap
    await sandbox.write_file("/tmp/binary.bin", data)
    assert await sandbox.read_file("/tmp/binary.bin") == data
    size = await sandbox.run("wc -c < /tmp/binary.bin")
    assert int(size.output) == len(data)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "no newline at the end",
        "ünïcødé ✓ 文件\n\n\n",
        "  leading and trailing spaces  \n\ttab\r\ncrlf\\backslash\\n $HOME `x` '\"\n",
        "\ufffd is a real character here\n",
        "x" * 300_000 + "\n",  # larger than the command output cap
        "nul\x00inside\n",
    ],
    ids=["empty", "no-newline", "unicode", "shell-characters", "replacement-char", "large", "nul"],
)
@SHARED
async def test_read_text_is_exact(sandbox, scratch, content):
    """`read_text` (shell builtins, no process) returns exactly what `read_file` would, decoded."""
    path = f"{scratch}/text.txt"
    await sandbox.write_file(path, content)
    assert await sandbox.read_text(path) == content
    assert (await sandbox.run("echo ${__uag_text-unset}")).output == "unset\n"  # no variable left behind


@SHARED
async def test_read_text_errors(sandbox):
    await sandbox.write_file("/tmp/uag-latin1.txt", "caf\xe9".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        await sandbox.read_text("/tmp/uag-latin1.txt")
    with pytest.raises(SandboxFileNotFoundError):
        await sandbox.read_text("/no/such/file")
    with pytest.raises(IsADirectoryError):
        await sandbox.read_text("/tmp")


@SHARED
async def test_upload_a_directory_tree(sandbox, scratch, tmp_path):
    source = tmp_path / "src tree"
    (source / "nested dir").mkdir(parents=True)
    (source / "top.txt").write_text("top\n")
    (source / "nested dir" / "ünï.py").write_text("print('hi')\n")
    target = f"{scratch}/upload"
    await sandbox.upload(source, target)
    result = await sandbox.run(f"cd {target} && cat top.txt 'nested dir/ünï.py'")
    assert result.output == "top\nprint('hi')\n"
    await sandbox.upload(source / "top.txt", f"{target}/single/copy.txt")
    assert await sandbox.read_file(f"{target}/single/copy.txt") == b"top\n"


@SHARED
async def test_an_uploaded_tree_keeps_modes_links_and_large_files(sandbox, scratch, tmp_path):
    source = tmp_path / "tree"
    source.mkdir()
    (source / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (source / "run.sh").chmod(0o755)
    (source / "link").symlink_to("run.sh")
    blob = secrets.token_bytes(3 * 1024 * 1024 // 2)  # incompressible, past one upload chunk
    (source / "blob.bin").write_bytes(blob)
    target = f"{scratch}/upload"
    await sandbox.upload(source, target)
    result = await sandbox.run(f"cd {target} && ./link && readlink link && sha256sum blob.bin | cut -c1-64")
    assert result.output == f"ran\nrun.sh\n{hashlib.sha256(blob).hexdigest()}\n", result.output


async def test_separate_deployments_are_isolated_and_concurrent(deployment, deployment_factory):
    others = [deployment_factory(deployment.config.type, command_timeout=60) for _ in range(2)]
    await asyncio.gather(*(other.start() for other in others))
    marker = secrets.token_hex(4)
    await asyncio.gather(
        *(d.run(f"mkdir -p /tmp/{marker}-{i} && cd /tmp/{marker}-{i} && export WHO={i}") for i, d in enumerate(others))
    )
    results = await asyncio.gather(*(d.run("sleep 0.5; echo $WHO; pwd") for d in others))
    assert [r.output for r in results] == [f"{i}\n/tmp/{marker}-{i}\n" for i in range(2)]
    assert (await deployment.run("echo ${WHO:-unset}")).output == "unset\n"
    await asyncio.gather(*(d.run(f"cd / && rm -rf /tmp/{marker}-{i}") for i, d in enumerate(others)))


@SHARED
async def test_concurrent_commands_on_one_deployment_are_serialised(sandbox):
    results = await asyncio.gather(*(sandbox.run(f"echo start {i}; sleep 0.05; echo end {i}") for i in range(5)))
    assert [r.output for r in results] == [f"start {i}\nend {i}\n" for i in range(5)]


async def test_stop_while_a_command_runs(deployment):
    command = asyncio.create_task(deployment.run("sleep 45; echo finished", timeout=60))
    await asyncio.sleep(0.5)
    await deployment.stop()
    with pytest.raises(SandboxDiedError):
        await asyncio.wait_for(command, 20)
    assert not await deployment.is_alive()


async def test_lifecycle(deployment):
    assert await deployment.is_alive()
    await deployment.stop()
    await deployment.stop()  # idempotent
    assert not await deployment.is_alive()
    with pytest.raises(DeploymentNotStartedError, match="start"):
        await deployment.run("true")
    with pytest.raises(DeploymentNotStartedError):
        await deployment.read_file("/etc/hostname")


@pytest.mark.parametrize("kind", DEPLOYMENT_TYPES)
async def test_the_hosts_python_and_test_runner_variables_stay_outside(deployment_factory, kind, monkeypatch):
    """A host's PYTEST_ADDOPTS or PYTHONPATH (set for the outer pytest, say) must not reach the tests graded
    in the sandbox, on local either; other host variables do reach a local shell, and `env` sets any."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p host_plugin")
    monkeypatch.setenv("PYTHONPATH", "/host/path")
    monkeypatch.setenv("UAG_HOST_VALUE", "seen")
    deployment = deployment_factory(kind, env={"PYTHONWARNINGS": "ignore"})
    await deployment.start()
    result = await deployment.run('echo "${PYTEST_ADDOPTS-unset} ${PYTHONPATH-unset} ${PYTHONWARNINGS-unset} ${UAG_HOST_VALUE-unset}"')
    assert result.output == ("unset unset ignore seen\n" if kind == "local" else "unset unset ignore unset\n")


# ----- the reward: the same episode earns the same on every deployment and in every workspace mode -----

WORKSPACES = [("local", "mirror"), ("docker", "mirror"), ("docker", "image"), ("modal", "mirror"), ("ray", "mirror"), ("ray", "image")]


@pytest.fixture(scope="module")
def toy_cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("graded-toy-cache"))


async def graded_config(kind: str, workspace: str, row: dict, toy_cache: str, tmp_path, request, monkeypatch):
    """The config of a graded toy episode on `kind` in `workspace` mode; in image mode the row's image is built
    here (and pushed to the cluster's registry on ray)."""
    from uni_agent_gym.config import GymConfig
    from tests.graded_toy import graded_toy_image

    deployment: dict = {"type": kind}
    env: dict = {"cache_dir": toy_cache, "workspace": workspace}
    if kind in ("docker", "ray"):
        deployment["image"] = request.getfixturevalue("docker_image")
    if kind == "ray":
        cluster = request.getfixturevalue("ray_cluster")
        deployment = {**cluster.deployment(), **deployment}
    if workspace == "image":
        row["image_name"] = await graded_toy_image(row, deployment["image"], toy_cache)
        if kind == "ray":
            await asyncio.to_thread(cluster.push, row["image_name"])
    if kind == "modal":
        from tests import modal_standin

        modal_standin.install(monkeypatch)
        env["repo_dir"] = str(tmp_path / "testbed")  # each stand-in sandbox sees its own directory there
    return GymConfig.model_validate({"deployment": deployment, "env": env})


async def graded_episode(config, row: dict, commands: list[str]) -> dict:
    """The reward report of an episode that runs `commands`, then finishes."""
    from uni_agent_gym.envs import AsyncSWEEnv
    from uni_agent_gym.rewards.swebench import SWEBenchReward

    environment = AsyncSWEEnv(config, reward=SWEBenchReward.from_config(config))
    try:
        await environment.reset(options={"instance": row})
        for command in commands:
            _, _, _, _, info = await environment.step({"name": "execute_bash", "arguments": {"command": command}})
            assert info["exit_code"] == 0, info
        _, reward, terminated, _, info = await environment.step({"name": "finish", "arguments": {}})
        assert terminated and info["exit_reason"] == "finished" and info["reward_report"]["reward"] == reward, info
        return {**info["reward_report"], "reward": reward, "exit_reason": info["exit_reason"]}
    finally:
        await environment.close()


@pytest.mark.parametrize("kind,workspace", WORKSPACES, ids=[f"{kind}-{workspace}" for kind, workspace in WORKSPACES])
async def test_the_same_episode_earns_the_same_reward_everywhere(kind, workspace, toy_cache, tmp_path, request, monkeypatch):
    """Gold (applied by the agent, beside files whose names hold newlines, quotes, spaces, a leading dash, other
    scripts or bytes that are not UTF-8, a file whose content is not UTF-8, and a tracked file deleted) earns 1.0
    and its patch names every one of those files; the empty episode earns 0.0 with no test run (as the official
    harness does not grade an empty prediction). A one-line switch of `deployment.type` or
    `env.workspace` never changes a reward (a mirror on ray once made every reward 0: the copied-in repository
    was all "changed" to the daemon's diff)."""
    from tests.graded_toy import graded_toy_row
    from tests.test_capture import AWKWARD_WORK, creating, touched
    from uni_agent_gym import toy

    row = await graded_toy_row(toy_cache)
    config = await graded_config(kind, workspace, row, toy_cache, tmp_path, request, monkeypatch)
    work = {name: data for name, data in AWKWARD_WORK.items()}
    gold = f"{creating(work)} && rm README.md && git apply <<'UAG_EOF'\n{toy.GOLD_PATCH}UAG_EOF"

    solved, empty = await graded_episode(config, row, [gold]), await graded_episode(config, row, [])
    assert (solved["status"], solved["reward"]) == ("resolved", 1.0), solved
    assert touched(solved["patch"]) == sorted([*work, b"README.md", b"stats.py"]) and "\ufffd" not in solved["patch"]
    assert "deleted file mode" in solved["patch"]
    assert (empty["status"], empty["reward"], empty["patch"]) == ("unresolved", 0.0, ""), empty
    assert (empty["error"], empty["log"], empty["canaries"]) == (EMPTY_PATCH, "", {}), "an empty patch is not graded: no test runs"


@pytest.mark.parametrize("kind,workspace", WORKSPACES, ids=[f"{kind}-{workspace}" for kind, workspace in WORKSPACES])
async def test_a_task_in_c_is_built_then_graded_the_same_everywhere(kind, workspace, toy_cache, tmp_path, request, monkeypatch):
    """A C task (`tests/c_toy.py`) is built after the patch, before its tests: gold earns 1.0 with the build's
    output kept apart; a patch that does not compile and a build that prints every test as passed (the bug left)
    earn 0.0, unresolved (the agent's, never the infrastructure's), the same on every deployment."""
    from tests.c_toy import DOES_NOT_COMPILE, GOLD_PATCH, PASSES_PRINTED_BY_THE_BUILD, c_toy_row

    row = (await c_toy_row(toy_cache)).to_dict()  # a row: graded_config names its image in it
    config = await graded_config(kind, workspace, row, toy_cache, tmp_path, request, monkeypatch)
    typed = "git apply <<'UAG_EOF'\n{}UAG_EOF"
    solved, broken, forged = [await graded_episode(config, row, [typed.format(patch)]) for patch in (GOLD_PATCH, DOES_NOT_COMPILE, PASSES_PRINTED_BY_THE_BUILD)]
    assert (solved["status"], solved["reward"], solved["build_command"]) == ("resolved", 1.0, "make"), solved
    assert solved["test_statuses"] == dict.fromkeys(["add of two numbers", "add of a negative number", "add of zeros"], "PASSED")
    assert "-o tests/check" in solved["build_log"] and "-o tests/check" not in solved["log"]
    assert (broken["status"], broken["reward"], broken["caused_by"]) == ("unresolved", 0.0, None), broken
    assert broken["error"].startswith("the build failed") and "error" in broken["build_log"]
    assert (forged["status"], forged["reward"]) == ("unresolved", 0.0), forged
    assert forged["test_statuses"]["add of two numbers"] == "FAILED" and "[ok]: add of two numbers" in forged["build_log"]


@pytest.mark.parametrize("under", ["{scratch}", "{scratch}/.cache/uni-agent-gym/workspaces/x"])
@SHARED
async def test_a_directory_view_lists_the_same_everywhere(sandbox, scratch, under):
    """`str_replace_editor view DIR` hides what is hidden inside DIR, never DIR itself for a dot in its own path (a
    local workspace lives under ~/.cache: the listing was empty there, in demos and in training data)."""
    from uni_agent_gym.tools import make_tools

    root = under.format(scratch=scratch)
    for path in ("s.py", "sub/t.txt", "sub/deeper/u.txt", ".hidden/h.txt", "sub/.env"):
        await sandbox.write_file(f"{root}/{path}", "x\n")
    result = await make_tools()["str_replace_editor"].call(sandbox, {"command": "view", "path": root})
    assert result.output == (f"Here's the files and directories up to 2 levels deep in {root}, excluding hidden items:\n"
                           f"{root}\n{root}/s.py\n{root}/sub\n{root}/sub/deeper\n{root}/sub/t.txt\n\n")  # fmt: skip
