"""Mapping rows onto a header."""

from .reader import CSVError


def to_dicts(rows, header=None, strict=True, fill=None):
    """Convert rows to dicts keyed by ``header``.

    If ``header`` is None the first row is the header. Short rows are padded
    with ``fill``. Long rows raise CSVError when ``strict`` is true, otherwise
    extra cells are dropped. Row numbers in errors count the header as row 1.
    """
    rows = list(rows)
    if header is None:
        if not rows:
            return []
        header, rows = rows[0], rows[1:]
        offset = 2
    else:
        offset = 1
    if len(set(header)) != len(header):
        raise CSVError("duplicate column names", 1)
    result = []
    for idx, row in enumerate(rows):
        if strict and len(row) > len(header):
            raise CSVError("too many fields", idx + offset)
        record = {}
        for i, name in enumerate(header):
            record[name] = row[i] if i < len(row) else fill
        result.append(record)
    return result


def from_dicts(records, fieldnames=None, include_header=True, missing=""):
    """Convert dicts back into rows, optionally preceded by a header row.

    ``fieldnames`` defaults to the keys of the first record, in order. Keys
    missing from a record become ``missing``.
    """
    records = list(records)
    if fieldnames is None:
        fieldnames = list(records[0]) if records else []
    rows = [list(fieldnames)] if include_header else []
    for rec in records:
        rows.append([rec.get(name, missing) for name in fieldnames])
    return rows


def column(records, name):
    """Return the values of one column across all dict records."""
    return [rec[name] for rec in records]


def select_columns(rows, indices):
    """Return each row restricted to the given column ``indices`` (in order).

    Negative indices count from the end; an index past the end of a row
    yields an empty string.
    """
    out = []
    for row in rows:
        picked = []
        for i in indices:
            if -len(row) <= i < len(row):
                picked.append(row[i])
            else:
                picked.append("")
        out.append(picked)
    return out
