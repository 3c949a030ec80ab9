"""Steering documents (RFC 7951, as the server core prints them) for the forwarder's tests."""

from __future__ import annotations

from typing import Any

from agents.forwarder import model
from agents.forwarder.values import Steering

A, B = "192.0.2.10:8800", "192.0.2.20:8800"


def service(cs_id: str = "ARS", csci_id: str | None = A, **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"cs-id": cs_id, "egress-forwarder": "egress-1", **more}
    if csci_id is not None:
        found["csci-id"] = csci_id
    return found


def rule(commitment: str, csci_id: str = B, **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "commitment-id": commitment,
        "cs-id": "ARS",
        "csci-id": csci_id,
        "egress-forwarder": "egress-1",
        "lifetime": 60,
        "match": {"session-id": "s1"},
    }
    found.update(more)
    return found


def steering(
    services: list[dict[str, Any]] | None = None,
    rules: list[dict[str, Any]] | None = None,
    **top: Any,
) -> Steering:
    body: dict[str, Any] = {"service": services or [], "rule": rules or [], **top}
    return model.steering({"ietf-cats-steering:steering": body})
