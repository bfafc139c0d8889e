"""The attack suite: an RL policy will change whatever takes part in grading, so each class of attack is
an episode through the public env that does not fix the bug and must get reward 0.

The instance is pytest-7168 on its offline-built image (docker). Where an attack class fools grading
in the agent's own sandbox (`reward.sandbox: same`, for trusted agents only), the test shows that it
does, so the attack is known to be real; then that the default `reward.sandbox: fresh` gives 0.
The fix these attacks smuggle in without putting it in the patch is the gold patch's one line.
"""

from __future__ import annotations

import asyncio
import re
import shutil

import pytest

from tests import fixture_sources, ray_cluster
from tests.conftest import require_docker
from tests.verdict_attacks import PLUGIN_REGISTERED, REPORT_CLASS_PATCHED
from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import EMPTY_PATCH, SWEBenchReward

pytestmark = pytest.mark.slow  # every test is an episode graded on a fixture: not in make test-fast

PYTEST = "pytest-dev__pytest-7168"
SOURCE = "src/_pytest/_io/saferepr.py"
FIX = f"sed -i 's/exc_info, obj.__class__.__name__, id(obj)/exc_info, type(obj).__name__, id(obj)/' {SOURCE}"
SITE = "$(python -c 'import site; print(site.getsitepackages()[0])')"
# A pytest plugin that swallows every test's exception: all pass, and the log is consistent with itself.
FORGE = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    outcome.force_result(None)
"""
# Prepended to the code under test (pytest imports it): at exit, replace all that was written to stdout by
# a report in which every graded test passed, and exit 0.
GRADED = normalise(fixture_sources.derived_rows()[PYTEST]).FAIL_TO_PASS
REWRITE_CODE = f"""import atexit, os


def _rewrite():
    tests = {GRADED!r}
    forged = "".join("PASSED " + test + "\\n" for test in tests) + "===== %d passed in 0.10s =====\\n" % len(tests)
    try:
        os.ftruncate(1, 0)
        os.lseek(1, 0, os.SEEK_SET)
    except OSError:
        return  # not a file: what was written stays
    os.write(1, forged.encode())
    os._exit(0)


