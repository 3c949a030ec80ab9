"""Time series of the plots page, folded from the C-PS's tables and its NETCONF stream.

What the C-PS tells over time is its notifications (replayed from its log, then live):
``cst-entry-changed`` (GAS, Computing Time), ``nst-entry-changed`` (Network Delay, with the
delay before), ``selection-decision`` (its result) and ``forwarder-push`` (the time a steering
push took). The tables read now give each value where no event changed it within the window.
A value is known only from its first event (or from the start, when an event names the value
before it); unknown is not drawn (agent draft 7.5: unknown is not a value). TST is the
Computing Time of a candidate plus the Network Delay from the ingress to its egress
(service-metrics-op 6.2.3 step 4).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from controller.console.cps import Event
from controller.console.pages.tables import SM, Json, bare, entries

ST = "ietf-cats-steering"
#: The notifications the plots are made of (an XPath filter of the stream, RFC 8040 4.8.4).
PLOT_EVENTS = (
    f"{SM}:cst-entry-changed",
    f"{SM}:nst-entry-changed",
    f"{SM}:selection-decision",
    f"{ST}:forwarder-push",
)
Point = tuple[float, Decimal | None]


def epoch(text: str) -> float:
    """An RFC 3339 time as seconds since the epoch."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True, slots=True)
class Series:
    """A named line: points in time order (None: unknown from then on)."""

    name: str
    points: tuple[Point, ...]

    @property
    def last(self) -> Decimal | None:
        """The latest value."""
        return self.points[-1][1] if self.points else None


@dataclass
class Steps:
    """A value over time as steps: known from ``start`` (or its first change) on."""

    changes: list[Point] = field(default_factory=list)

    def at(self, moment: float) -> Decimal | None:
        """The value in force at ``moment``."""
        index = bisect_right([t for t, _ in self.changes], moment)
        return self.changes[index - 1][1] if index else None

    def times(self) -> list[float]:
        """When it changed."""
        return [t for t, _ in self.changes]


def _decimal(value: object) -> Decimal | None:
    return None if value is None else Decimal(str(value))


