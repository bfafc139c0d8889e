"""What every dataset family shares: the task a row becomes, the row checks, swebench's parsers by name.

A family module (`swebench.py`, `swe_gym.py`, `swe_rebench.py`, `swe_smith.py`, `r2e_gym.py`,
`multi_swe_bench.py`) turns a row of its dataset into the dict of a *task*, the row with the keys below filled in;
`normalise` makes it a `Task` (`task.py`), which the env, the image builder, the reward, `grade`, `eval`,
`prepare-data` and the loops read. Source columns keep their meaning; what a family derives goes
under its own key, so normalising a task again gives the same task. Nothing is set on a task while it runs: what a
run has (the start commit, what its image records) is its `Episode`'s (`workspaces/episode.py`). The toy's own:
`mirror` (its repository), `needs_environment` (False: any image runs it).

| key | what |
|---|---|
| `family` | the family's name (`swe-bench`, `swe-gym`, `swe-rebench`, `swe-smith`, `r2e-gym`, `multi-swe-bench`) |
| `language` | the repository's language, lower case (`python`, `c`, `cpp`, `go`, `java`, `javascript`, `typescript`, `rust`, `php`, `ruby`, ...): what toolchain its image and runner need |
| `instance_id`, `repo`, `problem_statement` | as in SWE-bench (`repo` is `owner/name`) |
| `base_commit` | the commit the family's image (or a mirror) holds the repository at |
| `version` | the row's version, as text (swebench's specs are keyed by repository and version) |
| `patch` | the reference fix as the row gives it (`datasets.gold_patch`: the fix `validate` grades) |
| `FAIL_TO_PASS`, `PASS_TO_PASS` | lists of test names (empty for R2E-Gym, graded by `expected_output`) |
| `test_patch` | the hidden tests as a diff, applied when grading ("" when the family brings them otherwise) |
| `image_name` | the family's image of the instance (`workspace: image`) |
| `workdir` | where the repository is in that image |
| `test_command` | the family's test command for this instance, or None: the environment's (swebench's specs) |
| `commands_from` | where `test_command` and `build_command` came from when not the row: `swebench-spec` (its spec's defaults; grading on an image built here runs what the image records instead, `workspaces/recorded_environment.py`) |
| `build_command` | shell commands the grader runs in `workdir` after applying the patches and before `test_command` (swebench's non-Python `build`: `make distclean && make`), or None |
| `log_parser` | a swebench parser name (`parse_log_pytest`), `swesmith` (the repository's profile), `r2e-gym` or `multi-swe-bench` (the package's per-repository `parse_log`) |
| `grading` | `fail-to-pass` (swebench's F2P/P2P rules) or `expected-output` (R2E-Gym's exact comparison) |
| `eval_type` | swebench's `EvalType` of a fail-to-pass grading: `pass_and_fail`, or `fail_only` (a test fails only where its log says FAILED: the row's own column, else swebench's `FAIL_ONLY_REPOS`) |
| `expected_output` | R2E-Gym's graded statuses, `{test: status}` |
| `start_patch`, `hidden_files` | a start state made from `base_commit` (SWE-smith: the bug applied, its tests removed) |
| `reset_files` | test files returned to the start commit before grading besides those of `test_patch` |
| `hidden_paths` | paths of the image that must not exist in the agent's sandbox (R2E-Gym's tests and runner) |
| `protected_paths` | repository paths a patch may not change (the family's runner files) |
| `history` | the family's own history mode (SWE-smith: `none`), over `env.history` |
| `environment` | an environment recipe carried by the row (SWE-rebench), in the environments-file shape |
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from uni_agent_gym.diffs import patch_files
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.toolchains import PYTHON

if TYPE_CHECKING:
    from uni_agent_gym.datasets.task import Task

Parser = Callable[[str], dict[str, str]]  # a test log -> {test name: status}
# Other spellings of a language, as datasets and harnesses write them (swebench's file extensions, Multi-SWE-bench's folders)
LANGUAGE_ALIASES = {"py": PYTHON, "js": "javascript", "ts": "typescript", "rs": "rust", "rb": "ruby", "golang": "go",
                    "c++": "cpp", "cxx": "cpp", "c#": "csharp", "cs": "csharp", "kt": "kotlin"}  # fmt: skip
FAIL_TO_PASS_GRADING, EXPECTED_OUTPUT_GRADING = "fail-to-pass", "expected-output"
# swebench's `EvalType`s: every listed test graded both ways, or a test counts as failed only when its log says FAILED (the
# repositories whose parsers record failures alone, and 5.x rows that say so)
PASS_AND_FAIL, FAIL_ONLY = "pass_and_fail", "fail_only"
IMAGE_REPO_DIR = "/testbed"


class InstanceError(UniAgentGymError, ValueError):
    """A dataset row is unusable; the message names the instance and the field."""


@dataclass(frozen=True)
class Family:
    """One dataset family: how its rows are recognised and turned into tasks, and what it offers. What reads a row
    (`recognise`, `normalise`, `language`) takes the row as the dataset wrote it; what reads a task (`parser`, `gold`)
    takes the `Task` (its `to_dict()` where a library needs the row)."""

    name: str
    recognise: Callable[[dict[str, Any]], str | None]  # the columns that decided, or None: not this family's row
    normalise: Callable[[dict[str, Any]], dict[str, Any]]
    parser: Callable[[Task], Parser]  # the log parser of a task
    columns: str  # how a row is recognised, for `uni-agent-gym datasets`
    images: str  # the family's image names
    offline: str  # what `images build` can make of its rows here
    language: Callable[[dict[str, Any]], str | None] = lambda row: PYTHON  # a row's language, also when it cannot be normalised
    gold: Callable[[Task], str] = lambda task: task.patch or ""  # a task's reference fix (`validate` grades it)


def row_id(row: dict[str, Any]) -> str:
    return str(row.get("instance_id") or "<no instance_id>")


def language_name(value: Any) -> str | None:
    """A language in the tasks' spelling (lower case, `js` -> `javascript`), None for none."""
    name = str(value or "").strip().lower()
    return LANGUAGE_ALIASES.get(name, name) or None


