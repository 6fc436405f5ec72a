"""Bad input: one clear line naming the field, from Python and from the CLI alike."""

import pytest

import dcnsim
from dcnsim import ScenarioError
from simhelp import EXAMPLES, assert_one_error_line, cli


def base() -> dict:
    return {
        "topology": {"kind": "star", "hosts": 4},
        "traffic": {"probes": [{"src": 0, "dst": 1}]},
    }


FLOW = {"src": 0, "dst": 1, "size": "10KB"}
WORKLOAD = {"src": 0, "dst": "random", "cdf": "websearch", "load": 0.5, "stop": "1ms"}
STREAM = {"src": 0, "dst": 1, "load": 0.5, "stop": "1ms"}
PRIORITY = {"kind": "priority", "capacity": "100pkt"}
PAUSE = {"kind": "pause", "switches": "all", "xoff": "20pkt"}


def with_(path: str, value) -> dict:
    return dcnsim.Scenario(base()).set(path, value).to_dict()


DISCONNECTED = {
    "kind": "edges",
    "nodes": [
        {"name": "h0", "kind": "host"},
        {"name": "h1", "kind": "host"},
        {"name": "s0", "kind": "switch"},
        {"name": "s1", "kind": "switch"},
    ],
    "links": [{"a": "h0", "b": "s0"}, {"a": "h1", "b": "s1"}],
}

