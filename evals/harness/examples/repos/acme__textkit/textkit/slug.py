"""URL slugs."""

import re


def slugify(text: str, sep: str = "-") -> str:
    """Lower-case words joined by `sep`: "Hello, World!" -> "hello-world"."""
    text = text.lower()
    return re.sub(r"[^a-z0-9]", sep, text)
