"""``catsctl``: the CATS Path Selector (C-PS) and its agents, a sub-command per process."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from controller import __version__
from controller.cli_serve import add_parsers as add_serve_parsers
from controller.cli_state import add_parsers as add_state_parsers
from controller.console.cli import add_parsers as add_console_parsers
from controller.demo.cli import add_parsers as add_demo_parsers
from controller.errors import CatsError
from controller.evaluate.cli import add_parsers as add_evaluate_parsers
from controller.model import Encoding, InstanceKind, ModelError, Schema
from controller.operator.commands import add_parsers as add_operator_parsers


def _cmd_hash_password(args: argparse.Namespace) -> int:
    """Print a crypt hash for ietf-system:system/authentication/user/password."""
    import getpass  # noqa: PLC0415

    from controller.auth import hash_password  # noqa: PLC0415

    read = sys.stdin.readline if args.stdin else lambda: getpass.getpass("password: ")
    password = read().rstrip("\n")
    if not password:
        print("catsctl hash-password: empty password", file=sys.stderr)
        return 1
    print(hash_password(password))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    """Validate instance documents against the CATS modules, as yanglint would."""
    with Schema() as schema:
        failed = 0
        for name in args.files:
            path = Path(name)
            encoding = Encoding.XML if path.suffix == ".xml" else Encoding.JSON
            try:
                schema.validate(path.read_text(encoding="utf-8"), InstanceKind(args.type), encoding)
            except ModelError as exc:
                failed += 1
                for item in exc.items:
                    print(f"{path}: {item}", file=sys.stderr)
            else:
                print(f"{path}: valid {args.type}")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = argparse.ArgumentParser(prog="catsctl", description=__doc__)
    parser.add_argument("--version", action="version", version=f"catsctl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_demo_parsers(commands)
    add_evaluate_parsers(commands)

    validate = commands.add_parser(
        "validate", help="validate YANG instance documents (JSON or XML) against the CATS modules"
    )
    validate.add_argument("files", nargs="+", metavar="FILE")
    validate.add_argument(
        "-t", "--type", choices=[kind.value for kind in InstanceKind], default="data"
    )
    validate.set_defaults(handler=_cmd_validate)
    add_serve_parsers(commands)
    add_state_parsers(commands)
    _add_agents(commands)
    add_operator_parsers(commands)
    add_console_parsers(commands)

    hashing = commands.add_parser(
        "hash-password", help="print a $6$ crypt hash for an ietf-system user's password"
    )
    hashing.add_argument(
        "--stdin", action="store_true", help="read the password from standard input"
    )
    hashing.set_defaults(handler=_cmd_hash_password)
    return parser


def _add_agents(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The agents' sub-commands. The one place the controller package imports the agents, and
    only here, when the command line is built (each agent's ``cli`` imports the agent itself
    only when its command runs)."""
    from agents.cnma.cli import add_parsers as add_cnma  # noqa: PLC0415
    from agents.csma.cli import add_parsers as add_csma  # noqa: PLC0415
    from agents.forwarder.cli import add_parsers as add_forwarder  # noqa: PLC0415
    from agents.gateway.cli import add_parsers as add_gateway  # noqa: PLC0415
    from agents.sci.cli import add_parsers as add_sci  # noqa: PLC0415
    from agents.service_instance.cli import add_parsers as add_instance  # noqa: PLC0415

    for add in (add_cnma, add_csma, add_forwarder, add_gateway, add_sci, add_instance):
        add(commands)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``catsctl`` console script."""
    args = build_parser().parse_args(argv)
    os.umask(0o077)  # state files, host keys, journals and logs: readable by their owner only
    try:
        code: int = args.handler(args)
    except CatsError as exc:
        for item in exc.items:
            print(f"catsctl {args.command}: {item}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:  # a listener's port in use, a bad --log-level
        print(f"catsctl {args.command}: {exc}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
