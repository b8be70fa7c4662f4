"""Secrets never leave: what is registered, and what is taken out of text."""

from __future__ import annotations

import base64
import json
import re

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.redaction import (
    REDACTED,
    decoded,
    excerpt,
    forget_secrets,
    looks_secret,
    redact,
    register_env_secrets,
    register_secret,
)


@pytest.fixture(autouse=True)
def clean_registry():
    forget_secrets()
    yield
    forget_secrets()


def test_a_registered_secret_and_its_json_form_are_redacted():
    register_secret('sk-ant-api03-"quoted"-secret')
    text = 'key sk-ant-api03-"quoted"-secret and {"k": "sk-ant-api03-\\"quoted\\"-secret"}'
    assert redact(text) == f'key {REDACTED} and {{"k": "{REDACTED}"}}'


def test_values_named_like_secrets_are_redacted_only_when_shaped_like_one():
    register_env_secrets(
        {
            "OPENAI_API_KEY": "sk-proj-AbCd1234EfGh5678",
            "PR_TOKEN": "RagaliQ Gate failed",  # words: a PR could blank out the comment
            "FAKE_SECRET": "hallucinations",  # one kind of character
            "HOME": "/root/some-long-home-folder-1234",  # not named like a secret
            "INPUT_GITHUB-TOKEN": "short",
        },
        names=("INPUT_GITHUB-TOKEN",),
    )
    text = "sk-proj-AbCd1234EfGh5678 RagaliQ Gate failed hallucinations /root/some-long-home"
    assert redact(text) == f"{REDACTED} RagaliQ Gate failed hallucinations /root/some-long-home"
    assert looks_secret("ghs_16C7e42F292c6912E7710c838347Ae178B4a")
    assert not looks_secret("correct horse battery staple")


def test_debug_tracebacks_are_redacted(tmp_path):
    secret = "ghp_Debug1234567890abcdefXYZ"
    config = tmp_path / "ragaliq.yaml"
    config.write_text(f"dataset: {secret}.jsonl\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["--debug", "validate", "--config", str(config)], env={"MY_TOKEN": secret}
    )
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert secret not in result.output and secret not in result.stderr


KEY = "sk-ant-api03-Redact_Me-0123456789abcdefXYZ"


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(ch):04x}" for ch in text)


@pytest.mark.parametrize(
    "shown",
    [
        KEY,
        KEY[:20] + "\n" + KEY[20:],  # wrapped by a gateway's error page
        KEY[:20] + "\r\n" + KEY[20:],
        KEY[:10] + "  " + KEY[10:30] + "\r\n\t" + KEY[30:],
        "\u00ad".join(KEY),  # a soft hyphen between every character
        KEY[:5] + "\u200b" + KEY[5:],  # a zero-width space
        KEY[:20] + "\\n" + KEY[20:],  # echoed as a JSON string, wrapped
        KEY[:20] + "\\r\\n" + KEY[20:],
        KEY[:20] + "\\t" + KEY[20:],
        KEY[:20] + "\\f" + KEY[20:],
        KEY[:20] + "\\b" + KEY[20:],
        "\\n".join(KEY[i : i + 7] for i in range(0, len(KEY), 7)),
        _escaped(KEY),  # every character a \uXXXX escape
        KEY[:12] + _escaped(KEY[12:14]) + KEY[14:],
        KEY[:12] + "\\u000a" + KEY[12:],  # a line break written as \u000a
    ],
    ids=[
        "as written",
        "line break",
        "CR LF",
        "spaces",
        "soft hyphens",
        "zero width",
        "JSON \\n",
        "JSON \\r\\n",
        "JSON \\t",
        "JSON \\f",
        "JSON \\b",
        "JSON \\n every 7",
        "JSON \\u every character",
        "JSON \\u some characters",
        "JSON \\u000a",
    ],
)
def test_a_secret_split_escaped_or_wrapped_is_redacted(shown):
    register_secret(KEY)
    assert redact(f"echo: {shown}!") == f"echo: {REDACTED}!"


