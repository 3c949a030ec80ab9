"""``catsctl serve``: its option groups (history, logins, RESTCONF listener, limits)."""

from __future__ import annotations

import argparse

from controller.auth.throttle import LoginSettings, ThrottleSettings
from controller.datastore.bus import DEFAULT_PER_USER
from controller.datastore.limits import MAX_EDIT_NODES
from controller.model.limits import DocumentLimits
from controller.netconf.bounds import LoginBounds
from controller.restconf.bounds import GateSettings


def add_history_options(serve: argparse.ArgumentParser) -> None:
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


def add_login_options(serve: argparse.ArgumentParser) -> None:
    """Throttling of failed logins and the bounds on NETCONF connections before login."""

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


def zero_or_more(text: str) -> int:
    """A count that may be 0 (``--cluster-log-keep``, ``--restconf-workers``)."""
    number = int(text)
    if number < 0:
        raise argparse.ArgumentTypeError(f"{text} is not 0 or more")
    return number


def add_restconf_options(serve: argparse.ArgumentParser) -> None:
    """How long RESTCONF waits for a client, and for how many."""

    gate = GateSettings()
    group = serve.add_argument_group(
        "RESTCONF connections",
        "No worker waits for a client: TLS handshakes and request heads are read by the "
        "selector thread; a worker takes a request once its head is in.",
    )
    group.add_argument(
        "--restconf-workers",
        type=zero_or_more,
        default=0,
        metavar="N",
        help="N worker processes read RESTCONF requests (HTTP, TLS, bodies) and validate the "
        "input of RPCs that read no configuration (select-service, the reports), so that "
        "RESTCONF uses more than one core; the server process keeps the tables, the "
        "datastores, authentication and access control. 0: one process (default)",
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


def add_limit_options(serve: argparse.ArgumentParser) -> None:
    """The shape of NETCONF messages and RESTCONF bodies."""

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
