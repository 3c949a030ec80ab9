"""agents.csma.exchanges: what the C-SMA answered, bounded, rendered as valid state."""

from __future__ import annotations

import json

from agents.csma.exchanges import Exchange, Log, Operation, Request, Status, log_json, recorded
from controller.model import InstanceKind, Schema

AS = "ietf-cats-agent-selection"
QUERY = {"tenant": "t1", "session-id": "s1", "csci-id": ["B", "C"], "reuse-key": ["kv", "docs"]}
RESERVE = {
    "reservation-id": "rsv-1",
    "session-id": "s1",
    "tenant": "t1",
    "csci-id": "B",
    "element": [{"reuse-key": "kv"}, {"reuse-key": "docs"}],
    "size": "10",
    "needed-by": "2026-11-30T12:00:00Z",
}
RELEASE = {"session-id": "s1", "tenant": "t1", "csci-id": ["C"]}


def test_a_request_keeps_what_each_operation_names() -> None:
    assert Request.of(QUERY) == Request("s1", "t1", ("B", "C"), ("kv", "docs"))
    assert Request.of(RESERVE) == Request("s1", "t1", ("B",), ("kv", "docs"), "rsv-1")
    assert Request.of(RELEASE) == Request("s1", "t1", ("C",))


def test_the_log_keeps_the_most_recent_and_numbers_on() -> None:
    log = Log()
    for at in range(5):
        done = Exchange(Operation.QUERY_STATE, Request.of(QUERY), float(at), "cps", Status.ANSWERED)
        log = recorded(log, done, kept=3)
    assert [(index, e.at) for index, e in log.exchanges] == [(3, 2.0), (4, 3.0), (5, 4.0)]
    assert log.next_index == 6
    assert log_json(Log()) == {}


def test_the_log_renders_as_valid_operational_data(schema: Schema) -> None:
    log = Log()
    for operation, members, status, released in (
        (Operation.QUERY_STATE, QUERY, Status.ANSWERED, None),
        (Operation.RESERVE_STATE, RESERVE, Status.ACCEPTED, None),
        (Operation.RESERVE_STATE, RESERVE, Status.REFUSED, None),
        (Operation.RELEASE_STATE, RELEASE, Status.RELEASED, 1),
    ):
        done = Exchange(operation, Request.of(members), 1_800_000_000.0, "cps", status, released)
        log = recorded(log, done)
    rendered = log_json(log)
    document = {f"{AS}:agent-selection": {"c-sma": rendered}}
    schema.validate(json.dumps(document), InstanceKind.DATA)
    first, _, _, last = rendered["exchange"]
    assert first == {
        "index": "1",
        "operation": "query-state",
        "at": "2027-01-15T08:00:00.000Z",
        "user": "cps",
        "status": "answered",
        "session-id": "s1",
        "tenant": "t1",
        "csci-id": ["B", "C"],
        "reuse-key": ["kv", "docs"],
    }
    assert (last["status"], last["released"], last["csci-id"]) == ("released", 1, ["C"])
