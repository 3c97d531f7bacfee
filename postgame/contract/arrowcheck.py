"""The contract checked on an Arrow table, column by column (pyarrow.compute): which rows the exact check must see.

    table = read_lines_strict(block)                # Arrow's JSON reader, contract schema, unknown keys an error
    verdict = suspect_rows(table)                   # -> ArrowVerdict
    verdict.suspect                                 # numpy bool per row: True -> the exact check decides

Ingest's fast path reads a block of lines with Arrow once and checks the columns here instead of each record in
Python. A row left unflagged passes `check.check_record` unchanged: no violation, nothing converted, no unknown key,
and its Arrow values are the ones the exact path would store. That holds for tables read as `read_lines_strict`
reads them (explicit contract schema, an unknown key anywhere fails the read, so do a wrongly typed value, an integral
float in an integer column and a key given twice); what the reader lets through is checked here:
- a null where the contract wants a value (Arrow reads an absent key and null alike);
- enums, minimums, string lengths, RFC 3339 timestamps (RE2 on the column, then the calendar: no 30 February);
- NaN / Infinity (Arrow reads them, JSON has no such numbers) and a negative zero (`-0` is the int 0 for `json`,
  `-0.0` for Arrow): both go to the exact path, which decides bit for bit.
An integer in a number field is read as a float: the value the exact path stores only below 2**53. Lines with a run
of 16 or more digits must not reach this check (ingest's pre-filter sends them to the exact path).

Where the contract tells an absent key from a null one (a required but nullable field, `task.environment`), the null
rows are returned in `null_if_present`: valid only if the line holds the key, which the caller checks on the line's
bytes (`has_key`). Like `fastcheck`, the check is a superset of the contract: a flagged row costs only time.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from postgame.contract.arrow import arrow_schema
from postgame.contract.spec import AGENT_SESSION, Field


def contract_schema() -> pa.Schema:
    """The contract's columns of the snapshot schema (no `extra`, no lineage)."""
    schema = arrow_schema()
    return pa.schema([schema.field(f.name) for f in AGENT_SESSION.fields])


_CONTRACT = contract_schema()


def read_lines_strict(block: bytes) -> pa.Table:
    """Lines (joined by newlines) read by Arrow's JSON reader as the contract's columns, one thread. Raises
    pyarrow's ArrowException on any line Arrow cannot read as the contract's types or that holds an unknown key.
    Every line must be a JSON object (Arrow crashes on a block that is a bare `null`): callers pass only lines that
    start with `{`."""
    import pyarrow.json as pj

    table = pj.read_json(
        io.BytesIO(block),
        read_options=pj.ReadOptions(use_threads=False, block_size=len(block) + 1),
        parse_options=pj.ParseOptions(explicit_schema=_CONTRACT, unexpected_field_behavior="error"),
    )
    return table.select(_CONTRACT.names).cast(_CONTRACT)


@dataclass
class ArrowVerdict:
    suspect: np.ndarray  # bool per row: the exact check must see the line
    null_if_present: dict[str, np.ndarray] = field(default_factory=dict)  # key -> rows valid only if the key is there


def _unique_names() -> frozenset[str]:
    names: dict[str, int] = {}

    def walk(f: Field) -> None:
        for sub in f.fields:
            names[sub.name] = names.get(sub.name, 0) + 1
            walk(sub)
        if f.items is not None:
            names[f.items.name] = names.get(f.items.name, 0) + 1
            walk(f.items)

    walk(AGENT_SESSION)
    return frozenset(n for n, count in names.items() if count == 1)


_UNIQUE = _unique_names()  # a key that names one field only: its presence in a line can be read off the bytes


def has_key(line: bytes, name: str) -> bool:
    """True when `line` holds the key `name` (followed by its colon). In a line without `\\u` escapes (ingest's
    pre-filter sends those to the exact path) and without unknown keys, only the field itself can match: inside a JSON
    string a quote is written `\\"`, and a string value is never followed by a colon."""
    key = b'"' + name.encode() + b'"'
    at = line.find(key)
    while at != -1:
        end = at + len(key)
        while line[end : end + 1] in (b" ", b"\t", b"\r", b"\n"):
            end += 1
        if line[end : end + 1] == b":":
            return True
        at = line.find(key, at + 1)
    return False


