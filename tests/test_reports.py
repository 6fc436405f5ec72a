"""report.html of a study and of a sweep, opened in headless Chromium: every figure
decodes, the page logs no error, no table makes it wider than the window, and the
screenshot is a page, not a blank. A sweep's figures: labelled axes with units, the
statistic asked for, CDFs, the files beside the report, and labels from what ran."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import dcnsim
from dcnsim import columns
from dcnsim.sweep_figures import draw
from dcnsim.sweeps import Sweep, SweepError
from simhelp import REPO, cli, render_in_chromium
from test_sweeps import BASE, SMALL, write_sweep


def check_page(report, tmp_path, figures: int) -> None:
    probe, console, shot = render_in_chromium(report, tmp_path)
    assert probe == {"images": figures, "broken": 0, "errors": [], "wide": False}, probe
    assert console == [], console
    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 50  # not blank


def test_study_report_in_chromium(tmp_path):
    out = tmp_path / "spraying"
    proc = cli("study", "spraying", "--quick", "--jobs", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    report = out / "report.html"
    text = report.read_text()
    # The seed-vs-dcnsim table and the checks table say what claims.csv, checks.csv and
    # the printed [yes]/[NO] lines say.
    claims = pd.read_csv(out / "claims.csv", keep_default_na=False)
    checks = pd.read_csv(out / "checks.csv", keep_default_na=False)
    both = [*claims["verdict"], *checks["verdict"]]
    verdicts = re.findall(r"<td class='(?:yes|NO|n/a|noise)'>([^<]*)</td>", text)
    assert verdicts == both
    printed = re.findall(r"^  \[(yes|NO|n/a|within noise)\] ", proc.stdout, re.M)
    assert [v.strip() for v in printed] == both
    # The exact scenarios: one per run, each the TOML that reproduces it.
    assert text.count("<details>") == 2 * 3 * 3
    first = re.search(r'<pre>(name = "spraying.*?)</pre>', html.unescape(text), re.S)
    assert first and "[topology]" in first.group(1)
    check_page(report, tmp_path, figures=3)


def test_sweep_report_in_chromium(tmp_path):
    spec = {**SMALL, "grid": {"transport.protocol": ["newreno", "dctcp"]}}
    spec["figures"] = [{"name": "fct", "table": "flows", "x": "seed", "y": "fct_s"}]
    proc = cli(
        "sweep", str(write_sweep(tmp_path, spec)), "--out", str(tmp_path / "out"), "--report"
    )
    assert proc.returncode == 0, proc.stderr
    check_page(tmp_path / "out" / "report.html", tmp_path, figures=1)


def svg_texts(path) -> list[str]:
    """The text of an SVG figure (matplotlib keeps it as text: svg.fonttype none)."""
    ns = "{http://www.w3.org/2000/svg}text"
    return ["".join(e.itertext()).strip() for e in ET.parse(path).getroot().iter(ns)]


#: 2 protocols x 2 link delays x 2 seeds. The base scenario's name says 25 us, which
#: half the runs do not have: labels must come from what ran.
LABELLED = {
    "name": "labelled",
    "base": {**BASE, "name": "k=4 fat-tree, 25 us links", "stop_time": "60ms"},
    "seeds": [1, 2],
    "tables": ["flows"],
    "grid": {"transport.protocol": ["newreno", "dctcp"], "topology.link.delay": ["7us", "25us"]},
    "figures": [
        {"name": "fct_p99", "table": "flows", "y": "fct_s", "stat": "p99",
         "x": "topology_link_delay", "by": "transport_protocol", "log": "y"},
        {"name": "fct_cdf", "kind": "cdf", "table": "flows", "y": "fct_s",
         "by": "transport_protocol", "where": "topology_link_delay = '7us'", "log": "x"},
        {"name": "goodput", "table": "flows", "y": "goodput_bps", "stat": "median",
         "x": "seed", "by": "topology_link_delay"},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("labelled")
    proc = cli("sweep", str(write_sweep(tmp, LABELLED)), "--out", str(tmp / "out"), "--report")
    assert proc.returncode == 0, proc.stderr
    return tmp / "out"


def test_sweep_figures_are_files_with_labelled_axes_and_render(labelled, tmp_path):
    for name in ("fct_p99", "fct_cdf", "goodput"):
        with Image.open(labelled / f"{name}.png") as image:
            assert image.size[0] > 1800  # 6.4 in at 300 dpi
            assert round(image.info["dpi"][0]) == 300
        assert (labelled / f"{name}.svg").stat().st_size > 0
        assert (labelled / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    p99 = svg_texts(labelled / "fct_p99.svg")
    assert "topology.link.delay" in p99  # the x axis: the scenario key, not the column
    assert any(re.fullmatch(r"p99 fct_s \((s|ms|µs)\)", s) for s in p99), p99
    assert {"7us", "25us"} <= set(p99)  # the grid's values, in the grid's order
    for protocol in ("newreno", "dctcp"):  # then any unfinished flows left out
        assert any(s.startswith(f"transport.protocol = {protocol}") for s in p99), p99
    cdf = svg_texts(labelled / "fct_cdf.svg")
    assert "fraction of flows at or below" in cdf
    assert any(re.fullmatch(r"fct_s \((s|ms|µs)\)", s) for s in cdf), cdf
    goodput = svg_texts(labelled / "goodput.svg")
    assert any(re.fullmatch(r"median goodput_bps \((Gbit|Mbit|kbit)/s\)", s) for s in goodput)
    text = (labelled / "report.html").read_text()
    for caption in ("fct_p99: the p99 of fct_s", "fct_cdf: the distribution (CDF) of fct_s"):
        assert caption in text
    # Each run's scenario is labelled by its own grid values, never by the base's name.
    runs = re.findall(r"transport\.protocol = (\w+), topology\.link\.delay = (\w+), seed", text)
    assert sorted(set(runs)) == [(p, d) for p in ("dctcp", "newreno") for d in ("25us", "7us")]
    check_page(labelled / "report.html", tmp_path, figures=3)


def test_sweep_figure_points_are_the_statistic_per_run_then_the_mean_over_seeds(labelled):
    sweep = Sweep.from_toml(labelled / "sweep.toml")
    catalog = dcnsim.load(labelled, "catalog")
    flows = dcnsim.load(labelled, "flows")
    p99 = draw(labelled, sweep, sweep.figures[0], catalog).data
    per_run = flows.groupby(["transport_protocol", "topology_link_delay", "seed"])["fct_s"]
    expected = per_run.quantile(0.99).groupby(level=[0, 1]).agg(["mean", "std", "count"])
    for row in p99.itertuples():
        mean, std, count = expected.loc[(row.transport_protocol, row.topology_link_delay)]
        assert row.runs == count == 2
        assert row.value == pytest.approx(mean, rel=1e-12)
        assert row.value_ci == pytest.approx(12.706205 * std / np.sqrt(2), rel=1e-6)
    cdf = draw(labelled, sweep, sweep.figures[1], catalog).data
    for protocol, curve in cdf.groupby("transport_protocol"):
        tcp = flows[
            (flows["transport_protocol"] == protocol) & (flows["topology_link_delay"] == "7us")
        ]["fct_s"]
        chosen = tcp.dropna()
        assert (curve["n"] == len(chosen)).all()
        assert (curve["missing"] == len(tcp) - len(chosen)).all()
        # Unfinished flows lie above every value: the curve reaches the finished share.
        reached = len(chosen) / len(tcp)
        assert curve["probability"].max() == pytest.approx(reached)
        quantiles = np.quantile(chosen, curve["probability"] / reached)
        assert np.allclose(curve["value"], quantiles, rtol=1e-9)


def test_a_figure_that_cannot_be_drawn_is_one_line_naming_it(labelled):
    sweep = Sweep.from_toml(labelled / "sweep.toml")
    bad = {**sweep.figures[0], "where": "no_such_column > 1"}
    catalog = dcnsim.load(labelled, "catalog")
    with pytest.raises(SweepError, match=r"^figures fct_p99: cannot draw \(y, by or where\): "):
        draw(labelled, sweep, bad, catalog)


def test_sweep_report_labels_runs_by_what_ran(labelled):
    text = html.unescape((labelled / "report.html").read_text())
    labels = re.findall(r"<summary>(.*?)</summary>", text)
    assert len(labels) == 8
    for protocol in ("newreno", "dctcp"):
        for delay in ("7us", "25us"):
            for seed in (1, 2):
                ran = f"transport.protocol = {protocol}, topology.link.delay = {delay}"
                assert sum(label.startswith(f"{ran}, seed {seed}") for label in labels) == 1
    assert "k=4 fat-tree, 25 us links (before the grid's changes)" in text


def test_output_column_units_are_the_documented_ones():
    """Every unit docs/scenario.md's flows table gives is the unit labels use."""
    doc = (REPO / "docs" / "scenario.md").read_text()
    table = doc.split("### `flows.parquet`")[1].split("###")[0]
    rows = re.findall(r"^\| (`[^|]+`) \|([^|]*)\|", table, re.M)
    assert len(rows) > 20
    for names, documented in rows:
        for name in re.findall(r"`([a-z_]+)`", names):
            assert columns.unit(name) == documented.strip(), name