@pytest.mark.parametrize("wrap", ["\n", "\r\n", "\\n", "\\r\\n"], ids=repr)
def test_a_key_echoed_in_a_json_string_wrapped_by_a_gateway_is_redacted(wrap):
    register_secret(KEY)
    body = json.dumps({"error": f"invalid x-api-key {KEY[:16]}{wrap}{KEY[16:]}"})
    assert KEY[16:24] not in redact(body)
    assert redact(body).startswith('{"error": "invalid x-api-key [redacted]')


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        ('sk-ant-"quoted"-0123456789', 'sk-ant-\\"quoted\\"-0123456789'),
        ("sk-ant-back\\slash-0123456789", "sk-ant-back\\\\slash-0123456789"),
        ("sk-ant-sla/sh-0123456789", "sk-ant-sla\\/sh-0123456789"),
    ],
    ids=['\\"', "\\\\", "\\/"],
)
def test_a_secret_with_a_character_json_escapes_is_redacted_either_way(secret, shown):
    register_secret(secret)
    assert redact(f"a {shown} b") == f"a {REDACTED} b"
    assert redact(f"a {secret} b") == f"a {REDACTED} b"


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"Authorization: Bearer "])
def test_a_base64_encoded_secret_is_redacted_at_any_alignment(prefix):
    register_secret(KEY)
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(prefix + KEY.encode() + b" and more").decode()
        assert KEY[:8] not in redact(text)
        assert REDACTED in redact(text)
    wrapped = base64.encodebytes(prefix + KEY.encode() * 2).decode()  # MIME: 76-char lines
    assert REDACTED in redact(wrapped)


@pytest.mark.parametrize("wrap", ["\n", "\r\n", "\\n", "\\r\\n"], ids=repr)
@pytest.mark.parametrize("width", [4, 19, 30, 76])
def test_a_line_wrapped_base64_secret_is_redacted(wrap, width):
    register_secret(KEY)
    for prefix in (b"", b"a", b"ab"):
        encoded = base64.b64encode(prefix + KEY.encode()).decode()
        wrapped = wrap.join(encoded[i : i + width] for i in range(0, len(encoded), width))
        shown = redact(f'{{"blob": "{wrapped}"}}')
        assert REDACTED in shown
        assert not any(part in shown for part in encoded[4:-4].split(wrap) if len(part) >= 8), shown


def test_a_base64_secret_with_json_escaped_slashes_is_redacted():
    secret = "sk-ant-api03-Slash???Me-0123456789abcdef"  # its base64 holds "/"
    register_secret(secret)
    for prefix in (b"", b"a", b"ab"):
        encoded = base64.b64encode(prefix + secret.encode()).decode()
        assert "/" in encoded
        shown = redact(json.dumps({"blob": encoded}).replace("/", "\\/"))
        assert re.fullmatch(r'\{"blob": "[^"]{0,6}\[redacted\][^"]{0,6}"\}', shown), shown


def test_hostile_escaped_text_around_a_secret_is_left_as_it_was():
    register_secret(KEY)
    hostile = "\\n" * 100_000 + KEY[:30] + "\\u0041" * 50_000 + (" " * 1000 + KEY[:5]) * 100
    assert redact(hostile + KEY) == hostile + REDACTED


def test_a_secret_mostly_blank_is_matched_only_as_written():
    register_secret("a          b")
    register_secret("pass word with spaces")
    assert redact("ab a b a          b") == f"ab a b {REDACTED}"
    assert redact("pass  word with\nspaces") == REDACTED


def test_ordinary_text_is_left_alone():
    register_secret(KEY)
    text = "The refund window is 60 days; sk-ant is a prefix, not a key."
    assert redact(text) == text


def test_an_excerpt_of_a_servers_answer_decodes_every_escape_before_redacting():
    secret = "sk-ant-api03-excerpt-secret"
    register_secret(secret)
    referenced = "".join(f"&#{ord(ch)};" for ch in secret)
    hexed = "".join(f"&#x{ord(ch):x};" for ch in secret)
    percent = "".join(f"%{ord(ch):02X}" for ch in secret)
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in secret)
    twice = percent.replace("%", "%25")
    for form in (referenced, hexed, percent, escaped, twice):
        shown = excerpt(f"<p>bad key: {form}</p>")
        assert shown == "<p>bad key: [redacted]</p>", form
    assert excerpt("x" * 1000) == "x" * 299 + "…"
    cut = excerpt("y" * 290 + secret + " tail")
    assert secret[:5] not in cut  # redacted before it is cut, so no part of it is left


def test_decoding_stops_when_nothing_changes():
    assert decoded("100% of &amp; 5 \\u0041") == "100% of & 5 A"
