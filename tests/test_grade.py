"""`uni-agent-gym grade` on the 19 offline SWE-bench fixtures, on docker (offline-built images) and local
(host venvs), with the same outcomes. The gold predictions come from env episodes: the agent types each gold
patch in, and the patch is taken back out the way the reward takes an episode's
(`SWEBenchReward.capture_patch`: the Docker daemon's diff into a fresh container; the host's git with the
trusted repository). `grade` resolves every one in a fresh sandbox; empty and test-patch-only predictions
resolve none. The reward at `finish` is that capture followed by the same grading in a fresh sandbox
(`grade_episode`), tested whole on pytest-7168 in tests/test_reward_attacks.py, so each fixture's gold is
graded once per deployment here, not once per path. The docker and local tests run on different test
workers (`tests/conftest.py`)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import fixture_sources
from tests.conftest import run_to_completion
from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.eval.grade import read_predictions, summary_report
from uni_agent_gym.instances import normalise, patch_files
from uni_agent_gym.rewards.swebench import SWEBenchReward

ROWS = fixture_sources.derived_rows()
CACHE = fixture_sources.BUILD_CACHE  # shared with the image tests: wheelhouse, images, local venvs
# Local grades a subset: one fixture of each repository and each Python (flask 3.11, pytest 3.9 and 3.11, sphinx
# 3.9, whose tests load pytest-cov), enough to show local gives docker's outcomes on each runner and interpreter;
# every one of the 19 resolving is shown once, on docker. (Each local fixture is a venv built on a new machine.)
LOCAL_SUBSET = ("pallets__flask-4992", "pytest-dev__pytest-7168", "pytest-dev__pytest-9359", "sphinx-doc__sphinx-8595")


async def gold_typed_in_by_the_agent(deployment: str, ids: tuple[str, ...] = tuple(ROWS)) -> dict[str, str]:
    """{instance id: the patch of an episode in which the agent applied the gold patch}, as the reward takes
    it out of the episode's sandbox at `finish` (no tests run: `grade` grades it); two episodes at a time."""
    rows = [normalise(ROWS[i]) for i in ids]
    config = GymConfig.model_validate({"deployment": {"type": deployment}, "env": fixture_sources.env_section(deployment, rows)})
    reward = SWEBenchReward.from_config(config)

    async def take_patch(episode) -> dict:
        return {"reward": 0.0, "patch": await reward.capture_patch(episode)}

    limit = asyncio.Semaphore(2)

    async def typed_in(row: Task) -> tuple[str, str]:
        async with limit:
            env = AsyncSWEEnv(config, reward=take_patch)
            try:
                await env.reset(options={"instance": row})
                diff = f"/tmp/gold-{row.instance_id}.diff"  # local sandboxes share the host's /tmp
                command = f"cat > {diff} <<'UAG_EOF'\n{row.patch}UAG_EOF\ngit apply {diff} && rm {diff}"
                _, _, _, _, step = await env.step({"name": "execute_bash", "arguments": {"command": command}})
                assert step["exit_code"] == 0, step
                _, _, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
                assert terminated
                return row.instance_id, info["reward_report"]["patch"]
            finally:
                await env.close()

    patches = dict(await asyncio.gather(*(typed_in(row) for row in rows)))
    assert {i: patch_files(patch) for i, patch in patches.items()} == {i: patch_files(ROWS[i]["patch"]) for i in ids}
    return patches


