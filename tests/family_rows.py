"""Rows of every dataset family, *derived* from the offline SWE-bench fixtures (../shared/swebench).

The real rows of SWE-Gym, SWE-rebench, SWE-smith and R2E-Gym (../shared/datasets) name repositories and
images no machine here can reach, so they are used for their schema only. The runnable rows are made
here from one fixture each: the same code, the same tests and the same fix, in the family's own columns
and under its rules, with images built by the offline image builder (R2E-Gym's image: the fixture's
image plus the layer R2E-Gym's Dockerfiles add, its tests in /r2e_tests and /testbed/run_tests.sh).

- swe-bench: the fixture row itself (a real Lite instance re-based onto its sdist).
- swe-gym: its SWE-bench columns with test lists as lists and no environment_setup_commit.
- swe-rebench: plus an `install_config` and `requirements` built from the fixture's exact pins, so the
  image builds from the row alone.
- swe-smith: the fixture's fix and tests committed as the repository's one commit (a mirror
  `swesmith/<owner>__<repo>.<commit8>`), the bug patch that fix reversed, and a swesmith repository
  profile for it registered in swesmith's own registry (how SWE-smith adds a repository).
- r2e-gym: `parsed_commit_content` in R2E-Gym's ParsedCommit shape made from the fix and its tests,
  `expected_output_json` from the fixture's FAIL_TO_PASS and PASS_TO_PASS (all PASSED).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import field, make_dataclass
from pathlib import Path

from tests import fixture_sources
from uni_agent_gym.named_locks import blocking_machine_lock

FAMILIES = ("swe-bench", "swe-gym", "swe-rebench", "swe-smith", "r2e-gym")
FIXTURE = "pytest-dev__pytest-7168"  # small, fast, Python 3.9; every family's derived row is made of it
SMITH_TEST_CMD = "pytest --disable-warnings --color=no --tb=no --verbose"  # PythonProfile's, without its conda activation
R2E_RUN_TESTS = "python -W ignore -m pytest -rA r2e_tests\n"  # R2E-Gym's tests_cmd, with the image's venv on PATH


def fixture_row(instance_id: str = FIXTURE) -> dict:
    return dict(fixture_sources.derived_rows()[instance_id])


def _git(*args: str, cwd: Path | None = None, env: dict | None = None) -> str:
    done = subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def fixed_commit(instance_id: str = FIXTURE) -> tuple[Path, str]:
    """A bare repository (a SWE-smith mirror) whose only commit is the fixture's base with its fix and its
    test patch applied, and that commit. Deterministic (fixed identity and date); made once."""
    target = fixture_sources.CACHE / "family-mirrors" / f"{instance_id}.git"
    with blocking_machine_lock(f"family mirror {target}"):  # test files on other workers make it too
        if (target / "FIXED").exists():
            return target, (target / "FIXED").read_text()
        return _make_fixed_commit(fixture_row(instance_id), target)


def _make_fixed_commit(row: dict, target: Path) -> tuple[Path, str]:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "work"
        _git("clone", "--quiet", "--no-checkout", str(fixture_sources.repo_mirror(row["repo"])), str(work))
        _git("checkout", "--quiet", "--detach", row["base_commit"], cwd=work)
        for diff in (row["patch"], row["test_patch"]):
            subprocess.run(["git", "apply", "-"], input=diff, text=True, cwd=work, check=True)
        env = {**fixture_sources.FIXED_IDENTITY, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _git("add", "-A", "-f", cwd=work, env=env)
        tree = _git("write-tree", cwd=work, env=env)
        commit = _git("commit-tree", tree, "-m", "Initial commit", cwd=work, env=env)
        building = target.with_name(target.name + ".tmp")
        shutil.rmtree(building, ignore_errors=True)
        _git("init", "--quiet", "--bare", str(building))
        _git("--git-dir", str(building), "fetch", "--quiet", str(work), f"{commit}:refs/heads/main")
        _git("--git-dir", str(building), "symbolic-ref", "HEAD", "refs/heads/main")
        (building / "FIXED").write_text(commit)
        shutil.rmtree(target, ignore_errors=True)
        building.rename(target)
    return target, commit


def reverse_patch(diff: str, instance_id: str = FIXTURE) -> str:
    """`diff` reversed, as git writes it: applied to the fixed commit, it makes the bug."""
    mirror, commit = fixed_commit(instance_id)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "work"
        _git("clone", "--quiet", "--no-checkout", str(mirror), str(work))
        _git("checkout", "--quiet", "--detach", commit, cwd=work)
        subprocess.run(["git", "apply", "-R", "-"], input=diff, text=True, cwd=work, check=True)
        return subprocess.run(["git", "diff"], cwd=work, capture_output=True, text=True, check=True).stdout


def swe_gym_row(instance_id: str = FIXTURE) -> dict:
    row = fixture_row(instance_id)
    keep = ("instance_id", "hints_text", "patch", "test_patch", "created_at", "problem_statement", "repo", "base_commit", "version")
    out = {key: row[key] for key in keep}
    out.update(FAIL_TO_PASS=json.loads(row["FAIL_TO_PASS"]), PASS_TO_PASS=json.loads(row["PASS_TO_PASS"]))
    return out


def swe_rebench_row(instance_id: str = FIXTURE) -> dict:
    from uni_agent_gym.datasets.swebench import repo_parsers
    from uni_agent_gym.swebench4.test_commands import get_test_directives

    row, env = fixture_row(instance_id), fixture_sources.fixtures()[instance_id]
    directives = " ".join(get_test_directives(row))
    test_cmd = env["test_cmd_as_run"].removesuffix(directives).strip()  # SWE-rebench appends the test files itself
    out = swe_gym_row(instance_id)
    out.update(
        FAIL_TO_FAIL=[], PASS_TO_FAIL=[], license_name="MIT", requirements="\n".join(env["pip_requirements"]) + "\n",
        install_config={
            "python": ".".join(env["python"].split(".")[:2]), "install": env["install_cmd"], "test_cmd": test_cmd,
            "log_parser": repo_parsers()[row["repo"]].__name__, "pip_packages": [], "packages": "", "reqs_path": None,
            "pre_install": env["pre_install"] or [], "env_vars": env["env"], "env_yml_path": None, "no_use_env": None,
        },
    )  # fmt: skip
    return out


# Of the row's FAIL_TO_PASS, those that fail with the bug in place under swesmith's own test command: the official row's
# list holds every test of the module because pytest's INTERNALERROR (under swebench's `-rA` run) fails them all, while
# swesmith's command runs them and the rest pass both ways (`uni-agent-gym validate` found it: "FAIL_TO_PASS passes at the base").
# The rest are left out (as PASS_TO_PASS they would add their file to the profile's test command a second time).
SMITH_FAILING = {"pytest-dev__pytest-7168": ["testing/io/test_saferepr.py::test_broken_getattribute"]}


def swe_smith_row(instance_id: str = FIXTURE) -> dict:
    row = fixture_row(instance_id)
    failing = SMITH_FAILING.get(instance_id, json.loads(row["FAIL_TO_PASS"]))
    _, commit = fixed_commit(instance_id)
    owner, repo = row["repo"].split("/")
    number = instance_id.rsplit("-", 1)[1]
    register_smith_profile(instance_id)
    return {
        "instance_id": f"{owner}__{repo}.{commit[:8]}.pr_{number}",
        "repo": f"swesmith/{owner}__{repo}.{commit[:8]}",
        "patch": reverse_patch(row["patch"], instance_id),
        "FAIL_TO_PASS": failing,
        "PASS_TO_PASS": json.loads(row["PASS_TO_PASS"]),
        "created_at": row["created_at"],
        "image_name": f"swesmith.x86_64.{owner}__{repo}.{commit[:8]}",
        "base_commit": row["base_commit"],
        "problem_statement": row["problem_statement"],
    }


def register_smith_profile(instance_id: str = FIXTURE):
    """A swesmith `PythonProfile` for the fixed commit of the fixture, in swesmith's registry."""
    from uni_agent_gym.datasets import swesmith_profiles

    registry = swesmith_profiles.registry()  # (swesmith imports names swebench 5.x removed: the gym's way in)
    from swesmith.profiles.python import PythonProfile

    row = fixture_row(instance_id)
    owner, repo = row["repo"].split("/")
    _, commit = fixed_commit(instance_id)
    key = f"{owner}__{repo}.{commit[:8]}"
    if key not in registry.keys():
        fields = [("owner", str, field(default=owner)), ("repo", str, field(default=repo)), ("commit", str, field(default=commit)),
                  ("test_cmd", str, field(default=SMITH_TEST_CMD)), ("min_testing", bool, field(default=True))]  # fmt: skip
        registry.register_profile(make_dataclass(f"Derived{commit[:8]}", fields, bases=(PythonProfile,)))
    return registry.get(key)


