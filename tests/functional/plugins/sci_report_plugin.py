"""A ``catsctl serve --plugin`` that stands in for a C-SMA: it records SCI reports.

The core validates each ``ietf-cats-sci:report-sci-metrics`` input against the schema before
the handler sees it; the handler refuses a sequence number lower than the last accepted one for
the same (CSCI-ID, CS-ID) with ``sequence-number-regressed`` (as the RPC's description says),
and appends every accepted input as one JSON line to the file named by the environment variable
``CATS_SCI_REPORT_LOG``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from controller.datastore.api import Principal, Registrations
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.types import SchemaPath

REPORT = "/ietf-cats-sci:report-sci-metrics"
LOG_ENV = "CATS_SCI_REPORT_LOG"


def register(registrations: Registrations) -> None:
    """Add the recording handler of report-sci-metrics."""
    log = Path(os.environ[LOG_ENV])
    guard = threading.Lock()
    accepted: dict[tuple[str, str], int] = {}

    def report(principal: Principal, members: dict[str, object]) -> dict[str, object]:
        del principal
        key = (str(members["csci-id"]), str(members["cs-id"]))
        sequence = int(str(members["sequence-number"]))
        with guard:
            if sequence < accepted.get(key, 0):
                raise CatsError(
                    ErrorItem(
                        ErrorType.APPLICATION,
                        "operation-failed",
                        f"sequence number {sequence} below {accepted[key]}",
                        app_tag="sequence-number-regressed",
                    )
                )
            accepted[key] = sequence
            with log.open("a", encoding="utf-8") as sink:
                sink.write(json.dumps(members) + "\n")
        return {"accepted-sequence-number": str(sequence)}

    registrations.rpcs[SchemaPath(REPORT)] = report
