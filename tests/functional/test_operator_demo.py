"""The operator commands against the demo bed: ``catsctl show`` tables of a running C-PS with its
agents and forwarders, and ``catsctl explain`` naming the decision that installed the ingress
forwarder's service entry (its reasons, and the entry as the forwarder holds it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from functools import partial
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from controller.demo.bed import Bed, BedSettings, start_bed
from controller.demo.forwarders import CS_IDS, INGRESS_NAME, ST, inventory, service, steering
from controller.demo.launch import wait_until
from controller.demo.scenarios import ALL, ARS, PATH_MS
from controller.observability.ports import DEFAULT_PORTS
from tests.conftest import ROOT

pytestmark = pytest.mark.functional
#: Prometheus samples by name and sorted labels.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
CS_ID = CS_IDS[0]
WAIT_S = 60.0


def measured(entry: dict[str, Any]) -> bool:
    """A CST entry with a measured Computing Time (a C-SMA advertises 0 for none)."""
    return Decimal(str(entry.get("computing-time", 0))) > 0


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """The demo's processes with forwarders, the forwarder inventory configured."""
    folder = tmp_path_factory.mktemp("operator-demo")
    with start_bed(BedSettings(folder, forwarders=True)) as running:
        # both ARS sites measured (not necessarily healthy: on a loaded machine the measured
        # Computing Times may exceed the thresholds; the tables and the decision exist anyway)
        running.set_paths(PATH_MS)
        ars = {running.csci(label) for label in ARS}
        running.wait_cst(
            "both ARS sites with a measured Computing Time",
            lambda cst: all(measured(cst.get(csci, {})) for csci in ars),
            drive=ALL,
            timeout=WAIT_S,
        )
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


def scrape(url: str) -> Samples:
    """Every sample of ``url``/metrics, parsed by prometheus_client's own parser."""
    text = requests.get(f"{url}/metrics", timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(found: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(
        value
        for (sample, sample_labels), value in found.items()
        if sample == name and set(labels.items()) <= set(sample_labels)
    )


def ready(url: str) -> bool:
    """Whether ``url``/readyz answers 200."""
    return requests.get(f"{url}/readyz", timeout=10).status_code == 200


def test_every_long_running_process_of_the_bed_is_alive_ready_and_metered(bed: Bed) -> None:
    managed = [c for c in bed.launcher.children if c.kind in DEFAULT_PORTS]
    assert {c.kind for c in managed} == set(DEFAULT_PORTS)  # serve, sci, csma, cnma, forwarder
    urls = {c.name: wait_until(c.name, c.management_url, timeout=WAIT_S) for c in managed}
    for name, url in urls.items():
        assert requests.get(f"{url}/healthz", timeout=10).status_code == 200, name
        wait_until(f"{name} ready", partial(ready, url), timeout=WAIT_S)
        assert total(scrape(url), "cats_build_info") == 1.0, name
    serve = next(c for c in managed if c.kind == "serve")
    wait_until(
        "a steering write to the ingress",
        lambda: total(
            scrape(urls[serve.name]),
            "cats_southbound_push_duration_seconds_count",
            forwarder=INGRESS_NAME,
        ),
        timeout=WAIT_S,
    )
    cps = scrape(urls[serve.name])
    assert total(cps, "cats_cps_cst_entries") >= len(bed.cst()) >= 2
    assert total(cps, "cats_cps_nst_entries") >= 1
    assert total(cps, "cats_cps_reports_total", result="accepted") >= 1
    assert total(cps, "cats_cps_decisions_total") >= 1
    before = total(cps, "cats_cps_select_service_duration_seconds_count")
    bed.select()
    after = scrape(urls[serve.name])
    assert total(after, "cats_cps_select_service_duration_seconds_count") == before + 1