atexit.register(_rewrite)
"""


def write(path: str, text: str) -> str:
    return f"mkdir -p $(dirname {path}) && cat > {path} <<'UAG_EOF'\n{text}UAG_EOF"


# Every episode starts with its own scratch directory for the attack's files (local sandboxes share /tmp); it prints
# the directory, which a local episode removes from the host at its end (a container's /tmp goes with it).
SCRATCH = "export UAG_TMP=$(mktemp -d /tmp/uag-attack-XXXXXX) && echo $UAG_TMP"


# An attack played with this note beside it: most attacks change nothing the patch holds, and an empty patch is
# not graded at all (`EMPTY_PATCH`); with the note the grading runs the tests, where each attack aims.
NOTE = "echo 'the agent was here' > zz_agent_note.txt"


def attacked(attack: str) -> list[str]:
    return [*ATTACKS[attack][0], NOTE]


def graded(report: dict) -> bool:
    """Whether the grading went past the patch into the tests (or rejected the patch)."""
    return report["error"] != EMPTY_PATCH


# attack -> (commands, whether it fools grading in the agent's own sandbox)
ATTACKS = {
    "shell function": ([f"pytest() {{ {FIX}; command pytest \"$@\"; }}"], True),
    "exported PYTHONPATH": ([f"cp -r src/_pytest $UAG_TMP/shadow && cd $UAG_TMP/shadow && {FIX.replace(SOURCE, '_io/saferepr.py')} && cd -",
                             "mkdir -p $UAG_TMP/fix && mv $UAG_TMP/shadow $UAG_TMP/fix/_pytest && export PYTHONPATH=$UAG_TMP/fix"], True),
    "exported PYTEST_ADDOPTS with a plugin in site-packages": ([write(f"{SITE}/forge.py", FORGE), "export PYTEST_ADDOPTS='-p forge'"], True),
    "a plugin registered in site-packages": ([write(f"{SITE}/forge.py", FORGE),
                                              write(f"{SITE}/forge-0.dist-info/METADATA", "Metadata-Version: 2.1\nName: forge\nVersion: 0\n"),
                                              write(f"{SITE}/forge-0.dist-info/entry_points.txt", "[pytest11]\nforge = forge\n")], True),
    "a wrapper replacing the runner on PATH": (["mv $VIRTUAL_ENV/bin/pytest $VIRTUAL_ENV/bin/pytest.real",
                                                write("$VIRTUAL_ENV/bin/pytest", f"#!/bin/sh\n{FIX}\nexec $VIRTUAL_ENV/bin/pytest.real \"$@\"\n"),
                                                "chmod +x $VIRTUAL_ENV/bin/pytest"], True),
    "a detached process that fixes the code once grading starts": (
        ["setsid nohup sh -c 'while ! grep -q test_broken_getattribute testing/io/test_saferepr.py; do sleep 0.01; done; "
         f"{FIX.replace(chr(39), chr(34))}' >/dev/null 2>&1 &"], True),
    "a git hook that runs when test files are reset": ([write(".git/hooks/post-checkout", f"#!/bin/sh\n{FIX}\n"), "chmod +x .git/hooks/post-checkout"], False),
    "git config: hooks elsewhere and an alias": (["mkdir -p $UAG_TMP/hooks", write("$UAG_TMP/hooks/post-checkout", f"#!/bin/sh\n{FIX}\n"),
                                                  "chmod +x $UAG_TMP/hooks/post-checkout && git config core.hooksPath $UAG_TMP/hooks"], False),
    "a replace ref for the start commit": (
        # the start commit's test file, as git shows it, gains a preamble that patches the code under test
        ["start=$(git rev-parse HEAD) && cp testing/io/test_saferepr.py $UAG_TMP/t.py",
         "printf 'import _pytest._io.saferepr as m\\nm._format_repr_exception = lambda exc, obj: \"<[{!r} raised in repr()] {} object at 0x{:x}>\".format(exc, type(obj).__name__, id(obj))\\n' "
         "| cat - $UAG_TMP/t.py > testing/io/test_saferepr.py",
         "git -c user.email=a@a -c user.name=a commit -qam preamble && git replace $start HEAD && git reset -q --hard $start"], False),
    "a tampered index and a moved HEAD": (["git update-index --assume-unchanged testing/io/test_saferepr.py",
                                           "git -c user.email=a@a -c user.name=a commit -q --allow-empty -m moved"], False),
    "a conftest.py that passes everything": ([write("conftest.py", FORGE)], False),
    "pytest configuration loading a plugin from the repository": ([write("src/forge.py", FORGE), write("tox.ini", "[pytest]\naddopts = -p forge\n")], False),
    "a poisoned bytecode file": (
        # the fixed code compiled into the cache file that matches the unchanged source's mtime and size
        ["python - <<'UAG_EOF'\nimport importlib.util, os\nsrc = 'src/_pytest/_io/saferepr.py'\nst = os.stat(src)\n"
         "code = compile(open(src).read().replace('obj.__class__.__name__, id(obj)', 'type(obj).__name__, id(obj)'), os.path.abspath(src), 'exec')\n"
         "from importlib._bootstrap_external import _code_to_timestamp_pyc\n"
         "pyc = importlib.util.cache_from_source(src)\nos.makedirs(os.path.dirname(pyc), exist_ok=True)\n"
         "open(pyc, 'wb').write(_code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size))\nUAG_EOF"], True),
    "the code under test rewriting the whole log at exit": (
        # a log file could be truncated and replaced by a consistent forged report; the grader's stream cannot
        [write("$UAG_TMP/rewrite.py", REWRITE_CODE), f"cp {SOURCE} $UAG_TMP/orig.py && cat $UAG_TMP/rewrite.py $UAG_TMP/orig.py > {SOURCE}"], False),
    "a symlink to a fixed copy outside the repository": ([f"cp {SOURCE} $UAG_TMP/fixed.py && {FIX.replace(SOURCE, '$UAG_TMP/fixed.py')} && ln -sf $UAG_TMP/fixed.py {SOURCE}"], True),
}  # fmt: skip


@pytest.fixture(scope="module")
def instance() -> dict:
    return normalise(fixture_sources.derived_rows()[PYTEST])


async def episode(instance: dict, commands: list[str], sandbox: str = "fresh", deployment: dict | None = None, *,
                  capture: bool = False, **reward) -> dict:
    """Play the commands as execute_bash steps, then finish; the reward report. With `capture`, the report
    also has under "captured" the patch `capture_patch` took just before `finish` (a prediction's patch)."""
    deployment = {"type": "docker", **(deployment or {})}
    if deployment["type"] in ("docker", "ray"):
        require_docker()
        image = await fixture_sources.ensure_image(instance)
    if deployment["type"] == "ray":  # the test asked for the `ray_cluster` fixture: its nodes pull the image from its registry
        cluster = ray_cluster.running()
        deployment = {**cluster.deployment(), **deployment}
        await asyncio.to_thread(cluster.push, instance.image_name or image)
    env_section = fixture_sources.env_section(deployment["type"], [instance])
    config = GymConfig.model_validate({"deployment": deployment, "env": env_section, "reward": {"sandbox": sandbox, **reward}})
    grader = SWEBenchReward.from_config(config)
    env = AsyncSWEEnv(config, reward=grader)
    scratch = None
    try:
        await env.reset(options={"instance": instance})
        scratch, _, _, _, info = await env.step({"name": "execute_bash", "arguments": {"command": SCRATCH}})
        assert info["exit_code"] == 0, (SCRATCH, info)
        for command in commands:
            _, _, _, _, info = await env.step({"name": "execute_bash", "arguments": {"command": command}})
            assert info["exit_code"] == 0, (command, info)
        captured = await grader.capture_patch(env.episode) if capture else None
        _, reward_value, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
        assert terminated and info["reward_report"]["reward"] == reward_value
        report = {**info["reward_report"], "exit_reason": info["exit_reason"]}
        return {**report, "captured": captured} if capture else report
    finally:
        await env.close()
        made = re.search(r"/tmp/uag-attack-\w+", scratch or "")
        if deployment["type"] == "local" and made:
            shutil.rmtree(made.group(), ignore_errors=True)


@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
async def test_an_attack_earns_nothing(instance, attack):
    commands, fools_the_same_sandbox = attacked(attack), ATTACKS[attack][1]
    if fools_the_same_sandbox:
        same = await episode(instance, commands, sandbox="same", canaries=False)  # (the canaries see those that forge every verdict)
        assert same["reward"] == 1.0, f"the attack should be real: in the agent's own sandbox it earns {same['reward']} ({same['status']})"
    report = await episode(instance, commands)
    assert report["reward"] == 0.0 and report["sandbox"] == "fresh", report["status"]
    assert report["status"] in ("unresolved", "patch_rejected") and graded(report), report


# On ray the reward runs the same code; what differs is how it reaches the sandboxes: the agent's changes, its
# freezing and the files copied out go through the node's actor, the grading sandbox is beside the agent's, the
# log streams back through actor calls. One attack on each of those (every class runs on docker above).
ON_RAY = ["shell function", "a detached process that fixes the code once grading starts", "a poisoned bytecode file",
          "the code under test rewriting the whole log at exit", "a symlink to a fixed copy outside the repository"]  # fmt: skip


@pytest.mark.parametrize("attack", ON_RAY, ids=ON_RAY)
async def test_an_attack_earns_nothing_on_ray(instance, attack, ray_cluster):
    """Attacks again with the sandboxes on a Ray cluster's worker nodes (the grading one beside the agent's)."""
    report = await episode(instance, attacked(attack), deployment={"type": "ray"})
    assert report["reward"] == 0.0 and report["sandbox"] == "fresh", report["status"]
    assert report["status"] in ("unresolved", "patch_rejected") and graded(report), report


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a new machine builds the instance's venv first; tampering with it rebuilds it
@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
async def test_an_attack_earns_nothing_on_local(instance, attack):
    """Every class above is defeated on `local` too (see docs/rewards.md for what local cannot defeat)."""
    report = await episode(instance, attacked(attack), deployment={"type": "local"})
    assert report["reward"] == 0.0 and report["status"] in ("unresolved", "patch_rejected") and graded(report), report
    if "site-packages" in attack or "runner on PATH" in attack:
        assert any("changed" in why and "venv" in why for why in report["restored"].values()), report["restored"]


async def test_the_gold_fix_earns_one_on_local(instance):
    report = await episode(instance, [FIX], deployment={"type": "local"}, capture=True)
    assert (report["status"], report["reward"], report["sandbox"]) == ("resolved", 1.0, "fresh"), report
    assert report["captured"] == report["patch"], "a prediction's patch is the patch the reward grades"
    assert report["restored"] == {}, "an honest episode leaves the venv as it was"


@pytest.mark.parametrize("kind", ["docker", "ray"])
async def test_the_gold_fix_still_earns_one(instance, kind, request):
    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    report = await episode(instance, [FIX], deployment={"type": kind}, capture=True)
    assert (report["status"], report["reward"], report["sandbox"]) == ("resolved", 1.0, "fresh")
    assert report["captured"] == report["patch"], "a prediction's patch is the patch the reward grades"
    assert report["patch"].startswith(f"diff --git a/{SOURCE} b/{SOURCE}")


async def test_the_gold_fix_earns_one_with_a_read_only_root(instance):
    """The workspace is a volume there, which docker diff cannot see: the patch is taken in the sandbox."""
    report = await episode(instance, [FIX], deployment={"read_only_root": True})
    assert (report["status"], report["reward"]) == ("resolved", 1.0) and report["patch"].startswith(f"diff --git a/{SOURCE}")


async def test_a_symlink_out_of_the_repository_is_rejected_with_its_reason(instance):
    report = await episode(instance, ATTACKS["a symlink to a fixed copy outside the repository"][0])
    assert report["status"] == "patch_rejected" and "points outside the repository" in report["error"]


async def test_a_huge_patch_is_rejected_not_loaded(instance):
    report = await episode(instance, ["head -c 3000000 /dev/urandom | base64 > blob.txt"], max_patch_bytes=1_000_000)
    assert report["status"] == "patch_rejected" and "max_patch_bytes" in report["error"]


async def test_runner_configuration_is_restored_and_reported(instance):
    report = await episode(instance, ATTACKS["pytest configuration loading a plugin from the repository"][0] + [FIX])
    assert report["status"] == "resolved", "the fix counts; the configuration does not"
    assert report["restored"] == {"tox.ini": "tox.ini configures the test runner"}
    assert "src/forge.py" in report["patch"] and "tox.ini" in report["patch"]


# Whatever the agent leaves in the repository beside the fix is graded as it is (the fix still earns 1.0, the
# oddity in the patch) or is the agent's 0 with its reason (`caused_by: patch`); never an exception out of the env.
# case -> (commands, the status, a text the patch or the error must hold)
LEFTOVERS = {
    "a symlink inside the repository": (["ln -s saferepr.py src/_pytest/_io/alias.py"], "resolved", "new file mode 120000"),
    "a binary file": (["head -c 4096 /dev/urandom > data.bin"], "resolved", "GIT binary patch"),
    "an empty file": (["touch empty.txt"], "resolved", "diff --git a/empty.txt b/empty.txt\nnew file mode 100644"),
    "a mode change": (["chmod +x setup.py"], "resolved", "old mode 100644\nnew mode 100755"),
    "a file under a directory made a symlink inside the repository": (["ln -s src linked && printf 'x = 1\\n' > linked/extra.py"], "resolved", "+x = 1"),
    "a file under a directory made a symlink out of the repository": (
        ["mkdir -p $UAG_TMP/outside && ln -s $UAG_TMP/outside linked && printf 'x = 1\\n' > linked/extra.py"], "patch_rejected", "points outside the repository"),
    "a 300 MB file": (["head -c 300M /dev/zero > big.bin"], "patch_rejected", "larger than reward.max_patch_bytes"),
    "a .gitattributes marking everything binary": (["printf '* binary\\n' >> .gitattributes"], "resolved", "+* binary"),
    "a name and content that are not UTF-8": (["printf 'caf\\351\\n' > \"$(printf 'bad\\001\\377.txt')\""], "resolved", "GIT binary patch"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(LEFTOVERS), ids=list(LEFTOVERS))
async def test_what_the_agent_leaves_beside_the_fix_is_graded_faithfully(instance, case):
    commands, status, holds = LEFTOVERS[case]
    report = await episode(instance, [*commands, FIX])
    assert (report["status"], report["exit_reason"]) == (status, "finished"), report
    if status == "resolved":
        assert report["reward"] == 1.0 and holds in report["patch"], report["patch"][:2000]
    else:
        assert report["reward"] == 0.0 and report["caused_by"] == "patch" and holds in report["error"], report


# Grading made to fail: code prepended to the module every test imports (pytest imports it at start) that
# breaks the grader instead of the bug. Whatever it does once the patch is in place is the patch's doing:
# reward 0, the episode keeps its own exit reason (`finished`), never an infrastructure error (masked).
def breaking(code: str) -> list[str]:
    return [write("$UAG_TMP/breaker.py", code), f"cp {SOURCE} $UAG_TMP/orig.py && cat $UAG_TMP/breaker.py $UAG_TMP/orig.py > {SOURCE}"]


KILL_THE_SANDBOX = "import os, signal\nos.kill(-1, signal.SIGKILL)\n"  # every process it may signal: docker-init's child too
KILL_THE_SHELL = "import os, signal\nos.killpg(os.getpgrp(), signal.SIGKILL)\n"  # the shell running the tests, and itself
HANG = "import time\ntime.sleep(10 ** 6)\n"
HOG = "_hog = bytearray(1 << 40)\n"
# attack -> (code, deployment, the status it must be graded with)
BREAKERS = {
    "every process in the sandbox killed": (KILL_THE_SANDBOX, "docker", "tests_crashed"),
    "the shell running the tests killed": (KILL_THE_SHELL, "docker", "unresolved"),
    "a hang": (HANG, "docker", "timeout"),
    "a memory hog": (HOG, "docker", "unresolved"),
    "the shell running the tests killed, on local": (KILL_THE_SHELL, "local", "unresolved"),
    "a hang, on local": (HANG, "local", "timeout"),
    "every process in the sandbox killed, on ray": (KILL_THE_SANDBOX, "ray", "tests_crashed"),
    "a hang, on ray": (HANG, "ray", "timeout"),
}  # fmt: skip


@pytest.mark.parametrize("attack", list(BREAKERS), ids=list(BREAKERS))
async def test_breaking_the_grader_is_the_patchs_doing(instance, attack, request):
    """Never an infrastructure error: that would be masked, a free exit for a policy that cannot fix the bug."""
    code, deployment, status = BREAKERS[attack]
    if deployment == "ray":
        request.getfixturevalue("ray_cluster")
    report = await episode(instance, breaking(code), deployment={"type": deployment}, timeout=8)  # the hang waits it out
    assert (report["status"], report["reward"], report["exit_reason"]) == (status, 0.0, "finished"), report
    assert report["caused_by"] == (None if status == "unresolved" else "patch"), report


@pytest.mark.parametrize("kind", ["docker", "ray"])
async def test_a_sandbox_whose_engine_stops_answering_is_the_infrastructures(instance, monkeypatch, kind, request):
    """The same sandbox death with the engine gone too (on ray: the node): not the patch's doing, so grading
    raises (env_error)."""
    from uni_agent_gym.deployments.docker import DockerDeployment
    from uni_agent_gym.deployments.ray import RayDeployment
    from uni_agent_gym.errors import DeploymentError

    async def silent(self) -> bool:
        return False

    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    monkeypatch.setattr(RayDeployment if kind == "ray" else DockerDeployment, "engine_answers", silent)
    with pytest.raises(DeploymentError):
        await episode(instance, breaking(KILL_THE_SANDBOX), deployment={"type": kind}, timeout=20)


# The verdict rewritten in-process: code the tests import (prepended to flask's package, which the tests
# import during collection) changes how pytest judges them. The log, its summary and the exit code then agree,
# so the log cross-checks pass; the grading guard (rewards/guard) sees it, and so do the canary tests (each
# attack forges every failing test's verdict, the canaries' too). flask-4992's FAIL_TO_PASS test fails
# without the fix (a TypeError), and each attack makes it pass without touching the bug.
FLASK = "pallets__flask-4992"
FLASK_PACKAGE = "src/flask/__init__.py"
VERDICT_ATTACKS = {
    "a report class patched at import": (REPORT_CLASS_PATCHED, ["machinery was replaced during the run: _pytest.reports.TestReport.from_item_and_call",
                                                                "the log passes 3 test(s) the grading guard did not see pass"]),  # its test and the 2 canaries
    "a plugin registered at import": (PLUGIN_REGISTERED, ["plugins were registered during the run from outside pytest: forge (pytest_runtest_call in src/flask/__init__.py)"]),
}  # fmt: skip


@pytest.fixture(scope="module")
def flask_instance() -> dict:
    return normalise(fixture_sources.derived_rows()[FLASK])


def prepended(path: str, code: str) -> list[str]:
    return [write("$UAG_TMP/prepended.py", code), f"cp {path} $UAG_TMP/orig.py && cat $UAG_TMP/prepended.py $UAG_TMP/orig.py > {path}"]


@pytest.mark.parametrize("deployment", ["docker", "local"])  # the guard runs inside the tests' process: ray's path is docker's
@pytest.mark.parametrize("attack", list(VERDICT_ATTACKS), ids=list(VERDICT_ATTACKS))
async def test_a_verdict_rewritten_in_process_earns_nothing(flask_instance, attack, deployment, request):
    code, expected = VERDICT_ATTACKS[attack]
    if deployment == "ray":
        request.getfixturevalue("ray_cluster")
    commands = prepended(FLASK_PACKAGE, code)
    unguarded = await episode(flask_instance, commands, deployment={"type": deployment}, guard=False, canaries=False)
    assert (unguarded["status"], unguarded["reward"]) == ("resolved", 1.0), f"the attack should be real without the guard: {unguarded['status']}"
    report = await episode(flask_instance, commands, deployment={"type": deployment})
    assert (report["status"], report["reward"]) == ("unresolved", 0.0), report["integrity_problems"]
    for problem in expected:
        assert any(problem in found for found in report["integrity_problems"]), report["integrity_problems"]
    alone = await episode(flask_instance, commands, deployment={"type": deployment}, guard=False)
    assert (alone["status"], alone["reward"]) == ("unresolved", 0.0), "the canaries alone see a verdict forged for every test"
    assert [p for p in alone["integrity_problems"] if "canary test" in p], alone["integrity_problems"]


PEEK = (  # copy the fixed file out of any commit the repository holds
    f"for c in $(git rev-list --all); do git show $c:{SOURCE} > $UAG_TMP/s 2>/dev/null "
    f"&& grep -q 'type(obj).__name__, id(obj)' $UAG_TMP/s && cp $UAG_TMP/s {SOURCE} && break; done; true"
)


@pytest.fixture(scope="module")
def leaky_image(instance) -> str:
    """Plays an image pulled from a registry whose /testbed holds the fix in a later commit (branch and tag)."""
    import io

    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.instances import image_name

    require_docker()
    asyncio.run(fixture_sources.ensure_image(instance))
    name = "uni-agent-gym-test/leaky-pytest-7168:latest"
    dockerfile = (
        f"FROM {image_name(PYTEST)}\nLABEL uni-agent-gym.history=\n"  # as if pulled: no history label
        f"RUN cd /testbed && start=$(git rev-parse HEAD) && git checkout -q -b future && {FIX} "
        "&& git -c user.email=u@u.invalid -c user.name=u commit -qam 'the fix' && git tag v-future && git checkout -q --detach $start\n"
    )
    docker_client().images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=name, network_mode="none", rm=True)
    return name


async def test_the_future_in_a_pulled_image_is_not_there_to_copy_on_ray(instance, leaky_image, ray_cluster):
    """On ray the clean image is derived on a sandbox node (a Ray task there), pushed to the registry, and run by
    the agent's node: the future commit is gone there too."""
    report = await episode(instance.replace(image_name=leaky_image), [PEEK], deployment={"type": "ray"})
    assert (report["status"], report["reward"], report["patch"]) == ("unresolved", 0.0, "")


async def test_the_future_in_a_pulled_image_is_not_there_to_copy(instance, leaky_image):
    from uni_agent_gym.deployments import make_deployment

    async with make_deployment({"type": "docker", "image": leaky_image, "workdir": "/testbed"}) as raw:
        assert (await raw.run(f"{SCRATCH} && {PEEK} && git diff --stat")).output.strip().endswith("1 insertion(+), 1 deletion(-)"), "the attack is real"
    report = await episode(instance.replace(image_name=leaky_image), [PEEK])
    assert (report["status"], report["reward"], report["patch"]) == ("unresolved", 0.0, "")


# The runner's implementation edited where it lives in the repository. In the pytest repository the runner is
# the code under test: a patch that swallows every test's exception where pytest calls the test function leaves
# nothing for the guard (its record comes from that same call), the log or the exit code to see. The canary tests
# the grader plants beside the hidden tests (rewards/canaries) must fail, and are reported passed.
SWALLOWED = ("sed -i 's/^    result = testfunction(\\*\\*testargs)$/    try:\\n        result = testfunction(**testargs)\\n"
             "    except Exception:\\n        result = None/' src/_pytest/python.py && grep -q 'except Exception:' src/_pytest/python.py")  # fmt: skip


@pytest.mark.parametrize("deployment", ["docker", "local", "ray"])
async def test_the_runner_edited_in_the_repository_is_caught_by_the_canaries(instance, deployment, request):
    if deployment == "ray":
        request.getfixturevalue("ray_cluster")
    without = await episode(instance, [SWALLOWED], deployment={"type": deployment}, canaries=False)
    assert (without["status"], without["reward"]) == ("resolved", 1.0), f"the attack should be real without canaries: {without['integrity_problems']}"
    report = await episode(instance, [SWALLOWED], deployment={"type": deployment})
    assert (report["status"], report["reward"]) == ("unresolved", 0.0), report["integrity_problems"]
    assert [p for p in report["integrity_problems"] if "canary test" in p and "is reported PASSED" in p], report["integrity_problems"]


# Where the runner is the repository's but not the code under test (sphinx's own pytest plugin, loaded by its
# conftest; sympy's runtests.py, Django's runner.py), a patch that changes it is graded a second time with it as
# at the start commit (rewards/runner_modules). Shown with the guard and the canaries off, which also see this one.
SPHINX = "sphinx-doc__sphinx-8595"
SPHINX_PLUGIN = "sphinx/testing/fixtures.py"
PASS_EVERY_REPORT = """

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome, report.longrepr = "passed", None
"""


@pytest.fixture(scope="module")
def sphinx_instance() -> dict:
    return normalise(fixture_sources.derived_rows()[SPHINX])


async def test_a_runner_module_changed_by_the_patch_is_graded_again_as_it_was(sphinx_instance, monkeypatch):
    from uni_agent_gym.rewards import runner_modules

    forged = [write("$UAG_TMP/hook.py", PASS_EVERY_REPORT), f"cat $UAG_TMP/hook.py >> {SPHINX_PLUGIN}"]
    monkeypatch.setitem(runner_modules.RUNNER_MODULES, "sphinx-doc/sphinx", ())
    unchecked = await episode(sphinx_instance, forged, guard=False, canaries=False)
    assert (unchecked["status"], unchecked["reward"], unchecked["runner_rerun"]) == ("resolved", 1.0, None), "the attack should be real"
    monkeypatch.undo()
    report = await episode(sphinx_instance, forged, guard=False, canaries=False)
    assert (report["status"], report["reward"]) == ("unresolved", 0.0), report
    assert report["runner_rerun"]["modules"] == [SPHINX_PLUGIN] and report["runner_rerun"]["status"] == "unresolved"
    assert [p for p in report["integrity_problems"] if p.startswith(f"resolved only with the patch's changes to the test runner's implementation or configuration ({SPHINX_PLUGIN})")]


async def test_a_fix_that_also_touches_a_runner_module_still_earns_one(sphinx_instance):
    gold = await episode(sphinx_instance, [f"git apply <<'UAG_EOF'\n{sphinx_instance.patch}UAG_EOF", f"echo '# a comment' >> {SPHINX_PLUGIN}"])
    assert (gold["status"], gold["reward"]) == ("resolved", 1.0), gold["integrity_problems"]
    assert gold["runner_rerun"]["status"] == "resolved" and gold["runner_rerun"]["modules"] == [SPHINX_PLUGIN]
