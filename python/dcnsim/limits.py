"""Bounds on what a user hands dcnsim, checked before anything parses or walks it.

Scenario files, sweep files, ``--set`` values and the Python API's dicts pass
through here. Python's TOML parser recurses once per nested array or inline table
(a 2 KB file 1,000 levels deep ends in ``RecursionError``) and spends time and
memory quadratic in the parts of one dotted key (40,001 parts: 110 s and 6.3 GB);
:func:`loads` therefore scans the raw text once (linear, a regular expression per
token) and refuses, naming the line and the bound, text that nests deeper than
``MAX_DEPTH``, has a key of more than ``MAX_KEY_PARTS`` parts or a string of more
than ``MAX_STRING_CHARS`` characters. Only text within those bounds is parsed, so
parsing costs time linear in the text. :func:`check_data` bounds the same things
on data given as Python values, walked without recursion. The bounds are
documented in ``docs/scenario.md`` ("Files and values").
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dcnsim._core import ScenarioError
from dcnsim.memory import parse_limit

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_KEY_PARTS",
    "MAX_RUNS",
    "MAX_STRING_CHARS",
    "LimitError",
    "check_data",
    "check_run_arguments",
    "escape",
    "join",
    "loads",
    "read_small_file",
]

#: The largest scenario or sweep file read (a generous bound: an ``edges`` topology
#: of 100,000 nodes and links is a few MB).
MAX_FILE_BYTES = 64 << 20

#: How deep tables and lists may nest (the schema needs five levels; this bound
#: keeps every parser and walk far from Python's recursion limit).
MAX_DEPTH = 64

#: The most parts a dotted key may have (``a.b.c`` has 3); a longer key would
#: nest deeper than ``MAX_DEPTH`` anyway.
MAX_KEY_PARTS = MAX_DEPTH

#: The most runs a sweep (grid points x seeds) or a study may have, counted before
#: any run starts: more is refused at once instead of run for months.
MAX_RUNS = 100_000

#: The longest string (or key) taken: names, paths and quantities are far shorter.
MAX_STRING_CHARS = 1 << 16


class LimitError(ValueError):
    """Text beyond one of the bounds; the message says where (``line N: ...``, and
    for a string the key it is the value of, ``line N: table.key: ...``);
    ``reason`` is the message without the line."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.reason = reason


def read_small_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, else
    ``OSError`` saying why. Kind and size are checked before opening, so a directory,
    a device such as ``/dev/zero`` or a FIFO is refused at once instead of read
    without end or blocking."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "it is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "it is not a regular file")
    if st.st_size > limit:
        raise OSError(errno.EFBIG, f"it has {st.st_size} bytes, more than the {limit} allowed")
    return Path(path).read_bytes()