def _test_name(test: str) -> str:
    """A pytest node id as R2E-Gym's parser names it: the file dropped, class and function joined by '.'."""
    return ".".join(test.split("::")[1:])


def r2e_row(instance_id: str = FIXTURE) -> dict:
    row = fixture_row(instance_id)
    repo = row["repo"].split("/")[1]
    _, fixed = fixed_commit(instance_id)
    tests = json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])
    commit = parsed_commit(row["patch"] + row["test_patch"], row["base_commit"], fixed, row["problem_statement"])
    return {
        "repo_name": repo,
        "docker_image": f"uni-agent-gym-derived/{repo}_final:{fixed}",
        "commit_hash": fixed,
        "parsed_commit_content": json.dumps(commit),
        "execution_result_content": json.dumps({"new_commit_res_code": 0, "old_commit_res_code": 1}),
        "modified_files": [diff["header"]["file"]["path"] for diff in commit["file_diffs"]],
        "modified_entity_summaries": [], "relevant_files": [], "num_non_test_files": 1, "num_non_test_func_methods": 1,
        "num_non_test_lines": 2, "prompt": row["problem_statement"], "problem_statement": row["problem_statement"],
        "expected_output_json": json.dumps({_test_name(test): "PASSED" for test in tests}),
    }  # fmt: skip


