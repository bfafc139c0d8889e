"""`uni-agent-gym view`: every input kind read into one schema, the loss-ruining flags found, bad input
told in one line, and the HTML page checked in a real headless Chromium (screenshots kept under
tests/artifacts/ or $UAG_ARTIFACTS)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.browser import artifacts, browser, wait_for  # noqa: F401 (browser is a fixture)
from tests.test_probe import family_tokenizer  # a family's template on the Qwen2.5 tokenizer, with its special tokens
from uni_agent_gym.cli import main
from uni_agent_gym.viewer.checks import PLACEHOLDER_LOGPROBS, check
from uni_agent_gym.viewer.html import embedded, page
from uni_agent_gym.viewer.records import Trajectory, ViewerInputError, add_token_texts, load, load_tokenizer

TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"


def trajectory(instance_id: str, resolved: bool = True, turns: int = 2) -> dict:
    """An eval trajectory as `agent/react.py` `run_episode` returns it (a format error on the first step)."""
    report = {
        "instance_id": instance_id, "status": "resolved" if resolved else "unresolved", "reward": float(resolved), "resolved": resolved,
        "tests": {"FAIL_TO_PASS": {"success": ["tests/test_a.py::test_fix"] if resolved else [], "failure": [] if resolved else ["tests/test_a.py::test_fix"]},
                  "PASS_TO_PASS": {"success": ["tests/test_a.py::test_old"], "failure": []}},
        "test_statuses": {"tests/test_a.py::test_fix": "PASSED" if resolved else "FAILED", "tests/test_a.py::test_old": "PASSED"},
        "integrity_problems": [], "patch": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
        "restored": {"conftest.py": "a runner file"}, "caused_by": None, "runner_rerun": None, "durations": {"tests": 1.5}, "log": "ok </script>",
    }  # fmt: skip
    steps = [{"turn": turn + 1, "action": {"name": "execute_bash", "arguments": {"command": "ls"}}, "tool": "execute_bash",
              "error": "format_error" if turn == 0 else None, "exit_code": None if turn == 0 else 0, "observation": f"out {turn} </script><b>",
              "prompt_tokens": 100, "completion_tokens": 10, "model_latency": 0.5, "retries": 0, "timings": {}} for turn in range(turns)]  # fmt: skip
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "fix it"}]
    for turn in range(turns):
        messages += [{"role": "assistant", "content": f"I look, turn {turn + 1}"}, {"role": "user", "content": f"out {turn}"}]
    return {"instance_id": instance_id, "model_name_or_path": "m", "exit_reason": "finished", "reward": float(resolved), "resolved": resolved,
            "patch": report["patch"], "turns": turns, "usage": {"prompt_tokens": 200, "completion_tokens": 20, "cost": 0.0},
            "seconds": 3.5, "messages": messages, "steps": steps, "reward_report": report}  # fmt: skip


def eval_dir(tmp_path: Path, count: int = 3) -> Path:
    run = tmp_path / "run"
    (run / "trajectories").mkdir(parents=True)
    (run / "results").mkdir()
    for index in range(count):
        data = trajectory(f"repo__pkg-{index}", resolved=index % 2 == 0, turns=index + 1)
        (run / "trajectories" / f"repo__pkg-{index}.json").write_text(json.dumps(data))
        (run / "results" / f"repo__pkg-{index}.json").write_text(json.dumps(data["reward_report"]))
    error = {"instance_id": "repo__pkg-err", "model_name_or_path": "m", "exit_reason": "env_error", "error": "SandboxDiedError: gone",
             "reward": 0.0, "resolved": False, "patch": "", "turns": 0, "usage": {}, "seconds": 1.0, "messages": [], "steps": [], "reward_report": None}  # fmt: skip
    (run / "trajectories" / "repo__pkg-err.json").write_text(json.dumps(error))
    (run / "results" / "repo__pkg-err.json").write_text("null")  # what eval writes for an episode that was never graded
    return run


def token_record(**changes) -> dict:
    """A token record: two sampled turns with a tool message between (spans say which is which)."""
    record = {
        "instance_id": "tok-1", "prompt_ids": [1, 2, 3], "response_ids": [10, 11, 12, 13, 14, 15, 16],
        "response_mask": [1, 1, 0, 0, 0, 1, 1], "response_logprobs": [-0.1, -2.0, 0.0, 0.0, 0.0, -0.5, -0.01],
        "tokens": ["I", " run", "<tool>", "out", "</tool>", "done", "."], "exit_reason": "finished", "masked": False,
        "spans": [{"start": 0, "end": 2, "role": "assistant"}, {"start": 2, "end": 5, "role": "tool"}, {"start": 5, "end": 7, "role": "assistant"}],
        "min_global_steps": 3, "max_global_steps": 4,
    }  # fmt: skip
    return {**record, **changes}


def load_one(data: dict, tmp_path: Path) -> Trajectory:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    [record] = load(path)
    return record


# ---- records and checks ----


def test_an_eval_directory_is_read_with_its_error_trajectory(tmp_path):
    records = load(eval_dir(tmp_path))
    assert [r.instance_id for r in records] == ["repo__pkg-0", "repo__pkg-1", "repo__pkg-2", "repo__pkg-err"]
    assert records[1].resolved is False and records[1].reward_report["tests"]["FAIL_TO_PASS"]["failure"] == ["tests/test_a.py::test_fix"]
    assert records[3].exit_reason == "env_error" and records[3].error.startswith("SandboxDiedError")
    assert records[0].token_count == 220 and records[0].kind == "eval"


def test_a_clean_token_record_has_no_flags_and_counts_by_mask(tmp_path):
    found = check(load_one(token_record(), tmp_path))
    assert found.flags == [] and found.counts == {1: 4, 0: 3}


def test_a_tool_token_marked_sampled_is_flagged(tmp_path):
    found = check(load_one(token_record(response_mask=[1, 1, 0, 1, 0, 1, 1], response_logprobs=[-0.1, -2.0, 0.0, -0.3, 0.0, -0.5, -0.01]), tmp_path))
    assert len(found.flags) == 1 and found.flags[0].startswith("mask: 1 token(s) of a tool span") and found.bad == [3]


def test_length_mismatches_are_flagged(tmp_path):
    found = check(load_one(token_record(response_mask=[1, 1, 0], response_logprobs=[-0.1]), tmp_path))
    assert "length: response_mask has 3 entries for 7 response ids" in found.flags
    assert "length: response_logprobs has 1 entries for 7 response ids" in found.flags


def test_a_zero_logprob_on_a_sampled_token_is_flagged(tmp_path):
    found = check(load_one(token_record(response_logprobs=[-0.1, 0.0, 0.0, 0.0, 0.0, -0.5, -0.01]), tmp_path))
    assert found.flags == ["logprob: 1 sampled token(s) (mask 1) have logprob exactly 0.0, the placeholder of a mask-0 token (first at 1)"]
    assert found.bad == [1]


def gateway_jsonl(tmp_path: Path) -> tuple[Path, dict]:
    """A gateway JSONL of two chains rendered by Qwen2.5's chat template, every response token marked 1 (the
    tool message too: wrong on purpose), with a malformed line between them; (the file, the first chain)."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(TOKENIZERS / "qwen2.5-instruct"), local_files_only=True)
    messages = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "ls"},
                {"role": "tool", "content": "a.py"}, {"role": "assistant", "content": "done"}]  # fmt: skip
    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    prompt = ids(tokenizer.apply_chat_template(messages[:1], add_generation_prompt=True, tokenize=False))
    full = ids(tokenizer.apply_chat_template(messages, tokenize=False))
    assert full[: len(prompt)] == prompt
    response = full[len(prompt) :]
    assert "<tool_response>" in tokenizer.decode(response)
    mask = [1] * len(response)  # wrong on purpose: everything marked sampled, tool message included
    chain = {"session_id": "s1", "chain": 0, "finish_reason": "stop", "num_turns": 2, "prompt_ids": prompt, "response_ids": response,
             "response_mask": mask, "response_logprobs": [-0.5] * len(response), "min_global_steps": 1, "max_global_steps": 1,
             "messages": messages, "tools": []}  # fmt: skip
    path = tmp_path / "chains.jsonl"
    path.write_text(json.dumps(chain) + "\n{not json\n" + json.dumps({**chain, "chain": 1}) + "\n")
    return path, chain


