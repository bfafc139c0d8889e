"""`UniAgentLoop.run()` on the built-in toy task in the local sandbox, driven by `TokenServer`
(scripted turns scored by a tiny random model: real tokens, real logprobs). Every trajectory is checked
like compiler output: the ids are exactly what the model was conditioned on, mask 1 covers exactly the
sampled tokens with their logprobs, and the ids equal the chat template's rendering of the conversation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset

from transformers import AutoTokenizer

from tests.browser import browser  # noqa: F401 (a fixture)
from tests.token_server import TokenServer, tiny_model_dir
from uni_agent_gym import toy
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.toolcalls import ToolCall, call_text
from uni_agent_gym.verl.agent_loop import UniAgentLoop, instance_from_sample
from uni_agent_gym.tokens.boundary import render

pytestmark = pytest.mark.slow  # UniAgentLoop episodes with a sampling model: not in make test-fast

TOY_SAMPLE = {"extra_info": {"index": 0, "instance_id": toy.INSTANCE_ID}, "raw_prompt": []}
TEMPLATES = Path(__file__).parent / "chat_templates"


def tool_call(call: dict) -> str:
    return "<tool_call>\n" + json.dumps(call) + "\n</tool_call>"


def solve_toy(turn: int, repo_dir: str) -> str:
    return tool_call(toy.scripted_solution(repo_dir)[turn])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model_dir(tmp_path_factory.mktemp("tiny-model"))


def model_dir_for(tmp_path: Path, tokenizer: str, template: str | None = None, special: tuple[str, ...] = ()) -> Path:
    chat_template = (TEMPLATES / f"{template}.jinja").read_text() if template else None
    return tiny_model_dir(tmp_path / f"model-{tokenizer}-{template}", tokenizer, chat_template=chat_template, special=special)


def solve_toy_as_the_template_writes(model_dir: Path):
    """Each turn is the text the chat template writes for the toy solution's call: the format the model
    was trained on (Llama JSON for Llama, XML for Qwen3-Coder, <think> + <tool_call> for Qwen3...)."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return lambda turn, repo_dir: call_text(tokenizer, ToolCall(**toy.scripted_solution(repo_dir)[turn]))


def make_loop(tmp_path: Path, server: TokenServer, *, prompt_length=4096, response_length=8192, gym: dict | None = None) -> UniAgentLoop:
    """A UniAgentLoop as verl's worker builds it, with a local-sandbox gym config written beside its YAML."""
    gym = {"deployment": {"type": "local"}, "agent": {"max_format_errors": 2}, **(gym or {})}
    (tmp_path / "gym.json").write_text(json.dumps(gym))
    loop_yaml = tmp_path / "uni_agent_loop.yaml"
    loop_yaml.write_text("- name: uni_agent\n  _target_: uni_agent_gym.verl.agent_loop.UniAgentLoop\n  settings: gym.json\n")
    config = OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"prompt_length": prompt_length, "response_length": response_length, "max_model_len": None,
                                          "agent": {"agent_loop_config_path": str(loop_yaml)}}, "model": {}},
        "data": {"apply_chat_template_kwargs": {}},
    })  # fmt: skip
    return UniAgentLoop(
        DictConfigWrap(config), server, server.tokenizer, None, RLHFDataset, DictConfigWrap(config.data), settings="gym.json", name="uni_agent"
    )


def assert_exact(loop: UniAgentLoop, output, server: TokenServer) -> None:
    """The record is what the model saw and sampled, token for token."""
    sequence = output.prompt_ids + output.response_ids
    calls = [call for call in server.calls if call["request_id"] == loop.trajectory.request_id]
    sampled_at = []
    for call in calls:  # each turn was conditioned on a prefix of the record, and its tokens follow it
        start = len(call["prompt_ids"])
        assert sequence[:start] == call["prompt_ids"]
        assert sequence[start : start + len(call["ids"])] == call["ids"]
        sampled_at += range(start - len(output.prompt_ids), start - len(output.prompt_ids) + len(call["ids"]))
    assert [i for i, bit in enumerate(output.response_mask) if bit] == sampled_at
    assert [output.response_logprobs[i] for i in sampled_at] == [p for call in calls for p in call["logprobs"]]
    assert all(output.response_logprobs[i] == 0.0 for i, bit in enumerate(output.response_mask) if not bit)
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs)


