"""The config reference, written from the settings models so that it cannot go stale: `postgame.yaml.example` (every
section and key at its default, its description and rule as comments) and `docs/config.md` (a table per section).

    python -m postgame.configref            # in the repository root: rewrite postgame.yaml.example and docs/config.md
    python -m postgame.configref --check    # exit 1, naming the stale files, when they differ from the models

Pure apart from `main`: a settings model in, text out. What it reads off each field: the YAML key (its alias when it
has one) and the other names it is read under, the default, the type, bounds (`>= 1`), allowed literals and the
description; off each section: its description (the field's, else the model's docstring) and its cross-field rules
(the docstring of the model's `@model_validator`).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import annotated_types
import yaml
from pydantic import AliasChoices, BaseModel, SecretStr
from pydantic.fields import FieldInfo

from postgame.config import ENV_PREFIX, Config

EXAMPLE = Path("postgame.yaml.example")
REFERENCE = Path("docs/config.md")
COMMAND = "python -m postgame.configref"
WIDTH = 118
NBSP = "\u00a0"  # joins a rule's words while comments are wrapped

# The header of postgame.yaml.example: what the loader (postgame.config.load_config) does that no field says.
HEADER = [
    "postgame.yaml: copy this file to ./postgame.yaml, or point --config FILE or $POSTGAME_CONFIG at it. Which file "
    "is read, first match wins: --config FILE, $POSTGAME_CONFIG, ./postgame.yaml, else the built-in defaults.",
    "Every key is optional and every value here is its default: keep only what you change. An unknown key or a bad "
    "value stops every command with exit code 2 and one line naming the key, the value and what is allowed.",
    f"Env overrides win over the file: {ENV_PREFIX}<SECTION>__<KEY>=value, one __ per level, any case, the value "
    f"parsed as YAML: {ENV_PREFIX}EVAL__TIMEOUT_S=30, {ENV_PREFIX}FACTORY__SIMULATE__SECRET_RATE=0.1, "
    f"{ENV_PREFIX}PROMOTE__GUARD_SPLITS='{{eval: 0.1}}'. $POSTGAME_HOME sets `home`. A name without __ (such as "
    f"{ENV_PREFIX}AUTH_PASSWORD) is not an override.",
    "Check a config: postgame --config postgame.yaml status",
    f"Generated from the settings models (postgame/config.py, postgame/settings/) by `{COMMAND}`: edit the models, "
    "not this file. The same reference as tables: docs/config.md.",
]


@dataclass(frozen=True)
class Key:
    """One field of a settings model as the YAML sees it."""

    path: tuple[str, ...]  # YAML keys from the top: ("train", "max_steps")
    also: tuple[str, ...]  # other names the key is read under (old names)
    default: Any  # as YAML writes it (plain types)
    rule: str  # type, bounds, allowed values
    description: str
    section: type[BaseModel] | None  # the model of a nested section, else None
    optional: bool  # a section that is off (null) unless set


def _key(name: str, field: FieldInfo) -> tuple[str, tuple[str, ...]]:
    key = field.alias or name
    choices = field.validation_alias.choices if isinstance(field.validation_alias, AliasChoices) else []
    return key, tuple(str(c) for c in choices if c != key)


def _section_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the model, whether null is allowed) when the annotation is a nested section."""
    args = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
    return (models[0], type(None) in args) if models else (None, False)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def type_name(annotation: Any) -> str:
    """How a reader writes a value of this type in YAML."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return " | ".join(str(a) for a in args)
    if _is_union(annotation):
        names = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"map of {type_name(args[0])} to {type_name(args[1])}"
    if annotation is SecretStr:
        return "str (secret: never printed)"
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(field: FieldInfo) -> list[str]:
    out = []
    for m in field.metadata:
        for kind, attr, sign in (
            (annotated_types.Ge, "ge", ">="),
            (annotated_types.Gt, "gt", ">"),
            (annotated_types.Le, "le", "<="),
            (annotated_types.Lt, "lt", "<"),
        ):
            if isinstance(m, kind):
                out.append(f"{sign} {getattr(m, attr)}")
        if isinstance(m, annotated_types.MinLen):
            out.append("not empty" if m.min_length == 1 else f"at least {m.min_length} long")
    return out


def rule(field: FieldInfo) -> str:
    """The type and its bounds: `int >= 1, <= 65535`, `auto | sft | dpo | grpo`, `str, not empty`."""
    bounds = _bounds(field)
    sep = " " if bounds and bounds[0][0] in "<>" else ", "
    return type_name(field.annotation) + (sep + ", ".join(bounds) if bounds else "")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, Path):
        return str(value)
    return value


def keys(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[Key]:
    """Every field of `model`, depth first, nested sections right after the key that holds them."""
    for name, field in model.model_fields.items():
        key, also = _key(name, field)
        section, optional = _section_model(field.annotation)
        default = field.get_default(call_default_factory=True)
        description = field.description or (_doc(section) if section else "")
        yield Key(
            path=(*prefix, key),
            also=also,
            default=None if section else _plain(default),
            rule="section" if section else rule(field),
            description=description,
            section=section,
            optional=optional,
        )
        if section is not None:
            yield from keys(section, (*prefix, key))


def _doc(model: type[BaseModel]) -> str:
    return " ".join(textwrap.dedent(model.__doc__ or "").split())


def cross_field_rules(model: type[BaseModel]) -> list[str]:
    """The docstrings of the model's `@model_validator`s: the rules across its fields."""
    validators = model.__pydantic_decorators__.model_validators.values()
    return [" ".join((v.func.__doc__ or "").split()) for v in validators if v.func.__doc__]


