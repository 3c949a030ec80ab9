"""``catsctl state check`` and ``catsctl state repair``: the state directory, offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_state_check(args: argparse.Namespace) -> int:
    """Report each state file as a start would read it; 1 when one is damaged."""
    from controller.datastore.integrity import check_state  # noqa: PLC0415

    if not args.state_dir.is_dir():
        print(f"catsctl state check: no state directory {args.state_dir}", file=sys.stderr)
        return 1
    reports = check_state(args.state_dir)
    for report in reports:
        if report.damage is not None:
            print(f"DAMAGED {report.damage.describe()}")
        else:
            print(f"ok      {report.path}: {report.summary}")
    damaged = [report for report in reports if not report.ok]
    if damaged:
        print(
            f"{len(damaged)} damaged: catsctl serve refuses this state directory; "
            f"`catsctl state repair --state-dir {args.state_dir} --to-last-good` cuts a damaged "
            "journal at its damage (the records after it are lost)",
            file=sys.stderr,
        )
    return 1 if damaged else 0


def _cmd_state_repair(args: argparse.Namespace) -> int:
    """Cut damaged journals at their damage; 1 when something is left unrepaired."""
    from controller.datastore.integrity import repair_to_last_good  # noqa: PLC0415

    if not args.to_last_good:
        print("catsctl state repair: say --to-last-good (the one repair)", file=sys.stderr)
        return 2
    done, left = repair_to_last_good(args.state_dir)
    for line in done:
        print(f"repaired {line}")
    for line in left:
        print(f"catsctl state repair: {line}", file=sys.stderr)
    if not done and not left:
        print(f"nothing to repair in {args.state_dir}")
    return 1 if left else 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    state = commands.add_parser(
        "state", help="check or repair the state directory of a server (journal, snapshots)"
    )
    actions = state.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check", help="report each state file as catsctl serve would read it (changes nothing)"
    )
    check.add_argument("--state-dir", type=Path, default=Path("state"), metavar="DIR")
    check.set_defaults(handler=_cmd_state_check)
    repair = actions.add_parser(
        "repair", help="cut a damaged journal at its damage, keeping the records before it"
    )
    repair.add_argument("--state-dir", type=Path, default=Path("state"), metavar="DIR")
    repair.add_argument(
        "--to-last-good",
        action="store_true",
        help="keep the intact records before the damage, lose those after it (the damaged "
        "file is kept as NAME.damaged-TIME); the server must be stopped",
    )
    repair.set_defaults(handler=_cmd_state_repair)
