"""``catsctl``: the CATS Path Selector (C-PS) and its agents, a sub-command per process."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from controller import __version__
from controller.commandline import DefaultsShown, add_operations_arguments
from controller.console.cli import add_parsers as add_console_parsers
from controller.demo.cli import add_parsers as add_demo_parsers
from controller.errors import CatsError
from controller.evaluate.cli import add_parsers as add_evaluate_parsers
from controller.model import Encoding, InstanceKind, ModelError, Schema
from controller.operator.commands import add_parsers as add_operator_parsers


def _cmd_serve(args: argparse.Namespace) -> int:
    """Run the C-PS: RESTCONF and NETCONF over the server core."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from controller.app import serve  # noqa: PLC0415
    from controller.netconf.server import NetconfSettings  # noqa: PLC0415
    from controller.observability.logs import configure  # noqa: PLC0415
    from controller.restconf.server import ListenSettings, TlsSettings  # noqa: PLC0415
    from controller.server import ServeSettings  # noqa: PLC0415

    try:
        configure(verbose=args.verbose, log_format=args.log_format, levels=args.log_level)
    except ValueError as exc:
        print(f"catsctl serve: {exc}", file=sys.stderr)
        return 2
    tls = None
    if args.tls_cert or args.tls_key:
        if not (args.tls_cert and args.tls_key):
            print("catsctl serve: --tls-cert and --tls-key go together", file=sys.stderr)
            return 2
        tls = TlsSettings(args.tls_cert, args.tls_key, args.tls_client_ca)
    elif args.tls_client_ca:
        print("catsctl serve: --tls-client-ca needs --tls-cert and --tls-key", file=sys.stderr)
        return 2
    listen = ListenSettings(
        address=args.restconf_address,
        port=args.restconf_port,
        tls=tls,
        max_body_size=args.max_body_size,
    )
    netconf = NetconfSettings(
        address=args.netconf_address,
        port=args.netconf_port,
        max_sessions=args.netconf_max_sessions,
        max_message_size=args.netconf_max_message_size,
        strict=args.netconf_strict,
    )
    features: list[tuple[str, str]] = []
    for given in args.feature:
        module, colon, feature = given.partition(":")
        if not (module and colon and feature):
            print(f"catsctl serve: --feature {given!r} is not MODULE:FEATURE", file=sys.stderr)
            return 2
        features.append((module, feature))
    settings = ServeSettings(
        args.state_dir,
        tuple(args.yang_dir),
        args.init_data,
        listen,
        tuple(args.plugin),
        netconf,
        read_only_groups=tuple(args.read_only_group),
        recovery_user=args.recovery_user,
        history_size=args.history_size,
        decision_max_age=args.decision_max_age,
        audit_size=args.audit_size,
        metrics_address=args.metrics_address,
        features=tuple(features),
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        return serve(settings, stop)
    except OSError as exc:  # a port in use, an unwritable state directory
        print(f"catsctl serve: {exc}", file=sys.stderr)
        return 1


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
    _add_serve(commands)
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


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from controller.netconf.server import (  # noqa: PLC0415
        DEFAULT_MAX_MESSAGE,
        DEFAULT_MAX_SESSIONS,
    )
    from controller.netconf.server import DEFAULT_PORT as NETCONF_PORT  # noqa: PLC0415
    from controller.restconf.server import (  # noqa: PLC0415
        DEFAULT_ADDRESS,
        DEFAULT_MAX_BODY,
        DEFAULT_PORT,
    )

    serve = commands.add_parser(
        "serve",
        help="run the C-PS (RESTCONF and NETCONF servers)",
        description="Run the C-PS: RESTCONF and NETCONF over one datastore, with commit "
        "history, audit, and /metrics, /healthz and /readyz on a management listener.",
        formatter_class=DefaultsShown,
    )
    serve.add_argument(
        "--state-dir",
        type=Path,
        default=Path("state"),
        metavar="DIR",
        help="datastores, journal, history, audit and host keys (created 0700)",
    )
    serve.add_argument(
        "--yang-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="load every module in DIR too (repeatable)",
    )
    serve.add_argument(
        "--feature",
        action="append",
        default=[],
        metavar="MODULE:FEATURE",
        help=(
            "enable FEATURE of MODULE (RFC 7950 7.20.1; repeatable): a module loaded with "
            "--yang-dir has no feature otherwise; yang-library reports the features enabled"
        ),
    )
    serve.add_argument(
        "--init-data",
        type=Path,
        metavar="FILE",
        help="JSON or XML seed for running, applied once when the state directory is new",
    )
    serve.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help=(
            "import the Python module MODULE (importable: on PYTHONPATH or installed) and call "
            "its register(registrations) -> None, which adds state providers, RPC and action "
            "handlers and commit hooks (controller.plugins; repeatable, applied in order)"
        ),
    )
    serve.add_argument(
        "--restconf-address", default=DEFAULT_ADDRESS, metavar="ADDR", help="RESTCONF listens here"
    )
    serve.add_argument(
        "--restconf-port", type=int, default=DEFAULT_PORT, metavar="PORT", help="RESTCONF port"
    )
    serve.add_argument("--tls-cert", type=Path, metavar="PEM", help="serve HTTPS")
    serve.add_argument("--tls-key", type=Path, metavar="PEM", help="the key of --tls-cert")
    serve.add_argument(
        "--tls-client-ca", type=Path, metavar="PEM", help="require client certificates"
    )
    serve.add_argument(
        "--max-body-size",
        type=int,
        default=DEFAULT_MAX_BODY,
        metavar="BYTES",
        help="larger request bodies get 413",
    )
    serve.add_argument(
        "--netconf-address", default=DEFAULT_ADDRESS, metavar="ADDR", help="NETCONF listens here"
    )
    serve.add_argument(
        "--netconf-port",
        type=int,
        default=NETCONF_PORT,
        metavar="PORT",
        help="NETCONF over SSH (RFC 6242); 0 turns NETCONF off",
    )
    serve.add_argument(
        "--netconf-max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help="a session beyond N gets resource-denied and is closed",
    )
    serve.add_argument(
        "--netconf-max-message-size",
        type=int,
        default=DEFAULT_MAX_MESSAGE,
        metavar="BYTES",
        help="a larger NETCONF message gets too-big and ends its session",
    )
    serve.add_argument(
        "--netconf-strict",
        action="store_true",
        help=(
            "refuse NETCONF base elements without the base namespace (<commit/> for "
            "<nc:commit/>), as RFC 6241 is written; by default they are read as the base "
            "operations, as Junos and netconfd do"
        ),
    )
    serve.add_argument(
        "--read-only-group",
        action="append",
        default=[],
        metavar="GROUP",
        help=(
            "put a NACM rule-list 'read-only-GROUP' first in running (when it is not there "
            "yet): members of the group GROUP may read and invoke but not write (RFC 8341; "
            "repeatable)"
        ),
    )
    serve.add_argument(
        "--recovery-user",
        metavar="USER",
        help=(
            "the local user whose sessions bypass access control (an RFC 8341 recovery "
            "session, for a policy that locks everybody out); each such session is logged"
        ),
    )
    serve.add_argument(
        "--history-size",
        type=int,
        default=1000,
        metavar="N",
        help="commits of running kept for rollback and compare (0: no history)",
    )
    serve.add_argument(
        "--audit-size",
        type=int,
        default=100_000,
        metavar="N",
        help="audit records kept before the oldest are rotated out",
    )
    serve.add_argument(
        "--decision-max-age",
        type=float,
        default=7 * 24 * 3600.0,
        metavar="SECONDS",
        help="decision records older than this are dropped (their count is bounded by "
        "the policy's decision-retention); the retained ones survive a restart",
    )
    add_operations_arguments(serve, "serve")
    serve.set_defaults(handler=_cmd_serve)


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