TEMPLATE_CASES = [  # tokenizer, chat template (None: its own), the tool-call format it writes
    ("qwen2.5-instruct", None, "hermes"),
    ("llama-3.2-instruct", None, "llama3-json"),
    ("qwen3", None, "hermes"),
    ("qwen2.5-instruct", "qwen3-coder", "hermes-xml"),
]


@pytest.mark.parametrize("tokenizer, template, tool_format", TEMPLATE_CASES, ids=["qwen2.5", "llama-3.2", "qwen3", "qwen3-coder-template"])
async def test_toy_solution_in_the_templates_own_format_is_rewarded_and_matches_the_template(tmp_path, tokenizer, template, tool_format):
    """The same loop on four templates, no per-family code: the model answers in the tool-call format its
    template writes; no turn is a format error, the reward is 1.0, the record is exact, and it is the
    template's rendering of the conversation (for Qwen3, less the history it rewrites)."""
    model_dir = model_dir_for(tmp_path, tokenizer, template)
    server = TokenServer(model_dir, solve_toy_as_the_template_writes(model_dir))
    loop = make_loop(tmp_path, server)
    output = await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)
    trajectory = loop.trajectory
    assert loop.tool_format.name == tool_format
    assert output.extra_fields["traj_exit_reason"] == "finished" and output.extra_fields["traj_masked"] is False
    assert output.reward_score == 1.0 and output.extra_fields["reward_report"]["resolved"] is True
    assert not [m for m in trajectory.messages if m["role"] != "assistant" and m["content"].startswith("Invalid tool call")]
    assert output.num_turns == 1 + 7 + 6  # the task, 7 model turns, 6 tool results
    assert_exact(loop, output, server)
    sampled = [m["content"] for m in trajectory.messages if m["role"] == "assistant"]
    lead = server.tokenizer.decode(trajectory.cache.boundary.lead)  # Qwen3's empty think block, which its template writes itself
    # what the parser saw: the text, without the stop token and the template's lead
    assert sampled == [server.script(turn, trajectory.env.repo_dir).removeprefix(lead) for turn in range(7)]
    rendered = render(server.tokenizer, trajectory.messages, tools=trajectory.tools, generation_prompt=False)
    record = output.prompt_ids + output.response_ids + list(trajectory.cache.boundary.glue)
    if tokenizer == "qwen3":
        # Qwen3 rewrites history: its rendering drops the (empty) <think> block of every assistant turn but
        # the last; the record keeps what the model saw
        think = server.tokenizer.encode("<think>\n\n</think>\n\n", add_special_tokens=False)
        for call in reversed(server.calls[:-1]):
            start = len(call["prompt_ids"])
            assert record[start : start + len(think)] == think
            del record[start : start + len(think)]
    assert record == rendered
    assert [m["role"] for m in trajectory.messages[:3]] == ["system", "user", "assistant"] and trajectory.tools
    assert trajectory.env.deployment is None  # the sandbox was released
    assert all(call["sampling_params"]["max_tokens"] == 4096 for call in server.calls)


async def test_the_qwen3_template_adds_a_think_block_to_a_last_turn_written_without_one(tmp_path):
    """Qwen3 rewrites history: for a model turn without its <think> block, the template's rendering of the
    finished conversation has an empty one in the last assistant turn that the model was never conditioned
    on; the record keeps what the model saw."""
    server = TokenServer(model_dir_for(tmp_path, "qwen3"), solve_toy)
    loop = make_loop(tmp_path, server)
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    trajectory = loop.trajectory
    assert output.reward_score == 1.0
    rendered = render(server.tokenizer, trajectory.messages, tools=trajectory.tools, generation_prompt=False)
    record = output.prompt_ids + output.response_ids + list(trajectory.cache.boundary.glue)
    think = server.tokenizer.encode("<think>\n\n</think>\n\n", add_special_tokens=False)
    last = len(record) - len(server.calls[-1]["ids"]) - len(trajectory.cache.boundary.glue)
    assert rendered == record[:last] + think + record[last:]


