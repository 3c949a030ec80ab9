"""Secrets in configuration: clear-text passwords hashed, southbound credentials encrypted.

Two kinds of leaf hold secrets (:class:`SecretKind`):

- ``HASH``: a login password of ``ietf-system`` (RFC 7317 ``crypt-hash``). A value ``$0$`` +
  clear text is a clear-text password that the server hashes before it is stored (RFC 7317
  ``crypt-hash`` description); the clear text never reaches the journal, a snapshot or a
  reply.
- ``ENCRYPT``: a credential the server must present in clear to a peer (the password the C-PS
  logs in to a forwarder or a C-SMA with). A value given in clear (with or without ``$0$``)
  is stored as ``$8$`` + base64(nonce, AES-256-GCM ciphertext and tag), with a key kept in a
  file of its own (``secrets.key`` in the state directory, mode 0600) and never in the
  datastore; :meth:`Secrets.reveal` gives the clear text back to the server's own code. A
  ``$8$`` value is stored as it is once it decrypts with this key (a copy between datastores
  of the same server), and refused otherwise.

Edits are rewritten before the core takes its lock: only an edit whose text names a secret
leaf is parsed (in the caller's libyang context), its secret values replaced and printed back;
hashing runs on a small bounded pool, never on the core's lock.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets as random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from passlib.hash import sha512_crypt

from controller.datastore import datapath
from controller.datastore.api import Edit
from controller.datastore.errors import refuse
from controller.model import native, nodes
from controller.types import SchemaPath

CLEAR = "$0$"
ENCRYPTED = "$8$"
KEY_FILE = "secrets.key"
_NONCE = 12


class SecretKind(Enum):
    """How a secret leaf is kept."""

    HASH = "hash"
    ENCRYPT = "encrypt"


#: The secret leaves every server has: the local users' passwords (RFC 7317 3.2).
BUILT_IN: dict[SchemaPath, SecretKind] = {
    SchemaPath("/ietf-system:system/authentication/user/password"): SecretKind.HASH
}


def load_key(state_dir: Path | None) -> bytes:
    """The encryption key of a state directory, created (mode 0600) on first use; a fresh key
    for a server without a state directory."""
    if state_dir is None:
        return AESGCM.generate_key(bit_length=256)
    path = state_dir / KEY_FILE
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        state_dir.mkdir(parents=True, exist_ok=True)
        key = AESGCM.generate_key(bit_length=256)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(key)
            out.flush()
            os.fsync(out.fileno())
    if len(key) != 32:  # noqa: PLR2004 - AES-256
        raise refuse("operation-failed", f"{path} is not a 32-byte key; remove it to make one")
    return key


def _sha512_crypt(password: str) -> str:
    """RFC 7317 ``crypt-hash`` ``$6$`` (SHA-512 crypt, passlib's default rounds)."""
    return str(sha512_crypt.hash(password))


class Secrets:
    """The secret leaves of a schema and how their values are kept."""

    def __init__(
        self,
        key: bytes,
        leaves: Mapping[SchemaPath, SecretKind],
        hash_password: Callable[[str], str] | None = None,
        *,
        workers: int = 2,
    ) -> None:
        self._aead = AESGCM(key)
        self._leaves = dict(leaves)
        self._hash = hash_password or _sha512_crypt
        self._names = {path.rsplit("/", 1)[-1].split(":")[-1] for path in self._leaves}
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="secrets")

    def close(self) -> None:
        """Stop the hashing pool."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- values ---------------------------------------------------------------------------

    def encrypt(self, clear: str) -> str:
        """``$8$`` + base64(nonce, ciphertext, tag) of a clear-text value."""
        nonce = random.token_bytes(_NONCE)
        sealed = self._aead.encrypt(nonce, clear.encode(), None)
        return ENCRYPTED + base64.b64encode(nonce + sealed).decode()

    def reveal(self, value: str) -> str:
        """The clear text of a stored secret (a value not in ``$8$`` form is returned as is:
        it was stored before encryption applied, or given by a test's seed)."""
        if not value.startswith(ENCRYPTED):
            return value[len(CLEAR) :] if value.startswith(CLEAR) else value
        try:
            raw = base64.b64decode(value[len(ENCRYPTED) :], validate=True)
            return self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], None).decode()
        except (binascii.Error, InvalidTag, ValueError, UnicodeDecodeError) as exc:
            raise refuse(
                "invalid-value",
                "an encrypted secret that this server's key does not decrypt; give it in clear",
            ) from exc

    def _stored(self, kind: SecretKind, value: str, path: str) -> str | None:
        """The value to store for a secret leaf (None: keep it as given)."""
        if kind is SecretKind.HASH:
            if not value.startswith(CLEAR):
                return None
            return self._pool.submit(self._hash, value[len(CLEAR) :]).result()
        if value.startswith(ENCRYPTED):
            try:
                self.reveal(value)
            except Exception as exc:
                raise refuse("invalid-value", f"{exc}", path) from exc
            return None
        clear = value[len(CLEAR) :] if value.startswith(CLEAR) else value
        return self.encrypt(clear)

    # -- edits ----------------------------------------------------------------------------

    def touches(self, edit: Edit) -> bool:
        """Whether an edit may carry a secret value (its text names a secret leaf)."""
        if edit.value is None:
            return False
        return any(name in edit.value for name in self._names)

    def prepare(self, ctx: Any, edits: Sequence[Edit]) -> list[Edit]:
        """The edits with every secret value as it is to be stored."""
        return [self._prepared(ctx, edit) if self.touches(edit) else edit for edit in edits]

    def _prepared(self, ctx: Any, edit: Edit) -> Edit:
        assert edit.value is not None
        root = edit.path in (datapath.ROOT, "")
        parent_path = None if root else datapath.parent(edit.path)
        parsed: list[Any] = []
        if parent_path is None or parent_path == datapath.ROOT:
            top = nodes.parse_data(ctx, edit.value, edit.encoding)
            parent = None
        else:
            top = nodes.new_path(ctx, None, parent_path)
            parent = nodes.find(ctx, top, parent_path)
            before = {native.address(child) for child in nodes.children(parent)}
            try:
                nodes.parse_data(ctx, edit.value, edit.encoding, parent)
            except Exception:
                nodes.free_all(top)
                raise
            parsed = [c for c in nodes.children(parent) if native.address(c) not in before]
        try:
            changed = False
            for path, kind in self._leaves.items():
                for leaf in nodes.find_all(ctx, top, path) if top else ():
                    stored = self._stored(kind, nodes.value_of(leaf), nodes.path_of(leaf))
                    if stored is not None:
                        native.change_term(leaf, stored)
                        changed = True
            if not changed:
                return edit
            return replace(edit, value=_print(top, parsed, edit))
        finally:
            if top:
                nodes.free_all(top)


def _print(top: Any, parsed: list[Any], edit: Edit) -> str:
    """The edit's value again: the whole document at the root, else the parsed target."""
    if not parsed:
        flags = nodes.lib.LYD_PRINT_WITHSIBLINGS | nodes.lib.LYD_PRINT_SHRINK
        return nodes.print_tree(top, edit.encoding, flags)
    if len(parsed) != 1:
        raise refuse("invalid-value", "the value must be exactly the target node", edit.path)
    return nodes.print_tree(parsed[0], edit.encoding, nodes.lib.LYD_PRINT_SHRINK)
