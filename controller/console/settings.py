"""The console's settings: where the C-PS is and how the console behaves."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ConsoleSettings:
    """``cps_url`` is the C-PS's RESTCONF root (``http://127.0.0.1:8080/restconf``);
    ``verify`` is a CA bundle (or False) for an HTTPS C-PS; a session ends after
    ``idle_timeout`` seconds without a request; live pages send at most one update per
    ``live_interval`` seconds; plots cover the last ``plot_window`` seconds (the C-PS's
    replay log bounds what is there); ``secure_cookie`` when the console serves HTTPS."""

    cps_url: str
    secret_key: str | None = None
    verify: bool | str = True
    idle_timeout: float = 1800.0
    live_interval: float = 1.0
    plot_window: float = 600.0
    secure_cookie: bool = False
    timeout: float = 30.0
