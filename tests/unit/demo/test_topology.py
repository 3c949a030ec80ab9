"""The demo's configuration of each process is what the agents accept (service-metrics-op 7.1)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agents.cnma.config import load_config as load_cnma
from agents.csma.config import load_config as load_csma
from controller.demo import topology as t
from controller.demo.cli import add_parsers
from controller.model import Encoding, InstanceKind, Schema


def test_each_sci_listens_on_the_loopback_twin_of_its_draft_locator() -> None:
    sci3 = t.BY_LABEL["SCI-3"]
    assert (sci3.draft_csci_id, sci3.address, sci3.preferred_port) == (
        "188.3.67.4:69",
        "127.3.67.4",
        20069,
    )
    assert sci3.csci_id(20069) == "127.3.67.4:20069"


def test_sci_configurations_are_valid_ietf_cats_sci(schema: Schema) -> None:
    ports = {i.name: 9000 + n for n, i in enumerate(i for s in t.SCIS for i in s.instances)}
    for spec in t.SCIS:
        config = t.sci_config(spec, spec.preferred_port, "http://127.0.0.1:1/restconf", ports)
        schema.validate(json.dumps(config), InstanceKind.DATA, Encoding.JSON)
        assert config["ietf-cats-sci:sci"]["optional-metrics"] == {"cost": spec.price}


def test_gas_follows_from_capacity_as_in_7_1() -> None:
    gas = {s.label: int(0.8 * sum(i.capacity for i in s.instances)) for s in t.SCIS}
    assert gas == {"SCI-1": 400, "SCI-2": 100, "SCI-3": 600}


def test_the_csma_and_cnma_accept_their_configurations(tmp_path: Path) -> None:
    ids = {s.label: s.csci_id(s.preferred_port) for s in t.SCIS}
    for site in t.SITES:
        path = t.write_json(
            tmp_path / f"{site.csma}.json", t.csma_config(site, "http://x", "p", ids)
        )
        config = load_csma(path)
        assert config.site == site.site
    document = t.cnma_config("http://127.0.0.1:1/restconf", "p", {t.CF3: t.link_delay_for("20")})
    link = next(x for x in document["topology"]["links"] if x["to"] == t.CF3)
    assert link["delay"] == "18"
    load_cnma(t.write_json(tmp_path / "cnma.json", document))


def test_the_cps_seed_attaches_each_csci_id_at_its_draft_egress() -> None:
    ids = {s.label: s.csci_id(s.preferred_port) for s in t.SCIS}
    seed = t.cps_seed({"admin": "$6$x"}, {"admin": ["admin"]}, ids, heartbeat=2)
    attachments = seed[f"{t.SM}:csci-attachments"]["attachment"]
    assert {a["csci-id"]: a["egress"] for a in attachments} == {
        "127.3.67.3:20067": t.CF2,
        "127.3.67.3:20068": t.CF2,
        "127.3.67.4:20069": t.CF3,
    }
    groups = seed["ietf-netconf-acm:nacm"]["groups"]["group"]
    assert groups == [{"name": "admin", "user-name": ["admin"]}]  # least privilege: only it


@pytest.mark.parametrize("argv", [["--only", "AX"], ["--congested-delay", "1"]])
def test_demo_options_are_checked(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_parsers(parser.add_subparsers())
    args = parser.parse_args(["demo", "--only", "b,d", "--congested-delay", "18.5"])
    assert (args.only, args.congested_delay) == (frozenset("BD"), "18.5")
    with pytest.raises(SystemExit):
        parser.parse_args(["demo", *argv])
