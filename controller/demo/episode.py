"""Stage G's part of the system: the candidates B and C of the step-30 episode
(agent-selection-mapping 8.4, 6.8) placed at the two service sites of service-metrics-op 7.1,
the state their C-SMAs hold, and what the C-PS is configured with and told about them.

B sits at SS2 behind CF-2 and C at SS3 behind CF-3, each a ``catsctl service-instance`` on the
site's loopback twin address (127.3.67.3, 127.3.67.4) whose IP:port locator is its CSCI-ID, so
that the forwarders can carry a commitment to it (``locators``: letter -> CSCI-ID). The site
C-SMAs csma-ss2 and csma-ss3 answer for them (query-state, reserve-state, release-state over
NETCONF) besides reporting their SCIs: each holds its candidate's reuse keys for the tenant in
accelerator memory (B the documents, C the whole working set) and admits the C-PS as
:data:`CPS_USER`. The C-PS gets its ``agent-selection`` configuration (tiers, candidates with
the C-SMA that answers for each and the login there) and the ``csci-attachments`` that place B
at CF-2 and C at CF-3, so that a commitment's steering rule names its egress. The
advertisements carry the draft's numbers. MSG-4 comes from the site C-SMAs themselves: each is
configured with its candidate's capability (:func:`csma_agent_config`) and advertises it at
start and every :data:`ADVERTISING_MS`, as a deployment's would, with no hand-written
advertiser. MSG-7 is sent by the demo under the C-NMA's user (:func:`forwarding_advertisement`):
``catsctl cnma`` does send advertise-forwarding-view, but from a topology it can only state a
path's delay as a mean (the average of the links' delays, RFC 7471 4.1) or a probe's median,
never the p95 the episode's objective reads, and the draft's paths (p95 400 ms, median 8 ms)
are not a topology's. Pure: documents in, documents out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from controller.demo import drafts, topology
from controller.demo.topology import CF2, CF3, SITES, SM, InstanceSpec, SiteSpec
from controller.types import Json

AS = drafts.AS
CPS_USER = "cps"  # the C-PS's user at the C-SMAs
GATEWAY_USER = "gateway"  # the agent gateway's user at the C-PS
CNMA_USER = "cnma"
CNMA_SOURCE = "cnma-7.1"  # the C-NMA's name (docs/examples/cnma-7.1.toml)
# How often the site C-SMAs advertise (a freshness bound of three times this): a refresh
# every 15 s keeps the view fresh through a stall of 30 s on a loaded machine.
ADVERTISING_MS = 15_000
SESSION = "s-episode"  # the session of agents/gateway/examples/step30-episode.json


@dataclass(frozen=True)
class Placed:
    """A candidate of the episode at a service site: its draft values (named by the draft's
    letter) and where it is."""

    spec: drafts.Spec
    site: str
    egress: str

    @property
    def letter(self) -> str:
        """The draft's name: B or C."""
        return self.spec.csci_id

    @property
    def csma(self) -> str:
        """The C-SMA that answers for it."""
        return next(s.csma for s in SITES if s.site == self.site)

    @property
    def address(self) -> str:
        """The loopback twin of its site's egress address: 188.3.67.4 -> 127.3.67.4."""
        return "127." + self.egress.split(".", 1)[1]

    def located(self, locators: Mapping[str, str]) -> drafts.Spec:
        """Its draft values under its CSCI-ID."""
        return replace(self.spec, csci_id=locators[self.letter])


CANDIDATES = tuple(
    Placed(spec, site, egress)
    for spec, (site, egress) in zip(drafts.episode(), (("SS2", CF2), ("SS3", CF3)), strict=True)
)
BY_LETTER = {c.letter: c for c in CANDIDATES}


def instance_args(placed: Placed, port: int) -> list[str]:
    """``catsctl service-instance`` standing for a candidate at ``address:port``."""
    spec = InstanceSpec(f"agent-{placed.letter.lower()}", capacity=16, service_ms=5)
    return topology.instance_args(spec, port, placed.address)


