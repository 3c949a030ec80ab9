"""Stage G's part of the system: the candidates at the sites, the C-SMAs' state, the C-PS's
configuration and the advertisements, and the gateway description under CSCI-IDs."""

from __future__ import annotations

import json
from pathlib import Path

from agents.csma.capability import Advertised, advertisement
from agents.csma.config import load_config
from controller.demo import drafts, episode
from controller.demo.agent import EXAMPLE, description
from controller.demo.topology import SCIS, SITES, SM, csma_config, write_json
from controller.types import Json

LOCATORS = {"B": "127.3.67.3:40001", "C": "127.3.67.4:40002"}
NOW = 1_800_000_000.0
AS = episode.AS


def test_b_is_at_ss2_behind_cf2_and_c_at_ss3_behind_cf3_on_the_sites_twin_addresses() -> None:
    placed = {c.letter: (c.site, c.egress, c.csma, c.address) for c in episode.CANDIDATES}
    assert placed == {
        "B": ("SS2", "188.3.67.3", "csma-ss2", "127.3.67.3"),
        "C": ("SS3", "188.3.67.4", "csma-ss3", "127.3.67.4"),
    }
    assert episode.instance_args(episode.BY_LETTER["C"], 40002)[1:3] == [
        "--listen",
        "127.3.67.4:40002",
    ]


def test_each_site_csma_holds_its_candidates_reuse_keys_and_admits_the_c_ps() -> None:
    ss2, ss3 = SITES
    base = {"name": "csma-ss3", "users": [{"name": "sci-3", "role": "sci"}]}
    config = episode.with_agent_csma(base, ss3, "pw", LOCATORS)
    assert [u["name"] for u in config["users"]] == ["sci-3", episode.CPS_USER]
    (instance,) = config["instances"]
    assert instance["csci-id"] == LOCATORS["C"]
    assert sorted(s["reuse-key"] for s in instance["state"]) == [
        "ctx",
        "docs-core",
        "docs-extra",
        "plan",
    ]
    (b,) = episode.csma_agent_config(ss2, "pw", LOCATORS)["instances"]
    assert sorted(s["reuse-key"] for s in b["state"]) == ["docs-core", "docs-extra"]


def test_the_c_ps_reaches_each_candidate_through_its_sites_csma_and_attaches_it() -> None:
    seed = {f"{SM}:csci-attachments": {"attachment": [{"csci-id": "x", "egress": "e"}]}}
    netconf = {"SS2": 8302, "SS3": 8303}
    document = episode.with_agent_selection(seed, netconf, "pw", LOCATORS)
    candidates = document[f"{AS}:agent-selection"]["candidates"]["candidate"]
    routes = {
        c["csci-id"]: (c["c-sma"]["name"], c["c-sma"]["port"], c["egress-forwarder"])
        for c in candidates
    }
    assert routes == {
        LOCATORS["B"]: ("csma-ss2", 8302, "188.3.67.3"),
        LOCATORS["C"]: ("csma-ss3", 8303, "188.3.67.4"),
    }
    attached = document[f"{SM}:csci-attachments"]["attachment"]
    assert [(a["csci-id"], a["egress"]) for a in attached] == [
        ("x", "e"),
        (LOCATORS["B"], "188.3.67.3"),
        (LOCATORS["C"], "188.3.67.4"),
    ]


def test_the_c_nma_view_is_sent_under_its_user_with_the_paths_as_given() -> None:
    sent = episode.forwarding_advertisement(0.0, LOCATORS, {"B": 0.05})
    assert (sent.user, sent.operation) == ("cnma", "advertise-forwarding-view")
    paths = {
        c["csci-id"]: c["path-set"]["path"][0]["delay"]["p95"] for c in sent.members["candidate"]
    }
    assert paths == {LOCATORS["B"]: "50.000", LOCATORS["C"]: "400.000"}


def _without_freshness(document: Json) -> Json:
    """The document without its freshness bounds (the C-SMA's is three intervals)."""
    if isinstance(document, dict):
        return {k: _without_freshness(v) for k, v in document.items() if k != "freshness-bound"}
    return document


def test_each_site_csma_advertises_its_candidate_with_the_drafts_numbers(
    tmp_path: Path,
) -> None:
    """The site C-SMA's configuration validates against cats-csma-config, and the MSG-4 that
    ``catsctl csma`` builds from it (agents.csma.capability) is the draft's computing view of
    its candidate, value for value, under its own name as the source."""
    csci_ids = {s.label: f"{s.address}:1" for s in SCIS}
    for site in SITES:
        base = csma_config(site, "http://127.0.0.1:1/restconf", "pw", csci_ids)
        path = write_json(
            tmp_path / f"{site.csma}.json", episode.with_agent_csma(base, site, "pw", LOCATORS)
        )
        config = load_config(path)
        assert config.advertising.interval == episode.ADVERTISING_MS / 1000
        instances = [Advertised(i.csci_id, i.cs_id, i.capability) for i in config.instances]
        members = advertisement(config.name, instances, {}, NOW, 45_000)
        assert members is not None
        (placed,) = [c for c in episode.CANDIDATES if c.site == site.site]
        (candidate,) = members["candidate"]
        assert candidate["csci-id"] == LOCATORS[placed.letter]
        expected = drafts.computing(placed.spec, NOW, source=site.csma)
        assert _without_freshness(candidate["computing"]) == _without_freshness(expected)


def test_the_description_expects_the_candidates_by_csci_id_and_leaves_the_session_open() -> None:
    shipped = json.loads(EXAMPLE.read_text())
    played = description(LOCATORS)
    (session,) = played["sessions"]
    assert session["close"] is False
    assert session["admission"]["expect"]["commitment"] == LOCATORS["C"]
    decisions = session["turns"][0]["steps"][0]["expect"]["decisions"]
    assert [d["selected"] for d in decisions] == [LOCATORS["C"]] * 2
    assert session["descriptor"] == shipped["sessions"][0]["descriptor"]  # the draft's content
    renamed = episode.localized({"expect": {"excluded": {"B": "x"}, "state": "C"}}, LOCATORS)
    assert renamed == {"expect": {"excluded": {LOCATORS["B"]: "x"}, "state": "C"}}
