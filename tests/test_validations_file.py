"""A validations file (`validate --output DIR`'s DIR/validation.json) read by the commands that use tasks: each row's
verdict and strength travel with the dataset. Made once per module by `uni-agent-gym validate` on the weak toy
(`tests/weak_toy.py`: its listed tests miss half its gold, so wrong variants survive) and the row that lists every
test (no survivor), on local; then `eval` against a scripted model that writes a wrong fix (the weak row's tests
accept it, the strong row's do not), `prepare-data`, `train --dry-run`, UniAgentLoop and verl's own data metrics
(on CPU) read it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from tests.scripted_endpoint import ScriptedEndpoint
from tests.weak_toy import weak_toy_row
from uni_agent_gym.datasets import Task, normalise
from uni_agent_gym.workspaces.validated import record
from uni_agent_gym.workspaces.validations_file import load, task_validation

WEAK, STRONG = "uag-tests__weak-toy-1", "uag-tests__weak-toy-2"
# a wrong fix the weak row's listed tests accept (tests/weak_toy.py's WRONG_SPECIAL_CASE), as a shell command in the repository
WRONG_FIX = ("python3 -c \"import pathlib; p = pathlib.Path('money.py'); p.write_text(p.read_text().replace('    return [share] * parts', "
             "'    if (total_cents, parts) == (100, 3):\\n        return [34, 33, 33]\\n    return [share] * parts'))\"")  # fmt: skip
MARKER = "loses a cent"  # in both rows' problem statement: the scripted model's cue


@pytest.fixture(scope="module")
def validated(tmp_path_factory) -> dict[str, Path]:
    """The weak and strong rows (rows.jsonl) and `validate`'s report of them with strength measured (validation.json),
    made by the command as a user runs it; the mirror cache beside them."""
    folder = tmp_path_factory.mktemp("validations")
    cache = folder / "cache"
    rows = [asyncio.run(weak_toy_row(str(cache))), asyncio.run(weak_toy_row(str(cache), strong=True))]
    (folder / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / "config.json").write_text(json.dumps({"env": {"cache_dir": str(cache), "workspace": "mirror"}}))
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "validate", "--dataset", str(folder / "rows.jsonl"), "--deployment", "local",
                           "--config", str(folder / "config.json"), "--output", str(folder / "validate"), "--variants", "30"],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"rows": folder / "rows.jsonl", "file": folder / "validate" / "validation.json", "cache": cache}


def tasks_of(validated) -> dict[str, Task]:
    return {row["instance_id"]: normalise(row) for row in map(json.loads, validated["rows"].read_text().splitlines())}


def test_a_task_gets_its_rows_result_and_a_verdict_for_another_image_does_not_count(validated, tmp_path):
    """By row digest: the weak row's strength has survivors, the strong row's none; a copy of a row with another
    FAIL_TO_PASS is another row (nothing known). Where the grading's image is known, a result for another image id is
    reported as such and does not validate this environment; one for the same id does. This machine's own verdict wins
    for validated, the file's strength wins over the machine's."""
    tasks = tasks_of(validated)
    validations = load(validated["file"])
    weak, strong = (task_validation(tasks[name], None, validations) for name in (WEAK, STRONG))
    assert weak.validated is True and weak.image == "unknown" and not weak.environment_validated  # validated on local: no image
    assert weak.survivors and weak.strength_report()["summary"] == f"survivors: {weak.survivors} of {weak.strength['tried']}"
    assert strong.survivors == 0 and strong.strength_report()["strength"] == 1.0 and strong.strength_report()["from"] == validations.path
    assert weak.report() == {"validated": True, "from": validations.path, "image": "unknown"}
    broken = tasks[WEAK].replace(FAIL_TO_PASS=["no such test"])
    assert task_validation(broken, None, validations) == task_validation(broken, None, None)  # nothing known of it
    assert task_validation(broken, None, validations).report() is None and task_validation(broken, None, validations).strength_report() is None

    report = json.loads(validated["file"].read_text())
    for result in report["results"]:
        result.update(environment="env-digest", image_id="sha256:there")
    (tmp_path / "imaged.json").write_text(json.dumps(report))
    imaged = load(tmp_path / "imaged.json")
    there = task_validation(tasks[STRONG], tmp_path / "cache", imaged, "env-digest", "sha256:there")
    elsewhere = task_validation(tasks[STRONG], tmp_path / "cache", imaged, "env-digest", "sha256:here")
    assert there.environment_validated and there.image == "same"
    assert not elsewhere.environment_validated and elsewhere.validated is True and elsewhere.image == "other"
    assert elsewhere.report()["note"] == "validated on another image (sha256:there), not this one"
    assert elsewhere.strength_report()["survivors"] == 0  # the row's tests: their strength stands on another image
    record(tmp_path / "cache", tasks[STRONG], "env-digest", "sha256:there", False, ["gold: a test did not pass"], {"tried": 2, "killed": 1, "strength": 0.5,
           "survivors": [{"operator": "hunk removed"}]})  # fmt: skip
    merged = task_validation(tasks[STRONG], tmp_path / "cache", imaged, "env-digest", "sha256:there")
    assert (merged.validated, merged.source, merged.environment_validated) == (False, "this machine", False)  # the machine's verdict
    assert (merged.survivors, merged.strength_source) == (0, imaged.path)  # the file's strength
    assert task_validation(tasks[STRONG], tmp_path / "cache", None, "env-digest", "sha256:there").survivors == 1  # the machine's, alone


@pytest.mark.parametrize("own_command", [None, "pytest -rA t.py"], ids=["spec-defaults", "own-command"])
def test_a_row_has_one_digest_as_loaded_and_as_its_image_built_here_opens_it(own_command):
    """What `validate` and `prepare-data` read (the row as loaded) and what grading reads are the same row: a sandbox on
    its image takes the commands the image records (for a Python row left to swebench's defaults; a row's own command
    is kept) into its `Episode`, and the task stays as loaded, so the file's and the store's records are found in both
    places. (When the image's commands were written into the task, a Python row's test command, None as loaded, was in
    its digest and the image's in none: no verdict of a Python row on an image built here was found by its grading.)"""
    from uni_agent_gym.specs import command_of_tests, environment_spec
    from uni_agent_gym.workspaces.recorded_environment import (COMMIT_LABEL, DIGEST_LABEL, NAME_LABEL, TEST_LABEL, canonical_name,
                                                               environment_digest, recorded_image)  # fmt: skip
    from uni_agent_gym.workspaces.validated import row_digest

    loaded = normalise({"instance_id": "astropy__astropy-12907", "repo": "astropy/astropy", "version": "4.3", "environment_setup_commit": "a" * 40,
                        "base_commit": "a" * 40, "problem_statement": "p", "test_patch": "", "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": [],
                        **({"test_command": own_command} if own_command else {})})  # fmt: skip
    before = row_digest(loaded)
    digest = environment_digest(environment_spec(loaded, {}), loaded, loaded.workdir)
    labels = {DIGEST_LABEL: digest, NAME_LABEL: canonical_name(loaded.image), COMMIT_LABEL: "a" * 40, TEST_LABEL: "pytest -rA from/the/image.py"}
    opened = recorded_image(loaded, loaded.image, ("sha256:image", labels), {}, loaded.workdir)
    assert (opened.environment, opened.image_id) == (digest, "sha256:image")
    graded = command_of_tests(loaded, {}, recorded=opened.commands)
    assert graded == own_command or (own_command is None and graded == "pytest -rA from/the/image.py")
    assert row_digest(loaded) == before
    assert row_digest(loaded.replace(FAIL_TO_PASS=["u"])) != row_digest(loaded)


BAD_FILES = {
    "missing": (None, "does not exist: write one with `uni-agent-gym validate --output DIR` (DIR/validation.json)"),
    "directory": ("mkdir", "is a directory, not a file"),
    "empty": ("", "is empty"),
    "binary": (b"\xff\xfe\x00\x01 not text", "is not UTF-8 text"),
    "not-json": ("{not json", "is not valid JSON (Expecting property name"),
    "no-results": ('{"tasks": 1}', "is not a report of `uni-agent-gym validate` (no `results` list of tasks)"),
    "older-gym": ('{"results": [{"instance_id": "a__b-1", "validated": true}]}', "1 result(s) carry no row digest (a__b-1), written by an older uni-agent-gym"),
}  # fmt: skip


@pytest.mark.parametrize("command", ["prepare-data", "eval", "train"])
@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_file_that_is_not_validates_report_is_one_error_line_before_any_work(tmp_path, capsys, monkeypatch, command, kind):
    from tests.test_verl_training import edited_toml
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal must not wrap the error line
    content, expected = BAD_FILES[kind]
    path = tmp_path / "validation.json"
    if content == "mkdir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    argv = {"prepare-data": ["prepare-data", "--dataset", "toy", "--output", str(tmp_path / "out.parquet")],
            "eval": ["eval", "--dataset", "toy", "--deployment", "local", "--output", str(tmp_path / "out")],
            "train": ["train", "--config", str(edited_toml(tmp_path)), "--dry-run", "--output", str(tmp_path / "out")]}[command]  # fmt: skip
    assert main([*argv, "--validations", str(path)]) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"--validations: validations file {path}" in errors[0] and expected in errors[0], errors
    assert not list(tmp_path.glob("out*"))


