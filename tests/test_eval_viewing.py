"""Looking at an eval run (issue 60): `view RUN` and `view RUN --serve` on a run a real `eval` wrote, one of
whose sandboxes failed (its `results/<id>.json` holds `null`), plus eval trajectories of ten repositories in
three languages; the pages in headless Chromium, and `report.png`'s figure. Faked: the model endpoint only."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.browser import artifacts, browser, wait_for  # noqa: F401 (browser is a fixture)
from tests.test_viewer import trajectory
from uni_agent_gym.cli import main
from uni_agent_gym.viewer.records import load

HEREDOC = "cat > /tmp/note.txt <<'EOF'\nsay \"hi\" to\t$USER\nEOF\ncat /tmp/note.txt"
REPOS = ["astropy/astropy", "django/django", "matplotlib/matplotlib", "mwaskom/seaborn", "pallets/flask", "psf/requests",
         "pydata/xarray", "pylint-dev/pylint", "scikit-learn/scikit-learn", "sphinx-doc/sphinx"]  # fmt: skip
LANGUAGES = ["python", "go", "java"]
FAILED, SOLVED = "uni-agent-gym__toy-1", "uni-agent-gym__toy-2"


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory) -> Path:
    """A real `eval` of the toy whose local workdir is blocked (env_error, `results/` null), then, unblocked,
    of a second copy that a heredoc command and a fix solve (`--no-retry-errors` keeps the failure); and one
    eval trajectory (with its report) of each of REPOS, their languages in turn."""
    from tests.blocked_toy import blocked_toy
    from tests.scripted_endpoint import ScriptedEndpoint

    scratch = tmp_path_factory.mktemp("eval-run")
    blocked, run = blocked_toy(scratch), scratch / "run"
    heredoc = {"tool_call": {"name": "execute_bash", "arguments": {"command": HEREDOC}}}
    fix = {"tool_call": {"name": "str_replace_editor", "arguments": {
        "command": "str_replace", "path": f"{blocked.workdir.resolve()}/stats.py", "old_str": "(len(values) - 1)", "new_str": "len(values)"}}}  # fmt: skip
    with ScriptedEndpoint({"stats.mean": [heredoc, fix, {"tool_call": {"name": "finish", "arguments": {}}}]}) as endpoint:
        settings = scratch / "settings.json"
        settings.write_text(json.dumps(blocked.settings(model={"base_url": endpoint.base_url})))
        command = ["eval", "-c", str(settings), "--dataset", str(blocked.dataset), "--output", str(run)]
        assert main(command) == 1  # nothing graded: the one sandbox failed
        blocked.stray.unlink()
        row = json.loads(blocked.dataset.read_text())
        blocked.dataset.write_text(json.dumps(row) + "\n" + json.dumps({**row, "instance_id": SOLVED}) + "\n")
        assert main([*command, "--no-retry-errors"]) == 0
    assert json.loads((run / "results" / f"{FAILED}.json").read_text()) is None
    for index, (repo, language) in enumerate(zip(REPOS, itertools.cycle(LANGUAGES))):
        instance_id = f"{repo.replace('/', '__')}-{index + 1}"
        data = {**trajectory(instance_id, resolved=index % 3 == 0), "repo": repo, "language": language}
        (run / "trajectories" / f"{instance_id}.json").write_text(json.dumps(data))
        (run / "results" / f"{instance_id}.json").write_text(json.dumps(data["reward_report"]))
    return run


def grouped(records, key: str) -> dict:
    """(trajectories, resolved, failed) per repository or language, counted from the records."""
    found: dict = {}
    for record in records:
        n, resolved, failed = found.get(getattr(record, key), (0, 0, 0))
        found[getattr(record, key)] = (n + 1, resolved + bool(record.resolved), failed + bool(record.error))
    return found


# ---- what eval records ----


def test_eval_records_each_trajectorys_language_and_repository(eval_run):
    """The served language filter offered only "(none)" on an eval run: its trajectories carried no language."""
    for name in (FAILED, SOLVED):
        data = json.loads((eval_run / "trajectories" / f"{name}.json").read_text())
        assert (data["language"], data["repo"]) == ("python", "uni-agent-gym/toy"), name
    records = {record.instance_id: record for record in load(eval_run)}
    assert (records[FAILED].language, records[FAILED].repo) == ("python", "uni-agent-gym/toy")


def test_an_episode_with_no_verdict_is_not_graded_in_the_viewer_as_in_evals_report(eval_run):
    """The viewer counted a sandbox failure as graded and unresolved, so its rate was not report.md's."""
    records = {record.instance_id: record for record in load(eval_run)}
    assert (records[FAILED].resolved, records[SOLVED].resolved) == (None, True)
    report = json.loads((eval_run / "report.json").read_text())
    assert FAILED in report["ungraded"] and SOLVED not in report["ungraded"]


