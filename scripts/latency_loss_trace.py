"""Where the latency-difference study's test packets are lost, and what the queue held.

One run of the study (scheme, oversubscription, load, seed, reading) with a packet
capture on every port a test packet can cross and the queue of host 0's two upward
switch ports traced. For each lost test packet it prints the last port that sent it,
the port that dropped it (the next on its path), that queue's packets and bytes when the
test packet reached it, and what that port sent in the next 300 µs (control packets
without payload — SYN, FIN, pure ACKs, pFabric priority 0 — against data and test
packets). docs/studies.md (latency-difference, "Where pFabric's test packets are lost")
quotes its output.

    python scripts/latency_loss_trace.py pFabric 64:4:1 0.9 1 --reading previous
"""

from __future__ import annotations

import argparse
import io
from collections import Counter

import dpkt

import dcnsim
from dcnsim.studies.latency_difference import LATENCY_READINGS, latency_scenario
from dcnsim.studies.latency_difference.scenario import (
    LATENCY_OVERSUBSCRIPTIONS,
    LATENCY_TRACED_PORTS,
)


def host_of(ip: bytes) -> int:
    """Host index of a 10.x.y.z address (x.y.z = host + 1, crates/dcnsim-core/src/pcap.rs)."""
    return int.from_bytes(ip[1:], "big") - 1


def kind(ip: dpkt.ip.IP) -> str:
    if isinstance(ip.data, dpkt.udp.UDP):  # the probes: the only datagrams here
        return "test"
    tcp = ip.data
    if ip.len > ip.hl * 4 + tcp.off * 4:  # captures keep headers only: payload from lengths
        return "data"
    if tcp.flags & dpkt.tcp.TH_SYN:
        return "SYN"
    return "FIN" if tcp.flags & dpkt.tcp.TH_FIN else "ACK"


def packets(capture: bytes) -> list[tuple[float, dpkt.ip.IP]]:
    reader = dpkt.pcap.UniversalReader(io.BytesIO(capture))
    return [(float(t), dpkt.ethernet.Ethernet(buf).data) for t, buf in reader]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scheme")
    parser.add_argument("oversub")
    parser.add_argument("load", type=float)
    parser.add_argument("seed", type=int)
    parser.add_argument("--reading", default="default", choices=list(LATENCY_READINGS))
    args = parser.parse_args()
    scenario = latency_scenario(args.scheme, args.oversub, args.load, args.seed, args.reading)
    data = scenario.to_dict()
    # Host 0's way up, both aggregation switches' ways down, every ToR's port to a host.
    up = ["host0", "tor0->agg0", "agg0->core0", "core0->agg1"]
    down = [f"agg0->tor{t}" for t in range(4)] + [f"agg1->tor{t}" for t in range(4, 8)]
    hosts = [f"tor{h // 16}->host{h}" for h in range(1, 128)]
    ports = [*up, "core0->agg0", *down, *hosts]
    data["trace"] = {"pcap": ports, "queues": list(LATENCY_TRACED_PORTS)}
    results = dcnsim.run(dcnsim.Scenario(data))
    caps = {name: packets(results.pcaps[name]) for name in ports}
    queues = results.traces["queues"]
    probes = results.probes.sort_values("probe_id")
    lost = probes[probes["latency_s"].isna()]
    print(f"{scenario.get('name')}: {len(lost)} of {len(probes)} test packets lost")
    upper = LATENCY_OVERSUBSCRIPTIONS[args.oversub] * 1e9
    for _, probe in lost.iterrows():
        dst = int(probe["dst"])
        seen = sorted(
            (t, name)
            for name, caught in caps.items()
            for t, ip in caught
            if kind(ip) == "test" and host_of(ip.src) == 0 and host_of(ip.dst) == dst
        )
        t, last = seen[-1]
        path = up[: up.index(last) + 2] if last in up[:-1] else [last]
        dropper = path[-1]
        line = f"to host{dst}: last sent by {last} at {t * 1e6:.3f} µs, dropped at {dropper}"
        if dropper in caps:
            arrive = t + 1500 * 8 / (1e9 if last == "host0" else upper) + 0.2e-6
            held = queues[(queues["port"] == dropper) & (queues["time_s"] <= arrive)].tail(1)
            if len(held):
                line += f" holding {int(held['packets'].iloc[0])} packets, "
                line += f"{int(held['bytes'].iloc[0])} B"
            sent = Counter(kind(ip) for s, ip in caps[dropper] if arrive < s <= arrive + 300e-6)
            line += f"; it sent next (300 µs): {dict(sent)}"
        print(line)


if __name__ == "__main__":
    main()