def test_prepare_data_carries_each_tasks_strength_and_drops_the_weak_ones(validated, tmp_path, capsys, monkeypatch):
    """Each row carries its strength in extra_info (verl's dataset reads it back); --drop-survivors and --min-strength
    leave out the weak task and say so; a task not in the file is kept and counted. Without a file they refuse."""
    import pyarrow.parquet as pq

    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    rows = validated["rows"].read_text().splitlines()
    dataset = tmp_path / "rows.jsonl"  # the two, and a copy of the weak row that grades another test (not validated)
    copy = {**json.loads(rows[0]), "instance_id": "uag-tests__weak-toy-3", "PASS_TO_PASS": [], "needs_environment": True}  # an image it lacks here
    dataset.write_text("\n".join([*rows, json.dumps(copy)]) + "\n")
    file = str(validated["file"])

    def infos(path: Path) -> dict[str, dict]:
        return {info["instance_id"]: info for info in pq.read_table(path, columns=["extra_info"]).column("extra_info").to_pylist()}

    assert main(["prepare-data", "--dataset", str(dataset), "--validations", file, "--output", str(tmp_path / "all.parquet")]) == 0
    out = capsys.readouterr().out
    assert f"validations: 2 row(s), 2 validated, 2 with strength measured, 1 with survivors in {validated['file'].resolve()}" in out
    assert f"wrote 3 rows for agent loop 'uni_agent' to {tmp_path / 'all.parquet'} (each with its strength from " in out
    every = infos(tmp_path / "all.parquet")
    weak = json.loads(validated["file"].read_text())["results"][0]["strength"]
    assert every[WEAK]["strength"] == {"strength": weak["strength"], "survivors": len(weak["survivors"]), "tried": weak["tried"]}
    assert every[STRONG]["strength"] == {"strength": 1.0, "survivors": 0, "tried": weak["tried"]} and every["uag-tests__weak-toy-3"]["strength"] is None

    assert main(["prepare-data", "--dataset", str(dataset), "--validations", file, "--drop-survivors", "--output", str(tmp_path / "strong.parquet")]) == 0
    out = capsys.readouterr().out
    assert f"left out 1 task(s) with survivors (their tests accept a wrong fix): {WEAK}" in out
    assert "kept 1 task(s) whose strength was not measured: uag-tests__weak-toy-3" in out and "wrote 2 rows" in out
    assert set(infos(tmp_path / "strong.parquet")) == {STRONG, "uag-tests__weak-toy-3"}
    assert main(["prepare-data", "--dataset", str(dataset), "--validations", file, "--min-strength", str(weak["strength"] + 0.01),
                 "--output", str(tmp_path / "above.parquet")]) == 0  # fmt: skip
    assert f"left out 1 task(s) below strength {weak['strength'] + 0.01}: {WEAK}" in capsys.readouterr().out
    assert set(infos(tmp_path / "above.parquet")) == {STRONG, "uag-tests__weak-toy-3"}
    assert main(["prepare-data", "--dataset", str(dataset), "--validations", file, "--validation", "require", "--output", str(tmp_path / "v.parquet")]) == 0
    assert "validation: require: 1 task(s) left out, not validated on this machine or in " in capsys.readouterr().out  # the copy: no verdict
    assert set(infos(tmp_path / "v.parquet")) == {WEAK, STRONG}

    assert main(["prepare-data", "--dataset", str(dataset), "--drop-survivors", "--output", str(tmp_path / "x.parquet")]) == 1
    assert "error: --drop-survivors: reads each task's strength from a validations file: give --validations" in capsys.readouterr().out