async def test_special_tokens_reach_the_parser_and_the_stop_token_does_not(tmp_path):
    """A tokenizer whose <tool_call> delimiters are special tokens: decoding that skipped special tokens
    would hand the parser bare JSON (no call found, every turn a format error)."""
    model_dir = model_dir_for(tmp_path, "qwen2.5-instruct", special=("<tool_call>", "</tool_call>"))
    server = TokenServer(model_dir, solve_toy)
    ids = server.tokenizer.encode(solve_toy(0, "/r"), add_special_tokens=False)
    assert "<tool_call>" not in server.tokenizer.decode(ids, skip_special_tokens=True)  # the case this test is about
    loop = make_loop(tmp_path, server)
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "finished" and output.reward_score == 1.0
    sampled = [m["content"] for m in loop.trajectory.messages if m["role"] == "assistant"]
    assert sampled == [solve_toy(turn, loop.trajectory.env.repo_dir) for turn in range(7)]  # delimiters kept, <|im_end|> dropped


@pytest.mark.parametrize("tool_format, native", [("hermes", "auto"), ("hermes", "off")], ids=["native", "described"])
async def test_a_named_format_must_agree_with_a_template_that_renders_the_tools(tmp_path, tool_format, native):
    """Llama's template renders the tools and asks for its own JSON: naming another format is a config
    error that says so; with the tools described in the system prompt instead, the named format is used
    and shown there."""
    model_dir = model_dir_for(tmp_path, "llama-3.2-instruct")
    server = TokenServer(model_dir, solve_toy)  # Hermes <tool_call> JSON
    loop = make_loop(tmp_path, server, gym={"model": {"tool_format": tool_format, "native_tools": native}})
    if native == "auto":
        with pytest.raises(ConfigError, match="model.tool_format is 'hermes', but the chat template renders the tools and asks for 'llama3-json'"):
            await loop.run({"logprobs": True}, **TOY_SAMPLE)
        return
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.reward_score == 1.0 and loop.trajectory.tools is None
    system = loop.trajectory.messages[0]["content"]
    assert '<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}}\n</tool_call>' in system


async def test_format_errors_end_the_trajectory_graded_and_kept(tmp_path, model_dir):
    server = TokenServer(model_dir, lambda turn, repo_dir: "I would rather chat than call a tool.")
    loop = make_loop(tmp_path, server)
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "format_error" and output.extra_fields["traj_masked"] is False
    assert output.reward_score == 0.0 and output.extra_fields["reward_report"]["resolved"] is False
    assert len(server.calls) == 2 and sum(output.response_mask) == 2 * len(server.calls[0]["ids"])
    assert_exact(loop, output, server)
    assert "Invalid tool call" in loop.trajectory.messages[3]["content"]


async def test_response_length_ends_with_max_tokens_within_the_limit(tmp_path, model_dir):
    server = TokenServer(model_dir, solve_toy)
    loop = make_loop(tmp_path, server, response_length=300)
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "max_tokens"
    assert 0 < len(output.response_ids) <= 300 and output.extra_fields["traj_masked"] is False
    assert all(call["sampling_params"]["max_tokens"] <= 300 for call in server.calls)
    assert_exact(loop, output, server)


