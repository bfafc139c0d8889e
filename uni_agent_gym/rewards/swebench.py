"""The reward of every dataset family: FAIL_TO_PASS (and PASS_TO_PASS) graded by the `swebench`
package's rules, or R2E-Gym's exact comparison; the task (`uni_agent_gym.datasets`) says which, and
gives the test command, the parser, the start state and the hidden tests.

The agent is an adversary: whatever it can change that takes part in grading, an RL policy will
eventually change. So by default (`reward.sandbox: fresh`) the reward depends on the agent's patch
alone:

1. capture the agent's patch against the commit the episode started from, without trusting the
   agent's sandbox (`capture.py`: the Docker daemon's view of its files, computed in a fresh
   container; the host's git for `local`);
2. open a *fresh* sandbox of the instance at its start state (a new container of its image, from the
   warm pool when there is one, or a fresh checkout; `workspaces/start_state.py`) and apply the patch there
   the way the official harness applies predictions (`git apply`, `--reject`, `patch --fuzz`), without
   what it says about the task's `protected_paths`;
3. return to the start commit the files `test_patch` touches, the task's `reset_files` and what runs
   the tests (`conftest.py`, pytest's configuration, the runner script: `runner_files.py`), deleting
   files it did not have;
4. apply `test_patch` (failing to is an infrastructure error, never a pass), then plant beside the
   graded tests the canary tests that must fail (`canaries.py`); a task in a compiled language is
   built here (its spec's `build`, as swebench's eval scripts do), its output kept apart from the log
   that is graded: a build the patch breaks is `unresolved`, its output in `build_log`;
5. run the task's test command with a timeout (docker sandboxes are cut off every network first,
   unless `reward.network`), with the grading guard loaded (`guard/`); when the patch changed the
   runner's own modules in the repository, run it again with them as at the start commit
   (`runner_modules.py`: resolved only if both runs resolve);
6. parse the log with the task's parser, cross-check it against the runner's exit code and own
   summary (`integrity/`), and grade with swebench's `get_eval_tests_report` and
   `get_resolution_status` (or R2E-Gym's comparison). A FAIL_TO_PASS test that is skipped, missing or
   errors has not passed.

An empty patch (nothing changed, or only the task's protected files) is unresolved after step 2 with
no test run, as the official harness counts an empty prediction (`empty_patch_ids`): doing nothing
earns 0 on every task, and a policy that often gives up costs no grading.

`reward.sandbox: same` runs steps 3-6 in the agent's own sandbox after capturing the patch there:
cheaper, and only for agents that are trusted. Predictions (`uni-agent-gym grade`) take steps 2-6.
The hidden tests enter a sandbox only in step 4, after the agent is done.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from swebench.harness.constants import (
    END_TEST_OUTPUT, FAIL_TO_FAIL, FAIL_TO_PASS, PASS_TO_FAIL, PASS_TO_PASS, START_TEST_OUTPUT, EvalType, ResolvedStatus,
)  # fmt: skip
from swebench.harness.grading import SUITE_RAN, get_eval_tests_report, get_resolution_status
from swebench.harness.infra_failure import classify_text

from uni_agent_gym.config import GymConfig, RewardConfig
from uni_agent_gym.datasets import Task, require_task
from uni_agent_gym.deployments import Deployment
from uni_agent_gym.deployments.pool import release
from uni_agent_gym.deployments.sites import site_of
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.datasets import log_parser, r2e_gym
from uni_agent_gym.datasets.base import EXPECTED_OUTPUT_GRADING, swebench_parser, swebench_parser_names
from uni_agent_gym.datasets.swebench import repo_parser_name
from uni_agent_gym.instances import patch_files
from uni_agent_gym.workspaces.local_checkout import local_workspace_dir, trusted_git_dir
from uni_agent_gym.workspaces.host_git import has_commit
from uni_agent_gym.rewards import differential
from uni_agent_gym.rewards.canaries import Canaries, plant, wanted
from uni_agent_gym.rewards.capture import Captured, PatchRejected, capture_from_container, capture_in_sandbox, capture_on_host
from uni_agent_gym.rewards.guard import Guard, can_load
from uni_agent_gym.rewards.integrity import check_run
from uni_agent_gym.rewards.patches import SAFE_GIT, apply_patch, drop_files, git_in, reset_files
from uni_agent_gym.rewards.runner_files import runner_files_to_restore
from uni_agent_gym.rewards.runner_modules import runner_modules_touched
from uni_agent_gym.rewards.runners import Runner, runner_for
from uni_agent_gym.rewards.runners.outcomes import Parser
from uni_agent_gym.specs import load_environments
from uni_agent_gym.workspaces.episode import Episode, require_episode
from uni_agent_gym.workspaces.validations_file import load as load_validations, task_validation
from uni_agent_gym.toolchains import language_of

logger = logging.getLogger(__name__)
Status = Literal["resolved", "unresolved", "patch_failed", "patch_rejected", "test_patch_failed", "timeout", "tests_crashed", "infra_error"]
StoppedAt = Literal["test_patch", "build", "not_started"]  # the test patch did not apply; the build failed; a command never started (exit 126/127)
# The error of an empty patch's grading; the summaries count such a result as the official harness does.
EMPTY_PATCH = "empty patch: nothing to grade"
# The shell's exit codes of a command that never started: found but not executable, not found.
NOT_STARTED = (126, 127)
# Whose a failed grading is. The infrastructure's: what failed before the patch was in place (a sandbox that did
# not start, a missing image, a capture the engine refused), or the engine itself; the trajectory is then an
# env_error (masked). The patch's: what went wrong once it was applied (it does not apply, is too large, the
# tests time out, the sandbox's processes die while they run): reward 0 and the agent's own exit reason, never
# masked, or breaking the grader would be an exit that costs the policy nothing.
CAUSED_BY = {"infra_error": "infrastructure", "test_patch_failed": "infrastructure", "patch_failed": "patch",
             "patch_rejected": "patch", "timeout": "patch", "tests_crashed": "patch"}  # fmt: skip


def infrastructure_failed(report: dict[str, Any] | None) -> bool:
    """Whether a reward report is a grading that failed before the agent's patch was in place (`caused_by`
    infrastructure): training masks such a trajectory (env_error) instead of learning a 0 from it."""
    return bool(report) and report.get("caused_by") == "infrastructure"


@dataclass
class RewardResult:
    """The grade of one instance; `to_dict()` is its JSON report."""

    instance_id: str
    status: Status
    reward: float = 0.0
    resolved: bool = False
    tests: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # swebench's report: FAIL_TO_PASS/PASS_TO_PASS success/failure
    test_statuses: dict[str, str | None] = field(default_factory=dict)  # each graded test's parsed outcome (None: missing)
    integrity_problems: list[str] = field(default_factory=list)
    patch: str = ""
    left_out: dict[str, str] = field(default_factory=dict)  # the sandbox's files the capture left out of the patch (build outputs), and why
    restored: dict[str, str] = field(default_factory=dict)  # runner files returned to the start commit, and why
    canaries: dict[str, str] = field(default_factory=dict)  # tests planted that must fail: {name: file}
    sandbox: str = "fresh"  # where the tests ran: "fresh" (only the patch applied) or "same" (the agent's own)
    test_command: str = ""
    exit_code: int | None = None
    log: str = ""
    build_command: str = ""  # what was built after the test patch, before the tests (other languages than Python)
    build_log: str = ""  # its output (never parsed for test outcomes)
    error: str | None = None
    network_isolated: bool = False  # the tests ran with no network (docker)
    durations: dict[str, float] = field(default_factory=dict)
    runner_rerun: dict[str, Any] | None = None  # the second grading, with the runner's modules the patch changed as at the start
    language: str | None = None  # the task's (reports and the viewer group by it)
    environment: str | None = None  # the digest of the environment its image records (None: an image not built here)
    image_id: str | None = None  # the id of that image
    start_commit: str | None = None  # the commit the patch was applied to
    environment_validated: bool = False  # whether that environment passed `uni-agent-gym validate` (here, or in env.validations)
    validation: dict[str, Any] | None = None  # the row's verdict and where it comes from (`workspaces/validations_file.py`)
    strength: dict[str, Any] | None = None  # its tests' strength: `survivors: k of n`, the value, from where (None: not measured)
    stopped_at: StoppedAt | None = None  # the step before the tests that ended the grading, if one did
    # swebench 5.x's reading of an unresolved run's output (`infra_failure.classify_text`: {"reason", "tier"}), for people
    # reading reports. Information only, never a mask: the code under test can print "Killed" or "Could not resolve host"
    infra_label: dict[str, str] | None = None
    # every outcome the run's log gave, graded or not (`validate`'s variants and the differential check compare them
    # with gold's); not part of the report: a whole suite's run names tens of thousands of tests
    parsed_statuses: dict[str, str] = field(default_factory=dict, repr=False)
    # a resolved run's outcomes against gold's (`reward.differential`: rewards/differential.py); None: not compared
    differential: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.patch, Captured):  # a captured patch brings what the capture left out of it
            self.patch, self.left_out = str(self.patch), {**self.patch.left_out, **self.left_out}

    @property
    def caused_by(self) -> str | None:
        """"infrastructure" or "patch" for a grading that failed (see `CAUSED_BY`); None for a verdict."""
        return CAUSED_BY.get(self.status)

    def to_dict(self) -> dict[str, Any]:
        report = {**dataclasses.asdict(self), "caused_by": self.caused_by}
        del report["parsed_statuses"]
        return report


def grade_fail_to_pass(instance: Task, statuses: dict[str, str], *, fail_to_pass_only: bool = False) -> tuple[bool, dict, dict]:
    """(resolved, swebench's per-test report, each graded test's parsed outcome) by swebench's F2P/P2P grading under the
    task's `eval_type` (SWE-smith grades by the same functions); FAIL_TO_FAIL and PASS_TO_FAIL, where a row has them
    (SWE-rebench), are reported and do not count. swebench 5.x matches a listed id cut short inside its parameters
    (`test_x[log(photon`, its issue #290) to the parsed ids it begins (`graded_names`); a FAIL_TO_PASS test it neither
    passes nor fails (a status it does not know) has not passed."""
    graded = {FAIL_TO_PASS: instance.FAIL_TO_PASS, PASS_TO_PASS: [] if fail_to_pass_only else instance.PASS_TO_PASS}
    to_fail = {name: instance.columns[name] for name in (FAIL_TO_FAIL, PASS_TO_FAIL) if instance.columns.get(name) is not None}
    report = get_eval_tests_report(statuses, {**graded, FAIL_TO_FAIL: [], PASS_TO_FAIL: [], **to_fail}, calculate_to_fail=bool(to_fail),
                                   eval_type=EvalType(instance.eval_type))  # fmt: skip
    fail_to_pass = report[FAIL_TO_PASS]
    fail_to_pass["failure"] += [test for test in graded[FAIL_TO_PASS] if test not in fail_to_pass["success"] + fail_to_pass["failure"]]
    outcomes = {test: next((statuses[name] for name in graded_names(test, statuses) if name in statuses), None)
                for test in graded[FAIL_TO_PASS] + graded[PASS_TO_PASS]}  # fmt: skip
    return get_resolution_status(report) == ResolvedStatus.FULL.value, report, outcomes


def graded_names(test: str, statuses: dict[str, str]) -> list[str]:
    """The parsed ids that swebench's grading may read for a listed test: itself, or for an id cut short inside its
    parameters (more `[` than `]`, as 676 of Verified's are) every parsed id it begins. The log cross-checks must vouch
    for each of them: a forged pass of the whole id is a forged pass of the listed one."""
    if test in statuses or test.count("[") <= test.count("]"):
        return [test]
    return [name for name in statuses if name.startswith(test)] or [test]


def rejected_run(statuses: dict[str, str], log: str, exit_code: int | None) -> str | None:
    """Why swebench 5.x would not grade this run at all (`grading.get_logs_eval`), or None; the gym holds to its rules
    beside its own cross-checks: no outcome parsed and no sign that a suite ran (`SUITE_RAN`: under `fail_only` an absent
    test passes, so a suite that never started would resolve every task), or a run that exited non-zero although no
    test failed (the log does not describe the run that happened)."""
    if not statuses and not SUITE_RAN.search(log):
        return "no test outcome in the log and no sign that a suite ran (swebench's rule: such a run is not graded)"
    if exit_code not in (None, 0) and statuses and not any(status in ("FAILED", "ERROR") for status in statuses.values()):
        return f"the tests exited {exit_code} although no test failed (swebench's rule: such a run is not graded)"
    return None


def task_runner(instance: Task, command: str) -> tuple[Runner, Parser] | None:
    """The runner a grading of this task reads the log of, and the parser it rereads it with (`runners.runner_for`:
    resolved once per grading); R2E-Gym's, whose names are not pytest's node ids, is read as pytest's own report."""
    checked = r2e_gym.RUNNER if instance.grading == EXPECTED_OUTPUT_GRADING else SWEBenchReward.log_reader(instance)
    return runner_for(checked, command)


def canary_runner(instance: Task, command: str, found: tuple[Runner, Parser] | None = None) -> Runner | None:
    """The runner whose canaries a grading of this task plants (with `reward.canaries` on), or None: R2E-Gym's exact
    comparison of every outcome, a runner the canaries do not follow, or a command under which they would not run
    (`canaries.wanted`). Whether a test file then takes them depends on its text."""
    if instance.grading == EXPECTED_OUTPUT_GRADING:
        return None
    found = found or task_runner(instance, command)
    return found[0] if found is not None and wanted(found[0], command) else None


class SWEBenchReward:
    """Grades a finished episode (an env `Reward`: returns the report, with "reward") or a prediction."""

    def __init__(
        self,
        config: RewardConfig | None = None,
        environments: dict[str, dict[str, Any]] | None = None,
        gym: GymConfig | None = None,
        also_reset: tuple[str, ...] = (),
    ) -> None:
        """`gym` is how fresh sandboxes of an instance are opened (deployment and env sections); without
        it episodes are graded in their own sandbox, as with `reward.sandbox: same`. `environments`: entries by
        instance id that grading runs instead of the one an episode was opened with (`from_config`: the same file).
        `also_reset`: files returned to the start commit before the tests beside the task's own (the differential
        check's extra test files)."""
        self.config = config or RewardConfig()
        self.environments = environments or {}
        self.gym = gym
        self.also_reset = tuple(also_reset)
        if self.config.differential and gym is None:
            raise ValueError("reward.differential grades gold in fresh sandboxes: the reward needs the gym config (SWEBenchReward.from_config)")

    @classmethod
    def from_config(cls, config: GymConfig) -> "SWEBenchReward":
        """The reward a run of `config` grades with (its reward section, environments and sandboxes)."""
        return cls(config.reward, load_environments(config.env.environments), gym=config)

    async def __call__(self, episode: Episode) -> dict[str, Any]:
        """The reward report of the episode (the env's `Reward` protocol)."""
        instance = require_episode(episode, "SWEBenchReward").task
        result = await self.grade_episode(episode)
        result.differential = await differential.check(self, instance, result)  # after its sandboxes are released
        result.language = language_of(instance)
        if result.validation is None and result.strength is None:  # a grading that ended before the tests did not look
            self._validation(instance, result)
        return result.to_dict()

    async def grade_episode(self, episode: Episode) -> RewardResult:
        """The grade of the agent's work in the episode's sandbox, in a fresh sandbox of its task unless `reward.sandbox:
        same`. A sandbox that fails raises `DeploymentError` (not the agent's doing)."""
        deployment, instance, repo_dir = episode.deployment, episode.task, episode.repo_dir
        hidden = bool(instance.hidden_paths)  # the tests are not in the agent's sandbox: only a fresh one has them
        if (self.config.sandbox == "same" and not hidden) or self.gym is None:
            if hidden:
                raise ValueError(f"{instance.instance_id} keeps its tests out of the agent's sandbox: grading it needs the gym config (SWEBenchReward.from_config)")
            return await self.grade(episode)
        started = time.monotonic()
        instance_id = instance.instance_id
        start = await self._episode_start(episode)
        if self._diffs_into_a_fresh_container(deployment):
            fresh = await self._open_fresh(instance, start, beside=deployment)
            try:
                try:
                    patch = await capture_from_container(deployment, fresh.deployment, repo_dir, start, self.config.max_patch_bytes)
                except PatchRejected as exc:
                    return self._finish(RewardResult(instance_id, "patch_rejected", error=str(exc)), started)
                return await self._grade_patch_in(fresh, start, self._to_apply(instance, patch), started)
            finally:
                await release(fresh.deployment)
        try:
            patch = await self._capture_with_git(episode, start)
        except PatchRejected as exc:
            return self._finish(RewardResult(instance_id, "patch_rejected", error=str(exc)), started)
        except DeploymentError as exc:
            if await deployment.is_alive():  # the agent broke its repository (deleted, corrupted): its work cannot be graded
                return self._finish(RewardResult(instance_id, "patch_failed", error=f"no patch can be taken from {repo_dir}: {exc}"), started)
            raise
        restored = {}
        if self._on_local(deployment):
            await deployment.stop()  # its processes run on this host: none may touch the fresh checkout
            restored = dict(deployment.release_report)  # a venv it changed, marked to be replaced as it stopped
        prepared, kept = self._to_apply(instance, patch)
        if prepared.error == EMPTY_PATCH:  # known before a fresh sandbox is opened for it: none is
            prepared.restored.update(restored)
            return self._finish(prepared, started)
        fresh = await self._open_fresh(instance, start)
        try:
            result = await self._grade_patch_in(fresh, start, (prepared, kept), started)
            result.restored.update(restored)
            return result
        finally:
            await release(fresh.deployment)

    async def capture_patch(self, episode: Episode) -> str:
        """The agent's patch taken as `grade_episode` takes it (trusting nothing in its sandbox), with no test
        run: for an episode whose prediction is graded elsewhere (`uni-agent-gym grade`, the official
        harness). Without `gym` it is taken in the sandbox, as `reward.sandbox: same` takes it.
        Raises `PatchRejected` (too large, a link out of the repository) or `DeploymentError`."""
        deployment, repo_dir = require_episode(episode, "SWEBenchReward.capture_patch").deployment, episode.repo_dir
        start = await self._episode_start(episode)
        if self.gym is None:
            return await capture_in_sandbox(deployment, repo_dir, start, self.config.max_patch_bytes)
        if not self._diffs_into_a_fresh_container(deployment):
            return await self._capture_with_git(episode, start)
        fresh = await self._open_fresh(episode.task, start, beside=deployment)
        try:
            return await capture_from_container(deployment, fresh.deployment, repo_dir, start, self.config.max_patch_bytes)
        finally:
            await release(fresh.deployment)

    @staticmethod
    async def _episode_start(episode: Episode) -> str:
        """The commit the episode started from, which its patch is taken against (its HEAD where it was not read)."""
        return episode.start_commit or (await git_in(episode.deployment, episode.repo_dir, "git rev-parse HEAD")).strip()

    def _diffs_into_a_fresh_container(self, deployment: Deployment) -> bool:
        """Whether the patch is the Docker daemon's diff of the agent's container, computed in a fresh one
        (docker diff cannot see into volumes: with read_only_root the workspace is one). On a Ray cluster
        both are containers of the agent's node (`beside`)."""
        return site_of(self.gym.deployment).diffs(deployment)

    def _on_local(self, deployment: Deployment) -> bool:
        """Whether the agent's sandbox is a directory on this host, read by the host's git."""
        return site_of(self.gym.deployment).on_host(deployment)

    async def _capture_with_git(self, episode: Episode, start: str) -> str:
        """Where no daemon's diff is to be had: the host's git with the instance's trusted repository for a
        local checkout, else git in the sandbox."""
        deployment, repo_dir = episode.deployment, episode.repo_dir
        trusted = trusted_git_dir(local_workspace_dir(episode.task.instance_id, self.gym)) if self._on_local(deployment) else None
        if trusted is not None and await has_commit(trusted, start):
            return await capture_on_host(trusted, repo_dir, start, self.config.max_patch_bytes)
        return await capture_in_sandbox(deployment, repo_dir, start, self.config.max_patch_bytes)

    async def grade_patch(self, instance: Task, patch: str) -> RewardResult:
        """The grade of `patch` (a prediction) in a fresh sandbox of the task (a dataset row: `normalise(row)`
        first); needs `gym`."""
        instance = require_task(instance, "SWEBenchReward.grade_patch")
        if self.gym is None:
            raise ValueError("SWEBenchReward.grade_patch needs the gym config to open sandboxes (SWEBenchReward.from_config)")
        started = time.monotonic()
        if len(patch.encode()) > self.config.max_patch_bytes:
            error = f"the patch is {len(patch.encode())} bytes, more than reward.max_patch_bytes ({self.config.max_patch_bytes})"
            return self._finish(RewardResult(instance.instance_id, "patch_rejected", patch=patch, error=error), started)
        prepared, kept = self._to_apply(instance, patch)
        if prepared.error == EMPTY_PATCH:  # no sandbox is opened for it
            return self._finish(prepared, started)
        fresh = await self._open_fresh(instance, None)
        try:
            result = await self._grade_patch_in(fresh, await self._episode_start(fresh), (prepared, kept), started)
        finally:
            await release(fresh.deployment)
        result.differential = await differential.check(self, instance, result)
        if result.validation is None and result.strength is None:  # a grading that ended before the tests did not look
            self._validation(instance, result)
        return result

    async def grade_patches(self, instance: Task, patches: list[str], deadline: float | None = None) -> list[RewardResult | None]:
        """Each patch graded in turn in one fresh sandbox of the instance, which goes back to its start state between
        them (tracked files reset, untracked files git does not ignore removed, Python's bytecode of the changed files
        dropped: a mutant of the same size and second would run the last one's). For the gym's own patches only
        (`validate`'s variants of a gold patch): an agent's patch could leave something behind for the next, and gets
        a sandbox of its own (`grade_patch`). None for a patch not graded by `deadline` (time.monotonic())."""
        if self.gym is None:
            raise ValueError("SWEBenchReward.grade_patches needs the gym config to open sandboxes (SWEBenchReward.from_config)")
        fresh = await self._open_fresh(instance, None)
        results: list[RewardResult | None] = []
        try:
            start = await self._episode_start(fresh)
            for patch in patches:
                if deadline is not None and time.monotonic() > deadline:
                    results.append(None)
                    continue
                if results:
                    await self._back_to_start(fresh.deployment, fresh.repo_dir, start, [*results, patch])
                started = time.monotonic()
                results.append(await self._grade_patch_in(fresh, start, self._to_apply(instance, patch), started))
        finally:
            await release(fresh.deployment)
        return results

    @staticmethod
    async def _back_to_start(deployment: Deployment, repo_dir: str, start: str, graded: list[Any]) -> None:
        """The repository of a sandbox `grade_patches` used back at `start` (what its install left, which git ignores,
        kept)."""
        touched = {path for item in graded for path in patch_files(item if isinstance(item, str) else (item.patch if item else ""))}
        stale = [shlex.quote(f"{directory or '.'}/__pycache__/{name[:-3]}.") + "*" for path in sorted(touched) if path.endswith(".py")
                 for directory, _, name in [path.rpartition("/")]]  # fmt: skip
        drop = f" && rm -f {' '.join(stale)}" if stale else ""
        await git_in(deployment, repo_dir, f"{SAFE_GIT} reset -q --hard {start} && {SAFE_GIT} clean -fdq{drop}", timeout=300)

    async def grade(self, episode: Episode, start_commit: str | None = None) -> RewardResult:
        """Grade in the agent's own sandbox (`reward.sandbox: same`): the patch is taken there, then steps
        3-6. `start_commit` defaults to the episode's, else HEAD."""
        episode = require_episode(episode, "SWEBenchReward.grade")
        deployment, instance, repo_dir = episode.deployment, episode.task, episode.repo_dir
        started = time.monotonic()
        instance_id = instance.instance_id
        repository = await deployment.run(f"git -C {shlex.quote(repo_dir)} rev-parse --git-dir", timeout=60)
        if repository.exit_code != 0:  # the agent deleted or broke it: its work cannot be graded, and that is on it
            error = f"{repo_dir} is no longer a git repository, so there is no patch to grade: {repository.output.strip()[-300:]}"
            return self._finish(RewardResult(instance_id, "patch_failed", error=error, sandbox="same"), started)
        start = start_commit or await self._episode_start(episode)
        try:
            patch = await capture_in_sandbox(deployment, repo_dir, start, self.config.max_patch_bytes)
        except PatchRejected as exc:
            return self._finish(RewardResult(instance_id, "patch_rejected", error=str(exc), sandbox="same"), started)
        return await self._test(episode, start, RewardResult(instance_id, "unresolved", patch=patch, sandbox="same"), started)

    async def _open_fresh(self, instance: Task, start: str | None, beside: Deployment | None = None) -> Episode:
        """The episode of a new sandbox of the task at its start state (the warm pool's when there is one), checked to
        be at `start` when given; it carries the test patch its start state made, where one did.
        `beside`: the agent's sandbox, where the new one must be placed to read its changes (its node)."""
        from uni_agent_gym.workspaces.start_state import open_task

        gym = self.gym
        if beside is not None and beside.beside():
            gym = gym.model_copy(update={"deployment": gym.deployment.model_copy(update=beside.beside())})
        fresh = await open_task(instance, gym, grading=True)
        if start is not None:
            try:
                head = await self._episode_start(fresh)
                if head != start:
                    raise DeploymentError(f"a fresh sandbox of {instance.instance_id} starts at {head}, the episode at {start}")
            except BaseException:
                await release(fresh.deployment)
                raise
        return fresh

    async def _grade_patch_in(self, fresh: Episode, start: str, to_apply: tuple[RewardResult, str], started: float) -> RewardResult:
        """Steps 2-6 in a fresh sandbox: apply the patch (`_to_apply`'s result and patch) the official
        harness's way, then test."""
        result, patch = to_apply
        if result.error == EMPTY_PATCH:  # captured in an open sandbox (docker, ray): nothing to run
            return self._finish(result, started)
        applied, log = await apply_patch(fresh.deployment, fresh.repo_dir, patch, "patch")
        if not applied:
            result.status, result.error = "patch_failed", log[-4000:]
            return self._finish(result, started)
        return await self._test(fresh, start, result, started)

    @staticmethod
    def _to_apply(instance: Task, patch: str) -> tuple[RewardResult, str]:
        """The result a fresh grading fills, and what of the patch it applies: not what the patch says about the
        task's protected paths (the family's own runner and tests). Nothing left: the result is already the
        verdict (`EMPTY_PATCH`), since in a fresh sandbox only the patch differs from the start."""
        result = RewardResult(instance.instance_id, "unresolved", patch=patch)
        protected = instance.protected_paths or []
        if protected:
            patch, dropped = drop_files(patch, protected)
            result.restored.update({path: "the task's test runner, which a patch may not change" for path in dropped})
        if not patch.strip():
            result.error = EMPTY_PATCH
        return result, patch

    async def _test(self, episode: Episode, start: str, result: RewardResult, started: float) -> RewardResult:
        """Steps 3-6: runner files and test files back to `start`, the test patch, the tests, the grade."""
        episode = self._with_overrides(episode)
        deployment, instance, repo_dir, test_patch = episode.deployment, episode.task, episode.repo_dir, episode.test_patch
        command = result.test_command = episode.test_command
        result.environment, result.image_id, result.start_commit = episode.environment, episode.image_id, start
        self._validation(instance, result)
        result.network_isolated = False if self.config.network else await deployment.isolate_network()
        result.restored.update(await runner_files_to_restore(deployment, repo_dir, start, result.patch, command, language_of(instance)))
        protected = instance.protected_paths or []
        restore = [path for path in result.restored if not any(path == p or path.startswith(p + "/") for p in protected)]
        await reset_files(deployment, repo_dir, start, patch_files(test_patch) + list(instance.reset_files or []) + list(self.also_reset) + restore)
        durations = result.durations
        durations["reset"] = time.monotonic() - started

        scratch = f"/tmp/uni-agent-gym-grade-{secrets.token_hex(6)}"  # unique: local graders share the host's /tmp
        if test_patch:
            await deployment.write_file(f"{scratch}.diff", test_patch)
            applied = await deployment.run(f"cd {shlex.quote(repo_dir)} && {SAFE_GIT} apply --verbose {scratch}.diff; rc=$?; rm -f {scratch}.diff; (exit $rc)", timeout=120)
            if applied.exit_code != 0:
                result.status, result.error, result.stopped_at = "test_patch_failed", applied.output[-2000:], "test_patch"
                return self._finish(result, started)

        runner = task_runner(instance, command)  # (record, parser) of the runner the log comes from; None: unknown
        canaries = await self._plant_canaries(episode, runner, command)
        result.canaries = dict(canaries.planted) if canaries is not None else {}
        if canaries is not None and canaries.command:  # runs of their own (swebench's Maven rows: one test a run)
            command = result.test_command = canaries.command
        # what configures the runner, read before anything of the patch's runs (it could rewrite it)
        modules = runner_modules_touched(instance.repo, result.patch)
        if runner is not None and runner[0].configuration_changes is not None:
            modules += await runner[0].configuration_changes(deployment, repo_dir, start, result.patch)
        result.build_command = episode.build_command
        if result.build_command and not await self._build(deployment, repo_dir, result):
            return self._finish(result, started)
        await self._run_and_grade(episode, result, runner, canaries)
        if result.status == "resolved" and modules:  # graded again with the runner's implementation as at the start
            await reset_files(deployment, repo_dir, start, modules)
            rerun = await self._run_and_grade(episode, RewardResult(result.instance_id, "unresolved", test_command=command), runner, canaries)
            failing = sorted(test for test, status in rerun.test_statuses.items() if status != "PASSED")
            result.runner_rerun = {"modules": modules, "status": rerun.status, "not_passed": failing, "integrity_problems": rerun.integrity_problems}
            durations["tests_rerun"] = rerun.durations.get("tests", 0.0)
            if rerun.status != "resolved":
                shown = f": {', '.join(failing[:5])}{' ...' if len(failing) > 5 else ''} did not pass" if failing else ""
                result.integrity_problems.append(
                    f"resolved only with the patch's changes to the test runner's implementation or configuration ({', '.join(modules)}); "
                    f"with them as at the start commit the result is {rerun.status}{shown}"
                )
                result.status, result.resolved, result.reward = "unresolved", False, 0.0
        return self._finish(result, started)

    def _with_overrides(self, episode: Episode) -> Episode:
        """The episode whose commands grading runs: the reward's own `environments` entry for the task where it has one
        (the differential check's extended command is one), else the one its sandbox was opened with (`env.environments`):
        a reward made without the file grades with the commands the sandbox was made for."""
        mine = self.environments.get(episode.task.instance_id)
        if mine is not None and mine != episode.overrides:
            return dataclasses.replace(episode, overrides=mine)
        return episode

    async def _plant_canaries(self, episode: Episode, runner: tuple[Runner, Parser] | None, command: str) -> Canaries | None:
        """Tests that must fail, beside the graded ones (`canaries.py`), where `reward.canaries` is on."""
        instance = episode.task
        planted_for = canary_runner(instance, command, runner) if self.config.canaries and runner is not None else None
        if planted_for is None:
            return None
        graded = list(instance.FAIL_TO_PASS) + list(instance.PASS_TO_PASS or [])
        return await plant(episode.deployment, episode.repo_dir, planted_for, episode.test_patch, graded, command)

    async def _build(self, deployment: Deployment, repo_dir: str, result: RewardResult) -> bool:
        """The task's build, with the patch and the test patch in place; False (and the result's status
        set) when it did not build: a build the patch breaks is unresolved, as tests that fail to import are."""
        started = time.monotonic()
        try:
            run = await deployment.run(f"cd {shlex.quote(repo_dir)} && ( {result.build_command} )", timeout=self.config.timeout, output_limit=self.config.log_limit)
        except DeploymentError as exc:
            if not await deployment.engine_answers():
                raise
            result.status, result.error = "tests_crashed", f"the sandbox failed while the patched code was built, and its engine still answers: {exc}"
            return False
        finally:
            result.durations["build"] = time.monotonic() - started
        result.build_log = run.output
        if run.timed_out:
            result.status, result.error = "timeout", f"the build did not finish in {self.config.timeout} s"
            return False
        if run.exit_code != 0:
            result.status, result.error, result.stopped_at = "unresolved", f"the build failed (exit code {run.exit_code}): {run.output.strip()[-1500:]}", "build"
            self._never_started(result, run.exit_code, "the build", run.output)
            return False
        return True

    @staticmethod
    def _never_started(result: RewardResult, exit_code: int | None, what: str, output: str) -> None:
        """The zero rule: a command that never started (exit 126/127: its interpreter, toolchain or build missing) with no
        graded test reaching a status, in an environment that has not validated, is the infrastructure's failure (masked
        in training), not a 0 the policy learns from. In a validated environment the same exit is the patch's doing
        (it broke the build or the imports): it stays unresolved."""
        if exit_code not in NOT_STARTED or result.environment_validated or any(status is not None for status in result.test_statuses.values()):
            return
        where = f"environment {result.environment}, not validated" if result.environment else "an environment not built or validated here"
        result.status, result.stopped_at = "infra_error", "not_started"
        result.error = (
            f"{what} did not start (exit code {exit_code}: a command, interpreter or toolchain is missing) and no graded test "
            f"reached a status, in {where} (`uni-agent-gym validate`): {output.strip()[-1500:]}"
        )

    async def _run_and_grade(
        self, episode: Episode, result: RewardResult, runner: tuple[Runner, Parser] | None, canaries: Canaries | None
    ) -> RewardResult:
        """Step 5-6 once: run the test command (with the guard), parse, cross-check and grade into `result`."""
        deployment, instance, repo_dir = episode.deployment, episode.task, episode.repo_dir
        # The output streams to the grader through the session (the code under test can add to it, not
        # rewrite it, as it could a log file), the last log_limit bytes of it kept; the exit code is bash's.
        command, durations = result.test_command, result.durations
        guard = self._guard(instance, runner, command)
        loads_the_guard = await guard.install(deployment) if guard else ""
        if runner is not None:  # Maven: no agent attaches to its JVM from the tests' (maven_poms.py)
            loads_the_guard += runner[0].run_prefix
        tests_started = time.monotonic()
        try:
            run = await deployment.run(f"cd {shlex.quote(repo_dir)} && ( {loads_the_guard}{command} )", timeout=self.config.timeout, output_limit=self.config.log_limit)
        except DeploymentError as exc:  # the sandbox died under the patched code: its doing, unless the engine died
            durations["tests"] = time.monotonic() - tests_started
            if not await deployment.engine_answers():
                raise
            result.status = "tests_crashed"
            result.error = f"the sandbox failed while the patched tests ran, and its engine still answers: {exc}"
            return result
        durations["tests"] = time.monotonic() - tests_started
        log, exit_code = run.output, run.exit_code
        result.exit_code = exit_code
        result.log = f"{START_TEST_OUTPUT}\n{log}\n{END_TEST_OUTPUT} (exit code {exit_code})\n"
        if run.timed_out:
            result.status = "timeout"
            return result

        parse_started = time.monotonic()
        record = await guard.collect(deployment, self.config.log_limit) if guard is not None else None
        parse = log_parser(instance)
        try:
            statuses = await asyncio.to_thread(parse, log)  # a 20 MB log takes seconds: off the event loop
        except Exception as exc:  # noqa: BLE001 - the dataset's parser, on a log the patched code wrote
            return self._log_unreadable(result, exc, parse_started)
        result.parsed_statuses = dict(statuses)
        if instance.grading == EXPECTED_OUTPUT_GRADING:  # R2E-Gym: the outcomes must be exactly the expected ones
            passed, result.tests = r2e_gym.compare(statuses, instance.expected_output)
            result.test_statuses = dict(statuses)
            tests = []  # its names are not pytest's node ids: the runner's own report and exit code are what can be checked
        else:
            passed, result.tests, result.test_statuses = grade_fail_to_pass(instance, statuses, fail_to_pass_only=self.config.fail_to_pass_only)
            tests = [name for test in result.test_statuses for name in graded_names(test, statuses)]
        try:  # the checks read the log's lines again with the same parser
            result.integrity_problems = await asyncio.to_thread(check_run, runner, log, statuses, exit_code, tests)
            if instance.grading != EXPECTED_OUTPUT_GRADING and (rejected := rejected_run(statuses, log, exit_code)):
                result.integrity_problems.append(rejected)
            if guard is not None:
                result.integrity_problems += guard.problems(record, statuses, parse)
        except Exception as exc:  # noqa: BLE001 - as above
            return self._log_unreadable(result, exc, parse_started)
        if canaries is not None:
            result.integrity_problems += canaries.problems(statuses)
        durations["parse"] = time.monotonic() - parse_started
        result.resolved = passed and not result.integrity_problems
        result.status = "resolved" if result.resolved else "unresolved"
        result.reward = 1.0 if result.resolved else 0.0
        if not result.resolved:
            self._never_started(result, exit_code, "the test command", log)
        return result

    @staticmethod
    def _log_unreadable(result: RewardResult, exc: Exception, parse_started: float) -> RewardResult:
        """A parser that raises on what the code under test printed (seaborn's on a line that is just `PASSED`) is the
        patch's doing: as the gym's own error it was an infrastructure verdict, which training masks."""
        result.durations["parse"] = time.monotonic() - parse_started
        result.status = "tests_crashed"
        result.error = f"the task's log parser failed on the patched tests' output: {type(exc).__name__}: {str(exc)[:300]}"
        return result

    def _guard(self, instance: Task, runner: tuple[Runner, Parser] | None, command: str) -> Guard | None:
        """The grading guard of this run, where `reward.guard` is on and the runner is one it can load into."""
        if not self.config.guard or instance.grading == EXPECTED_OUTPUT_GRADING:
            return None
        return Guard(runner[0].name) if runner is not None and runner[0].guarded and can_load(command) else None

    @staticmethod
    def log_reader(instance: Task) -> Any:
        """What the log cross-checks reread the log with: the task's swebench parser by name (its runner
        follows from it), else its family's parser (the runner then follows from the test command)."""
        name = instance.log_parser or repo_parser_name(instance.repo)
        if name in swebench_parser_names():
            return swebench_parser(name, instance)  # bound to the task's spec; its runner is found by its name
        parse = log_parser(instance)
        return lambda log, test_spec: parse(log)

    def _validation(self, instance: Task, result: RewardResult) -> None:
        """The row's verdict and strength on the result's image: this machine's store and env.validations, merged
        (`workspaces/validations_file.py`)."""
        if self.gym is not None:
            validations = load_validations(self.gym.env.validations) if self.gym.env.validations else None
            known = task_validation(instance, self.gym.env.cache_dir, validations, result.environment, result.image_id)
            result.environment_validated, result.validation, result.strength = known.environment_validated, known.report(), known.strength_report()

    @staticmethod
    def _finish(result: RewardResult, started: float) -> RewardResult:
        result.durations["total"] = time.monotonic() - started
        if not result.resolved and (found := classify_text(f"{result.build_log}\n{result.log}")) is not None:
            result.infra_label = {"reason": found[0], "tier": found[1]}
        return result
