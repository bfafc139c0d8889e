"""`uni-agent-gym probe` on the shared tokenizers (every section holds) and on templates broken in the ways
the seed's troubleshooting names (no generation prompt, a tool-call shape nobody knows, a template that
rewrites an earlier turn once a tool message follows it): exit 1 naming what failed, never a traceback.
Nothing is faked: the episode is `UniAgentLoop.run()` on the toy task in a real local (or docker) sandbox,
sampled by the probe's own scripted token source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from tests.conftest import require_docker
from uni_agent_gym.cli import main

pytestmark = pytest.mark.slow  # the probe plays a UniAgentLoop episode per tokenizer: not in make test-fast

TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"
TEMPLATES = Path(__file__).parent / "chat_templates"
CONFIGS = Path(__file__).resolve().parents[1] / "uni_agent_gym" / "configs"
PLAIN_TURN = "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"


def probe(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["probe", "--json", *argv])
    out = capsys.readouterr().out
    assert "Traceback" not in out
    return code, json.loads(next(line for line in out.splitlines() if line.startswith("{")))


def tokenizer_with(tmp_path: Path, template: str) -> Path:
    """The Qwen2.5 tokenizer with another chat template."""
    directory = tmp_path / "tokenizer"
    shutil.copytree(TOKENIZERS / "qwen2.5-instruct", directory)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = template
    tokenizer.save_pretrained(directory)
    return directory


# Each tool-call format the package reads, on a template written from its family's published one (tests/chat_templates),
# set on the Qwen2.5 tokenizer with the family's special tokens added as its tokenizer has them, its EOS, and where the
# turn ends at the next message's header (GLM) the generation config's stop tokens: template -> (format, specials, eos, extra stops)
DEEPSEEK = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
            "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>",
            "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]  # fmt: skip
MISTRAL = ["<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"]
FAMILIES = {
    "qwen3-coder": ("hermes-xml", ["<tool_call>", "</tool_call>"], "<|im_end|>", []),
    "xml-function": ("xml", [], "<|im_end|>", []),
    "bare-json": ("json", [], "<|im_end|>", []),
    "no-tool-calls": (None, [], "<|im_end|>", []),
    "glm-4.5": ("glm-4.5", ["[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<tool_call>", "</tool_call>",
                            "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<think>", "</think>"], "<|endoftext|>", ["<|user|>", "<|observation|>"]),
    "mistral-v0.3": ("mistral", MISTRAL, "</s>", []),
    "mistral-small-3.2": ("mistral-args", [*MISTRAL, "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[CALL_ID]", "[ARGS]"], "</s>", []),
    "deepseek-v3": ("deepseek-v3", DEEPSEEK, "<｜end▁of▁sentence｜>", []),
    "deepseek-v3.1": ("deepseek-v3.1", DEEPSEEK, "<｜end▁of▁sentence｜>", []),
}  # fmt: skip


def family_tokenizer(tmp_path: Path, template: str) -> Path:
    _, specials, eos, stops = FAMILIES[template]
    directory = tokenizer_with(tmp_path, (TEMPLATES / f"{template}.jinja").read_text())
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.add_tokens(specials, special_tokens=True)
    tokenizer.eos_token = eos
    tokenizer.save_pretrained(directory)
    if stops:
        ids = [tokenizer.convert_tokens_to_ids(token) for token in [eos, *stops]]
        (directory / "generation_config.json").write_text(json.dumps({"eos_token_id": ids}))
    return directory


@pytest.mark.parametrize("template", list(FAMILIES))
def test_every_section_holds_on_each_tool_call_format(tmp_path, capsys, template):
    """The probe is what a user runs before renting GPUs: it must hold on every format the package reads, including
    templates with no generation prompt (Mistral), a turn that ends at the next message's header (GLM: the model
    samples `<|observation|>`) and tool calls made of special tokens (DeepSeek)."""
    code, report = probe(capsys, "--tokenizer", str(family_tokenizer(tmp_path, template)), "--set", f"env.cache_dir={tmp_path / 'cache'}")
    _, boundary, cache, episode = report["sections"]
    assert code == 0 and report["ok"], [line for section in report["sections"] for line in section["lines"] if "FAILED" in line]
    assert boundary["tool_call_format"] == FAMILIES[template][0]
    assert cache["response_logprobs"] == len(cache["response_mask"]) == cache["prompt_ids"] - cache["initial_prompt_ids"]
    assert episode["traj_exit_reason"] == "finished" and episode["reward"] == 1.0 and episode["traj_masked"] is False


def test_every_section_holds_where_the_deepseek_markers_decode_with_spaces(tmp_path, capsys):
    """A Llama-style tokenizer whose tool-call markers are vocabulary pieces (tests/metaspace_tokenizer.py) decodes
    `<｜tool▁sep｜>` as `<｜tool sep｜>`: the episode's calls are read all the same."""
    from tests.metaspace_tokenizer import metaspace_tokenizer

    code, report = probe(capsys, "--tokenizer", str(metaspace_tokenizer(tmp_path / "tokenizer", "deepseek-v3")), "--set", f"env.cache_dir={tmp_path / 'cache'}")
    _, boundary, cache, episode = report["sections"]
    assert code == 0 and report["ok"], [line for section in report["sections"] for line in section["lines"] if "FAILED" in line]
    assert boundary["tool_call_format"] == "deepseek-v3" and episode["traj_exit_reason"] == "finished" and episode["reward"] == 1.0


