"""``dcnsim docs NAME [SECTION]``: one shipped document, or one section of it, shown
through a pager when standard output is a terminal (``$PAGER``, else ``less``, as
``pydoc.pager`` chooses), printed plainly otherwise (a pipe, a file, a test)."""

from __future__ import annotations

import difflib
import sys

__all__ = ["headings", "section", "show"]


def headings(text: str) -> list[tuple[int, int, str]]:
    """The Markdown headings of ``text`` outside fenced code: (line, level, title), the
    title without its ``#`` marks and backquotes."""
    found, fenced = [], False
    for i, line in enumerate(text.splitlines()):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            found.append((i, level, line[level:].strip().replace("`", "")))
    return found


def section(text: str, words: str) -> str:
    """The section of ``text`` whose heading matches ``words`` (case ignored): the heading
    equal to them, else the first that contains them all; from that heading to the next
    one of the same or a higher level. ``LookupError`` naming the closest headings when
    none matches."""
    marks = headings(text)
    wanted = words.lower().split()
    titles = [title.lower() for _, _, title in marks]
    exact = [i for i, t in enumerate(titles) if t == " ".join(wanted)]
    within = [i for i, t in enumerate(titles) if all(w in t for w in wanted)]
    chosen = (exact or within or [None])[0]
    if chosen is None:
        close = difflib.get_close_matches(" ".join(wanted), titles, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise LookupError(f"no section '{words}'{hint}")
    start, level, _ = marks[chosen]
    ends = [line for line, lvl, _ in marks[chosen + 1 :] if lvl <= level]
    lines = text.splitlines()
    return "\n".join(lines[start : ends[0] if ends else len(lines)]).rstrip() + "\n"


def show(text: str) -> None:
    """``text`` through a pager on a terminal, else printed as it is."""
    if sys.stdout.isatty():
        import pydoc

        pydoc.pager(text)
    else:
        sys.stdout.write(text)