def write_predictions(path: Path, patches: dict[str, str]) -> Path:
    lines = [{"instance_id": i, "model_name_or_path": "org/model", "model_patch": patch} for i, patch in patches.items()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def grade(tmp_path: Path, predictions: Path, deployment: str, run_id: str, *extra: str) -> dict:
    """`uni-agent-gym grade` of the predictions (any subset of the 19) as a user runs it; its summary."""
    mirrors = [f"--mirror={repo}={fixture_sources.repo_mirror(repo)}" for repo in sorted({r["repo"] for r in ROWS.values()})]
    config = tmp_path / "grade.json"
    config.write_text(json.dumps({"env": {"cache_dir": str(CACHE), "workspace": "image",
                                          "interpreters": {version: str(path) for version, path in fixture_sources.INTERPRETERS.items()}}}))  # fmt: skip
    command = [
        sys.executable, "-m", "uni_agent_gym.cli", "grade", "--dataset", str(fixture_sources.SHARED / "derived.jsonl"),
        "--predictions", str(predictions), "--deployment", deployment, "--workers", "2", "--run-id", run_id,
        "--output", str(tmp_path / "out"), "--environments", str(fixture_sources.SHARED / "fixtures.json"),
        "--config", str(config), *mirrors, *extra,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((tmp_path / "out" / f"org__model.{run_id}.json").read_text())


def validate(tmp_path: Path) -> dict:
    """`uni-agent-gym validate` of the 19 on docker, as a user runs it; its report."""
    config = tmp_path / "validate.json"
    config.write_text(json.dumps({"env": {"cache_dir": str(tmp_path / "validate-cache"), "workspace": "image"}}))  # its own record of what validated
    command = [sys.executable, "-m", "uni_agent_gym.cli", "validate", "--dataset", str(fixture_sources.SHARED / "derived.jsonl"), "--deployment",
               "docker", "--workers", "2", "--output", str(tmp_path / "validate"), "--environments", str(fixture_sources.SHARED / "fixtures.json"),
               "--config", str(config), "--variants", "0"]  # fmt: skip (the bench measures their strength: bench/validate_fixtures.py)
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((tmp_path / "validate" / "validation.json").read_text())


def outcomes(tmp_path: Path, run_id: str) -> dict[str, tuple]:
    reports = {}
    for path in (tmp_path / "out" / run_id).glob("*.json"):
        report = json.loads(path.read_text())
        tests = report["tests"]
        reports[report["instance_id"]] = (report["status"], sorted(tests.get("FAIL_TO_PASS", {}).get("failure", [])),
                                          sorted(tests.get("PASS_TO_PASS", {}).get("failure", [])))  # fmt: skip
    return reports


ALL_RESOLVED = {i: ("resolved", [], []) for i in ROWS}  # every FAIL_TO_PASS and PASS_TO_PASS test passed


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the images come from `fixture_images`
def test_gold_typed_in_and_test_only_on_docker(tmp_path, fixture_images):
    """Every fixture's gold resolves, and its test patch alone as the prediction (its tests' changes, no fix)
    resolves none: the FAIL_TO_PASS tests fail without the fix on each image, and test files in a patch go back
    to the start before the test patch. (An empty prediction is not graded at all, as the official harness does
    not: `empty_patch_ids`; an empty episode earns 0.0 on every deployment in the contract suite.) `validate` agrees
    on all 19, and remembers each image's environment as validated."""
    gold = write_predictions(tmp_path / "gold.jsonl", run_to_completion(gold_typed_in_by_the_agent("docker")))
    test_only = write_predictions(tmp_path / "test_only.jsonl", {i: row["test_patch"] for i, row in ROWS.items()})

    docker_gold = grade(tmp_path, gold, "docker", "docker-gold")
    assert docker_gold["resolved_ids"] == sorted(ROWS), docker_gold
    assert docker_gold["error_ids"] == [] and docker_gold["completed_instances"] == 19
    assert outcomes(tmp_path, "docker-gold") == ALL_RESOLVED

    test_only_report = grade(tmp_path, test_only, "docker", "docker-test-only")
    assert test_only_report["resolved_ids"] == [] and test_only_report["error_ids"] == []

    # `validate` grades each gold patch again, the test patch alone (FAIL_TO_PASS must fail without the fix) and the empty patch
    validated = validate(tmp_path)
    assert (validated["validated"], validated["failed"]) == (19, 0), validated["by_reason"]
    assert all(result["remembered"] and result["runs"]["test patch alone"]["status"] == "unresolved" for result in validated["results"])

    # resumable: the same run id does no work and gives the same summary
    assert grade(tmp_path, gold, "docker", "docker-gold") == docker_gold


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a new machine first builds the subset's local venvs
def test_gold_typed_in_on_local_has_dockers_outcomes(tmp_path):
    """The subset's outcomes as on docker (there: every test passed, above), and honest grading leaves every instance's venv as it was made (the sphinx fixtures' tests load pytest-cov,
    whose assert-rewritten bytecode pytest would otherwise write into the venv: each next episode then replaced
    the venv and an agent that ran the tests was reported to have changed it)."""
    from uni_agent_gym.workspaces.local_venv import changed_files

    gold = write_predictions(tmp_path / "gold.jsonl", run_to_completion(gold_typed_in_by_the_agent("local", LOCAL_SUBSET)))
    local_gold = grade(tmp_path, gold, "local", "local-gold")
    assert local_gold["resolved_ids"] == sorted(LOCAL_SUBSET), local_gold
    assert outcomes(tmp_path, "local-gold") == {i: ALL_RESOLVED[i] for i in LOCAL_SUBSET}
    assert {i: changed_files(CACHE / "workspaces" / i / "venv") for i in LOCAL_SUBSET} == {i: [] for i in LOCAL_SUBSET}


def test_bad_predictions_are_reported_not_fatal(tmp_path):
    """No sandbox is needed: every row fails before one would be opened."""
    predictions = tmp_path / "bad.jsonl"
    predictions.write_text(
        json.dumps({"instance_id": "no__such-1", "model_name_or_path": "m", "model_patch": "diff --git a/x b/x"}) + "\n"
        + "{not json\n"
        + json.dumps({"instance_id": "pallets__flask-4992", "model_name_or_path": "m", "model_patch": ""}) + "\n"
        + json.dumps({"instance_id": "pallets__flask-4045", "model_name_or_path": "m", "model_patch": 42}) + "\n"
    )  # fmt: skip
    rows = read_predictions(predictions)
    assert rows[1] == {"instance_id": "<line 2>", "error": "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"}
    command = [
        sys.executable, "-m", "uni_agent_gym.cli", "grade", "--dataset", str(fixture_sources.SHARED / "derived.jsonl"),
        "--predictions", str(predictions), "--run-id", "bad", "--output", str(tmp_path / "out"), "--deployment", "local",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "m.bad.json").read_text())
    assert summary["error_ids"] == ["<line 2>", "no__such-1", "pallets__flask-4045"]
    assert summary["empty_patch_ids"] == ["pallets__flask-4992"] and summary["resolved_ids"] == []
    report = json.loads((tmp_path / "out" / "bad" / "no__such-1.json").read_text())
    assert report["status"] == "infra_error" and "unknown instance no__such-1" in report["error"]


def test_summary_has_the_official_fields():
    predictions = [{"instance_id": i} for i in ("a", "b", "c", "d")]
    results = {"a": {"status": "resolved"}, "b": {"status": "unresolved"}, "c": {"status": "patch_failed"},
               "d": {"status": "unresolved", "error": "empty patch: nothing to grade"}}  # fmt: skip
    report = summary_report(predictions, results, dataset_size=300)
    assert report == {
        "total_instances": 300, "submitted_instances": 4, "completed_instances": 2, "resolved_instances": 1,
        "unresolved_instances": 1, "empty_patch_instances": 1, "error_instances": 1, "completed_ids": ["a", "b"],
        "incomplete_ids": [], "empty_patch_ids": ["d"], "submitted_ids": ["a", "b", "c", "d"], "resolved_ids": ["a"],
        "unresolved_ids": ["b"], "error_ids": ["c"], "infrastructure_error_ids": [], "patch_error_ids": ["c"],
        "unknown_instance_ids": [], "bad_prediction_ids": [], "graded_instances": 4, "ungraded": {}, "schema_version": 2,
    }  # fmt: skip


def test_a_rerun_of_the_run_id_grades_infrastructure_errors_again(tmp_path, capsys, monkeypatch):
    """Grading that failed for the infrastructure's sake (the local workdir holds a stray file, so no
    checkout can go there) is graded again by the next run of the same --run-id once the cause is fixed;
    a patch that does not apply (the model's doing) and a malformed prediction are kept. Nothing is
    faked: the local deployment on the toy task."""
    from tests.blocked_toy import blocked_toy
    from uni_agent_gym import toy
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")  # rich wraps the summary line to the terminal width
    blocked, output = blocked_toy(tmp_path), tmp_path / "out"
    stale = toy.GOLD_PATCH.replace("(len(values) - 1)", "(len(values) - 2)")  # its context is not in the file
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": stale}) + "\n"
                                   for i in (toy.INSTANCE_ID, "no__such-1")))  # fmt: skip
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(blocked.settings()))
    command = ["grade", "-c", str(settings), "--dataset", str(blocked.dataset), "--predictions", str(predictions),
               "--output", str(output), "--run-id", "again"]  # fmt: skip

    def report(instance_id: str) -> dict:
        return json.loads((output / "again" / f"{instance_id}.json").read_text())

    assert main(command) == 1, "nothing was graded: a script must not read success"
    failed = report(toy.INSTANCE_ID)
    assert failed["status"] == "infra_error" and "neither empty nor a git checkout" in failed["error"]
    assert main([*command, "--no-retry-errors"]) == 1 and report(toy.INSTANCE_ID) == failed
    capsys.readouterr()

    blocked.stray.unlink()  # the cause, fixed
    assert main(command) == 0
    assert ("2 errors: 1 the patch's, 0 the infrastructure's, 1 for instances not in the dataset, 1 retried after an infrastructure error)"
            in capsys.readouterr().out)
    graded = report(toy.INSTANCE_ID)
    assert graded["status"] == "patch_failed" and graded["earlier_errors"] == [failed["error"]]
    summary = json.loads((output / "m.again.json").read_text())
    assert (summary["retried_instances"], summary["retried_ids"]) == (1, [toy.INSTANCE_ID])
    assert "bad prediction: unknown instance no__such-1" in report("no__such-1")["error"]

    assert main(command) == 0 and report(toy.INSTANCE_ID) == graded, "a patch that does not apply is the model's doing"
    assert json.loads((output / "m.again.json").read_text())["retried_instances"] == 0 and "retried" not in capsys.readouterr().out


