"""Secrets out of audit text: crypt hashes, ``$0$`` clear texts, ``$8$`` encrypted credentials.

The audit log keeps no values of the configuration, only paths and what happened; but a detail
may quote an error message or a user-supplied name, so every text is passed through
:func:`redact` before it is stored (access-control issue: secrets never reach a file or a reply
another user can read).
"""

from __future__ import annotations

import re

#: ``$id$...`` crypt hashes (RFC 7317 ``crypt-hash``: $0$ clear text, $1$, $5$, $6$) and the
#: server's ``$8$`` encrypted credentials, up to the next blank or quote.
_DOLLAR_SECRET = re.compile(r"\$(?:0|1|5|6|8|2[abxy]?|y|7)\$[^\s'\"<>,;)}\]]*")
#: ``password=...``, ``"password": "..."``, ``<password>...</password>``.
_NAMED_SECRET = re.compile(
    r"(?P<name>password|passwd|secret|private-key)"
    r"(?P<sep>\"?\s*[:=]\s*\"?|>)(?P<value>[^\s\"<,;}]+)",
    re.IGNORECASE,
)
REDACTED = "<redacted>"


def redact(text: str) -> str:
    """``text`` with every secret-looking value replaced by ``<redacted>``."""
    text = _DOLLAR_SECRET.sub(REDACTED, text)
    return _NAMED_SECRET.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", text)