async def test_a_turn_cut_by_the_token_limit_is_kept_and_followed_by_the_turn_end(tmp_path, model_dir):
    """max_tokens_per_turn cuts a turn before its stop token: the tokens stay (mask 1), the harness
    writes the turn's end itself (mask 0), and the cut call is a format error shown to the model."""
    server = TokenServer(model_dir, solve_toy)
    loop = make_loop(tmp_path, server, gym={"rollout": {"max_tokens_per_turn": 8}})
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "format_error"
    first = server.calls[0]
    assert len(first["ids"]) == 8 and server.stop_id not in first["ids"]
    assert_exact(loop, output, server)
    after = len(first["prompt_ids"]) + 8 - len(output.prompt_ids)
    turn_end = list(loop.trajectory.cache.boundary.turn_end)
    assert output.response_ids[after : after + len(turn_end)] == turn_end


async def test_an_overlong_prompt_gives_a_response_with_nothing_to_train_not_a_crash(tmp_path, model_dir):
    """Nothing was sampled: the response is the template's stop token, mask 0 (verl's v1 trainer indexes
    every response's last token, so none may be empty)."""
    server = TokenServer(model_dir, solve_toy)
    loop = make_loop(tmp_path, server, prompt_length=64)
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "max_tokens"
    assert len(output.prompt_ids) == 64 and server.calls == []
    assert output.response_ids == [server.stop_id] and output.response_mask == [0] and output.response_logprobs == [0.0]
    output.as_dict()  # what verl's v1 worker calls on every output
    assert "max_prompt_length" in output.extra_fields["reward_report"]["error"]


@pytest.mark.parametrize("mask_abnormal", [True, False])
async def test_a_sandbox_stopped_from_outside_is_an_env_error_masked_when_asked(tmp_path, model_dir, mask_abnormal):
    server = TokenServer(model_dir, lambda turn, repo_dir: tool_call({"name": "execute_bash", "arguments": {"command": "ls" if turn == 0 else "sleep 30"}}))
    loop = make_loop(tmp_path, server, gym={"rollout": {"mask_abnormal_exit_traj": mask_abnormal}})

    async def stop_it_mid_command() -> None:
        while len(server.calls) < 2:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        await loop.trajectory.env.deployment.stop()

    output, _ = await asyncio.gather(loop.run({"logprobs": True}, **TOY_SAMPLE), stop_it_mid_command())
    assert output.extra_fields["traj_exit_reason"] == "env_error"
    assert output.extra_fields["traj_masked"] is mask_abnormal and output.reward_score == 0.0
    assert sum(output.response_mask) == (0 if mask_abnormal else sum(len(call["ids"]) for call in server.calls))
    assert "while the command ran" in output.extra_fields["reward_report"]["error"]
    assert loop.trajectory.env.deployment is None


async def test_the_toy_on_a_ray_cluster_is_rewarded_and_recorded_exactly(tmp_path, ray_cluster, docker_image):
    """UniAgentLoop unchanged with its sandboxes on the test cluster's worker nodes (deployment.type: ray)."""
    model_dir = model_dir_for(tmp_path, "qwen2.5-instruct")
    server = TokenServer(model_dir, solve_toy_as_the_template_writes(model_dir))
    loop = make_loop(tmp_path, server, gym={"deployment": ray_cluster.deployment(image=docker_image)})
    output = await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "finished" and output.reward_score == 1.0
    assert_exact(loop, output, server)
    assert loop.trajectory.env.deployment is None


async def test_a_ray_node_killed_mid_command_is_an_env_error_masked_within_call_timeout(
    tmp_path, model_dir, extra_node, docker_image, ray_cluster, container_run_id
):
    """The acceptance case of the ray deployment: the node's raylet SIGKILLed while the agent's command runs."""
    from tests import ray_cluster as harness

    resource = f"uag_loop_{tmp_path.name[-12:]}"
    pid = extra_node({resource: 2}, ip="127.0.0.8")
    server = TokenServer(model_dir, lambda turn, repo_dir: tool_call({"name": "execute_bash", "arguments": {"command": "ls" if turn == 0 else "sleep 120"}}))
    loop = make_loop(tmp_path, server, gym={"deployment": ray_cluster.deployment(image=docker_image, resource=resource, call_timeout=20)})

    async def kill_the_node_mid_command() -> None:
        while len(server.calls) < 2:
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)
        harness.kill_raylet(pid)

    # bounded below the command's 120 s: a node loss the loop missed fails here (the latency: bench/)
    output, _ = await asyncio.wait_for(asyncio.gather(loop.run({"logprobs": True}, **TOY_SAMPLE), kill_the_node_mid_command()), 100)
    assert output.extra_fields["traj_exit_reason"] == "env_error" and output.extra_fields["traj_masked"] is True
    assert sum(output.response_mask) == 0 and output.reward_score == 0.0
    assert "127.0.0.8" in output.extra_fields["reward_report"]["error"]
    assert loop.trajectory.env.deployment is None
    from tests.conftest import containers_of, remove_container

    for container in containers_of(container_run_id):  # the dead node's, unless a host on its engine reaped it already
        remove_container(container)


