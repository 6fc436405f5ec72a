"""Plain-text output of the studies: aligned tables, numbers, the seed-vs-dcnsim claims.

Every study prints through these, so the tables of all studies look alike.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

#: The tolerance of a claim that states its own comparison: no interval over seeds and
#: no number read off a figure, the comparison is made as the claim words it.
EXACT = "exact comparison stated in the claim"

#: The verdicts: the claim holds, it does not, the 95 % interval cannot tell, the runs
#: lack what the claim needs, or (quick variant) the quick grid cannot decide what the
#: full one does.
YES, NO, NOISE, NA = "yes", "NO", "within noise", "n/a"
QUICK = "quick grid cannot decide"

#: The tolerance of a numbered point judged run by run (``runs_inside``).
RUN_BY_RUN = (
    "run by run: the share of runs inside the seed's range, with its 95 % Wilson "
    "interval; yes when the interval lies above 1/2 (most runs), NO when below"
)


@dataclass(frozen=True)
class Claim:
    """One claim of a seed checked against dcnsim's runs.

    ``claim`` says what is checked, ``seed`` what the seed reports (its number or its
    words), ``dcnsim`` what dcnsim measured, ``ok`` the verdict (``None``: the runs
    do not have what the check needs, e.g. a single policy). ``tolerance`` says where
    the margin of the comparison comes from: the seed's precision (a number read off
    a figure), the 95 % interval over seeds, or ``EXACT``. ``noise``: the interval
    cannot decide (the verdict is ``within noise``; ``ok`` is then ``None``).
    ``check``: a physical bound or sanity check, not a claim of the seed; it goes to
    ``checks.csv`` and is not counted among the seed's claims. ``quick``: why the
    quick grid cannot decide this claim (set by ``run_study`` on the quick variant
    for the claims its study names in ``Study.quick_undecided``); the verdict is then
    ``quick grid cannot decide``.
    """

    claim: str
    seed: str
    dcnsim: str
    ok: bool | None
    tolerance: str = EXACT
    noise: bool = False
    check: bool = False
    quick: str = ""

    @property
    def verdict(self) -> str:
        """``yes``, ``NO``, ``within noise``, ``n/a`` or ``quick grid cannot decide``."""
        if self.quick:
            return QUICK
        if self.noise:
            return NOISE
        return NA if self.ok is None else (YES if self.ok else NO)


def interval(runs: pd.DataFrame) -> str:
    """The tolerance of a claim decided on the 95 % Student-t interval over the seeds of
    ``runs`` (of the difference it compares, paired by seed); with one seed there is no
    interval and the comparison is exact."""
    if runs["seed"].nunique() > 1:
        return "95 % interval over seeds (paired by seed)"
    return "exact: one seed, no interval"


def decided(ok: bool | None) -> dict[str, Any]:
    """``Claim`` keywords for a decision of ``compare``/``every``: ``ok`` and ``noise``
    (``None`` from them means the interval cannot decide)."""
    return {"ok": ok, "noise": ok is None}


def compare(difference: float, half_width: float, strict: bool = True) -> bool | None:
    """Whether ``difference`` (what the claim says is positive, e.g. a - b for "a is
    larger") is positive, given the half-width of its 95 % interval.

    With an interval (``half_width`` > 0): ``True`` when the whole interval is above
    zero, ``False`` when it is below, ``None`` (within noise) when it holds zero. With
    none (0 or NaN: one seed, or no randomness) the comparison is exact: a strict one
    fails on a tie, a non-strict one (``strict=False``: "at least", "no worse") holds.
    """
    if pd.isna(difference):
        return None
    if not pd.isna(half_width) and half_width > 0:
        if difference - half_width > 0:
            return True
        if difference + half_width < 0:
            return False
        return None
    return bool(difference > 0) if strict else bool(difference >= 0)


def larger(a: pd.Series, b: pd.Series) -> tuple[bool | None, str]:
    """Whether ``a`` > ``b`` (one value per seed, indexed by seed), paired by seed, on
    the 95 % interval of the difference (``compare``), and the difference as text,
    ``+0.186 ± 0.05`` (± 0 with one seed)."""
    from dcnsim.studies.stats import paired_difference

    mean, half = paired_difference(a, b)
    return compare(mean, half), f"{mean:+.3g} ± {0 if np.isnan(half) else half:.2g}"


def within(difference: float, half_width: float, margin: float) -> bool | None:
    """Whether ``difference`` is within ``margin`` of zero ("about the same"), given the
    half-width of its 95 % interval: ``True`` when the whole interval is inside
    ±``margin``, ``False`` when it is wholly outside, ``None`` (within noise) else."""
    if pd.isna(difference):
        return None
    h = 0.0 if pd.isna(half_width) else half_width
    if abs(difference) + h <= margin:
        return True
    if abs(difference) - h > margin:
        return False
    return None


def runs_inside(inside: Sequence[bool]) -> tuple[bool | None, str]:
    """A numbered point of the seed judged run by run: ``inside`` says, per run,
    whether the run falls inside the seed's range. The decision (``compare``'s
    convention: ``None`` is within noise) is ``True`` when the 95 % Wilson interval of
    the share of runs inside lies wholly above 1/2, ``False`` when wholly below, and
    the text gives the share with its interval. Never the union of the runs."""
    from dcnsim.studies.stats import share_interval

    n, k = len(inside), int(sum(bool(x) for x in inside))
    if n == 0:
        return None, "no runs"
    low, high = share_interval(k, n)
    text = f"{k} of {n} runs inside (95 % interval of the share {low:.2f}-{high:.2f})"
    if low > 0.5:
        return True, text
    if high < 0.5:
        return False, text
    return None, text


def every(decisions: Sequence[bool | None]) -> bool | None:
    """A claim made at every point: ``False`` if any point says no, else ``None`` (within
    noise) if any cannot decide, else ``True``."""
    if any(d is False for d in decisions):
        return False
    if any(d is None for d in decisions):
        return None
    return True


_QUICK_UNDECIDED: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "dcnsim_quick_undecided", default=MappingProxyType({})
)


@contextmanager
def quick_undecided(undecided: Mapping[str, str]) -> Iterator[None]:
    """Inside the block, ``marked_quick`` (hence ``claim_lines``) marks the claims
    ``undecided`` names (the start of a claim's text -> why the quick grid cannot
    decide it): ``run_study`` sets it on a quick run to its ``Study.quick_undecided``."""
    token = _QUICK_UNDECIDED.set(undecided)
    try:
        yield
    finally:
        _QUICK_UNDECIDED.reset(token)


def marked_quick(claims: Sequence[Claim]) -> list[Claim]:
    """``claims``, those ``quick_undecided`` names (not checks) with their ``quick``
    reason set, so their verdict is ``quick grid cannot decide``."""
    undecided = _QUICK_UNDECIDED.get()
    out = []
    for claim in claims:
        why = next((w for s, w in undecided.items() if claim.claim.startswith(s)), "")
        out.append(replace(claim, quick=why) if why and not claim.check else claim)
    return out


#: The width of a study's printed claim lines (``claim_lines``).
LINE_WIDTH = 100


def claim_lines(claims: Sequence[Claim]) -> list[str]:
    """The claims as printed under a study's table, one line each within ``LINE_WIDTH``
    columns: the verdict, what the seed says, what dcnsim measured and the claim, each
    shortened with ``…`` when long (whole in ``claims.csv`` and ``report.html``); the
    checks after them under their own heading."""
    claims = marked_quick(claims)
    seed = [c for c in claims if not c.check]
    checks = [c for c in claims if c.check]
    lines = _claim_rows(seed, "claim of the seed") if seed else []
    if checks:
        lines += ["  Checks (physical bounds and sanity checks, not the seed's claims):"]
        lines += _claim_rows(checks, "check")
    return lines


def _claim_rows(claims: Sequence[Claim], what: str) -> list[str]:
    """A header and one row per claim: verdict, seed, dcnsim, claim; the seed and
    dcnsim columns as wide as their longest value up to 18 columns (dcnsim's wider
    when the claims leave columns spare), the claim the rest."""
    verdict_w = max(len("verdict"), *(len(c.verdict) + 2 for c in claims))
    seed_w = min(18, max(len("seed"), *(len(c.seed) for c in claims)))
    spare = (
        LINE_WIDTH
        - 2
        - verdict_w
        - seed_w
        - 3 * 2
        - max(len(what), *(len(c.claim) for c in claims))
    )
    ours_w = min(max(18, spare), max(len("dcnsim"), *(len(c.dcnsim) for c in claims)))
    claim_w = LINE_WIDTH - 2 - verdict_w - seed_w - ours_w - 3 * 2

    def row(verdict: str, seed: str, ours: str, claim: str) -> str:
        cells = (verdict.ljust(verdict_w), _fit(seed, seed_w).ljust(seed_w),
                 _fit(ours, ours_w).ljust(ours_w), _fit(claim, claim_w))  # fmt: skip
        return ("  " + "  ".join(cells)).rstrip()

    head = row("verdict", "seed", "dcnsim", what)
    return [head, *(row(f"[{c.verdict}]", c.seed, c.dcnsim, c.claim) for c in claims)]


def fit_lines(text: str, width: int = LINE_WIDTH) -> str:
    """``text`` with every line longer than ``width`` wrapped at spaces, its
    continuation lines indented two columns more than the line began (a study's prose:
    its setting, its reading of the seed, its notes)."""
    import textwrap

    lines = []
    for line in text.splitlines():
        if len(line) <= width:
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(
            line.strip(),
            width,
            initial_indent=indent,
            subsequent_indent=indent + "  ",
            break_on_hyphens=False,
        )
    return "\n".join(lines)


def _fit(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` columns with ``…`` when longer."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def claims_table(claims: Sequence[Claim], checks: bool = False) -> pd.DataFrame:
    """The "seed's number | dcnsim's number | tolerance | verdict" table of a study:
    its seed's claims, or with ``checks`` its physical bounds and sanity checks."""
    rows = [c for c in claims if c.check == checks]
    return pd.DataFrame(
        {
            "claim": [c.claim for c in rows],
            "seed": [c.seed for c in rows],
            "dcnsim": [c.dcnsim for c in rows],
            "tolerance": [c.tolerance for c in rows],
            "verdict": [c.verdict for c in rows],
        },
        columns=["claim", "seed", "dcnsim", "tolerance", "verdict"],
    )


