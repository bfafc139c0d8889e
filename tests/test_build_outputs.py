"""An agent's build never costs a correct fix: what a build makes stays out of the agent's patch.

An agent that runs the repository's own build or tests (`go test -c`, `make`) before it finishes leaves compiled
files in the repository. Where the repository has no `.gitignore` for them (a release tarball has none), they once
went into the patch: gin's 19 MB `gin.test` made the gold fix `patch_rejected`. Now the environment commit of an
image built here holds none of what its install made (recorded in `.git/info/exclude` instead), and the capture
leaves out the untracked files that are build outputs (ignored by the start's rules, untracked files of the image,
compiled code no gold patch adds), naming each in the report's `left_out`. A large text file is still the agent's.

Fixtures: the C toy (`tests/c_toy.py`) copied without its `.gitignore` (on the base image as a mirror, and as an
instance image whose install runs `make`), and gin-3227 in Go (`tests/language_fixtures.py`, its `.gitignore` names
no test binary)."""

from __future__ import annotations

import json
import shutil
import struct

import pytest

from tests import language_fixtures
from tests.c_toy import GOLD_PATCH, REPO
from tests.conftest import require_docker, run_to_completion
from tests.test_capture import EXPECTED_FILES, HONEST, agent_with, capture_image, sandboxes  # noqa: F401 (fixtures)
from tests.test_capture import REPO as CAPTURE_REPO
from tests.test_deployment_contract import graded_episode
from uni_agent_gym.config import GymConfig
from uni_agent_gym.instances import normalise, patch_files
from uni_agent_gym.rewards.build_outputs import output_kind

TYPED = "git apply <<'UAG_EOF'\n{}UAG_EOF"
TWENTY_MIB_OF_TEXT = "yes 'a line of notes the agent wrote by hand' | head -c 20971520 > notes.txt"


def elf(e_type: int, big_endian: bool = False) -> bytes:
    """The first bytes of an ELF file of type `e_type` (1 object, 2 executable, 3 shared object)."""
    return b"\x7fELF\x02" + (b"\x02" if big_endian else b"\x01") + b"\x01" + b"\x00" * 9 + struct.pack(">H" if big_endian else "<H", e_type)


CASES = [  # (path, first bytes, why it is left out: None when it is not)
    ("gin.test", elf(2), "compiled code (an ELF executable)"),
    ("src/arith.o", elf(1), "compiled code (an ELF object file)"),
    ("libfoo.so", elf(3, big_endian=True), "compiled code (an ELF executable or shared library)"),
    ("libfoo.a", b"!<arch>\n/               0", "a static library (an ar archive)"),
    ("target/debug/deps/libx.rlib", b"!<arch>\nlib.rmeta/", "a static library (an ar archive)"),
    ("Foo.class", b"\xca\xfe\xba\xbe\x00\x00\x00\x37", "compiled code (a Java class file or a Mach-O universal binary)"),
    ("a.out", b"\xcf\xfa\xed\xfe\x07\x00\x00\x01", "compiled code (a Mach-O binary)"),
    ("target/app.jar", b"PK\x03\x04\x14\x00", "a Java archive"),
    ("fixtures/data.zip", b"PK\x03\x04\x14\x00", None),  # a zip that is no Java archive: data a fix may add
    ("logo.png", b"\x89PNG\r\n\x1a\n", None),
    ("run.sh", b"#!/bin/sh\necho hi\n", None),
    ("src/fix.c", b"int add(int a, int b) { return a + b; }\n", None),
    ("ELF.txt", b"ELF is a format\n", None),
    ("empty", b"", None),
]


@pytest.mark.parametrize("path,head,kind", CASES, ids=[case[0] for case in CASES])
def test_compiled_code_and_archives_are_told_apart_from_what_a_fix_adds(path, head, kind):
    assert output_kind(path, head) == kind