def parsed_commit(diff: str, old: str, new: str, message: str) -> dict:
    """R2E-Gym's ParsedCommit (commit_models/diff_classes.py) of a git diff, as JSON data."""
    import unidiff

    kinds = {" ": "context", "+": "added", "-": "deleted", "\\": "note"}
    file_diffs = []
    for patched in unidiff.PatchSet(diff):
        info = [line.rstrip("\n") for line in patched.patch_info]
        index = next((line for line in info if line.startswith("index ")), None)
        hashes, _, mode = index.removeprefix("index ").partition(" ") if index else ("", "", "")
        old_hash, _, new_hash = hashes.partition("..")
        misc = [line for line in info[1:] if not line.startswith("index ")]
        file_diffs.append({
            "old_file_content": "", "new_file_content": "",
            "header": {"file": {"path": patched.path}, "misc_line": "\n".join(misc) or None},
            "index_line": {"old_commit_hash": old_hash, "new_commit_hash": new_hash, "mode": mode} if index else None,
            "minus_file": {"path": patched.source_file}, "plus_file": {"path": patched.target_file},
            "hunks": [{
                "descriptor": {"old_range": {"start": hunk.source_start, "length": hunk.source_length},
                               "new_range": {"start": hunk.target_start, "length": hunk.target_length},
                               "section": hunk.section_header},
                "line_group": {"all_lines": [{"content": line.value.rstrip("\n"), "type": kinds[line.line_type]} for line in hunk]},
            } for hunk in patched],
        })  # fmt: skip
    return {"file_diffs": file_diffs, "old_commit_hash": old, "new_commit_hash": new, "commit_message": message.splitlines()[0],
            "commit_date": "2000-01-01T00:00:00", "metadata": {}}  # fmt: skip


def rows(instance_id: str = FIXTURE) -> dict[str, dict]:
    """One derived row per family, by family name."""
    return {"swe-bench": fixture_row(instance_id), "swe-gym": swe_gym_row(instance_id), "swe-rebench": swe_rebench_row(instance_id),
            "swe-smith": swe_smith_row(instance_id), "r2e-gym": r2e_row(instance_id)}  # fmt: skip


