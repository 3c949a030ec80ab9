"""The composition root of the C-PS (``catsctl serve``): which applications run in the server.

The generic model-driven server is :mod:`controller.server`; this module only wires the C-PS
into it. :func:`install_cps` installs the service metrics of :func:`install_service_metrics`
(:mod:`controller.service_metrics`), the agent selection of :func:`install_agent_selection`
(:mod:`controller.agent_selection`), whose commitments reach the forwarders through
:class:`~controller.agent_selection.forwarders.ForwarderSteering`, and the steering of the
forwarders (:mod:`controller.southbound`). ``catsctl serve`` calls :func:`serve`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from controller import heap
from controller.agent_selection import (
    AgentSelection,
    AgentSelectionSettings,
    RunningAgentConfig,
    Steering,
)
from controller.agent_selection import register as register_agent_selection
from controller.agent_selection.csmas import ConfiguredStateAgents, NetconfLogins
from controller.agent_selection.feeds import NetconfSubscriptions
from controller.agent_selection.forwarders import ForwarderSteering
from controller.datastore.api import Registrations
from controller.server import Composed, Host, Hosted, ServeSettings
from controller.server import serve as serve_application
from controller.service_metrics import RunningConfig, ServiceMetrics
from controller.service_metrics import register as register_cps
from controller.southbound import PeerSettings
from controller.southbound.forwarders import SteeringService
from controller.southbound.inventory import FORWARDERS, RunningInventory
from controller.types import CsciId, CsId, SchemaPath


def _service_metrics(
    registrations: Registrations, host: Host
) -> tuple[ServiceMetrics, SteeringService, RunningConfig]:
    config = RunningConfig(host.core)
    service_metrics = ServiceMetrics(
        config,
        publish=host.publish,
        state_dir=host.settings.state_dir,  # the sender ledger (replay protection), decisions
        decision_max_age=host.settings.decision_max_age,
    )
    register_cps(registrations, service_metrics)  # plugins may replace its entries
    registrations.rpcs[PROVENANCE] = service_metrics.steering_provenance
    steering = SteeringService(  # southbound; each new service entry names its decision
        host.core,
        service_metrics.steering_outcomes,
        provenance=service_metrics,
        publish=host.publish,  # forwarder-push
        leader=host.leader,  # in a cluster only the leader pushes, fenced by its term
    )
    host.watch_leader(steering.leadership_changed)
    service_metrics.on_tables_changed = steering.on_tables_changed
    registrations.state[FORWARDERS] = steering.state
    return service_metrics, steering, config


#: cats-controller-admin's steering-provenance, answered from the C-PS's decision archive.
PROVENANCE = SchemaPath("/cats-controller-admin:steering-provenance")


def install_service_metrics(registrations: Registrations, host: Host) -> Hosted:
    """The C-PS application (controller.service_metrics): reports into the CST and NST,
    select-service."""
    service_metrics, steering, _ = _service_metrics(registrations, host)
    return Composed((service_metrics, steering))


def attached_egress(
    config: RunningConfig, service_metrics: ServiceMetrics
) -> Callable[[CsId, CsciId], str | None]:
    """The egress forwarder of an instance: its configured ``csci-attachments`` egress, else
    the egress of its CST entry (as the joint selection attaches it, service-metrics-op 6.2.3
    step 3)."""

    def egress(cs_id: CsId, csci_id: CsciId) -> str | None:
        attachment = config().attachments.get(csci_id)
        if attachment is not None and attachment.egress:
            return attachment.egress
        entry = service_metrics.cst.get(cs_id, csci_id)  # one dict lookup; entries are values
        return None if entry is None or entry.egress is None else str(entry.egress)

    return egress


#: How long the C-PS waits for a C-SMA's answer (query-state, reserve-state, release-state).
CSMA_TIMEOUT_S = 10.0


def install_agent_selection(
    registrations: Registrations, host: Host, steering: Steering | None = None
) -> Hosted:
    """Agent selection (controller.agent_selection): the RPCs of ietf-cats-agent-selection,
    configured by its ``agent-selection`` container in running, notifying on the NETCONF
    stream, calling the C-SMAs with the credentials configured for each, and handing its
    steering instructions to ``steering`` (to nobody when None)."""
    config = RunningAgentConfig(host.core)
    agents = ConfiguredStateAgents(config, NetconfLogins(PeerSettings(timeout=CSMA_TIMEOUT_S)))
    settings = AgentSelectionSettings(
        state_dir=host.settings.state_dir,  # reuse-key scope
        subscribe=NetconfSubscriptions(PeerSettings(timeout=CSMA_TIMEOUT_S)),
        acts=lambda: host.leader() is not None,  # in a cluster: only the leader sweeps
        records=None if host.shared is None else host.shared("agent-sessions"),
    )
    if steering is not None:
        settings = replace(settings, steering=steering)
    service = AgentSelection(config, agents, publish=host.publish, settings=settings)
    register_agent_selection(registrations, service)  # plugins may replace its entries
    return service


#: The C-PS's southbound passwords: stored encrypted, read by administrators only.
SOUTHBOUND_SECRETS = (
    SchemaPath("/ietf-cats-steering:forwarders/forwarder/password"),
    SchemaPath("/ietf-cats-agent-selection:agent-selection/candidates/candidate/c-sma/password"),
)


def install_cps(registrations: Registrations, host: Host) -> Hosted:
    """The C-PS of ``catsctl serve``: service metrics, agent selection handing its commitments
    to the forwarders, and the steering of the forwarders, started in that order. Agent
    selection starts before the steering workers, so any commitment it holds at start is
    intended before their first reconciliation, which would otherwise remove its rule from the
    forwarders. Last, the start-up heap is frozen (:mod:`controller.heap`)."""
    registrations.secrets.update(SOUTHBOUND_SECRETS)
    service_metrics, steering, config = _service_metrics(registrations, host)
    seam = ForwarderSteering(
        steering, RunningInventory(host.core), attached_egress(config, service_metrics)
    )
    agents = install_agent_selection(registrations, host, seam)
    return Composed((service_metrics, agents, steering, heap.Settled()))


def serve(settings: ServeSettings, stop: threading.Event | None = None) -> int:
    """Run the C-PS until ``stop`` is set; returns the exit code."""
    return serve_application(settings, install_cps, stop)
