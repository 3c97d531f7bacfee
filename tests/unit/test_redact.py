"""Secrets are replaced by typed placeholders wherever they hide in a record; ordinary text is left alone."""

from __future__ import annotations

import copy
import json

import pytest

from postgame.contract.synthetic import sessions
from postgame.ingest.redact import RULES, redact_raw_line, redact_text, redact_value, rules_for

# Fake secrets with the real shapes (none of them is live).
AWS_KEY = "AKIAZ7Q3EXAMPLE0KEY1"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEK1"
GH_TOKEN = "ghp_" + "Zq8XbR2mN4vT6yU1iO3pA5sD7fG9hJ0kL2zX"
GH_PAT = "github_pat_11ABCDEFG0" + "x" * 40
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n"
    "-----END RSA PRIVATE KEY-----"
)
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        (f"export AWS_ACCESS_KEY_ID={AWS_KEY}", AWS_KEY, "aws_key"),
        (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws_secret"),
        (f"token {GH_TOKEN} works", GH_TOKEN, "github_token"),
        (f"pat={GH_PAT}", GH_PAT, "github_token"),
        (f"key:\n{PEM}\nend", "MIIEpAIBAAKCAQEA1c7", "private_key"),
        (f"Authorization: Bearer {JWT}", JWT, "bearer_token"),
        ("clone https://deploy:hunter2-s3cret@git.example.com/acme/repo.git", "hunter2-s3cret", "url_password"),
        ("mail alice.smith+ops@example.co.uk now", "alice.smith+ops@example.co.uk", "email"),
    ],
)
def test_each_kind_is_replaced_by_its_typed_placeholder(text, secret, kind):
    out = redact_text(text)
    assert secret not in out
    assert f"<REDACTED:{kind}>" in out


def test_labels_around_a_secret_are_kept():
    assert redact_text(f"Authorization: Bearer {JWT}") == "Authorization: Bearer <REDACTED:bearer_token>"
    assert (
        redact_text("https://deploy:pw123456@git.example.com/x")
        == "https://deploy:<REDACTED:url_password>@git.example.com/x"
    )


def test_a_private_key_cut_before_its_end_is_still_redacted():
    # guards: a truncated PEM block (message cut off) leaking its body
    text = "here: " + PEM[:120]
    assert redact_text(text) == "here: <REDACTED:private_key>"


def test_ordinary_session_text_is_untouched():
    for record in sessions(50, seed=3):
        line = json.dumps(record)
        assert redact_value(copy.deepcopy(record), rules_for(line)) == record
    assert redact_text("the bearer of bad news; git push; 3 tokens") == "the bearer of bad news; git push; 3 tokens"


def test_a_secret_spelled_with_json_escapes_is_found():
    # guards: `\u0041KIA...` in the raw line: the guards see no AKIA, the decoded string holds one
    raw = json.dumps({"content": AWS_KEY}).replace("A", "\\u0041", 1)
    assert rules_for(raw) == RULES
    assert redact_value(json.loads(raw), rules_for(raw)) == {"content": "<REDACTED:aws_key>"}
    assert AWS_KEY not in redact_raw_line(raw + "garbage")


def test_secrets_in_keys_and_in_fields_named_like_secrets():
    extra = {"password": "correct horse", "nested": {"client_secret": "abc", f"{AWS_KEY}": 1}, "api-key": "k1"}
    out = redact_value(extra, secret_keys=True)
    text = json.dumps(out)
    assert "correct horse" not in text and "abc" not in text and AWS_KEY not in text and "k1" not in text
    assert out["password"] == "<REDACTED:secret>"


def test_guards_select_only_rules_that_can_match():
    assert rules_for('{"content": "nothing here"}') == ()
    assert rules_for('{"patch": "@@ -1,2 +1,2 @@\\n-a\\n+b"}') == ()  # every patch has @@: no guard may fire on it
    assert [r.kind for r in rules_for('{"content": "mail a@b.io"}')] == ["email"]
    assert [r.kind for r in rules_for('{"u": "https:\\/\\/me:pw@git.example.com"}')] == ["url_password", "email"]
