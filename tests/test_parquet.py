"""The core writes the result tables as Parquet files itself (``_core.write_parquet``,
and the chunks a run with ``out`` streams): each file holds what pyarrow wrote from
the same columns before it did, read back by pyarrow, pandas and DuckDB alike."""

import subprocess
import sys

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dcnsim
from simhelp import EXAMPLES

# Streams overloading one port (drops, NaN latencies), a TCP flow with a cwnd
# trace, a queue trace and an incast application: every table has rows.
BUSY = {
    "seed": 3,
    "stop_time": "3ms",
    "topology": {"kind": "star", "hosts": 5, "link": {"rate": "1Gbps", "delay": "1us"}},
    "network": {"host_delay": "2us", "queue": {"capacity": "30pkt"}},
    "traffic": {
        "streams": [{"src": "all", "dst": 2, "load": 0.3, "size": "100B", "record": True}],
        "flows": [{"src": 3, "dst": 2, "size": "200KB"}],
        "incast": [{"aggregator": 4, "workers": [0, 1], "sru": "20KB", "rounds": 2}],
    },
    "trace": {"queues": ["sw0->host2"], "flows": [0]},
}


def pyarrow_table(columns):
    """The reference: a table of the core's columns as dcnsim gave it to pyarrow's
    writer before the core wrote Parquet (NaN as null, strings as large_string)."""
    return pa.table(
        {
            name: pa.array(values, type=pa.large_string())
            if isinstance(values, list)
            else pa.array(values, from_pandas=True)
            for name, values in columns.items()
        }
    )


def duckdb_rows(path):
    """The column names and types DuckDB sees, and its rows."""
    con = duckdb.connect()
    described = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
    return [row[:2] for row in described], con.execute(f"SELECT * FROM '{path}'").fetchall()


@pytest.mark.parametrize("scenario", [BUSY, EXAMPLES / "tree3_probes.toml"], ids=["busy", "tree3"])
def test_every_file_is_the_table_pyarrow_wrote(tmp_path, scenario):
    held = dcnsim.run(scenario)
    dcnsim.run(scenario, out=tmp_path / "out", chunk_rows=500)
    files = sorted((tmp_path / "out").glob("*.parquet"))
    if scenario is BUSY:
        assert [f.stem for f in files] == [
            "flow_trace", "flows", "ops", "ports", "probes", "queues", "rounds",
        ]  # fmt: skip
    for file in files:
        columns = held.columns(file.stem)
        assert len(next(iter(columns.values()))) > 0 or scenario is not BUSY, file.name
        reference = tmp_path / f"pyarrow-{file.name}"
        pq.write_table(pyarrow_table(columns), reference)
        ours, theirs = pq.read_table(file), pq.read_table(reference)
        assert ours.schema.equals(theirs.schema, check_metadata=True), file.name
        assert ours.schema.metadata is None, file.name
        assert ours.equals(theirs), file.name
        assert pd.read_parquet(file).equals(pd.read_parquet(reference)), file.name
        assert duckdb_rows(file) == duckdb_rows(reference), file.name


def test_null_where_nan_types_kept_without_rows(tmp_path):
    path = tmp_path / "t.parquet"
    dcnsim.results.write_table(
        path,
        {
            "x": pa.array([1.5, float("nan"), -0.0]).to_numpy(zero_copy_only=False),
            "n": pa.array([1, 2, 3], type=pa.int64()).to_numpy(),
            "s": ["a", "", "é"],
        },
    )
    table = pq.read_table(path)
    assert table.schema == pa.schema(
        [("x", pa.float64()), ("n", pa.int64()), ("s", pa.large_string())]
    )
    assert table.to_pydict() == {"x": [1.5, None, -0.0], "n": [1, 2, 3], "s": ["a", "", "é"]}
    empty = tmp_path / "empty.parquet"
    dcnsim.results.write_table(empty, {"x": table["x"].to_numpy()[:0], "s": []})
    assert pq.read_table(empty).schema == pa.schema([("x", pa.float64()), ("s", pa.large_string())])
    assert pq.read_table(empty).num_rows == 0


def test_a_column_of_another_type_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match=r"^flag: expected a float64 or int64 array"):
        dcnsim.results.write_table(tmp_path / "t.parquet", {"flag": (True, False)})


def test_run_with_out_imports_neither_pandas_nor_pyarrow(tmp_path):
    # The command's whole import graph (python -X importtime lists every module).
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "dcnsim", "run",
         str(EXAMPLES / "tree3_probes.toml"), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
    assert "dcnsim.results" in imported
    assert not {"pandas", "pyarrow", "numpy"} & imported, sorted(imported)
    assert (tmp_path / "out" / "probes.parquet").is_file()
