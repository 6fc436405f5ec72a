"""Run a scenario in a reference simulator and put its tables beside dcnsim's.

    import dcnsim.crosscheck as xc

    report = xc.crosscheck("examples/star_bottleneck.toml", "ns2")
    print(report.format())          # metric, dcnsim, reference, ratio, verdict
    report.reference["flows"]       # the reference's flows table (fct_s, drops, ...)

``ns2`` is ns-2.35 (``ns``, Debian's ``ns2``), ``ns3`` ns-3.37 (Debian's
``libns3-dev``, compiled against with ``pkg-config``). The scenario is translated
(``model.py`` refuses, naming the key, what the reference cannot model), dcnsim
runs it, the reference runs the translation, and both sets of tables are compared
metric by metric (``compare.py``). docs/crosscheck.md says what translates and how.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dcnsim._core import ScenarioError
from dcnsim.crosscheck import model as _model
from dcnsim.crosscheck.compare import TOLERANCES, Metric, compare, format_metrics
from dcnsim.crosscheck.model import NotTranslatable
from dcnsim.results import run
from dcnsim.scenario import Scenario, as_scenario

__all__ = [
    "REFERENCES",
    "TOLERANCES",
    "Crosscheck",
    "NotTranslatable",
    "ReferenceMissing",
    "crosscheck",
    "reference_block",
]

#: The references and the profiles each runs (its own TCP).
REFERENCES = ("ns2", "ns3")


class ReferenceMissing(ScenarioError):
    """The reference simulator is not installed; the message says what to install."""


def _module(reference: str) -> Any:
    if reference == "ns2":
        from dcnsim.crosscheck import ns2

        return ns2
    if reference == "ns3":
        from dcnsim.crosscheck import ns3

        return ns3
    raise ScenarioError(f"reference: {reference!r} is not one of {', '.join(REFERENCES)}")


def reference_block(reference: str, title: str, build: Callable[[], str]) -> str:
    """A study's block run beside ``reference``: ``build()`` when the reference is
    installed, else one line naming ``title`` and what to install."""
    module = _module(reference)
    if not module.available():
        return f"{title}: not run ({module.INSTALL})"
    return build()


@dataclass
class Crosscheck:
    """One scenario run by dcnsim and by a reference."""

    reference: str
    metrics: list[Metric]
    dcnsim: dict[str, pd.DataFrame]
    tables: dict[str, pd.DataFrame]  # the reference's
    program: str  # the generated script or program
    wall_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every metric within its tolerance."""
        return all(m.verdict != "DIFF" for m in self.metrics)

    def metric(self, name: str) -> Metric:
        """The metric whose name starts with ``name`` (``"FCT median"``)."""
        return next(m for m in self.metrics if m.metric.startswith(name))

    def flows(self) -> pd.DataFrame:
        """Per flow, dcnsim's columns beside the reference's (``*_ref``)."""
        return self.dcnsim["flows"].merge(self.tables["flows"], on="flow_id", suffixes=("", "_ref"))

    def format(self) -> str:
        lines = [format_metrics(self.metrics, self.reference)]
        lines += [f"note: {n}" for n in self.notes]
        wall = ", ".join(f"{k} {v:.2f} s" for k, v in self.wall_s.items())
        bad = sum(m.verdict == "DIFF" for m in self.metrics)
        lines.append(
            f"verdict: {f'{bad} metric(s) differ' if bad else 'all within tolerance'} "
            f"(wall: {wall})"
        )
        return "\n".join(lines)


def _dcnsim_tables(results: Any) -> dict[str, pd.DataFrame]:
    flows = results.flows
    flows = flows[flows.kind == "tcp"][["flow_id", "fct_s", "drops", "retransmits", "timeouts"]]
    tables = {
        "flows": flows.reset_index(drop=True),
        "probes": results.probes[["probe_id", "latency_s"]],
        "ports": results.ports[["port", "packets_dropped", "max_queue_packets", "max_queue_bytes"]],
        "rounds": pd.DataFrame(columns=["app", "round", "start_s", "end_s", "round_time_s"]),
    }
    if results.scenario.get("traffic", {}).get("incast"):
        tables["rounds"] = results.rounds[["app", "round", "start_s", "end_s", "round_time_s"]]
    return tables


def crosscheck(
    scenario: Scenario | Mapping[str, Any] | str | os.PathLike[str],
    reference: str,
    *,
    out: str | os.PathLike[str] | None = None,
    tolerances: Mapping[str, float] | None = None,
) -> Crosscheck:
    """Run ``scenario`` in dcnsim and in ``reference`` (``"ns2"`` or ``"ns3"``).

    Raises NotTranslatable (a ScenarioError naming the key) for what the reference
    cannot model, ReferenceMissing when it is not installed. With ``out`` the
    generated script or program and the reference's tables (CSV) are kept there.
    """
    module = _module(reference)
    tol = dict(TOLERANCES)
    for key, value in (tolerances or {}).items():
        if key not in TOLERANCES:
            raise ScenarioError(f"tolerance {key!r}: not one of {', '.join(TOLERANCES)}")
        if not value >= 0:
            raise ScenarioError(f"tolerance {key}: must be at least 0, got {value}")
        tol[key] = float(value)
    scenario = as_scenario(scenario)
    scenario.validate()
    data = scenario.to_dict()
    empty = pd.DataFrame(
        columns=[
            "kind",
            "flow_id",
            "src",
            "dst",
            "size_bytes",
            "start_s",
            "protocol",
            "origin",
            "app",
        ]
    )
    model = _prepare(module, data, empty, reference)  # refuse before anything runs
    if not module.available():
        raise ReferenceMissing(module.INSTALL)
    t0 = time.perf_counter()
    results = run(scenario)
    wall = {"dcnsim": time.perf_counter() - t0}
    model = _prepare(module, data, results.flows, reference)
    times = [results.flows.start_s.max(), results.flows.end_s.max()]
    model.horizon_s = 2 * float(max([t for t in times if t == t] + [0.0])) + 1.0
    with tempfile.TemporaryDirectory(prefix="dcnsim-crosscheck-") as tmp:
        workdir = Path(out) if out is not None else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        tables, program = module.run(model, workdir)
        wall[reference] = time.perf_counter() - t0
        if out is not None:
            for name, frame in tables.items():
                frame.to_csv(workdir / f"{reference}_{name}.csv", index=False)
    dc = _dcnsim_tables(results)
    return Crosscheck(
        reference, compare(dc, tables, tol), dc, tables, program, wall, module.notes(model)
    )


def _prepare(
    module: Any, data: dict[str, Any], flows: pd.DataFrame, reference: str
) -> _model.Model:
    model = _model.build(data, flows, reference)
    tcp, explicit, profile = _model.resolve_transport(
        data.get("transport", {}), module.profiles(), reference
    )
    model.tcp, model.profile = tcp, profile
    module.check(model, explicit)
    return model
