"""dcnsim: a packet-level data-center network simulator.

A Rust core does all per-packet work; this package builds scenarios, runs them and
turns the records into pandas tables::

    import dcnsim

    scenario = dcnsim.Scenario.from_toml("examples/tree3_probes.toml")
    results = dcnsim.run(scenario.set("forwarding.policy", "elr"))
    print(results.probes.latency_s.describe())
    results.write("out/elr")

Sweeps of many runs (``dcnsim.sweep``) land in a directory that ``dcnsim.load`` and
``dcnsim.query`` (SQL) read back. The scenario schema and the output columns are
documented in ``docs/scenario.md``; sweeps, studies and reports in
``docs/experiments.md``.
"""

from dcnsim._core import ScenarioError, __version__
from dcnsim.results import Results, run
from dcnsim.scenario import Scenario, validate
from dcnsim.store import load, query
from dcnsim.sweeps import Sweep, SweepError
from dcnsim.sweeps import run_sweep as sweep

__all__ = [
    "Results",
    "Scenario",
    "ScenarioError",
    "Sweep",
    "SweepError",
    "__version__",
    "load",
    "query",
    "run",
    "sweep",
    "validate",
]