def test_the_environment_commit_holds_no_build_output_and_the_recipe_change_rebuilds_images():
    """The instance layer commits the tracked files the install changed (`git add -u`, as swebench's `git commit -am`),
    and writes what the install made untracked into `.git/info/exclude`; an image built with the old recipe has another
    inputs digest, so `images build` (and the suite's fixtures) build it again instead of reusing it."""
    from uni_agent_gym.specs import EnvironmentSpec
    from uni_agent_gym.workspaces.image_builder import dockerfile, inputs_digest

    spec = EnvironmentSpec(python="3.11", requirements=[], install="make", test_command="./tests/check", language="c")
    text = dockerfile("uni-agent-gym/toolchain:c-x", spec)
    assert "git add -A" not in text and "git add -u" in text and ">> .git/info/exclude" in text
    old = text.replace(text[text.index("git add -u") : text.index("git commit")], "git add -A && ")
    assert inputs_digest(old, "c0ffee") != inputs_digest(text, "c0ffee")


async def test_the_engine_reads_a_files_first_bytes_from_the_layer_or_the_daemon_alike(sandboxes, monkeypatch):
    """`read_heads` (what a changed file is, without copying it whole): from the container's overlay2 layer on this
    host, else from the daemon's archive; the same answer both ways, a link never followed (one on the way out of the
    layer, to the host's /etc, read by the daemon inside the container instead)."""
    import asyncio

    from uni_agent_gym.deployments import overlay

    agent = await sandboxes()
    made = "cp /bin/true /srv/tool && printf 'text\\n' > /srv/notes && ln -s /etc /srv/out && mkdir /srv/dir && ln -s tool /srv/link"
    assert (await agent.run(made)).exit_code == 0
    paths = ["/srv/tool", "/srv/notes", "/srv/out", "/srv/dir", "/srv/link", "/srv/out/hostname", "/srv/missing"]
    from_layer = await asyncio.to_thread(agent.container.read_heads, paths, 20)
    monkeypatch.setattr(overlay, "head", lambda layers, path, size: None)  # as on a remote engine: the daemon answers
    from_daemon = await asyncio.to_thread(agent.container.read_heads, paths, 20)
    assert from_layer == from_daemon and set(from_layer) == set(paths) - {"/srv/missing"}, (from_layer, from_daemon)
    assert from_layer["/srv/tool"][1].startswith(b"\x7fELF") and from_layer["/srv/notes"] == (0o100644, b"text\n")
    assert [from_layer[path][1] for path in ("/srv/out", "/srv/dir", "/srv/link")] == [b""] * 3


async def test_the_containers_capture_names_each_ignored_path_once(sandboxes):
    """The capture test's honest work (`tests/test_capture.py`) makes a directory, a bytecode directory and a log that
    its `.gitignore` ignores: each named once with the rule that ignores it, nothing under them listed."""
    from uni_agent_gym.rewards.capture import capture_from_container

    agent, start = await agent_with(sandboxes, HONEST, "mkdir -p build/lib/deeper && printf junk > build/lib/deeper/y.py")
    patch = await capture_from_container(agent, await sandboxes(), CAPTURE_REPO, start, 1_000_000)
    assert set(patch_files(patch)) == EXPECTED_FILES
    assert patch.left_out == {"build": "ignored by .gitignore (build/)", "debug.log": "ignored by .gitignore (*.log)",
                              "pkg/__pycache__": "ignored by .gitignore (__pycache__/)"}  # fmt: skip


@pytest.mark.parametrize("where", ["in the sandbox", "on the host"])
async def test_git_in_the_sandbox_and_on_the_host_leave_compiled_files_out_too(tmp_path, where):
    """The other two captures (modal and `reward.sandbox: same`; local), on a host checkout: a new executable (a copy
    of /bin/true) and object file are left out and named, a new script and text file are the agent's; a text file
    over the limit is refused with its name, the build outputs named apart."""
    import subprocess

    from uni_agent_gym.deployments import make_deployment
    from uni_agent_gym.rewards.capture import PatchRejected, capture_in_sandbox, capture_on_host

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t.invalid", "-c", "user.name=t"]
    (repo / "arith.c").write_text("int add(int a, int b) { return a - b; }\n")
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    start = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    agent = make_deployment({"type": "local", "workdir": str(repo)})
    await agent.start()

    async def capture(max_bytes: int):
        if where == "on the host":
            return await capture_on_host(repo / ".git", str(repo), start, max_bytes)
        return await capture_in_sandbox(agent, str(repo), start, max_bytes)

    try:
        work = "sed -i 's/a - b/a + b/' arith.c && cp /bin/true tool && cc -c arith.c -o arith.o && printf '#!/bin/sh\\n./tool\\n' > run.sh && echo notes > notes.txt"
        assert (await agent.run(work)).exit_code == 0
        patch = await capture(1_000_000)
        assert patch_files(patch) == ["arith.c", "notes.txt", "run.sh"], patch
        assert patch.left_out == {"arith.o": "compiled code (an ELF object file)", "tool": "compiled code (an ELF executable or shared library)"}
        assert (await agent.run("head -c 2000000 /dev/zero | tr '\\0' x > big.txt")).exit_code == 0
        with pytest.raises(PatchRejected, match=r"more than reward.max_patch_bytes \(1000000\); its largest file: big.txt \(2000000 bytes\); left out as not the agent's fix: arith.o, tool$"):
            await capture(1_000_000)
    finally:
        await agent.stop()


