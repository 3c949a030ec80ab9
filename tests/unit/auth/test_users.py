"""Local users and NACM groups from their RFC 7951 JSON."""

from __future__ import annotations

from controller.auth import UserRecord, groups_of, users_of


def test_users_of_reads_hashes_and_keys() -> None:
    document: dict[str, object] = {
        "ietf-system:authentication": {
            "user": [
                {"name": "admin", "password": "$6$x$y"},
                {
                    "name": "ops",
                    "authorized-key": [
                        {"name": "k", "algorithm": "ssh-ed25519", "key-data": "AAAA"}
                    ],
                },
            ]
        }
    }
    assert users_of(document) == {
        "admin": UserRecord("$6$x$y", frozenset()),
        "ops": UserRecord(None, frozenset({("ssh-ed25519", "AAAA")})),
    }
    assert users_of({}) == {}


def test_groups_of_maps_users_to_their_groups() -> None:
    document: dict[str, object] = {
        "ietf-netconf-acm:groups": {
            "group": [
                {"name": "admin", "user-name": ["alice"]},
                {"name": "readers", "user-name": ["alice", "bob"]},
            ]
        }
    }
    assert groups_of(document) == {"alice": ("admin", "readers"), "bob": ("readers",)}
