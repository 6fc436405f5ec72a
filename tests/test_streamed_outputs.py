"""Outputs streamed to disk as the run goes: the same files as a run held in memory,
memory that does not grow with the rows recorded, and a start-up that imports only
what it needs."""

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dcnsim
from dcnsim import results as results_module
from simhelp import EXAMPLES, cli

TREE3 = str(EXAMPLES / "tree3_probes.toml")

# Recorded 100 B streams overloading one port (drops), a traced TCP flow and queue,
# listed probes early and late, packets in flight at stop_time: about 230,000 events,
# so several chunks leave mid-run (the core checks every 65,536 events).
BUSY = {
    "seed": 7,
    "stop_time": "40ms",
    "topology": {"kind": "star", "hosts": 4, "link": {"rate": "1Gbps", "delay": "1us"}},
    "network": {"host_delay": "2us", "queue": {"capacity": "30pkt"}},
    "traffic": {
        "streams": [{"src": "all", "dst": 2, "load": 0.3, "size": "100B", "record": True}],
        "flows": [{"src": 3, "dst": 2, "size": "5MB"}],
        "probes": [{"src": 0, "dst": "all", "time": "1ms", "interval": "15ms"}],
    },
    "trace": {"queues": ["sw0->host2"], "flows": [0]},
}

STREAMED = ("probes.parquet", "queues.parquet", "flow_trace.parquet")


def stream_scenario(rate: str, stop: str, stream_stop: str | None = None) -> str:
    """A 64 B datagram stream at load 1.0 between two hosts, every packet recorded
    (until ``stream_stop``, by default ``stop``, the scenario's stop_time)."""
    until = f'stop = "{stream_stop}"' if stream_stop else ""
    return f"""
name = "recorded 64 B stream at load 1.0"
stop_time = "{stop}"
[topology]
kind = "star"
hosts = 2
link = {{ rate = "{rate}", delay = "1us" }}
[[traffic.streams]]
src = 0
dst = 1
load = 1.0
pattern = "constant"
size = "64B"
record = true
{until}
"""


def test_chunked_files_equal_one_chunk_and_in_memory_files(tmp_path):
    chunked = dcnsim.run(BUSY, out=tmp_path / "chunked", chunk_rows=1000)
    dcnsim.run(BUSY, out=tmp_path / "whole", chunk_rows=10**9)
    dcnsim.run(BUSY).write(tmp_path / "memory")
    names = sorted(p.name for p in (tmp_path / "memory").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "chunked").iterdir())
    for name in names:
        if not name.endswith(".parquet"):
            continue
        table = pq.read_table(tmp_path / "chunked" / name)
        for other in ("whole", "memory"):
            expected = pq.read_table(tmp_path / other / name)
            assert table.schema.equals(expected.schema, check_metadata=True), (name, other)
            assert table.equals(expected), (name, other)
    for name in STREAMED:
        # Several row groups: the rows did leave in chunks.
        assert pq.ParquetFile(tmp_path / "chunked" / name).num_row_groups > 2, name
    assert pq.ParquetFile(tmp_path / "whole" / "probes.parquet").num_row_groups == 1
    # The returned tables are read back from the directory.
    assert chunked.out_dir == tmp_path / "chunked"
    memory = dcnsim.run(BUSY)
    assert chunked.probes.equals(memory.probes)
    assert chunked.traces["queues"].equals(memory.traces["queues"])
    assert chunked.traces["flows"].equals(memory.traces["flows"])
    assert chunked.probes["latency_s"].isna().any()  # drops, and rows in flight at the end
    assert (chunked.probes["flow_id"] == -1).sum() == 3  # the listed probes


def test_a_files_types_depend_neither_on_its_rows_nor_on_pandas(tmp_path):
    # Written with pyarrow from the core's columns: strings are large_string also in
    # a table without rows (tree3_probes has no flows and asks for no trace; BUSY has
    # both), and the files carry no pandas metadata, whichever pandas is installed.
    empty = dcnsim.run(TREE3, out=tmp_path / "empty")
    # 2 ms: the probe train spaced to fit (a probe after stop_time is refused).
    train = [{"src": 0, "dst": "all", "time": "1ms", "interval": "300us"}]
    short = {**BUSY, "stop_time": "2ms", "traffic": {**BUSY["traffic"], "probes": train}}
    full = dcnsim.run(short, out=tmp_path / "full")
    assert len(empty.flows) == 0 and len(full.flows) > 0
    for name in ("flows.parquet", "ops.parquet", "ports.parquet", "probes.parquet"):
        schema = pq.read_schema(tmp_path / "empty" / name)
        assert schema.equals(pq.read_schema(tmp_path / "full" / name), check_metadata=True), name
        assert schema.metadata is None, name
    flows = pq.read_schema(tmp_path / "empty" / "flows.parquet")
    assert [flows.field(c).type for c in ("kind", "protocol", "origin")] == [pa.large_string()] * 3
    assert flows.field("flow_id").type == pa.int64() and flows.field("fct_s").type == pa.float64()
    # Read back, a file is the run's table.
    assert pd.read_parquet(tmp_path / "full" / "flows.parquet").equals(full.flows)
    assert pd.read_parquet(tmp_path / "full" / "ports.parquet").equals(full.ports)