# (case id, scenario, the field path must start with, then the message must contain)
CASES = [
    ("unknown-key", with_("network.host_dealy", "1us"), "network", "host_dealy"),
    ("unknown-top-level-key", with_("colour", "red"), "", "colour"),
    ("bad-unit", with_("topology.link.rate", "10Gps"), "topology.link.rate", ""),
    ("zero-rate", with_("topology.link.rate", "0Gbps"), "topology.link.rate", ""),
    ("negative-rate", with_("topology.link.rate", "-1Gbps"), "topology.link.rate", ""),
    ("number-without-unit", with_("network.host_delay", "10"), "network.host_delay", ""),
    ("sub-picosecond-time", with_("network.host_delay", "0.5ps"), "network.host_delay", ""),
    ("host-out-of-range", with_("traffic.probes[0].dst", 4), "traffic.probes", "dst"),
    ("negative-host", with_("traffic.probes[0].src", -1), "traffic.probes", "src"),
    ("disconnected-edges", with_("topology", DISCONNECTED), "topology", ""),
    ("odd-fat-tree-k", with_("topology", {"kind": "fat_tree", "k": 5}), "topology.k", "5"),
    ("unknown-kind", with_("topology.kind", "torus"), "topology", "torus"),
    ("unknown-policy", with_("forwarding.policy", "spray"), "forwarding.policy", "spray"),
    ("unknown-port", with_("trace.queues", ["sw0->host9"]), "trace.queues", ""),
    (
        "tors-not-multiple-of-aggs",
        with_("topology", {"kind": "tree3", "aggs": 3, "tors": 8}),
        "topology.tors",
        "",
    ),
    (
        "stream-without-stop",
        with_("traffic.streams", [{"src": 0, "dst": 1, "load": 0.5}]),
        "traffic.streams",
        "stop",
    ),
    (
        "load-above-one",
        with_("traffic.streams", [{"src": 0, "dst": 1, "load": 1.5, "stop": "1ms"}]),
        "traffic.streams",
        "load",
    ),
    # TCP transport, AQM, outages, TCP traffic and captures.
    ("unknown-protocol", with_("transport.protocol", "cubic"), "transport.protocol", "cubic"),
    (
        "unknown-flow-protocol",
        with_("traffic.flows", [{**FLOW, "protocol": "bbr"}]),
        "traffic.flows[0].protocol",
        "bbr",
    ),
    ("mss-too-small", with_("transport.mss", "10B"), "transport.mss", "10"),
    (
        "workload-load-above-one",
        with_("traffic.workloads", [{**WORKLOAD, "load": 1.5}]),
        "traffic.workloads[0].load",
        "1.5",
    ),
    (
        "workload-cdf-and-size",
        with_("traffic.workloads", [{**WORKLOAD, "size": "10KB"}]),
        "traffic.workloads[0]",
        "either",
    ),
    (
        "deadline-before-start",
        with_("traffic.flows", [{**FLOW, "start": "2ms", "deadline": "1ms"}]),
        "traffic.flows[0].deadline",
        "start",
    ),
    (
        "unknown-aqm-kind",
        with_("network.queue", {"capacity": "100pkt", "aqm": {"kind": "codel"}}),
        "network.queue.aqm",
        "codel",
    ),
    (
        "red-min-not-below-max",
        with_(
            "network.queue",
            {"capacity": "100pkt", "aqm": {"kind": "red", "min": "80pkt", "max": "40pkt"}},
        ),
        "network.queue.aqm",
        "min (80pkt) must be below max (40pkt)",
    ),
    (
        "wred-bad-profile",
        with_(
            "network.nic_queue",
            {
                "capacity": "100pkt",
                "aqm": {"kind": "wred", "profiles": [{"min": "8pkt", "max": "8pkt"}]},
            },
        ),
        "network.nic_queue.aqm.profiles[0]",
        "min",
    ),
    (
        "outage-unknown-port",
        with_("network.outages", [{"port": "sw0->host9", "start": "1ms", "stop": "2ms"}]),
        "network.outages[0].port",
        "sw0->host9",
    ),
    (
        "outage-ends-before-it-starts",
        with_("network.outages", [{"port": "sw0->host1", "start": "2ms", "stop": "1ms"}]),
        "network.outages[0].stop",
        "after start",
    ),
    ("pcap-names-nothing", with_("trace.pcap", ["host9"]), "trace.pcap[0]", "host9"),
    ("pcap-names-a-switch", with_("trace.pcap", ["sw0"]), "trace.pcap[0]", "sw0"),
    (
        "trace-unknown-flow",
        with_("traffic.flows", [FLOW]) | {"trace": {"flows": [1]}},
        "trace.flows[0]",
        "no flow 1",
    ),
    (
        "incast-aggregator-is-a-worker",
        with_("traffic.incast", [{"aggregator": 0, "workers": [1, 0], "sru": "1KB"}]),
        "traffic.incast[0].workers[1]",
        "aggregator",
    ),
    ("class-of-a-probe", with_("traffic.probes", [{"src": 0, "dst": 1, "class": 8}]),
     "traffic.probes[0].class", "0 to 7"),
    ("class-of-a-flow", with_("traffic.flows", [FLOW | {"class": 9}]),
     "traffic.flows[0].class", "0 to 7"),
    ("class-of-a-workload", with_("traffic.workloads", [WORKLOAD | {"class": 8}]),
     "traffic.workloads[0].class", "0 to 7"),
    ("class-of-a-stream",
     with_("traffic.streams", [{"src": 0, "dst": 1, "rate": "1Mbps", "stop": "1ms", "class": 8}]),
     "traffic.streams[0].class", "0 to 7"),
    ("class-of-an-incast",
     with_("traffic.incast", [{"aggregator": 0, "workers": [1], "sru": "1KB", "class": 8}]),
     "traffic.incast[0].class", "0 to 7"),
    ("pfabric-queue-without-capacity",
     with_("network.queue", {"kind": "pfabric", "capacity": "0pkt"}),
     "network.queue.capacity", "positive"),
    ("unknown-queue-kind", with_("network.queue", {"kind": "wfq", "capacity": "10pkt"}),
     "network.queue.kind", "wfq"),
    ("class-limits-on-droptail",
     with_("network.queue", {"capacity": "10pkt", "class_limits": ["5pkt"]}),
     "network.queue.class_limits", "no per-class limits"),
    ("unknown-priority-scheme", with_("transport.priority", "deadline"),
     "transport.priority", "deadline"),
    ("pfabric-rto-zero", with_("transport.pfabric", {"rto": "0us"}),
     "transport.pfabric.rto", "above 0"),
    ("pfabric-probe-after-zero", with_("transport.pfabric", {"probe_after": 0}),
     "transport.pfabric.probe_after", "at least 1"),
    ("pfabric-init-cwnd-zero", with_("transport.pfabric", {"init_cwnd": 0}),
     "transport.pfabric.init_cwnd", "at least 1"),
    ("pfabric-cap-below-initial-window",
     with_("transport.pfabric", {"init_cwnd": 12, "max_cwnd": 8}),
     "transport.pfabric.max_cwnd", "init_cwnd"),
    ("pacing-not-a-bool", with_("transport.pacing", "yes"), "transport.pacing", ""),
    ("unknown-profile", with_("transport.profile", "bsd"), "transport.profile", "bsd"),
    ("rwnd-zero", with_("transport.rwnd", "0B"), "transport.rwnd", "positive"),
    ("rwnd-zero-segments", with_("transport.rwnd", "0pkt"), "transport.rwnd", "positive"),
    ("sack-blocks-zero", with_("transport.sack_blocks", 0), "transport.sack_blocks", "1 and 4"),
    ("sack-blocks-five", with_("transport.sack_blocks", 5), "transport.sack_blocks", "got 5"),
    # Traffic classes (802.1Q priority code points 0-7) and strict-priority queues.
    ("flow-class-8", with_("traffic.flows", [{**FLOW, "class": 8}]), "traffic.flows[0].class", "8"),
    (
        "flow-class-256",
        with_("traffic.flows", [{**FLOW, "class": 256}]),
        "traffic.flows[0].class",
        "",
    ),
    ("probe-class-8", with_("traffic.probes[0].class", 8), "traffic.probes[0].class", "0 to 7"),
    (
        "stream-class-8",
        with_("traffic.streams", [STREAM | {"class": 8}]),
        "traffic.streams[0].class",
        "8",
    ),
    (
        "workload-class-8",
        with_("traffic.workloads", [{**WORKLOAD, "class": 8}]),
        "traffic.workloads[0].class",
        "8",
    ),
    (
        "priority-zero-capacity",
        with_("network.queue", {"kind": "priority", "capacity": "0pkt"}),
        "network.queue.capacity",
        "positive",
    ),
    (
        "priority-zero-byte-capacity",
        with_("network.nic_queue", {"kind": "priority", "capacity": "0B"}),
        "network.nic_queue.capacity",
        "positive",
    ),
    (
        "priority-class-limit-above-capacity",
        with_("network.queue", PRIORITY | {"class_limits": ["10pkt", "101pkt"]}),
        "network.queue.class_limits[1]",
        "larger than the capacity (100pkt)",
    ),
    (
        "priority-class-limit-other-unit",
        with_("network.queue", PRIORITY | {"class_limits": ["64KB"]}),
        "network.queue.class_limits[0]",
        "packets",
    ),
    (
        "priority-nine-class-limits",
        with_("network.queue", PRIORITY | {"class_limits": ["1pkt"] * 9}),
        "network.queue.class_limits",
        "at most 8",
    ),
    (
        "droptail-class-limits",
        with_("network.queue", {"capacity": "100pkt", "class_limits": ["10pkt"]}),
        "network.queue.class_limits",
        "droptail",
    ),
    # Switch agents.
    ("agent-unknown-kind", with_("agents", [{"kind": "slicer", "switches": "all"}]),
     "agents[0].kind", "slicer"),
    ("agent-without-switches", with_("agents", [{"kind": "pause", "xoff": "20pkt"}]),
     "agents[0].switches", "missing"),
    ("agent-at-a-host", with_("agents", [{**PAUSE, "switches": ["host0"]}]),
     "agents[0].switches[0]", "is a host"),
    ("agent-unknown-group", with_("agents", [{**PAUSE, "switches": "spines"}]),
     "agents[0].switches", "spines"),
    ("pause-xon-not-below-xoff", with_("agents", [{**PAUSE, "xon": "20pkt"}]),
     "agents[0].xon", "below xoff"),
    ("pause-unknown-key", with_("agents", [{**PAUSE, "xof": "1pkt"}]),
     "agents[0].xof", "unknown key"),
]  # fmt: skip


