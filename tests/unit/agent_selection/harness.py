"""An AgentSelection over the in-memory C-SMA double, with its inputs and outputs checked
against ietf-cats-agent-selection by libyang, as the server core would check them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from controller.agent_selection import AgentSelection, AgentSelectionSettings
from controller.agent_selection.config import AgentConfig, parse, with_defaults
from controller.agent_selection.steering import NoSteering, Steering
from controller.datastore import rpc
from controller.datastore.api import SYSTEM
from controller.datastore.shared import SharedRecords
from controller.model import Encoding, InstanceKind, Schema, nodes
from controller.types import DataPath, Json
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.csma_double import CsmaDouble

AS = "ietf-cats-agent-selection"


@dataclass
class Clock:
    """A settable clock."""

    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Harness:
    """The service, its double, its notifications, and the schema that checks them."""

    schema: Schema
    config: Json
    clock: Clock = field(default_factory=Clock)
    csma: CsmaDouble = field(default_factory=CsmaDouble)
    notes: list[Json] = field(default_factory=list)
    steering: Steering = field(default_factory=NoSteering)
    records: SharedRecords | None = None  # a cluster's (None: a single C-PS)
    service: AgentSelection = field(init=False)
    _parsed: dict[str, AgentConfig] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.csma.clock = self.clock
        self.service = AgentSelection(
            self._config,
            self.csma,
            self.clock,
            self._publish,
            AgentSelectionSettings(steering=self.steering, records=self.records),
        )

    def _config(self) -> AgentConfig:
        """The configuration as the C-PS reads it from running: with the module's defaults."""
        document = json.dumps({f"{AS}:agent-selection": self.config}, sort_keys=True)
        cached = self._parsed.get(document)
        if cached is None:
            cached = parse(with_defaults(self.config, self.schema))
            self._parsed = {document: cached}
        return cached

    def _publish(self, document: Json) -> None:
        self.schema.validate(json.dumps(document), InstanceKind.NOTIF)
        self.notes.append(document)

    def checked_input(self, name: str, members: Json) -> Json:
        """The input of an RPC of ietf-cats-agent-selection as libyang parses and validates it
        (what the server core, or a C-SMA for the calls the C-PS makes, would accept)."""
        ctx = self.schema.context.cdata
        operation = rpc.resolve(ctx, DataPath(f"/{AS}:{name}"))
        tree, op = rpc.parse_input(ctx, operation, json.dumps(members), Encoding.JSON)
        try:
            rpc.validate_input(ctx, tree, nodes.ffi.NULL)
            checked: Json = rpc.members_of(op, operation)
        finally:
            nodes.free_all(tree)
        return checked

    def call(self, name: str, members: Json) -> Json:
        """Invoke a handler with schema-checked input and output (as the core does)."""
        ctx = self.schema.context.cdata
        operation = rpc.resolve(ctx, DataPath(f"/{AS}:{name}"))
        checked = self.checked_input(name, members)
        handler = getattr(self.service, name.replace("-", "_"), None)
        if handler is None:
            handler = getattr(self.service.advertisements, name.replace("-", "_"))
        else:  # as wired: what it changed is kept in the cluster before it answers
            handler = self.service.saved(handler)
        output: Json = handler(SYSTEM, checked)
        if output:
            tree, _ = rpc.parse_output(ctx, operation, output)
            try:
                rpc.validate_output(ctx, tree, nodes.ffi.NULL)
            finally:
                nodes.free_all(tree)
        return output

    def state(self) -> Json:
        """The sessions state, validated with the configuration as one data tree."""
        sessions = self.service.sessions_state()
        document = {f"{AS}:agent-selection": {**self.config, **sessions}}
        document[f"{AS}:agent-selection"]["sessions"] = sessions[f"{AS}:sessions"]
        document[f"{AS}:agent-selection"].pop(f"{AS}:sessions")
        self.schema.validate(json.dumps(document), InstanceKind.DATA)
        found: Json = sessions[f"{AS}:sessions"]
        return found

    def session(self, session_id: str) -> Json:
        """One session of the state."""
        for entry in self.state().get("session", ()):
            if entry["session-id"] == session_id:
                found: Json = entry
                return found
        raise KeyError(session_id)

    def named(self, name: str) -> list[Json]:
        """The notifications of one kind, in order."""
        return [n[f"{AS}:{name}"] for n in self.notes if f"{AS}:{name}" in n]

    def setup(self, specs: list[drafts.Spec]) -> None:
        """Advertise the candidates and put what they hold in the C-SMA's table."""
        now = self.clock.now
        self.call("advertise-capability", drafts.capability(specs, now))
        self.call("advertise-forwarding-view", drafts.forwarding(specs, now))
        for csci_id, key in drafts.holdings(specs):
            self.csma.hold(csci_id, drafts.TENANT, key)


def harness(
    schema: Schema,
    specs: list[drafts.Spec],
    context: Json | None = None,
    steering: Steering | None = None,
    records: SharedRecords | None = None,
) -> Harness:
    """A harness over the candidates of one example, already advertised (its steering
    instructions handed to ``steering``)."""
    config = drafts.config(specs, 830, context)
    made = Harness(schema, config, steering=steering or NoSteering(), records=records)
    made.setup(specs)
    return made