def _scalar(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip()
    return text.removesuffix("\n...").strip()


def _comment(text: str, indent: str, keep: str = "") -> list[str]:
    """`text` as comment lines; `keep` (a rule) is appended in brackets and never broken across lines."""
    if keep:
        text = f"{text} [{keep.replace(' ', NBSP)}]".strip()
    lines = (
        textwrap.wrap(
            text,
            WIDTH - len(indent) - 2,
            initial_indent=f"{indent}# ",
            subsequent_indent=f"{indent}# ",
            break_on_hyphens=False,
        )
        if text
        else []
    )
    return [line.replace(NBSP, " ") for line in lines]


def _also(k: Key) -> str:
    return f" Also read as `{'`, `'.join(k.also)}:` (an older name)." if k.also else ""


def example_yaml(model: type[BaseModel] = Config) -> str:
    """`postgame.yaml.example`: every key at its default, each under a comment with its description and rule."""
    lines = [line for paragraph in HEADER for line in _comment(paragraph, "")] + [""]
    off: tuple[str, ...] | None = None  # an optional section: written commented out, at its model's defaults
    for k in keys(model):
        depth = len(k.path) - 1
        indent = "  " * depth
        commented = off is not None and k.path[: len(off)] == off
        if not commented:
            off = None
        mark = "# " if commented else ""
        if depth == 0 and k.section is not None and lines[-1]:
            lines.append("")
        lines += _comment(k.description + _also(k), indent, "" if k.section else k.rule)
        if k.section is not None and not commented:
            lines += [line for r in cross_field_rules(k.section) for line in _comment(f"Rule: {r}", indent)]
        if k.section is not None and k.optional:
            lines += [f"{indent}{k.path[-1]}: null    # off; to turn it on, replace null with the keys below"]
            off = k.path
        elif k.section is not None:
            lines.append(f"{indent}{mark}{k.path[-1]}:")
        else:
            lines.append(f"{indent}{mark}{k.path[-1]}: {_scalar(k.default)}")
    return "\n".join(lines) + "\n"


def _prose(text: str) -> str:
    """Markdown text: `<` outside code spans escaped (`<home>` would be read as an HTML tag and vanish)."""
    parts = text.split("`")
    return "`".join(p.replace("<", "&lt;") if i % 2 == 0 else p for i, p in enumerate(parts))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_md(model: type[BaseModel] = Config) -> str:
    """`docs/config.md`: one table per section (key, default, type and rule, description)."""
    out = [
        "# Configuration reference",
        "",
        f"Generated from the settings models by `{COMMAND}`; do not edit by hand. Every key is optional; the",
        "defaults below are what runs without a file. The same keys, as a file to copy:",
        "[`postgame.yaml.example`](../postgame.yaml.example).",
        "",
        "Which file is read, first match wins: `--config FILE`, `$POSTGAME_CONFIG`, `./postgame.yaml`, the defaults.",
        f"Env overrides win over the file: `{ENV_PREFIX}<SECTION>__<KEY>=value` (one `__` per level, any case, the",
        f"value parsed as YAML), e.g. `{ENV_PREFIX}EVAL__TIMEOUT_S=30`, "
        f"`{ENV_PREFIX}FACTORY__SIMULATE__SECRET_RATE=0.1`; `$POSTGAME_HOME` sets `home`.",
        "An unknown key or a bad value stops every command with exit code 2 and one line naming the key, the value",
        "and what is allowed.",
        "",
    ]
    tables: dict[tuple[str, ...], list[Key]] = {(): []}
    sections: list[tuple[tuple[str, ...], Key | None]] = [((), None)]
    for k in keys(model):
        tables.setdefault(k.path[:-1], []).append(k)
        if k.section is not None:
            sections.append((k.path, k))
            tables.setdefault(k.path, [])
    for path, section in sections:
        rows = [k for k in tables[path] if k.section is None]
        out += [f"## `{'.'.join(path)}`" if path else "## Top level", ""]
        if section is not None:
            out += [
                _prose(section.description)
                + _also(section)
                + (" Off unless set (`null` by default)." if section.optional else ""),
                "",
            ]
            out += [f"- Rule: {_prose(r)}" for r in cross_field_rules(section.section)] if section.section else []
            out += [""] if section.section and cross_field_rules(section.section) else []
        subsections = [k for k in tables[path] if k.section is not None]
        if subsections:
            out += ["Sections: " + ", ".join(f"`{'.'.join(k.path)}`" for k in subsections) + ".", ""]
        if rows:
            out += ["| key | default | type and rule | description |", "|---|---|---|---|"]
            out += [
                f"| `{k.path[-1]}` | `{_cell(_scalar(k.default))}` | {_cell(_prose(k.rule))} | "
                f"{_cell(_prose(k.description + _also(k)))} |"
                for k in rows
            ]
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the config reference from the settings models.")
    parser.add_argument("--check", action="store_true", help="Only compare; exit 1 naming the stale files.")
    parser.add_argument("--root", type=Path, default=Path("."), help="The repository root (default: here).")
    args = parser.parse_args(argv)
    wanted = {args.root / EXAMPLE: example_yaml(), args.root / REFERENCE: reference_md()}
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path} differs from the settings models: run `{COMMAND}`", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
