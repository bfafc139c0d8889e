"""A tokenizer of the DeepSeek shape (tests/deepseek_tokenizer.py: a byte-level BPE tokenizer.json whose
tokenizer_config.json names LlamaTokenizerFast): transformers 5's `AutoTokenizer` drops its spaces and newlines; the
gym's loaders, `probe`, `check-config --training` and `train` load it as tokenizer.json declares, or say why text does
not survive it. Nothing is faked: transformers, tokenizers and verl's own loaders (`hf_tokenizer`, `HFModelConfig`) run;
the episode is `UniAgentLoop.run()` on the toy task, sampled by the probe's scripted token source."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from tokenizers import Tokenizer, pre_tokenizers
from transformers import AutoTokenizer

from tests.conftest import require
from tests.deepseek_tokenizer import BOS, EOS, deepseek_tokenizer
from tests.metaspace_tokenizer import metaspace_tokenizer
from uni_agent_gym.cli import main
from uni_agent_gym.tokenizer_loading import ROUND_TRIP_TEXTS, TokenizerCorruptsText, load_tokenizer, read_fidelity

TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"
CODE = "def mean(values):\n    return sum(values) / len(values)\n"
DECLARED = "pre-tokenizer Sequence[Split, Split, Split, ByteLevel] and decoder ByteLevel"
INSTALLED = "pre-tokenizer Metaspace and decoder Sequence[Replace, ByteFallback, Fuse, Strip]"


@pytest.fixture
def deepseek(tmp_path) -> Path:
    return deepseek_tokenizer(tmp_path / "deepseek")


def lossy_tokenizer(directory: Path) -> Path:
    """A tokenizer whose tokenizer.json itself loses text (a Lowercase normalizer), loaded as declared."""
    deepseek_tokenizer(directory, tokenizer_class="PreTrainedTokenizerFast")
    fast = json.loads((directory / "tokenizer.json").read_text())
    fast["normalizer"] = {"type": "Lowercase"}
    (directory / "tokenizer.json").write_text(json.dumps(fast))
    return directory


def test_autotokenizer_drops_the_spaces_and_newlines_of_a_deepseek_shaped_tokenizer(deepseek):
    """The corruption, with transformers alone (huggingface/transformers#45488). Where this fails, transformers runs
    the file as declared again, and the gym's replacement no longer takes effect."""
    tokenizer = AutoTokenizer.from_pretrained(deepseek)
    assert type(tokenizer).__name__ == "LlamaTokenizer" and isinstance(tokenizer.backend_tokenizer.pre_tokenizer, pre_tokenizers.Metaspace)
    assert tokenizer.decode(tokenizer.encode(CODE, add_special_tokens=False)) == "defmean(values):returnsum(values)/len(values)"


def test_the_gym_loads_it_as_tokenizer_json_declares(deepseek):
    """The ids are those of tokenizer.json's own pipeline (the tokenizers library on the file), the text comes back,
    and what the class named gave besides the pipeline stays: BOS first, the EOS, the chat template."""
    tokenizer, named = load_tokenizer(str(deepseek)), AutoTokenizer.from_pretrained(deepseek)
    declared = Tokenizer.from_file(str(deepseek / "tokenizer.json"))
    for text in ROUND_TRIP_TEXTS.values():
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert ids == declared.encode(text, add_special_tokens=False).ids
        assert tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False) == text
    assert tokenizer.encode("x")[0] == named.encode("x")[0] == declared.token_to_id(BOS)
    assert tokenizer.eos_token == named.eos_token == EOS and tokenizer.chat_template == named.chat_template
    fidelity = read_fidelity(tokenizer)
    assert fidelity.holds and fidelity.agrees and fidelity.named == "LlamaTokenizerFast" and fidelity.declared == DECLARED


def test_the_reading_names_what_tokenizer_json_declares_and_what_the_class_installed(deepseek):
    fidelity = read_fidelity(AutoTokenizer.from_pretrained(deepseek))
    assert not fidelity.holds and not fidelity.agrees and [kind for kind, _, _ in fidelity.broken] == list(ROUND_TRIP_TEXTS)
    assert (f"tokenizer.json declares {DECLARED}, and the class LlamaTokenizerFast (loaded as LlamaTokenizer) installed {INSTALLED} "
            "over it (transformers 5 builds that class's pipeline in code: huggingface/transformers#45488); PreTrainedTokenizerFast "
            "runs tokenizer.json as declared") in fidelity.explanation()  # fmt: skip
    assert fidelity.explanation().startswith('it does not round-trip text (code: "def mean(values):\\n    \\"\\"\\"The mean.')


