"""``catsctl serve --config FILE``: the command's options from a TOML or JSON file.

A key is an option's long name without its dashes (``cluster``, ``node-id``, ``netconf-port``);
a flag takes ``true`` or ``false``, a repeatable option a list. The values go through the same
conversions and choices as on the command line, and the file's values become the command's
defaults: a single-valued option given on the command line wins over the file, a repeatable
one adds its values after the file's. A key that names no option, or a value an option does
not take, is refused naming the file and the key, before anything starts.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path
from typing import Any

#: Options a file cannot hold: the file itself, and what only the command line means.
_NOT_IN_FILE = frozenset({"help", "options_file"})


def file_defaults(parser: argparse.ArgumentParser, path: Path) -> dict[str, Any]:
    """The defaults ``path`` gives the options of ``parser``, converted as argparse would.

    Raises:
        ValueError: the file cannot be read or parsed, a key names no option of ``parser``,
            or a value is not one the option takes (the message names ``FILE: KEY``).
    """
    document = _read(path)
    options = {
        action.option_strings[-1].lstrip("-"): action
        for action in parser._actions
        if action.option_strings and action.dest not in _NOT_IN_FILE
    }
    defaults: dict[str, Any] = {}
    for key, value in document.items():
        action = options.get(key)
        if action is None:
            raise ValueError(f"{path}: {key}: no such option of catsctl {parser.prog.split()[-1]}")
        try:
            defaults[action.dest] = _convert(action, value)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
            raise ValueError(f"{path}: {key}: {exc}") from None
    return defaults


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    try:
        document = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if not isinstance(document, dict):
        raise ValueError(f"{path}: the document is not a table of options")  # a JSON list
    return document


def _convert(action: argparse.Action, value: object) -> Any:
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        if not isinstance(value, bool):
            raise TypeError("takes true or false")
        return value if isinstance(action, argparse._StoreTrueAction) else not value
    if isinstance(action, argparse._AppendAction):
        if not isinstance(value, list):
            raise TypeError("takes a list (the option is repeatable)")
        return [_one(action, item) for item in value]
    if isinstance(value, list | dict | bool):
        raise TypeError("takes one value")
    return _one(action, value)


def _one(action: argparse.Action, value: object) -> Any:
    if isinstance(value, list | dict):
        raise TypeError("takes plain values")
    text = str(value)
    converted = action.type(text) if callable(action.type) else text
    if action.choices is not None and converted not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise ValueError(f"{text!r} is not one of {choices}")
    return converted
