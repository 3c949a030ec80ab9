"""The password-check worker: ``python -m controller.auth.hasher`` (started by :mod:`.hashing`).

It reads one JSON request per line, ``{"password": ..., "hash": ...}``, and answers ``1`` (the
password matches) or ``0`` per line, until its input ends. It lowers its own CPU priority
first, so that on a busy machine the server's requests run before password guesses.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from controller.auth.passwords import verify

NICENESS = 10


def main() -> int:
    """Answer checks until standard input ends."""
    with contextlib.suppress(OSError):  # not allowed: checks run at the server's priority
        os.nice(NICENESS)
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            ok = verify(str(request["password"]), str(request["hash"]))
        except (ValueError, KeyError, TypeError):
            ok = False
        sys.stdout.buffer.write(b"1\n" if ok else b"0\n")
        sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
