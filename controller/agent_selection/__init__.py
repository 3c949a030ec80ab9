"""The C-PS wiring of agent selection (draft-mo-cats-agent-selection-mapping-00, 6-11, 14-15).

Thin RPC handlers of ietf-cats-agent-selection over the pure procedure of
:mod:`controller.selection.mapping`, per-session state, the handoff state machine (P9), and
the calls to the C-SMAs through :mod:`controller.southbound`, and the steering instructions
(MSG-10) handed to the forwarders through the :class:`Steering` seam.
"""

from controller.agent_selection.config import RunningAgentConfig
from controller.agent_selection.decisions import AgentSelectionSettings
from controller.agent_selection.service import AgentSelection
from controller.agent_selection.steering import (
    Placement,
    Steering,
    SteeringInstruction,
    steering_rule,
)
from controller.agent_selection.wiring import SESSIONS, register

__all__ = [
    "SESSIONS",
    "AgentSelection",
    "AgentSelectionSettings",
    "Placement",
    "RunningAgentConfig",
    "Steering",
    "SteeringInstruction",
    "register",
    "steering_rule",
]
