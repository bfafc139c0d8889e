"""Each token's own text: what a token view shows for a record of ids (the trajectory records the training
loops write, and the viewer when a record has no texts)."""

from __future__ import annotations

from typing import Any


def token_texts(tokenizer: Any, ids: list[int]) -> list[str]:
    """Each id decoded on its own, special tokens kept and spaces untouched (so the texts join to the decoded whole)."""
    return tokenizer.batch_decode([[token] for token in ids], skip_special_tokens=False, clean_up_tokenization_spaces=False)
