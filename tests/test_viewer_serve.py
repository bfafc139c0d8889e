"""`uni-agent-gym view PATH --serve`: the index (built once, read again incrementally, beside the records), the
table's filters, sorting and pages and the charts' points as counts of the records themselves, and the app in
a real headless Chromium against a directory a real `UniAgentLoop` run wrote (the toy task in the local
sandbox, scored by `TokenServer`) plus synthetic records and a malformed file (screenshots kept under
tests/artifacts/ or $UAG_ARTIFACTS)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.browser import artifacts, browser, wait_for  # noqa: F401 (browser is a fixture)
from uni_agent_gym.viewer.index import Index
from uni_agent_gym.viewer.records import load

pytestmark = pytest.mark.slow  # the served app in a browser: not in make test-fast

EXITS = ["finished", "finished", "max_turns", "format_error", "env_error", "timeout", "aborted", "finished"]
MASKED_EXITS = ("env_error", "timeout", "aborted")


def synthetic(index: int, size: int | None = None) -> dict:
    """A token record: weight versions 0-3, every exit reason (the abnormal ones masked), two languages, a
    tool token marked sampled in every 9th (a mask flag), turns and lengths that vary."""
    exit_reason = EXITS[index % len(EXITS)]
    masked = exit_reason in MASKED_EXITS
    turns = 1 + index % 4
    size = size or turns * 6
    chunk = size // (2 * turns) or 1
    spans = [{"start": start, "end": min(start + chunk, size), "role": "assistant" if (start // chunk) % 2 == 0 else "tool"}
             for start in range(0, size, chunk)]  # fmt: skip
    mask = [0] * size if masked else [1 if span["role"] == "assistant" else 0 for span in spans for _ in range(span["start"], span["end"])]
    if index % 9 == 4 and not masked:
        mask[chunk] = 1  # a tool token trained on
    resolved = exit_reason == "finished" and index % 3 == 0
    version = index % 4
    return {"instance_id": f"repo__pkg-{index % 17}", "exit_reason": exit_reason, "masked": masked, "reward": float(resolved),
            "prompt_ids": [1, 2, 3], "response_ids": list(range(100, 100 + size)), "response_mask": mask,
            "response_logprobs": [-0.5 if bit else 0.0 for bit in mask], "spans": spans, "min_global_steps": max(0, version - (index // 4) % 2),
            "max_global_steps": version, "reward_report": {"resolved": resolved, "reward": float(resolved), "patch": ""},
            "language": ["python", "go"][index % 2], "seconds": float(index % 7)}  # fmt: skip


def write_synthetic(directory: Path, indexes: range) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for index in indexes:
        (directory / f"synthetic-{index:04d}.json").write_text(json.dumps(synthetic(index)))


@pytest.fixture(scope="module")
def loop_records(tmp_path_factory) -> Path:
    """The `rollout.trajectory_dir` a real UniAgentLoop run on the toy wrote (one record)."""
    from tests.test_verl_agent_loop import TOY_SAMPLE, make_loop, solve_toy
    from tests.token_server import TokenServer, tiny_model_dir

    scratch = tmp_path_factory.mktemp("uni-agent-loop")
    server = TokenServer(tiny_model_dir(scratch / "model"), solve_toy)

    async def play() -> None:
        loop = make_loop(scratch, server, gym={"rollout": {"trajectory_dir": str(scratch / "records")}})
        await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)

    asyncio.run(play())
    return scratch / "records"


@pytest.fixture()
def run_dir(tmp_path, loop_records) -> Path:
    """The real record, 70 synthetic ones and a malformed file."""
    run = tmp_path / "records"
    shutil.copytree(loop_records, run)
    write_synthetic(run, range(70))
    (run / "zz-half-written.json").write_text('{"instance_id": "x", "response_ids": [1, 2')
    return run


def nearest_rank(values: list, share: float):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


# ---- the index ----


def test_the_index_is_built_once_then_read_again_only_where_files_changed(tmp_path):
    run = tmp_path / "records"
    write_synthetic(run, range(20))
    index = Index(run)
    assert index.update() == 20 and index.database == tmp_path / ".records.uni-agent-gym-view.sqlite"  # beside the records
    assert Index(run).update() == 0  # a second start reads nothing
    write_synthetic(run, range(20, 23))
    (run / "synthetic-0000.json").unlink()
    (run / "synthetic-0001.json").write_text(json.dumps({**synthetic(1), "instance_id": "replaced"}))
    assert index.update() == 4  # three new, one replaced; the removed one is forgotten
    instances = [name for (name,) in index.query("SELECT instance FROM trajectories")]
    assert len(instances) == 22 and "replaced" in instances
    assert Index(run, checks_key="another tokenizer").update() == 22  # checks by another tokenizer: read again


def test_a_jsonl_file_is_read_from_its_last_complete_line(tmp_path):
    path = tmp_path / "chains.jsonl"
    lines = [json.dumps({**synthetic(index), "instance_id": f"line-{index}"}) for index in range(4)]
    path.write_text(lines[0] + "\n{not json\n" + lines[1] + "\n" + lines[2][:30])  # the last line still being written
    index = Index(path)
    index.update()
    first = index.query("SELECT id, instance, line FROM trajectories ORDER BY id")
    assert [row[1:] for row in first] == [("line-0", 1), ("line-1", 3)]
    assert [text for (text,) in index.query("SELECT text FROM problems")] == [f"{path}:2: not JSON (Expecting property name enclosed in double quotes at column 2); line skipped"]
    with open(path, "a") as handle:
        handle.write(lines[2][30:] + "\n" + lines[3] + "\n")
    index.update()
    rows = index.query("SELECT id, instance, line FROM trajectories ORDER BY id")
    assert rows[:2] == first and [row[1:] for row in rows[2:]] == [("line-2", 4), ("line-3", 5)]  # the first rows untouched
    assert index.record(rows[3][0]).instance_id == "line-3"


# ---- the API: counts of the records ----


def app_client(directory: Path):
    """The served app of `directory`, through FastAPI's test client, over an index made now (a generator to
    `yield from` in a fixture)."""
    from fastapi.testclient import TestClient

    from uni_agent_gym.viewer.server import make_app

    index = Index(directory)
    index.update()
    with TestClient(make_app(index, str(directory))) as client:
        yield client
    index.close()


@pytest.fixture()
def client(run_dir):
    yield from app_client(run_dir)


def rows_of(client, **query) -> dict:
    response = client.get("/api/rows", params=query)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_table_filters_sorts_and_pages_as_the_records_say(client, run_dir):
    records = load(run_dir)
    from uni_agent_gym.viewer.checks import check

    flagged = [record for record in records if check(record).flags]
    cases = [
        ({}, records),
        ({"exit_reason": "env_error"}, [r for r in records if r.exit_reason == "env_error"]),
        ({"masked": "yes"}, [r for r in records if r.masked]),
        ({"masked": "no"}, [r for r in records if r.masked is False]),
        ({"flags": "flagged"}, flagged),
        ({"flags": "mask"}, [r for r in flagged if any(flag.startswith("mask:") for flag in check(r).flags)]),
        ({"language": "go"}, [r for r in records if r.language == "go"]),
        ({"language": "(none)"}, [r for r in records if r.language is None]),
        ({"instance": "pkg-1"}, [r for r in records if "pkg-1" in r.instance_id]),
        ({"reward_min": "1"}, [r for r in records if (r.reward or 0) >= 1]),
        ({"v_from": "1", "v_to": "2"}, [r for r in records if 1 <= (r.weight_versions or {}).get("max_global_steps", -1) <= 2]),
        ({"v_from": "1", "v_to": "1", "v_of": "min_global_steps"}, [r for r in records if (r.weight_versions or {}).get("min_global_steps") == 1]),
        ({"exit_reason": "finished", "language": "python", "masked": "no"},
         [r for r in records if r.exit_reason == "finished" and r.language == "python" and r.masked is False]),
    ]  # fmt: skip
    for query, expected in cases:
        assert rows_of(client, **query)["total"] == len(expected) > 0, query
    assert len(flagged) == 5  # the unmasked synthetic ones with a tool token marked 1
    pages = [rows_of(client, sort="seconds", descending="true", offset=offset, limit=25)["rows"] for offset in (0, 25, 50)]
    shown = [row for page in pages for row in page]
    assert len(shown) == len(records) == 71 and len({row["id"] for row in shown}) == 71
    assert [row["seconds"] for row in shown] == sorted((r.seconds for r in records), reverse=True)
    assert rows_of(client, sort="turns")["rows"][0]["turns"] == min(r.turns for r in records)
    assert client.get("/api/rows", params={"sort": "nope"}).status_code == 400
    summary = client.get("/api/summary").json()
    assert summary["skipped"] == 1 and "zz-half-written.json: not JSON" in summary["problems"][0]


def test_the_charts_points_are_counts_of_the_records(client, run_dir):
    records = load(run_dir)
    charts = client.get("/api/charts", params={"by": "max_global_steps"}).json()
    by_version: dict[int, list] = {}
    for record in records:
        by_version.setdefault(record.weight_versions["max_global_steps"], []).append(record)
    assert [point["x"] for point in charts["points"]] == sorted(by_version) and charts["without_x"] == 0
    for point in charts["points"]:
        group = by_version[point["x"]]
        graded = [r for r in group if r.resolved is not None]
        assert (point["n"], point["graded"], point["resolved"]) == (len(group), len(graded), sum(bool(r.resolved) for r in graded))
        assert point["reward_mean"] == pytest.approx(sum(r.reward for r in group) / len(group))
        assert point["exits"] == dict(Counter(r.exit_reason for r in group))
        assert point["masked_by_cause"] == {"env_error": 0, "aborted": 0, "timeout": 0, **Counter(r.exit_reason for r in group if r.masked)}
        assert point["masked"] == sum(bool(r.masked) for r in group)
        assert (point["turns_p50"], point["turns_p90"]) == (nearest_rank([r.turns for r in group], 0.5), nearest_rank([r.turns for r in group], 0.9))
        lengths = [len(r.response_ids) for r in group]
        assert (point["response_tokens_p50"], point["response_tokens_p90"]) == (nearest_rank(lengths, 0.5), nearest_rank(lengths, 0.9))
    by_time = client.get("/api/charts", params={"by": "time"}).json()
    assert sum(point["n"] for point in by_time["points"]) == len(records)


def test_a_32k_token_record_comes_a_page_at_a_time(client, run_dir):
    big = synthetic(5, size=32768)
    (run_dir / "big.json").write_text(json.dumps(big))
    [(identifier,)] = [(row["id"],) for row in rows_of(client, sort="tokens", descending="true", limit=1)["rows"]]
    detail = client.get(f"/api/trajectories/{identifier}").json()
    assert detail["token_count"] == 32768 and "arrays" not in detail
    pages = [client.get(f"/api/trajectories/{identifier}/tokens", params={"offset": offset, "limit": 2000}).json() for offset in range(0, 32768, 2000)]
    assert [bit for page in pages for bit in page["mask"]] == big["response_mask"]
    assert [token for page in pages for token in page["ids"]] == big["response_ids"]
    assert client.get("/api/trajectories/999999").status_code == 404


# ---- the app in Chromium ----


@pytest.fixture()
def served(run_dir):
    """`uni-agent-gym view RUN --serve --port 0` in its own process: its URL; stopped by Ctrl-C (SIGINT)."""
    process = subprocess.Popen([sys.executable, "-m", "uni_agent_gym.cli", "view", str(run_dir), "--serve", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    try:
        lines: list[str] = []
        for _ in range(1000):  # indexing progress, then the URL
            line = process.stdout.readline()
            assert line, f"the server ended before it served: {''.join(lines)}"
            lines.append(line)
            if line.startswith("serving http://127.0.0.1:"):
                break
        yield lines[-1].split()[1]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()
        process.stdout.close()


def shown_total(browser) -> int:
    return int(browser.find_element("id", "shown").get_attribute("data-total"))


def test_the_served_run_in_chromium(browser, served, run_dir):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    records = load(run_dir)
    browser.get(served)
    wait_for(browser, "return window.__uagRendered && window.__uagChartsRendered")
    assert shown_total(browser) == len(records) == 71
    assert len(browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")) == 50
    assert [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#run-table th")][5] == "model turns"
    assert any("zz-half-written.json" in li.text for li in browser.find_elements(By.CSS_SELECTOR, "#problems li.skipped"))
    browser.save_screenshot(str(artifacts() / "viewer-serve-run.png"))

    browser.find_element(By.ID, "next").click()  # paging
    wait_for(browser, "return document.getElementById('shown').textContent.startsWith('51–71')")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")) == 21

    Select(browser.find_element(By.NAME, "exit_reason")).select_by_value("timeout")  # a filter
    expected = sum(r.exit_reason == "timeout" for r in records)
    wait_for(browser, f"return document.getElementById('shown').dataset.total === '{expected}'")
    assert {tr.find_element(By.CSS_SELECTOR, ".c-exit_reason").text for tr in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")} == {"timeout"}
    browser.find_element(By.ID, "clear").click()
    wait_for(browser, f"return document.getElementById('shown').dataset.total === '{len(records)}'")

    segments = browser.find_elements(By.CSS_SELECTOR, "#chart-exits rect.seg")  # the chart's points, counted from the records
    counted = Counter((r.weight_versions["max_global_steps"], r.exit_reason) for r in records)
    assert {(int(s.get_attribute("data-x")), s.get_attribute("data-key")): int(s.get_attribute("data-count")) for s in segments} == counted
    masked = {(int(s.get_attribute("data-x")), s.get_attribute("data-key")): int(s.get_attribute("data-count"))
              for s in browser.find_elements(By.CSS_SELECTOR, "#chart-masked rect.seg")}  # fmt: skip
    assert masked == Counter((r.weight_versions["max_global_steps"], r.exit_reason) for r in records if r.masked)
    resolved = {int(p.get_attribute("data-x")): int(p.get_attribute("data-count")) for p in browser.find_elements(By.CSS_SELECTOR, "#chart-resolved .pt")}
    assert resolved == {x: sum(bool(r.resolved) for r in records if r.weight_versions["max_global_steps"] == x) for x in resolved}
    [segment] = [s for s in segments if s.get_attribute("data-x") == "3" and s.get_attribute("data-key") == "finished"]
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", segment)  # click a point: its trajectories
    wait_for(browser, f"return document.getElementById('shown').dataset.total === '{counted[(3, 'finished')]}'")
    assert "v_from=3" in browser.current_url and "exit_reason=finished" in browser.current_url

    browser.get(served)  # a record lands while the page is open: there after a refresh
    wait_for(browser, "return window.__uagRendered")
    (run_dir / "late.json").write_text(json.dumps({**synthetic(3), "instance_id": "late-arrival"}))
    browser.refresh()
    wait_for(browser, "return window.__uagRendered")
    assert shown_total(browser) == len(records) + 1
    browser.find_element(By.NAME, "instance").send_keys("late-arrival")
    wait_for(browser, "return document.getElementById('shown').dataset.total === '1'")

    [real] = [r for r in records if r.kind == "tokens" and r.instance_id.startswith("uni-agent-gym__toy")]
    browser.get(served + "?instance=uni-agent-gym__toy")  # the UniAgentLoop trajectory
    wait_for(browser, "return document.getElementById('shown').dataset.total === '1'")
    browser.find_element(By.CSS_SELECTOR, "#run-table tbody tr").click()
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'")
    shown = browser.execute_script("return [...document.querySelectorAll('#tokens .tok')].map((t) => t.classList.contains('m1') ? 1 : 0)")
    assert shown == real.response_mask
    assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#flags li")] == ["no flags"]
    facts = dict(zip([dt.text for dt in browser.find_elements(By.CSS_SELECTOR, "#t-facts dt")], [dd.text for dd in browser.find_elements(By.CSS_SELECTOR, "#t-facts dd")]))
    assert facts["model turns"] == "7" and facts["resolved"] == "yes"  # verl's num_turns is 14: the task and tool messages too
    patch = browser.find_element(By.ID, "patch").text
    assert "diff --git a/stats.py b/stats.py" in patch and "return sum(values) / len(values)" in patch  # the toy's report carries its patch
    browser.save_screenshot(str(artifacts() / "viewer-serve-trajectory.png"))
    browser.execute_script("document.getElementById('tokens').scrollIntoView()")
    browser.save_screenshot(str(artifacts() / "viewer-serve-tokens.png"))
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_a_32k_token_trajectory_in_chromium(browser, served, run_dir):
    big = synthetic(2, size=32768)
    (run_dir / "big.json").write_text(json.dumps({**big, "instance_id": "big-one"}))
    browser.get(served + "?instance=big-one")
    wait_for(browser, "return document.getElementById('shown').dataset.total === '1'")
    browser.find_element("css selector", "#run-table tbody tr").click()
    # generous waits: Chromium shares two cores with the rest of the suite (the first paint once took over 10 s)
    wait_for(browser, "return window.__uagTokensFirstPaint", timeout=60)
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'", timeout=60)
    shown = browser.execute_script("return [...document.querySelectorAll('#tokens .tok')].map((t) => t.classList.contains('m1') ? '1' : '0').join('')")
    assert shown == "".join(map(str, big["response_mask"]))
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