def test_a_table_not_asked_for_and_left_empty_is_not_written(tmp_path):
    out = tmp_path / "out"
    results = dcnsim.run(TREE3, out=out, chunk_rows=10)
    assert sorted(p.name for p in out.iterdir()) == [
        "flows.parquet",
        "ops.parquet",
        "ports.parquet",
        "probes.parquet",
        "scenario.toml",  # every run keeps its scenario (issue 49)
        "summary.json",
    ]
    assert len(results.probes) == 127
    assert results.traces["queues"].empty  # columns, no rows, no file


def test_chunk_rows_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="chunk_rows: expected a positive number of rows, got 0"):
        dcnsim.run(TREE3, out=tmp_path / "out", chunk_rows=0)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_streamed_run_leaves_no_directory(tmp_path, monkeypatch):
    # The core wrote its chunks into the temporary directory; the run then fails.
    def fail_after_writing(*args):
        raw = core_run(*args)
        assert raw["written"] == ["flow_trace", "probes", "queues"]
        raise RuntimeError("disk full")

    core_run = results_module._core.run
    monkeypatch.setattr(results_module._core, "run", fail_after_writing)
    with pytest.raises(RuntimeError, match="disk full"):
        dcnsim.run(BUSY, out=tmp_path / "out", chunk_rows=1000)
    assert list(tmp_path.iterdir()) == []  # neither the output nor its temporary directory


def test_a_write_failing_in_the_core_is_an_os_error_naming_its_file():
    # /dev/full: every write fails with ENOSPC, as on a full disk.
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with pytest.raises(OSError) as failed:
        dcnsim._core.write_parquet("/dev/full", {"x": [str(i) for i in range(10**5)]})
    assert failed.value.errno == 28 and failed.value.filename == "/dev/full"


def test_streamed_runs_are_checked_against_the_rows_they_hold(tmp_path):
    # A stream recorded for 1000 s in a run stopped after 1 ms: kept in memory its
    # rows would need terabytes and the run is refused as before; streamed, the
    # estimate holds one chunk of rows and the run goes.
    long_stream = dcnsim.Scenario.from_toml_str(stream_scenario("10Gbps", "1ms", "1000s"))
    with pytest.raises(dcnsim.ScenarioError, match=r"\(recorded packets .* than the 2\.0 GB"):
        dcnsim.run(long_stream, memory_limit=2 * 10**9)
    results = dcnsim.run(long_stream, memory_limit=2 * 10**9, out=tmp_path / "out")
    assert results.probe_latency.rows == 19_532  # 1 ms, one packet every 51.2 ns


def test_cli_run_without_out_keeps_no_rows(tmp_path):
    scenario = tmp_path / "long.toml"
    scenario.write_text(stream_scenario("10Gbps", "1ms", "1000s"))
    proc = cli("run", str(scenario), "--memory-limit", "2GB", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    # 1 ms of 64 B packets at 10 Gbps, one every 51.2 ns.
    probes = re.search(r"probes +([\d,]+) received of ([\d,]+)", proc.stdout)
    assert probes is not None, proc.stdout
    assert int(probes[2].replace(",", "")) == 19_532
    proc = cli("run", str(scenario), "--memory-limit", "2GB", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert pq.ParquetFile(tmp_path / "o" / "probes.parquet").metadata.num_rows == 19_532


def test_progress_line_warns_once_past_the_row_threshold(monkeypatch):
    monkeypatch.setattr(results_module, "ROW_WARNING", 1000)
    stream = io.StringIO()
    line = results_module._ProgressLine(stream, streamed=True, eta=True)
    info = {"sim_time_s": 0.5, "stop_time_s": 1.0, "wall_s": 1.0, "packet_hops_per_s": 1e6}
    for rows in (10, 999, 1000, 5000, 10**6):
        line({**info, "recorded_rows": rows})
    line.close()
    warnings = [w for w in stream.getvalue().split("\n") if "warning" in w]
    assert len(warnings) == 1
    assert "1,000 rows recorded (probes, traces), streamed out as the run goes" in warnings[0]


# --- memory -------------------------------------------------------------------------------


def peak_rss_mb(*command: str) -> float:
    """Peak RSS (MB) of one child process running ``command``, measured by a parent
    process of its own, so no other child of the test session counts."""
    measure = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "assert proc.returncode == 0, proc.stderr\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", measure, *command], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout) / 1024  # ru_maxrss is in KB on Linux


