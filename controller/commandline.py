"""What every ``catsctl`` command line shares: help that shows defaults, and the flags of a
long-running process (management listener, log format and levels)."""

from __future__ import annotations

import argparse


class DefaultsShown(argparse.HelpFormatter):
    """Help that names each option's default, when it has one worth naming."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "%(default)" in text or action.default in (None, [], False, argparse.SUPPRESS):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"
        return text


def add_operations_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """``--metrics-address``, ``--log-format``, ``--log-level`` and ``--verbose`` of every
    long-running command (the management listener's default port is ``command``'s)."""
    from controller.observability.ports import DEFAULT_PORTS  # noqa: PLC0415

    port = DEFAULT_PORTS.get(command)
    parser.add_argument(
        "--metrics-address",
        metavar="ADDR:PORT",
        help="/metrics, /healthz and /readyz listen here "
        f"(default: 127.0.0.1:{port}; when that port is taken, a warning and no listener)",
    )
    parser.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="one line per event"
    )
    parser.add_argument(
        "--log-level",
        action="append",
        default=[],
        metavar="[COMPONENT=]LEVEL",
        help="a logger's level (catsctl.serve=DEBUG, ncclient=INFO; a bare LEVEL is the "
        "default; repeatable)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="DEBUG, protocol libraries included"
    )
