"""The C-SMA as an application of the model-driven server (controller.server ``Installer``).

:func:`installer` registers, on the same composition as the C-PS: report-sci-metrics
(sci-implementation 7), query-state, reserve-state and release-state (agent-selection-mapping
9.1 MSG-5/6, 11/12, 16) and the state view as operational data under
``ietf-cats-agent-selection:agent-selection/candidates`` with the exchanges it answered under
``agent-selection/c-sma`` (:mod:`agents.csma.exchanges`); it publishes state-presence-changed
on the NETCONF stream. :class:`CsmaService` holds the values (cache, view, reservation book)
behind one lock; the decisions are the pure functions of the sibling modules.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agents.common.clock import date_and_time
from agents.common.logins import rule, seed_logins
from agents.common.restconf import RestconfTransport, Transport
from agents.common.sequence import SequenceStore
from agents.csma import aggregate, cache, exchanges, messages, reservations, stateview
from agents.csma.advertiser import Advertiser
from agents.csma.config import Aggregation, CsmaConfig, UserConfig
from agents.csma.errors import refused
from agents.csma.report import SCI_RPC, freshness_seconds, sci_metrics
from agents.csma.reporter import Reporter
from agents.csma.values import Entry, EntryKey
from controller.datastore.api import Principal, Registrations
from controller.server import Host, Hosted, Installer
from controller.types import CsciId, DataPath, Json

LOG = logging.getLogger("agents.csma")
_AS = stateview.MODULE
_WRITE = "create update delete"

#: The C-SMA's access control (RFC 8341), one group per role of ``[[users]]``: an SCI reports
#: its metrics and nothing else; the C-PS reads and asks about state (query, reserve, release);
#: an operator does everything but change users and access control, which come from the file.
#: The C-PS may also read the state view and subscribe to its changes. The handlers check,
#: besides, which CSCI-IDs an SCI user may report for.
RULE_LISTS = (
    {
        "name": "sci",
        "group": ["sci"],
        "rule": [
            rule(
                "report",
                "permit",
                module_name="ietf-cats-sci",
                rpc_name="report-sci-metrics",
                access_operations="exec",
            ),
            rule("deny-rest", "deny"),
        ],
    },
    {
        "name": "cps",
        "group": ["cps"],
        "rule": [
            *(
                rule(name, "permit", module_name=_AS, rpc_name=name, access_operations="exec")
                for name in ("query-state", "reserve-state", "release-state")
            ),
            *(
                rule(name, "permit", module_name=module, rpc_name=name, access_operations="exec")
                for module, name in (
                    ("notifications", "create-subscription"),  # state-presence-changed
                    ("ietf-netconf", "get"),
                    ("ietf-netconf", "get-config"),
                    ("ietf-netconf-nmda", "get-data"),
                )
            ),
            rule("no-other-operations", "deny", rpc_name="*", access_operations="exec"),
            rule("no-writes", "deny", access_operations=_WRITE),
        ],
    },
    {
        "name": "operator",
        "group": ["operator"],
        "rule": [
            rule("no-users", "deny", module_name="ietf-system", access_operations=_WRITE),
            rule("no-nacm", "deny", module_name="ietf-netconf-acm"),
            rule("the-rest", "permit"),
        ],
    },
)
STATE_PATH = DataPath(f"/{stateview.MODULE}:agent-selection")
SWEEP_S = 0.2


@dataclass(frozen=True, slots=True)
class Values:
    """Everything the C-SMA knows, replaced as a whole under the lock."""

    cache: cache.SiteCache
    view: stateview.StateView
    book: reservations.Book
    log: exchanges.Log = field(default_factory=exchanges.Log)


def _view(config: CsmaConfig) -> stateview.StateView:
    seeded = [e for i in config.instances for e in i.state]
    return stateview.StateView(
        {e.key: e for e in seeded}, frozenset(i.csci_id for i in config.instances)
    )


def _rules(config: CsmaConfig) -> reservations.Rules:
    capacities = {i.csci_id: reservations.Capacity(i.capacity, i.tenants) for i in config.instances}
    return reservations.Rules(capacities, config.reservations)


class CsmaService:
    """The running C-SMA application: RPC handlers, state, reporter and sweeper threads."""

    def __init__(
        self,
        config: CsmaConfig,
        host: Host,
        connect: Callable[[CsmaConfig], Transport] = lambda c: RestconfTransport(c.cps),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config, self._host, self._clock = config, host, clock
        self._lock = threading.Lock()
        self._values = Values(cache.SiteCache(), _view(config), reservations.Book())
        self._users: Mapping[str, UserConfig] = {u.name: u for u in config.users}
        store = SequenceStore(Path(host.settings.state_dir) / "reporting")
        self.reporter = Reporter(
            config.reporting, config.site, self.entries, connect(config), store
        )
        self.advertiser = Advertiser(
            lambda: self.config,
            self.instance_entries,
            connect(config),
            SequenceStore(Path(host.settings.state_dir) / "advertising"),
            clock,
        )
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._withheld: frozenset[EntryKey] = frozenset()  # logged already

    # -- lifecycle (controller.server Hosted) -------------------------------------------------

    def start(self) -> None:
        """Put the configured users into running, then start reporting and sweeping."""
        self._seed_users()
        self._threads = [
            threading.Thread(target=self.reporter.run, name="csma-reporter", daemon=True),
            threading.Thread(target=self.advertiser.run, name="csma-advertiser", daemon=True),
            threading.Thread(target=self._sweep, name="csma-sweeper", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        LOG.info(
            "c-sma %s of site %s reporting to %s",
            self.config.name,
            self.config.site,
            self.config.cps.url,
        )

    def close(self) -> None:
        """Stop the threads (the servers no longer call in)."""
        self._stop.set()
        for loop in (self.reporter, self.advertiser):
            loop.stop.set()
            loop.wake.set()
        for thread in self._threads:
            thread.join(timeout=10)

    def reload(self, config: CsmaConfig) -> None:
        """An operator's new configuration: users, reporting settings, the state seed and the
        capabilities (advertised at once)."""
        users_changed = config.users != self.config.users
        if not users_changed:  # the same logins: keep the hashes running has
            config = replace(config, users=self.config.users)
        with self._lock:
            before = self._values
            view = stateview.reseed(
                before.view,
                [e for i in config.instances for e in i.state],
                frozenset(i.csci_id for i in config.instances),
            )
            self._values = replace(before, view=view)
            self.config = config
            self._users = {u.name: u for u in config.users}
            self.reporter.reporting = config.reporting
        if users_changed:
            self._seed_users()
        self._announce(before.view, view)
        self.advertiser.wake.set()  # a changed capability goes out now, not an interval later
        LOG.info("configuration reloaded")

    def _seed_users(self) -> None:
        seed_logins(self._host.core(), self.config.users, RULE_LISTS)

    # -- the site's entries and the sweeper ------------------------------------------------

    def entries(self) -> dict[EntryKey, Entry]:
        """The entries to advertise now (per SCI, or aggregated per site and service).

        An entry without a measured Computing Time carries the configured estimate
        (``confidence estimated``); without an estimate it is withheld, and logged once until
        it is measured or an estimate is configured (:mod:`agents.csma.aggregate`).
        """
        with self._lock:
            current = self._values.cache
        live = cache.live(current, self._clock())
        reporting = self.config.reporting
        site_csci = None
        if reporting.aggregation is Aggregation.PER_SITE:
            site_csci = CsciId(self.config.site_csci_id)
            entries = aggregate.per_site(live, site_csci, self.config.site, reporting.estimates)
        else:
            entries = aggregate.per_sci(live, reporting.estimates)
        withheld = frozenset(aggregate.withheld(live, entries, site_csci))
        for cs_id, csci_id in sorted(withheld - self._withheld):
            LOG.warning(
                "entry (%s, %s) withheld: no Computing Time measured yet and no estimate "
                "configured (reporting.computing-time-estimate or "
                "a reporting/computing-time-estimates entry for %s)",
                cs_id,
                csci_id,
                cs_id,
            )
        self._withheld = withheld
        return entries

    def instance_entries(self) -> dict[EntryKey, Entry]:
        """Each SCI's entry as it stands now (what MSG-4 says of the instance's load)."""
        live = cache.live(self._values.cache, self._clock())  # one read of an immutable value
        return aggregate.per_sci(live, self.config.reporting.estimates)

    def _sweep(self) -> None:
        while not self._stop.wait(SWEEP_S):
            now = self._clock()
            with self._lock:
                before = self._values
                book, view = reservations.expire(before.book, before.view, now)
                view = stateview.evict_expired(view, now)
                forgotten = cache.forget(before.cache, now, self.config.reporting.forget_after)
                self._values = replace(before, cache=forgotten, view=view, book=book)
            self._announce(before.view, view)

    def _announce(self, before: stateview.StateView, after: stateview.StateView) -> None:
        if before is after:
            return
        for document in stateview.notifications(before, after, self._clock(), self.config.name):
            self._host.publish(document)

    def _user(self, principal: Principal) -> UserConfig | None:
        return self._users.get(principal.user)

    # -- RPC handlers ----------------------------------------------------------------------

    def report_sci_metrics(self, principal: Principal, members: Json) -> Json:
        """report-sci-metrics: check the sender, then apply the report to the cache."""
        csci = str(members["csci-id"])
        user = self._user(principal)
        if user is None or not user.may_report(csci):
            raise refused(
                "access-denied",
                f"{principal.user} may not report for CSCI-ID {csci}",
                app_tag="not-authorized-for-csci",
                path=f"{SCI_RPC}/csci-id",
            )
        sequence = int(str(members["sequence-number"]))
        lifetime = (
            self.config.reporting.sci_expiry
            or freshness_seconds(members)
            or 3 * self.config.reporting.heartbeat
        )
        arrival = cache.Arrival(sci_metrics(members), sequence, principal.user)
        now = self._clock()
        with self._lock:
            try:
                updated, outcome = cache.accept(self._values.cache, arrival, now, lifetime)
            except cache.RegressedError as exc:
                raise refused(
                    "operation-failed",
                    str(exc),
                    app_tag="sequence-number-regressed",
                    path=f"{SCI_RPC}/sequence-number",
                ) from exc
            except cache.OwnedError as exc:
                raise refused(
                    "access-denied",
                    str(exc),
                    app_tag="reported-by-another-sci",
                    path=f"{SCI_RPC}/csci-id",
                ) from exc
            self._values = replace(self._values, cache=updated)
        if outcome is cache.Outcome.APPLIED:
            self.reporter.wake.set()
        return {
            "accepted-sequence-number": str(sequence),
            "expires-at": date_and_time(now + lifetime),
        }

    def _note(
        self,
        operation: exchanges.Operation,
        members: Json,
        principal: Principal,
        status: exchanges.Status,
        released: int | None = None,
    ) -> None:
        """Keep the exchange for the operator (agent-selection/c-sma); under the lock."""
        asked = exchanges.Request.of(members)
        done = exchanges.Exchange(operation, asked, self._clock(), principal.user, status, released)
        self._values = replace(self._values, log=exchanges.recorded(self._values.log, done))

    def _may_query(self, principal: Principal, operation: str) -> None:
        user = self._user(principal)
        if user is None or not user.may_query:
            raise refused(
                "access-denied", f"{principal.user} may not call {operation}", path=operation
            )

    def query_state(self, principal: Principal, members: Json) -> Json:
        """query-state (MSG-5, answered with MSG-6)."""
        self._may_query(principal, messages.QUERY_STATE)
        asked = messages.state_query(members)
        with self._lock:
            view = self._values.view
            self._note(
                exchanges.Operation.QUERY_STATE, members, principal, exchanges.Status.ANSWERED
            )
        return stateview.query(view, asked, self._clock(), self.config.name)

    def reserve_state(self, principal: Principal, members: Json) -> Json:
        """reserve-state (MSG-11, answered with MSG-12)."""
        self._may_query(principal, messages.RESERVE_STATE)
        request = messages.reserve_request(members)
        rules = _rules(self.config)
        if request.csci_id not in rules.capacities:
            raise refused(
                "invalid-value",
                f"this C-SMA does not answer for {request.csci_id}",
                app_tag="unknown-instance",
                path=f"{messages.RESERVE_STATE}/csci-id",
            )
        with self._lock:
            before = self._values
            book, view, answer = reservations.reserve(
                before.book, before.view, rules, request, self._clock()
            )
            self._values = replace(before, book=book, view=view)
            status = exchanges.Status.ACCEPTED if answer.accepted else exchanges.Status.REFUSED
            self._note(exchanges.Operation.RESERVE_STATE, members, principal, status)
        if not answer.accepted:
            LOG.info("reservation %s refused: %s", request.reservation_id, answer.refusal)
        self._announce(before.view, view)
        return messages.answer_json(answer)

    def release_state(self, principal: Principal, members: Json) -> Json:
        """release-state (MSG-16): best effort, no output."""
        self._may_query(principal, messages.RELEASE_STATE)
        request = messages.release_request(members)
        with self._lock:
            before = self._values
            book, view, count = reservations.release(before.book, before.view, request)
            self._values = replace(before, book=book, view=view)
            self._note(
                exchanges.Operation.RELEASE_STATE,
                members,
                principal,
                exchanges.Status.RELEASED,
                count,
            )
        LOG.info("released %d reservations of session %s", count, request.session_id)
        self._announce(before.view, view)
        return {}

    def state(self) -> Json:
        """The state view and the exchanges answered, as operational data."""
        with self._lock:
            view, log = self._values.view, self._values.log
        cs_ids = {i.csci_id: i.cs_id for i in self.config.instances}
        found = stateview.state_json(view, cs_ids, self._clock(), self.config.name)
        answered = exchanges.log_json(log)
        if answered:
            found[f"{stateview.MODULE}:agent-selection"]["c-sma"] = answered
        return found


def installer(config: CsmaConfig) -> Installer:
    """The C-SMA's installer for :class:`controller.server.Application`."""

    def install(registrations: Registrations, host: Host) -> Hosted:
        service = CsmaService(config, host)
        registrations.rpcs[SCI_RPC] = service.report_sci_metrics
        registrations.rpcs[messages.QUERY_STATE] = service.query_state
        registrations.rpcs[messages.RESERVE_STATE] = service.reserve_state
        registrations.rpcs[messages.RELEASE_STATE] = service.release_state
        registrations.state[STATE_PATH] = service.state
        return service

    return install
