"""``catsctl serve``: its options and the command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from controller.commandline import DefaultsShown, add_operations_arguments


def _cmd_serve(args: argparse.Namespace) -> int:
    """Run the C-PS: RESTCONF and NETCONF over the server core."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from controller.app import serve  # noqa: PLC0415
    from controller.auth import LoginSettings, ThrottleSettings  # noqa: PLC0415
    from controller.datastore.core import CoreSettings  # noqa: PLC0415
    from controller.model.limits import DocumentLimits  # noqa: PLC0415
    from controller.netconf.server import NetconfSettings  # noqa: PLC0415
    from controller.netconf.ssh import LoginBounds  # noqa: PLC0415
    from controller.observability.logs import configure  # noqa: PLC0415
    from controller.restconf.gate import GateSettings  # noqa: PLC0415
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
        logins=logins,
        cluster=args.cluster,
        node_id=args.node_id,
        local_reads=args.cluster_reads == "local",
        core=CoreSettings(
            subscriptions_per_user=args.max_subscriptions_per_user,
            max_edit_nodes=args.max_edit_nodes,
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


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    _add_restconf_options(serve)
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
    _add_login_options(serve)
    _add_limit_options(serve)
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
    _add_history_options(serve)
    add_operations_arguments(serve, "serve")
    serve.set_defaults(handler=_cmd_serve)


def _add_history_options(serve: argparse.ArgumentParser) -> None:
    """What the server keeps of its own past: commits, audit records, decision records."""
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


def _add_login_options(serve: argparse.ArgumentParser) -> None:
    """Throttling of failed logins and the bounds on NETCONF connections before login."""
    from controller.auth.logins import LoginSettings  # noqa: PLC0415
    from controller.auth.throttle import ThrottleSettings  # noqa: PLC0415
    from controller.netconf.ssh import LoginBounds  # noqa: PLC0415

    throttle, bounds = ThrottleSettings(), LoginBounds()
    group = serve.add_argument_group(
        "logins",
        "Failed password checks, per source address and per user: the first N are free, then "
        "each further attempt waits DELAY seconds after the last failure, doubled each time up "
        "to MAX; an earlier attempt is refused unchecked (429 over RESTCONF). Checks run in "
        "worker processes, never on a request thread.",
    )
    group.add_argument(
        "--login-free-failures", type=int, default=throttle.free_failures, metavar="N"
    )
    group.add_argument("--login-delay", type=float, default=throttle.delay, metavar="DELAY")
    group.add_argument("--login-max-delay", type=float, default=throttle.max_delay, metavar="MAX")
    group.add_argument(
        "--login-workers",
        type=int,
        default=LoginSettings().workers,
        metavar="N",
        help="password-check worker processes, at a lower CPU priority (default: one per CPU)",
    )
    group.add_argument(
        "--login-queue",
        type=int,
        default=LoginSettings().queue,
        metavar="N",
        help="checks that may wait for a worker; more are refused at once (503 over RESTCONF)",
    )
    group.add_argument(
        "--netconf-max-startups",
        type=int,
        default=bounds.max_startups,
        metavar="N",
        help="SSH connections that may be unauthenticated at once (OpenSSH MaxStartups)",
    )
    group.add_argument(
        "--netconf-max-startups-per-source",
        type=int,
        default=bounds.max_startups_per_source,
        metavar="N",
        help="... from one address (OpenSSH PerSourceMaxStartups)",
    )
    group.add_argument(
        "--netconf-login-grace-time",
        type=float,
        default=bounds.login_grace_time,
        metavar="SECONDS",
        help="an SSH connection not logged in by then is closed (OpenSSH LoginGraceTime)",
    )
    group.add_argument(
        "--netconf-max-auth-tries",
        type=int,
        default=bounds.max_auth_tries,
        metavar="N",
        help="an SSH connection is closed at its N-th failed attempt (OpenSSH MaxAuthTries)",
    )


def _add_restconf_options(serve: argparse.ArgumentParser) -> None:
    """How long RESTCONF waits for a client, and for how many."""
    from controller.restconf.gate import GateSettings  # noqa: PLC0415

    gate = GateSettings()
    group = serve.add_argument_group(
        "RESTCONF connections",
        "No worker waits for a client: TLS handshakes and request heads are read by the "
        "selector thread; a worker takes a request once its head is in.",
    )
    group.add_argument(
        "--restconf-header-timeout",
        type=float,
        default=gate.header_timeout,
        metavar="SECONDS",
        help="a request head (and a TLS handshake) must be in by then, from its first byte "
        "(a new connection: from its accept); else 408 and close",
    )
    group.add_argument(
        "--restconf-body-timeout",
        type=float,
        default=gate.body_timeout,
        metavar="SECONDS",
        help="a request body must be in by then, in all; else 408 and close",
    )
    group.add_argument(
        "--restconf-idle-timeout",
        type=float,
        default=gate.idle_timeout,
        metavar="SECONDS",
        help="an idle keep-alive connection is closed after this",
    )
    group.add_argument(
        "--restconf-max-connections",
        type=int,
        default=gate.max_connections,
        metavar="N",
        help="connections waiting for their next request; more are closed at accept",
    )
    group.add_argument(
        "--restconf-max-connections-per-source",
        type=int,
        default=gate.max_per_source,
        metavar="N",
        help="of those, from one address; more from it are closed at accept",
    )


def _add_limit_options(serve: argparse.ArgumentParser) -> None:
    """The shape of NETCONF messages and RESTCONF bodies."""
    from controller.datastore.bus import DEFAULT_PER_USER  # noqa: PLC0415
    from controller.datastore.core import MAX_EDIT_NODES  # noqa: PLC0415
    from controller.model.limits import DocumentLimits  # noqa: PLC0415

    limits = DocumentLimits()
    group = serve.add_argument_group(
        "documents",
        "Bounds on each NETCONF message and RESTCONF body, checked before it is parsed: past "
        "one it is refused with too-big (413 over RESTCONF).",
    )
    group.add_argument(
        "--max-xml-attributes",
        type=int,
        default=limits.max_attributes,
        metavar="N",
        help="attributes of one XML element (namespace declarations count)",
    )
    group.add_argument(
        "--max-elements",
        type=int,
        default=limits.max_elements,
        metavar="N",
        help="XML elements, or JSON values, of one document",
    )
    group.add_argument(
        "--max-depth",
        type=int,
        default=limits.max_depth,
        metavar="N",
        help="nesting of XML elements, or of JSON objects and arrays",
    )
    core = serve.add_argument_group("server core")
    core.add_argument(
        "--max-subscriptions-per-user",
        type=int,
        default=DEFAULT_PER_USER,
        metavar="N",
        help="event streams and NETCONF subscriptions one user may hold at once",
    )
    core.add_argument(
        "--max-edit-nodes",
        type=int,
        default=MAX_EDIT_NODES,
        metavar="N",
        help="data nodes one edit may hold (counted before it is parsed); a larger edit is "
        "refused with too-big. An edit of running of more than 20000 is worked on a copy, so "
        "that reads go on meanwhile",
    )
