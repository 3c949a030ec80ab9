"""controller.datastore.secrets: $0$ passwords hashed, southbound passwords encrypted."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.auth import verify
from controller.datastore.api import Edit, EditOperation
from controller.datastore.secrets import (
    BUILT_IN,
    ENCRYPTED,
    KEY_FILE,
    SecretKind,
    Secrets,
    load_key,
)
from controller.errors import CatsError
from controller.model import Encoding, Schema
from controller.types import DataPath, SchemaPath

FORWARDER_PASSWORD = SchemaPath("/ietf-cats-steering:forwarders/forwarder/password")
USERS = "/ietf-system:system/authentication"


def fast_hash(password: str) -> str:
    from passlib.hash import sha512_crypt  # noqa: PLC0415

    return str(sha512_crypt.using(rounds=1000).hash(password))


@pytest.fixture(scope="module")
def schema() -> Iterator[Schema]:
    with Schema.for_server(()) as compiled:
        yield compiled


@pytest.fixture
def secrets(tmp_path: Path) -> Iterator[Secrets]:
    leaves = {**BUILT_IN, FORWARDER_PASSWORD: SecretKind.ENCRYPT}
    found = Secrets(load_key(tmp_path), leaves, fast_hash)
    yield found
    found.close()


def test_the_key_file_is_private_and_reused(tmp_path: Path) -> None:
    key = load_key(tmp_path)
    assert stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600
    assert load_key(tmp_path) == key


def test_a_clear_text_login_password_is_hashed(secrets: Secrets, schema: Schema) -> None:
    document = {"ietf-system:authentication": {"user": [{"name": "u", "password": "$0$s3cret"}]}}
    edit = Edit(EditOperation.MERGE, DataPath(USERS), json.dumps(document))
    (prepared,) = secrets.prepare(schema.context.cdata, [edit])
    assert "s3cret" not in (prepared.value or "")
    stored = json.loads(prepared.value or "")["ietf-system:authentication"]["user"][0]["password"]
    assert stored.startswith("$6$")
    assert verify("s3cret", stored)


def test_a_hash_is_stored_as_given(secrets: Secrets, schema: Schema) -> None:
    hashed = fast_hash("x")
    document = {"ietf-system:user": [{"name": "u", "password": hashed}]}
    edit = Edit(EditOperation.MERGE, DataPath(f"{USERS}/user[name='u']"), json.dumps(document))
    assert secrets.prepare(schema.context.cdata, [edit]) == [edit]


def test_a_southbound_password_is_encrypted_and_revealed(secrets: Secrets, schema: Schema) -> None:
    forwarder = {"name": "f1", "address": "127.0.0.1", "username": "cps", "password": "pw"}
    document = {"ietf-cats-steering:forwarders": {"forwarder": [forwarder]}}
    edit = Edit(EditOperation.MERGE, DataPath("/"), json.dumps(document))
    (prepared,) = secrets.prepare(schema.context.cdata, [edit])
    stored = json.loads(prepared.value or "")["ietf-cats-steering:forwarders"]["forwarder"][0]
    assert stored["password"].startswith(ENCRYPTED)
    assert secrets.reveal(stored["password"]) == "pw"
    # stored again as read back: kept, not encrypted twice
    again = Edit(EditOperation.MERGE, DataPath("/"), prepared.value)
    assert secrets.prepare(schema.context.cdata, [again]) == [again]


def test_xml_edits_are_rewritten_too(secrets: Secrets, schema: Schema) -> None:
    xml = (
        '<forwarders xmlns="urn:ietf:params:xml:ns:yang:ietf-cats-steering">'
        "<forwarder><name>f1</name><address>127.0.0.1</address><username>cps</username>"
        "<password>pw</password></forwarder></forwarders>"
    )
    edit = Edit(EditOperation.MERGE, DataPath("/"), xml, Encoding.XML)
    (prepared,) = secrets.prepare(schema.context.cdata, [edit])
    assert "<password>pw</password>" not in (prepared.value or "")
    assert ENCRYPTED in (prepared.value or "")


def test_a_value_encrypted_with_another_key_is_refused(
    secrets: Secrets, schema: Schema, tmp_path: Path
) -> None:
    other = Secrets(
        load_key(tmp_path / "other"), {FORWARDER_PASSWORD: SecretKind.ENCRYPT}, fast_hash
    )
    try:
        foreign = other.encrypt("pw")
    finally:
        other.close()
    forwarder = {"name": "f1", "address": "127.0.0.1", "username": "cps", "password": foreign}
    document = {"ietf-cats-steering:forwarders": {"forwarder": [forwarder]}}
    with pytest.raises(CatsError) as caught:
        secrets.prepare(
            schema.context.cdata, [Edit(EditOperation.MERGE, DataPath("/"), json.dumps(document))]
        )
    assert caught.value.items[0].tag == "invalid-value"
