"""dcnsim: a packet-level data-center network simulator.

A Rust core does all per-packet work; this package builds scenarios, runs them and
turns the records into pandas tables::

    import dcnsim

    scenario = dcnsim.Scenario.from_toml("examples/tree3_probes.toml")
    results = dcnsim.run(scenario.set("forwarding.policy", "elr"))
    print(results.probes.latency_s.describe())
    results.write("out/elr")

The scenario schema and the output columns are documented in ``docs/scenario.md``.
"""

from dcnsim._core import ScenarioError, __version__
from dcnsim.results import Results, run
from dcnsim.scenario import Scenario, validate

__all__ = ["Results", "Scenario", "ScenarioError", "__version__", "run", "validate"]
