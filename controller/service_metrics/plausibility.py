"""Plausibility of the reported Computing Service Metrics from session feedback
(service-metrics-op 9: GAS Inflation, Computing Time Under-reporting, Reputation Gaming).

Each CST entry keeps a moving window of feedback samples: whether the site honored the session
and, when given, the observed response time next to what the entry advertised (reported
Computing Time plus the Network Delay of the client's path). An entry is judged once the window
holds ``min-feedback-samples``; a flagged entry stays a candidate and its score gets the
``flagged-entry-penalty``. Feedback per session is limited by ``max-feedback-per-session``.

Memory is bounded: a window keeps at most ``max(WINDOW, min-feedback-samples)`` samples, an
entry's record is dropped with the CST entry, and the C-PS remembers the last
``TRACKED_SESSIONS`` sessions (their ingress and feedback count).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.selection.joint import CstEntry, Micros, NetworkServiceTable
from controller.selection.units import to_ms
from controller.service_metrics.policy import MODULE
from controller.types import CsciId, CsId, ForwarderId, Json, SchemaPath

EntryKey = tuple[CsId, CsciId]
WINDOW = 100
"""Feedback samples in the moving window of an entry (at least min-feedback-samples)."""
TRACKED_SESSIONS = 65_536
"""Sessions whose ingress and feedback count the C-PS remembers, least recently seen first."""
_HUNDRED = Decimal(100)
_MILLI = Decimal("0.001")


class Flag(StrEnum):
    """The cats-sm:plausibility-flag identities judged from feedback (section 9)."""

    GAS_NOT_HONORED = "gas-not-honored"
    COMPUTING_TIME_UNDER_REPORTED = "computing-time-under-reported"


@dataclass(frozen=True, slots=True)
class PlausibilitySettings:
    """The ``plausibility`` container with its YANG defaults."""

    computing_time_deviation: Decimal = Decimal(50)
    min_honored_ratio: Decimal = Decimal(90)
    min_feedback_samples: int = 20
    flagged_entry_penalty: float = 1.0
    max_feedback_per_session: int = 1


def plausibility_settings(doc: Mapping[str, Any]) -> PlausibilitySettings:
    """The :class:`PlausibilitySettings` of a validated ``plausibility`` document."""
    return PlausibilitySettings(
        computing_time_deviation=Decimal(str(doc.get("computing-time-deviation", 50))),
        min_honored_ratio=Decimal(str(doc.get("min-honored-ratio", 90))),
        min_feedback_samples=int(doc.get("min-feedback-samples", 20)),
        flagged_entry_penalty=float(Decimal(str(doc.get("flagged-entry-penalty", 1)))),
        max_feedback_per_session=int(doc.get("max-feedback-per-session", 1)),
    )


@dataclass(frozen=True, slots=True)
class Sample:
    """One feedback: honored (the site did not refuse), observed and advertised times."""

    honored: bool
    observed: Micros | None = None
    expected: Micros | None = None


def expected_time(
    entry: CstEntry, nst: NetworkServiceTable, ingress: ForwarderId | None
) -> Micros | None:
    """Reported Computing Time + Network Delay of the client's path (6.2.3 Step 4).

    The ingress of an unknown client is not guessed low: the largest Network Delay to the
    entry's egress is taken, so that a far client never makes a site look under-reported.
    """
    if entry.egress is None:
        return None
    path = nst.get(ingress, entry.egress) if ingress is not None else None
    if path is not None:
        return Micros(entry.computing_time + path.network_delay)
    delays = [p.network_delay for p in nst.to_egress(entry.egress).values()]
    return Micros(entry.computing_time + max(delays)) if delays else None


def judge(samples: deque[Sample], settings: PlausibilitySettings) -> tuple[Flag, ...]:
    """The flags a window earns (section 9); each check needs min-feedback-samples."""
    flags: list[Flag] = []
    enough = settings.min_feedback_samples
    if len(samples) >= enough:
        honored = sum(s.honored for s in samples)
        if honored * _HUNDRED < settings.min_honored_ratio * len(samples):
            flags.append(Flag.GAS_NOT_HONORED)
    timed = [s for s in samples if s.observed is not None and s.expected is not None]
    if len(timed) >= enough:
        observed = sum(s.observed or 0 for s in timed)
        expected = sum(s.expected or 0 for s in timed)
        if observed * _HUNDRED > expected * (_HUNDRED + settings.computing_time_deviation):
            flags.append(Flag.COMPUTING_TIME_UNDER_REPORTED)
    return tuple(flags)


@dataclass(slots=True)
class _Record:
    """What the C-PS observed of one CST entry."""

    samples: deque[Sample] = field(default_factory=deque)
    feedback: int = 0
    steered: int = 0
    refused: int = 0
    flags: tuple[Flag, ...] = ()


def _session_key(session: str) -> str:
    return f"session {session}"


def _ms(value: Decimal) -> str:
    return str(value.quantize(_MILLI))


def observed_json(record: _Record) -> Json:
    """The ``observed`` container of a CST entry."""
    values: Json = {
        "feedback-count": str(record.feedback),
        "sessions-steered": str(record.steered),
        "sessions-refused": str(record.refused),
    }
    times = [to_ms(s.observed) for s in record.samples if s.observed is not None]
    if times:
        mean = sum(times, Decimal(0)) / len(times)
        values["response-time"] = {
            "cur": _ms(times[-1]),
            "mean": _ms(mean),
            "min": _ms(min(times)),
            "max": _ms(max(times)),
        }
    if record.flags:
        values["flag"] = [f"{MODULE}:{flag.value}" for flag in record.flags]
    return values


class Plausibility:
    """Feedback records by CST entry and the sessions seen, behind their own (leaf) lock, so
    its methods may be called with or without the service lock held."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[EntryKey, _Record] = {}
        self._flagged: dict[CsId, set[CsciId]] = {}
        self._judged_with = PlausibilitySettings()
        self._sessions: OrderedDict[str, tuple[ForwarderId | None, int]] = OrderedDict()

    def steered(self, key: EntryKey | None, session: str | None, ingress: ForwarderId) -> None:
        """A selection steered a session (``key``: to a newly chosen entry, counted)."""
        with self._lock:
            if key is not None:
                self._records.setdefault(key, _Record()).steered += 1
            if session is not None:
                _, count = self._sessions.pop(_session_key(session), (None, 0))
                self._remember(_session_key(session), ingress, count)

    def ingress_of(self, session: str | None) -> ForwarderId | None:
        """The ingress of the last selection for a session, if remembered."""
        if session is None:
            return None
        with self._lock:
            return self._sessions.get(_session_key(session), (None, 0))[0]

    def record(
        self,
        key: EntryKey,
        session: str | None,
        requester: str,
        sample: Sample,
        settings: PlausibilitySettings,
    ) -> bool:
        """Count one feedback and re-judge the entry; False, with nothing counted, past
        max-feedback-per-session (feedback without a session counts for its requester)."""
        sender = _session_key(session) if session is not None else f"requester {requester}"
        with self._lock:
            ingress, count = self._sessions.pop(sender, (None, 0))
            self._remember(sender, ingress, count + 1)
            if count >= settings.max_feedback_per_session:
                return False
            self._rejudge_all(settings)
            found = self._records.setdefault(key, _Record())
            found.feedback += 1
            found.refused += not sample.honored
            found.samples.append(sample)
            while len(found.samples) > max(WINDOW, settings.min_feedback_samples):
                found.samples.popleft()
            self._set_flags(key, found, judge(found.samples, settings))
            return True

    def penalties(self, cs_id: CsId, settings: PlausibilitySettings) -> dict[CsciId, float]:
        """The flagged-entry penalty of each flagged entry of a CS-ID (only those)."""
        with self._lock:
            self._rejudge_all(settings)
            penalty = settings.flagged_entry_penalty
            flagged = self._flagged.get(cs_id, ())
            return {csci: penalty for csci in flagged} if penalty else {}

    def observed(self, key: EntryKey) -> Json | None:
        """The ``observed`` container of an entry, None before any feedback or steering."""
        with self._lock:
            found = self._records.get(key)
            return None if found is None else observed_json(found)

    def forget(self, key: EntryKey) -> None:
        """The CST entry is gone: drop its record."""
        with self._lock:
            self._records.pop(key, None)
            self._set_flags(key, None, ())

    def _remember(self, session: str, ingress: ForwarderId | None, count: int) -> None:
        self._sessions[session] = (ingress, count)
        while len(self._sessions) > TRACKED_SESSIONS:
            self._sessions.popitem(last=False)

    def _rejudge_all(self, settings: PlausibilitySettings) -> None:
        """Judge every entry again when the thresholds changed (once per change)."""
        if settings == self._judged_with:
            return
        self._judged_with = settings
        for key, found in self._records.items():
            self._set_flags(key, found, judge(found.samples, settings))

    def _set_flags(self, key: EntryKey, found: _Record | None, flags: tuple[Flag, ...]) -> None:
        if found is not None:
            found.flags = flags
        cs_id, csci_id = key
        flagged = self._flagged.setdefault(cs_id, set())
        if flags:
            flagged.add(csci_id)
        else:
            flagged.discard(csci_id)
        if not flagged:
            del self._flagged[cs_id]


FEEDBACK = SchemaPath(f"/{MODULE}:report-session-feedback")


def unknown_entry(cs_id: str, csci_id: str) -> CatsError:
    """Feedback about an entry the CST does not hold: nothing to observe."""
    message = f"no CST entry ({cs_id}, {csci_id}) to take feedback for"
    return CatsError(
        ErrorItem(ErrorType.APPLICATION, "invalid-value", message, f"{FEEDBACK}/csci-id")
    )


def limit_reached(session: str | None, limit: int) -> CatsError:
    """Past max-feedback-per-session (section 9, Reputation Gaming)."""
    who = f"session {session}" if session is not None else "this requester without a session"
    message = f"{who} already gave {limit} feedback (max-feedback-per-session)"
    leaf = f"{FEEDBACK}/session-id" if session is not None else None
    return CatsError(
        ErrorItem(ErrorType.APPLICATION, "resource-denied", message, leaf, "feedback-limit-reached")
    )