def test_a_gateway_jsonl_with_a_real_tokenizer_finds_the_tool_span(tmp_path):
    """The spans come from the decoded headers, and the tool message marked 1 is caught; the malformed line
    is skipped and reported."""
    path, _ = gateway_jsonl(tmp_path)
    problems: list[str] = []
    records = load(path, problems)
    assert [r.instance_id for r in records] == ["s1#0", "s1#1"] and records[0].kind == "gateway"
    assert len(problems) == 1 and problems[0].startswith(f"{path}:2: not JSON")
    assert check(records[0]).flags == []  # ids only: no spans to check against
    add_token_texts(records, TOKENIZERS / "qwen2.5-instruct")
    flags = check(records[0]).flags
    assert any(flag.startswith("mask:") and "user span" in flag for flag in flags), flags  # Qwen2.5 renders a tool message as a user turn
    tokenizer = load_tokenizer(TOKENIZERS / "qwen2.5-instruct")  # the template itself: the glue and the tool message, by role
    flags = check(records[0], tokenizer).flags
    assert [flag.split(" (")[0] for flag in flags] == ["mask: 1 token(s) of a glue span", "mask: 19 token(s) of a tool span", "mask: 1 token(s) of a glue span"], flags


# ---- the mask check on any template family (issue 38 item 4) ----

