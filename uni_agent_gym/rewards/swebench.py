"""The SWE-bench reward: FAIL_TO_PASS (and PASS_TO_PASS) graded by the `swebench` package's rules.

At the end of an episode, in the episode's own sandbox:

1. capture the agent's patch: `git diff` (new and binary files included) against the commit the
   episode started from (SWE-bench images carry one environment commit over `base_commit`);
2. return the files `test_patch` touches, and any test-runner configuration the agent touched
   (`conftest.py`, `pytest.ini`, `tox.ini`), to that commit; delete files that did not exist there;
3. apply `test_patch` (failing to is an infrastructure error, never a pass);
4. run the spec's test command on the test files, with a timeout, its output going to a log file
   (docker sandboxes are cut off every network first, unless `reward.network`);
5. parse the log with swebench's parser for the repo, cross-check it against the runner's exit code
   and own summary (`integrity.py`), and grade with swebench's `get_eval_tests_report` and
   `get_resolution_status`. A FAIL_TO_PASS test that is skipped, missing or errors has not passed.

The hidden tests enter the sandbox only in step 3, after the agent is done.
"""

from __future__ import annotations

import dataclasses
import secrets
import shlex
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from swebench.harness.constants import END_TEST_OUTPUT, FAIL_TO_PASS, PASS_TO_PASS, START_TEST_OUTPUT, ResolvedStatus
from swebench.harness.grading import get_eval_tests_report, get_resolution_status
from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

from uni_agent_gym.config import RewardConfig
from uni_agent_gym.deployments import Deployment
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards.integrity import check_log
from uni_agent_gym.rewards.patches import capture_patch, git_in, reset_files
from uni_agent_gym.specs import environment_spec

HARNESS_FILES = ("conftest.py", "pytest.ini", "tox.ini")  # test-runner configuration the agent may not change
STATUSES = ("resolved", "unresolved", "patch_failed", "test_patch_failed", "timeout", "infra_error")


