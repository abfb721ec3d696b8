"""`scan_secrets` names the JSON path and kind of values that look like secrets or personal data."""

from __future__ import annotations

import pytest

from windtunnel.importing import scan_secrets


def test_finds_each_kind_at_its_path() -> None:
    """Keys, bearer tokens, emails, phones, JWTs, private keys and credential fields are named."""
    value = {
        "headers": {"Authorization": "Bearer abcdEFGH12345678xyz"},
        "config": {"openai": "sk-proj-ABCDEFGHIJKLMNOPQRSTUV", "password": "hunter2"},
        "contacts": [{"email": "dana@harborfresh.io"}, {"phone": "+1 415 555 0142"}],
        "session": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl",
        "key file": "-----BEGIN RSA PRIVATE KEY-----\nMIIB...",
    }
    assert scan_secrets(value) == [
        ("$.headers.Authorization", "bearer_token"),
        ("$.config.openai", "api_key"),
        ("$.config.password", "credential_field"),
        ("$.contacts[0].email", "email"),
        ("$.contacts[1].phone", "phone"),
        ("$.session", "jwt"),
        ('$["key file"]', "private_key"),
    ]


def test_root_prefixes_every_path() -> None:
    """A caller scanning part of a document passes where that part lives."""
    assert scan_secrets(["ghp_abcdefghijklmnopqrstuvwxyz0123"], root="$.calls[2].args") == [
        ("$.calls[2].args[0]", "api_key")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "2026-08-02",
        "2026-08-02T10:00:00Z",
        "order A-1042",
        "INV-204 (1,840.50, due 31 July)",
        "call_9f2",
        "toolu_01GQx",
        "version 1.2.3.4",
        "uuid 3f0e9a1c-5d2b-4c7e-8f16-2a9b7d4e6c01",
    ],
)
def test_ordinary_values_are_not_flagged(text: str) -> None:
    """Dates, ids and amounts do not look like phone numbers or keys."""
    assert scan_secrets({"value": text}) == []


def test_redaction_markers_under_credential_keys_are_not_flagged() -> None:
    """A producer that already redacted gets no warning."""
    assert scan_secrets({"password": "[REDACTED]", "api_key": "***", "token": ""}) == []


def test_several_kinds_in_one_string_are_all_reported() -> None:
    """A text holding an email and a phone number is reported once per kind."""
    assert scan_secrets("Dana Reyes, dana@harborfresh.io, +1 415 555 0142") == [
        ("$", "email"),
        ("$", "phone"),
    ]


def test_reserved_example_domains_are_not_personal_data() -> None:
    """Addresses at RFC 2606/6761 reserved domains are synthetic and not flagged."""
    value = ["ops@bluewing.example", "a@example.com", "b@shop.test", "c@x.invalid", "d@bluewing.io"]
    assert scan_secrets(value) == [("$[4]", "email")]
