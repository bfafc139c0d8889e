"""`uni-agent-gym eval` against a scripted OpenAI-compatible endpoint on 127.0.0.1 (the only fake: the
model server), on real fixture instances in docker, and the ReAct agent's budgets on the toy task."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest

from tests import fixture_sources
from tests.browser import artifacts, browser, wait_for  # noqa: F401 (browser is a fixture)
from tests.conftest import require_docker
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_reward import row
from uni_agent_gym.agent.model import ChatModel
from uni_agent_gym.agent.react import run_episode
from uni_agent_gym.config import AgentConfig, GymConfig, ModelConfig
from uni_agent_gym.datasets import Task, normalise
from uni_agent_gym.envs import AsyncSWEEnv

PYTEST = "pytest-dev__pytest-7168"
FLASK = "pallets__flask-4992"


def scripts() -> dict[str, list[dict]]:
    gold = row(PYTEST).patch
    apply_gold = f"cat > /tmp/fix.diff <<'UAG_EOF'\n{gold}UAG_EOF\ngit apply /tmp/fix.diff && git diff --stat"
    return {
        "INTERNALERROR when exception in __repr__": [  # solves it
            {"tool_call": {"name": "execute_bash", "arguments": {"command": "git status --short"}}},
            {"text": "Applying the fix.\n<tool_call>\n" + json.dumps({"name": "execute_bash", "arguments": {"command": apply_gold}}) + "\n</tool_call>",
             "fail_first": [500]},
            {"tool_call": {"name": "finish", "arguments": {}}, "fail_first": [429]},
        ],
        "Add a file mode parameter to flask.Config.from_file()": [  # does not
            {"text": "Let me think about the config loader first."},
            {"tool_call": {"name": "str_replace_editor", "arguments": {"command": "view", "path": "/testbed/src/flask/config.py", "view_range": [1, 5]}}},
            {"tool_call": {"name": "finish", "arguments": {}}},
        ],
    }  # fmt: skip


SECRET = "sk-uag-test-9f8e7d6c5b4a"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "UAG_EVAL_KEY": SECRET}
    return subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", *args], capture_output=True, text=True, timeout=1800, env=env)


def test_eval_run_reports_what_the_script_implies(tmp_path, browser):
    require_docker()
    import asyncio

    for instance_id in (PYTEST, FLASK):
        asyncio.run(fixture_sources.ensure_image(row(instance_id)))
    with ScriptedEndpoint(scripts()) as endpoint:
        settings = tmp_path / "settings.json"
        settings.write_text(json.dumps({
            "model": {"base_url": endpoint.base_url, "model_name": "scripted/model", "api_key": "${UAG_EVAL_KEY:-none}"},
            "env": {"workspace": "image", "environments": str(fixture_sources.SHARED / "fixtures.json")},
        }))  # fmt: skip
        output = tmp_path / "run"
        arguments = ["eval", "--config", str(settings), "--dataset", str(fixture_sources.SHARED / "derived.jsonl"),
                     "--instance-ids", PYTEST, FLASK, "--workers", "2", "--output", str(output), "--deployment", "docker"]  # fmt: skip
        done = run_cli(*arguments)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "resolved 1 / 2 (50.0%)" in done.stdout
        requests = len(endpoint.requests)

        predictions = [json.loads(line) for line in (output / "predictions.jsonl").read_text().splitlines()]
        by_id = {p["instance_id"]: p for p in predictions}
        assert set(by_id) == {PYTEST, FLASK} and all(p["model_name_or_path"] == "scripted/model" for p in predictions)
        assert by_id[PYTEST]["model_patch"].startswith("diff --git a/src/_pytest/_io/saferepr.py") and by_id[FLASK]["model_patch"] == ""

        report = json.loads((output / "report.json").read_text())
        assert (report["resolved"], report["instances"], report["resolved_ids"], report["empty_patch_ids"]) == (1, 2, [PYTEST], [FLASK])
        assert report["per_repo"]["pytest-dev/pytest"]["resolved_rate"] == 1.0 and report["per_repo"]["pallets/flask"]["resolved"] == 0
        assert report["per_language"] == {"python": {"instances": 2, "graded": 2, "resolved": 1, "resolved_rate": 0.5}}
        assert report["exit_reasons"] == {"finished": 2} and report["turns"] == {PYTEST: 3, FLASK: 3}
        assert (output / "report.png").stat().st_size > 10_000 and "| pytest-dev/pytest | 1 | 1 | 1 | 100.0% |" in (output / "report.md").read_text()

        trajectory = json.loads((output / "trajectories" / f"{PYTEST}.json").read_text())
        assert [step["tool"] for step in trajectory["steps"]] == ["execute_bash", "execute_bash", "finish"]
        assert trajectory["steps"][1]["retries"] == 1 and trajectory["steps"][2]["retries"] == 1
        assert trajectory["messages"][0]["role"] == "system" and trajectory["messages"][2]["tool_calls"]
        assert trajectory["messages"][3]["role"] == "tool"
        flask = json.loads((output / "trajectories" / f"{FLASK}.json").read_text())
        assert flask["steps"][0]["error"] == "format_error"
        assert json.loads((output / "trajectories" / f"{PYTEST}.json").read_text())["reward_report"]["language"] == "python"
        assert json.loads((output / "results" / f"{PYTEST}.json").read_text())["status"] == "resolved"

        looked_at_in_chromium(browser, output)
        leaks = [str(path) for path in output.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
        assert leaks == [] and SECRET not in done.stdout + done.stderr, "the API key must not reach any output"
        again = run_cli(*arguments)
        assert again.returncode == 0 and len(endpoint.requests) == requests, "a re-run does no work"
        assert json.loads((output / "report.json").read_text()) == report

    graded = run_cli("grade", "--dataset", str(fixture_sources.SHARED / "derived.jsonl"), "--predictions", str(output / "predictions.jsonl"),
                     "--environments", str(fixture_sources.SHARED / "fixtures.json"), "--set", "env.workspace=image",
                     "--output", str(tmp_path / "grade"), "--run-id", "check")  # fmt: skip
    assert graded.returncode == 0, graded.stdout + graded.stderr
    summary = json.loads((tmp_path / "grade" / "scripted__model.check.json").read_text())
    assert summary["resolved_ids"] == [PYTEST] and summary["empty_patch_ids"] == [FLASK]


def looked_at_in_chromium(browser, output) -> None:
    """`uni-agent-gym view` on the run: both rows, the solved one's per-test outcomes as its report has them,
    the other's malformed call marked, no console error."""
    from selenium.webdriver.common.by import By

    assert run_cli("view", str(output)).returncode == 0
    browser.get((output / "view.html").as_uri())
    wait_for(browser, "return window.__uagRendered")
    rows = {row.find_element(By.CSS_SELECTOR, ".c-instance").text: row for row in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")}
    assert set(rows) == {PYTEST, FLASK}
    rows[PYTEST].click()
    wait_for(browser, "return document.querySelectorAll('#tests tr[data-outcome]').length > 0")
    shown = {(tr.get_attribute("data-test"), tr.get_attribute("data-kind"), tr.get_attribute("data-outcome"))
             for tr in browser.find_elements(By.CSS_SELECTOR, "#tests tr[data-outcome]")}  # fmt: skip
    tests = json.loads((output / "results" / f"{PYTEST}.json").read_text())["tests"]
    assert shown == {(test, kind, "pass" if outcome == "success" else "fail")
                     for kind in ("FAIL_TO_PASS", "PASS_TO_PASS") for outcome, names in tests[kind].items() for test in names}  # fmt: skip
    browser.save_screenshot(str(artifacts() / "viewer-eval-trajectory.png"))
    browser.execute_script("location.hash = '#'")
    wait_for(browser, "return !document.getElementById('run-page').hidden")
    browser.save_screenshot(str(artifacts() / "viewer-eval-run.png"))
    [flask] = [row for row in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr") if row.find_element(By.CSS_SELECTOR, ".c-instance").text == FLASK]
    flask.click()
    wait_for(browser, "return document.querySelectorAll('#steps .step.format-error').length === 1")
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


async def toy_episode(script: list[dict], **agent) -> dict:
    with ScriptedEndpoint({"stats.mean": script}) as endpoint:
        model = ChatModel(ModelConfig(base_url=endpoint.base_url))
        env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "local"}}))
        try:
            from uni_agent_gym import toy

            instance = normalise(await toy.toy_instance(env.config.env.cache_dir))
            return await run_episode(env, model, instance, AgentConfig(**agent))
        finally:
            await env.close()
            await model.close()


