"""Greedy word wrapping, centring and indentation."""


def wrap(text, width):
    """Wrap ``text`` into lines of at most ``width`` characters.

    Words are separated by whitespace and packed greedily: a word goes on
    the current line if the line plus one space plus the word still fits.
    A word longer than ``width`` is split into chunks of ``width``
    characters. Returns a list of lines (empty for blank text).
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines = []
    line = ""
    for word in text.split():
        chunks = [word[k : k + width] for k in range(0, len(word), width)]
        for chunk in chunks[:-1]:
            if line:
                lines.append(line)
                line = ""
            lines.append(chunk)
        word = chunks[-1]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line = line + " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def center(text, width, fill=" "):
    """Centre ``text`` in a field of ``width`` characters.

    When the padding cannot be split evenly the extra fill character goes
    on the right. Text that is already at least ``width`` long is returned
    unchanged.
    """
    total = width - len(text)
    if total <= 0:
        return text
    left = total // 2
    right = total - left
    return fill * left + text + fill * right


def indent(text, prefix, skip_first=False):
    """Add ``prefix`` in front of every non-blank line of ``text``.

    Blank lines (empty or only whitespace) are left untouched. With
    ``skip_first`` the first line is not indented either.
    """
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if (skip_first and i == 0) or not line.strip():
            out.append(line)
        else:
            out.append(prefix + line)
    return "\n".join(out)