def family_record(directory: Path) -> dict:
    """A token record as the rollout cache writes it under that template: a sampled turn, a tool message, a
    sampled turn; no `spans` and no token texts (what a gateway chain or another harness leaves)."""
    from uni_agent_gym.tokens.boundary import stop_before
    from uni_agent_gym.tokens.rollout_cache import RolloutCache

    tokenizer = load_tokenizer(directory)
    cache = RolloutCache(tokenizer, max_model_len=4096, max_prompt_length=2048, max_response_length=2048)
    messages = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix the failing test."}]
    cache.prepare(messages)
    tool = {"role": "tool", "content": "stats.py\ntest_stats.py\n", "tool_call_id": "call00001"}
    for said, following in (("I will list the files first.", tool), ("The test passes now.", None)):
        stop = stop_before(tokenizer, cache.boundary, following) if following else [tokenizer.eos_token_id]  # GLM: the next header
        ids = tokenizer.encode(said, add_special_tokens=False) + list(stop)
        cache.append_model_tokens(ids, [-0.25] * len(ids))
        messages.append({"role": "assistant", "content": said})
        if following:
            cache.append_messages([following])
            messages.append(following)
    return {"instance_id": "family-1", "prompt_ids": cache.initial_prompt_ids, "response_ids": cache.response_ids,
            "response_mask": cache.response_mask, "response_logprobs": cache.response_logprobs, "messages": messages, "exit_reason": "finished"}  # fmt: skip


def page_check(tmp_path: Path, record: dict, *tokenizer: str) -> dict:
    """The check the page shows for `record` (`view FILE [--tokenizer DIR]`), read from the written page."""
    import re

    path = tmp_path / "family.json"
    path.write_text(json.dumps(record))
    assert main(["view", str(path), *(["--tokenizer", *tokenizer] if tokenizer else [])]) == 0
    html = (tmp_path / "family.view.html").read_text()
    return json.loads(re.search(r'<script type="application/json" id="t-0">(.*?)</script>', html).group(1))["check"]


