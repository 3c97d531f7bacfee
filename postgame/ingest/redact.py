"""Secret redaction, applied to every text of a record before anything is stored.

    redact_text("key AKIAIOSFODNN7EXAMPLE")           # -> "key <REDACTED:aws_key>"
    redact_value(record, rules_for(line_text))        # every string of a parsed line, in place
    redact_value(extra_fields, secret_keys=True)      # + values of keys named like secrets (`password`, `api_key`)
    redact_json_text('{"cmd": "curl -u me:pw@h"}')    # a JSON text in a string (tool-call arguments): stays JSON

Types: aws_key, aws_secret (a 40-character secret next to its name), github_token, private_key (a PEM block, or its
start when the end is cut off), bearer_token, url_password (`scheme://user:PASSWORD@host`), email, and secret (the
string value of an unknown field named like a secret).

What it does not catch: secrets with no recognisable shape or name (a random string in prose), or one split across
two fields. Patterns err on the side of redacting: `git@github.com` is redacted as an e-mail address.

Speed: one combined regex costs ~0.5 ms on a 2 KB record. Instead each rule has a cheap guard (a substring, or a
regex with a literal prefix) that is run once on the raw line; only rules whose guard fires are applied to the
record's strings, and most lines fire none. A `\\u` escape in the raw line could spell anything: all rules apply.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern
    guard: Callable[[str, str], bool]  # (text, text.lower()) -> False when the pattern cannot match
    label: str | None = None  # a group kept in front of the placeholder (`Bearer `, `https://user:`)


def _search(*regexes: str) -> Callable[[str, str], bool]:
    compiled = [re.compile(r) for r in regexes]  # each with a literal prefix: the regex engine scans for it fast
    return lambda text, low: any(c.search(text) is not None for c in compiled)


def _after_escape(text: str, at: int) -> bool:
    """True when `text[at]` follows a JSON escape of whitespace (`\\n`, `\\t`, `\\r`) in a raw line: an odd run
    of backslashes before the letter. Patches in raw lines read `...\\n@@ -1 +1 @@`."""
    if at < 2 or text[at - 1] not in "ntr" or text[at - 2] != "\\":
        return False
    run, i = 0, at - 2
    while i >= 0 and text[i] == "\\":
        run, i = run + 1, i - 1
    return run % 2 == 1


def _userinfo_like(text: str) -> bool:
    """An `@` right after a character that can end a password (`user:pw@host`); not the `@@` of a patch hunk."""
    at = text.find("@")
    while at != -1:
        if at > 0 and text[at - 1] not in " \t\n/@" and not _after_escape(text, at):
            return True
        at = text.find("@", at + 1)
    return False


def _address_like(text: str, low: str) -> bool:
    """An `@` between two address characters. Patches are full of `@@ -1 +1 @@`: a bare `@` is no guard."""
    at = text.find("@")
    while at != -1:
        if 0 < at < len(text) - 1:
            before, after = text[at - 1], text[at + 1]
            if (
                (before.isalnum() or before in "._%+-")
                and (after.isalnum() or after == "-")
                and not _after_escape(text, at)
            ):
                return True
        at = text.find("@", at + 1)
    return False


# `://` as a raw line may spell it: `:\/\/` (escaped slashes), `:\\/\\/` (in a JSON text inside a string: tool-call
# arguments, whose backslashes the line escapes again), ...
_ESCAPED_SLASH = re.compile(r":\\+/")

RULES: tuple[Rule, ...] = (  # order matters: a PEM block first; url_password before email
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        lambda text, low: "PRIVATE KEY" in text,
    ),
    Rule(
        "aws_key",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}"
            r"(?![A-Z0-9])"
        ),  # glued to lower-case text (`keyAKIA...`) still counts
        _search(r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}"),
    ),
    Rule(
        "aws_secret",
        re.compile(
            r"(?P<label>(?i:aws_?secret(?:_?access)?_?key|secret_?access_?key)[\"']?\s*[:=]\s*"
            r"[\"']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
        lambda text, low: "secret" in low,
        label="label",
    ),
    Rule(
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        _search(r"gh[pousr]_|github_pat_"),
    ),
    Rule(
        "bearer_token",
        re.compile(r"(?P<label>\b(?i:bearer)\s+)[A-Za-z0-9\-._~+/]{12,}=*"),
        lambda text, low: "bearer" in low,
        label="label",
    ),
    Rule(
        "url_password",
        re.compile(r"(?P<label>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?=@)"),
        lambda text, low: _userinfo_like(text) and ("://" in text or _ESCAPED_SLASH.search(text) is not None),
        label="label",
    ),
    Rule(
        "email", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"), _address_like
    ),
)

# An unknown field with such a name holds a secret whatever its value looks like.
_SECRET_KEY = re.compile(
    r"(?i)^(?:.*[_\-.])?(?:password|passwd|secret|client[_\-]?secret|api[_\-]?key|access[_\-]?key|"
    r"secret[_\-]?key|private[_\-]?key|(?:auth|access|refresh|session)[_\-]?token)$"
)


def placeholder(kind: str) -> str:
    return f"<REDACTED:{kind}>"


def _keep_label(label: str, kind: str) -> Callable[[re.Match[str]], str]:
    """A `re.sub` replacement: the group `label` kept, followed by the placeholder of `kind`."""
    return lambda m: m.group(label) + placeholder(kind)


def rules_for(line_text: str) -> tuple[Rule, ...]:
    """The rules that may match somewhere in a raw JSON line (usually none)."""
    if "\\u" in line_text:
        return RULES
    low = line_text.lower()
    return tuple(rule for rule in RULES if rule.guard(line_text, low))


def redact_text(text: str, rules: tuple[Rule, ...] = RULES) -> str:
    """`text` with every secret replaced by a typed placeholder."""
    low = text.lower()
    for rule in rules:
        if rule.guard(text, low):
            if rule.label:
                text = rule.pattern.sub(_keep_label(rule.label, rule.kind), text)
            else:
                text = rule.pattern.sub(placeholder(rule.kind), text)
            low = text.lower()
    return text


def redact_value(value: Any, rules: tuple[Rule, ...] = RULES, *, secret_keys: bool = False) -> Any:
    """Redact every string of a parsed JSON value (dict keys too), in place where it can; returns the value.
    With `secret_keys`, the string value of a key named like a secret is replaced whole."""
    if isinstance(value, str):
        return redact_text(value, rules) if rules else value
    if isinstance(value, dict):
        for key in list(value):
            item = value[key]
            if secret_keys and isinstance(item, str) and item and _SECRET_KEY.match(key):
                new_item = placeholder("secret")
            else:
                new_item = redact_value(item, rules, secret_keys=secret_keys)
            new_key = redact_text(key, rules) if rules else key
            if new_key != key:
                del value[key]
                value[new_key] = new_item
            elif new_item is not item:
                value[key] = new_item
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = redact_value(item, rules, secret_keys=secret_keys)
    return value


def redact_json_text(text: str, rules: tuple[Rule, ...] = RULES) -> str:
    """A string holding a JSON text (a tool call's arguments), redacted value by value (keys too), so that it stays a
    JSON text; returned unchanged when nothing was redacted, else re-serialised. Text that is not JSON (a malformed
    call the model wrote) is read with its JSON escapes resolved, as `redact_raw_line` reads it (`\\u0041KIA...` could
    spell a secret): unchanged when that holds no secret, else that reading redacted."""
    if not rules:
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        seen = _JSON_ESCAPE.sub(_unescape, text)
        redacted = redact_text(seen, rules)
        return text if redacted == seen else redacted
    redacted = redact_value(copy.deepcopy(value), rules)
    return text if redacted == value else json.dumps(redacted, ensure_ascii=False)


_JSON_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[\"\\/bfnrt])")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    if code[0] == "u":
        point = int(code[1:], 16)
        return "\ufffd" if 0xD800 <= point <= 0xDFFF else chr(point)
    return _SIMPLE[code]


def redact_raw_line(text: str) -> str:
    """A line that is not valid JSON, made readable and safe for a quarantine entry: JSON escapes resolved first
    (`\\u0041KIA...` could spell a secret), then redacted. For people to read, not for parsing."""
    return redact_text(_JSON_ESCAPE.sub(_unescape, text))
