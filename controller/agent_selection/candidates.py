"""P3, the candidate set: configured candidates with what MSG-4, MSG-6 and MSG-7 said of them.

:class:`CandidateBook` keeps the latest computing part per candidate (from its C-SMA, MSG-4)
and forwarding part (from the C-NMA, MSG-7), drops advertisements older than the last one a
source sent, and keeps per source how often its values proved wrong (14): the discount of a
candidate is that of the C-SMA that advertised it. It is a plain container used under the
service's lock.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from controller.agent_selection import views
from controller.agent_selection.compaction import Compacted
from controller.agent_selection.config import AgentConfig, CandidateConfig
from controller.agent_selection.viewdocs import ViewDocuments
from controller.agent_selection.views import ComputingPart, ForwardingPart
from controller.selection.mapping import Candidate, SourceAccuracy, StateElementView
from controller.selection.mapping.memo import Screenings
from controller.types import CsciId, CsId, ReuseKey, SessionId, SourceId, TenantId

StateMap = Mapping[tuple[TenantId, ReuseKey], StateElementView]
StateByCandidate = Mapping[CsciId, StateMap]
CACHE_LIMIT = 1 << 16
SCREENED_LIMIT = 1 << 14
"""Candidate results kept over all sessions for re-evaluation (a few sessions of 1,000)."""
SCREENED_FROM = 32
"""Candidates from which a session's P4/P5 results are kept for its next decision."""
_NO_STATE: StateMap = MappingProxyType({})


class StateCache:
    """MSG-6 answers parsed once: an answer equal to an earlier one (the C-SMA's values have
    not changed) gives the same state map, so the decision records of many decisions share
    it instead of holding a copy each. Bounded; thread-safe (queries run outside the lock)."""

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        self._limit = limit
        self._guard = threading.Lock()
        self._maps: dict[tuple[str, str, str], StateMap] = {}

    def state(self, tenant: TenantId, csci_id: CsciId, elements: list[Any]) -> StateMap:
        """The state map of one candidate's answer for one tenant."""
        key = (tenant, csci_id, json.dumps(elements, sort_keys=True))
        with self._guard:
            found = self._maps.get(key)
        if found is not None:
            return found
        made: StateMap = MappingProxyType(views.state_elements(tenant, elements))
        with self._guard:
            if len(self._maps) >= self._limit:
                self._maps.clear()
            return self._maps.setdefault(key, made)


class KeptScreenings:
    """The P4/P5 results kept for the sessions decided most recently (:class:`Screenings`),
    so a session re-evaluated while nothing changed is screened and combined once: bounded
    by the candidate results they hold together (the least recently decided go first), so
    the memory does not grow with the open sessions. Used under the service's lock."""

    def __init__(self, limit: int = SCREENED_LIMIT) -> None:
        self._limit = limit
        self._kept: OrderedDict[SessionId, Screenings] = OrderedDict()
        self._compacted: dict[SessionId, Compacted] = {}
        self._sizes: dict[SessionId, int] = {}
        self._total = 0

    def __len__(self) -> int:
        return len(self._kept)

    def of(self, session_id: SessionId, candidates: int) -> Screenings | None:
        """The session's kept results (empty for a session not decided lately); None below
        :data:`SCREENED_FROM` candidates, where screening afresh costs little and keeping
        would add to every session's memory."""
        if candidates < SCREENED_FROM:
            self.forget(session_id)
            return None
        found = self._kept.get(session_id)
        if found is None:
            found = self._kept[session_id] = Screenings()
            self._compacted[session_id] = Compacted()
        self._kept.move_to_end(session_id)
        return found

    def compacted(self, session_id: SessionId) -> Compacted | None:
        """The compaction of the session's last results, kept beside them."""
        return self._compacted.get(session_id)

    def sized(self, session_id: SessionId) -> None:
        """Account for what a decision of the session kept, and drop the oldest past the
        bound (never the session just decided)."""
        found = self._kept.get(session_id)
        if found is None:
            return
        self._total += len(found) - self._sizes.get(session_id, 0)
        self._sizes[session_id] = len(found)
        while self._total > self._limit and len(self._kept) > 1:
            oldest = next(iter(self._kept))
            self.forget(oldest)

    def forget(self, session_id: SessionId) -> None:
        """A session closed or gone: what was kept for it goes."""
        if self._kept.pop(session_id, None) is not None:
            self._total -= self._sizes.pop(session_id, 0)
            self._compacted.pop(session_id, None)