def format_table(table: pd.DataFrame, width: int = LINE_WIDTH, keys: int = 1) -> str:
    """A plain-text table: a header row, a rule, one line per row; numbers to the right.

    Within ``width`` columns: a table wider is printed in blocks of its columns, one
    under the other (a blank line between), each led by the table's first ``keys``
    columns (those naming a row) so every row stays named; a cell
    too wide for any block is cut with ``…`` (whole in the study's ``runs.csv``)."""
    columns = [str(c) for c in table.columns]
    cells = [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    if not columns:
        return ""

    def natural(j: int) -> int:
        return max([len(columns[j]), *(len(row[j]) for row in cells)])

    # The key columns, at most half the line (else the first alone, cut to a third);
    # any other column cut to what a block leaves beside them.
    lead = max(1, min(keys, len(columns) - 1))
    used = sum(natural(j) + 2 for j in range(lead)) - 2
    if used > width // 2:
        lead, used = 1, min(natural(0), width // 3)
    widest = [used] * lead + [width - used - 2] * (len(columns) - lead)
    columns = [_cut(c, w) for c, w in zip(columns, widest, strict=True)]
    cells = [[_cut(v, w) for v, w in zip(row, widest, strict=True)] for row in cells]
    numeric = [
        all(_looks_numeric(row[j]) for row in cells) and len(cells) > 0 for j in range(len(columns))
    ]
    widths = [natural(j) for j in range(len(columns))]

    def block(picked: list[int]) -> str:
        def line(values: Sequence[str]) -> str:
            parts = [
                values[j].rjust(widths[j]) if numeric[j] else values[j].ljust(widths[j])
                for j in picked
            ]
            return "  ".join(parts).rstrip()

        rule = "  ".join("-" * widths[j] for j in picked)
        return "\n".join([line(columns), rule, *(line(row) for row in cells)])

    blocks: list[list[int]] = [list(range(lead))]
    for j in range(lead, len(columns)):
        if sum(widths[i] + 2 for i in blocks[-1]) + widths[j] > width and len(blocks[-1]) > lead:
            blocks.append(list(range(lead)))
        blocks[-1].append(j)
    return "\n\n".join(block(b) for b in blocks)


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns with ``…`` when longer (its spacing kept)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "-" if np.isnan(value) else f"{value:g}"
    return str(value)


def _looks_numeric(text: str) -> bool:
    if text in ("-", ""):
        return True
    try:
        float(text.lstrip("<>=≥ ").removesuffix("%"))
    except ValueError:
        return False
    return True


def num_text(value: Any, digits: int) -> str:
    """``value`` with ``digits`` decimals, ``-`` when missing."""
    return "-" if value is None or pd.isna(value) else f"{float(value):.{digits}f}"


def int_text(value: Any) -> str:
    """``value`` as a whole number, ``-`` when missing."""
    return "-" if value is None or pd.isna(value) else str(int(value))


def ranges(values: Sequence[int]) -> str:
    """``1..5`` for a run of consecutive numbers, else the numbers with commas."""
    if values and list(values) == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}..{values[-1]}"
    return ", ".join(map(str, values))
