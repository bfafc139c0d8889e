"""MkDocs hook: the config reference (`docs/reference/config.md`), generated from the pydantic models.

At build time it imports the config models and replaces the marker in that page with one table per config
section: every option as a dotted key, its type (with its bounds), its default (a `default_factory`'s value
too) and its `Field(description=...)`. The page is written from the code each time the site is built, so it
cannot drift from it; a model this hook cannot read fails the build.

Sections are found by walking `GymConfig` recursively: a field whose type is a model is a section (its class
docstring says what it is for), a field whose type is a union of models is one section per member (the
deployment types, picked by `deployment.type`). Models that are not part of `GymConfig` but that a user
writes too are listed in `EXTRA_MODELS`.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
import typing
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGE = "reference/config.md"
MARKER = "<!-- config-reference -->"

# Models outside GymConfig that a user writes: (module, class, title, where they are written).
EXTRA_MODELS = [
    (
        "uni_agent_gym.verl.gateway_loop",
        "GatewayLoopConfig",
        "The `GatewayAgentLoop` entry",
        "Keys of a `GatewayAgentLoop` entry in the agent-loop YAML (`configs/gateway_agent_loop.yaml`), beside "
        "the gym's own `settings`, `deployment` and `overrides` (config files and `key=value` overrides of the "
        "sections above, layered in that order; relative paths are taken from the YAML's directory).",
    ),
]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    from mkdocs.exceptions import PluginError

    if MARKER not in markdown:
        raise PluginError(f"docs/{PAGE} lost its marker {MARKER}: the config reference has nowhere to go")
    try:
        reference = render()
    except Exception as exc:  # a model the hook cannot read must fail the build, not leave a stale page
        raise PluginError(f"the config reference could not be generated: {type(exc).__name__}: {exc}") from exc
    return markdown.replace(MARKER, reference)


# ----- rendering -----


def render() -> str:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the working tree's package, installed or not
    from uni_agent_gym import config as gym_config

    out: list[str] = []
    out += _defaults_block(gym_config)
    for key, field in gym_config.GymConfig.model_fields.items():
        out += _section(key, field.annotation, gym_config)
    for module_name, class_name, title, where in EXTRA_MODELS:
        with warnings.catch_warnings():  # verl and Ray warn about their own imports
            warnings.simplefilter("ignore")
            model = getattr(importlib.import_module(module_name), class_name)
        out += [f"## {title}", "", where, ""]
        out += _tables("", model, level=3, title=f"`{class_name}`")
    return "\n".join(out).rstrip() + "\n"


def _defaults_block(gym_config: types.ModuleType) -> list[str]:
    """The whole default config, as `check-config` would read it."""
    import yaml

    defaults = gym_config.GymConfig().model_dump(mode="json")
    text = yaml.safe_dump(defaults, sort_keys=False, default_flow_style=False, width=100).rstrip()
    return [
        "## All defaults",
        "",
        "The config a run gets when it sets nothing (`GymConfig()`; the deployment type is "
        f"`{gym_config.DEFAULT_DEPLOYMENT_TYPE}` unless a layer names one):",
        "",
        "```yaml",
        text,
        "```",
        "",
    ]


def _section(key: str, annotation: Any, gym_config: types.ModuleType) -> list[str]:
    members = _union_models(annotation)
    if members:  # a discriminated union: one section per member
        default_type = gym_config.DEFAULT_DEPLOYMENT_TYPE
        out = [f"## `{key}`", ""]
        names = ", ".join(f"`{_type_tag(model)}`" for model in members)
        out += [
            f"One of {len(members)} types, picked by `{key}.type` ({names}; `{default_type}` when no layer names "
            f"one). Options of another type than the one in force are errors that name the type they belong to.",
            "",
        ]
        common = _common_base(members)
        if common is not None:
            shared = ", ".join(f"`{key}.{name}`" for name in common.model_fields)
            out += [f"{_doc(common)} They are {shared}, in every table below.", ""]
        for model in members:
            tag = _type_tag(model)
            out += _tables(key, model, level=3, title=f"`{key}.type: {tag}`")
        return out
    if _is_model(annotation):
        return _tables(key, annotation, level=2, title=f"`{key}`")
    raise TypeError(f"GymConfig.{key} is neither a model nor a union of models: {annotation!r}")


def _tables(prefix: str, model: type, level: int, title: str) -> list[str]:
    """The table of `model`'s options (dotted under `prefix`), then one for each nested model."""
    out = ["#" * level + " " + title, "", f"{_doc(model)} (`{model.__module__}.{model.__name__}`)", ""]
    out += ["| option | type | default | description |", "|---|---|---|---|"]
    nested = []
    for name, field in model.model_fields.items():
        key = f"{prefix}.{name}" if prefix else name
        if _is_model(field.annotation):
            nested.append((key, field.annotation))
        description = field.description or ""
        if not description and name == "type" and prefix and _type_tag(model) == field.default:
            description = f"Picks this table's options (`{key}: {field.default}`)."
        out.append(f"| `{key}` | {_cell(_type(field))} | {_cell(_default(field))} | {_cell(description)} |")
    out.append("")
    for key, sub in nested:
        out += _tables(key, sub, level=min(level + 1, 6), title=f"`{key}`")
    return out