def field_of(message: str) -> str:
    return message.split(":", 1)[0]


@pytest.mark.parametrize(("case", "data", "prefix", "needle"), CASES, ids=[c[0] for c in CASES])
def test_python_and_cli_report_the_same_one_line_error(tmp_path, case, data, prefix, needle):
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate(data)
    message = str(err.value)
    assert isinstance(err.value, ValueError)
    assert "\n" not in message
    assert ": " in message, message
    assert field_of(message).startswith(prefix), message
    assert needle in message, message

    # dcnsim.run refuses it the same way.
    with pytest.raises(ScenarioError) as err_run:
        dcnsim.run(data)
    assert str(err_run.value) == message

    path = tmp_path / f"{case}.toml"
    path.write_text(dcnsim.Scenario(data).to_toml())
    assert assert_one_error_line(cli("validate", str(path))) == message


def test_odd_k_message_is_the_documented_one():
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate(with_("topology", {"kind": "fat_tree", "k": 5}))
    assert str(err.value).startswith("topology.k: ")
    assert "even" in str(err.value) and str(err.value).endswith("5")


def test_cli_run_refuses_bad_input_before_writing(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(dcnsim.Scenario(with_("topology.link.rate", "10Gps")).to_toml())
    out = tmp_path / "out"
    message = assert_one_error_line(cli("run", str(path), "--out", str(out)))
    assert message.startswith("topology.link.rate")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path]  # no temporary directory left behind


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario.from_toml(missing)
    message = str(err.value)
    assert message == f"scenario: cannot read '{missing}': No such file or directory"
    for command in (["validate", str(missing)], ["run", str(missing), "--out", "x"]):
        assert assert_one_error_line(cli(*command, cwd=tmp_path)) == message
    assert not (tmp_path / "x").exists()