@dataclass
class Recorder:
    """The plots' state: per CST and NST entry its values over time, decisions per second by
    result, push latencies per forwarder. ``begin`` is the window's start (epoch s)."""

    begin: float
    computing_time: dict[tuple[str, str], Steps] = field(default_factory=dict)
    gas: dict[tuple[str, str], Steps] = field(default_factory=dict)
    delay: dict[tuple[str, str], Steps] = field(default_factory=dict)
    egress: dict[tuple[str, str], str] = field(default_factory=dict)
    site: dict[tuple[str, str], str] = field(default_factory=dict)
    decisions: Counter[tuple[int, str]] = field(default_factory=Counter)
    pushes: dict[str, list[Point]] = field(default_factory=lambda: defaultdict(list))

    def add(self, event: Event) -> bool:
        """Fold one notification in; whether it changed a plot."""
        short = event.name.split(":", 1)[-1]
        moment = max(epoch(event.time), self.begin) if event.time else self.begin
        body = event.body
        if short == "cst-entry-changed":
            key = (str(body.get("cs-id")), str(body.get("csci-id")))
            gone = body.get("change") in ("withdrawn", "aged-out")
            ct = None if gone else _decimal(body.get("computing-time"))
            gas = Decimal(0) if gone else _decimal(body.get("gas"))
            if gone or ct is not None:
                self.computing_time.setdefault(key, Steps()).changes.append((moment, ct))
            if gas is not None:
                self.gas.setdefault(key, Steps()).changes.append((moment, gas))
            return True
        if short == "nst-entry-changed":
            key = (str(body.get("ingress")), str(body.get("egress")))
            steps = self.delay.setdefault(key, Steps())
            before = _decimal(body.get("previous-network-delay"))
            if not steps.changes and before is not None:
                steps.changes.append((self.begin, before))
            gone = body.get("change") in ("stale", "removed")
            steps.changes.append((moment, None if gone else _decimal(body.get("network-delay"))))
            return True
        if short == "selection-decision":
            self.decisions[(int(moment), bare(body.get("result", "?")))] += 1
            return True
        if short == "forwarder-push" and body.get("duration") is not None:
            self.pushes[str(body.get("forwarder"))].append((moment, _decimal(body["duration"])))
            return True
        return False

    def settle(self, cst: Json, nst: Json) -> None:
        """Give the entries no event changed within the window their current value from
        the start; learn each CST entry's egress and site."""
        for entry in entries(cst, f"{SM}:computing-service-table"):
            key = (str(entry.get("cs-id")), str(entry.get("csci-id")))
            self.egress[key] = str(entry.get("egress", ""))
            self.site[key] = str(entry.get("site", entry.get("egress", "")))
            if key not in self.computing_time:
                value = None if entry.get("aged-out") else _decimal(entry.get("computing-time"))
                self.computing_time[key] = Steps([(self.begin, value)])
            if key not in self.gas:
                self.gas[key] = Steps([(self.begin, _decimal(entry.get("gas")))])
        for entry in entries(nst, f"{SM}:network-service-table"):
            key = (str(entry.get("ingress")), str(entry.get("egress")))
            if key not in self.delay:
                value = None if entry.get("stale") else _decimal(entry.get("network-delay"))
                self.delay[key] = Steps([(self.begin, value)])

    # -- the series ------------------------------------------------------------------------

    def services(self) -> list[str]:
        """The CS-IDs known."""
        return sorted({cs for cs, _ in self.computing_time})

    def ingresses(self) -> list[str]:
        """The ingresses known."""
        return sorted({ingress for ingress, _ in self.delay})

    def tst(self, cs_id: str, ingress: str, labels: dict[str, str] | None = None) -> list[Series]:
        """Total Service Time per candidate of ``cs_id`` from ``ingress``: CT + delay."""
        found = []
        for key in sorted(k for k in self.computing_time if k[0] == cs_id):
            ct = self.computing_time[key]
            path = self.delay.get((ingress, self.egress.get(key, "")), Steps())
            moments = sorted({self.begin, *ct.times(), *path.times()})
            points = []
            for moment in moments:
                a, b = ct.at(moment), path.at(moment)
                points.append((moment, None if a is None or b is None else a + b))
            name = (labels or {}).get(key[1], key[1])
            found.append(Series(name, _compact(points)))
        return found

    def gas_per_site(self) -> list[Series]:
        """The GAS of each site: the sum over its entries (unknown while one is)."""
        sites: dict[str, list[Steps]] = defaultdict(list)
        for key, steps in self.gas.items():
            sites[self.site.get(key, "?")].append(steps)
        found = []
        for site, members in sorted(sites.items()):
            moments = sorted({self.begin, *(t for s in members for t in s.times())})
            points = []
            for moment in moments:
                values = [s.at(moment) for s in members]
                total = None if any(v is None for v in values) else sum(v or 0 for v in values)
                points.append((moment, None if total is None else Decimal(total)))
            found.append(Series(site, _compact(points)))
        return found

    def decisions_per_second(self, end: float) -> list[Series]:
        """Decisions per second, one line per result, 0 in seconds without one."""
        results = sorted({result for _, result in self.decisions})
        seconds = range(int(self.begin), int(end) + 1)
        return [
            Series(r, tuple((float(s), Decimal(self.decisions.get((s, r), 0))) for s in seconds))
            for r in results
        ]

    def push_latency(self) -> list[Series]:
        """The duration of each steering push (ms), per forwarder."""
        return [Series(name, tuple(points)) for name, points in sorted(self.pushes.items())]


def _compact(points: Iterable[Point]) -> tuple[Point, ...]:
    """Drop points that repeat the value before them (steps stay the same)."""
    kept: list[Point] = []
    for point in points:
        if kept and kept[-1][1] == point[1]:
            continue
        kept.append(point)
    return tuple(kept)
