"""``catsctl show | config | explain | audit``: operator commands against a running server.

They talk RESTCONF (:mod:`.client`) and print tables (:mod:`.tables`), or with ``--json`` the
RFC 7951 data untouched, as ``show ... | display json`` does on a router.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from controller.commandline import DefaultsShown
from controller.operator.client import DEFAULT_CONFIG, DEFAULT_URL, Client, OperatorError, login
from controller.operator.tables import VIEWS, render, table

ADMIN = "cats-controller-admin"


def _client(args: argparse.Namespace) -> Client:
    return Client(login(args.url, args.user, args.password_file, args.config))


def _print_json(document: Any) -> None:
    print(json.dumps(document, indent=2))


def _cmd_show(args: argparse.Namespace) -> int:
    view = VIEWS[args.what]
    document = _client(args).get(view.resource)
    if args.json:
        _print_json(document)
    else:
        print("\n".join(render(view, document)))
    return 0


def _patch_json(result: dict[str, Any]) -> dict[str, Any]:
    """The compare result's YANG Patch as RFC 8072 JSON, each value parsed."""
    patch = dict(result.get("yang-patch", {}))
    edits = []
    for edit in patch.get("edit", []):
        shown = dict(edit)
        if "value" in shown:
            shown["value"] = json.loads(shown["value"])
        edits.append(shown)
    if edits:
        patch["edit"] = edits
    return {"ietf-yang-patch:yang-patch": patch}


def _print_result(args: argparse.Namespace, result: dict[str, Any], done: str) -> None:
    if args.json:
        _print_json(
            {**{k: v for k, v in result.items() if k != "yang-patch"}, **_patch_json(result)}
        )
        return
    diff = result.get("unified-diff", "")
    if diff:
        print(diff, end="")
    print(f"{result.get('changes', 0)} change(s){done}")