def _np(mask) -> np.ndarray:
    """A boolean Arrow array (nulls as False) as numpy."""
    return pc.fill_null(mask, False).to_numpy(zero_copy_only=False)


_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)


def _calendar_ok(values: pa.Array) -> np.ndarray:
    """`check._valid_date` on strings that matched the timestamp pattern (ASCII up to the day)."""
    year = pc.cast(pc.utf8_slice_codeunits(values, 0, 4), pa.int64()).to_numpy(zero_copy_only=False)
    month = pc.cast(pc.utf8_slice_codeunits(values, 5, 7), pa.int64()).to_numpy(zero_copy_only=False)
    day = pc.cast(pc.utf8_slice_codeunits(values, 8, 10), pa.int64()).to_numpy(zero_copy_only=False)
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    days = _MONTH_DAYS[month] + ((month == 2) & leap)
    return (year > 0) & (day >= 1) & (day <= days)


def _leaf_bad(values: pa.Array, f: Field) -> np.ndarray:
    """Rows whose (non-null) value breaks `f` or that the exact path must decide; nulls are judged by the caller."""
    ok = np.ones(len(values), bool)
    if f.kind == "string":
        if f.min_length:
            ok &= _np(pc.greater_equal(pc.utf8_length(values), f.min_length))
        if f.enum:
            ok &= _np(pc.is_in(values, value_set=pa.array(f.enum, pa.string())))
        if f.pattern:
            matched = _np(pc.match_substring_regex(values, f.pattern))  # RE2: `$` is the end, never before a \n
            where = np.flatnonzero(matched)
            matched[where] = _calendar_ok(values.take(pa.array(where)))
            ok &= matched
    elif f.kind == "integer":
        if f.enum:
            ok &= _np(pc.is_in(values, value_set=pa.array(f.enum, pa.int64())))
        if f.minimum is not None:
            ok &= _np(pc.greater_equal(values, f.minimum))
    elif f.kind == "number":
        numbers = values.to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            ok &= np.isfinite(numbers) & ~((numbers == 0) & np.signbit(numbers))
            if f.minimum is not None:
                ok &= numbers >= f.minimum
    return ~ok


def _bad(values: pa.Array, f: Field, *, item: bool, top: bool, out: ArrowVerdict) -> np.ndarray:
    """Rows of `values` (the column of field `f`) that break the contract or that the exact path must decide.
    `item`: `f` is a list's item (null means JSON null); `top`: not inside a list (presence is a line property)."""
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    if item:
        null_bad = not f.nullable
    elif f.required and not f.nullable:
        null_bad = True
    elif not f.required and f.nullable:
        null_bad = False
    elif top and f.required and f.name in _UNIQUE:  # null is valid, absent is not: the caller reads the bytes
        out.null_if_present[f.name] = ~valid
        null_bad = False
    else:  # absent and null differ, and the bytes cannot tell which (a key that other fields share, or in a list)
        null_bad = True
    bad = ~valid if null_bad else np.zeros(len(values), bool)
    if f.kind == "object":
        for i, sub in enumerate(f.fields):
            bad |= valid & _bad(values.field(i), sub, item=False, top=top, out=out)
    elif f.kind == "array":
        flat = pc.list_flatten(values)
        if len(flat):
            parents = pc.list_parent_indices(values).to_numpy(zero_copy_only=False)
            bad[parents[_bad(flat, f.element, item=True, top=False, out=out)]] = True
    else:
        bad |= valid & _leaf_bad(values, f)
    return bad


def suspect_rows(table: pa.Table) -> ArrowVerdict:
    """The verdict on a table read by `read_lines_strict` (see the module docstring)."""
    out = ArrowVerdict(np.zeros(table.num_rows, bool))
    for sub in AGENT_SESSION.fields:
        column = table.column(sub.name).combine_chunks()
        out.suspect |= _bad(column, sub, item=False, top=True, out=out)
    return out
