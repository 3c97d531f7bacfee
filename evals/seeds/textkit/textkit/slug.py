"""URL slugs and string truncation."""

_ACCENTS = {
    "à": "a", "á": "a", "â": "a", "ä": "a", "ã": "a", "å": "a",
    "è": "e", "é": "e", "ê": "e", "ë": "e",
    "ì": "i", "í": "i", "î": "i", "ï": "i",
    "ò": "o", "ó": "o", "ô": "o", "ö": "o", "õ": "o",
    "ù": "u", "ú": "u", "û": "u", "ü": "u",
    "ç": "c", "ñ": "n", "ß": "ss",
}


def _fold_char(ch):
    """Return the ASCII replacement for one lowercase character."""
    return _ACCENTS.get(ch, ch)


def slugify(text, separator="-", max_length=0):
    """Turn ``text`` into a lowercase URL slug.

    Letters and digits are kept (accented Latin letters are folded to ASCII),
    every run of other characters becomes a single ``separator``, and the
    separator never appears at the start or the end. When ``max_length`` is
    positive the slug is cut to at most that many characters, and then
    trailing separator characters are removed.
    """
    parts = []
    pending_sep = False
    for ch in text.lower():
        ch = _fold_char(ch)
        if ch.isascii() and ch.isalnum():
            if pending_sep and parts:
                parts.append(separator)
            parts.append(ch)
            pending_sep = False
        else:
            pending_sep = True
    slug = "".join(parts)
    if max_length > 0 and len(slug) > max_length:
        slug = slug[:max_length].rstrip(separator)
    return slug


def truncate(text, width, ellipsis="..."):
    """Shorten ``text`` to at most ``width`` characters.

    If the text already fits it is returned unchanged. Otherwise it is cut
    to ``width - len(ellipsis)`` characters, trailing whitespace of the cut
    part is dropped, and ``ellipsis`` is appended. If ``width`` is not
    larger than the ellipsis itself, the ellipsis is cut to ``width``
    characters instead. A negative ``width`` raises ``ValueError``.
    """
    if width < 0:
        raise ValueError("width must be non-negative")
    if len(text) <= width:
        return text
    if width <= len(ellipsis):
        return ellipsis[:width]
    keep = width - len(ellipsis)
    return text[:keep].rstrip() + ellipsis