@dataclass
class RewardResult:
    """The grade of one instance; `to_dict()` is its JSON report."""

    instance_id: str
    status: str  # one of STATUSES
    reward: float = 0.0
    resolved: bool = False
    tests: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # swebench's report: FAIL_TO_PASS/PASS_TO_PASS success/failure
    test_statuses: dict[str, str | None] = field(default_factory=dict)  # each graded test's parsed outcome (None: missing)
    integrity_problems: list[str] = field(default_factory=list)
    patch: str = ""
    test_command: str = ""
    exit_code: int | None = None
    log: str = ""
    error: str | None = None
    network_isolated: bool = False  # the tests ran with no network (docker)
    durations: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class SWEBenchReward:
    """Grades the sandbox of a finished episode; an env `Reward` (returns the report, with "reward")."""

    def __init__(self, config: RewardConfig | None = None, environments: dict[str, dict[str, Any]] | None = None) -> None:
        self.config = config or RewardConfig()
        self.environments = environments or {}

    async def __call__(self, deployment: Deployment, instance: dict[str, Any], repo_dir: str) -> dict[str, Any]:
        return (await self.grade(deployment, instance, repo_dir)).to_dict()

    async def grade(
        self, deployment: Deployment, instance: dict[str, Any], repo_dir: str, start_commit: str | None = None
    ) -> RewardResult:
        """Run steps 1-5 of the module docstring. `start_commit` defaults to the episode's
        `instance["environment_commit"]`, else HEAD. A dead sandbox raises `DeploymentError`."""
        started = time.monotonic()
        instance_id = instance["instance_id"]
        repository = await deployment.run(f"git -C {shlex.quote(repo_dir)} rev-parse --git-dir", timeout=60)
        if repository.exit_code != 0:  # the agent deleted or broke it: its work cannot be graded, and that is on it
            error = f"{repo_dir} is no longer a git repository, so there is no patch to grade: {repository.output.strip()[-300:]}"
            return self._finish(RewardResult(instance_id, "patch_failed", error=error), started)
        start = start_commit or instance.get("environment_commit") or (await git_in(deployment, repo_dir, "git rev-parse HEAD")).strip()
        network_isolated = False if self.config.network else await deployment.isolate_network()
        patch = await capture_patch(deployment, repo_dir, start)
        spec = environment_spec(instance, self.environments)
        harness = [path for path in patch_files(patch) if PurePosixPath(path).name in HARNESS_FILES]
        await reset_files(deployment, repo_dir, start, patch_files(instance["test_patch"]) + harness)
        durations = {"reset": time.monotonic() - started}
        result = RewardResult(instance_id, "unresolved", patch=patch, test_command=spec.test_command, durations=durations,
                              network_isolated=network_isolated)  # fmt: skip

        scratch = f"/tmp/uni-agent-gym-grade-{secrets.token_hex(6)}"  # unique: local graders share the host's /tmp
        if instance["test_patch"]:
            await deployment.write_file(f"{scratch}.diff", instance["test_patch"])
            applied = await deployment.run(f"cd {shlex.quote(repo_dir)} && git apply --verbose {scratch}.diff; rc=$?; rm -f {scratch}.diff; (exit $rc)", timeout=120)
            if applied.exit_code != 0:
                result.status, result.error = "test_patch_failed", applied.output[-2000:]
                return self._finish(result, started)

        tests_started = time.monotonic()
        log_path = f"{scratch}.log"
        run = await deployment.run(
            f"cd {shlex.quote(repo_dir)} && {{ ( {spec.test_command} ) > {log_path} 2>&1; echo \"exit=$?\" > {log_path}.rc; }}",
            timeout=self.config.timeout,
        )
        durations["tests"] = time.monotonic() - tests_started
        log, exit_code = await self._read_log(deployment, log_path)
        result.exit_code = exit_code
        result.log = f"{START_TEST_OUTPUT}\n{log}\n{END_TEST_OUTPUT} (exit code {exit_code})\n"
        if run.timed_out:
            result.status = "timeout"
            return self._finish(result, started)

        parse_started = time.monotonic()
        statuses = MAP_REPO_TO_PARSER[instance["repo"]](log, None)
        graded = {FAIL_TO_PASS: instance["FAIL_TO_PASS"], PASS_TO_PASS: [] if self.config.fail_to_pass_only else instance["PASS_TO_PASS"]}
        result.tests = get_eval_tests_report(statuses, graded)
        result.test_statuses = {test: statuses.get(test) for test in graded[FAIL_TO_PASS] + graded[PASS_TO_PASS]}
        result.integrity_problems = check_log(MAP_REPO_TO_PARSER[instance["repo"]], spec.test_command, log, statuses, exit_code, graded[FAIL_TO_PASS] + graded[PASS_TO_PASS])
        durations["parse"] = time.monotonic() - parse_started
        result.resolved = get_resolution_status(result.tests) == ResolvedStatus.FULL.value and not result.integrity_problems
        result.status = "resolved" if result.resolved else "unresolved"
        result.reward = 1.0 if result.resolved else 0.0
        return self._finish(result, started)

    async def _read_log(self, deployment: Deployment, path: str) -> tuple[str, int | None]:
        await deployment.run(f"tail -c {self.config.log_limit} {path} > {path}.tail 2>/dev/null", timeout=120)
        log = (await deployment.read_file(f"{path}.tail")).decode("utf-8", errors="replace")
        rc = await deployment.run(f"cat {path}.rc 2>/dev/null; rm -f {path} {path}.tail {path}.rc", timeout=60)
        code = rc.output.strip().removeprefix("exit=")
        return log, int(code) if code.isdigit() else None

    @staticmethod
    def _finish(result: RewardResult, started: float) -> RewardResult:
        result.durations["total"] = time.monotonic() - started
        return result