def _cmd_config(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.action == "history":
        view = VIEWS["commits"]
        document = client.get(view.resource)
        if args.json:
            _print_json(document)
        else:
            print("\n".join(render(view, document)))
        return 0
    if args.action == "compare":
        members = {"source": args.source, "target": args.target}
        _print_result(args, client.rpc(f"{ADMIN}:compare", members), "")
        return 0
    if args.action == "rollback":
        members = _rollback_members(args)
        result = client.rpc(f"{ADMIN}:rollback", members)
        made = result.get("commit-id")
        _print_result(args, result, f"; commit {made}" if made else " (nothing committed)")
        return 0
    members = {"comment": args.comment, "label": args.label, "confirm-timeout": args.confirmed}
    members = {k: v for k, v in members.items() if v is not None}
    if args.dry_run:
        members["dry-run"] = [None]
    result = client.rpc(f"{ADMIN}:commit", members)
    made = result.get("commit-id")
    _print_result(args, result, f"; commit {made}" if made else " (nothing committed)")
    return 0


def _rollback_members(args: argparse.Namespace) -> dict[str, Any]:
    members: dict[str, Any] = {}
    if args.to is not None:
        members["commit-id"] = str(args.to)
    elif args.to_label is not None:
        members["label"] = args.to_label
    else:
        members["back"] = args.back
    if args.comment is not None:
        members["comment"] = args.comment
    if args.dry_run:
        members["dry-run"] = [None]
    return members


def _cmd_explain(args: argparse.Namespace) -> int:
    client = _client(args)
    members = {"forwarder": args.forwarder, "cs-id": args.service}
    if args.at is not None:
        members["at"] = args.at
    found = client.rpc(f"{ADMIN}:steering-provenance", members)
    decision_id = found.get("decision-id")
    record: Any = {}
    if decision_id is not None:
        path = f"ietf-cats-service-metrics:selection-decisions/decision={decision_id}"
        record = client.get(path)
    if args.json:
        _print_json({**found, "decision": record})
        return 0
    when = args.at or "now"
    if decision_id is None:
        print(f"no service entry for {args.service} was installed at {args.forwarder} ({when})")
        return 1
    replaced = found.get("replaced-at")
    print(
        f"{args.forwarder} service {args.service} ({when}): installed by decision {decision_id} "
        f"at {found.get('installed-at')}" + (f", replaced at {replaced}" if replaced else "")
    )
    print(f"entry: {found.get('entry', '-')}")
    decisions = (record.get("ietf-cats-service-metrics:decision") or [{}])[0] if record else {}
    if not decisions:
        print(f"decision {decision_id} is no longer retained (decision-retention)")
        return 0
    print(_decision_summary(decisions))
    rows = [_candidate_row(c) for c in decisions.get("candidate", [])]
    header = [
        "csci-id",
        "egress",
        "gas",
        "computing-time ms",
        "network-delay ms",
        "total-service-time ms",
        "price",
        "health",
        "outcome",
    ]
    print("\n".join(table(header, rows)))
    return 0


def _decision_summary(record: dict[str, Any]) -> str:
    how = record.get("decided-by", "-")
    return (
        f"decision {record.get('id')} at {record.get('time')} ({record.get('trigger')}): "
        f"{record.get('result')} {record.get('csci-id', '-')} via {record.get('egress', '-')}, "
        f"fallback level {record.get('fallback-level')}, decided by {how}"
    )


def _candidate_row(candidate: dict[str, Any]) -> list[str]:
    reason = candidate.get("reason")
    if reason is not None:
        detail = f" ({candidate['detail']})" if candidate.get("detail") else ""
        outcome = f"excluded: {str(reason).split(':', 1)[-1]}{detail}"
    else:
        outcome = f"rank {candidate.get('rank', '-')} (score {candidate.get('score', '-')})"
    cells = [
        "csci-id",
        "egress",
        "gas",
        "computing-time",
        "network-delay",
        "total-service-time",
        "price",
        "health",
    ]
    return [str(candidate.get(name, "-")) for name in cells] + [outcome]


def _cmd_audit(args: argparse.Namespace) -> int:
    document = _client(args).get(f"{ADMIN}:audit")
    records = (document.get(f"{ADMIN}:audit") or {}).get("record", [])
    kept = [
        r
        for r in records
        if (args.event is None or r.get("event") == args.event)
        and (args.by is None or r.get("user") == args.by)
        and (args.since is None or str(r.get("time", "")) >= args.since)
    ][-args.limit :]
    if args.json:
        _print_json({f"{ADMIN}:audit": {"record": kept}})
        return 0
    header = [
        "id",
        "time",
        "event",
        "user",
        "transport",
        "source",
        "session",
        "commit",
        "node",
        "detail",
    ]
    keys = [
        "id",
        "time",
        "event",
        "user",
        "transport",
        "source-address",
        "session-id",
        "commit-id",
        "node",
        "detail",
    ]
    print("\n".join(table(header, [[str(r.get(k, "-")) for k in keys] for r in kept])))
    if not records:
        print("(the audit is readable only by users whose access rules name it)", file=sys.stderr)
    return 0


def _run(handler: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            code: int = handler(args)
        except OperatorError as exc:
            print(f"catsctl {args.command}: {exc}", file=sys.stderr)
            return 1
        return code

    return run


def _login_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", metavar="URL", help=f"the server (CATSCTL_URL; {DEFAULT_URL})")
    parser.add_argument("--user", metavar="USER", help="who asks (CATSCTL_USER)")
    parser.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help="first line: the password (CATSCTL_PASSWORD)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help=f"url, user, password (TOML, mode 0600; {DEFAULT_CONFIG})",
    )
    parser.add_argument("--json", action="store_true", help="the RFC 7951 data, untouched")


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``show``, ``config``, ``explain`` and ``audit``."""
    show = commands.add_parser(
        "show", help="show a table of a running server", formatter_class=DefaultsShown
    )
    show.add_argument("what", choices=sorted(VIEWS))
    _login_arguments(show)
    show.set_defaults(handler=_run(_cmd_show))

    config = commands.add_parser(
        "config", help="commit history, compare, rollback, commit", formatter_class=DefaultsShown
    )
    actions = config.add_subparsers(dest="action", required=True, metavar="ACTION")
    history = actions.add_parser("history", help="the commits of running, newest first")
    compare = actions.add_parser("compare", help="the changes from SOURCE to TARGET")
    compare.add_argument("source", help="running, candidate, startup or a commit id")
    compare.add_argument("target", nargs="?", default="running", help="(default: running)")
    rollback = actions.add_parser("rollback", help="running back to a past commit")
    to = rollback.add_mutually_exclusive_group()
    to.add_argument("--to", type=int, metavar="ID", help="the commit to return to")
    to.add_argument("--to-label", metavar="LABEL", help="the newest commit with this label")
    to.add_argument("--back", type=int, default=1, metavar="N", help="undo N commits (1)")
    rollback.add_argument("--comment", metavar="TEXT")
    rollback.add_argument("--dry-run", action="store_true", help="compare only")
    commit = actions.add_parser("commit", help="commit the candidate")
    commit.add_argument("--comment", metavar="TEXT")
    commit.add_argument("--label", metavar="LABEL")
    commit.add_argument("--confirmed", type=int, metavar="SECONDS", help="confirmed commit")
    commit.add_argument("--dry-run", action="store_true", help="validate and compare only")
    for sub in (history, compare, rollback, commit):
        _login_arguments(sub)
    config.set_defaults(handler=_run(_cmd_config))

    explain = commands.add_parser(
        "explain", help="why a forwarder's service entry was chosen", formatter_class=DefaultsShown
    )
    explain.add_argument("--forwarder", required=True, metavar="NAME")
    explain.add_argument("--service", required=True, metavar="CS-ID")
    explain.add_argument("--at", metavar="TIME", help="RFC 3339 (default: now)")
    _login_arguments(explain)
    explain.set_defaults(handler=_run(_cmd_explain))

    audit = commands.add_parser(
        "audit", help="the audit records of a running server", formatter_class=DefaultsShown
    )
    audit.add_argument("--event", metavar="EVENT", help="commit, login-failed, ...")
    audit.add_argument("--by", metavar="USER", help="only the records of this user")
    audit.add_argument("--since", metavar="TIME", help="RFC 3339")
    audit.add_argument("--limit", type=int, default=50, metavar="N")
    _login_arguments(audit)
    audit.set_defaults(handler=_run(_cmd_audit))
