"""What a researcher meets first (issue 49): flows read from a file, unfinished flows
counted wherever FCT is summarised, "did you mean", a document's section, the study
claim lines and progress bars, and ``dcnsim plot`` of one run."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from PIL import Image

import dcnsim
from dcnsim.studies import STUDIES
from dcnsim.studies.runner import BarProgress
from dcnsim.studies.text import LINE_WIDTH, Claim, claim_lines, format_table
from dcnsim.suggest import with_hint
from simhelp import REPO, assert_one_error_line, cli

STAR = """
seed = 1
topology = { kind = "star", hosts = 4, link = { rate = "1Gbps", delay = "5us" } }
[[traffic.flows_file]]
path = "trace.csv"
"""


def star(tmp_path, csv_text: str, scenario: str = STAR):
    (tmp_path / "trace.csv").write_text(csv_text)
    path = tmp_path / "s.toml"
    path.write_text(scenario)
    return path


# --- [[traffic.flows_file]] -------------------------------------------------------------


def test_flows_from_a_csv_file_run_as_listed_flows(tmp_path):
    path = star(tmp_path, "src,dst,size_bytes,start_s,class\n0,1,20000,0,\n2,1,5000,0.0001,3\n")
    from_file = dcnsim.run(dcnsim.Scenario.from_toml(path)).flows
    listed = dcnsim.Scenario.from_toml(path).to_dict()
    del listed["traffic"]["flows_file"]
    listed["traffic"]["flows"] = [
        {"src": 0, "dst": 1, "size": "20000B", "start": "0us"},
        {"src": 2, "dst": 1, "size": "5KB", "start": "100us", "class": 3},
    ]
    expected = dcnsim.run(dcnsim.Scenario(listed)).flows
    pd.testing.assert_frame_equal(from_file, expected)
    assert list(from_file["size_bytes"]) == [20000, 5000] and list(from_file["class"]) == [0, 3]


def test_flows_from_a_parquet_file_with_units(tmp_path):
    table = pd.DataFrame({"src": [0, 3], "dst": [1, 2], "size": ["64KB", "1MB"],
                          "start": ["0us", "2ms"], "protocol": ["dctcp", "newreno"]})  # fmt: skip
    table.to_parquet(tmp_path / "trace.parquet")
    path = star(tmp_path, "", STAR.replace("trace.csv", "trace.parquet"))
    flows = dcnsim.run(dcnsim.Scenario.from_toml(path)).flows
    assert list(flows["size_bytes"]) == [64000, 1000000]
    assert list(flows["protocol"]) == ["dctcp", "newreno"]
    assert list(flows["start_s"]) == [0.0, 0.002]


HEAD = "src,dst,size_bytes,start_s\n"


@pytest.mark.parametrize(
    ("csv_text", "expected"),
    [
        (f"{HEAD}0,1,100,0\n0,1,1.5,0\n", "row 2: size_bytes: expected a whole number of bytes"),
        (f"{HEAD}0,1,100,0\n0,1,100,-1\n", "row 2: start_s: expected a number of seconds at least"),
        ("src,dst,size_bytes,start_s\n0,1,100,0\n0,1,100,0\n1,9,100,0\n", "row 3: dst"),
        ("src,dst,size_bytes,start_s\n0,1,100\n", "row 1: 3 cells, the header has 4"),
        ("src,dst,size_bytes,start_s,colour\n0,1,100,0,red\n", "column 'colour': unknown"),
        ("src,dst,start_s\n0,1,0\n", "needs exactly one column of size or size_bytes"),
        ("src,dst,size,start\n0,1,100,0us\n", "row 1: size"),
        ("", "empty: expected a header row"),
    ],
)  # fmt: skip
def test_a_bad_row_is_one_line_naming_file_and_row(tmp_path, csv_text, expected):
    path = star(tmp_path, csv_text)
    message = assert_one_error_line(cli("validate", str(path)))
    assert message.startswith(f"traffic.flows_file[0] '{tmp_path / 'trace.csv'}'"), message
    assert expected in message, message


def test_a_missing_flows_file_and_an_unknown_entry_key_are_one_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(STAR)
    message = assert_one_error_line(cli("validate", str(path)))
    assert "traffic.flows_file[0]" in message and "cannot read" in message
    path.write_text(STAR + 'pth = "x.csv"\n')
    (tmp_path / "trace.csv").write_text("src,dst,size_bytes,start_s\n0,1,1,0\n")
    message = assert_one_error_line(cli("validate", str(path)))
    assert message.startswith("traffic.flows_file[0].pth: unknown key"), message


# --- unfinished flows ------------------------------------------------------------------


def test_a_run_says_how_many_flows_did_not_finish_and_warns(tmp_path):
    rows = "src,dst,size_bytes,start_s\n" + "".join(
        f"{i % 3},3,{10 ** (4 + i % 3)},0\n" for i in range(9)
    )
    path = star(tmp_path, rows, 'stop_time = "2ms"\n' + STAR)
    proc = cli("run", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    flows = dcnsim.run(dcnsim.Scenario.from_toml(path)).flows
    unfinished = int(flows["fct_s"].isna().sum())
    assert 0 < unfinished < 9
    assert f"{9 - unfinished} finished of 9" in proc.stdout
    assert f"({unfinished} of 9 flows unfinished, excluded)" in proc.stdout
    (warning,) = [line for line in proc.stdout.splitlines() if "warning:" in line]
    assert f"{unfinished} of 9 TCP flows" in warning and "did not finish" in warning


# --- did you mean, docs sections -----------------------------------------------------------


def test_did_you_mean_for_keys_commands_and_studies():
    proc = cli(
        "run", str(REPO / "examples" / "tree3_probes.toml"), "--set", "forwarding.polcy=ecmp"
    )
    assert assert_one_error_line(proc).endswith("did you mean 'policy'?")
    proc = cli("rn", "x.toml")
    assert "did you mean 'run'?" in proc.stderr and proc.returncode == 2
    proc = cli("study", "incats")
    assert "did you mean 'incast'?" in proc.stderr and proc.returncode == 2
    assert with_hint("a.b: out of range") == "a.b: out of range"


def test_docs_opens_one_section():
    proc = cli("docs", "scenario", "transport")
    assert proc.returncode == 0, proc.stderr
    text = (REPO / "docs" / "scenario.md").read_text()
    start = text.index("## Transport\n")
    assert proc.stdout == text[start : text.index("\n## Traffic\n")].rstrip() + "\n"
    proc = cli("docs", "scenario", "flows_file")
    assert proc.stdout.startswith("### `[[traffic.flows_file]]`")
    message = assert_one_error_line(cli("docs", "scenario", "transprt"))
    assert "no section 'transprt'" in message and "transport" in message


# --- study output ------------------------------------------------------------------------


def test_claim_lines_fit_in_100_columns_with_seed_ours_and_verdict():
    long = "the median FCT of short flows under pFabric is within 10 % of the ideal " * 3
    claims = [Claim(long, "1.2 ms (Fig. 4, read off)" * 2, "1.31 ms ± 0.04 over 5 seeds", True),
              Claim("b", "x", "y", None, noise=True)]  # fmt: skip
    lines = claim_lines(claims)
    assert all(len(line) <= LINE_WIDTH for line in lines), lines
    assert lines[1].startswith("  [yes]") and "1.2 ms" in lines[1] and "1.31 ms" in lines[1]
    assert lines[1].endswith("…") and lines[2].startswith("  [within noise]")


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_studys_printed_text_fits_100_columns(name):
    """What ``dcnsim study NAME`` prints of the study's checked-in runs (its tables,
    prose and claim lines), plain and ``--verbose``: no line wider than LINE_WIDTH."""
    runs = pd.read_csv(REPO / "docs" / "results" / f"{name}.csv", keep_default_na=True)
    for verbose in (False, True):
        _, text = STUDIES[name].printed(runs, verbose)
        wide = [line for line in text.splitlines() if len(line) > LINE_WIDTH]
        assert not wide, f"{name} (verbose={verbose}): {len(wide)} lines, e.g. {wide[0]!r}"


def test_a_wide_table_prints_in_blocks_each_led_by_the_key_columns():
    table = pd.DataFrame(
        {"scheme": ["TCP", "pFabric"], "load": ["10%", "90%"],
         **{f"column {i}": [1.5 * i, 2.5 * i] for i in range(12)},
         "note": ["a long note " * 20, "short"]}
    )  # fmt: skip
    text = format_table(table, keys=2)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= LINE_WIDTH
    heads = [line for line in lines if line.startswith("scheme")]
    assert len(heads) > 1 and all(h.startswith("scheme   load") for h in heads), heads
    # Every column is printed once, every row named in every block.
    assert sum(h.count("column ") for h in heads) == 12 and sum("note" in h for h in heads) == 1
    assert sum(line.split()[:2] == ["pFabric", "90%"] for line in lines) == len(heads)
    assert "…" in text and "short" in text
    # By default the first column alone names the rows.
    default = [line for line in format_table(table).splitlines() if line.startswith("scheme")]
    assert default[0].startswith("scheme   load") and default[1].startswith("scheme   column")
    # A table that fits prints as one block, as before.
    narrow = format_table(table[["scheme", "load", "column 1"]])
    assert narrow.splitlines() == [
        "scheme   load  column 1", "-------  ----  --------",
        "TCP       10%       1.5", "pFabric   90%       2.5",
    ]  # fmt: skip


def test_a_study_progress_bar_over_several_batches_ends_at_100_percent(capsys):
    bar = BarProgress("s")
    for total in (11, 4, 4):
        for done in range(1, total + 1):
            bar(done, total)
    assert (bar.bar.n, bar.bar.total) == (19, 19)
    bar.close()
    last = capsys.readouterr().err.strip().split("\r")[-1]
    assert last.startswith("s: 100%") and "19/19" in last, last


# --- dcnsim plot ---------------------------------------------------------------------------


def test_plot_draws_a_runs_figures_in_three_formats(tmp_path):
    from test_reports import svg_texts

    out = tmp_path / "run"
    scenario = str(REPO / "examples" / "websearch_dctcp.toml")
    sets = ["--set", "stop_time=10ms", "--set", "traffic.workloads[0].stop=8ms",
            "--set", "traffic.workloads[0].load=0.6",
            "--set", 'trace.queues=["edge0->host0", "agg0->edge0"]']  # fmt: skip
    proc = cli("run", scenario, *sets, "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    proc = cli("plot", str(out))
    assert proc.returncode == 0, proc.stderr
    for name in ("fct_cdf", "slowdown_cdf", "queues"):
        with Image.open(out / "plots" / f"{name}.png") as image:
            assert round(image.info["dpi"][0]) == 300
        assert (out / "plots" / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (out / "plots" / f"{name}.svg").stat().st_size > 0
    assert re.search(r"wrote .*plots: fct_cdf, queues, slowdown_cdf", proc.stdout), proc.stdout
    # The run directory with its plots is still a run's: a rerun replaces it.
    assert cli("run", scenario, *sets, "--out", str(out), "--no-progress").returncode == 0
    message = assert_one_error_line(cli("plot", str(tmp_path)))
    assert "not a run's output directory" in message
    # The demo's run: probes only, at zero load: each path length at its one latency.
    demo = tmp_path / "demo"
    assert (
        cli("run", str(REPO / "examples" / "tree3_probes.toml"), "--out", str(demo)).returncode == 0
    )
    proc = cli("plot", str(demo), "--out", str(tmp_path / "figs"))
    assert proc.returncode == 0, proc.stderr
    assert "skipped fct_cdf, slowdown_cdf: the run has no TCP flows" in proc.stdout
    texts = svg_texts(tmp_path / "figs" / "latency_cdf.svg")
    assert {"2 hops: 15 packets", "4 hops: 48 packets", "6 hops: 64 packets"} <= set(texts)


def test_a_study_refuses_a_runs_directory_saying_whose_it_is(tmp_path):
    out = tmp_path / "incast"
    assert (
        cli("run", str(REPO / "examples" / "tree3_probes.toml"), "--out", str(out)).returncode == 0
    )
    message = assert_one_error_line(cli("study", "incast", "--out", str(out)))
    assert message == (
        f"--out '{out}': refusing to replace a directory holding files this command does not "
        "write (flows.parquet, ops.parquet, ports.parquet, ...): it is the output of a run "
        "(dcnsim run), give another directory"
    )


def test_a_sweep_names_zipped_keys_and_its_unfinished_flows(tmp_path):
    from test_reports import svg_texts
    from test_sweeps import BASE, write_sweep

    spec = {
        "name": "zipped",
        "base": {**BASE, "stop_time": "30ms"},
        "seeds": [1],
        "tables": ["flows"],
        "grid": {"transport.protocol": ["newreno"]},
        "zip": [{"traffic.workloads[0].load": [0.3, 0.6], "stop_time": ["30ms", "15ms"]}],
        "figures": [
            {"name": "fct", "table": "flows", "y": "fct_s", "x": "transport_protocol",
             "by": "traffic_workloads_0_load"},
            {"name": "cdf", "kind": "cdf", "table": "flows", "y": "slowdown",
             "by": "traffic_workloads_0_load"},
        ],
    }  # fmt: skip
    out = tmp_path / "out"
    proc = cli("sweep", str(write_sweep(tmp_path, spec)), "--out", str(out), "--report")
    assert proc.returncode == 0, proc.stderr
    flows = dcnsim.load(out, "flows")
    tcp = flows[flows["kind"] == "tcp"]
    unfinished = tcp.groupby("traffic_workloads_0_load")["fct_s"].apply(lambda s: s.isna().sum())
    assert unfinished.sum() > 0  # the runs stop with flows still open
    (warning,) = [line for line in proc.stdout.splitlines() if line.startswith("warning:")]
    assert f"{unfinished.sum()} of {len(tcp)} TCP flows" in warning
    legend = svg_texts(out / "fct.svg")
    for load, stop in ((0.3, "30ms"), (0.6, "15ms")):
        label = f"traffic.workloads[0].load = {load}, stop_time = {stop}"
        left = f"; {unfinished[load]} unfinished flows left out" if unfinished[load] else ""
        assert label + left in legend, legend
    cdf = " ".join(svg_texts(out / "cdf.svg"))
    assert "traffic.workloads[0].load = 0.6, stop_time = 15ms (" in cdf, cdf
    for name in ("fct", "cdf"):
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    text = (out / "report.html").read_text()
    assert "Unfinished flows (left out of every FCT and slowdown statistic)" in text
    assert "a line per traffic.workloads[0].load (with stop_time)" in text  # the captions
    for row in tcp[tcp["fct_s"].isna()].head(3).itertuples():
        assert f"{row.flow_id}:{row.size_bytes}" in text


def test_unfinished_flows_are_named_even_when_a_run_has_none():
    from dcnsim.unfinished import named

    assert named(pd.NA) == named(None) == ""
    assert named([f"{i}:1000" for i in range(12)], listed=2) == "0:1000, 1:1000, ... (10 more)"
