"""Conversions between identifier cases (snake_case, camelCase, ...)."""

_SMALL_WORDS = {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to"}


def split_words(text):
    """Split an identifier or phrase into lowercase words.

    Word boundaries are non-alphanumeric characters, a lowercase letter or
    digit followed by an uppercase letter (``fooBar``), and the last capital
    of an acronym that is followed by a lowercase letter (``HTTPServer`` ->
    ``http``, ``server``).
    """
    words = []
    current = ""
    n = len(text)
    for i in range(n):
        ch = text[i]
        if not ch.isalnum():
            if current:
                words.append(current)
            current = ""
            continue
        if current and ch.isupper():
            prev = text[i - 1]
            nxt = text[i + 1] if i + 1 < n else ""
            if prev.islower() or prev.isdigit():
                words.append(current)
                current = ""
            elif prev.isupper() and nxt.islower():
                words.append(current)
                current = ""
        current += ch
    if current:
        words.append(current)
    return [w.lower() for w in words]


def to_snake_case(text):
    """Convert ``text`` to ``snake_case``."""
    return "_".join(split_words(text))


def to_kebab_case(text):
    """Convert ``text`` to ``kebab-case``."""
    return "-".join(split_words(text))


def to_camel_case(text):
    """Convert ``text`` to ``camelCase`` (first word lowercase)."""
    words = split_words(text)
    if not words:
        return ""
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def to_pascal_case(text):
    """Convert ``text`` to ``PascalCase`` (every word capitalised)."""
    return "".join(w[:1].upper() + w[1:] for w in split_words(text))


def to_title_case(text):
    """Title-case a phrase, keeping small words lowercase.

    Words are separated by single spaces in the result. The first and the
    last word are always capitalised; small words such as "of", "and",
    "the" are lowercase everywhere else.
    """
    words = text.split()
    last = len(words) - 1
    out = []
    for i, word in enumerate(words):
        lower = word.lower()
        if 0 < i < last and lower in _SMALL_WORDS:
            out.append(lower)
        else:
            out.append(lower[:1].upper() + lower[1:])
    return " ".join(out)