@pytest.fixture(scope="module")
def untracked_toy(tmp_path_factory, docker_image):
    """The C toy with no `.gitignore` (as from a release tarball), on the base image as a mirror: `make` writes
    `tests/check`, which nothing ignores. Its row, deployment and env sections, and its source directory."""
    from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

    require_docker()
    cache = tmp_path_factory.mktemp("build-outputs")
    source = cache / "c-toy-no-ignores"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".gitignore", "check"))
    repo = "uag-tests/c-toy-no-ignores"
    base_commit = run_to_completion(head_commit(run_to_completion(mirror_repository(repo, str(source), str(cache)))))
    row = normalise({
        "instance_id": "uag-tests__c-toy-no-ignores-1", "repo": repo, "base_commit": base_commit, "version": "1",
        "problem_statement": "add(2, 3) returns -1: add() must return the sum of its arguments.",
        "patch": GOLD_PATCH, "test_patch": "", "language": "c", "family": "swe-bench",
        "build_command": "make", "test_command": "./tests/check", "log_parser": "parse_log_redis",
        "FAIL_TO_PASS": ["add of two numbers", "add of a negative number"], "PASS_TO_PASS": ["add of zeros"],
        "mirror": str(source), "needs_environment": False,
    })  # fmt: skip
    return row, {"type": "docker", "image": docker_image}, {"cache_dir": str(cache), "workspace": "mirror"}, source


def configured(deployment: dict, env: dict) -> GymConfig:
    return GymConfig.model_validate({"deployment": deployment, "env": env})


async def test_the_gold_fix_then_make_earns_one_with_the_binary_left_out(untracked_toy):
    row, deployment, env, _ = untracked_toy
    report = await graded_episode(configured(deployment, env), row, [TYPED.format(GOLD_PATCH), "make", "./tests/check"])
    assert (report["status"], report["reward"]) == ("resolved", 1.0), (report["status"], report["error"])
    assert report["left_out"] == {"tests/check": "compiled code (an ELF executable or shared library)"}, report["left_out"]
    assert patch_files(report["patch"]) == ["arith.c"], report["patch"]


async def test_a_large_text_file_beside_the_build_is_still_the_agents(untracked_toy):
    row, deployment, env, _ = untracked_toy
    report = await graded_episode(configured(deployment, env), row, [TYPED.format(GOLD_PATCH), "make", TWENTY_MIB_OF_TEXT])
    assert (report["status"], report["reward"], report["caused_by"]) == ("patch_rejected", 0.0, "patch"), report
    assert "(at notes.txt)" in report["error"] and "tests/check" in report["error"], report["error"]


async def test_a_fix_hidden_in_a_compiled_object_does_not_reach_grading(untracked_toy):
    """The hack a leave-out rule could open: the agent leaves the bug in the source, compiles a correct `add` into an
    object file and makes the build link it. The object is left out of the patch, so the grading sandbox (the start plus
    the patch) has no such file: the build fails there, 0.0. In the agent's own sandbox the same work passes."""
    row, deployment, env, _ = untracked_toy
    commands = [
        "printf 'int fixed_add(int a, int b) { return a + b; }\\n' > /tmp/fixed.c && cc -c /tmp/fixed.c -o fixed.o",
        "sed -i 's/return a - b;/int fixed_add(int, int); return fixed_add(a, b);/' arith.c",
        "sed -i 's| arith.c$| arith.c fixed.o|' Makefile",
        "make && ./tests/check | grep -v err",
    ]
    report = await graded_episode(configured(deployment, env), row, commands)
    assert (report["status"], report["reward"]) == ("unresolved", 0.0), report
    assert report["left_out"] == {"fixed.o": "compiled code (an ELF object file)", "tests/check": "compiled code (an ELF executable or shared library)"}
    assert report["error"].startswith("the build failed") and "fixed.o" in report["build_log"], report["build_log"][-2000:]


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a new machine first builds the C toolchain image
async def test_on_an_image_whose_install_built_it_and_on_one_pulled_without_that_record(untracked_toy, tmp_path):
    """The toy as an instance image whose install runs `make`: `tests/check` is in the image, untracked, and the
    environment commit does not hold it (the old recipe's `git add -A` committed it, and the agent's `make` changed
    it); `.git/info/exclude` records it, so the agent's `git status` is clean. The agent's fix and `make`: 1.0,
    `tests/check` left out as ignored. Then the same image with that record removed, as a pulled image has none (the
    official images commit with `git commit -am`): the rebuilt `tests/check` is left out as the image's untracked file."""
    from tests.c_toy import REPO_NAME
    from tests.fixture_sources import BUILD_CACHE
    from tests.test_image_builder import remove_image
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.toolchains import TOOLCHAIN_PYTHON
    from uni_agent_gym.workspaces.base_images import bootstrap_base
    from uni_agent_gym.workspaces.image_builder import build_instance_image, docker_build

    row, _, _, source = untracked_toy
    bootstrap_base(TOOLCHAIN_PYTHON, log=lambda message: None)
    built, pulled = "uni-agent-gym-test/no-ignores-built:latest", "uni-agent-gym-test/no-ignores-pulled:latest"
    row = row.replace(needs_environment=True, image_name=built)
    environments = {row.instance_id: {"instance_id": row.instance_id, "install_cmd": "make"}}
    config = GymConfig.model_validate({"env": {"cache_dir": str(BUILD_CACHE), "mirrors": {row.repo: str(source), REPO_NAME: str(REPO)}}})
    try:
        await build_instance_image(row, config, environments, log=lambda message: None)
        listing = docker_client().containers.run(built, ["sh", "-c", "git ls-files; echo ==; git status --porcelain --ignored; echo ==; "
                                                         "grep -v '^#' .git/info/exclude"], remove=True, network_disabled=True).decode()  # fmt: skip
        tracked, status, excluded = listing.split("==\n")
        assert "tests/check\n" not in tracked and status == "!! tests/check\n" and excluded == "/tests/check\n", listing
        (tmp_path / "Dockerfile").write_text(f"FROM {built}\nRUN rm .git/info/exclude\n")
        docker_build(tmp_path, pulled, lambda line: None)
        (tmp_path / "environments.json").write_text(json.dumps(list(environments.values())))
        env = {"cache_dir": str(BUILD_CACHE), "workspace": "image", "environments": str(tmp_path / "environments.json")}
        for image, why in ((built, "ignored by .git/info/exclude (/tests/check)"), (pulled, "untracked in the start commit: the image's own file")):
            report = await graded_episode(configured({"type": "docker"}, env), row.replace(image_name=image).to_dict(), [TYPED.format(GOLD_PATCH), "make"])
            assert (report["status"], report["reward"], report["left_out"]) == ("resolved", 1.0, {"tests/check": why}), (image, report)
    finally:
        remove_image(built)
        remove_image(pulled)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a new machine first builds the Go toolchain and gin's image
def test_the_go_gold_fix_then_go_test_c_earns_one():
    """swebench's own Go specs run `go test -c`; its test binary (19 MB for gin) once made the gold fix
    `patch_rejected` ("larger than reward.max_patch_bytes (at gin.test)")."""
    instance_id = "gin-gonic__gin-3227"
    raw = language_fixtures.derived_rows()[instance_id]
    run_to_completion(language_fixtures.ensure_images([raw]))
    row = normalise(raw)
    env = {"workspace": "image", "environments": str(language_fixtures.ENVIRONMENTS)}
    report = run_to_completion(graded_episode(configured({"type": "docker"}, env), raw, [TYPED.format(row.patch), "go test -c"]))
    assert (report["status"], report["reward"]) == ("resolved", 1.0), (report["status"], report["error"])
    assert report["left_out"] == {"gin.test": "compiled code (an ELF executable)"}, report["left_out"]
