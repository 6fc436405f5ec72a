"""What a notebook shows of a Scenario and of Results (``_repr_html_``)."""

import re

import dcnsim
from simhelp import EXAMPLES

TREE3 = EXAMPLES / "tree3_probes.toml"


def cells(html: str) -> dict[str, str]:
    """The summary's facts: header cell → value cell, as text."""
    return dict(re.findall(r"<th[^>]*>([^<]+)</th><td[^>]*>([^<]*)</td>", html))


def test_a_scenario_shows_what_it_sets_and_contains():
    scenario = dcnsim.Scenario.from_toml(TREE3).set("forwarding.policy", "elr")
    html = scenario._repr_html_()
    assert "dcnsim scenario: tree3 zero-load probes (first seed)" in html
    # The line is made from the values set, the override included.
    assert "tree3 cores=1 aggs=2 tors=8 hosts_per_tor=16 links 1Gbps 0.2us; elr" in html
    facts = cells(html)
    assert facts["seed"] == "1"
    # The seed's tree: 128 hosts, 1 + 2 + 8 switches, 128 + 8 + 2 links.
    assert facts["network"] == "128 hosts, 11 switches, 138 links (276 ports)"
    assert facts["traffic"] == "127 probe packets, 0 streams, 0 listed flows"
    assert facts["stops"] == "when traffic ends"


def test_an_invalid_scenario_shows_why():
    html = dcnsim.Scenario.from_toml(TREE3).set("topology.cores", 0, check=False)._repr_html_()
    assert cells(html)["not valid"].startswith("topology.cores")


def test_results_show_the_summary_and_each_tables_rows(tmp_path):
    results = dcnsim.run(TREE3)
    html = results._repr_html_()
    facts = cells(html)
    s = results.summary
    assert facts["events"] == f"{s['events']:,}"
    assert facts["packets"].startswith("127 injected, 127 delivered, 0 dropped")
    # Latencies of the closed form: 15 at 29.4 µs, 48 at 53.8 µs, 64 at 78.2 µs.
    mean = (15 * 29.4 + 48 * 53.8 + 64 * 78.2) / 127
    assert facts["probe latency"].startswith(f"mean {mean:.2f} µs")
    assert "min 29.40, max 78.20 (127 received of 127)" in facts["probe latency"]
    rows = dict(re.findall(r"<code>(\w+)</code></td><td[^>]*>([\d,]*)</td>", html))
    assert rows == {
        "flows": "0", "ops": "0", "ports": "276", "rounds": "0", "agent_rows": "0",
        "probes": "127", "queues": "0", "flow_trace": "0", "links": "0",
    }  # fmt: skip
    # Streamed to a directory: the recorded tables are in their files.
    streamed = dcnsim.run(TREE3, out=tmp_path / "out")._repr_html_()
    probes = r"<code>probes</code></td><td[^>]*>127</td><td[^>]*>in probes.parquet"
    assert re.search(probes, streamed)
    assert cells(streamed)["written to"] == str(tmp_path / "out")
    # Cells are escaped.
    named = dcnsim.run(dcnsim.Scenario.from_toml(TREE3).set("name", "<b>x</b>"))._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in named and "<b>x</b>" not in named