# ---- the single page ----


@pytest.fixture(scope="module")
def page(eval_run) -> Path:
    assert main(["view", str(eval_run)]) == 0  # it raised AttributeError on the `null` of the failed episode
    return eval_run / "view.html"


def open_page(browser, page: Path) -> None:
    browser.get(page.as_uri())
    wait_for(browser, "return window.__uagRendered")


def test_the_page_of_a_run_with_a_sandbox_failure_marks_the_failed_episode_in_chromium(browser, page, eval_run):
    from selenium.webdriver.common.by import By

    failed = json.loads((eval_run / "trajectories" / f"{FAILED}.json").read_text())
    open_page(browser, page)
    rows = {tr.find_element(By.CSS_SELECTOR, ".c-instance").text: tr for tr in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")}
    assert len(rows) == len(REPOS) + 2
    marked = [name for name, tr in rows.items() if "failed" in tr.get_attribute("class").split()]
    assert marked == [FAILED]
    cell = rows[FAILED].find_element(By.CSS_SELECTOR, ".c-error")
    assert cell.get_attribute("title") == failed["error"] and cell.text.startswith("WorkspaceError: The local workdir")
    assert rows[FAILED].find_element(By.CSS_SELECTOR, ".c-exit_reason").text == "env_error"
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", rows[FAILED])
    browser.save_screenshot(str(artifacts() / "viewer-eval-failed-run.png"))
    rows[FAILED].click()
    wait_for(browser, "return !document.getElementById('t-error').hidden")
    assert browser.find_element(By.ID, "t-error").text == f"env_error: {failed['error']}"
    assert browser.find_element(By.ID, "report").text == "no reward report"
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_the_page_summarises_the_run_by_repository_and_by_language_in_chromium(browser, page, eval_run):
    from selenium.webdriver.common.by import By

    records = load(eval_run)
    open_page(browser, page)
    for key in ("repo", "language"):
        shown = {tr.get_attribute("data-value"): tuple(int(tr.find_element(By.CSS_SELECTOR, f"td.{name}").text) for name in ("n", "resolved", "failed"))
                 for tr in browser.find_elements(By.CSS_SELECTOR, f"#summary-{key} tr[data-value]")}  # fmt: skip
        assert shown == grouped(records, key), key
    [go] = browser.find_elements(By.CSS_SELECTOR, "#summary-language tr[data-value='go']")
    go.click()  # its trajectories, and only those
    listed = [tr.find_element(By.CSS_SELECTOR, ".c-instance").text for tr in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")]
    assert sorted(listed) == sorted(r.instance_id for r in records if r.language == "go") and len(listed) == 3
    browser.save_screenshot(str(artifacts() / "viewer-eval-summaries.png"))
    browser.find_element(By.CSS_SELECTOR, "#group-chip .chip").click()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")) == len(records)


def test_tool_call_arguments_are_shown_decoded_in_chromium(browser, page, eval_run):
    """The API sends a call's arguments as a JSON string: shown as such, a heredoc was JSON inside JSON."""
    from selenium.webdriver.common.by import By

    open_page(browser, page)
    index = [record.instance_id for record in load(eval_run)].index(SOLVED)
    browser.execute_script(f"location.hash = '#t={index}'")
    wait_for(browser, "return document.querySelectorAll('#steps .step').length > 0")
    first = browser.find_elements(By.CSS_SELECTOR, "#steps .step")[0]
    assert first.find_element(By.CSS_SELECTOR, ".call .tool-name").text == "execute_bash"
    command = first.find_element(By.CSS_SELECTOR, ".call .arg[data-key=command] pre.code")
    assert command.get_attribute("textContent") == HEREDOC
    edit = browser.find_elements(By.CSS_SELECTOR, "#steps .step")[1]
    assert {arg.get_attribute("data-key"): arg.find_element(By.TAG_NAME, "pre").get_attribute("textContent")
            for arg in edit.find_elements(By.CSS_SELECTOR, ".call .arg")}["old_str"] == "(len(values) - 1)"  # fmt: skip
    browser.execute_script("arguments[0].scrollIntoView()", first)
    browser.save_screenshot(str(artifacts() / "viewer-eval-tool-call.png"))
    assert "\\n" not in first.text and '\\"' not in first.text


# ---- --serve ----


def test_the_index_of_a_run_lives_inside_it(eval_run, tmp_path):
    """It was written beside the run (`runs/.NAME.uni-agent-gym-view.sqlite`), so it did not go where the run went."""
    import shutil

    from uni_agent_gym.viewer.index import Index

    run = tmp_path / "run"
    shutil.copytree(eval_run, run, ignore=shutil.ignore_patterns(".uni-agent-gym-view"))
    index = Index(run)
    index.update()
    index.close()
    assert index.database.parent.parent == run and [path.name for path in tmp_path.iterdir()] == ["run"]
    again = Index(run)
    assert again._current_stamp() == again._stamp, "a second start lists nothing: the index's own files do not stir the run directory"
    assert again.update() == 0 and again.query("SELECT COUNT(*) FROM trajectories") == [(len(REPOS) + 2,)]
    again.close()
    records = tmp_path / "records"  # a training loop's record directory keeps its index beside it
    records.mkdir()
    (records / "one.json").write_text((eval_run / "trajectories" / f"{SOLVED}.json").read_text())
    assert Index(records).database == tmp_path / ".records.uni-agent-gym-view.sqlite"


@pytest.fixture()
def client(eval_run):
    from tests.test_viewer_serve import app_client

    yield from app_client(eval_run)


def test_the_served_charts_go_by_repository_and_by_language(client, eval_run):
    """By record time, an eval run's episodes fall in a few 2-second buckets that mean nothing."""
    records = load(eval_run)
    for key in ("repo", "language"):
        charts = client.get("/api/charts", params={"by": key}).json()
        counted = grouped(records, key)
        assert {point["x"]: (point["n"], point["resolved"]) for point in charts["points"]} == {x: (n, resolved) for x, (n, resolved, _) in counted.items()}
        assert [point["x"] for point in charts["points"]] == sorted(counted) and charts["without_x"] == 0
        for point in charts["points"]:
            assert point["exits"] == dict(Counter(r.exit_reason for r in records if getattr(r, key) == point["x"]))
    assert client.get("/api/rows", params={"repo": "uni-agent-gym/toy"}).json()["total"] == 2
    [failed] = client.get("/api/rows", params={"exit_reason": "env_error"}).json()["rows"]
    assert failed["instance"] == FAILED and failed["error"].startswith("WorkspaceError:")
    assert set(client.get("/api/summary").json()["choices"]["language"]) == set(LANGUAGES)


@pytest.fixture()
def served(eval_run):
    """`uni-agent-gym view RUN --serve --port 0` in its own process: its URL; stopped by Ctrl-C."""
    process = subprocess.Popen([sys.executable, "-m", "uni_agent_gym.cli", "view", str(eval_run), "--serve", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    try:
        lines: list[str] = []
        while not lines or not lines[-1].startswith("serving http://127.0.0.1:"):
            line = process.stdout.readline()
            assert line, f"the server ended before it served: {''.join(lines)}"
            lines.append(line)
        yield lines[-1].split()[1]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()
        process.stdout.close()


def overlaps(boxes: list[dict]) -> list[tuple[int, int]]:
    return [(i, j) for i, a in enumerate(boxes) for j, b in enumerate(boxes[i + 1 :], i + 1)
            if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]]  # fmt: skip


@pytest.mark.slow  # a server process and a browser
def test_the_served_run_with_a_sandbox_failure_in_chromium(browser, served, eval_run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    records = load(eval_run)
    failed = json.loads((eval_run / "trajectories" / f"{FAILED}.json").read_text())
    browser.get(served)
    wait_for(browser, "return window.__uagRendered && window.__uagChartsRendered")
    assert int(browser.find_element(By.ID, "shown").get_attribute("data-total")) == len(records)
    [tr] = browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr.failed")
    assert tr.find_element(By.CSS_SELECTOR, ".c-instance").text == FAILED and tr.find_element(By.CSS_SELECTOR, ".c-error").get_attribute("title") == failed["error"]

    assert browser.find_element(By.ID, "by").get_attribute("value") == "repo"  # no weight versions: by repository
    points = browser.find_elements(By.CSS_SELECTOR, "#chart-resolved .pt")
    assert sorted(point.get_attribute("data-x") for point in points) == sorted(grouped(records, "repo"))
    names = browser.execute_script("return [...document.querySelectorAll('#chart-resolved text.name')].map((t) => t.getBoundingClientRect().toJSON())")
    assert len(names) == len(REPOS) + 1 and overlaps(names) == []
    browser.save_screenshot(str(artifacts() / "viewer-eval-serve-run.png"))
    [toy] = [segment for segment in browser.find_elements(By.CSS_SELECTOR, "#chart-exits rect.seg")
             if segment.get_attribute("data-x") == "uni-agent-gym/toy" and segment.get_attribute("data-key") == "env_error"]  # fmt: skip
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", toy)
    wait_for(browser, "return document.getElementById('shown').dataset.total === '1'")
    assert "repo=uni-agent-gym%2Ftoy" in browser.current_url and "exit_reason=env_error" in browser.current_url

    browser.get(served)
    wait_for(browser, "return window.__uagRendered && window.__uagChartsRendered")
    language = Select(browser.find_element(By.NAME, "language"))
    assert sorted(option.get_attribute("value") for option in language.options if option.get_attribute("value")) == sorted(LANGUAGES)
    Select(browser.find_element(By.ID, "by")).select_by_value("language")
    wait_for(browser, "return document.querySelectorAll('#chart-resolved .pt').length === 3")
    language.select_by_value("go")
    wait_for(browser, f"return document.getElementById('shown').dataset.total === '{sum(r.language == 'go' for r in records)}'")

    browser.get(served + "?exit_reason=env_error")
    wait_for(browser, "return document.getElementById('shown').dataset.total === '1'")
    browser.find_element(By.CSS_SELECTOR, "#run-table tbody tr").click()
    wait_for(browser, "return !document.getElementById('t-error').hidden")
    assert browser.find_element(By.ID, "t-error").text == f"env_error: {failed['error']}"
    browser.save_screenshot(str(artifacts() / "viewer-eval-serve-failed.png"))
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


# ---- report.png ----


def drawn_ticks(axes) -> list:
    """The tick labels matplotlib draws: those inside the axes' limits (it keeps others it does not draw)."""
    (left, right), (bottom, top) = sorted(axes.get_xlim()), sorted(axes.get_ylim())
    return [*(label for label in axes.get_xticklabels() if left <= label.get_position()[0] <= right),
            *(label for label in axes.get_yticklabels() if bottom <= label.get_position()[1] <= top)]


def test_report_png_names_every_repository_apart_and_charts_languages():
    """At ten repositories the slanted names under the resolved-rate bars ran into each other."""
    from uni_agent_gym.eval.report import build_report, chart_figure

    repos = [*REPOS, "sympy/sympy", "pytest-dev/pytest"]
    trajectories = [{"instance_id": f"i{i}", "resolved": i % 3 == 0, "exit_reason": "finished", "turns": i % 17, "seconds": 1.0,
                     "usage": {"prompt_tokens": 1000 * i, "completion_tokens": 10, "cost": 0.0}, "reward_report": {"caused_by": None}}
                    for i in range(48)]  # fmt: skip
    report = build_report(trajectories, {t["instance_id"]: repos[i % 12] for i, t in enumerate(trajectories)}, 0,
                          {t["instance_id"]: LANGUAGES[i % 3] for i, t in enumerate(trajectories)})  # fmt: skip
    figure = chart_figure(report)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    texts = [label for axes in figure.axes for label in (*drawn_ticks(axes), axes.title) if label.get_text()]
    boxes = [label.get_window_extent(renderer) for label in texts]
    together = [(texts[i].get_text(), texts[j].get_text()) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]
    assert together == []
    shown = {label.get_text() for axes in figure.axes for label in (*axes.get_xticklabels(), *axes.get_yticklabels())}
    assert set(repos) <= shown and set(LANGUAGES) <= shown  # every repository named, and a chart by language
    assert any("language" in axes.get_title() for axes in figure.axes)