@pytest.mark.slow  # each template walked through the boundary probe
@pytest.mark.parametrize("template", ["deepseek-v3", "deepseek-v3.1", "mistral-v0.3", "mistral-small-3.2", "glm-4.5"])
def test_the_mask_check_reads_message_spans_from_any_template_through_the_tokenizer(tmp_path, template):
    """A record without spans from a family whose headers the viewer cannot read: with --tokenizer its tool
    message marked sampled is flagged (and a right mask is not); without one the page says it was not checked."""
    directory = family_tokenizer(tmp_path, template)
    record = family_record(directory)
    assert check(load_one(record, tmp_path), load_tokenizer(directory)).flags == []
    tool = [i for i, bit in enumerate(record["response_mask"]) if bit == 0]
    wrong = {**record, "response_mask": [1] * len(record["response_ids"]), "response_logprobs": [-0.25] * len(record["response_ids"])}  # the tool message trained on
    shown = page_check(tmp_path, wrong, str(directory))
    assert [flag.split(" (")[0] for flag in shown["flags"]] == [f"mask: {len(tool)} token(s) of a tool span"], shown
    assert shown.get("unchecked") is None
    unchecked = page_check(tmp_path, wrong)["unchecked"]
    assert "give --tokenizer DIR" in unchecked


def test_a_record_the_template_does_not_explain_is_said_unchecked(tmp_path):
    directory = family_tokenizer(tmp_path, "mistral-small-3.2")
    record = family_record(directory)
    record["messages"][3]["content"] = "another output"  # not what the tokens hold
    found = check(load_one(record, tmp_path), load_tokenizer(directory))
    assert found.flags == [] and found.unchecked.startswith("the chat template of --tokenizer does not explain this record's tokens: response position")


# ---- one meaning of turns, patches not recorded, placeholder logprobs, grade output (issue 43 item 5) ----


