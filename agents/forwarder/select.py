"""Which entry a request matches, and where it then goes (pure).

Lookup (ietf-cats-steering ``steering`` description): the active rule of the request's CS-ID
with the best precedence whose match covers the request (session, turn, step, flow), else the
active service entry of the CS-ID, else the default route (fallback level 3), so that traffic
is never steered on an outdated decision (service-metrics-op 6.2.5, 7.3).

Route: normal steering goes to the CSCI-ID (IP:port) directly, or, when the egress forwarder
has a tunnel (its data-plane address), encapsulated to it with the CSCI-ID in a header
(service-metrics-op 6.2.3 step 7); network-only goes to the egress, which picks a local
CSCI-ID (6.2.5 level 2); the default route goes to the CS-ID's configured default
destination, when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.forwarder.table import Entry, Table, precedence
from agents.forwarder.values import (
    EntryKey,
    EntryState,
    FallbackMode,
    Locator,
    Match,
    Request,
    Rule,
    ServiceEntry,
    in_prefix,
    locator,
)
from controller.types import CsId, SessionId


def matches(match: Match, request: Request) -> bool:
    """Whether every criterion the rule gives covers the request."""
    if match.session_id is not None and match.session_id != request.session_id:
        return False
    if match.turn_id is not None and match.turn_id != request.turn_id:
        return False
    if match.step_id is not None and match.step_id != request.step_id:
        return False
    if match.first_step is not None:
        step = request.step_id
        if step is None or step < match.first_step:
            return False
        if match.last_step is not None and step > match.last_step:
            return False
    flow = match.flow
    checks = (
        flow.source_prefix is None or in_prefix(request.source, flow.source_prefix),
        flow.destination_prefix is None or in_prefix(request.destination, flow.destination_prefix),
        flow.protocol is None or flow.protocol == request.protocol,
        flow.source_port is None or flow.source_port == request.source_port,
        flow.destination_port is None or flow.destination_port == request.destination_port,
    )
    return all(checks)


def _live(table: Table, key: EntryKey, now: float) -> bool:
    status = table.status.get(key)
    if status is None or status.state is not EntryState.ACTIVE:
        return False
    return status.expires_at is None or status.expires_at > now


def lookup(table: Table, request: Request, now: float) -> Entry | None:
    """The entry that steers a new request (None: the default route)."""
    best: Rule | None = None
    slots: list[tuple[CsId, SessionId | None]] = [(request.cs_id, None)]
    if request.session_id is not None:
        slots.insert(0, (request.cs_id, request.session_id))
    for slot in slots:
        for rule in table.rules.get(slot, ()):
            if _live(table, rule.key, now) and matches(rule.match, request):
                if best is None or _ahead(table, rule, best):
                    best = rule
                break  # each slot is in precedence order
    if best is not None:
        return best
    service = table.steering.services.get(request.cs_id)
    if service is not None and _live(table, service.key, now):
        return service
    return None


def _ahead(table: Table, rule: Rule, other: Rule) -> bool:
    return precedence(rule, table.accepted[rule.key].at) < precedence(
        other, table.accepted[other.key].at
    )


@dataclass(frozen=True, slots=True)
class Route:
    """Where a request goes: a base URL, and the CATS headers of an encapsulated request."""

    base_url: str | None  # None: refused (``reason`` says why)
    csci_id: str | None = None
    egress: str | None = None  # set when the request is tunnelled to an egress forwarder
    reason: str = ""


def route(  # noqa: PLR0911 - one return per way a request goes
    entry: Entry | None,
    cs_id: str,
    tunnels: Mapping[str, Locator],
    default_routes: Mapping[str, Locator],
) -> Route:
    """The route of a request that ``entry`` steers (None: the default route)."""
    if entry is None or entry.mode is FallbackMode.DEFAULT_ROUTE:
        found = default_routes.get(cs_id)
        if found is None:
            why = "no active steering entry" if entry is None else "fallback-mode default-route"
            return Route(None, reason=f"{why} for CS-ID {cs_id} and no default route configured")
        return Route(found.base_url)
    tunnel = tunnels.get(entry.egress) if entry.egress is not None else None
    if entry.mode is FallbackMode.NETWORK_ONLY:
        if tunnel is None:
            return Route(None, reason=f"no tunnel to egress forwarder {entry.egress}")
        return Route(tunnel.base_url, egress=entry.egress)
    target = locator(entry.csci_id) if entry.csci_id is not None else None
    if target is None:
        return Route(None, reason=f"CSCI-ID {entry.csci_id} is not an IP:port locator")
    if tunnel is not None:
        return Route(tunnel.base_url, csci_id=entry.csci_id, egress=entry.egress)
    return Route(target.base_url, csci_id=entry.csci_id)


def local_choice(entry: ServiceEntry | None, counter: int) -> Route:
    """At the egress, network-only: one of the service's local CSCI-IDs, in turn (6.2.5)."""
    if entry is None:
        return Route(None, reason="no service entry at this egress forwarder")
    usable = [(c, found) for c in entry.local_csci_ids if (found := locator(c)) is not None]
    if not usable:
        return Route(None, reason=f"no local CSCI-ID for CS-ID {entry.cs_id}")
    csci, found = usable[counter % len(usable)]
    return Route(found.base_url, csci_id=csci)
