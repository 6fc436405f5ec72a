"""The study axis's "add one by" (docs/architecture.md, "Plug-in axes"): a module
ending with ``STUDY = Study(...)`` plus its line in ``MODULES`` is all ``dcnsim study
NAME`` needs. A tiny study, written in a temporary module as a user would write one,
is registered so and run through the command, then through ``run_study``.

Its one claim is the closed form of ``dcnsim-core``'s doc example: a 1500 B probe
crosses two 1 Gbps links of 1 us in 2 x (12 + 1) = 26 us.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import pandas as pd
import pytest

from dcnsim import cli, studies

TINY = textwrap.dedent(
    '''
    """One probe across a star: its latency against the closed form."""

    import pandas as pd

    from dcnsim.scenario import Scenario
    from dcnsim.studies.runner import run_scenarios
    from dcnsim.studies.study import Study
    from dcnsim.studies.text import Claim


    def scenario(rate):
        return Scenario({
            "name": f"tiny-{rate}",
            "topology": {"kind": "star", "hosts": 2,
                         "link": {"rate": rate, "delay": "1us"}},
            "traffic": {"probes": [{"src": 0, "dst": 1}]},
        })


    def latency(results):
        return {"latency_us": float(results.probes["latency_s"].iloc[0]) * 1e6}


    def runs(quick=False, jobs=None, progress=None):
        rates = ["1Gbps"] if quick else ["1Gbps", "10Gbps"]
        rows = run_scenarios([(latency, scenario(r)) for r in rates], jobs, progress)
        return pd.DataFrame([{"rate": r, **row} for r, row in zip(rates, rows)])


    def tables(detail, verbose):
        table = detail[["rate", "latency_us"]]
        return table, table.to_string(index=False)


    def claims(detail):
        got = float(detail.loc[detail["rate"] == "1Gbps", "latency_us"].iloc[0])
        return [Claim("a 1500 B probe crosses two 1 Gbps links", "26 us",
                      f"{got:.3f} us", abs(got - 26.0) < 1e-6)]


    STUDY = Study(
        name="tiny",
        title="One probe across a star",
        seed="dcnsim-core's doc example",
        runs=runs,
        tables=tables,
        claims=claims,
        figures={},
        seeded=False,
    )
    '''
)


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """The tiny study's module, imported from a temporary directory and listed in
    ``MODULES`` (the one line a new study adds there)."""
    (tmp_path / "tiny_study.py").write_text(TINY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("tiny_study")
    # As if the file were python/dcnsim/studies/tiny_study.py, and its line in
    # MODULES `"tiny": "tiny_study",`.
    monkeypatch.setitem(sys.modules, "dcnsim.studies.tiny_study", module)
    monkeypatch.setitem(studies.MODULES, module.STUDY.name, "tiny_study")
    yield module.STUDY
    sys.modules.pop("tiny_study")


def test_a_study_added_by_one_module_and_one_line_runs_through_the_command(tiny, tmp_path, capsys):
    assert cli.main(["study", "list"]) == 0
    assert "tiny\n  seed:    dcnsim-core's doc example" in capsys.readouterr().out
    out = tmp_path / "out"
    assert cli.main(["study", "tiny", "--quick", "--jobs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 runs in" in printed and "quick variant" in printed
    claims = pd.read_csv(out / "claims.csv")
    assert claims[["seed", "dcnsim", "verdict"]].values.tolist() == [["26 us", "26.000 us", "yes"]]
    assert (out / "report.html").is_file()
    assert pd.read_csv(out / "runs.csv")["latency_us"].tolist() == [26.0]


def test_a_study_added_by_one_module_and_one_line_runs_through_run_study(tiny):
    output = studies.run_study(studies.STUDIES["tiny"], jobs=1)
    assert output.detail["rate"].tolist() == ["1Gbps", "10Gbps"]
    # 10 Gbps: 2 x (1.2 + 1) us.
    assert output.detail["latency_us"].tolist() == pytest.approx([26.0, 4.4])
    assert [c.ok for c in output.claims] == [True]
    assert len(output.scenarios) == 2