def _doc(model: type) -> str:
    return " ".join((inspect.getdoc(model) or model.__name__).split())


def _type_tag(model: type) -> str:
    return model.model_fields["type"].default


def _common_base(members: list[type]) -> type | None:
    """The nearest base class all members share that declares fields (their common options)."""
    for base in members[0].__mro__[1:]:
        if all(issubclass(m, base) for m in members) and getattr(base, "model_fields", None):
            return base
    return None


def _is_model(annotation: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _union_models(annotation: Any) -> list[type]:
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if args and all(_is_model(arg) for arg in args):
            return list(args)
    return []


# ----- cells -----


def _type(field: Any) -> str:
    text = _type_name(field.annotation)
    bounds = []
    for item in field.metadata:
        for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
            value = getattr(item, attr, None)
            if value is not None:
                bounds.append(f"{sign} {_number(value)}")
    return f"{text}, {' and '.join(bounds)}" if bounds else text


def _type_name(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        if len(args) == 1:
            return f"`{args[0]}`"
        return "one of " + ", ".join(f"`{arg}`" for arg in args)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(arg) for arg in args if arg is not type(None)]
        text = " or ".join(names)
        return f"{text} or `null`" if type(None) in args else text
    if origin in (list, tuple, set, frozenset):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {_type_name(args[0])} to {_type_name(args[1])}" if args else "mapping"
    if annotation is typing.Any:
        return "any"
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "SecretStr": "string (secret)"}.get(
            annotation.__name__, annotation.__name__
        )
    return str(annotation)


def _default(field: Any) -> str:
    from pydantic import BaseModel, SecretStr
    from pydantic_core import PydanticUndefined

    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return f"the `{type(value).__name__}` defaults"
    if isinstance(value, SecretStr):
        return "(secret)"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _number(value: Any) -> str:
    return f"{value:_}".replace("_", ",") if isinstance(value, int) and abs(value) >= 10_000 else str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def missing_descriptions() -> list[str]:
    """Options without a description (for maintainers: `python docs/hooks/config_reference.py`)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from uni_agent_gym import config as gym_config

    missing = []

    def walk(prefix: str, model: type) -> None:
        for name, field in model.model_fields.items():
            key = f"{prefix}.{name}" if prefix else name
            if not field.description:
                missing.append(f"{key} ({model.__name__})")
            for sub in _union_models(field.annotation) or ([field.annotation] if _is_model(field.annotation) else []):
                walk(key, sub)

    walk("", gym_config.GymConfig)
    for module_name, class_name, _, _ in EXTRA_MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            walk("", getattr(importlib.import_module(module_name), class_name))
    return missing


if __name__ == "__main__":
    for line in missing_descriptions():
        print(line)
