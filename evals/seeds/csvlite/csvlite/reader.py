"""Parsing CSV text into rows of strings."""


class CSVError(ValueError):
    """Malformed CSV input; ``line`` is the 1-based line where it was found."""

    def __init__(self, message, line):
        super().__init__("line %d: %s" % (line, message))
        self.line = line


def _check_dialect(delimiter, quotechar):
    if len(delimiter) != 1 or len(quotechar) != 1:
        raise ValueError("delimiter and quotechar must be single characters")
    if delimiter == quotechar:
        raise ValueError("delimiter and quotechar must differ")
    if delimiter in "\r\n" or quotechar in "\r\n":
        raise ValueError("newline cannot be a delimiter or quotechar")


def _read_quoted(text, start, quotechar, line):
    """Read the quoted field whose opening quote is at ``text[start]``.

    Return ``(value, index_after_closing_quote, line)``; ``line`` is advanced
    for every newline inside the field.
    """
    chars = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quotechar:
            if i + 1 < n and text[i + 1] == quotechar:
                chars.append(quotechar)
                i += 2
                continue
            return "".join(chars), i + 1, line
        if ch == "\n":
            line += 1
        chars.append(ch)
        i += 1
    raise CSVError("unterminated quoted field", line)


def iter_records(text, delimiter=",", quotechar='"'):
    """Yield each record of ``text`` as a list of field strings.

    A quoted field may contain the delimiter, newlines and doubled quote
    characters (``""`` stands for one ``"``). Lines may end in ``\\n``,
    ``\\r\\n`` or ``\\r``; a final line ending does not produce an extra
    empty record. Blank lines produce ``[""]``.
    """
    _check_dialect(delimiter, quotechar)
    row, field = [], []
    after_quote = False  # just closed a quoted field
    line = 1
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quotechar and not field:
            value, i, line = _read_quoted(text, i, quotechar, line)
            field.append(value)
            after_quote = True
            continue
        if ch == delimiter:
            row.append("".join(field))
            field, after_quote = [], False
        elif ch == "\n" or ch == "\r":
            if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            row.append("".join(field))
            yield row
            row, field, after_quote = [], [], False
            line += 1
        elif after_quote:
            raise CSVError("unexpected character after closing quote", line)
        else:
            field.append(ch)
        i += 1
    if field or row:
        row.append("".join(field))
        yield row


def parse(text, delimiter=",", quotechar='"', skip_blank=False):
    """Return all records of ``text`` as a list of lists.

    With ``skip_blank`` true, records consisting of a single empty field
    (blank lines) are dropped.
    """
    rows = []
    for row in iter_records(text, delimiter, quotechar):
        if skip_blank and row == [""]:
            continue
        rows.append(row)
    return rows


def parse_line(line, delimiter=",", quotechar='"'):
    """Parse exactly one record; raise CSVError if ``line`` holds more."""
    rows = parse(line, delimiter, quotechar)
    if len(rows) > 1:
        raise CSVError("expected a single record", 2)
    return rows[0] if rows else []
