"""The forwarder inventory of the C-PS (``ietf-cats-steering:forwarders``) as values.

Parsed from the RFC 7951 JSON of running, which libyang has validated; only the YANG defaults
are filled in here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.datastore.api import SYSTEM, DatastoreName, ReadRequest, ServerCore
from controller.southbound.peer import Credentials
from controller.types import CsId, DataPath, ForwarderId

MODULE = "ietf-cats-steering"
FORWARDERS = DataPath(f"/{MODULE}:forwarders")


@dataclass(frozen=True, slots=True)
class ForwarderSpec:
    """One configured forwarder: where to reach it, as whom, its roles and services."""

    name: str
    address: str
    port: int
    credentials: Credentials
    roles: frozenset[str]
    ingress_id: ForwarderId
    cs_ids: tuple[CsId, ...]

    @property
    def ingress(self) -> bool:
        """Whether the C-PS installs service entries at this forwarder."""
        return "ingress" in self.roles

    def pairs(self) -> list[tuple[CsId, ForwarderId]]:
        """The (CS-ID, ingress) pairs whose selection this forwarder installs."""
        return [(cs_id, self.ingress_id) for cs_id in self.cs_ids] if self.ingress else []


@dataclass(frozen=True, slots=True)
class Inventory:
    """The ``forwarders`` container."""

    forwarders: tuple[ForwarderSpec, ...] = ()
    reconcile_interval: float = 30.0
    confirm_timeout: int = 30

    def by_name(self) -> dict[str, ForwarderSpec]:
        """The forwarders by name."""
        return {f.name: f for f in self.forwarders}


def _as_is(secret: str) -> str:
    return secret


def parse_inventory(
    document: Mapping[str, Any], reveal: Callable[[str], str] = _as_is
) -> Inventory:
    """The inventory of a read of :data:`FORWARDERS` (``{}`` when nothing is configured);
    ``reveal`` decrypts the stored passwords (``ServerCore.reveal``)."""
    body: Mapping[str, Any] = document.get(f"{MODULE}:forwarders") or {}
    specs = tuple(
        ForwarderSpec(
            str(item["name"]),
            str(item["address"]),
            int(item.get("port", 830)),
            Credentials.of(item, reveal),
            frozenset(str(r) for r in item.get("role", ())),
            ForwarderId(str(item.get("ingress-id", item["name"]))),
            tuple(CsId(str(c)) for c in item.get("cs-id", ())),
        )
        for item in body.get("forwarder", ())
    )
    return Inventory(
        specs,
        float(body.get("reconcile-interval", 30)),
        int(body.get("confirm-timeout", 30)),
    )


class RunningInventory:
    """The forwarder inventory in running (``ietf-cats-steering:forwarders``), parsed once per
    revision of running."""

    def __init__(self, core: Callable[[], ServerCore]) -> None:
        self._core = core
        self._guard = threading.Lock()
        self._cached: tuple[str, Inventory] | None = None

    def __call__(self) -> Inventory:
        core = self._core()
        etag = core.revision(DatastoreName.RUNNING, None).etag
        with self._guard:
            if self._cached is not None and self._cached[0] == etag:
                return self._cached[1]
        document = core.read(ReadRequest(DatastoreName.RUNNING, FORWARDERS), SYSTEM).document
        loaded = json.loads(document) if document else {}
        inventory = parse_inventory(loaded if isinstance(loaded, dict) else {}, core.reveal)
        with self._guard:
            self._cached = (etag, inventory)
        return inventory
