"""Multi-SWE-bench (multi-swe-bench/multi-swe-bench, ByteDance-Seed/Multi-SWE-bench): pull requests in many
languages, one row per PR (`org`, `repo` (the name alone), `number`, `base` {label, ref, sha}, `fix_patch`,
`test_patch`, `resolved_issues`, and per test group a dict test -> {run, test, fix} statuses).

The `multi-swe-bench` package (1.1.2, PyPI: the harness, no rows) has one `Instance` class per repository
(`multi_swe_bench/harness/repos/<language>/<org>/<repo>.py`, found with `Instance.create(pr, config)`): it
names the instance's image (`mswebench/<org>_m_<repo>:pr-<number>`, lower case), writes the scripts the
image runs and parses their logs (`parse_log(log) -> TestResult` of passed, failed and skipped tests). The
task's language is the folder its harness sits in; its parser is that `parse_log`.

Grading follows the package's (harness/report.py `Report.check`, gen_report.py): it runs the tests without
patches, with the test patch, and with the test patch and the fix, and a fix resolves the instance when
every test of the row's p2p_tests, f2p_tests, s2p_tests and n2p_tests falls in the same group of the
fix's report. The test-patch run is the row's, so each of them must pass after the fix: FAIL_TO_PASS is
f2p + s2p (skipped with the test patch alone) + n2p (absent with the test patch alone: new tests, or a
test patch that does not compile without the fix; rows whose only transitions are n2p are common), and
PASS_TO_PASS is p2p. The package also refuses a fix under which a test that passed with the test patch
alone fails: p2p_tests lists every such test the gold fix kept passing.

Test command: the instance's `fix-run.sh` (what its image runs with both patches) without its shebang and
its lines naming `test.patch`/`fix.patch`, because the grader applies the test patch and the agent's patch
itself; the lines that set the scene (`set -e`, `cd /home/<repo>`, nvm's `source`) stay. The working
directory is the one that script changes into first (`/home/<repo>` for most). A script that applies a
patch another way (inline, through a heredoc) is refused rather than half-run.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from typing import Any

from uni_agent_gym.datasets.base import (
    FAIL_TO_PASS_GRADING, PYTHON, Family, InstanceError, Parser, check_diffs, json_field, language_name, other_language_environment, require,
)  # fmt: skip
from uni_agent_gym.datasets.task import Task

NAME = "multi-swe-bench"
VERSION = "1.1.2"
REQUIRED = ("org", "repo", "number", "base", "fix_patch", "test_patch")
FAIL_GROUPS = ("f2p_tests", "s2p_tests", "n2p_tests")  # each must pass after the fix; not before (see the module doc)
_PATCH_FILE = re.compile(r"\b(test|fix)\.patch\b")
_APPLY = re.compile(r"^\s*(if\s+!?\s*)?(git\b.*\bapply|patch)\b")
_STATUS = {"passed_tests": "PASSED", "failed_tests": "FAILED", "skipped_tests": "SKIPPED"}


def recognise(row: dict[str, Any]) -> str | None:
    if all(name in row for name in ("org", "number", "base", "fix_patch")):
        return "org, number, base and fix_patch columns (a pull request)"
    return None


def instance_id_of(row: dict[str, Any]) -> str:
    """The row's instance_id, else the package's `<org>__<repo>-<number>`."""
    return str(row.get("instance_id") or f"{row.get('org')}__{_name(row)}-{row.get('number')}")


def _name(row: dict[str, Any]) -> str:
    """The repository's name: the row's `repo`, or the task's `org/name` normalised before."""
    return str(row.get("repo") or "").rsplit("/", 1)[-1]