def toy_settings(tmp_path: Path) -> Path:
    """A config for the toy on the local deployment, its mirror cached under tmp_path."""
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"env": {"cache_dir": str(tmp_path / "cache")}, "deployment": {"type": "local"}}))
    return settings


def toy_row(tmp_path: Path) -> dict:
    from uni_agent_gym import toy

    return asyncio.run(toy.toy_instance(str(tmp_path / "cache")))


PREDICTION = {"instance_id": "x__y-1", "model_name_or_path": "m", "model_patch": "diff --git a/x b/x\n"}
NOT_PREDICTIONS = {  # what --predictions names: (file name, its text), and the one error line it earns
    "a run's report.json": (
        ("report.json", lambda row: json.dumps({"instances": 3, "resolved": 2, "per_repo": {"x": {"instances": 1}}}, indent=1)),
        "holds no prediction (expects JSON objects with instance_id and model_patch, in a list, or a mapping by instance id); "
        "<item 1>: not a JSON object (int)",
    ),
    "a dataset file": (
        ("rows.jsonl", lambda row: json.dumps(row) + "\n"),
        "holds no prediction (expects JSON objects with instance_id and model_patch, one per line); uni-agent-gym__toy-1: "
        "no model_patch (its keys: FAIL_TO_PASS, PASS_TO_PASS, base_commit, family, instance_id, mirror, needs_environment, patch, ...)",
    ),
    "pretty-printed JSON lines": (
        ("predictions.jsonl", lambda row: json.dumps(PREDICTION, indent=1)),
        "holds no prediction (expects JSON objects with instance_id and model_patch, one per line); <line 1>: not JSON: ",
    ),
    "rows without an instance_id": (
        ("predictions.jsonl", lambda row: json.dumps({"model_patch": ""}) + "\n"),
        "holds no prediction (expects JSON objects with instance_id and model_patch, one per line); <line 1>: no instance_id (its keys: model_patch)",
    ),
    "two predictions of one instance": (  # their reports would share one file, and the last would win unsaid
        ("predictions.jsonl", lambda row: "".join(json.dumps({**PREDICTION, "instance_id": row["instance_id"], "model_patch": p}) + "\n" for p in ("", "x"))),
        "has 2 predictions for uni-agent-gym__toy-1 (rows 1, 2): one per instance, as the official harness keys them; keep the one to grade",
    ),
    "predictions of another dataset": (
        ("other.jsonl", lambda row: "".join(json.dumps({**PREDICTION, "instance_id": i}) + "\n" for i in ("x__y-1", "x__y-2"))),
        "nothing was graded: all 2 prediction(s) are for instances the dataset does not have (the first: x__y-1); "
        "are they predictions of another dataset?",
    ),
}


