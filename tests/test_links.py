"""``links.parquet`` (``trace.links``, issue 49): every port's packets, bytes and
utilisation per interval, written with the run's other files, and ``dcnsim plot``'s
link-utilisation figure. Values against closed forms: a saturated 1 Gbps port
serializes 125,000 B per millisecond (utilisation 1), an idle one 0."""

from __future__ import annotations

import pandas as pd
import pytest
from PIL import Image

import dcnsim
from dcnsim.results import OUTPUT_FILES, RECORDED
from simhelp import assert_one_error_line, cli
from test_reports import svg_texts

LINK_COLUMNS = ["time_s", "interval_s", "port", "packets", "bytes", "utilisation"]

#: Three hosts each send 0.6 of a 1 Gbps link to host 3 for 20 ms: its port is
#: offered 1.8 times its rate; nothing goes to host 0.
OVERLOAD = """
name = "overload"
stop_time = "20ms"
topology = { kind = "star", hosts = 4, link = { rate = "1Gbps", delay = "1us" } }
network = { queue = { kind = "droptail", capacity = "50pkt" } }
[trace]
links = "1ms"
[[traffic.streams]]
src = "all"
dst = 3
load = 0.6
"""


@pytest.fixture(scope="module")
def overload(tmp_path_factory):
    """The overload scenario run with ``--out``: its directory."""
    directory = tmp_path_factory.mktemp("links")
    (directory / "s.toml").write_text(OVERLOAD)
    proc = cli("run", str(directory / "s.toml"), "--out", str(directory / "run"))
    assert proc.returncode == 0, proc.stderr
    assert "links.parquet" in proc.stdout
    return directory / "run"


def test_a_saturated_link_reads_one_and_an_idle_link_zero(overload):
    links = pd.read_parquet(overload / "links.parquet")
    assert list(links.columns) == LINK_COLUMNS
    ports = pd.read_parquet(overload / "ports.parquet")
    assert len(links) == len(ports) * 20
    full = links[links["port"] == "sw0->host3"].reset_index(drop=True)
    assert full["time_s"].to_list() == pytest.approx([i * 1e-3 for i in range(20)], abs=1e-15)
    # From the second millisecond the queue never empties: line rate throughout.
    assert full["utilisation"][1:].to_list() == pytest.approx([1.0] * 19, abs=1e-9)
    assert full["bytes"][1:].to_list() == pytest.approx([125_000.0] * 19, abs=1e-3)
    idle = links[links["port"] == "sw0->host0"]
    assert (idle["utilisation"] == 0).all() and (idle["packets"] == 0).all()
    assert links["utilisation"].between(0, 1 + 1e-9).all()
    # The rows sum to the ports table's packet counters.
    per_port = links.groupby("port", sort=False)["packets"].sum()
    assert per_port.to_dict() == dict(zip(ports["port"], ports["packets_sent"], strict=True))


def test_links_stream_to_the_file_as_a_run_in_memory_holds_them(overload, tmp_path):
    results = dcnsim.run(dcnsim.Scenario.from_toml(overload / "scenario.toml"))
    pd.testing.assert_frame_equal(
        results.links, pd.read_parquet(overload / "links.parquet"), check_exact=True
    )
    # Written by the same writer as every other table: whole, and replaceable.
    assert "links.parquet" in OUTPUT_FILES and RECORDED["links"][1] == "trace.links"
    results.write(tmp_path / "again")
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "again" / "links.parquet"), results.links
    )
    # Without the key: no file, an empty table with its columns.
    data = dcnsim.Scenario.from_toml(overload / "scenario.toml").to_dict()
    del data["trace"]
    plain = dcnsim.run(dcnsim.Scenario(data))
    assert list(plain.links.columns) == LINK_COLUMNS and len(plain.links) == 0
    plain.write(tmp_path / "plain")
    assert not (tmp_path / "plain" / "links.parquet").exists()


def test_plot_draws_link_utilisation_in_three_formats(overload, tmp_path):
    proc = cli("plot", str(overload), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "link_utilisation" in proc.stdout
    with Image.open(tmp_path / "link_utilisation.png") as image:
        assert round(image.info["dpi"][0]) == 300
    assert (tmp_path / "link_utilisation.pdf").read_bytes().startswith(b"%PDF")
    texts = svg_texts(tmp_path / "link_utilisation.svg")
    assert "sw0->host3" in texts and "line rate" in texts
    assert any("the 8 busiest of 8 ports" in t for t in texts), texts


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ('"0us"', "an interval of 0 counts nothing"),
        ('"1ps"', "more than 100000000"),
        ("-3", "trace.links"),
    ],
)
def test_a_bad_link_interval_gets_one_line_naming_the_key(tmp_path, value, reason):
    path = tmp_path / "s.toml"
    path.write_text(OVERLOAD)
    message = assert_one_error_line(cli("run", str(path), "--set", f"trace.links={value}"))
    assert "trace.links" in message and reason in message, message
