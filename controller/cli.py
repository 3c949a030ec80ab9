"""``catsctl``: the one command line program, with a sub-command per process (DESIGN.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from controller import __version__
from controller.errors import CatsError
from controller.model import Encoding, InstanceKind, ModelError, Schema


def _cmd_demo(args: argparse.Namespace) -> int:
    from controller.demo import run_demo  # noqa: PLC0415 - keep start-up of other commands light

    return run_demo(out=sys.stdout)


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

    demo = commands.add_parser("demo", help="run the end-to-end demonstration on loopback")
    demo.set_defaults(handler=_cmd_demo)

    validate = commands.add_parser(
        "validate", help="validate YANG instance documents (JSON or XML) against the CATS modules"
    )
    validate.add_argument("files", nargs="+", metavar="FILE")
    validate.add_argument(
        "-t", "--type", choices=[kind.value for kind in InstanceKind], default="data"
    )
    validate.set_defaults(handler=_cmd_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``catsctl`` console script."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except CatsError as exc:
        for item in exc.items:
            print(f"catsctl {args.command}: {item}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
