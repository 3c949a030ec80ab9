"""How the agent-selection application is registered with the server core (the C-PS)."""

from __future__ import annotations

from controller.agent_selection.service import AgentSelection
from controller.agent_selection.values import MODULE
from controller.datastore.api import Registrations, RpcHandler
from controller.observability.metrics import AGENT_SESSIONS
from controller.types import DataPath, SchemaPath

SESSIONS = DataPath(f"/{MODULE}:agent-selection/sessions")
CANDIDATES = DataPath(f"/{MODULE}:agent-selection/candidates")


def register(registrations: Registrations, service: AgentSelection) -> None:
    """Add the RPC handlers and the state provider of ietf-cats-agent-selection."""
    adverts = service.advertisements
    rpcs: dict[str, RpcHandler] = {
        "submit-descriptor": service.saved(service.submit_descriptor),
        "step-boundary": service.saved(service.step_boundary),
        "advertise-capability": adverts.advertise_capability,
        "advertise-forwarding-view": adverts.advertise_forwarding_view,
        "evaluate": service.saved(service.evaluate),
        "state-transfer-notice": service.saved(service.state_transfer_notice),
        "invalidation-notice": service.saved(service.invalidation_notice),
        "accounting-feedback": service.saved(service.accounting_feedback),
        "close-session": service.saved(service.close_session),
    }
    for name, handler in rpcs.items():
        registrations.rpcs[SchemaPath(f"/{MODULE}:{name}")] = handler
    registrations.state[SESSIONS] = service.sessions_state
    AGENT_SESSIONS.source = service.session_counts
    registrations.state[CANDIDATES] = service.candidates_state
