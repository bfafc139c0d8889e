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
from uni_agent_gym.envs import AsyncSWEEnv

PYTEST = "pytest-dev__pytest-7168"
FLASK = "pallets__flask-4992"


def scripts() -> dict[str, list[dict]]:
    gold = row(PYTEST)["patch"]
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
        assert report["per_language"] == {"python": {"instances": 2, "resolved": 1, "resolved_rate": 0.5}}
        assert report["exit_reasons"] == {"finished": 2} and report["turns"] == {PYTEST: 3, FLASK: 3}
        assert (output / "report.png").stat().st_size > 10_000 and "| pytest-dev/pytest | 1 | 1 | 100.0% |" in (output / "report.md").read_text()

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

            instance = await toy.toy_instance(env.config.env.cache_dir)
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
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
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
    record = await run._episode({"instance_id": "x__y-1"}, GymConfig(), model=None, reward=None)
    assert record["exit_reason"] == "env_error"
    assert record["error"] == "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception) [ConnectionResetError: the peer went away]"
    assert "Traceback" in caplog.text and "ConnectionResetError: the peer went away" in caplog.text