async def test_repeated_format_errors_end_the_episode():
    trajectory = await toy_episode([{"text": "hmm"}], max_format_errors=3)
    assert trajectory["exit_reason"] == "format_error" and trajectory["turns"] == 3  # the agent then finishes to grade
    assert trajectory["reward_report"]["exit_code"] != 0 and trajectory["reward"] == 0.0


async def test_token_budget_ends_the_episode_and_grades_the_work():
    fix = {"tool_call": {"name": "execute_bash", "arguments": {"command": "sed -i 's/(len(values) - 1)/len(values)/' stats.py"}}}
    trajectory = await toy_episode([fix, {"tool_call": {"name": "execute_bash", "arguments": {"command": "ls"}}}], token_budget=50)
    assert trajectory["exit_reason"] == "max_tokens" and trajectory["turns"] == 1  # the first turn spends the budget
    report = trajectory["reward_report"]  # the work so far (the fix) is graded: the toy's tests pass
    assert (report["resolved"], report["exit_code"], trajectory["reward"]) == (True, 0, 1.0), report
    assert report["log"].endswith("\nOK\n") and "Ran 4 tests" in report["log"], report["log"]


async def test_long_observations_are_shortened_for_the_model():
    script = [{"tool_call": {"name": "execute_bash", "arguments": {"command": "seq 1 20000"}}}, {"tool_call": {"name": "finish", "arguments": {}}}]
    trajectory = await toy_episode(script, observation_limit=1000)
    shown = trajectory["messages"][3]["content"]
    assert len(shown) < 1100 and "characters cut" in shown and shown.startswith("1\n2\n")
    assert len(trajectory["steps"][0]["observation"]) > 100_000, "the trajectory keeps the whole observation"