def test_eval_reports_every_tasks_strength_and_the_rate_over_tasks_with_no_survivor(validated, tmp_path, capsys, monkeypatch):
    """A model that writes a wrong fix on the weak task (its tests accept it: 1.0) and gives up on the strong one (an
    empty patch: graded 0 before any test runs). Each reward report carries the row's verdict and `survivors: k of n`;
    the report's rate over all tasks is 1 / 2, over the tasks with no survivor 0 / 1, and it names the weak task.
    Faked: the model endpoint only."""
    from uni_agent_gym.cli import main
    from uni_agent_gym.rewards.swebench import EMPTY_PATCH

    monkeypatch.setenv("COLUMNS", "250")
    settings, output, dataset = tmp_path / "settings.json", tmp_path / "run", tmp_path / "rows.jsonl"
    weak, strong = map(json.loads, validated["rows"].read_text().splitlines())
    strong["problem_statement"] += " (every test)"  # the scripted model's cue; not graded, so the same row
    dataset.write_text(json.dumps(weak) + "\n" + json.dumps(strong) + "\n")
    finish = {"tool_call": {"name": "finish", "arguments": {}}}
    scripts = {"(every test)": [finish], MARKER: [{"tool_call": {"name": "execute_bash", "arguments": {"command": WRONG_FIX}}}, finish]}
    with ScriptedEndpoint(scripts) as endpoint:
        settings.write_text(json.dumps({"model": {"base_url": endpoint.base_url}, "env": {"cache_dir": str(validated["cache"]), "workspace": "mirror"},
                                        "deployment": {"type": "local", "workdir": str(tmp_path / "workdir")}}))  # fmt: skip
        assert main(["eval", "-c", str(settings), "--dataset", str(dataset), "--output", str(output), "--validations", str(validated["file"])]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("resolved 1 / 2 (50.0%); over the tasks with no survivor 0 / 1 (0.0%); predictions: "), last
    results = {name: json.loads((output / "results" / f"{name}.json").read_text()) for name in (WEAK, STRONG)}
    assert (results[WEAK]["resolved"], results[STRONG]["resolved"], results[STRONG]["error"]) == (True, False, EMPTY_PATCH)
    path = str(validated["file"].resolve())
    tried = results[STRONG]["strength"]["tried"]
    assert results[STRONG]["validation"] == {"validated": True, "from": path, "image": "unknown"}
    assert results[STRONG]["strength"] == {"summary": f"survivors: 0 of {tried}", "strength": 1.0, "survivors": 0, "tried": tried, "from": path}
    assert results[WEAK]["strength"]["survivors"] > 0 and results[WEAK]["strength"]["summary"].startswith("survivors: ")
    report = json.loads((output / "report.json").read_text())
    assert report["by_strength"] == {"no_survivor": {"graded": 1, "resolved": 0, "resolved_rate": 0.0},
                                     "with_survivors": {"graded": 1, "resolved": 1, "resolved_rate": 1.0, "ids": [WEAK]},
                                     "not_measured": {"graded": 0, "resolved": 0, "resolved_rate": 0.0}}  # fmt: skip
    assert ("Over the **1** graded task(s) whose tests killed every wrong variant of their gold: resolved **0 / 1** (0.0%); 1 with "
            f"survivors (a 1.0 there may be a wrong fix): 1 / 1 (100.0%): {WEAK}; 0 with no strength measured.") in (output / "report.md").read_text()


def test_train_hands_the_file_to_every_agent_loop(validated, tmp_path, capsys, monkeypatch):
    """`train --validations` puts env.validations (absolute: each node reads it) into the agent-loop YAML it launches with."""
    import shutil

    from tests.test_verl_training import edited_toml
    from uni_agent_gym.cli import main
    from uni_agent_gym.verl.agent_loop import gym_config_of_entry

    (tmp_path / "data").mkdir()
    shutil.copy(validated["file"], tmp_path / "data" / "validation.json")
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--config", str(edited_toml(tmp_path)), "--dry-run", "--output", "runs", "--validations", "data/validation.json"]) == 0
    assert "validations: 2 row(s), 2 validated, 2 with strength measured, 1 with survivors in " in capsys.readouterr().out
    entry = yaml.safe_load((tmp_path / "runs" / "swe-grpo" / "uni_agent_loop.yaml").read_text())[0]
    assert entry["overrides"][-1] == f"env.validations={tmp_path / 'data' / 'validation.json'}"
    assert gym_config_of_entry(tmp_path, entry).env.validations == str(tmp_path / "data" / "validation.json")


@pytest.mark.slow  # UniAgentLoop and GatewayAgentLoop episodes with a sampling model
async def test_the_agent_loops_carry_how_many_wrong_fixes_their_tasks_tests_accept(validated, tmp_path):
    """UniAgentLoop on both tasks, the model writing the wrong fix: the weak task's trajectory earns 1.0 and carries its
    survivors (from the reward report: env.validations), the strong one's 0.0 and none (from the row's extra_info, as
    prepare-data wrote it, with no env.validations); GatewayAgentLoop's output carries them as well."""
    from tests.test_verl_agent_loop import make_loop, tool_call
    from tests.token_server import TokenServer, tiny_model_dir
    from uni_agent_gym.verl.data import verl_rows

    tasks = tasks_of(validated)
    calls = [{"name": "execute_bash", "arguments": {"command": WRONG_FIX}}, {"name": "finish", "arguments": {}}]
    model = tiny_model_dir(tmp_path / "model")
    env = {"cache_dir": str(validated["cache"]), "workspace": "mirror"}
    outputs = {}
    for name, gym, validations in ((WEAK, {"env": {**env, "validations": str(validated["file"])}}, None), (STRONG, {"env": env}, load(validated["file"]))):
        server = TokenServer(model, lambda turn, repo_dir: tool_call(calls[min(turn, 1)]))
        (tmp_path / name).mkdir()
        row = verl_rows([tasks[name]], validations=validations)[0]
        outputs[name] = await make_loop(tmp_path / name, server, gym=gym).run({"logprobs": True}, extra_info=row["extra_info"], raw_prompt=[])
    weak, strong = outputs[WEAK], outputs[STRONG]
    survivors = len(json.loads(validated["file"].read_text())["results"][0]["strength"]["survivors"])
    assert (weak.reward_score, strong.reward_score) == (1.0, 0.0)
    assert weak.extra_fields["task_survivors"] == survivors > 0 and strong.extra_fields["task_survivors"] == 0

    # the gateway loop: a black-box harness writes the same wrong fix on the weak task (strength from its row)
    from tests.test_gateway_loop import harness, make_loop as make_gateway_loop
    from uni_agent_gym.verl.gateway_loop import stop_worker_gateway

    text = '<tool_call>\n{"name": "bash", "arguments": {"command": %s}}\n</tool_call>' % json.dumps(WRONG_FIX)
    server = TokenServer(model, lambda turn, repo_dir: text if turn == 0 else "Done.")
    (tmp_path / "gateway").mkdir()
    row = verl_rows([tasks[WEAK]], validations=load(validated["file"]))[0]
    try:
        output = await make_gateway_loop(tmp_path / "gateway", server, harness("react"), gym={"env": env}).run(
            {"temperature": 1.0, "logprobs": True}, extra_info=row["extra_info"], raw_prompt=[])
    finally:
        await stop_worker_gateway()
    assert output.reward_score == 1.0 and output.extra_fields["task_survivors"] == survivors, output.extra_fields["gateway"]["harness_output"]


def test_verls_data_metrics_give_the_share_of_positive_rewards_from_tasks_with_survivors():
    """verl's `compute_data_metrics` (as its PPO trainer holds it, our plugin loaded by `import verl`) on a step of five
    trajectories: a weak task solved, a strong one not, a solved and an unsolved task not measured, a strong one solved.
    1 of the 3 positive rewards came from a task with survivors; a batch without the column gets nothing of ours, and
    a step with no positive reward leaves the share out."""
    from verl.protocol import DataProto
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo import ray_trainer

    rewards, survivors = [1.0, 0.0, 1.0, 0.0, 1.0], [3, 0, None, None, 0]
    scores = torch.zeros(len(rewards), 4)
    scores[:, -1] = torch.tensor(rewards)
    mask, prompts = torch.ones(len(rewards), 4, dtype=torch.long), torch.ones(len(rewards), 3, dtype=torch.long)
    data = DataProto.from_dict({"response_mask": mask, "token_level_rewards": scores, "token_level_scores": scores, "prompts": prompts,
                                "responses": torch.ones_like(mask), "attention_mask": torch.cat([torch.ones_like(prompts), mask], dim=1)})  # fmt: skip
    data.non_tensor_batch["uid"] = np.array(["a", "b", "c", "d", "e"], dtype=object)
    data = ray_trainer.compute_advantage(data, adv_estimator="grpo_drop_masked", config=AlgoConfig())
    stock = ray_trainer.compute_data_metrics(batch=data, use_critic=False)
    assert not any(key.startswith("uni_agent_gym/survivors") for key in stock)
    data.non_tensor_batch["task_survivors"] = np.array(survivors, dtype=object)
    metrics = ray_trainer.compute_data_metrics(batch=data, use_critic=False)
    ours = {key: value for key, value in metrics.items() if key.startswith("uni_agent_gym/survivors")}
    assert ours == {"uni_agent_gym/survivors/positive_share": 1 / 3, "uni_agent_gym/survivors/task_share": 1 / 5,
                    "uni_agent_gym/survivors/unmeasured_share": 2 / 5}  # fmt: skip
    assert metrics["critic/score/mean"] == stock["critic/score/mean"], "verl's own metrics unchanged"
    data.batch["token_level_scores"] = torch.zeros_like(scores)
    assert "uni_agent_gym/survivors/positive_share" not in ray_trainer.compute_data_metrics(batch=data, use_critic=False)


async def test_where_this_machine_holds_the_image_a_verdict_in_the_file_counts_for_that_image_id_only(tmp_path, docker_image):
    """On real labelled images: a row the file validated on this image's id is validated (for `validation: require` and
    an episode's start under it), one it validated on another build is not, and a row whose image is not here takes
    the file's verdict of the row (prepare-data on a machine without the images)."""
    import docker

    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.envs import AsyncSWEEnv
    from uni_agent_gym.errors import DeploymentError
    from uni_agent_gym.workspaces.history import HISTORY_LABEL
    from uni_agent_gym.workspaces.image_builder import _relabel
    from uni_agent_gym.workspaces.recorded_environment import COMMIT_LABEL, DIGEST_LABEL, NAME_LABEL
    from uni_agent_gym.workspaces.validated import consult, row_digest
    from uni_agent_gym.workspaces.validations_file import unvalidated

    client = docker.from_env()
    names = {kind: f"uag-test/validations-file:{kind}" for kind in ("same", "other")}
    for kind, name in names.items():
        client.images.get(docker_image).tag(name)
        _relabel(name, {DIGEST_LABEL: f"digest-{kind}", COMMIT_LABEL: "a" * 40, HISTORY_LABEL: "ancestry", NAME_LABEL: name})
    rows = {kind: {"instance_id": f"x__{kind}-1", "repo": "x/y", "base_commit": "a" * 40, "version": "0", "problem_statement": "p", "test_patch": "",
                   "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": [], "image_name": name, "workdir": "/testbed"}
            for kind, name in {**names, "absent": "uag-test/validations-file:absent"}.items()}  # fmt: skip
    tasks = {kind: normalise(row) for kind, row in rows.items()}
    images = {"same": client.images.get(names["same"]).id, "other": "sha256:another-build", "absent": "sha256:elsewhere"}
    results = [{"instance_id": tasks[kind].instance_id, "row_digest": row_digest(tasks[kind]), "validated": True, "environment": f"digest-{kind}",
                "image_id": images[kind], "strength": None} for kind in tasks]  # fmt: skip
    (tmp_path / "validation.json").write_text(json.dumps({"results": results}))
    validations, cache = load(tmp_path / "validation.json"), tmp_path / "cache"
    try:
        assert unvalidated(list(tasks.values()), cache, validations) == ["x__other-1"]
        said: list[str] = []
        kept = consult(list(tasks.values()), "require", cache, said.append, find_missing=lambda chosen: unvalidated(chosen, cache, validations))
        assert kept == [tasks["same"], tasks["absent"]] and said == ["validation: require: 1 task(s) left out, not validated on this machine: x__other-1"]

        def env() -> AsyncSWEEnv:
            return AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "docker"}, "env": {
                "cache_dir": str(cache), "validation": "require", "workspace": "image", "validations": str(tmp_path / "validation.json")}}))  # fmt: skip

        other = env()
        with pytest.raises(DeploymentError, match=f"its image {names['other']} has not passed `uni-agent-gym validate` on this machine"):
            await other.reset(options={"instance": rows["other"]})
        await other.close()
        same = env()
        try:  # past the check: its sandbox starts (the base image holds no repository, so the reset may fail later, for that)
            await same.reset(options={"instance": rows["same"]})
        except DeploymentError as exc:
            assert "has not passed `uni-agent-gym validate`" not in str(exc), exc
        finally:
            await same.close()
    finally:
        for name in names.values():
            client.images.remove(name, force=True)
