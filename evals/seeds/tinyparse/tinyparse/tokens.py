"""Tokenizer: turns source text into a list of tokens ending with an END token."""

from dataclasses import dataclass

TWO_CHAR_OPS = ("<=", ">=", "==", "!=")
ONE_CHAR_OPS = "+-*/%^<>"


class ParseError(ValueError):
    """Raised for malformed input; ``pos`` is the 0-based character offset."""

    def __init__(self, message, pos):
        super().__init__(f"{message} at position {pos}")
        self.pos = pos


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` is NUM, NAME, OP, LPAREN, RPAREN, COMMA or END."""

    kind: str
    text: str
    pos: int


def _read_number(text, i):
    """Return the end index of the number literal starting at ``i``.

    A literal is digits with at most one decimal point; it must not end
    with the point (``3.`` is rejected).
    """
    end = i
    seen_dot = False
    for ch in text[i:]:
        if ch == "." and not seen_dot:
            seen_dot = True
        elif not ch.isdigit():
            break
        end += 1
    if text[end - 1] == ".":
        raise ParseError("number ends with '.'", end - 1)
    return end


def _read_name(text, i):
    """Return the end index of the identifier (letters, digits, ``_``) starting at ``i``."""
    end = i + 1
    for ch in text[i + 1 :]:
        if not (ch.isalnum() or ch == "_"):
            break
        end += 1
    return end


def _scan(text, i):
    """Read one token starting at ``text[i]``.

    Returns ``(token, next_index)``; ``token`` is None for whitespace.
    Raises ParseError on a character that cannot start a token.
    """
    ch = text[i]
    if ch.isspace():
        return None, i + 1
    if ch.isdigit() or (ch == "." and i + 1 < len(text) and text[i + 1].isdigit()):
        j = _read_number(text, i)
        return Token("NUM", text[i:j], i), j
    if ch.isalpha() or ch == "_":
        j = _read_name(text, i)
        return Token("NAME", text[i:j], i), j
    if text[i : i + 2] in TWO_CHAR_OPS:
        return Token("OP", text[i : i + 2], i), i + 2
    if ch in ONE_CHAR_OPS:
        return Token("OP", ch, i), i + 1
    if ch in "(),":
        kind = {"(": "LPAREN", ")": "RPAREN", ",": "COMMA"}[ch]
        return Token(kind, ch, i), i + 1
    raise ParseError(f"unexpected character {ch!r}", i)


def tokenize(text):
    """Split ``text`` into tokens ending with an END token; whitespace is skipped.

    Raises ParseError on a character that cannot start a token.
    """
    tokens = []
    end = 0
    for i in range(len(text)):
        if i < end:
            continue  # still inside the previous token
        token, end = _scan(text, i)
        if token is not None:
            tokens.append(token)
    tokens.append(Token("END", "", len(text)))
    return tokens
