"""The operator console of the demo bed: ``catsctl console`` beside the C-PS, for
``catsctl demo --keep`` and the console's browser tests."""

from __future__ import annotations

from controller.demo.bed import Bed, BedSettings
from controller.demo.launch import free_port, listening, wait_until

START_TIMEOUT_S = 120.0  # a ceiling, not a pace: start-up on a loaded 2-core machine


def start_console(bed: Bed) -> str:
    """Start ``catsctl console`` for the bed's C-PS; its URL once it answers."""
    port = free_port()
    bed.launcher.start(
        "console",
        ["console", "--listen", f"127.0.0.1:{port}", "--cps-url", bed.cps.root],
    )

    def up() -> bool:
        bed.launcher.check_alive()
        return listening(port)

    wait_until("the console", up, timeout=START_TIMEOUT_S)
    return f"http://127.0.0.1:{port}/"


def console_lines(url: str, settings: BedSettings) -> list[str]:
    """How to open the console, and who may log in (one user per group of the policy)."""
    return [
        "",
        f"The operator console: {url}",
        f"  log in as admin / {settings.admin_password} (everything), "
        f"operator / {settings.operator_password} (policy, no users or NACM), "
        f"observer / {settings.observer_password} (reads only)",
    ]
