"""A small DeepSeek tokenizer whose tool-call markers are pieces of its vocabulary, not added tokens, in a Llama-style
model (BPE with byte fallback, Metaspace pre-tokenizer and decoder): it decodes `<｜tool▁calls▁begin｜>` as
`<｜tool calls begin｜>`, as such a tokenizer does. Built here with the `tokenizers` library (no weights, nothing
downloaded); its chat template is one of tests/chat_templates."""

from __future__ import annotations

import string
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

TEMPLATES = Path(__file__).parent / "chat_templates"
MARKERS = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
           "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]  # fmt: skip
SPECIALS = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"]  # added tokens, as DeepSeek's


def metaspace_tokenizer(directory: Path, template: str) -> Path:
    """The tokenizer with tests/chat_templates/<template>.jinja, saved in `directory` (returned). Each marker is one
    vocabulary piece, reached by merges one character at a time; other text is characters, or bytes outside ASCII."""
    pieces = ["<unk>", *(f"<0x{byte:02X}>" for byte in range(256)), "▁", "｜", *(c for c in string.printable if not c.isspace())]
    merges = []
    for marker in MARKERS:
        for end in range(2, len(marker) + 1):
            if marker[:end] not in pieces:
                pieces.append(marker[:end])
                merges.append((marker[: end - 1], marker[end - 1]))
    model = Tokenizer(models.BPE({piece: index for index, piece in enumerate(pieces)}, merges, unk_token="<unk>", byte_fallback=True))
    model.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=False)
    model.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(replacement="▁", prepend_scheme="never", split=False)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=model, unk_token="<unk>", bos_token=SPECIALS[0], eos_token=SPECIALS[1],
                                        additional_special_tokens=SPECIALS[2:])  # fmt: skip
    tokenizer.chat_template = (TEMPLATES / f"{template}.jinja").read_text()
    tokenizer.save_pretrained(directory)
    return directory