# Strings and comments of TOML text, each matched whole. Every alternative matches
# whatever follows its opening (an unterminated string runs to its end of line or
# of text) and its repetitions are possessive, so finding them never backtracks:
# linear time.
_STRINGS = re.compile(
    r'(?P<long>"""(?:[^"\\]|\\.|"(?!""))*+(?:"""|\Z)'
    r"|'''(?:[^']|'(?!''))*+(?:'''|\Z))"
    r'|"(?:[^"\\\n]|\\.)*+"?'
    r"|'[^'\n]*+'?"
    r"|(?P<comment>#[^\n]*+)",
    re.DOTALL,
)
_BRACKET = re.compile(r"[\[\]{}]")
_NOT_BRACKETS = re.compile(r"[^\[\]{}]++")
_DEPTH = {"[": 1, "{": 1, "]": -1, "}": -1}
# A key of more than MAX_KEY_PARTS parts, once each string is "": tried only where
# a key starts (not after a dot), every part atomic, so no attempt backtracks.
_PART = r'(?:[A-Za-z0-9_-]++|"")'
_LONG_KEY = re.compile(
    rf'(?<![A-Za-z0-9_."-])(?<!\.[ \t]){_PART}(?:[ \t]*+\.[ \t]*+{_PART}){{{MAX_KEY_PARTS}}}'
)
_LONG_BARE = re.compile(rf"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{{{MAX_STRING_CHARS + 1}}}")


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` once the text is within the bounds (``LimitError``
    naming the line and the bound if not; ``tomllib.TOMLDecodeError`` as before)."""
    check_text(text)
    return tomllib.loads(text)


def check_text(text: str) -> None:
    """``LimitError`` where TOML ``text`` nests arrays and inline tables deeper than
    ``MAX_DEPTH``, has a key of more than ``MAX_KEY_PARTS`` parts or a string (or
    bare key or value) longer than ``MAX_STRING_CHARS``. Comments are dropped and
    each string becomes ``""`` (keeping its line breaks, so lines still count);
    the rest is searched by regular expressions, in linear time."""

    def plain(match: re.Match[str]) -> str:
        if match.lastgroup == "comment":
            return ""
        if len(match.group()) > MAX_STRING_CHARS:
            at = match.start()
            field = _key_before(text, at)
            _refuse(
                text,
                at,
                f"{field + ': ' if field else ''}a string of more than "
                f"{MAX_STRING_CHARS} characters",
            )
        return '""' + "\n" * match.group().count("\n") if match.lastgroup == "long" else '""'

    rest = _STRINGS.sub(plain, text)
    brackets = _NOT_BRACKETS.sub("", rest)
    if max(_depths(brackets), default=0) > MAX_DEPTH:
        nth = next(i for i, depth in enumerate(_depths(brackets)) if depth > MAX_DEPTH)
        where = next(itertools.islice(_BRACKET.finditer(rest), nth, None)).start()
        _refuse(rest, where, f"values nested more than {MAX_DEPTH} levels deep")
    if found := _LONG_KEY.search(rest):
        _refuse(rest, found.start(), f"a dotted key of more than {MAX_KEY_PARTS} parts")
    if found := _LONG_BARE.search(rest):
        _refuse(rest, found.start(), f"a key or value of more than {MAX_STRING_CHARS} characters")


def _depths(brackets: str) -> Iterator[int]:
    """The nesting depth after each bracket of ``brackets``."""
    return itertools.accumulate(map(_DEPTH.__getitem__, brackets))


def _refuse(text: str, at: int, reason: str) -> None:
    raise LimitError(text.count(chr(10), 0, at) + 1, reason)


_ASSIGNED = re.compile(r"^[ \t]*([A-Za-z0-9_\-.\" \t]+?)[ \t]*=", re.MULTILINE)
_HEADER = re.compile(r"^[ \t]*\[\[?[ \t]*([A-Za-z0-9_\-.\" \t]+?)[ \t]*\]", re.MULTILINE)


def _key_before(text: str, at: int) -> str:
    """The dotted key whose value starts at ``at`` (or holds it, in an array): the
    last key assigned at the start of a line before it, under the last table
    header before that; "" if none. Found only for an error's message, once."""
    keys = list(_ASSIGNED.finditer(text, 0, at))
    if not keys:
        return ""
    headers = list(_HEADER.finditer(text, 0, keys[-1].start()))
    parts = [h.group(1) for h in headers[-1:]] + [keys[-1].group(1)]
    return ".".join(re.sub(r"[\s\"]", "", p) for p in parts)


def check_data(value: Any, path: str, error: type[Exception] = ScenarioError) -> None:
    """``error`` naming where ``value`` (Python data: mappings, lists, tuples,
    strings, ...) nests deeper than ``MAX_DEPTH`` or holds a string or key longer
    than ``MAX_STRING_CHARS``; walked without recursion, so any depth is reported,
    never a RecursionError."""
    stack = [(value, path, 0)]
    while stack:
        node, at, depth = stack.pop()
        if isinstance(node, str):
            if len(node) > MAX_STRING_CHARS:
                raise error(
                    f"{at or 'scenario'}: a string of {len(node)} characters, more than "
                    f"the {MAX_STRING_CHARS} allowed"
                )
        elif isinstance(node, Mapping | list | tuple):
            if depth >= MAX_DEPTH:
                raise error(f"{at or 'scenario'}: nested more than {MAX_DEPTH} levels deep")
            if isinstance(node, Mapping):
                for key, item in node.items():
                    if isinstance(key, str) and len(key) > MAX_STRING_CHARS:
                        raise error(
                            f"{at or 'scenario'}: a key of {len(key)} characters, more "
                            f"than the {MAX_STRING_CHARS} allowed"
                        )
                    stack.append((item, join(at, str(key)), depth + 1))
            else:
                stack.extend((item, f"{at}[{i}]", depth + 1) for i, item in enumerate(node))


#: The most rows a streamed run may hold before they leave in a chunk.
MAX_CHUNK_ROWS = 2**63 - 1


def check_run_arguments(
    memory_limit: int | str | None, out: str | os.PathLike[str] | None, chunk_rows: int
) -> int | None:
    """``dcnsim.run``'s arguments other than the scenario, checked before anything
    runs (ScenarioError naming the argument); the memory limit in bytes."""
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int):
        raise ScenarioError(f"chunk_rows: expected a whole number of rows, not {chunk_rows!r:.40}")
    if chunk_rows < 1:
        raise ScenarioError(f"chunk_rows: expected a positive number of rows, got {chunk_rows}")
    if chunk_rows > MAX_CHUNK_ROWS:
        raise ScenarioError(f"chunk_rows: expected at most 2**63 - 1 rows, got {chunk_rows}")
    if out is not None and not isinstance(out, str | os.PathLike):
        raise ScenarioError(f"out: expected a directory path, not {out!r:.40}")
    if memory_limit is None:
        return None
    if isinstance(memory_limit, str):
        return parse_limit(memory_limit, "memory_limit")
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, int) or memory_limit < 1:
        raise ScenarioError(
            f"memory_limit: expected a number of bytes (a positive integer) or a size "
            f"such as '8GB', not {memory_limit!r:.40}"
        )
    return memory_limit


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def escape(text: str) -> str:
    """``text`` with control characters escaped, so that a message naming it stays
    on one line (as the core's errors do)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def join(path: str, part: str) -> str:
    """``path.part``, ``part`` escaped (:func:`escape`)."""
    part = escape(part)
    return f"{path}.{part}" if path else part