def other_language_environment(language: str) -> dict[str, str]:
    """The `environment` of a task in another language whose row brings its own install recipe (an image
    recipe that installs with the network): `images build` says what it needs instead."""
    return {"unbuildable": f"its {language} toolchain and install steps come from its own image recipe, which needs the network: "
                           "give them in an environments file (toolchain, install_cmd, build_cmd), or run it on its own image "
                           "(env.workspace: image)"}  # fmt: skip


def require(row: dict[str, Any], fields: Iterable[str], *, instance_id: str | None = None, may_be_empty: Iterable[str] = ()) -> None:
    """Every field present and not None (and not "" unless it may be empty), else one error naming them all."""
    empty_ok = set(may_be_empty)
    missing = [name for name in fields if row.get(name) is None or (row.get(name) == "" and name not in empty_ok)]
    if missing:
        raise InstanceError(f"Instance {instance_id or row_id(row)!r}: missing field(s) {', '.join(missing)}")


def list_of_tests(instance_id: str, field: str, value: Any) -> list[str]:
    """A list of test names from a list or its JSON string."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InstanceError(f"Instance {instance_id!r}: field {field} is not a JSON list ({exc})") from None
    if not isinstance(value, list) or not all(isinstance(test, str) for test in value):
        raise InstanceError(f"Instance {instance_id!r}: field {field} expects a list of test names, got {type(value).__name__}")
    return list(value)


def json_field(instance_id: str, field: str, value: Any, expected: type) -> Any:
    """A field that may arrive as a JSON string of a list or object (parquet and HF rows keep them as text)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InstanceError(f"Instance {instance_id!r}: field {field} is not valid JSON ({exc})") from None
    if not isinstance(value, expected):
        raise InstanceError(f"Instance {instance_id!r}: field {field} expects a JSON {expected.__name__}, got {type(value).__name__}")
    return value


def check_diffs(instance_id: str, row: dict[str, Any], fields: Iterable[str]) -> None:
    """Each named field, where set, must be a git diff (an unparseable patch would grade as nothing)."""
    for name in fields:
        if row.get(name) and not patch_files(row[name]):
            raise InstanceError(f"Instance {instance_id!r}: field {name} is not a git diff (no 'diff --git' header)")


def swebench_image_name(instance_id: str, separator: str = "_1776_", namespace: str = "swebench") -> str:
    """`<namespace>/sweb.eval.x86_64.<id>:latest` with `__` as `separator`, lower case (the official scheme)."""
    return f"{namespace}/sweb.eval.x86_64.{instance_id.replace('__', separator).lower()}:latest"


