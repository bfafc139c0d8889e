"""A tokenizer loaded as its `tokenizer.json` declares it, and the round trip that shows text survives it.

transformers 5 builds the pipeline of some tokenizer classes in code instead of reading it from `tokenizer.json`:
`LlamaTokenizer` installs a Metaspace pre-tokenizer and decoder. DeepSeek-V3/R1, R1-Distill-Llama, DeepSeek-Coder and
deepseek-math ship a byte-level BPE `tokenizer.json` whose `tokenizer_config.json` names `LlamaTokenizerFast`, so
`AutoTokenizer` drops every space and newline when it encodes and again when it decodes (huggingface/transformers
#45488, #48206), and a rollout's token ids are not the text the model saw. The gym loads the class the files name;
where that class encodes or decodes differently from `tokenizer.json`'s own pipeline, it loads
`PreTrainedTokenizerFast`, which runs `tokenizer.json` as declared (vLLM does the same). A tokenizer whose class
agrees with its file, SentencePiece-style Metaspace ones included, stays as it is.

    tokenizer = load_tokenizer("deepseek-ai/DeepSeek-R1-Distill-Llama-8B")   # a directory or a hub name
    fidelity = read_fidelity(tokenizer)        # the round trip, and what tokenizer.json declares beside what runs
    fidelity.holds, fidelity.explanation()     # why text does not survive, and the fix
    faithful_copy(source, directory)           # the files, naming PreTrainedTokenizerFast (verl's tokenizer_path)
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import ConfigError

FAITHFUL_CLASS = "PreTrainedTokenizerFast"  # transformers' class that runs tokenizer.json as it is (5.x: TokenizersBackend)
# what a rollout's text holds; each must come back from decode(encode(text)) unchanged. None starts with a space:
# SentencePiece-style tokenizers (Llama 2, Mistral) drop a space at the very start of what they encode, by design
ROUND_TRIP_TEXTS = {
    "code": 'def mean(values):\n    """The mean."""\n    return sum(values) / len(values)\n',
    "spaces": "two  spaces,   three, and a trailing one ",
    "newlines": "line one\nline two\n\n\nafter blank lines\r\nand a Windows line end",
    "tabs": "\tone tab\n\t\ttwo tabs\tand one inside",
    "non-ASCII": "café, naïve, Straße, — 中文, ✓ 🙂",
}
# the files a tokenizer is made of (transformers' names); weights and the model's config are not
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "chat_template.jinja",
                   "chat_template.json", "additional_chat_templates")  # fmt: skip
PARTS = ("normalizer", "pre_tokenizer", "decoder")  # what a class may install over tokenizer.json, and what a round trip runs through
_SPACE = re.compile(r"\s*")
ISSUE = "transformers 5 builds that class's pipeline in code: huggingface/transformers#45488"


class TokenizerCorruptsText(ConfigError):
    """A tokenizer does not give back the text it encoded: token ids recorded with it are not the text the model saw."""


@dataclass(frozen=True)
class Fidelity:
    """What a loaded tokenizer does to text beside what its `tokenizer.json` declares."""

    loaded: str  # the loaded tokenizer's class
    named: str | None  # the class tokenizer_config.json names
    declared: str | None  # tokenizer.json's pipeline, in words (None: no tokenizer.json found)
    installed: str  # the loaded tokenizer's pipeline, in words
    agrees: bool  # it encodes and decodes the texts as tokenizer.json's own pipeline does
    broken: tuple[tuple[str, str, str], ...]  # (kind, text, what came back) for each text that did not survive

    @property
    def holds(self) -> bool:
        return not self.broken

    def summary(self) -> str:
        """One line: the class, whether it runs tokenizer.json as declared, the round trip."""
        how = f"runs tokenizer.json as declared ({self.declared})" if self.declared and self.agrees else \
            f"runs {self.installed}" + ("" if self.declared else " (no tokenizer.json to compare)")  # fmt: skip
        named = f" (tokenizer_config.json names {self.named})" if self.named and self.named not in (self.loaded, FAITHFUL_CLASS) else ""
        trip = f"holds ({', '.join(ROUND_TRIP_TEXTS)})" if self.holds else f"fails ({', '.join(kind for kind, _, _ in self.broken)})"
        return f"{self.loaded}{named} {how}; round trip {trip}"

    def explanation(self) -> str:
        """Why text does not survive ("" where it does); each caller adds its own fix."""
        if self.holds:
            return ""
        shown = "; ".join(f"{kind}: {json.dumps(text)} comes back as {json.dumps(got)}" for kind, text, got in self.broken[:2])
        if self.declared is not None and not self.agrees:
            return (f"it does not round-trip text ({shown}): tokenizer.json declares {self.declared}, and the class "
                    f"{self.named or self.loaded} (loaded as {self.loaded}) installed {self.installed} over it ({ISSUE}); "
                    f"{FAITHFUL_CLASS} runs tokenizer.json as declared")  # fmt: skip
        if self.declared is not None:
            return (f"it does not round-trip text ({shown}): {self.loaded} runs tokenizer.json as declared ({self.declared}), "
                    "so the file itself loses text and no class fixes it: use the model's own tokenizer files")  # fmt: skip
        return f"it does not round-trip text ({shown}): {self.loaded} runs {self.installed}, and there is no tokenizer.json to compare"


def read_fidelity(tokenizer: Any) -> Fidelity:
    """The round trip of `ROUND_TRIP_TEXTS` through `tokenizer`, and whether it runs its tokenizer.json as declared."""
    broken = tuple((kind, text, got) for kind, text in ROUND_TRIP_TEXTS.items() if (got := _round_trip(tokenizer, text)) != text)
    source = str(getattr(tokenizer, "name_or_path", "") or "")
    config = _read_json(_file(source, "tokenizer_config.json")) if source else None
    named = config.get("tokenizer_class") if isinstance(config, dict) else None
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:  # a Python tokenizer: no pipeline of tokenizer.json's to compare
        return Fidelity(type(tokenizer).__name__, named, None, "a Python tokenizer", True, broken)
    installed = _pipeline({part: _state(getattr(backend, part)) for part in PARTS})
    declared = _declared_parts(_file(source, "tokenizer.json")) if source else None
    if declared is None:
        return Fidelity(type(tokenizer).__name__, named, None, installed, True, broken)
    return Fidelity(type(tokenizer).__name__, named, _pipeline(declared), installed, _agrees(tokenizer, backend, declared), broken)


def require_round_trip(tokenizer: Any, what: str) -> Fidelity:
    """`read_fidelity`, or `TokenizerCorruptsText` naming `what` where text does not survive."""
    fidelity = read_fidelity(tokenizer)
    if not fidelity.holds:
        raise TokenizerCorruptsText(f"{what}: {fidelity.explanation()}")
    return fidelity


def _round_trip(tokenizer: Any, text: str) -> str:
    ids = tokenizer.encode(text, add_special_tokens=False)
    return tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def _agrees(tokenizer: Any, backend: Any, declared: dict[str, Any]) -> bool:
    """Whether `backend` (the loaded pipeline) encodes and decodes the texts as tokenizer.json's parts do over the
    same vocabulary. Flags that change nothing for these texts (a ByteLevel's offsets) do not count."""
    from tokenizers import Tokenizer

    if all(_state(getattr(backend, part)) == declared.get(part) for part in PARTS):
        return True
    # the declared parts, built by the tokenizers library around an empty model, set over the loaded vocabulary
    parsed = Tokenizer.from_str(json.dumps({"version": "1.0", **declared, "model": {"type": "BPE", "vocab": {}, "merges": []}}))
    reference = Tokenizer(backend.model)
    for part in PARTS:
        if declared.get(part) is not None:
            setattr(reference, part, getattr(parsed, part))
    for text in ROUND_TRIP_TEXTS.values():
        ids = reference.encode(text, add_special_tokens=False).ids
        if ids != tokenizer.encode(text, add_special_tokens=False):
            return False
        if reference.decode(ids, skip_special_tokens=False) != tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False):
            return False
    return True


