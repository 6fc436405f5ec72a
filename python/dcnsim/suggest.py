""" "Did you mean" for a name the user mistyped: a scenario or sweep key, a command, a
study, a document. The candidates are those the error already lists (the core's
``unknown key (expected `a` or `b`)``, argparse's ``invalid choice: 'x' (choose
from a, b)``); the closest (``difflib``, similarity at least 0.6) is appended."""

from __future__ import annotations

import difflib
import re

__all__ = ["with_hint"]

_UNKNOWN_KEY = re.compile(r"(?P<name>[^.:\[\]( ]+)(?:\[\d+\])?: unknown key \((?P<known>.*)\)")
_CHOICE = re.compile(r"invalid choice: '(?P<name>[^']*)' \(choose from (?P<known>.*)\)")


def with_hint(message: str) -> str:
    """``message``, followed by ``; did you mean 'x'?`` when it names an unknown key or
    choice and one of the names it lists is close."""
    for pattern in (_UNKNOWN_KEY, _CHOICE):
        found = pattern.search(message)
        if found is None:
            continue
        known = re.findall(r"`([^`]+)`", found["known"]) or [
            k.strip(" '\")") for k in found["known"].split(",")
        ]
        close = difflib.get_close_matches(found["name"], [k for k in known if k], n=1)
        if close:
            return f"{message}; did you mean '{close[0]}'?"
    return message