@pytest.mark.parametrize("name", ["qwen2.5-instruct", "qwen3", "llama-3.2-instruct"])
def test_the_shared_tokenizers_load_unchanged_and_round_trip(name):
    """Their classes (Qwen2Tokenizer builds its pipeline in code too, with other ByteLevel flags) agree with their files."""
    require((TOKENIZERS / name).exists(), f"../shared/tokenizers/{name} beside the checkout")
    tokenizer, plain = load_tokenizer(str(TOKENIZERS / name)), AutoTokenizer.from_pretrained(TOKENIZERS / name)
    assert type(tokenizer) is type(plain)
    assert all(tokenizer.encode(text) == plain.encode(text) for text in ROUND_TRIP_TEXTS.values())
    fidelity = read_fidelity(tokenizer)
    assert fidelity.holds and fidelity.agrees and fidelity.declared is not None, fidelity


def llama2_shaped(directory: Path) -> Path:
    """The Metaspace tokenizer of tests/metaspace_tokenizer.py as Llama-2 and Mistral v0.3 ship theirs: tokenizer.json's
    pipeline the one transformers' LlamaTokenizer builds (Metaspace, prepend to the first piece), LlamaTokenizerFast named."""
    metaspace_tokenizer(directory, "deepseek-v3")
    fast = json.loads((directory / "tokenizer.json").read_text())
    fast["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
    fast["decoder"] = {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
                                                        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}  # fmt: skip
    (directory / "tokenizer.json").write_text(json.dumps(fast))
    config = json.loads((directory / "tokenizer_config.json").read_text())
    (directory / "tokenizer_config.json").write_text(json.dumps({**config, "tokenizer_class": "LlamaTokenizerFast", "legacy": False}))
    return directory


@pytest.mark.parametrize("build, loaded", [(lambda path: metaspace_tokenizer(path, "deepseek-v3"), "TokenizersBackend"),
                                           (llama2_shaped, "LlamaTokenizer")], ids=["metaspace", "llama-2-shaped"])  # fmt: skip
def test_a_tokenizer_that_truly_is_metaspace_stays_so(tmp_path, build, loaded):
    tokenizer = load_tokenizer(str(build(tmp_path / "metaspace")))
    assert type(tokenizer).__name__ == loaded and isinstance(tokenizer.backend_tokenizer.pre_tokenizer, pre_tokenizers.Metaspace)
    fidelity = read_fidelity(tokenizer)
    assert fidelity.holds and fidelity.agrees, fidelity


def test_a_file_that_loses_text_itself_is_named_so(tmp_path):
    fidelity = read_fidelity(load_tokenizer(str(lossy_tokenizer(tmp_path / "lossy"))))
    assert fidelity.agrees and not fidelity.holds
    assert "TokenizersBackend runs tokenizer.json as declared (normalizer Lowercase, pre-tokenizer" in fidelity.explanation()
    assert fidelity.explanation().endswith("so the file itself loses text and no class fixes it: use the model's own tokenizer files")


def test_the_gateway_loads_it_faithfully_and_refuses_one_that_loses_text(deepseek, tmp_path):
    from uni_agent_gym.gateway.serve import load_tokenizer as gateway_tokenizer

    assert read_fidelity(gateway_tokenizer(str(deepseek))).holds
    lossy = lossy_tokenizer(tmp_path / "lossy")
    with pytest.raises(TokenizerCorruptsText, match=re.escape(f"the tokenizer {lossy}: it does not round-trip text (code: ")):
        gateway_tokenizer(str(lossy))


def test_the_viewer_and_the_tool_call_format_read_it_faithfully(deepseek):
    from uni_agent_gym.toolcalls import resolve_format
    from uni_agent_gym.viewer.records import load_tokenizer as viewer_tokenizer
    from uni_agent_gym.viewer.records import token_texts

    tokenizer = viewer_tokenizer(deepseek)
    assert "".join(token_texts(tokenizer, tokenizer.encode(CODE, add_special_tokens=False))) == CODE
    assert resolve_format("auto", str(deepseek)).name == "deepseek-v3"


# ----- the commands: probe, check-config --training, train (each runs verl or an episode: slow) -----


def probe(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["probe", "--json", *argv])
    out = capsys.readouterr().out
    assert "Traceback" not in out
    return code, json.loads(next(line for line in out.splitlines() if line.startswith("{")))


@pytest.mark.slow
def test_probe_passes_on_it_as_the_gym_loads_it(deepseek, tmp_path, capsys):
    code, report = probe(capsys, "--tokenizer", str(deepseek), "--set", f"env.cache_dir={tmp_path / 'cache'}")
    assert code == 0 and report["ok"], [line for section in report["sections"] for line in section["lines"] if "FAILED" in line]
    tokenizer, boundary, cache, episode = report["sections"]
    assert tokenizer["loaded"] == "TokenizersBackend" and tokenizer["named"] == "LlamaTokenizerFast" and tokenizer["round_trip"]
    assert boundary["tool_call_format"] == "deepseek-v3" and episode["reward"] == 1.0 and episode["traj_exit_reason"] == "finished"


@pytest.mark.slow
def test_probe_with_the_broken_loading_forced_fails_naming_the_round_trip(deepseek, tmp_path, capsys, monkeypatch):
    """Before the tokenizer section, this failed in the episode only, as "reward 1.0 (the toy's tests pass)"."""
    import uni_agent_gym.toolcalls

    monkeypatch.setattr(uni_agent_gym.toolcalls, "load_tokenizer", lambda source: AutoTokenizer.from_pretrained(source))
    code, report = probe(capsys, "--tokenizer", str(deepseek), "--set", f"env.cache_dir={tmp_path / 'cache'}")
    assert code == 1 and [(section["name"], section["ok"]) for section in report["sections"]] == [("tokenizer", False)]
    failed = next(line for line in report["sections"][0]["lines"] if line.startswith("FAILED: "))
    assert failed.startswith("FAILED: round trip: it does not round-trip text (code: ") and f"tokenizer.json declares {DECLARED}" in failed
    assert main(["probe", "--tokenizer", str(deepseek), "--set", f"env.cache_dir={tmp_path / 'cache'}"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("error: the probe failed in tokenizer: round trip: it does not round-trip")


def model_dir(directory: Path) -> Path:
    """A model directory of the DeepSeek-R1-Distill-Llama shape for verl (config.json of a Llama model; weights are
    never loaded here): its tokenizer is the DeepSeek-shaped one."""
    from transformers import LlamaConfig

    tokenizer = AutoTokenizer.from_pretrained(deepseek_tokenizer(directory))
    LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, architectures=["LlamaForCausalLM"]).save_pretrained(directory)  # fmt: skip
    return directory


@pytest.mark.slow
def test_check_config_says_why_and_that_train_hands_verl_a_faithful_copy(tmp_path, capsys, monkeypatch):
    from tests.test_verl_training import edited_toml

    monkeypatch.setenv("MODEL_PATH", str(model_dir(tmp_path / "model")))
    assert main(["check-config", "--training", str(edited_toml(tmp_path))]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"warning: the tokenizer verl loads (path = {tmp_path / 'model'}, by verl's hf_tokenizer): it does not round-trip text "
            '(code: "def mean(values):') in out  # fmt: skip
    assert (f"tokenizer.json declares {DECLARED}, and the class LlamaTokenizerFast (loaded as LlamaTokenizer) installed {INSTALLED} over it"
            in out and "train writes a copy of it whose tokenizer_config.json names PreTrainedTokenizerFast" in out)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("model, expected", [
    (lambda tmp_path: lossy_tokenizer(tmp_path / "lossy"), "problem: the tokenizer verl loads (path = {}, by verl's hf_tokenizer): it does not "
                                                          "round-trip text"),
    (lambda tmp_path: "nobody/no-such-model", "note: the tokenizer verl loads (path = nobody/no-such-model, by verl's hf_tokenizer) was not "
                                              "checked here: [model] path: cannot load a tokenizer from 'nobody/no-such-model': it is not in "
                                              "the local Hugging Face cache and HF_HUB_OFFLINE is set"),
    (lambda tmp_path: TOKENIZERS / "qwen2.5-instruct", "note: the tokenizer verl loads (path = {}, by verl's hf_tokenizer): Qwen2Tokenizer "
                                                        "runs tokenizer.json as declared"),
], ids=["the-file-loses-text", "not-loadable-here", "holds"])  # fmt: skip
def test_check_config_on_a_tokenizer_no_copy_fixes_or_that_is_not_here(tmp_path, capsys, monkeypatch, model, expected):
    from tests.test_verl_training import edited_toml

    path = model(tmp_path)
    monkeypatch.setenv("MODEL_PATH", str(path))
    code = main(["check-config", "--training", str(edited_toml(tmp_path))])
    out = " ".join(capsys.readouterr().out.split())
    assert code == (1 if expected.startswith("problem") else 0) and expected.format(path) in out, out


@pytest.mark.slow
def test_train_refuses_a_tokenizer_it_cannot_check_and_a_dry_run_says_so(tmp_path, capsys, monkeypatch):
    """verl's trainer needs GPUs, so this machine's count is faked and the launch captured (it must not happen)."""
    import subprocess

    from tests.test_verl_training import edited_toml
    from uni_agent_gym.verl import training

    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("verl must not start"))
    monkeypatch.setattr(training, "visible_gpus", lambda: 8)
    monkeypatch.setenv("MODEL_PATH", "nobody/no-such-model")
    toml = edited_toml(tmp_path)
    assert main(["train", "--config", str(toml), "--output", str(tmp_path / "runs")]) == 1
    last = " ".join(capsys.readouterr().out.split()).rpartition("error: ")[2]
    assert last.startswith("train checks the tokenizer verl loads before it starts verl") and "nobody/no-such-model" in last, last
    assert not (tmp_path / "runs").exists()
    assert main(["train", "--config", str(toml), "--dry-run", "--output", str(tmp_path / "runs")]) == 0
    assert "tokenizer: not checked here ([model] path: cannot load a tokenizer from 'nobody/no-such-model'" in capsys.readouterr().out


@pytest.mark.slow
async def test_a_record_made_with_the_tokenizer_train_hands_verl_decodes_to_the_text_the_model_saw(tmp_path, capsys, monkeypatch):
    """`train --dry-run` on a model of the DeepSeek shape: the command sets model.tokenizer_path to a copy of its tokenizer;
    verl's own config class (HFModelConfig, as verl's agent-loop worker builds it from that command) loads it; a
    `UniAgentLoop` episode recorded with it decodes to the chat template's text of the conversation, token for token.
    The same episode recorded with `AutoTokenizer`'s class does not."""
    from verl.utils.config import omega_conf_to_dataclass

    from tests.test_verl_training import edited_toml
    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.tokens.boundary import probe as boundary_of
    from uni_agent_gym.toolcalls import resolve_format
    from uni_agent_gym.verl.probe import play_toy_episode
    from uni_agent_gym.verl.trainer_config import compose_trainer_config

    model = model_dir(tmp_path / "model")
    monkeypatch.setenv("MODEL_PATH", str(model))
    assert main(["train", "--config", str(edited_toml(tmp_path)), "--dry-run", "--output", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    command = shlex.split(next(line for line in out.splitlines() if " -m verl." in line))
    copy = tmp_path / "runs" / "swe-grpo" / "tokenizer"
    assert f"actor_rollout_ref.model.tokenizer_path={copy}" in command
    assert json.loads((copy / "tokenizer_config.json").read_text())["tokenizer_class"] == "PreTrainedTokenizerFast"
    trainer = compose_trainer_config(command[3:], async_training=True)
    tokenizer = omega_conf_to_dataclass(trainer.actor_rollout_ref.model).tokenizer  # verl's HFModelConfig: what its workers load
    config = GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path / "cache")}})
    for recorded_with, faithful in ((tokenizer, True), (AutoTokenizer.from_pretrained(model), False)):
        boundary = boundary_of(recorded_with)
        output, loop = await play_toy_episode(recorded_with, boundary, resolve_format("auto", recorded_with), config)
        trajectory = loop.trajectory
        record = recorded_with.decode(output.prompt_ids + output.response_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        seen = recorded_with.apply_chat_template(trajectory.messages, tools=trajectory.tools, tokenize=False)
        if faithful:
            assert output.reward_score == 1.0 and record == seen
            assert "return sum(values) / len(values)" in record and "\n" in record
        else:
            system = trajectory.messages[0]["content"]  # the gym's prompt: in the record, every space and newline is gone
            assert system in seen and system not in record and re.sub(r"\s", "", system[:100]) in record
