"""Secrets never reach the audit: crypt hashes, $0$ clear texts, $8$ credentials, named ones."""

from __future__ import annotations

import pytest

from controller.audit.redact import REDACTED, redact


@pytest.mark.parametrize(
    "secret",
    [
        "$0$hunter2",
        "$6$saltsalt$Q1w2E3r4T5y6U7i8O9p0",
        "$5$rounds=5000$abc$def",
        "$1$abc$def",
        "$8$Z0FBQUFBQm5lcnlwdGVk",
    ],
)
def test_dollar_secrets_are_redacted(secret: str) -> None:
    text = redact(f"user alice set password {secret} at 12:00")
    assert secret not in text
    assert REDACTED in text
    assert text.startswith("user alice set password ")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('{"password": "s3cr3t"}', '{"password": "<redacted>"}'),
        ("password=s3cr3t; next", "password=<redacted>; next"),
        ("<password>s3cr3t</password>", "<password><redacted></password>"),
    ],
)
def test_named_secrets_are_redacted(text: str, kept: str) -> None:
    assert redact(text) == kept


def test_ordinary_text_is_left_alone() -> None:
    text = "edit-config: 2 change(s): /rc-test:top/name, /ietf-system:system/hostname"
    assert redact(text) == text
