"""BOTCP through the user's API (seed ``botcp.txt``): the buffer-occupancy option on
the wire, read back by tshark; what a BOTCP scenario must say, one line each."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from dcnsim import Scenario, ScenarioError, run

STAMP = [{"kind": "max_occupancy", "ports": "switches"}]


def two_flows(**transport_botcp) -> Scenario:
    """A BOTCP flow (host 1) and a DCTCP flow (host 2) to host 0 on one switch."""
    transport = {"protocol": "botcp", "mss": "1456B"}
    if transport_botcp:
        transport["botcp"] = transport_botcp
    return Scenario(
        topology={"kind": "star", "hosts": 3, "link": {"rate": "10Gbps", "delay": "1us"}},
        network={"queue": {"capacity": "128KiB"}, "stages": STAMP},
        transport=transport,
        traffic={
            "flows": [
                {"src": 1, "dst": 0, "size": "100KB"},
                {"src": 2, "dst": 0, "size": "100KB", "protocol": "dctcp"},
            ]
        },
        trace={"pcap": ["sw0->host0", "host0"]},
    )


def tshark_ip(path) -> list[dict[str, str]]:
    """Each packet's IPv4 header as tshark dissects it (PDML): source, destination,
    header length, total length and the options' bytes in hex ("" without)."""
    tshark = shutil.which("tshark")
    if tshark is None:
        pytest.skip("tshark is not installed")
    proc = subprocess.run(
        [tshark, "-r", str(path), "-T", "pdml"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    packets = []
    for packet in ET.fromstring(proc.stdout).iter("packet"):
        (ip,) = [p for p in packet.iter("proto") if p.get("name") == "ip"]
        fields = {f.get("name"): f.get("show") for f in ip.iter("field")}
        options = [f.get("value") for f in ip if (f.get("show") or "").startswith("Options")]
        packets.append(
            {
                "src": fields["ip.src"],
                "dst": fields["ip.dst"],
                "hdr_len": fields["ip.hdr_len"],
                "len": fields["ip.len"],
                "options": options[0] if options else "",
            }
        )
    return packets


def test_the_bof_option_is_on_every_botcp_packet_and_no_other(tmp_path):
    results = run(two_flows())
    assert list(results.flows["bytes_delivered"]) == [100_000, 100_000]
    out = results.write(tmp_path / "out") / "pcap"
    # What the bottleneck port sends (data) and what host 0 sends and receives.
    port = tshark_ip(out / "sw0-to-host0.pcap")
    host = tshark_ip(out / "host0.pcap")
    botcp = [p for p in port + host if "10.0.0.2" in (p["src"], p["dst"])]
    dctcp = [p for p in port + host if "10.0.0.3" in (p["src"], p["dst"])]
    assert botcp and dctcp
    # IHL 6: 24 bytes of IPv4 header, the option type 226 (0xe2) of length 4, then
    # the BOF octet and the echo.
    assert {p["hdr_len"] for p in botcp} == {"24"}
    assert {p["options"][:4] for p in botcp} == {"e204"}
    assert {(p["hdr_len"], p["options"]) for p in dctcp} == {("20", "")}
    # Full data packets of the same 1456 B payload: BOTCP's are 1500 B with 40 B of
    # headers and the 4-byte option (seed §4.4: "4/1456"), DCTCP's 4 B shorter.
    assert max(int(p["len"]) for p in botcp) == 1500
    assert max(int(p["len"]) for p in dctcp) == 1496
    # The two flows share sw0->host0, so its queue holds KiBs: the data it sends
    # carries the stamp, and host 0 echoes stamps it received on its ACKs.
    stamps = {int(p["options"][4:6], 16) for p in port if p["src"] == "10.0.0.2"}
    echoes = {int(p["options"][6:8], 16) for p in host if p["dst"] == "10.0.0.2"}
    assert max(stamps) > 0 and max(echoes) > 0
    assert echoes <= stamps | {0}


def test_the_option_counts_on_the_wire():
    results = run(two_flows())
    flows = results.flows.set_index("protocol")
    # The same 100 KB in the same segments, with the handshake and FIN exchange (no
    # loss here): 4 bytes more on every packet of the BOTCP flow, each way.
    assert flows.loc["botcp", "packets_sent"] == flows.loc["dctcp", "packets_sent"]
    assert (flows["retransmits"] == 0).all()
    ports = results.ports.set_index("port")
    for a, b in (("host1->sw0", "host2->sw0"), ("sw0->host1", "sw0->host2")):
        extra = ports.loc[a, "bytes_sent"] - ports.loc[b, "bytes_sent"]
        assert extra == 4 * ports.loc[a, "packets_sent"] > 0


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"bl": 40}, "transport.botcp.bl: must be below bs (40), got 40"),
        ({"bs": 70}, "transport.botcp.bs: must be below bm (60), got 70"),
        ({"bm": 128}, "transport.botcp.bm: must be below the switch ports' buffer"),
        ({"x": "-10KB"}, "transport.botcp.x: must be positive"),
    ],
)
def test_bad_settings_are_one_line_naming_the_field(keys, message):
    with pytest.raises(ScenarioError) as err:
        two_flows(**keys).validate()
    text = str(err.value)
    assert text.startswith(message) and "\n" not in text, text


def test_botcp_without_the_stamp_is_refused_in_one_line():
    scenario = two_flows().set("network.stages", [])
    with pytest.raises(ScenarioError) as err:
        scenario.validate()
    text = str(err.value)
    assert text.startswith('network.stages: protocol "botcp" needs the max_occupancy stage')
    assert "sw0->host" in text and "\n" not in text
    # A scenario without BOTCP flows needs no stamp.
    scenario.set("transport.protocol", "dctcp").validate()