@dataclass
class CandidateBook:
    """What the C-PS knows of every candidate beyond its configuration."""

    computing: dict[CsciId, ComputingPart] = field(default_factory=dict)
    forwarding: dict[CsciId, ForwardingPart] = field(default_factory=dict)
    advertiser: dict[CsciId, SourceId] = field(default_factory=dict)
    sequences: dict[SourceId, int] = field(default_factory=dict)
    accuracy: dict[SourceId, SourceAccuracy] = field(default_factory=dict)
    built: dict[CsciId, tuple[object, object, object, Candidate]] = field(default_factory=dict)
    #: the same views as JSON, for the operational resource-view of each candidate
    documents: ViewDocuments = field(default_factory=ViewDocuments)
    _version: int = 0  # moves with every advertisement stored
    _last: tuple[AgentConfig, CsId, StateByCandidate, int, tuple[Candidate, ...]] | None = None

    def fresh_sequence(self, source: SourceId, sequence: int | None) -> bool:
        """Whether an advertisement is newer than the last one of its source (MSG-4, MSG-7);
        records it when it is."""
        if sequence is None:
            return True
        last = self.sequences.get(source)
        if last is not None and sequence <= last:
            return False
        self.sequences[source] = sequence
        return True

    def advertised(self, source: SourceId, parts: Iterable[tuple[CsciId, ComputingPart]]) -> None:
        """Store the computing parts of one MSG-4."""
        self._version += 1
        for csci_id, part in parts:
            self.computing[csci_id] = part
            self.advertiser[csci_id] = source

    def viewed(self, parts: Iterable[tuple[CsciId, ForwardingPart]]) -> None:
        """Store the forwarding parts of one MSG-7 (endpoints extend the earlier view)."""
        self._version += 1
        for csci_id, part in parts:
            self.forwarding[csci_id] = views.merged(self.forwarding.get(csci_id), part)

    def observed(
        self, source: SourceId, *, contradicted: bool = False, tail_underreport: bool = False
    ) -> None:
        """One value of ``source`` was checked (MSG-14, a transfer, a tail)."""
        record = self.accuracy.get(source, SourceAccuracy(source))
        self.accuracy[source] = record.observed(
            contradicted=contradicted, tail_underreport=tail_underreport
        )

    def discounts(self, csci_ids: Iterable[CsciId]) -> dict[CsciId, float]:
        """The discount of each candidate's advertiser, where it has one (14)."""
        by_source = {s: r.discount() for s, r in self.accuracy.items() if r.discount() > 0}
        if not by_source:  # no source discounted (the common case): nothing to look up
            return {}
        found: dict[CsciId, float] = {}
        for csci_id in csci_ids:
            source = self.advertiser.get(csci_id)
            if source is not None and source in by_source:
                found[csci_id] = by_source[source]
        return found

    def candidates(
        self, config: AgentConfig, service: CsId, state: StateByCandidate
    ) -> list[Candidate]:
        """P3: the service's configured candidates with their resource views; the very same
        configuration, service and state (identity) with no advertisement since give the
        very same candidates, as :meth:`candidate` would one by one."""
        last = self._last
        if (
            last is not None
            and last[0] is config
            and last[1] == service
            and last[2] is state
            and last[3] == self._version
        ):
            return list(last[4])
        made = [
            self.candidate(c, state.get(c.csci_id, _NO_STATE)) for c in config.for_service(service)
        ]
        self._last = (config, service, state, self._version, tuple(made))
        return made

    def candidate(
        self,
        configured: CandidateConfig,
        state: Mapping[tuple[TenantId, ReuseKey], StateElementView],
    ) -> Candidate:
        """One candidate with the parts known of it; the same parts give the same value (the
        records of later decisions share it)."""
        csci_id = configured.csci_id
        compute, forward = self.computing.get(csci_id), self.forwarding.get(csci_id)
        known = self.built.get(csci_id)
        if known is not None and known[0] is compute and known[1] is forward:
            made = known[3]
            if (
                known[2] is state
                and made.region == configured.region
                and (made.trusted == configured.trusted and made.enabled == configured.enabled)
                and made.permitted_tenants == configured.permitted_tenants
            ):
                return made
        made = Candidate(
            csci_id,
            views.view(compute, forward, state or _NO_STATE),
            configured.region,
            configured.permitted_tenants,
            trusted=configured.trusted,
            enabled=configured.enabled,
        )
        if len(self.built) >= CACHE_LIMIT:
            self.built.clear()
        self.built[csci_id] = (compute, forward, state, made)
        return made