TASK_DUMP = """
import asyncio, signal, sys
from uni_agent_gym import cli

def dump_tasks(signum, frame):  # each task's whole await chain (print_stack shows only its outermost frame)
    loop = asyncio._get_running_loop()
    for task in asyncio.all_tasks(loop) if loop else []:
        print("task", task.get_name(), "waits on", task._fut_waiter)
        awaited = task.get_coro()
        while awaited is not None:
            where = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
            if where is not None:
                print("   ", where.f_code.co_filename, where.f_lineno, where.f_code.co_name)
            awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    sys.stdout.flush()

signal.signal(signal.SIGUSR1, dump_tasks)
# Ctrl-C in a terminal: a test run started as a background job (nohup ... &) ignores SIGINT, and a child
# inherits that; Python then installs no handler and SIGINT does nothing (this test hung on every such run).
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(cli.main(sys.argv[1:]))
"""


def test_ctrl_c_releases_sandboxes_and_keeps_finished_results(tmp_path, docker_image, container_run_id):
    """SIGINT while one episode hangs in a docker sandbox: the run stops with 130, no container is left,
    the finished episode is kept, and a re-run only plays the one that did not finish."""
    require_docker()
    import asyncio
    import signal
    import time

    from uni_agent_gym import toy
    from uni_agent_gym.deployments.docker import docker_client

    first = asyncio.run(toy.toy_instance(str(tmp_path / "cache")))
    second = {**first, "instance_id": "uni-agent-gym__toy-2", "problem_statement": first["problem_statement"] + "\n(second copy)"}
    dataset = tmp_path / "toys.jsonl"
    dataset.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    finish = {"tool_call": {"name": "finish", "arguments": {}}}
    hang = {"tool_call": {"name": "execute_bash", "arguments": {"command": "sleep 600"}}}
    run_id = container_run_id
    settings = tmp_path / "settings.json"
    output = tmp_path / "run"
    with ScriptedEndpoint({"second copy": [hang], "stats.mean": [finish]}) as endpoint:
        settings.write_text(json.dumps({"model": {"base_url": endpoint.base_url}, "env": {"cache_dir": str(tmp_path / "cache")},
                                        "deployment": {"type": "docker", "image": docker_image, "run_id": run_id, "command_timeout": 900}}))  # fmt: skip
        arguments = ["eval", "-c", str(settings), "--dataset", str(dataset), "--workers", "2", "--output", str(output)]
        command = [sys.executable, "-m", "uni_agent_gym.cli", *arguments]
        # Should the run not stop: SIGUSR1 prints every asyncio task's stack (TASK_DUMP), SIGABRT every thread's
        # (PYTHONFAULTHANDLER), so the failure says where it waits
        process = subprocess.Popen([sys.executable, "-c", TASK_DUMP, *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"})  # fmt: skip
        deadline = time.monotonic() + 120
        while not (output / "trajectories" / f"{toy.INSTANCE_ID}.json").exists() or not any(r["key"] == "second copy" for r in endpoint.requests):
            assert time.monotonic() < deadline and process.poll() is None, "the run should be busy with the hanging episode"
            time.sleep(0.2)
        time.sleep(1)  # the hanging command is now running in its container
        labelled = {"label": [f"uni-agent-gym.run-id={run_id}"]}
        assert len(docker_client().containers.list(filters=labelled)) == 1
        process.send_signal(signal.SIGINT)
        try:
            out, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGUSR1)
            time.sleep(2)
            process.send_signal(signal.SIGABRT)
            pytest.fail("eval did not stop within 120 s of SIGINT; where it was:\n" + process.communicate()[0][-20000:])
        assert process.returncode == 130 and "interrupted" in out, out
        assert docker_client().containers.list(all=True, filters=labelled) == []
        assert not (output / "trajectories" / "uni-agent-gym__toy-2.json").exists()
        assert [json.loads(line)["instance_id"] for line in (output / "predictions.jsonl").read_text().splitlines()] == [toy.INSTANCE_ID]

    with ScriptedEndpoint({"second copy": [finish], "stats.mean": [finish]}) as endpoint:
        settings.write_text(json.dumps({"model": {"base_url": endpoint.base_url}, "env": {"cache_dir": str(tmp_path / "cache")}}))
        replayed = output / "trajectories" / "uni-agent-gym__toy-2.json"
        # A sandbox that failed is played again by the next run. Seen in two full runs (2026-12-05, -06): the re-run's
        # episode ended in env_error "ExceptionGroup: unhandled errors in a TaskGroup", source not yet known (its leaves
        # and traceback are now in the row and the log, which the warning below shows)
        for _ in range(2):
            # the scripted model now listens on another port: another endpoint, so the resume must allow it
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)  # another endpoint, the same model
            assert done.returncode == 0, done.stdout + done.stderr
            record = json.loads(replayed.read_text()) if replayed.exists() else {}
            why = record.get("error") if record else "no trajectory"
            if record.get("exit_reason") != "env_error":
                break
            warnings.warn(f"the re-run's sandbox failed, so it runs again: {why}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}", stacklevel=1)
        assert {r["key"] for r in endpoint.requests} == {"second copy"}, ("only the unfinished instance is played", why, done.stdout[-3000:], done.stderr[-3000:])
        assert record.get("exit_reason") == "finished" and record.get("reward_report") is not None, ("the replayed episode ran to its end", why)
        assert len((output / "predictions.jsonl").read_text().splitlines()) == 2