async def test_a_hanging_trajectory_times_out_masked_and_released(tmp_path, model_dir):
    server = TokenServer(model_dir, lambda turn, repo_dir: tool_call({"name": "execute_bash", "arguments": {"command": "sleep 60"}}))
    # long enough for the first turn to be sampled on a loaded machine; the command then hangs past it
    loop = make_loop(tmp_path, server, gym={"rollout": {"trajectory_timeout": 10}})
    output = await asyncio.wait_for(loop.run({"logprobs": True}, **TOY_SAMPLE), 50)  # the command's 60 s not waited out
    assert output.extra_fields["traj_exit_reason"] == "timeout" and output.extra_fields["traj_masked"] is True
    assert sum(output.response_mask) == 0 and len(output.response_ids) > 0
    assert loop.trajectory.env.deployment is None


async def test_concurrency_is_limited_per_worker(tmp_path, model_dir):
    server = TokenServer(model_dir, solve_toy)
    loops = [make_loop(tmp_path, server, gym={"rollout": {"max_concurrency": 1}}) for _ in range(3)]
    outputs = await asyncio.gather(*(loop.run({"logprobs": True}, **TOY_SAMPLE) for loop in loops))
    assert [output.reward_score for output in outputs] == [1.0, 1.0, 1.0]
    order = [call["request_id"] for call in server.calls]
    assert order == sorted(order, key=order.index) and len(set(order)) == 3
    spans = [(order.index(r), len(order) - 1 - order[::-1].index(r)) for r in dict.fromkeys(order)]
    assert all(spans[i][1] < spans[i + 1][0] for i in range(2))  # one trajectory after another


def test_instance_from_sample_reads_rows_json_and_ids():
    row = {"instance_id": "a__b-1", "repo": "a/b"}
    assert instance_from_sample({"extra_info": {"instance": row}}) == row
    assert instance_from_sample({"extra_info": {"instance": json.dumps(row)}}) == row
    assert instance_from_sample({"tools_kwargs": {"instance": row}}) == row
    assert instance_from_sample({"extra_info": {"index": 3, "instance_id": "a__b-1"}}) == "a__b-1"
    with pytest.raises(ValueError, match="extra_info.instance"):
        instance_from_sample({"extra_info": {"index": 3}})


