"""Greedy line wrapping."""


def wrap(text: str, width: int) -> list[str]:
    """Split `text` into lines of at most `width` characters, breaking between words."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        if len(current) + len(word) + 1 < width:
            current = f"{current} {word}" if current else word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines
