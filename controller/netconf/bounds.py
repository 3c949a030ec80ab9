"""Where NETCONF listens and its bounds by default, and the bounds on logins: what
``catsctl serve``'s options default to, kept apart from the SSH server (paramiko) so that
building the command line imports none of it (a start-up parses running meanwhile)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8830
DEFAULT_MAX_SESSIONS = 200
DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
DEFAULT_MAX_STARTUPS = 128
DEFAULT_MAX_STARTUPS_PER_SOURCE = DEFAULT_MAX_STARTUPS  # none but the total, as in OpenSSH
DEFAULT_LOGIN_GRACE_S = 30.0
DEFAULT_MAX_AUTH_TRIES = 6


@dataclass(frozen=True, slots=True)
class LoginBounds:
    """The bounds on connections before they authenticate."""

    max_startups: int = DEFAULT_MAX_STARTUPS
    max_startups_per_source: int = DEFAULT_MAX_STARTUPS_PER_SOURCE
    login_grace_time: float = DEFAULT_LOGIN_GRACE_S
    max_auth_tries: int = DEFAULT_MAX_AUTH_TRIES