def test_a_rerun_plays_again_the_instances_whose_sandbox_failed(tmp_path, capsys, monkeypatch):
    """An `env_error` is not the model's doing (here the local workdir holds a stray file, so no checkout
    can go there): once the cause is fixed, the next run of the same command plays that instance again
    and says so; `--no-retry-errors` keeps the error. Faked: the model endpoint only."""
    from tests.blocked_toy import blocked_toy
    from uni_agent_gym import toy
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")  # rich wraps the summary line to the terminal width
    blocked, output = blocked_toy(tmp_path), tmp_path / "run"
    fix = {"tool_call": {"name": "str_replace_editor", "arguments": {
        "command": "str_replace", "path": f"{blocked.workdir.resolve()}/stats.py", "old_str": "(len(values) - 1)", "new_str": "len(values)"}}}  # fmt: skip
    finish = {"tool_call": {"name": "finish", "arguments": {}}}

    def trajectory() -> dict:
        return json.loads((output / "trajectories" / f"{toy.INSTANCE_ID}.json").read_text())

    with ScriptedEndpoint({"stats.mean": [fix, finish]}) as endpoint:
        settings = tmp_path / "settings.json"
        settings.write_text(json.dumps(blocked.settings(model={"base_url": endpoint.base_url})))
        command = ["eval", "-c", str(settings), "--dataset", str(blocked.dataset), "--output", str(output)]
        assert main(command) == 1, "nothing was graded: a script must not read success"
        failed = trajectory()
        assert failed["exit_reason"] == "env_error" and "neither empty nor a git checkout" in failed["error"]
        errors = [line for line in capsys.readouterr().out.splitlines() if "error:" in line]
        assert errors == [f"error: nothing was graded: all 1 instance(s) ended in env_error before grading (their sandbox failed), "
                          f"the first ({toy.INSTANCE_ID}): {failed['error']}"], errors  # fmt: skip
        assert main([*command, "--no-retry-errors"]) == 1 and trajectory() == failed and endpoint.requests == []
        capsys.readouterr()

        blocked.stray.unlink()  # the cause, fixed
        assert main(command) == 0
        assert "resolved 1 / 1 (100.0%); retried 1 whose sandbox failed before;" in (out := capsys.readouterr().out), out
        retried = trajectory()
        assert retried["exit_reason"] == "finished" and retried["reward"] == 1.0 and retried["earlier_errors"] == [failed["error"]]
        report = json.loads((output / "report.json").read_text())
        assert report["retried"] == 1 and report["exit_reasons"] == {"finished": 1} and report["resolved_ids"] == [toy.INSTANCE_ID]
        assert "retried 1 instance(s) whose sandbox failed" in (output / "report.md").read_text()

        played = len(endpoint.requests)
        assert main(command) == 0 and len(endpoint.requests) == played, "a finished instance is not played again"
        assert "retried" not in capsys.readouterr().out and json.loads((output / "report.json").read_text())["retried"] == 0


