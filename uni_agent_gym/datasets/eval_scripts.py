"""What the gym takes from a swebench 5.x row's `eval_script`, and what it does its own way.

A 5.x row carries the whole script its harness runs in the instance's container (`swebench.harness.utils.make_test_spec`):

    cd /testbed; git config --global --add safe.directory /testbed      # where the repository is
    source /opt/miniconda3/bin/activate; conda activate testbed         # (Python images) the environment
    export LANG=...                                                     # variables the tests need
    git checkout <base_commit> <test files>                             # the test files reset
    git apply --verbose --reject - <<'EOF_...'  ... EOF_...             # the test patch
    make                                                                # the build
    : '>>>>> Start Test Output'
    <test commands>
    : '>>>>> End Test Output'
    git checkout <base_commit> <test files>

The gym runs what only the row can say: the **test commands** between the markers (traced one by one where the parser
names tests by their command, `swebench.as_eval_script`), the **build** between the test patch and the start marker,
and the **exports** before the markers (before the build and the tests). It replaces the rest with its own steps: the
repository's place is the task's `workdir`; the test-file reset, the test patch and the runner's files are the reward's
(`rewards/`), applied to a fresh sandbox holding only the agent's patch, with the canaries and the guard; the
environment is the image's (an activation line names the harness's conda, which images built here do not have).
Other lines before the test patch (a re-install, `git status`) are the image build's business and are not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from uni_agent_gym.datasets.base import InstanceError

START, END = ">>>>> Start Test Output", ">>>>> End Test Output"  # swebench's markers (harness.constants)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?\s*$")
_EXPORT = re.compile(r"^export\s+\w+=")
_REPLACED = (  # the harness's own steps after the test patch, which the gym does its own way
    re.compile(r"^git\s+(?:config\b|apply\b|checkout\s+[0-9a-f]{7,40}\b|(?:-c\s+\S+\s+)?(?:status|show|diff)\b)"),
    re.compile(r"^source\s+\S*/activate\b"), re.compile(r"^(?:conda|micromamba|mamba)\s+activate\b"),
)  # fmt: skip


@dataclass(frozen=True)
class EvalScriptSteps:
    """The steps of an eval script the gym runs: each a shell line as the script has it."""

    exports: list[str]
    build: list[str]
    tests: list[str]


def eval_script_steps(instance_id: str, script: str) -> EvalScriptSteps:
    """The exports, build and test lines of a 5.x eval script; one without its test markers is the row's error."""
    lines = _without_heredocs(script.splitlines())
    starts = [i for i, line in enumerate(lines) if START in line]
    ends = [i for i, line in enumerate(lines) if END in line]
    if not starts or not ends or ends[0] < starts[0]:
        raise InstanceError(f"Instance {instance_id!r}: field eval_script has no {START!r} ... {END!r} markers around its tests")
    start, end = starts[0], ends[0]
    tests = [line for line in lines[start + 1 : end] if line.strip()]
    if not tests:
        raise InstanceError(f"Instance {instance_id!r}: field eval_script runs no test command between its markers")
    before = lines[:start]
    patched = max((i for i, line in enumerate(before) if line.startswith("<<test patch>>")), default=-1)
    exports = [line for line in before if _EXPORT.match(line)]
    build = [line for line in before[patched + 1 :] if line.strip() and not _EXPORT.match(line) and not _replaced(line)]
    return EvalScriptSteps(exports=exports, build=build, tests=tests)


def _replaced(line: str) -> bool:
    return line.startswith("<<test patch>>") or any(pattern.match(line) for pattern in _REPLACED)


def _without_heredocs(lines: list[str]) -> list[str]:
    """The script's lines with each here-document (the test patch) as one `<<test patch>>` line."""
    kept, delimiter = [], None
    for line in lines:
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        found = _HEREDOC.search(line)
        if found:
            delimiter = found.group(1)
            kept.append("<<test patch>>")
        else:
            kept.append(line.strip())
    return kept
