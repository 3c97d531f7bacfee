"""Formatting rows as CSV text."""


def needs_quoting(value, delimiter=",", quotechar='"'):
    """Return True if ``value`` must be quoted to survive a round trip.

    That is when it contains the delimiter, the quote character or a line
    break, or has leading or trailing spaces. The empty string is not quoted.
    """
    if value == "":
        return False
    if delimiter in value or quotechar in value:
        return True
    if "\n" in value or "\r" in value:
        return True
    return value[0] == " " or value[-1] == " "


def quote_field(value, delimiter=",", quotechar='"', always=False):
    """Return ``value`` as a CSV field, quoting and escaping when needed.

    ``None`` becomes the empty field; other non-strings are converted with
    ``str``. Quote characters inside a quoted field are doubled.
    """
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    if always or needs_quoting(text, delimiter, quotechar):
        return quotechar + text.replace(quotechar, quotechar * 2) + quotechar
    return text


def format_row(row, delimiter=",", quotechar='"', always=False):
    """Return one record (without a line ending)."""
    if len(row) == 1 and row[0] in ("", None):
        # a lone empty field would read back as a blank line
        return quotechar * 2
    return delimiter.join(quote_field(v, delimiter, quotechar, always) for v in row)


def write(rows, delimiter=",", quotechar='"', line_ending="\n", always=False):
    """Return the text for all ``rows``, each terminated by ``line_ending``."""
    out = []
    for row in rows:
        out.append(format_row(row, delimiter, quotechar, always))
        out.append(line_ending)
    return "".join(out)
