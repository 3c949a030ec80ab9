"""Where RESTCONF listens and its bounds by default, and the bounds of connections before a
worker takes them: what ``catsctl serve``'s options default to, kept apart from the server
(cheroot) so that building the command line imports none of it."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_MAX_BODY = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class GateSettings:
    """Timeouts and bounds of connections before a worker takes them."""

    header_timeout: float = 10.0
    body_timeout: float = 60.0
    idle_timeout: float = 60.0
    max_connections: int = 1024
    max_per_source: int = 128
