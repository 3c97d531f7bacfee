"""The contract as a JSON Schema (draft 2020-12), generated from `spec.SPECS`: one schema for both versions.

The fields the versions share are plain properties; those that differ (the messages) are given by an `if`
`schema_version` is 2 `then` / `else` branch, and a version 2 message holds the role rules (`spec.NON_NULL_FOR`,
`spec.ONLY_FOR`) as `if` role / `then` clauses. The trajectory rules (`postgame.contract.trajectory`) are not
expressible here: ingest and the GX suite check them.

The shipped file `agent_session.schema.json` beside this module is this output; a test fails when they differ.
Regenerate it (and the GX suites) with:

    python -m postgame.contract
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from postgame.contract.spec import (
    AGENT_SESSION,
    AGENT_SESSION_V2,
    FLOAT_MAX,
    INT_MAX,
    NON_NULL_FOR,
    ONLY_FOR,
    SCHEMA_VERSIONS,
    Field,
)

SCHEMA_FILE = Path(__file__).with_name("agent_session.schema.json")
SCHEMA_ID = f"urn:postgame:schema:agent_session:v{max(SCHEMA_VERSIONS)}"


def _node(field: Field) -> dict[str, Any]:
    node: dict[str, Any] = {"description": field.description}
    kind: str | list[str] = field.kind
    if field.nullable:
        kind = [field.kind, "null"]
    node["type"] = kind
    if field.enum:
        node["enum"] = list(field.enum) + ([None] if field.nullable else [])
    if field.min_length is not None:
        node["minLength"] = field.min_length
    if field.pattern is not None:
        node["pattern"] = field.pattern
        node["format"] = "date-time"
    if field.kind in ("integer", "number"):
        if field.minimum is not None:
            node["minimum"] = field.minimum
        node["maximum"] = INT_MAX if field.kind == "integer" else FLOAT_MAX
    if field.unique:
        node["x-unique"] = True  # across the corpus; not expressible per record, enforced by ingest and validate
    if field.kind == "object":
        node["properties"] = {sub.name: _node(sub) for sub in field.fields}
        node["required"] = [sub.name for sub in field.fields if sub.required]
        node["additionalProperties"] = True
    if field.kind == "array":
        node["items"] = _node(field.element)
    return node


def _role_rules() -> list[dict[str, Any]]:
    """The role rules of a version 2 message as `if` / `then` clauses."""
    rules: list[dict[str, Any]] = []
    for name, roles in NON_NULL_FOR.items():
        rules.append(
            {
                "if": {"properties": {"role": {"enum": list(roles)}}, "required": ["role"]},
                "then": {"properties": {name: {"not": {"type": "null"}}}, "required": [name]},
            }
        )
    for name, roles in ONLY_FOR.items():
        rules.append(
            {
                "if": {"properties": {"role": {"not": {"enum": list(roles)}}}, "required": ["role"]},
                "then": {"properties": {name: {"type": "null"}}},
            }
        )
    return rules


def json_schema() -> dict[str, Any]:
    versions = " and ".join(f"v{v}" for v in SCHEMA_VERSIONS)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"{AGENT_SESSION.name} {versions}",
    }
    v1, v2 = _node(AGENT_SESSION), _node(AGENT_SESSION_V2)
    v2["properties"]["messages"]["items"]["allOf"] = _role_rules()
    schema.update(v1, properties=dict(v1["properties"]))
    version = dict(v1["properties"]["schema_version"], enum=list(SCHEMA_VERSIONS))
    version["description"] = "Version of this contract: 1, or 2 (messages in the OpenAI chat-completions shape)."
    schema["properties"]["schema_version"] = version
    differ = [
        name for name, node in v1["properties"].items() if name != "schema_version" and v2["properties"][name] != node
    ]
    for name in differ:
        del schema["properties"][name]
    schema["allOf"] = [
        {
            "if": {"properties": {"schema_version": {"const": 2}}, "required": ["schema_version"]},
            "then": {"properties": {name: v2["properties"][name] for name in differ}},
            "else": {"properties": {name: v1["properties"][name] for name in differ}},
        }
    ]
    return schema


def render() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"


def write(path: Path = SCHEMA_FILE) -> Path:
    path.write_text(render())
    return path