@pytest.mark.parametrize("case", NOT_PREDICTIONS)
def test_grade_refuses_what_is_not_predictions(tmp_path, capsys, monkeypatch, case):
    """A file of no prediction is refused in one line naming its first row and what it lacks; predictions that name
    none of the dataset's instances grade nothing, and a run that grades nothing exits non-zero (as `eval` does)."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")  # rich wraps the summary line to the terminal width
    (name, text), said = NOT_PREDICTIONS[case]
    predictions = tmp_path / name
    predictions.write_text(text(toy_row(tmp_path)))
    command = ["grade", "-c", str(toy_settings(tmp_path)), "--dataset", "toy", "--predictions", str(predictions), "--output", str(tmp_path / "out"), "--run-id", "r"]
    assert main(command) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and said in errors[0], errors
    assert not any(path.name == "None.json" for path in tmp_path.rglob("*.json")), "a report for no instance"


def test_unknown_instances_and_rows_that_do_not_load_cost_only_their_predictions(tmp_path, capsys, monkeypatch):
    """A dataset row that makes no task fails the predictions for it alone, as the infrastructure's error (it is not
    the patch's); a prediction for an instance the dataset lacks is named as such, neither the patch's nor the
    infrastructure's. No sandbox is opened: the one verdict is of an empty patch."""
    from uni_agent_gym import toy
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    row = toy_row(tmp_path)
    broken = {key: value for key, value in row.items() if key != "FAIL_TO_PASS"} | {"instance_id": "uni-agent-gym__toy-2"}
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps(row) + "\n" + json.dumps(broken) + "\n")
    predictions = write_predictions(tmp_path / "predictions.jsonl", {toy.INSTANCE_ID: "", "uni-agent-gym__toy-2": toy.GOLD_PATCH, "no__such-1": toy.GOLD_PATCH})
    command = ["grade", "-c", str(toy_settings(tmp_path)), "--dataset", str(dataset), "--predictions", str(predictions),
               "--output", str(tmp_path / "out"), "--run-id", "r"]  # fmt: skip
    assert main(command) == 0
    assert "3 errors" not in (out := capsys.readouterr().out) and "2 errors: 0 the patch's, 1 the infrastructure's, 1 for instances not in the dataset)" in out, out
    summary = json.loads((tmp_path / "out" / "org__model.r.json").read_text())
    assert (summary["empty_patch_ids"], summary["infrastructure_error_ids"], summary["unknown_instance_ids"]) == ([toy.INSTANCE_ID], ["uni-agent-gym__toy-2"], ["no__such-1"])
    assert (summary["total_instances"], summary["graded_instances"], summary["patch_error_ids"]) == (2, 1, [])
    report = json.loads((tmp_path / "out" / "r" / "uni-agent-gym__toy-2.json").read_text())
    assert report["error"] == "the dataset's row of uni-agent-gym__toy-2 makes no task: Instance 'uni-agent-gym__toy-2': missing field(s) FAIL_TO_PASS"
    unknown = json.loads((tmp_path / "out" / "r" / "no__such-1.json").read_text())
    assert unknown["caused_by"] == "prediction" and unknown["error"] == "bad prediction: unknown instance no__such-1: the dataset has no such row"