async def test_an_episode_that_fails_on_an_exception_group_keeps_its_causes(monkeypatch, caplog):
    """A TaskGroup's error says only "unhandled errors in a TaskGroup (1 sub-exception)": the env_error row names
    the exception inside, and the log has the traceback (not a gym error: a bug somewhere). Faked: the episode."""
    import builtins

    from uni_agent_gym.eval import run

    group = getattr(builtins, "ExceptionGroup", None) or pytest.importorskip("exceptiongroup").ExceptionGroup  # 3.11's, or its backport

    async def fails(*args, **kwargs):
        raise group("unhandled errors in a TaskGroup", [ConnectionResetError("the peer went away")])

    monkeypatch.setattr(run, "run_episode", fails)
    record = await run._episode(Task(instance_id="x__y-1", repo="o/r", family="swe-bench"), GymConfig(), model=None, reward=None)
    assert record["exit_reason"] == "env_error"
    assert record["error"] == "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception) [ConnectionResetError: the peer went away]"
    assert "Traceback" in caplog.text and "ConnectionResetError: the peer went away" in caplog.text


def toy_run(tmp_path, endpoint, second: dict | None = None, **model) -> tuple[list[str], object]:
    """`eval` arguments for the toy task and a copy of it (`second` changes the copy) on the local deployment,
    whose scripted model fixes the bug and finishes; and the output directory."""
    import asyncio

    from uni_agent_gym import toy

    first = asyncio.run(toy.toy_instance(str(tmp_path / "cache")))
    copy = {**first, "instance_id": "uni-agent-gym__toy-2", "problem_statement": first["problem_statement"] + "\n(second copy)", **(second or {})}
    dataset, output, workdir = tmp_path / "toys.jsonl", tmp_path / "run", tmp_path / "workdir"
    dataset.write_text(json.dumps(first) + "\n" + json.dumps(copy) + "\n")
    settings = tmp_path / f"settings-{model.get('model_name', 'default')}.json"
    settings.write_text(json.dumps({"model": {"base_url": endpoint.base_url, **model}, "env": {"cache_dir": str(tmp_path / "cache")},
                                    "deployment": {"type": "local", "workdir": str(workdir)}}))  # fmt: skip
    return ["eval", "-c", str(settings), "--dataset", str(dataset), "--output", str(output)], output


