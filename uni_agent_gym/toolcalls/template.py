"""What a chat template writes for an assistant turn that calls a tool: the ground truth of its format.

    [user "Hi"]                                   rendered with the generation prompt   -> PROMPT
    [user "Hi", assistant {tool_calls: [call]}]   rendered without one                  -> FULL
    call text = FULL after its common prefix with PROMPT, less the turn end (`<|im_end|>\\n`, `<|eot_id|>`)

The turn end is found the same way from a plain assistant turn. Templates disagree on how a call's
arguments arrive (Qwen and Llama take a dict; DeepSeek concatenates a JSON string), so a template
that fails on the dict is tried once more with the string.
"""

from __future__ import annotations

import json
import os
from typing import Any

from uni_agent_gym.toolcalls.base import ToolCall, UnknownToolCallFormatError

USER = {"role": "user", "content": "Hi"}
MARKER = "UNIAGENTGYMTURNEND"
CALL_ID = "call00001"  # 9 alphanumerics: Mistral's templates refuse other ids


def tokenizer_name(tokenizer: Any) -> str:
    """How errors name a tokenizer: its directory or hub name."""
    return str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)


def render_text(tokenizer: Any, messages: list[dict[str, Any]], *, generation_prompt: bool) -> str:
    """The template's text for `messages`."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)


def assistant_call_message(call: ToolCall, *, arguments_as_json: bool = False) -> dict[str, Any]:
    """An OpenAI-shaped assistant message holding `call`."""
    arguments = json.dumps(call.arguments, ensure_ascii=False) if arguments_as_json else call.arguments
    function = {"name": call.name, "arguments": arguments}
    return {"role": "assistant", "content": "", "tool_calls": [{"id": CALL_ID, "type": "function", "function": function}]}


def turn_end_text(tokenizer: Any) -> str:
    """What the template writes after an assistant turn's content (`<|im_end|>\\n`, `<|eot_id|>`, ...)."""
    text = render_text(tokenizer, [USER, {"role": "assistant", "content": MARKER}], generation_prompt=False)
    return text[text.rfind(MARKER) + len(MARKER) :] if MARKER in text else ""


def call_text(tokenizer: Any, call: ToolCall) -> str:
    """The text the template writes for an assistant turn that makes `call`, as the model would sample it
    (without the turn end)."""
    if not getattr(tokenizer, "chat_template", None):
        raise UnknownToolCallFormatError(f"The tokenizer {tokenizer_name(tokenizer)} has no chat template to take a tool-call format from")
    errors = []
    for arguments_as_json in (False, True):
        try:
            full = render_text(tokenizer, [USER, assistant_call_message(call, arguments_as_json=arguments_as_json)], generation_prompt=False)
            break
        except Exception as exc:  # a template's own raise_exception, or Jinja's TypeError on str + dict
            errors.append(f"{type(exc).__name__}: {exc}")
    else:
        raise UnknownToolCallFormatError(
            f"The chat template of {tokenizer_name(tokenizer)} fails to render an assistant turn with a tool call: {'; '.join(errors)}"
        )
    prompt = render_text(tokenizer, [USER], generation_prompt=True)
    text = full[len(os.path.commonprefix([prompt, full])) :]
    end = turn_end_text(tokenizer)
    return text[: -len(end)] if end and text.endswith(end) else text