def test_turns_are_the_models_turns_for_every_kind_of_record(tmp_path):
    """verl's num_turns (what a token record's `turns` holds) counts the task and the tool messages too; the
    viewer's `turns` is the model's turns for a token record as for an eval run's steps."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"},
                {"role": "tool", "content": "t"}, {"role": "assistant", "content": "b"}]  # fmt: skip
    assert load_one(token_record(turns=4, messages=messages), tmp_path).turns == 2  # its two assistant spans
    assert load_one({**token_record(turns=4, messages=messages), "spans": None}, tmp_path).turns == 2  # its two assistant messages
    assert load_one(trajectory("e-1", turns=2), tmp_path).turns == 2  # two steps


def test_a_zero_logprob_on_every_sampled_token_is_a_placeholder_not_a_flag(tmp_path):
    """probe's scripted tokens come without logprobs: the cache writes 0.0 on every token, which says nothing
    was recorded rather than that one was lost."""
    found = check(load_one(token_record(response_logprobs=[0.0] * 7), tmp_path))
    assert found.flags == [] and found.bad == [] and found.notes == [PLACEHOLDER_LOGPROBS]


def test_a_grade_output_directory_is_read_as_its_reports(tmp_path, capsys):
    grade = tmp_path / "grade"
    (grade / "check").mkdir(parents=True)
    (grade / "scripted__model.check.json").write_text(json.dumps({"submitted_instances": 2, "resolved_instances": 1}))
    for index, resolved in enumerate([True, False]):
        report = trajectory(f"repo__pkg-{index}", resolved=resolved)["reward_report"]
        (grade / "check" / f"repo__pkg-{index}.json").write_text(json.dumps(report))
    records = load(grade)
    assert [(r.kind, r.instance_id, r.resolved, bool(r.patch)) for r in records] == [("report", "repo__pkg-0", True, True), ("report", "repo__pkg-1", False, True)]
    assert main(["view", str(grade)]) == 0 and "2 trajectories" in capsys.readouterr().out
    (grade / "check" / "repo__pkg-0.json").unlink()
    (grade / "check" / "repo__pkg-1.json").unlink()
    assert main(["view", str(grade)]) == 1
    assert "malformed" not in capsys.readouterr().out


def test_a_page_past_the_size_limit_says_to_serve_instead(tmp_path, capsys):
    run = tmp_path / "records"
    run.mkdir()
    for index in range(3):
        (run / f"r{index}.json").write_text(json.dumps(token_record(instance_id=f"r{index}", padding="x" * 400_000)))
    assert main(["view", str(run), "--max-page-mb", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("error:") and f"uni-agent-gym view {run} --serve" in out and not (run / "view.html").exists()
    assert main(["view", str(run), "--max-page-mb", "2"]) == 0


@pytest.mark.parametrize(
    "content, expected",
    [
        ("{oops", "not JSON (Expecting property name enclosed in double quotes at line 1, column 2)"),
        ("[1, 2]", "[0]: expects a JSON object (a trajectory), got int"),
        ('{"hello": 1}', "not a trajectory (expects instance_id with steps/messages, or response_ids; keys: hello)"),
        ('{"response_ids": 5}', "response_ids must be a list, got int"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ViewerInputError, match=None) as raised:
        load(path)
    assert str(raised.value).startswith(str(path)) and expected in str(raised.value)
    assert main(["view", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error:" in out and "bad.json" in out and "Traceback" not in out


def test_an_empty_directory_and_a_missing_path_are_errors(tmp_path):
    with pytest.raises(ViewerInputError, match="no trajectories/\\*.json"):
        load(tmp_path)
    with pytest.raises(ViewerInputError, match="does not exist"):
        load(tmp_path / "nothing.json")


def test_script_tags_in_data_cannot_break_out(tmp_path):
    html = page(load(eval_dir(tmp_path)), "</script><script>alert(1)</script>")
    assert "</script><script>alert(1)" not in html
    assert json.loads(embedded({"a": "</script>"})) == {"a": "</script>"}


def test_the_command_writes_the_page_beside_the_input(tmp_path, capsys):
    run = eval_dir(tmp_path)
    assert main(["view", str(run)]) == 0
    assert (run / "view.html").is_file() and str(run / "view.html") in capsys.readouterr().out
    record = tmp_path / "one.json"
    record.write_text(json.dumps(token_record()))
    assert main(["view", str(record)]) == 0 and (tmp_path / "one.view.html").is_file()


# ---- the page in a real browser ----


def test_the_page_in_chromium(browser, tmp_path):
    from selenium.webdriver.common.by import By

    run = eval_dir(tmp_path, count=6)
    wrong = token_record(instance_id="tok-wrong", response_mask=[1, 1, 0, 1, 0, 1, 1], response_logprobs=[-0.1, -2.0, 0.0, -0.3, 0.0, -0.5, 0.0])
    wrong["reward_report"] = trajectory("tok-wrong", resolved=False)["reward_report"]
    (run / "trajectories" / "tok-wrong.json").write_text(json.dumps(wrong))
    toy = token_record(instance_id="tok-toy", reward=1.0, patch="", reward_report={"resolved": True, "reward": 1.0, "command": "pytest", "exit_code": 0})
    (run / "trajectories" / "tok-toy.json").write_text(json.dumps(toy))
    assert main(["view", str(run)]) == 0
    records = load(run)
    browser.get((run / "view.html").as_uri())
    wait_for(browser, "return window.__uagRendered")
    rows = browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")
    assert len(rows) == len(records) == 9
    browser.save_screenshot(str(artifacts() / "viewer-run.png"))

    browser.find_element(By.ID, "filter").send_keys("pkg-1")
    assert [row.find_element(By.CSS_SELECTOR, ".c-instance").text for row in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")] == ["repo__pkg-1"]
    browser.find_element(By.ID, "filter").clear()
    browser.find_element(By.ID, "filter").send_keys("tok-w")
    [row] = browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")
    row.click()
    index = records.index(next(r for r in records if r.instance_id == "tok-wrong"))
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'")
    assert browser.execute_script("return location.hash") == f"#t={index}"
    tokens = browser.find_elements(By.CSS_SELECTOR, "#tokens .tok")
    assert [1 if "m1" in t.get_attribute("class").split() else 0 for t in tokens] == wrong["response_mask"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#tokens .tok.bad")) == 2  # the tool token marked 1 and the zero logprob
    flags = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#flags li")]
    assert flags == ["mask: 1 token(s) of a tool span (positions 2-4) have mask 1; the model did not sample them (first at 3)",
                     "logprob: 1 sampled token(s) (mask 1) have logprob exactly 0.0, the placeholder of a mask-0 token (first at 6)"]  # fmt: skip
    shown = {(tr.get_attribute("data-test"), tr.get_attribute("data-kind"), tr.get_attribute("data-outcome"))
             for tr in browser.find_elements(By.CSS_SELECTOR, "#tests tr[data-outcome]")}  # fmt: skip
    report = wrong["reward_report"]["tests"]
    assert shown == {(test, kind, "pass" if outcome == "success" else "fail")
                     for kind, result in report.items() for outcome, tests in result.items() for test in tests}  # fmt: skip
    browser.save_screenshot(str(artifacts() / "viewer-trajectory.png"))
    browser.execute_script("document.getElementById('steps').scrollIntoView()")
    browser.save_screenshot(str(artifacts() / "viewer-tokens.png"))

    browser.execute_script(f"location.hash = '#t={records.index(next(r for r in records if r.instance_id == 'tok-toy'))}'")
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'")  # resolved, graded by a command: no patch recorded
    assert browser.find_element(By.ID, "patch").text.startswith("(no patch in this record: its reward report has none")
    assert [th.get_attribute("textContent") for th in browser.find_elements(By.CSS_SELECTOR, "#run-table th")][5] == "model turns"

    browser.execute_script(f"location.hash = '#t={records.index(next(r for r in records if r.instance_id == 'repo__pkg-1'))}'")
    wait_for(browser, "return document.querySelectorAll('#steps .step.format-error').length === 1")
    assert "x = 2" in browser.find_element(By.CSS_SELECTOR, "#patch .add").text
    browser.execute_script("document.getElementById('steps').scrollIntoView()")
    browser.save_screenshot(str(artifacts() / "viewer-steps.png"))
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def test_a_gateway_jsonl_in_chromium(browser, tmp_path):
    """`view chains.jsonl --tokenizer DIR`: the skipped line is on the page, each token's mask class is the
    chain's mask, and the tool tokens marked 1 are the flagged ones."""
    from selenium.webdriver.common.by import By

    path, chain = gateway_jsonl(tmp_path)
    assert main(["view", str(path), "--tokenizer", str(TOKENIZERS / "qwen2.5-instruct")]) == 0
    browser.get((tmp_path / "chains.view.html").as_uri())
    wait_for(browser, "return window.__uagRendered")
    assert "chains.jsonl:2" in browser.find_element(By.TAG_NAME, "body").text  # the malformed line, reported
    browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")[0].click()
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'")
    tokens = browser.find_elements(By.CSS_SELECTOR, "#tokens .tok")
    assert [1 if "m1" in token.get_attribute("class").split() else 0 for token in tokens] == chain["response_mask"]
    bad = [index for index, token in enumerate(tokens) if "bad" in token.get_attribute("class").split()]
    assert bad == [*range(2, 22), 24], "the glue and tool message's tokens marked 1 are outlined"
    assert [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#flags li")] == [
        "mask: 1 token(s) of a glue span (positions 2-2) have mask 1; the model did not sample them (first at 2)",
        "mask: 19 token(s) of a tool span (positions 3-21) have mask 1; the model did not sample them (first at 3)",
        "mask: 1 token(s) of a glue span (positions 24-24) have mask 1; the model did not sample them (first at 24)",
    ]
    browser.save_screenshot(str(artifacts() / "viewer-gateway.png"))
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_serve_prints_a_loopback_url_that_serves_the_page_and_ctrl_c_stops_it(tmp_path):
    import signal
    import subprocess
    import sys
    import urllib.request

    run = eval_dir(tmp_path, count=1)
    server = subprocess.Popen([sys.executable, "-m", "uni_agent_gym.cli", "view", str(run), "--serve", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    try:
        lines = []
        while not any("serving http://127.0.0.1:" in line for line in lines):
            line = server.stdout.readline()
            assert line, f"the server ended before it served: {''.join(lines)}"
            lines.append(line)
        url = next(line for line in lines if "serving" in line).split()[1]
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200 and b"uni-agent-gym view" in response.read()
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=10) == 0
    finally:
        server.kill()
        server.stdout.close()