def fix_and_finish(tmp_path) -> dict[str, list[dict]]:
    fix = {"tool_call": {"name": "str_replace_editor", "arguments": {
        "command": "str_replace", "path": f"{(tmp_path / 'workdir').resolve()}/stats.py", "old_str": "(len(values) - 1)", "new_str": "len(values)"}}}  # fmt: skip
    return {"stats.mean": [fix, {"tool_call": {"name": "finish", "arguments": {}}}]}


def test_rates_are_over_the_graded_instances_and_the_ungraded_are_listed(tmp_path, capsys, monkeypatch):
    """An instance whose workspace cannot be made (its commit is not in the mirror, as a task without its
    image) gets no verdict: it is counted and listed apart, with why, never as the model's 0. Faked: the model."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    with ScriptedEndpoint(fix_and_finish(tmp_path)) as endpoint:
        arguments, output = toy_run(tmp_path, endpoint, {"base_commit": "0" * 40, "repo": "uni-agent-gym/elsewhere"})
        assert main(arguments) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("resolved 1 / 1 graded (100.0%); 1 of 2 not graded (1 WorkspaceError; listed in report.md); predictions: "), last
    report = json.loads((output / "report.json").read_text())
    assert (report["resolved_rate"], report["graded"], list(report["ungraded"])) == (1.0, 1, ["uni-agent-gym__toy-2"])
    assert report["per_repo"]["uni-agent-gym/elsewhere"] == {"instances": 1, "graded": 0, "resolved": 0, "resolved_rate": 0.0}
    assert report["per_language"] == {"python": {"instances": 2, "graded": 1, "resolved": 1, "resolved_rate": 1.0}}
    markdown = (output / "report.md").read_text()
    assert "Resolved **1 / 1** graded (100.0%); **1 of 2 not graded** (listed below)" in markdown
    assert "| uni-agent-gym/elsewhere | 1 | 0 | 0 | – |" in markdown and "| python | 2 | 1 | 1 | 100.0% |" in markdown
    assert "| uni-agent-gym__toy-2 | WorkspaceError: Instance 'uni-agent-gym__toy-2': the mirror " in markdown


def test_a_resume_counts_what_was_done_before(tmp_path, capsys, monkeypatch):
    """A resume says how many instances it skips, and its bar counts them as its last line does."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    with ScriptedEndpoint(fix_and_finish(tmp_path)) as endpoint:
        arguments, output = toy_run(tmp_path, endpoint)
        assert main([*arguments, "--instance-ids", "uni-agent-gym__toy-1"]) == 0
        capsys.readouterr()
        assert main(arguments) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"1 of 2 instance(s) already done in {output}, skipped", lines
    assert [line for line in lines if "2/2" in line and "resolved 2  errors 0" in line], lines
    assert lines[-1].startswith("resolved 2 / 2 (100.0%); predictions: "), lines


