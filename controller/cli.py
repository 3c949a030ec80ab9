"""``catsctl``: the CATS Path Selector (C-PS) and its agents, a sub-command per process."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller import __version__
from controller.cli_config import file_defaults
from controller.errors import CatsError
from controller.model import Encoding, InstanceKind, ModelError, Schema

#: The module whose ``add_parsers`` builds each command's parser, in the order of the help.
#: A command line builds only its own command's parser (the full help builds them all), so
#: ``catsctl csma`` does not import the server's stack nor ``catsctl serve`` the operator's
#: HTTP client. The agents' modules are the one place the controller package reaches the
#: agents, and only by name, when their command runs.
COMMAND_MODULES: dict[str, str] = {
    "demo": "controller.demo.cli",
    "evaluate": "controller.evaluate.cli",
    "serve": "controller.cli_serve",
    "state": "controller.cli_state",
    "cnma": "agents.cnma.cli",
    "csma": "agents.csma.cli",
    "forwarder": "agents.forwarder.cli",
    "gateway": "agents.gateway.cli",
    "sci": "agents.sci.cli",
    "service-instance": "agents.service_instance.cli",
    "show": "controller.operator.commands",
    "config": "controller.operator.commands",
    "explain": "controller.operator.commands",
    "audit": "controller.operator.commands",
    "console": "controller.console.cli",
}


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``command`` alone when it is one of :data:`COMMAND_MODULES`,
    else of every sub-command."""
    parser = argparse.ArgumentParser(prog="catsctl", description=__doc__)
    parser.add_argument("--version", action="version", version=f"catsctl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command in COMMAND_MODULES:
        importlib.import_module(COMMAND_MODULES[command]).add_parsers(commands)
        return parser
    modules = list(dict.fromkeys(COMMAND_MODULES.values()))
    for module in modules[:2]:  # demo, evaluate
        importlib.import_module(module).add_parsers(commands)
    validate = commands.add_parser(
        "validate", help="validate YANG instance documents (JSON or XML) against the CATS modules"
    )
    validate.add_argument("files", nargs="+", metavar="FILE")
    validate.add_argument(
        "-t", "--type", choices=[kind.value for kind in InstanceKind], default="data"
    )
    validate.set_defaults(handler=_cmd_validate)
    for module in modules[2:]:
        importlib.import_module(module).add_parsers(commands)
    hashing = commands.add_parser(
        "hash-password", help="print a $6$ crypt hash for an ietf-system user's password"
    )
    hashing.add_argument(
        "--stdin", action="store_true", help="read the password from standard input"
    )
    hashing.set_defaults(handler=_cmd_hash_password)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _command_of(argv: Sequence[str]) -> str | None:
    """The sub-command a command line names (catsctl's own options take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def parse(words: Sequence[str]) -> argparse.Namespace:
    """The command line ``words``, with the options of a ``--config`` file under them.

    Raises:
        ValueError: the file cannot be read, or names an option or a value the command does
            not take (the message names the file and the key).
    """
    parser = build_parser(_command_of(words))
    args = parser.parse_args(words)
    if getattr(args, "options_file", None) is not None:  # catsctl serve --config FILE
        command = _subcommands(parser).choices[args.command]
        command.set_defaults(**file_defaults(command, args.options_file))
        args = parser.parse_args(words)  # the command line over the file
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``catsctl`` console script."""
    words = sys.argv[1:] if argv is None else argv
    try:
        args = parse(words)
    except ValueError as exc:  # catsctl serve --config FILE
        print(f"catsctl {_command_of(words)}: {exc}", file=sys.stderr)
        return 1
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
