"""A token-in/token-out LLM server for the verl tests: what verl's `LLMServerClient.generate` returns
(`TokenOutput`), served on CPU by a tiny transformers model with random weights (real tokens, real
logprobs) or replaying scripted assistant turns (their logprobs scored by the same model).

A GPU inference server (vLLM / SGLang) cannot run here; this stands in for it and nothing else.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any, Callable

import torch
from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM
from verl.workers.rollout.replica import TokenOutput

from uni_agent_gym.tokens.boundary import probe

TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"


def tiny_model_dir(
    directory: Path, tokenizer_name: str = "qwen2.5-instruct", *, chat_template: str | None = None, special: tuple[str, ...] = ()
) -> Path:
    """A model directory verl can load (config.json + a shared tokenizer); weights are made in memory.
    `chat_template` replaces the tokenizer's; `special` marks added tokens as special (as tokenizers
    that register their tool-call delimiters as special tokens do)."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in (TOKENIZERS / tokenizer_name).iterdir():
        shutil.copy(path, directory / path.name)
    if special:
        _mark_special(directory, special)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
        tokenizer.save_pretrained(directory)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=32768, tie_word_embeddings=True, architectures=["Qwen2ForCausalLM"],
    )  # fmt: skip
    config.save_pretrained(directory)
    return directory


def _mark_special(directory: Path, tokens: tuple[str, ...]) -> None:
    fast = json.loads((directory / "tokenizer.json").read_text())
    for token in fast["added_tokens"]:
        token["special"] = token["special"] or token["content"] in tokens
    (directory / "tokenizer.json").write_text(json.dumps(fast))
    config = json.loads((directory / "tokenizer_config.json").read_text())
    for token in config.get("added_tokens_decoder", {}).values():
        token["special"] = token["special"] or token["content"] in tokens
    (directory / "tokenizer_config.json").write_text(json.dumps(config))


class TokenServer:
    """`generate()` as verl calls it. `script(turn, repo_dir)` gives the text of each assistant turn
    (the stop token is added; `turn` counts the calls of one request id, `repo_dir` is None where the
    prompt names none); without one the model samples. Every call is kept in `calls`.

    As verl's vLLM/SGLang servers do, logprobs come back only when `sampling_params["logprobs"]` is true
    (verl's agent loop sets it from `rollout.calculate_log_probs`), and a turn ends at the first of
    `sampling_params["stop"]` found in its text, decoded as vLLM's stop checker does (`skip_special_tokens`,
    default true): a caller that relies on either without asking fails here as it would on a GPU."""

    def __init__(self, model_dir: Path, script: Callable[[int, str], str] | None = None, seed: int = 0) -> None:
        torch.manual_seed(seed)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = Qwen2ForCausalLM(Qwen2Config.from_pretrained(model_dir)).eval()
        boundary = probe(self.tokenizer)  # the token a turn ends on, as the rollout cache sees it
        self.stop_id = next(token for token in boundary.turn_end if token in boundary.stop_ids)
        self.script = script
        self.calls: list[dict[str, Any]] = []
        self.turns: dict[str, int] = {}
        self._lock = asyncio.Lock()

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any) -> TokenOutput:
        wanted = bool(sampling_params.get("logprobs"))  # verl: `0 if sampling_params.pop("logprobs", False) else None`
        async with self._lock:
            turn = self.turns.get(request_id, 0)
            self.turns[request_id] = turn + 1
            if self.script is not None:
                uploaded = re.search(r"<uploaded_files>\n(\S+)\n", self.tokenizer.decode(prompt_ids))
                repo_dir = uploaded.group(1) if uploaded else None  # the gym's prompt names it; a harness's may not
                ids = self.tokenizer.encode(self.script(turn, repo_dir), add_special_tokens=False) + [self.stop_id]
                ids = self._stopped(ids[: sampling_params["max_tokens"]], sampling_params)
                logprobs = await asyncio.to_thread(self._score, prompt_ids, ids) if wanted else None
            else:
                ids, logprobs = await asyncio.to_thread(self._sample, prompt_ids, sampling_params)
                ids = self._stopped(ids, sampling_params)
                logprobs = logprobs[: len(ids)] if wanted else None
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "ids": ids, "logprobs": logprobs,
                           "sampling_params": dict(sampling_params)})  # fmt: skip
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")

    def _stopped(self, ids: list[int], sampling_params: dict[str, Any]) -> list[int]:
        """`ids` up to the token whose text completes a stop string (kept, as vLLM keeps it in the ids)."""
        stops = sampling_params.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        skip = sampling_params.get("skip_special_tokens", True)
        for end in range(1, len(ids) + 1) if stops else ():
            if any(stop in self.tokenizer.decode(ids[:end], skip_special_tokens=skip) for stop in stops):
                return ids[:end]
        return ids

    @torch.no_grad()
    def _sample(self, prompt_ids: list[int], sampling_params: dict[str, Any]) -> tuple[list[int], list[float]]:
        prompt = torch.tensor([prompt_ids])
        out = self.model.generate(
            prompt, attention_mask=torch.ones_like(prompt), do_sample=True, temperature=max(sampling_params.get("temperature") or 1.0, 1e-3),
            top_k=0, top_p=1.0, max_new_tokens=sampling_params["max_tokens"], eos_token_id=self.stop_id, pad_token_id=self.stop_id,
            output_logits=True, return_dict_in_generate=True,
        )  # fmt: skip
        ids = out.sequences[0, len(prompt_ids) :].tolist()
        logprobs = [torch.log_softmax(logits[0].float(), -1)[token].item() for logits, token in zip(out.logits, ids)]
        return ids, logprobs

    @torch.no_grad()
    def _score(self, prompt_ids: list[int], ids: list[int]) -> list[float]:
        """Each scripted token's logprob given what precedes it. Only those positions get logits: the
        vocabulary projection of a whole 30k-token prompt cost most of the soak test's CPU."""
        logits = self.model(torch.tensor([prompt_ids + ids]), logits_to_keep=len(ids) + 1).logits[0, :-1].float()
        return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids)[:, None])[:, 0].tolist()