def harness(row: dict[str, Any]) -> Any:
    """The package's `Instance` of the row's pull request; a repository it has no harness for is this row's error."""
    instance_id = instance_id_of(row)
    try:
        Instance, PullRequest, Config = _package()
    except ImportError as exc:
        raise InstanceError(f"Instance {instance_id!r}: Multi-SWE-bench rows need the multi-swe-bench package "
                            f"(pip install multi-swe-bench=={VERSION}): {exc}") from None  # fmt: skip
    if not str(row.get("number")).isdigit():
        raise InstanceError(f"Instance {instance_id!r}: field number expects the pull request's number, got {row.get('number')!r}")
    fields = {"org": row.get("org"), "repo": _name(row), "number": int(row["number"]), "state": row.get("state") or "",
              "title": row.get("title") or "", "body": row.get("body"), "fix_patch": row.get("fix_patch") or "",
              "test_patch": row.get("test_patch") or "", "tag": row.get("tag") or "", "number_interval": row.get("number_interval") or "",
              "lang": row.get("lang") or "", "base": json_field(instance_id, "base", row.get("base"), dict),
              "resolved_issues": json_field(instance_id, "resolved_issues", row.get("resolved_issues") or [], list)}  # fmt: skip
    try:
        pr = PullRequest.from_json(json.dumps(fields))
    except Exception as exc:  # noqa: BLE001 - marshmallow and the dataclasses raise several types; say which row
        raise InstanceError(f"Instance {instance_id!r}: not a Multi-SWE-bench pull request ({' '.join(str(exc).split())[:200]})") from None
    try:
        return Instance.create(pr, Config(need_clone=False, global_env=None, clear_env=False))
    except ValueError as exc:
        if "is not registered" in str(exc):
            raise InstanceError(f"Instance {instance_id!r}: multi-swe-bench {VERSION} has no harness for {fields['org']}/{fields['repo']}") from None
        raise _harness_failed(instance_id, f"{fields['org']}/{fields['repo']}", exc) from None
    except Exception as exc:  # noqa: BLE001 - a harness is third-party code; say which row it failed on
        raise _harness_failed(instance_id, f"{fields['org']}/{fields['repo']}", exc) from None


def _harness_failed(instance_id: str, repo: str, exc: Exception) -> InstanceError:
    return InstanceError(f"Instance {instance_id!r}: multi-swe-bench {VERSION}'s harness for {repo} fails on this row: {' '.join(str(exc).split())[:200]}")


@functools.cache
def _package() -> tuple[Any, Any, Any]:
    """The package's Instance (every repository's harness registered), PullRequest and Config."""
    import multi_swe_bench.harness.repos  # noqa: F401 - registers each repository's Instance
    from multi_swe_bench.harness.image import Config
    from multi_swe_bench.harness.instance import Instance
    from multi_swe_bench.harness.pull_request import PullRequest

    return Instance, PullRequest, Config


def harness_language(instance: Any) -> str:
    """The language folder the instance's harness sits in (`repos/java/google/gson.py` -> java; golang -> go)."""
    return language_name(type(instance).__module__.split(".")[3])


def language(row: dict[str, Any]) -> str | None:
    """The row's language: its harness's, else the row's own `lang` / `language` column, else None."""
    try:
        return harness_language(harness(row))
    except InstanceError:
        return language_name(row.get("lang") or row.get("language"))


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    instance_id = instance_id_of(row)
    require(row, REQUIRED, instance_id=instance_id, may_be_empty=("test_patch",))
    instance = harness(row)
    base = json_field(instance_id, "base", row["base"], dict)
    groups = {name: json_field(instance_id, name, row.get(name) or {}, dict) for name in (*FAIL_GROUPS, "p2p_tests")}
    fail_to_pass = [test for name in FAIL_GROUPS for test in groups[name]]
    if not fail_to_pass:
        raise InstanceError(f"Instance {instance_id!r}: fields f2p_tests, s2p_tests and n2p_tests are empty (nothing could show a fix)")
    check_diffs(instance_id, row, ("fix_patch", "test_patch"))
    workdir, command = fix_run(instance_id, instance)
    task = dict(row)
    task.update(
        family=NAME, language=harness_language(instance), instance_id=instance_id, repo=f"{row['org']}/{_name(row)}",
        base_commit=base.get("sha"), patch=row["fix_patch"],
        problem_statement=problem_statement(row), FAIL_TO_PASS=fail_to_pass, PASS_TO_PASS=list(groups["p2p_tests"]),
        image_name=instance.name(), workdir=workdir, test_command=command, build_command=None, log_parser=NAME,
        grading=FAIL_TO_PASS_GRADING,
    )  # fmt: skip
    task["environment"] = other_language_environment(task["language"]) if task["language"] != PYTHON else {
        "unbuildable": f"multi-swe-bench's image recipe for {task['repo']} installs with the network: run it on its own image (env.workspace: image)"}
    return task


