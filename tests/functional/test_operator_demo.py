"""The operator commands against the demo bed: ``catsctl show`` tables of a running C-PS with its
agents and forwarders, and ``catsctl explain`` naming the decision that installed the ingress
forwarder's service entry (its reasons, and the entry as the forwarder holds it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from controller.demo.bed import Bed, BedSettings, start_bed
from controller.demo.forwarders import CS_IDS, INGRESS_NAME, ST, inventory, service, steering
from controller.demo.launch import wait_until
from controller.demo.scenarios import ready_71
from controller.demo.steps import Run
from tests.conftest import ROOT

pytestmark = pytest.mark.functional
CS_ID = CS_IDS[0]
WAIT_S = 60.0


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """The demo's processes with forwarders, the forwarder inventory configured."""
    folder = tmp_path_factory.mktemp("operator-demo")
    with start_bed(BedSettings(folder, forwarders=True)) as running:
        ready_71(Run(running))  # the 7.1 state: both ARS sites measured, as stage A has it
        password = running.settings.agent_password
        document = inventory(running.forwarders, password, agents=False)
        running.cps.put(f"{ST}:forwarders", document)
        yield running


def catsctl(bed: Bed, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``catsctl ARGUMENTS`` as an operator types it, against the bed's C-PS as its admin."""
    password = bed.settings.folder / "admin.password"
    password.write_text(bed.settings.admin_password + "\n")
    password.chmod(0o600)
    login = [
        *("--url", f"http://127.0.0.1:{bed.ports['restconf']}"),
        *("--user", "admin", "--password-file", str(password)),
    ]
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *arguments, *login],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=60,
    )


def ingress_entry(bed: Bed) -> dict[str, object]:
    """The ingress forwarder's service entry of the demo service, as the forwarder holds it."""
    found: dict[str, object] = service(
        steering(bed.forwarders[INGRESS_NAME], bed.settings.agent_password), CS_ID
    )
    return found


def test_show_prints_the_tables_of_the_running_bed(bed: Bed) -> None:
    wait_until("CST entries", lambda: len(bed.cst()) >= 2, timeout=WAIT_S)
    cst = catsctl(bed, "show", "cst")
    assert cst.returncode == 0, cst.stderr
    lines = cst.stdout.splitlines()
    assert lines[0].split(" | ")[:3] == ["cs-id", "csci-id", "egress"] or lines[0].startswith(
        "cs-id"
    )
    assert "computing-time ms" in lines[0]
    for csci_id in bed.cst():
        assert any(csci_id in line for line in lines[2:]), csci_id
    wait_until(
        "the ingress session",
        lambda: "connected" in catsctl(bed, "show", "forwarders").stdout,
        timeout=WAIT_S,
    )
    forwarders = catsctl(bed, "show", "forwarders").stdout
    assert forwarders.splitlines()[0].startswith("name")
    for name in ("ingress", "CF-2", "CF-3"):
        assert any(line.startswith(name) for line in forwarders.splitlines()[2:]), name
    senders = catsctl(bed, "show", "senders")
    assert senders.returncode == 0
    assert senders.stdout.splitlines()[0].startswith("source")
    commits = catsctl(bed, "show", "commits").stdout.splitlines()
    assert commits[0].split(" | ")[:3] == ["id", "time", "user"] or commits[0].startswith("id")
    assert any(" | admin " in line and "PUT" in line for line in commits[2:])  # the inventory
    as_json = catsctl(bed, "show", "nst", "--json")
    assert as_json.stdout.lstrip().startswith(
        '{\n  "ietf-cats-service-metrics:network-service-table"'
    )


def test_explain_names_the_decision_that_installed_the_ingress_entry(bed: Bed) -> None:
    wait_until(
        "the ingress entry", lambda: bool(ingress_entry(bed).get("decision-id")), timeout=WAIT_S
    )
    entry = ingress_entry(bed)
    decision_id = str(entry["decision-id"])
    assert decision_id.isdigit()  # a kept decision number, not a content hash
    explained = catsctl(bed, "explain", "--forwarder", INGRESS_NAME, "--service", CS_ID)
    assert explained.returncode == 0, explained.stderr
    text = explained.stdout
    current = catsctl(bed, "explain", "--forwarder", INGRESS_NAME, "--service", CS_ID, "--json")
    assert current.returncode == 0
    assert f"installed by decision {decision_id}" in text or decision_id != str(
        ingress_entry(bed)["decision-id"]
    )  # a re-evaluation may have replaced the entry meanwhile: it then names the new one
    first = text.splitlines()[0]
    assert first.startswith(f"{INGRESS_NAME} service {CS_ID} (now): installed by decision ")
    assert "decision " in text.splitlines()[2]
    assert "trigger" in text or "(re-evaluation)" in text
    header = text.splitlines()[3]
    assert header.startswith("csci-id")
    rows = text.splitlines()[5:]
    assert any("rank 1" in row or "excluded" in row for row in rows)
    old = catsctl(
        bed,
        "explain",
        "--forwarder",
        INGRESS_NAME,
        "--service",
        CS_ID,
        "--at",
        "2000-01-01T00:00:00Z",
    )
    assert old.returncode == 1
    assert "no service entry" in old.stdout