def swebench_parser(name: str, task: Task | str = "") -> Parser:
    """swebench's log parser of that name (any language), as `log -> statuses`, bound to the task's `TestSpec` (a task,
    or just an instance id); a name swebench does not have is an error naming it (a typo must not grade every log as
    empty). The parser also takes, and ignores, the spec argument of swebench's own signature: the log cross-checks
    reread the log line by line with it (`rewards/runners`)."""
    parsers = swebench_parser_functions()
    instance_id = task if isinstance(task, str) else task.instance_id
    if name not in parsers:
        where = f"Instance {instance_id!r}: " if instance_id else ""
        raise InstanceError(f"{where}log parser {name!r} is not one of swebench's parsers (such as parse_log_pytest)")
    function, spec = parsers[name], swebench_test_spec(task, name)

    def parse(log: str, _spec: Any = None) -> dict[str, str]:
        return function(log, spec)

    parse.__name__ = parse.__qualname__ = name  # the runner of its log is found by the parser's name
    return parse


def swebench_test_spec(task: Task | str, log_parser: str) -> Any:
    """The `TestSpec` swebench hands its parsers, made from a task (or just an instance id): they read `instance_id`
    (jekyll's and immutable-js's pick their runner's format by it) and `version` (next's and lighthouse's); a stand-in
    without them raised, an infrastructure verdict on every rollout of such a row. The eval script is the gym's own,
    so it has none."""
    from swebench.types import TestSpec

    if isinstance(task, str):
        return TestSpec(instance_id=task, image="", eval_script_list=[], repo="", version="", FAIL_TO_PASS=[], PASS_TO_PASS=[],
                        log_parser=log_parser, eval_type=PASS_AND_FAIL)  # fmt: skip
    return TestSpec(
        instance_id=task.instance_id, image=task.image_name, eval_script_list=[], repo=task.repo, version=str(task.version or ""),
        FAIL_TO_PASS=list(task.FAIL_TO_PASS), PASS_TO_PASS=list(task.PASS_TO_PASS), log_parser=log_parser,
        eval_type=task.eval_type or PASS_AND_FAIL,
    )  # fmt: skip


def swebench_parser_names() -> set[str]:
    """The names of every swebench log parser (`parse_log_pytest`, `parse_log_django`, ...)."""
    return set(swebench_parser_functions())


@functools.cache
def swebench_parser_functions() -> dict[str, Callable[..., dict[str, str]]]:
    """Every swebench log parser by name (`PARSER_REGISTRY`: `(log, test_spec) -> statuses`), in every language."""
    from swebench.harness.log_parsers import PARSER_REGISTRY

    return dict(PARSER_REGISTRY)


def eval_type(row: dict[str, Any]) -> str:
    """How swebench grades a row's tests: its own `eval_type` (5.x rows carry one), else as swebench grades its
    repository (`FAIL_ONLY_REPOS`: their parsers record failures only, so a passing test is one not reported failed)."""
    from swebench.harness.constants import FAIL_ONLY_REPOS

    value = row.get("eval_type") or (FAIL_ONLY if row.get("repo") in FAIL_ONLY_REPOS else PASS_AND_FAIL)
    if value not in (PASS_AND_FAIL, FAIL_ONLY):
        raise InstanceError(f"Instance {row_id(row)!r}: field eval_type is {value!r}, expects {PASS_AND_FAIL} or {FAIL_ONLY}")
    return value


def swebench_columns(row: dict[str, Any]) -> bool:
    """Whether a row has the SWE-bench columns (the families built on SWE-bench's schema share them)."""
    return all(name in row for name in ("instance_id", "repo", "base_commit", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS"))


def fail_to_pass_task(row: dict[str, Any], family: str, *, required: Iterable[str], image_name: str, language: str = PYTHON) -> dict[str, Any]:
    """The checked task of a row with SWE-bench's columns: test lists as lists, patches verified as diffs."""
    instance_id = row_id(row)
    require(row, required, may_be_empty=("FAIL_TO_PASS", "PASS_TO_PASS", "test_patch"))  # graded by visible tests: no test_patch
    task = dict(row)
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        task[name] = list_of_tests(instance_id, name, row[name])
    if not task["FAIL_TO_PASS"]:
        raise InstanceError(f"Instance {instance_id!r}: field FAIL_TO_PASS is empty (nothing could show a fix)")
    if row.get("version") is not None:
        task["version"] = str(row["version"])
    check_diffs(instance_id, row, ("patch", "test_patch"))
    task.update(family=family, language=language, image_name=row.get("image_name") or image_name, workdir=row.get("workdir") or IMAGE_REPO_DIR,
                grading=FAIL_TO_PASS_GRADING, eval_type=eval_type(row))  # fmt: skip
    task.setdefault("test_command", None)
    task.setdefault("build_command", None)
    return task
