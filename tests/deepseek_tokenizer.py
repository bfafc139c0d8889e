"""A small tokenizer of the DeepSeek shape: a byte-level BPE `tokenizer.json` (DeepSeek-V3's pre-tokenizer: digits,
CJK runs and a word/punctuation split, then ByteLevel; a ByteLevel decoder) whose `tokenizer_config.json` names
`LlamaTokenizerFast`, as DeepSeek-V3/R1, R1-Distill-Llama, DeepSeek-Coder and deepseek-math ship theirs. transformers
5 loads that class with a Metaspace pipeline of its own over the file (huggingface/transformers#45488). Built here with
the `tokenizers` library (no weights, nothing downloaded); its chat template is tests/chat_templates/deepseek-v3.jinja,
and its special and tool-call tokens are added tokens, as DeepSeek-V3's are."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors

TEMPLATES = Path(__file__).parent / "chat_templates"
BOS, EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
ADDED = ["<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
         "<｜tool▁sep｜>", "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]  # fmt: skip
# words merged into one piece each (a BPE vocabulary, not only bytes): what code and the toy's turns are full of
WORDS = [" return", "def", " def", "    ", "\n", "\n\n", " the", " values", "):", "json", "command", " test", "python", "stats"]
SPLIT = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|"
         r"\s+(?!\S)|\s+")  # fmt: skip


def deepseek_tokenizer(directory: Path, tokenizer_class: str = "LlamaTokenizerFast") -> Path:
    """The tokenizer saved in `directory` (returned): tokenizer.json, and a tokenizer_config.json naming `tokenizer_class`."""
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    vocab = {piece: index for index, piece in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    merges = []
    for word in WORDS:
        piece = "".join(part for part, _ in byte_level.pre_tokenize_str(word))
        for end in range(2, len(piece) + 1):
            if piece[:end] not in vocab:
                vocab[piece[:end]] = len(vocab)
                merges.append((piece[: end - 1], piece[end - 1]))
    model = Tokenizer(models.BPE(vocab, merges))
    model.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{N}{1,3}"), "isolated"),
        pre_tokenizers.Split(Regex("[一-龥\u3040-ゟ゠-ヿ]+"), "isolated"),
        pre_tokenizers.Split(Regex(SPLIT), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])  # fmt: skip
    model.decoder = decoders.ByteLevel()
    model.add_special_tokens([BOS, EOS])
    model.add_tokens(ADDED)
    model.post_processor = processors.TemplateProcessing(single=f"{BOS}:0 $A:0", pair=f"{BOS}:0 $A:0 {BOS}:1 $B:1",
                                                         special_tokens=[(BOS, model.token_to_id(BOS))])  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    model.save(str(directory / "tokenizer.json"))
    config = {"add_bos_token": True, "add_eos_token": False, "bos_token": BOS, "eos_token": EOS, "pad_token": EOS, "unk_token": None,
              "clean_up_tokenization_spaces": False, "legacy": True, "model_max_length": 16384, "tokenizer_class": tokenizer_class,
              "chat_template": (TEMPLATES / "deepseek-v3.jinja").read_text()}  # fmt: skip
    (directory / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False))
    return directory
