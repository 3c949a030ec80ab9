"""rpc-errors of the agent-selection RPCs: what the schema cannot say, named by its path."""

from __future__ import annotations

from controller.agent_selection.values import MODULE
from controller.errors import CatsError, ErrorItem, ErrorType


class AgentSelectionError(CatsError):
    """An agent-selection RPC refused its input; nothing changed."""


def refused(operation: str, leaf: str, message: str, app_tag: str) -> AgentSelectionError:
    """``invalid-value`` at ``/ietf-cats-agent-selection:OPERATION/LEAF``."""
    path = f"/{MODULE}:{operation}/{leaf}"
    return AgentSelectionError(
        ErrorItem(ErrorType.APPLICATION, "invalid-value", message, path, app_tag)
    )


def unknown_session(operation: str, leaf: str, session_id: str) -> AgentSelectionError:
    """The session is not known to the C-PS (never admitted, or past its retention)."""
    return refused(operation, leaf, f"no session {session_id!r}", "unknown-session")


def closed_session(operation: str, leaf: str, session_id: str) -> AgentSelectionError:
    """The session is closed or failed: it takes no more steps."""
    return refused(operation, leaf, f"session {session_id!r} is closed", "session-closed")


def other_tenant(operation: str) -> AgentSelectionError:
    """A descriptor naming a session of another tenant (15)."""
    message = "the session belongs to another tenant"
    return refused(operation, "descriptor/tenant", message, "tenant-mismatch")


def rate_limited(operation: str, message: str) -> AgentSelectionError:
    """``resource-denied`` (app tag ``rate-limited``) at the operation: over a rate bound."""
    path = f"/{MODULE}:{operation}"
    return AgentSelectionError(
        ErrorItem(ErrorType.APPLICATION, "resource-denied", message, path, "rate-limited")
    )


def handoff_settled(handoff_id: str, state: str, status: str) -> AgentSelectionError:
    """``operation-failed`` (app tag ``handoff-STATE``): a state-transfer-notice for a handoff
    that is already settled otherwise (a late notice of an aborted handoff, a failure reported
    after the commit); MSG-13 cannot change a terminal handoff record (9.2, M43)."""
    path = f"/{MODULE}:state-transfer-notice/handoff-id"
    message = (
        f"handoff {handoff_id!r} is {state}: a {status!r} notice cannot change it"
        " (start a new handoff with evaluate if the session should move)"
    )
    return AgentSelectionError(
        ErrorItem(ErrorType.APPLICATION, "operation-failed", message, path, f"handoff-{state}")
    )
