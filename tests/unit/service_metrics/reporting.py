"""A real ServiceMetrics for the ingest tests: an injected clock, a configuration the test
can replace, a collecting publisher, and report builders (no sockets)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.service_metrics.policy import config
from controller.service_metrics.service import ServiceMetrics
from controller.types import Json
from tests.unit.service_metrics.test_service import T0, Clock, Config

SM = "ietf-cats-service-metrics"
SSMA = Principal("c-sma-ss3")
OTHER = Principal("c-sma-ss2")
CNMA = Principal("c-nma-1")
SCI3 = "188.3.67.4:69"
SCI4 = "188.3.67.4:70"


class Built:
    """A ServiceMetrics on a given update-control, its clock and what it published."""

    def __init__(
        self, update: Json | None = None, attachments: Json | None = None, state: Path | None = None
    ) -> None:
        self.clock = Clock()
        self.published: list[Json] = []
        self.config = Config(config({}, update or {}, attachments or {}))
        self.service = ServiceMetrics(self.config, self.clock, self.published.append, state)
        self.sequence = 0

    def members(self, sequence: int | None, kind: str | None, site: str | None) -> Json:
        self.sequence += 1
        found: Json = {
            "sequence-number": str(self.sequence if sequence is None else sequence),
            "timestamp": datetime.fromtimestamp(self.clock.now, UTC).isoformat(),
        }
        if kind is not None:
            found["report-type"] = kind
        if site is not None:
            found["site"] = site
        return found

    def report(
        self,
        *entries: Json,
        sender: Principal = SSMA,
        kind: str | None = None,
        site: str | None = None,
        sequence: int | None = None,
    ) -> Json:
        found = self.members(sequence, kind, site)
        if entries:
            found["entry"] = list(entries)
        return self.service.report_service_metrics(sender, found)

    def paths(self, *paths: Json, sender: Principal = CNMA, kind: str | None = None) -> Json:
        found = self.members(None, kind, None)
        found["path"] = list(paths)
        return self.service.report_network_metrics(sender, found)

    def cst(self) -> dict[str, Json]:
        table = self.service.cst_state()[f"{SM}:computing-service-table"]
        return {e["csci-id"]: e for e in table.get("entry", [])}

    def nst(self) -> dict[str, Json]:
        table = self.service.nst_state()[f"{SM}:network-service-table"]
        return {e["egress"]: e for e in table.get("entry", [])}

    def counters(self, sender: Principal = SSMA) -> dict[str, str]:
        senders = self.service.senders_state()[f"{SM}:report-senders"]["sender"]
        found: dict[str, str] = next(s for s in senders if s["source"] == sender.user)["counters"]
        return found

    def events(self, name: str) -> list[Json]:
        """The notifications of one kind published so far, and forget them."""
        found = [n[f"{SM}:{name}"] for n in self.published if f"{SM}:{name}" in n]
        self.published.clear()
        return found

    def at(self, seconds: float) -> None:
        self.clock.now = T0 + seconds


def entry(csci: str, gas: int = 100, ct: str = "5", **extra: Any) -> Json:
    return {
        "cs-id": "ARS",
        "csci-id": csci,
        "gas": gas,
        "computing-time": ct,
        "health": "healthy",
        "egress": "188.3.67.4",
        **extra,
    }


def path(egress: str, delay: str) -> Json:
    return {"ingress": "10.0.0.1", "egress": egress, "delay": delay}


def error_of(caught: pytest.ExceptionInfo[CatsError]) -> tuple[str, str | None, str | None]:
    (item,) = caught.value.items
    return item.tag, item.app_tag, item.path
