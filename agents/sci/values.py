"""Values the SCI components pass each other: identifiers, health, metrics, samples.

Every value is frozen; the components that own changing state (collector, monitor, session
manager, reporter) replace values instead of mutating them (sci-implementation 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NewType

from controller.selection.joint.vocabulary import Health
from controller.types import CsciId, CsId

SiId = NewType("SiId", str)
"""Service Instance ID, local to one SCI (sci-implementation 2)."""

__all__ = [
    "CheckResult",
    "CheckType",
    "CsId",
    "CsciId",
    "Health",
    "InstanceMetrics",
    "Sample",
    "SiId",
]


class CheckType(StrEnum):
    """ietf-cats-sci health-check-type (sci-implementation 5.1)."""

    LIVENESS = "liveness"
    READINESS = "readiness"
    PERFORMANCE = "performance"
    ADMINISTRATIVE = "administrative"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one health check of one instance (5.1)."""

    kind: CheckType
    passed: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class InstanceMetrics:
    """Resource, performance and status metrics of one instance (sci-implementation 4.1).

    Every field is optional: None is unknown, never zero. Percentages are 0-100, times are
    milliseconds, ``collected_at`` is a Unix time in seconds.
    """

    collected_at: float
    cpu: float | None = None
    memory: float | None = None
    gpu: float | None = None
    gpu_memory: float | None = None
    npu: float | None = None
    queue_depth: int | None = None
    response_time_ms: float | None = None
    response_time_p95_ms: float | None = None
    throughput: float | None = None
    error_rate: float | None = None
    active_sessions: int | None = None
    active_connections: int | None = None
    load_average: float | None = None
    max_capacity: int | None = None

    def resource(self, name: str) -> float | None:
        """The utilization of a ietf-cats-sci resource-kind (``cpu``, ``gpu-memory``, ...)."""
        value: float | None = getattr(self, name.replace("-", "_"), None)
        return value


@dataclass(frozen=True, slots=True)
class Sample:
    """One request the Dispatcher forwarded: when it ended, to whom, how long, how it went."""

    at: float
    si_id: SiId
    duration_ms: float
    ok: bool
