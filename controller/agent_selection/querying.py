"""MSG-5/6 at the point of need (M40, M42): what a decision must know of the state its
candidates hold, asked of their C-SMAs only where the presence cache does not know it.

While a C-SMA's subscription stands, the presence cache answers for what it was told; the
rest is asked (query-state, the working-set keys it does not know at the candidates it does
not know them for). An unreachable C-SMA leaves presence unknown, never absent (M20). When
nothing was learned since the last decision and nothing has grown old, the cache hands the
very same plans, and the very same state is handed on, so the candidate book hands the very
same candidates (and their kept results hold).
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable

from controller.agent_selection import config as cfg
from controller.agent_selection.candidates import StateCache, StateMap
from controller.agent_selection.presence import Plan, PresenceCache
from controller.agent_selection.sessions import Session
from controller.southbound import StateAgents, Target, fan_out
from controller.types import CsciId, CsId, Json

LOG = logging.getLogger("catsctl.agent-selection")
Found = dict[CsciId, StateMap]


class StateQueries:
    """The state of a session's candidates for a decision; called with no lock held (the
    memos are replaced whole, never changed in place)."""

    def __init__(
        self, agents: StateAgents, presence: PresenceCache, clock: Callable[[], float]
    ) -> None:
        self.agents = agents
        self.presence = presence
        self.clock = clock
        self._states = StateCache()
        self._found: tuple[tuple[Plan, ...], Found] | None = None
        self._targets: tuple[cfg.AgentConfig, CsId, dict[Target, list[CsciId]]] | None = None

    def __call__(self, config: cfg.AgentConfig, session: Session) -> Found:
        """The working-set keys at each candidate's C-SMA, from the cache where it knows."""
        keys = [e.reuse_key for e in session.descriptor.working_set]
        if not keys:
            return {}
        found: Found = {}
        requests: list[tuple[Target, Json]] = []
        asked_at = self.clock()
        plans: list[Plan] = []
        for target, ids in self._by_target(config, session.service_id).items():
            plan = self.presence.plan(target, ids, session.tenant, keys, asked_at)
            plans.append(plan)
            found.update(plan.cached)
            if plan.ask:
                members: Json = {
                    "tenant": session.tenant,
                    "session-id": session.session_id,
                    "csci-id": plan.ask,
                    "reuse-key": list(plan.keys),
                }
                requests.append((target, members))
        if not requests:
            return self._same(plans, found)
        for result in fan_out(self.agents.query_state, requests).results:
            if result.output is None:
                LOG.warning("query-state at %s failed: %s", result.target.name, result.error)
                continue
            kept = self.presence.answered(
                result.target, session.tenant, result.output, asked_at, self.clock()
            )
            if kept is not None:
                found.update(kept)
                continue
            for entry in result.output.get("candidate", ()):
                csci_id = CsciId(str(entry["csci-id"]))
                elements = list(entry.get("element", ()))
                found[csci_id] = self._states.state(session.tenant, csci_id, elements)
        return found

    def _same(self, plans: list[Plan], found: Found) -> Found:
        """The state found the last time when it rests on the very same plans."""
        last = self._found
        same = last is not None and len(plans) == len(last[0])
        if last is not None and same and all(map(operator.is_, plans, last[0])):
            return last[1]
        self._found = (tuple(plans), found)
        return found

    def _by_target(self, config: cfg.AgentConfig, service: CsId) -> dict[Target, list[CsciId]]:
        """The service's candidates by the C-SMA that speaks for them (per configuration)."""
        last = self._targets
        if last is not None and last[0] is config and last[1] == service:
            return last[2]
        by_target: dict[Target, list[CsciId]] = {}
        for candidate in config.for_service(service):
            if candidate.c_sma is not None:
                by_target.setdefault(candidate.c_sma, []).append(candidate.csci_id)
        self._targets = (config, service, by_target)
        return by_target
