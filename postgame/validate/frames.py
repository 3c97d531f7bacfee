"""Snapshot table -> the pandas frames the expectations run on.

`sessions`: one row per record, nested objects flattened to dotted columns (`outcome.status`); lists, `extra` and
lineage left out. One frame per list of objects, named after it (`messages`: one row per message + `session_id`).
Strings become pandas `StringDtype` (Arrow-backed: no Python object per value, so a million sessions fit), integers
int64 and numbers float64, which is what `postgame.contract.gx` expects.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from postgame.contract.spec import AGENT_SESSION

_STRING = pd.StringDtype()


def _types(arrow_type: pa.DataType):
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return _STRING
    return None


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas(types_mapper=_types)


def list_fields() -> list[str]:
    return [f.name for f in AGENT_SESSION.fields if f.kind == "array"]


def sessions_frame(table: pa.Table) -> pd.DataFrame:
    keep = [f.name for f in AGENT_SESSION.fields if f.kind != "array" and f.name in table.column_names]
    return _to_pandas(table.select(keep).flatten())


def list_frame(table: pa.Table, name: str) -> pd.DataFrame:
    """One row per item of the list column `name`, with the session_id of its record."""
    column = table.column(name).combine_chunks() if table.num_rows else pa.array([], table.schema.field(name).type)
    items = pc.list_flatten(column)
    parents = pc.list_parent_indices(column)
    flat = pa.Table.from_struct_array(items) if len(items) else pa.table(
        {f.name: pa.array([], f.type) for f in column.type.value_type})
    flat = flat.append_column("session_id", pc.take(table.column("session_id"), parents))
    return _to_pandas(flat)
