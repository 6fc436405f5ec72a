"""The Jinja environment of dcnsim's HTML, one for all of it: the reports' pages
(``dcnsim.report``) and the notebook summaries (``dcnsim.notebook``), from the
templates in ``templates/``, autoescaped."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

__all__ = ["environment"]


@cache
def environment() -> jinja2.Environment:
    """The environment (made once, when first asked for: jinja2 is imported then)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("dcnsim", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