def run_command(scenario: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "dcnsim", "run", str(scenario), "--out", str(out)]


def test_memory_does_not_grow_with_the_rows_written(tmp_path):
    # 100 Mbps of 64 B packets: 195,313 rows per simulated second, in chunks of
    # 2^14 rows: 12 chunks in the short run, 120 in the long one.
    short, long = tmp_path / "short.toml", tmp_path / "long.toml"
    short.write_text(stream_scenario("100Mbps", "1s"))
    long.write_text(stream_scenario("100Mbps", "10s"))
    streamed = "import dcnsim, sys; dcnsim.run(sys.argv[1], out=sys.argv[2], chunk_rows=2**14)"
    held = "import dcnsim, sys; dcnsim.run(sys.argv[1]).write(sys.argv[2])"
    streamed_short = peak_rss_mb(sys.executable, "-c", streamed, str(short), str(tmp_path / "a"))
    streamed_long = peak_rss_mb(sys.executable, "-c", streamed, str(long), str(tmp_path / "b"))
    held_long = peak_rss_mb(sys.executable, "-c", held, str(long), str(tmp_path / "c"))
    print(f"peak RSS MB: streamed {streamed_short:.0f} / {streamed_long:.0f}, held {held_long:.0f}")
    # Sent every 5.12 µs from 0 to 9.99999488 s.
    assert pq.ParquetFile(tmp_path / "b" / "probes.parquet").metadata.num_rows == 1_953_125
    # Ten times the rows: held in memory they cost their table's 156 MB (80 B a row)
    # more, and more while the run holds them; streamed, about nothing.
    assert held_long - streamed_short > 156, (streamed_short, held_long)
    assert streamed_long - streamed_short < 0.1 * (held_long - streamed_short), (
        streamed_short,
        streamed_long,
        held_long,
    )


@pytest.mark.slow
def test_recorded_64B_stream_at_load_1_for_10s_stays_under_1GB(tmp_path):
    # 1 Gbps: 19.5 M recorded packets (held in memory they needed 3.2 GB).
    scenario = tmp_path / "stream.toml"
    scenario.write_text(stream_scenario("1Gbps", "10s"))
    peak = peak_rss_mb(*run_command(scenario, tmp_path / "out"))
    assert pq.ParquetFile(tmp_path / "out" / "probes.parquet").metadata.num_rows == 19_531_250
    assert peak < 1000, peak


# --- start-up -------------------------------------------------------------------------------


def loaded_after(*commands: list[str]) -> list[str]:
    """The heavy modules loaded by ``import dcnsim`` and the given CLI commands."""
    check = (
        "import json, sys\n"
        "import dcnsim\n"
        "from dcnsim import cli\n"
        "for command in json.loads(sys.argv[1]):\n"
        "    assert cli.main(command) == 0\n"
        "heavy = {'pandas', 'pyarrow', 'matplotlib', 'duckdb', 'tqdm', 'dcnsim.studies',\n"
        "         'dcnsim.sweeps', 'dcnsim.store', 'dcnsim.report'}\n"
        "print(json.dumps(sorted(heavy & set(sys.modules))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", check, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_import_and_validate_load_no_table_library():
    assert loaded_after() == []
    assert loaded_after(["validate", TREE3]) == []


def test_run_with_outputs_loads_no_table_library(tmp_path):
    # The core writes the files from its own columns (tests/test_parquet.py).
    assert loaded_after(["run", TREE3, "--out", str(tmp_path / "out")]) == []


def test_run_without_outputs_loads_no_table_library():
    # Its summary (TCP flows, incast rounds) is computed on the core's columns.
    assert loaded_after(["run", TREE3, "--no-progress"]) == []
    assert loaded_after(["run", str(EXAMPLES / "dctcp_incast.toml"), "--no-progress"]) == []


def test_list_imports_no_study_and_no_table_library():
    """``dcnsim list`` names the studies from the registry without importing one (each
    imports pandas and its runs): what made it take 0.8 s (issue 35)."""
    check = (
        "import sys\n"
        "from dcnsim import cli\n"
        "assert cli.main(['list']) == 0\n"
        "heavy = ('dcnsim.studies.', 'pandas', 'pyarrow', 'numpy', 'matplotlib', 'scipy')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


def test_the_public_api_loads_on_first_use():
    check = (
        "import dcnsim\n"
        "names = ['run', 'Results', 'load', 'query', 'sweep', 'Sweep', 'SweepError']\n"
        "assert all(name in dir(dcnsim) for name in names)\n"
        "assert all(callable(getattr(dcnsim, name)) for name in names)\n"
        "from dcnsim import run, Scenario\n"
        "print(len(run(Scenario.from_toml(__import__('sys').argv[1])).probes))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", check, TREE3], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["127"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = dcnsim.nothing
