"""Who may call the C-SMA: its NACM rule lists (RFC 8341), one group per role of ``[[users]]``."""

from __future__ import annotations

from agents.common.logins import rule
from agents.csma import stateview

_AS = stateview.MODULE
_WRITE = "create update delete"

#: The C-SMA's access control (RFC 8341), one group per role of ``[[users]]``: an SCI reports
#: its metrics and nothing else; the C-PS reads and asks about state (query, reserve, release);
#: an operator does everything but change users and access control, which come from the file.
#: The C-PS may also read the state view and subscribe to its changes. The handlers check,
#: besides, which CSCI-IDs an SCI user may report for.
RULE_LISTS = (
    {
        "name": "sci",
        "group": ["sci"],
        "rule": [
            rule(
                "report",
                "permit",
                module_name="ietf-cats-sci",
                rpc_name="report-sci-metrics",
                access_operations="exec",
            ),
            rule("deny-rest", "deny"),
        ],
    },
    {
        "name": "cps",
        "group": ["cps"],
        "rule": [
            *(
                rule(name, "permit", module_name=_AS, rpc_name=name, access_operations="exec")
                for name in ("query-state", "reserve-state", "release-state")
            ),
            *(
                rule(name, "permit", module_name=module, rpc_name=name, access_operations="exec")
                for module, name in (
                    ("notifications", "create-subscription"),  # state-presence-changed
                    ("ietf-netconf", "get"),
                    ("ietf-netconf", "get-config"),
                    ("ietf-netconf-nmda", "get-data"),
                )
            ),
            rule("no-other-operations", "deny", rpc_name="*", access_operations="exec"),
            rule("no-writes", "deny", access_operations=_WRITE),
        ],
    },
    {
        "name": "operator",
        "group": ["operator"],
        "rule": [
            rule("no-users", "deny", module_name="ietf-system", access_operations=_WRITE),
            rule("no-nacm", "deny", module_name="ietf-netconf-acm"),
            rule("the-rest", "permit"),
        ],
    },
)
