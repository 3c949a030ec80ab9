"""``catsctl serve``: its options and the command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from controller import cli_serve_options as options
from controller.commandline import DefaultsShown, add_operations_arguments

if TYPE_CHECKING:
    from controller.datastore.preparse import Preparse


def _cmd_serve(args: argparse.Namespace) -> int:
    """Run the C-PS: RESTCONF and NETCONF over the server core."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    features = _features(args.feature)
    if features is None:
        return 2
    early = None if args.cluster else _early(args.state_dir, tuple(args.yang_dir), features)

    from controller.app import serve  # noqa: PLC0415
    from controller.auth import LoginSettings, ThrottleSettings  # noqa: PLC0415
    from controller.datastore.core import CoreSettings  # noqa: PLC0415
    from controller.model.limits import DocumentLimits  # noqa: PLC0415
    from controller.netconf.bounds import LoginBounds  # noqa: PLC0415
    from controller.netconf.server import NetconfSettings  # noqa: PLC0415
    from controller.observability.logs import configure  # noqa: PLC0415
    from controller.restconf.bounds import GateSettings  # noqa: PLC0415
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
    limits = DocumentLimits(args.max_xml_attributes, args.max_elements, args.max_depth)
    listen = ListenSettings(
        address=args.restconf_address,
        port=args.restconf_port,
        tls=tls,
        max_body_size=args.max_body_size,
        gate=GateSettings(
            header_timeout=args.restconf_header_timeout,
            body_timeout=args.restconf_body_timeout,
            idle_timeout=args.restconf_idle_timeout,
            max_connections=args.restconf_max_connections,
            max_per_source=args.restconf_max_connections_per_source,
        ),
        limits=limits,
        workers=args.restconf_workers,
    )
    netconf = NetconfSettings(
        address=args.netconf_address,
        port=args.netconf_port,
        max_sessions=args.netconf_max_sessions,
        max_message_size=args.netconf_max_message_size,
        strict=args.netconf_strict,
        logins=LoginBounds(
            args.netconf_max_startups,
            args.netconf_max_startups_per_source,
            args.netconf_login_grace_time,
            args.netconf_max_auth_tries,
        ),
        limits=limits,
    )
    throttle = ThrottleSettings(
        free_failures=args.login_free_failures,
        delay=args.login_delay,
        max_delay=args.login_max_delay,
    )
    logins = LoginSettings(throttle, workers=args.login_workers, queue=args.login_queue)
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
        features=features,
        schema=early.schema if early is not None else None,
        logins=logins,
        cluster=args.cluster,
        node_id=args.node_id,
        local_reads=args.cluster_reads == "local",
        cluster_log_keep=args.cluster_log_keep,
        core=CoreSettings(
            subscriptions_per_user=args.max_subscriptions_per_user,
            max_edit_nodes=args.max_edit_nodes,
            preparse=early,
        ),
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        return serve(settings, stop)
    except OSError as exc:  # a port in use, an unwritable state directory
        print(f"catsctl serve: {exc}", file=sys.stderr)
        return 1


def _features(given: list[str]) -> tuple[tuple[str, str], ...] | None:
    """``--feature MODULE:FEATURE`` pairs (None: one is malformed, said on stderr)."""
    features: list[tuple[str, str]] = []
    for text in given:
        module, colon, feature = text.partition(":")
        if not (module and colon and feature):
            print(f"catsctl serve: --feature {text!r} is not MODULE:FEATURE", file=sys.stderr)
            return None
        features.append((module, feature))
    return tuple(features)


def _early(
    state_dir: Path, yang_dirs: tuple[Path, ...], features: tuple[tuple[str, str], ...]
) -> Preparse | None:
    """Compile the schema and start parsing running's snapshot, before the server's modules
    are imported (libyang parses without the GIL meanwhile: docs/notes/performance-round-2.md,
    "Start-up"). None when the schema does not compile: the server compiles it again and
    says why."""
    from controller.datastore.preparse import Preparse  # noqa: PLC0415
    from controller.model.errors import ModelError  # noqa: PLC0415
    from controller.model.serverschema import server_schema  # noqa: PLC0415

    try:
        schema = server_schema(yang_dirs, features)
    except ModelError:
        return None
    return Preparse(schema, state_dir).start()


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from controller.netconf.bounds import (  # noqa: PLC0415
        DEFAULT_MAX_MESSAGE,
        DEFAULT_MAX_SESSIONS,
    )
    from controller.netconf.bounds import DEFAULT_PORT as NETCONF_PORT  # noqa: PLC0415
    from controller.restconf.bounds import (  # noqa: PLC0415
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
        "--config",
        dest="options_file",
        type=Path,
        metavar="FILE",
        help="read options from FILE (TOML, or JSON by its .json suffix): each key an option's "
        'long name without dashes (cluster = "etcd://...", node-id = "a", a list for a '
        "repeatable option, true for a flag); the command line wins over it",
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
        "--cluster",
        metavar="etcd://HOST:PORT[,...]",
        help="join the cluster of C-PS replicas whose configuration these etcd members keep "
        "(docs/cluster.md); without it running has its own journal in --state-dir",
    )
    serve.add_argument(
        "--node-id", metavar="NAME", help="this replica's name in the cluster (default: hostname)"
    )
    serve.add_argument(
        "--cluster-reads",
        choices=("consistent", "local"),
        default="consistent",
        help="consistent: a read of running first applies every commit the cluster has (one "
        "quorum read of etcd); local: answer from this replica's copy, which may lag the others "
        "by a watch event (docs/cluster.md)",
    )
    serve.add_argument(
        "--cluster-log-keep",
        type=options.zero_or_more,
        default=1000,
        metavar="N",
        help="the leader snapshots running into etcd every N commits, deletes the log up to N "
        "commits before the snapshot and compacts etcd's history; 0: never (the log grows) "
        "(docs/cluster.md)",
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
    options.add_restconf_options(serve)
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
    options.add_login_options(serve)
    options.add_limit_options(serve)
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
    options.add_history_options(serve)
    add_operations_arguments(serve, "serve")
    serve.set_defaults(handler=_cmd_serve)
