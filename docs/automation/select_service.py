"""Configure a service policy, report metrics and print the decision, with controller.sdk.

The scenario is service-metrics-op 7.5 (Scenario D): service ARS at two sites, SCI-1
(188.3.67.3:67, price 10) behind CF-2 and SCI-3 (188.3.67.4:69, price 5) behind CF-3; the policy
caps ARS at price 8 and minimizes latency, so SCI-1 is excluded ``price-above-maximum`` and SCI-3
is selected. Every object is a pyangbind binding of the modules; every refusal an SdkError with
the error-tag, app-tag and path, printed, exit status 1.

    python docs/automation/select_service.py --restconf http://127.0.0.1:8080/restconf \\
        --user admin --password-file admin.password
    python docs/automation/select_service.py --netconf 127.0.0.1:8830 --user admin \\
        --password-file admin.password      # the same over NETCONF (SSH)

The reports are sent as the same user; the C-PS takes the user as the reporting C-SMA and
C-NMA, and their sequence numbers from the clock (milliseconds), so the script can run again.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from controller.sdk import Controller, SdkError, objects
from controller.sdk.objects import SM, Binding

INGRESS = "10.0.0.1"
SITES = {  # CSCI-ID: (egress CF, site, GAS, Computing Time ms, price, network delay ms)
    "188.3.67.3:67": ("188.3.67.3", "SS2", 400, "5", 10, "8"),
    "188.3.67.4:69": ("188.3.67.4", "SS3", 600, "6", 5, "6"),
}


def connect(args: argparse.Namespace) -> Controller:
    """RESTCONF or NETCONF, as the user with the password of the file."""
    password = Path(args.password_file).read_text(encoding="utf-8").strip()
    if args.netconf:
        host, _, port = args.netconf.rpartition(":")
        return Controller.netconf(host, int(port), args.user, password=password)
    return Controller.restconf(args.restconf, args.user, password)


def configure(cps: Controller, max_price: int) -> None:
    """Where each CSCI-ID attaches (service-metrics-op 9), and the policy of ARS (6.2.4)."""
    attachments = objects.top(SM, "csci-attachments")
    for csci_id, (egress, site, *_) in SITES.items():
        attachment = attachments.attachment.add(csci_id)
        attachment.egress, attachment.site = egress, site
    cps.edit(attachments)
    policy = objects.top(SM, "selection-policy")
    ars = policy.service_policy.add("ARS")
    ars.description = "Scenario D: ARS within a price budget, lowest latency first"
    ars.requirement.hard_constraints.max_price = max_price
    ars.requirement.objective.append("minimize-latency")
    cps.set_selection_policy(policy)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def report(cps: Controller) -> None:
    """The CST entries of the two SCIs (a C-SMA's report) and the NST paths (a C-NMA's)."""
    service = cps.new_input(SM, "report-service-metrics")
    service.sequence_number, service.timestamp = time.time_ns() // 1_000_000, now()
    for csci_id, (egress, _, gas, computing_time, price, _) in SITES.items():
        entry = service.entry.add(cs_id="ARS", csci_id=csci_id)
        entry.gas, entry.computing_time, entry.price = gas, computing_time, price
        entry.health, entry.egress = "healthy", egress
    refused = cps.report_service_metrics(service).refused_entry
    for entry in refused.values():
        print(f"refused CST entry {entry.csci_id}: {entry.reason}", file=sys.stderr)
    network = cps.new_input(SM, "report-network-metrics")
    network.sequence_number, network.timestamp = time.time_ns() // 1_000_000, now()
    for egress, *_, delay in SITES.values():
        network.path.add(ingress=INGRESS, egress=egress).delay = delay
    cps.report_network_metrics(network)


def show(decision: Binding) -> None:
    """The decision as a table: every candidate with its TST and rank, or why it was excluded."""
    print(f"select-service ARS at {INGRESS}: {decision.result}, fallback {decision.fallback_level}")
    print(
        f"{'candidate':<16}{'egress':<13}{'GAS':>5}{'CT ms':>8}{'TST ms':>8}{'price':>6}  outcome"
    )
    for candidate in decision.candidate.values():
        outcome = (
            f"excluded {candidate.reason}"
            if candidate.reason
            else f"rank {candidate.rank} score {candidate.score}"
        )
        print(
            f"{candidate.csci_id:<16}{candidate.egress:<13}{candidate.gas:>5}"
            f"{candidate.computing_time:>8}{candidate.total_service_time:>8}"
            f"{candidate.price:>6}  {outcome}"
        )
    print(f"selected: {decision.csci_id} (egress {decision.egress})")


def main(argv: list[str] | None = None) -> int:
    """Configure, report, select, print; 1 with the server's error when it refuses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--restconf", help="the RESTCONF root, http://HOST:PORT/restconf")
    where.add_argument("--netconf", help="HOST:PORT of the NETCONF server")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--max-price", type=int, default=8)
    args = parser.parse_args(argv)
    try:
        with connect(args) as cps:
            configure(cps, args.max_price)
            report(cps)
            show(cps.select_service("ARS", INGRESS, candidate_report="all"))
    except SdkError as exc:
        for item in exc.items:
            where_ = f" at {item.path}" if item.path else ""
            app_tag = f" ({item.app_tag})" if item.app_tag else ""
            print(f"refused: {item.tag}{app_tag}{where_}: {item.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
