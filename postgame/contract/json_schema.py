"""The contract as a JSON Schema (draft 2020-12), generated from `spec.AGENT_SESSION`.

The shipped file `agent_session.schema.json` beside this module is this output; a test fails when they differ.
Regenerate it (and the GX suites) with:

    python -m postgame.contract
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from postgame.contract.spec import AGENT_SESSION, FLOAT_MAX, INT_MAX, SCHEMA_VERSION, Field

SCHEMA_FILE = Path(__file__).with_name("agent_session.schema.json")
SCHEMA_ID = f"urn:postgame:schema:agent_session:v{SCHEMA_VERSION}"


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
        node["items"] = _node(field.items)
    return node


def json_schema() -> dict[str, Any]:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
              "title": f"{AGENT_SESSION.name} v{SCHEMA_VERSION}"}
    schema.update(_node(AGENT_SESSION))
    return schema


def render() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"


def write(path: Path = SCHEMA_FILE) -> Path:
    path.write_text(render())
    return path