def _declared_parts(path: Path | None) -> dict[str, Any] | None:
    """tokenizer.json's normalizer, pre-tokenizer and decoder (None: no readable file). They are read one top-level
    entry at a time, so the vocabulary, which the tokenizers library writes last, is not parsed (a Qwen3 file is 11 MB)."""
    if path is None or not path.is_file():
        return None
    decoder, parts = json.JSONDecoder(), {}
    try:
        text = path.read_text(encoding="utf-8")
        position = _SPACE.match(text, text.index("{") + 1).end()
        while set(PARTS) - parts.keys() and text[position] == '"':
            key, position = decoder.raw_decode(text, position)
            position = _SPACE.match(text, text.index(":", position) + 1).end()
            value, position = decoder.raw_decode(text, position)
            parts[key] = value
            position = _SPACE.match(text, position).end()
            position = _SPACE.match(text, position + 1).end() if text[position] == "," else position
    except (OSError, ValueError, IndexError):
        return None
    return {part: parts.get(part) for part in PARTS}


def _state(part: Any) -> Any:
    """A pipeline part as tokenizer.json writes it (None: none)."""
    return None if part is None else json.loads(part.__getstate__())


def _shape(part: dict[str, Any] | None) -> str:
    """{"type": "Sequence", "pretokenizers": [{"type": "Split"}, {"type": "ByteLevel"}]} -> "Sequence[Split, ByteLevel]"."""
    if not part:
        return "none"
    inner = part.get("pretokenizers") or part.get("decoders") or part.get("normalizers")
    return f"{part['type']}[{', '.join(_shape(item) for item in inner)}]" if inner else str(part.get("type"))


