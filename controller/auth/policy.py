"""The shipped default access-control policy of the C-PS (RFC 8341 ``nacm``), least privilege.

One group per role the system has; a user belongs to exactly one of them. Rule-lists are
evaluated in order and the first matching rule decides (RFC 8341 3.4.5), so each agent role's
list ends with a rule that denies everything it did not permit. Secrets (password hashes and
the southbound credentials) are default-deny-all, so only ``admin`` reads them.

- admin: everything.
- operator: read all but secrets; write the selection policy, update control, attachments,
  the agent-selection configuration and the forwarder inventory; no users, no NACM.
- observer: read all but secrets; get, get-config, get-data, get-schema,
  create-subscription and cats-controller-admin's compare; nothing else.
- csma: report-service-metrics, advertise-capability, state-transfer-notice.
- cnma: report-network-metrics, advertise-forwarding-view.
- gateway: submit-descriptor, step-boundary, evaluate, invalidation-notice,
  accounting-feedback, close-session; NETCONF get; read the agent-selection sessions.
- client: select-service, report-session-feedback (the clients, ingress forwarders and SCIs
  that ask the C-PS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from controller.types import Json

SM = "ietf-cats-service-metrics"
AS = "ietf-cats-agent-selection"
ST = "ietf-cats-steering"
WRITE = "create update delete"

#: The groups of the default policy, in the order their rule-lists apply.
GROUPS = ("admin", "operator", "observer", "csma", "cnma", "gateway", "client")

#: The RPCs each agent role sends, by module (agent draft 9.1; service-metrics-op 6, 8).
AGENT_RPCS: dict[str, tuple[tuple[str, str], ...]] = {
    "csma": (
        (SM, "report-service-metrics"),
        (AS, "advertise-capability"),
        (AS, "state-transfer-notice"),
    ),
    "cnma": ((SM, "report-network-metrics"), (AS, "advertise-forwarding-view")),
    "gateway": (
        (AS, "submit-descriptor"),
        (AS, "step-boundary"),
        (AS, "evaluate"),
        (AS, "invalidation-notice"),
        (AS, "accounting-feedback"),
        (AS, "close-session"),
        ("ietf-netconf", "get"),
    ),
    "client": ((SM, "select-service"), (SM, "report-session-feedback")),
}

#: What each agent role reads (data-node paths).
AGENT_READS: dict[str, tuple[str, ...]] = {
    "gateway": (f"/{AS}:agent-selection/sessions",),
}

#: Read-only protocol operations an observer may invoke.
OBSERVER_RPCS = (
    ("cats-controller-admin", "compare"),  # read-only: it shows what the observer may read
    ("ietf-netconf", "get"),
    ("ietf-netconf", "get-config"),
    ("ietf-netconf-nmda", "get-data"),
    ("ietf-netconf-monitoring", "get-schema"),
    ("notifications", "create-subscription"),
)


def _rule(name: str, action: str, *, module: str = "*", access: str = "*", **target: str) -> Json:
    rule: Json = {"name": name, "module-name": module, "access-operations": access}
    rule.update({key.replace("_", "-"): value for key, value in target.items()})
    rule["action"] = action
    return rule


def _exec(module: str, rpc: str) -> Json:
    return _rule(f"exec-{rpc}", "permit", module=module, access="exec", rpc_name=rpc)


def rule_lists() -> list[Json]:
    """The rule-lists of the default policy, in order."""
    lists: list[Json] = [
        {"name": "admin", "group": ["admin"], "rule": [_rule("permit-all", "permit")]},
        {
            "name": "operator",
            "group": ["operator"],
            "rule": [
                _rule("no-nacm", "deny", module="ietf-netconf-acm"),
                _rule("no-users", "deny", module="ietf-system", access=WRITE),
                _rule("selection-policy", "permit", module=SM, access=WRITE),
                _rule("agent-selection", "permit", module=AS, access=WRITE),
                _rule("forwarder-inventory", "permit", module=ST, access=WRITE),
            ],
        },
        {
            "name": "observer",
            "group": ["observer"],
            "rule": [
                *(_exec(module, rpc) for module, rpc in OBSERVER_RPCS),
                _rule("no-exec", "deny", access="exec", rpc_name="*"),
                _rule("no-write", "deny", access=WRITE),
            ],
        },
    ]
    for group in ("csma", "cnma", "gateway", "client"):
        rules = [_exec(module, rpc) for module, rpc in AGENT_RPCS[group]]
        for index, path in enumerate(AGENT_READS.get(group, ())):
            rules.append(_rule(f"read-{index}", "permit", access="read", path=path))
        rules.append(_rule("deny-rest", "deny"))
        lists.append({"name": group, "group": [group], "rule": rules})
    return lists


def default_policy(members: Mapping[str, Sequence[str]]) -> Json:
    """The ``ietf-netconf-acm:nacm`` document: the members of each group, the rule-lists,
    and the defaults of RFC 8341 stated explicitly."""
    groups = [
        {"name": group, "user-name": list(members.get(group, ()))}
        for group in GROUPS
        if members.get(group)
    ]
    return {
        "ietf-netconf-acm:nacm": {
            "enable-nacm": True,
            "read-default": "permit",
            "write-default": "deny",
            "exec-default": "permit",
            "enable-external-groups": False,
            "groups": {"group": groups},
            "rule-list": rule_lists(),
        }
    }


def read_only_rule_list(group: str) -> Json:
    """The rule-list of ``catsctl serve --read-only-group GROUP``: members of the group may
    not create, update or delete anything (reads and operations stay as the rest allows)."""
    return {
        "name": f"read-only-{group}",
        "group": [group],
        "rule": [_rule("no-writes", "deny", access=WRITE)],
    }