async def test_a_trajectory_record_shows_what_verl_got_in_the_viewer(tmp_path, model_dir, browser):
    """`rollout.trajectory_dir`: one record per trajectory, which `uni-agent-gym view` reads: its ids, mask and
    logprobs are verl's, its spans put every sampled token in an assistant turn (no flag), and the page in
    headless Chromium marks each token with its mask."""
    from selenium.webdriver.common.by import By

    from tests.browser import artifacts, wait_for
    from uni_agent_gym.cli import main
    from uni_agent_gym.viewer.checks import check
    from uni_agent_gym.viewer.records import load

    records = tmp_path / "records"
    server = TokenServer(model_dir, solve_toy)
    loop = make_loop(tmp_path, server, gym={"rollout": {"trajectory_dir": str(records)}})
    output = await loop.run({"temperature": 1.0, "logprobs": True}, **TOY_SAMPLE)
    [record] = load(records)
    assert (record.kind, record.instance_id, record.exit_reason, record.reward) == ("tokens", toy.INSTANCE_ID, "finished", 1.0)
    assert (record.prompt_ids, record.response_ids) == (output.prompt_ids, output.response_ids)
    assert (record.response_mask, record.response_logprobs) == (output.response_mask, output.response_logprobs)
    assert "".join(record.tokens) == server.tokenizer.decode(output.response_ids, skip_special_tokens=False)
    sampled = {i for span in record.spans if span["role"] == "assistant" for i in range(span["start"], span["end"])}
    assert sampled == {i for i, bit in enumerate(output.response_mask) if bit}
    assert check(record).flags == [] and record.reward_report["resolved"] is True

    assert main(["view", str(records)]) == 0
    browser.get((records / "view.html").as_uri())
    wait_for(browser, "return window.__uagRendered")
    browser.find_element(By.CSS_SELECTOR, "#run-table tbody tr").click()
    wait_for(browser, "return document.getElementById('tokens').dataset.done === '1'")
    shown = [1 if "m1" in token.get_attribute("class").split() else 0 for token in browser.find_elements(By.CSS_SELECTOR, "#tokens .tok")]
    assert shown == output.response_mask
    assert [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#flags li")] == ["no flags"]
    assert browser.find_element(By.ID, "tests-none").is_displayed()  # the toy is graded by a command: no per-test table
    browser.save_screenshot(str(artifacts() / "viewer-uni-agent-loop.png"))
    browser.execute_script("document.getElementById('tokens').scrollIntoView()")
    browser.save_screenshot(str(artifacts() / "viewer-uni-agent-loop-tokens.png"))
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


async def test_the_work_is_graded_when_the_loop_ends_an_episode_without_a_finish_tool(tmp_path, model_dir):
    """Format errors end the episode by the env's own `end()`, which grades with no `finish` tool in `env.tools`
    (a fake finish call was a format error there: reward 0 and an empty report, silently)."""
    steps = lambda turn, repo_dir: tool_call(toy.scripted_solution(repo_dir)[min(turn, 6)])  # noqa: E731 - fix, then finish x2
    server = TokenServer(model_dir, steps)
    loop = make_loop(tmp_path, server, gym={"env": {"tools": ["execute_bash", "str_replace_editor", "search"]}})
    output = await loop.run({"logprobs": True}, **TOY_SAMPLE)
    assert output.extra_fields["traj_exit_reason"] == "format_error" and output.reward_score == 1.0
    assert output.extra_fields["reward_report"]["resolved"] is True
    assert_exact(loop, output, server)


@pytest.mark.parametrize("mask_abnormal", [True, False])
async def test_a_grading_that_failed_before_the_patch_was_in_place_is_masked_when_asked(tmp_path, model_dir, mask_abnormal):
    """A test patch that does not apply to the start commit is the infrastructure's (`caused_by`), whatever the
    model did: an env_error, masked under mask_abnormal_exit_traj, never a 0 to learn from. (The loops masked on a
    status the episode's reward never gives, `infra_error`.)"""
    from tests.graded_toy import graded_toy_row

    row = await graded_toy_row(str(tmp_path / "cache"))
    row["test_patch"] = "diff --git a/not_there.py b/not_there.py\n--- a/not_there.py\n+++ b/not_there.py\n@@ -1 +1 @@\n-a\n+b\n"
    server = TokenServer(model_dir, solve_toy)
    loop = make_loop(tmp_path, server, gym={"rollout": {"mask_abnormal_exit_traj": mask_abnormal}, "env": {"cache_dir": str(tmp_path / "cache")}})
    output = await loop.run({"logprobs": True}, extra_info={"index": 0, "instance": row}, raw_prompt=[])
    report = output.extra_fields["reward_report"]
    assert (report["status"], output.extra_fields["traj_exit_reason"], output.reward_score) == ("test_patch_failed", "env_error", 0.0)
    assert output.extra_fields["traj_masked"] is mask_abnormal and (sum(output.response_mask) == 0) is mask_abnormal