def problem_statement(row: dict[str, Any]) -> str:
    """The resolved issues' titles and bodies (what Multi-SWE-bench's agents are given), else the PR's own."""
    issues = json_field(instance_id_of(row), "resolved_issues", row.get("resolved_issues") or [], list)
    texts = [f"{issue.get('title') or ''}\n{issue.get('body') or ''}".strip() for issue in issues if isinstance(issue, dict)]
    return "\n\n".join(text for text in texts if text) or f"{row.get('title') or ''}\n{row.get('body') or ''}".strip()


def fix_run(instance_id: str, instance: Any) -> tuple[str, str]:
    """(working directory, test command) from the instance's fix-run.sh (see the module doc)."""
    repo = instance.repo_name
    try:
        script = {file.name: file.content for file in instance.dependency().files()}.get("fix-run.sh")
    except Exception as exc:  # noqa: BLE001 - a harness is third-party code; say which row it failed on
        raise _harness_failed(instance_id, repo, exc) from None
    if script is None:
        raise InstanceError(f"Instance {instance_id!r}: multi-swe-bench {VERSION}'s harness for {repo} has no fix-run.sh")
    lines = [line for line in script.splitlines() if line.strip() and not line.startswith("#!")]
    applying = [index for index, line in enumerate(lines) if _PATCH_FILE.search(line)]
    if not applying or "<<" in script:
        raise InstanceError(f"Instance {instance_id!r}: multi-swe-bench {VERSION}'s fix-run.sh for {repo} applies the patches in a way "
                            "the gym cannot separate from its test command")  # fmt: skip
    first, last = applying[0], applying[-1]
    if lines[last].lstrip().startswith("if "):  # `if ! git apply ...; then echo ...; exit 1; fi`
        last = next((index for index in range(last, len(lines)) if lines[index].strip() == "fi"), last)
    kept = lines[:first] + lines[last + 1 :]
    if any(_APPLY.match(line) for line in kept):
        raise InstanceError(f"Instance {instance_id!r}: multi-swe-bench {VERSION}'s fix-run.sh for {repo} applies a patch outside its "
                            "test.patch/fix.patch lines")  # fmt: skip
    changes = [shlex.split(line)[1] for line in kept if line.startswith("cd ") and len(shlex.split(line)) > 1]
    if not changes:
        raise InstanceError(f"Instance {instance_id!r}: multi-swe-bench {VERSION}'s fix-run.sh for {repo} does not say where the repository is (no cd)")
    return changes[0], "\n".join(kept)


def parser(task: Task) -> Parser:
    """The harness's `parse_log`, as `log -> {test: PASSED | FAILED | SKIPPED}`."""
    instance = harness(task.to_dict())  # the package reads the row

    def statuses(log: str) -> dict[str, str]:
        result = instance.parse_log(log)
        return {test: status for group, status in _STATUS.items() for test in sorted(getattr(result, group))}

    def parse(log: str) -> dict[str, str]:
        try:
            return statuses(log)
        except ValueError:
            # The package refuses a log that reports a test both passed and failed (`TestResult`'s check): the code
            # under test can print such a line, and an exception here would make the agent's forgery the
            # infrastructure's error. Read each line on its own instead; a failure wins over a pass (the log
            # cross-checks name the contradiction).
            found: dict[str, str] = {}
            for line in log.splitlines():
                try:
                    for test, status in statuses(line).items():
                        found[test] = status if found.get(test) in (None, "PASSED") else found[test]
                except ValueError:
                    continue
            return found

    return parse


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    columns="org, number, base and fix_patch columns (a pull request; f2p_tests/p2p_tests/s2p_tests/n2p_tests dicts)",
    images="the multi-swe-bench package's image of the instance: mswebench/<org>_m_<repo>:pr-<number>",
    offline="no: its images install their toolchains and dependencies with the network",
    language=language,
)