def _pipeline(parts: dict[str, Any]) -> str:
    """The pre-tokenizer and decoder (and a normalizer, where there is one), in words."""
    words = f"pre-tokenizer {_shape(parts.get('pre_tokenizer'))} and decoder {_shape(parts.get('decoder'))}"
    return f"normalizer {_shape(parts['normalizer'])}, {words}" if parts.get("normalizer") else words


def _file(source: str, name: str) -> Path | None:
    """`name` of the tokenizer at `source` (a directory, or a hub name in the local cache), if it has one."""
    directory = Path(source).expanduser()
    if directory.is_dir():
        return directory / name if (directory / name).exists() else None
    from transformers.utils import cached_file

    try:
        found = cached_file(source, name, local_files_only=True, _raise_exceptions_for_missing_entries=False)
    except (OSError, ValueError):
        return None
    return Path(found) if found else None


def _read_json(path: Path | None) -> Any:
    if path is None or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@lru_cache(maxsize=8)
def load_tokenizer(path: str, *, local_only: bool = False) -> Any:
    """The tokenizer at a local directory or a hub name, as its tokenizer.json declares it: the class its files name,
    or `PreTrainedTokenizerFast` where that class runs another pipeline. A hub name comes from the local cache where it
    is there; else (unless `local_only`) the hub is asked once whether it has the model, so a hub that does not answer
    fails at once (its client retries every file for about a minute before it gives up)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    tokenizer = reach(path, AutoTokenizer.from_pretrained, local_only=local_only)
    if getattr(tokenizer, "backend_tokenizer", None) is not None and not read_fidelity(tokenizer).agrees:
        tokenizer = reach(path, PreTrainedTokenizerFast.from_pretrained, local_only=True)  # its files are here now
    return tokenizer


def reach(path: str, load: Callable[..., Any], *, local_only: bool = False, what: str = "model.tokenizer") -> Any:
    """`load(path, **kwargs)` (a `from_pretrained`), a hub name from the local cache first and the hub asked once
    before a download; `ConfigError` naming `what` where nothing loads."""
    try:
        if local_only:
            return load(path, local_files_only=True)
        if not Path(path).expanduser().exists():
            try:
                return load(path, local_files_only=True)
            except OSError:
                _ask_the_hub(path)
        return load(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{what}: cannot load a tokenizer from {path!r}: {exc}") from None


def _ask_the_hub(name: str) -> None:
    """One request: does the hub answer, and does it have `name`? (`ConfigError` saying which is not so; the
    caller names the tokenizer.)"""
    import httpx
    from huggingface_hub import constants, model_info
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    where = "it is not in the local Hugging Face cache"
    if constants.HF_HUB_OFFLINE:
        raise ConfigError(f"{where} and HF_HUB_OFFLINE is set: give a tokenizer directory, or download it where the hub answers")
    try:
        model_info(name, timeout=constants.HF_HUB_ETAG_TIMEOUT)
    except httpx.TransportError as exc:
        raise ConfigError(f"{where}, and the hub at {constants.ENDPOINT} does not answer ({exc or type(exc).__name__}): give a "
                          "tokenizer directory, or run where the hub answers") from None  # fmt: skip
    except RepositoryNotFoundError:
        raise ConfigError(f"{where}, and the hub at {constants.ENDPOINT} has no model of that name (or it is private: hf auth login)") from None
    except HfHubHTTPError:
        return  # the hub answers; the download says what is wrong


def faithful_copy(source: str, directory: Path) -> Path:
    """The tokenizer files of `source` (a directory, or a hub name in the local cache) copied into `directory`, its
    tokenizer_config.json naming `PreTrainedTokenizerFast` (and no remote-code class), so that any `AutoTokenizer`
    (verl's `hf_tokenizer` among them) runs tokenizer.json as declared. Returns `directory`."""
    found = _file(source, "tokenizer.json")
    if found is None:
        raise ConfigError(f"{source} has no tokenizer.json (here or in the local Hugging Face cache) to copy")
    directory.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        origin = found.parent / name
        if origin.is_dir():
            shutil.copytree(origin, directory / name, dirs_exist_ok=True)
        elif origin.is_file():
            shutil.copyfile(origin, directory / name)  # the content: a hub cache's files are links into its blobs
    config = _read_json(found.parent / "tokenizer_config.json") or {}
    config.pop("auto_map", None)  # a remote-code tokenizer class would take precedence over the class named
    (directory / "tokenizer_config.json").write_text(json.dumps({**config, "tokenizer_class": FAITHFUL_CLASS}, indent=2, ensure_ascii=False))
    return directory