@pytest.mark.parametrize(
    "command, said",
    [
        (["datasets", "--dataset", "toy"], "1: needs no image: it runs on local, or on any image with python3"),
        (["grade", "--dataset", "toy", "--predictions", "{gold}", "--output", "{out}"], "resolved 1 / 1 submitted (0 unresolved, 0 empty, 0 errors"),
        (["grade", "--dataset", "toy", "--predictions", "{stale}", "--output", "{out}"], "resolved 0 / 1 submitted (0 unresolved, 0 empty, 1 errors: 1 the patch's"),
        (["eval", "--dataset", "toy", "--instance-ids", "no__such-1"], "error: --instance-ids: Unknown instance id(s): no__such-1 (not among the dataset's 1 rows)"),
    ],
    ids=["datasets", "grade gold", "grade a patch that does not apply", "eval an id it lacks"],
)
def test_toy_is_a_dataset_name(tmp_path, capsys, monkeypatch, command, said):
    """`--dataset toy` is the built-in task, nothing downloaded (the hub is offline here: its name would fail there);
    `grade` grades the toy's predictions by its own tests in a fresh sandbox, as its episodes are graded."""
    from uni_agent_gym import toy
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    stale = toy.GOLD_PATCH.replace("(len(values) - 1)", "(len(values) - 2)")  # its context is not in the file
    files = {"gold": write_predictions(tmp_path / "gold.jsonl", {toy.INSTANCE_ID: toy.GOLD_PATCH}),
             "stale": write_predictions(tmp_path / "stale.jsonl", {toy.INSTANCE_ID: stale}), "out": tmp_path / "out"}  # fmt: skip
    main([*(part.format(**files) for part in command), "-c", str(toy_settings(tmp_path))])
    assert said in capsys.readouterr().out