def localized(document: Json, locators: Mapping[str, str]) -> Json:
    """A gateway description whose expectations name the candidates by CSCI-ID instead of
    the draft's letters (``selected``, ``commitment``, the keys of ``excluded``: members of
    ``expect`` only, agents/gateway/FORMAT.md)."""

    def name(key: str, member: Any) -> Any:
        if key in ("selected", "commitment") and isinstance(member, str):
            return locators.get(member, member)
        if key == "excluded" and isinstance(member, dict):
            return {locators.get(k, k): v for k, v in member.items()}
        return walk(member)

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {key: name(key, member) for key, member in value.items()}
        return value

    result: Json = walk(document)
    return result


def csma_agent_config(site: SiteSpec, password: str, locators: Mapping[str, str]) -> Json:
    """What a site C-SMA adds for the episode: the C-PS's login, the reservation policy, its
    candidate with the reuse keys it holds (agents/csma config_state) and the capability it
    advertises (MSG-4, the draft's numbers), and how often it does."""
    instances = [
        {
            "csci-id": locators[c.letter],
            "cs-id": c.spec.service,
            "capacity": 10**12,
            "capability": drafts.stated_capability(c.spec),
            "state": [
                {"tenant": drafts.TENANT, "reuse-key": key, "residency": "accelerator-memory"}
                for key in c.spec.holds
            ],
        }
        for c in CANDIDATES
        if c.site == site.site
    ]
    return {
        "users": [{"name": CPS_USER, "password": password, "role": "cps"}],
        "reservations": {"validity-ms": 30_000, "max-rate": 10, "window-ms": 60_000},
        "advertising": {"interval-ms": ADVERTISING_MS},
        "instances": instances,
    }


def with_agent_csma(
    config: Json, site: SiteSpec, password: str, locators: Mapping[str, str]
) -> Json:
    """A site C-SMA's configuration that also answers for its episode candidate."""
    extra = csma_agent_config(site, password, locators)
    return config | {"users": [*config.get("users", []), *extra.pop("users")]} | extra


def with_agent_selection(
    seed: Json, netconf: Mapping[str, int], password: str, locators: Mapping[str, str]
) -> Json:
    """The C-PS's ``--init-data`` with agent selection for the episode: the configuration
    (each candidate behind its site's C-SMA, reached on ``netconf[site]``) and the
    attachments of B and C to their egress."""
    placed = {locators[c.letter]: c for c in CANDIDATES}

    def route(spec: drafts.Spec) -> Json:
        where = placed[spec.csci_id]
        return drafts.c_sma(netconf[where.site], where.csma, (CPS_USER, password))

    document = drafts.config([c.located(locators) for c in CANDIDATES], route)
    for candidate in document["candidates"]["candidate"]:
        where = placed[candidate["csci-id"]]
        candidate |= {"site": where.site, "egress-forwarder": where.egress}
    attachments = seed[f"{SM}:csci-attachments"]["attachment"]
    attached = [
        {"csci-id": locators[c.letter], "egress": c.egress, "site": c.site} for c in CANDIDATES
    ]
    return seed | {
        f"{AS}:agent-selection": document,
        f"{SM}:csci-attachments": {"attachment": [*attachments, *attached]},
    }


@dataclass(frozen=True)
class Advertisement:
    """An RPC of ietf-cats-agent-selection and the user of the agent that sends it."""

    user: str
    operation: str
    members: Json


def forwarding_advertisement(
    now: float, locators: Mapping[str, str], delays: Mapping[str, float] | None = None
) -> Advertisement:
    """MSG-7 of the C-NMA for both candidates, stamped ``now``, with the forwarding p95 of a
    candidate replaced where ``delays`` (letter -> seconds) says."""
    specs = [
        replace(c.located(locators), delay=(delays or {}).get(c.letter, c.spec.delay))
        for c in CANDIDATES
    ]
    return Advertisement(
        CNMA_USER,
        "advertise-forwarding-view",
        drafts.forwarding(specs, now, source=CNMA_SOURCE),
    )