def environments(instance_id: str = FIXTURE) -> dict[str, dict]:
    """The environments file of the derived rows: the fixture's exact pins under each task's instance id,
    except SWE-rebench's (built from its row) and R2E-Gym's (its image is derived from the fixture's);
    the test command stays the family's own."""
    from uni_agent_gym.instances import normalise

    env = dict(fixture_sources.fixtures()[instance_id])
    out = {}
    for family, row in rows(instance_id).items():
        task = normalise(row)
        if family in ("swe-bench", "swe-gym"):
            out[task.instance_id] = env
        elif family == "swe-smith":
            out[task.instance_id] = {key: value for key, value in env.items() if key not in ("test_cmd_as_run", "test_cmd")}
    return out


def mirrors(instance_id: str = FIXTURE) -> dict[str, str]:
    """env.mirrors for the derived rows: the fixture's repository mirror, and the SWE-smith mirror."""
    row = fixture_row(instance_id)
    smith_mirror, commit = fixed_commit(instance_id)
    owner, repo = row["repo"].split("/")
    return {row["repo"]: str(fixture_sources.repo_mirror(row["repo"])), f"swesmith/{owner}__{repo}.{commit[:8]}": str(smith_mirror)}


def build_config(instance_id: str = FIXTURE):
    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.workspaces.base_images import bootstrap_base

    bootstrap_base(".".join(fixture_sources.fixtures()[instance_id]["python"].split(".")[:2]), log=lambda message: None)
    return GymConfig.model_validate({"env": {"cache_dir": str(fixture_sources.BUILD_CACHE), "mirrors": mirrors(instance_id)}})


async def ensure_family_images(instance_id: str = FIXTURE, log=lambda message: None) -> dict[str, str]:
    """Every family's image of the derived rows, built offline where missing; {family: image}."""
    from uni_agent_gym.workspaces.image_builder import build_instance_images
    from uni_agent_gym.instances import normalise

    tasks = {family: normalise(row) for family, row in rows(instance_id).items()}
    config = build_config(instance_id)
    with_files = [task for family, task in tasks.items() if family not in ("r2e-gym", "swe-rebench")]
    _, failures = await build_instance_images(with_files, config, environments(instance_id), workers=2, log=log)
    _, from_row = await build_instance_images([tasks["swe-rebench"]], config, {}, log=log)  # its row's own recipe
    if failures or from_row:
        raise RuntimeError(f"family images failed to build: {failures} {from_row}")
    built = {family: task.image_name for family, task in tasks.items() if family != "r2e-gym"}
    built["r2e-gym"] = await asyncio.to_thread(build_r2e_image, tasks["r2e-gym"], built["swe-bench"], fixture_row(instance_id))
    return built


def build_r2e_image(task: dict, fixture_image: str, row: dict) -> str:
    """R2E-Gym's image of the derived row: the fixture's image plus R2E-Gym's last steps (`COPY r2e_tests
    /r2e_tests`, `COPY run_tests.sh /testbed/run_tests.sh`), the tests being the fixture's test files with
    its test patch applied. Made once."""
    from uni_agent_gym.deployments.docker import image_exists
    from uni_agent_gym.workspaces.image_builder import docker_build
    from uni_agent_gym.instances import patch_files

    name = task.image_name
    if image_exists(name):
        return name
    tests = [path for path in patch_files(row["test_patch"]) if path.endswith(".py")]
    with tempfile.TemporaryDirectory() as scratch:
        context = Path(scratch)
        (context / "tests.diff").write_text(row["test_patch"])
        (context / "run_tests.sh").write_text(R2E_RUN_TESTS)
        copies = " && ".join(f"cp {path} /r2e_tests/test_{number}.py" for number, path in enumerate(tests, 1))
        (context / "Dockerfile").write_text(
            f"FROM {fixture_image}\nCOPY tests.diff /tmp/tests.diff\nCOPY run_tests.sh /testbed/run_tests.sh\n"
            f"RUN cd /testbed && git apply /tmp/tests.diff && mkdir /r2e_tests && {copies} && git apply -R /tmp/tests.diff "
            "&& rm /tmp/tests.diff && git status --porcelain\n"
        )
        docker_build(context, name, lambda message: None)
    return name
