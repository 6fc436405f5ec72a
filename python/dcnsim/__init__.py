"""dcnsim: a packet-level data-center network simulator.

A Rust core does all per-packet work; this package builds scenarios, runs them and
turns the records into pandas tables::

    import dcnsim

    scenario = dcnsim.Scenario.from_toml("examples/tree3_probes.toml")
    results = dcnsim.run(scenario.set("forwarding.policy", "elr"))
    print(results.probes.latency_s.describe())
    results.write("out/elr")

Sweeps of many runs (``dcnsim.sweep``) land in a directory that ``dcnsim.load`` and
``dcnsim.query`` (SQL) read back; so do the flow-time estimates of fabrics too big
for the packet level (``dcnsim.estimate``, docs/estimate.md). The scenario schema and
the output columns are documented in ``docs/scenario.md``; sweeps, studies and
reports in ``docs/experiments.md``.
"""

from __future__ import annotations

# Nothing is imported here, not even typing: the ``dcnsim`` command installs its
# Ctrl-C handling (dcnsim/__main__.py) only once this has run.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from dcnsim._core import ScenarioError, __version__
    from dcnsim.estimation import Estimate, estimate
    from dcnsim.results import Results, run
    from dcnsim.scenario import Scenario, validate
    from dcnsim.store import load, query
    from dcnsim.sweeps import Sweep, SweepError
    from dcnsim.sweeps import run_sweep as sweep

__all__ = [
    "Estimate",
    "Results",
    "Scenario",
    "ScenarioError",
    "Sweep",
    "SweepError",
    "__version__",
    "estimate",
    "load",
    "query",
    "run",
    "sweep",
    "validate",
]

# The rest is imported on first use (PEP 562), so that importing dcnsim (and the
# command line's validate) does not load pandas, pyarrow or the studies.
_LAZY = {
    "ScenarioError": ("dcnsim._core", "ScenarioError"),
    "__version__": ("dcnsim._core", "__version__"),
    "Scenario": ("dcnsim.scenario", "Scenario"),
    "validate": ("dcnsim.scenario", "validate"),
    "Results": ("dcnsim.results", "Results"),
    "run": ("dcnsim.results", "run"),
    "load": ("dcnsim.store", "load"),
    "query": ("dcnsim.store", "query"),
    "Sweep": ("dcnsim.sweeps", "Sweep"),
    "Estimate": ("dcnsim.estimation", "Estimate"),
    "estimate": ("dcnsim.estimation", "estimate"),
    "SweepError": ("dcnsim.sweeps", "SweepError"),
    "sweep": ("dcnsim.sweeps", "run_sweep"),
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'dcnsim' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