def test_invalid_toml(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('[topology]\nkind = "star"\nhosts = \n')
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario.from_toml(path)
    assert str(err.value).startswith(f"scenario: invalid TOML in '{path}': ")
    assert "line 3" in str(err.value)
    assert assert_one_error_line(cli("validate", str(path))) == str(err.value)


def test_toml_value_json_cannot_carry_names_its_field():
    scenario = dcnsim.Scenario.from_toml_str("name = 'x'\nwhen = 1979-05-27T07:32:00Z\n")
    with pytest.raises(ScenarioError) as err:
        scenario.validate()
    assert str(err.value).startswith("when: ")


def test_bad_set_override_names_the_field():
    message = assert_one_error_line(
        cli("validate", str(EXAMPLES / "fat_tree_rps.toml"), "--set", "topology.k=5")
    )
    assert message.startswith("topology.k: ")


@pytest.mark.parametrize(
    "args",
    [
        ["run"],  # the scenario file missing
        ["run", str(EXAMPLES / "tree3_probes.toml"), "--out", "o", "--set", "novalue"],
        ["bench", "--repeat", "0"],
        ["bench", "b1", "--quick", "--stop-time", "1ms"],
        ["bench", "b2"],
        ["frobnicate"],
        [],
    ],
    ids=[
        "no-file",
        "set-without-equals",
        "repeat-zero",
        "quick-and-stop-time",
        "unknown-benchmark",
        "unknown-command",
        "no-command",
    ],
)
def test_usage_errors_are_one_line(args):
    assert_one_error_line(cli(*args))


@pytest.mark.parametrize("name", ["datagram", "scale"])
def test_bench_bad_stop_time(name):
    message = assert_one_error_line(cli("bench", name, "--stop-time", "10"))
    assert message.startswith("stop_time")


def bad_cdf_scenario(cdf: str) -> dict:
    return with_("traffic.workloads", [{**WORKLOAD, "cdf": cdf}])


def test_cdf_file_that_is_not_monotone(tmp_path):
    cdf = tmp_path / "bad.cdf"
    cdf.write_text("# size probability\n1000 0\n5000 0.5\n3000 0.7\n9000 1\n")
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate(bad_cdf_scenario(str(cdf)))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("traffic.workloads[0].cdf: ")
    assert "not monotone" in message and "line 4" in message and str(cdf) in message

    # The CLI, with the file named relative to the scenario file: the same message.
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(dcnsim.Scenario(bad_cdf_scenario("bad.cdf")).to_toml())
    assert assert_one_error_line(cli("validate", str(scenario))) == message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("100 0\n200 0.9\n", "last probability must be 1"),
        ("100 0\n200 1.5\n", "outside [0, 1]"),
        ("100 0 1\n", "line 1: expected two numbers"),
        ("# nothing\n", "no points"),
    ],
    ids=["not-ending-at-one", "probability-above-one", "three-columns", "empty"],
)
def test_other_bad_cdf_files(tmp_path, text, needle):
    cdf = tmp_path / "bad.cdf"
    cdf.write_text(text)
    with pytest.raises(ScenarioError, match=r"^traffic\.workloads\[0\]\.cdf: ") as err:
        dcnsim.validate(bad_cdf_scenario(str(cdf)))
    assert needle in str(err.value)


def test_misspelt_cdf_name_lists_the_shipped_ones(tmp_path):
    # Not a shipped name, so a file path: relative to the scenario file's directory.
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(dcnsim.Scenario(bad_cdf_scenario("web_search")).to_toml())
    message = assert_one_error_line(cli("validate", str(scenario)))
    assert message.startswith("traffic.workloads[0].cdf: ")
    assert str(tmp_path / "web_search") in message
    for name in dcnsim._core.SHIPPED_CDFS:
        assert name in message