def test_a_resume_with_another_model_is_refused(tmp_path, capsys, monkeypatch):
    """One output directory holds one model's results: a resume with another model (name or settings) stops in one
    line naming both, before any work; --allow-model-change mixes them, and the report says so. The same model at
    another endpoint (its server restarted) is the same model."""
    from uni_agent_gym.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    with ScriptedEndpoint(fix_and_finish(tmp_path)) as endpoint:
        first, output = toy_run(tmp_path, endpoint, model_name="model-A")
        assert main([*first, "--instance-ids", "uni-agent-gym__toy-1"]) == 0
        predictions = (output / "predictions.jsonl").read_text()
        played = len(endpoint.requests)
        capsys.readouterr()

        second, _ = toy_run(tmp_path, endpoint, model_name="model-B")
        assert main(second) == 1
        errors = [line for line in capsys.readouterr().out.splitlines() if "error:" in line]
        assert len(errors) == 1 and f"{output} holds results of model-A at {endpoint.base_url}/v1 (settings " in errors[0], errors
        assert f"this run's model is model-B at {endpoint.base_url}/v1 (settings " in errors[0] and "--allow-model-change" in errors[0]
        assert len(endpoint.requests) == played and (output / "predictions.jsonl").read_text() == predictions
        warmer, _ = toy_run(tmp_path, endpoint, model_name="model-A", temperature=0.7)  # the same name, other settings
        assert main(warmer) == 1 and "this run's model is model-A at" in capsys.readouterr().out
        with ScriptedEndpoint(fix_and_finish(tmp_path)) as moved:
            again, _ = toy_run(tmp_path, moved, model_name="model-A")
            assert main([*again, "--instance-ids", "uni-agent-gym__toy-1"]) == 0 and "error:" not in capsys.readouterr().out
        assert [m["base_url"] for m in json.loads((output / "run.json").read_text())["models"]] == [f"{moved.base_url}/v1"]

        assert main([*second, "--allow-model-change"]) == 0
        assert "results of 2 models: model-A at " in capsys.readouterr().out
    names = [json.loads(line)["model_name_or_path"] for line in (output / "predictions.jsonl").read_text().splitlines()]
    assert names == ["model-A", "model-B"]
    assert "**Results of 2 models** (resumed with --allow-model-change): model-A at " in (output / "report.md").read_text()
    assert [m["model_name"] for m in json.loads((output / "report.json").read_text())["models"]] == ["model-A", "model-B"]


def test_toy_dataset_predictions_carry_the_episodes_patch(tmp_path, capsys, monkeypatch):
    """`eval --dataset toy`: the prediction is the diff the episode made (the toy's own tests grade it, and its
    report carries the patch as SWE-bench grading's does), which `grade --dataset toy` resolves again; an episode
    that changes nothing predicts an empty patch, counted in `empty_patch_ids`. Faked: the model endpoint only."""
    from uni_agent_gym import toy
    from uni_agent_gym.cli import main
    from uni_agent_gym.instances import patch_files

    monkeypatch.setenv("COLUMNS", "250")
    fix = {"tool_call": {"name": "execute_bash", "arguments": {"command": "sed -i 's/(len(values) - 1)/len(values)/' stats.py && python3 -m unittest test_stats"}}}
    finish = {"tool_call": {"name": "finish", "arguments": {}}}
    for name, script in (("fixed", [fix, finish]), ("idle", [finish])):
        with ScriptedEndpoint({"stats.mean": script}) as endpoint:
            settings = tmp_path / f"{name}.json"
            settings.write_text(json.dumps({"env": {"cache_dir": str(tmp_path / "cache")}, "deployment": {"type": "local"},
                                            "model": {"base_url": endpoint.base_url, "model_name": name}}))  # fmt: skip
            assert main(["eval", "-c", str(settings), "--dataset", "toy", "--output", str(tmp_path / name)]) == 0
    [fixed] = [json.loads(line) for line in (tmp_path / "fixed" / "predictions.jsonl").read_text().splitlines()]
    assert patch_files(fixed["model_patch"]) == ["stats.py"], "the fix alone: no bytecode the tests wrote"
    assert "-    return sum(values) / (len(values) - 1)\n+    return sum(values) / len(values)\n" in fixed["model_patch"]
    assert json.loads((tmp_path / "fixed" / "report.json").read_text())["empty_patch_ids"] == []
    [idle] = [json.loads(line) for line in (tmp_path / "idle" / "predictions.jsonl").read_text().splitlines()]
    assert idle["model_patch"] == "" and json.loads((tmp_path / "idle" / "report.json").read_text())["empty_patch_ids"] == [toy.INSTANCE_ID]

    capsys.readouterr()
    graded = ["grade", "-c", str(tmp_path / "fixed.json"), "--dataset", "toy", "--output", str(tmp_path / "grade"), "--run-id", "again"]
    assert main([*graded, "--predictions", str(tmp_path / "fixed" / "predictions.jsonl")]) == 0
    assert "resolved 1 / 1 submitted (0 unresolved, 0 empty, 0 errors" in capsys.readouterr().out