def qwen_template() -> str:
    return AutoTokenizer.from_pretrained(TOKENIZERS / "qwen2.5-instruct").chat_template


@pytest.mark.parametrize("name, tool_format, record", [
    ("qwen2.5-instruct", "hermes", "equal to the template's rendering"),
    ("llama-3.2-instruct", "llama3-json", "equal to the template's rendering"),
    ("qwen3", "hermes", "differs from a fresh rendering only inside sampled turns"),  # it drops earlier <think> blocks
])  # fmt: skip
def test_every_section_holds_on_the_shared_tokenizers(tmp_path, capsys, name, tool_format, record):
    code, report = probe(capsys, "--tokenizer", str(TOKENIZERS / name), "--set", f"env.cache_dir={tmp_path / 'cache'}")
    _, boundary, cache, episode = report["sections"]
    assert code == 0 and report["ok"] and [s["name"] for s in report["sections"]] == ["tokenizer", "boundary", "cache", "episode"], report
    assert boundary["tool_call_format"] == tool_format and boundary["generation_prompt"] and boundary["stop"]
    assert cache["response_logprobs"] == len(cache["response_mask"]) == cache["prompt_ids"] - cache["initial_prompt_ids"]
    assert cache["response_mask"][0] == 1 and cache["response_mask"][-1] == 0 and sorted(cache["response_mask"], reverse=True) == cache["response_mask"]
    assert episode["traj_exit_reason"] == "finished" and episode["traj_masked"] is False and episode["reward"] == 1.0
    assert episode["response_ids"] == episode["response_mask"] == episode["response_logprobs"]
    assert any(record in line for line in cache["lines"]) and any(record in line for line in episode["lines"])


def test_the_text_report_prints_the_four_sections(tmp_path, capsys):
    assert main(["probe", "--tokenizer", str(TOKENIZERS / "qwen2.5-instruct"), "--set", f"env.cache_dir={tmp_path / 'cache'}"]) == 0
    out = capsys.readouterr().out
    for line in ("episode sandbox: local (probe's default: nothing to build;", "tokenizer ok", "Qwen2Tokenizer runs tokenizer.json as declared",
                 "round trip holds (code, spaces, newlines, tabs, non-ASCII)", 'boundary ok', 'generation prompt: [151644, 77091, 198] "<|im_start|>assistant\\n"', 'stop: [151645] "<|im_end|>"',
                 "cache ok", "mask: 1 x 21, 0 x 24", "invariant 3 (the ids are the template's rendering of the conversation): holds",
                 "episode ok", "traj_exit_reason finished, traj_masked False, reward 1.0"):  # fmt: skip
        assert line in out, out


@pytest.mark.parametrize("broken, section, expected", [
    (lambda: qwen_template().replace("{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}", ""),
     "boundary", "add_generation_prompt=True renders nothing after the user's turn"),
    (lambda: (TEMPLATES / "unknown-shape.jinja").read_text(), "boundary", "writes tool calls in a shape the gym does not know"),
    (lambda: qwen_template().replace(PLAIN_TURN, PLAIN_TURN[:-3] + " + ('\\n' if message.role == 'assistant' and not loop.last "
                                     "and messages[loop.index0 + 1].role == 'tool' else '') }}"),
     "cache", "invariant 3 (the template's rendering of the conversation): after new messages the template no longer ends"),
], ids=["no-generation-prompt", "unknown-tool-call-shape", "rewrites-an-earlier-turn"])  # fmt: skip
def test_a_broken_template_fails_naming_what(tmp_path, capsys, broken, section, expected):
    template = broken()
    assert template != qwen_template()
    code, report = probe(capsys, "--tokenizer", str(tokenizer_with(tmp_path, template)), "--set", f"env.cache_dir={tmp_path / 'cache'}")
    failed = [s for s in report["sections"] if not s["ok"]]
    assert code == 1 and not report["ok"] and [s["name"] for s in failed] == [section], report
    assert any(line.startswith("FAILED: ") and expected in line for line in failed[0]["lines"]), failed[0]["lines"]


@pytest.mark.docker
def test_the_episode_runs_on_the_deployment_a_config_names_and_says_which(tmp_path, capsys, docker_image):
    """-c configs/deployment/docker.yaml is the episode's sandbox (probe ran it on local without a word before)."""
    require_docker()
    main(["probe", "--json", "--tokenizer", str(TOKENIZERS / "qwen2.5-instruct"), "-c", str(CONFIGS / "deployment" / "docker.yaml"),
          "--set", f"deployment.image={docker_image}", "--set", f"env.cache_dir={tmp_path / 'cache'}"])  # fmt: skip
    captured = capsys.readouterr()
    assert "episode sandbox: docker (from --config/--set/--deployment)" in captured.err
    report = json.loads(next(line for line in captured.out.splitlines() if line.startswith("{")))
    assert report["ok"] and report["sections"][3]["reward"] == 1.0, report
