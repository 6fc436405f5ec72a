"""ns-3.37: a scenario as a C++ program, compiled against the installed ns-3
(Debian's ``libns3-dev``; ``pkg-config`` also needs ``libgsl-dev``), cached by the
hash of its source, run, its results file read back.

The program is the scenario as data (links, queues, flows, incast rounds, probes,
streams, the TCP attributes) followed by a fixed driver, ``ns3_driver.cc``. Every
ns-3 attribute the translation sets is named below beside the dcnsim key it comes
from; the values are always set explicitly, so ns-3.37's own defaults (which differ
from ns-3.23's, the ``ns3`` profile) matter only where no attribute exists; those
are listed by :func:`notes`.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from dcnsim.crosscheck.compare import reference_tables
from dcnsim.crosscheck.model import (
    Model,
    NotTranslatable,
    _time_s,
    check_fixed,
    profile_values,
    segments,
)

__all__ = ["INSTALL", "available", "check", "notes", "profiles", "run", "translate"]

INSTALL = (
    "ns-3 is not installed: apt-get install libns3-dev libgsl-dev g++ pkg-config (Debian's ns-3.37)"
)
_MODULES = ["ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-traffic-control"]

_TRANSLATED = {
    "protocol", "mss", "header", "init_cwnd", "initial_ssthresh", "rwnd", "min_rto",
    "initial_rto", "rto_granularity", "dupack_threshold", "delayed_ack", "delayed_ack_timeout",
    "limited_transmit", "sack", "recovery", "slow_start", "nagle", "dctcp", "ecn_floor",
}  # fmt: skip


#: ns-2 mechanisms a scenario may switch on that ns-3.37 has no attribute for.
_NO_COUNTERPART = {
    "oneway_syn": "TcpSocketBase always opens with a three-way handshake",
    "idle_restart": "TcpSocketBase has no slow-start restart after idle "
    "(CA_EVENT_CWND_RESTART is 'Not triggered', tcp-socket-state.h)",
    "rto_ticks": "RttMeanDeviation keeps SRTT and RTTVAR unrounded; the RTO's granularity "
    "is TcpSocketBase::ClockGranularity (rto_granularity)",
}


def profiles() -> tuple[str, ...]:
    return ("ns3", "ns3_current")


def available() -> bool:
    if shutil.which("pkg-config") is None or shutil.which("g++") is None:
        return False
    return (
        subprocess.run(["pkg-config", "--exists", *_MODULES], capture_output=True).returncode == 0
    )


#: The least ssthresh an ECE cut leaves in ns-3.37, in segments, by congestion control:
#: TcpSocketBase::EnterCwr sets ssthresh = GetSsThresh(tcb, BytesInFlight()), which is
#: max(2 segSize, bytesInFlight / 2) for TcpNewReno (tcp-congestion-ops.cc 244-249),
#: max(2 segSize, cwnd / 2) for TcpLinuxReno (tcp-linux-reno.cc 139-145) and
#: (1 - alpha/2) cwnd, no floor, for TcpDctcp (tcp-dctcp.cc 130-134). dcnsim's
#: ``ecn_floor``.
_ECN_FLOOR = {"ecn": 2.0, "dctcp": 0.0}


def _socket_type(protocol: str, slow_start: str, ecn_floor: float) -> str:
    """dcnsim's controller as ns-3's congestion control (TcpL4Protocol::SocketType)."""
    floor = _ECN_FLOOR.get(protocol)
    if floor is not None and ecn_floor != floor:
        raise NotTranslatable(
            f"transport.ecn_floor: ns-3.37's {protocol} cut leaves at least {floor:g} "
            f"segments, not {ecn_floor:g}; set ecn_floor = {floor:g}"
        )
    if protocol == "dctcp":
        # TcpDctcp grows as TcpLinuxReno (tcp-dctcp.cc), dcnsim's slow_start = "segments".
        if slow_start != "segments":
            raise NotTranslatable(
                'transport.slow_start: ns-3\'s TcpDctcp grows as TcpLinuxReno; set "segments"'
            )
        return "ns3::TcpDctcp"
    if protocol in ("newreno", "ecn"):
        # TcpNewReno::SlowStart adds one segment per ACK (dcnsim "ack"); TcpLinuxReno
        # adds the segments acknowledged (tcp-linux-reno.cc, dcnsim "segments").
        kinds = {"ack": "ns3::TcpNewReno", "segments": "ns3::TcpLinuxReno"}
        if slow_start not in kinds:
            raise NotTranslatable(
                f"transport.slow_start: {slow_start!r} has no ns-3 congestion control"
            )
        return kinds[slow_start]
    raise NotTranslatable(
        f"transport.protocol: {protocol!r} is not translated to ns-3 (newreno, ecn, dctcp)"
    )


def check(model: Model, explicit: dict[str, Any]) -> None:
    if model.multipath and model.policy != "rps":
        raise NotTranslatable(
            "forwarding.policy: ns-3.37's global routing has no per-flow ECMP "
            "(only RandomEcmpRouting, per packet: policy rps)"
        )
    for key, why in _NO_COUNTERPART.items():
        if model.tcp[key]:
            raise NotTranslatable(f"transport.{key}: ns-3.37 cannot model it: {why}")
    if model.tcp["recovery"] not in ("classic", "prr"):
        raise NotTranslatable(
            f"transport.recovery: {model.tcp['recovery']!r} is not translated "
            "(TcpClassicRecovery: classic, TcpPrrRecovery: prr)"
        )
    check_fixed(explicit, profile_values(model.profile), _TRANSLATED)
    protocols = {f.protocol for f in model.flows} | {
        f.protocol for i in model.incasts for f in i.flows
    }
    if len(protocols) > 1:
        raise NotTranslatable("protocol: one congestion control per scenario translates to ns-3")
    for p in protocols:
        _socket_type(p, model.tcp["slow_start"], float(model.tcp["ecn_floor"]))
    if _size(model.tcp["header"]) not in (40, 52):
        raise NotTranslatable(
            "transport.header: ns-3's TCP header is 40 B, or 52 B with timestamps"
        )
    for what, items in (
        ("flows", model.flows),
        ("probes", model.probes),
        ("streams", model.streams),
    ):
        if len(items) > 9999:
            raise NotTranslatable(f"traffic.{what}: at most 9999 translate (one port each)")
    for q, key in ((model.switch_queue, "network.queue"), (model.host_queue, "network.nic_queue")):
        if q.aqm is not None and q.unit != "pkt":
            raise NotTranslatable(f"{key}.capacity: ns-3's RED is translated in packets only")


def _size(value: Any) -> int:
    from dcnsim import _core

    return int(value) if isinstance(value, int) else int(_core.parse_bytes(value))


def _defaults(tcp: dict[str, Any], protocol: str) -> list[str]:
    """Config::SetDefault lines, each the dcnsim key it translates."""
    mss = _size(tcp["mss"])
    rwnd = segments(tcp.get("rwnd"), mss)
    ssthresh = segments(tcp.get("initial_ssthresh"), mss)
    dctcp = tcp.get("dctcp", {})
    nagle = bool(tcp["nagle"])
    socket = _socket_type(protocol, tcp["slow_start"], float(tcp["ecn_floor"]))

    def t(key: str) -> str:
        return f"PicoSeconds({round(_time_s(tcp[key]) * 1e12)})"

    lines = [
        (
            "ns3::TcpL4Protocol::SocketType",
            f'TypeIdValue(TypeId::LookupByName("{socket}"))',
        ),
        (
            "ns3::TcpL4Protocol::RecoveryType",
            'TypeIdValue(TypeId::LookupByName("ns3::%s"))'
            % ("TcpPrrRecovery" if tcp["recovery"] == "prr" else "TcpClassicRecovery"),
        ),  # recovery
        ("ns3::TcpSocket::SegmentSize", f"UintegerValue({mss})"),  # mss
        ("ns3::TcpSocket::InitialCwnd", f"UintegerValue({int(tcp['init_cwnd'])})"),  # init_cwnd
        (
            "ns3::TcpSocket::InitialSlowStartThreshold",
            f"UintegerValue({2**32 - 1 if ssthresh is None else min(ssthresh * mss, 2**32 - 1)}u)",
        ),
        # rwnd: the advertised window is the receive buffer's room (tcp-socket-base.cc);
        # the send buffer is never the limit.
        (
            "ns3::TcpSocket::RcvBufSize",
            f"UintegerValue({rwnd * mss if rwnd is not None else 1 << 30})",
        ),
        ("ns3::TcpSocket::SndBufSize", f"UintegerValue({1 << 30})"),
        ("ns3::TcpSocket::DelAckCount", f"UintegerValue({2 if tcp['delayed_ack'] else 1})"),
        ("ns3::TcpSocket::DelAckTimeout", f"TimeValue({t('delayed_ack_timeout')})"),
        # nagle: TcpSocketBase::SendPendingData holds a segment shorter than SegmentSize
        # while data is unacknowledged unless TcpNoDelay (no rwnd/2 exception, unlike ns-2)
        ("ns3::TcpSocket::TcpNoDelay", f"BooleanValue({'false' if nagle else 'true'})"),
        # The SYN's timer: ConnTimeout (3 s in ns-3.37, tcp-socket.cc); dcnsim's initial_rto.
        ("ns3::TcpSocket::ConnTimeout", f"TimeValue({t('initial_rto')})"),
        ("ns3::RttEstimator::InitialEstimation", f"TimeValue({t('initial_rto')})"),
        ("ns3::TcpSocketBase::MinRto", f"TimeValue({t('min_rto')})"),
        ("ns3::TcpSocketBase::ClockGranularity", f"TimeValue({t('rto_granularity')})"),
        ("ns3::TcpSocketBase::ReTxThreshold", f"UintegerValue({int(tcp['dupack_threshold'])})"),
        (
            "ns3::TcpSocketBase::LimitedTransmit",
            f"BooleanValue({str(bool(tcp['limited_transmit'])).lower()})",
        ),
        ("ns3::TcpSocketBase::Sack", f"BooleanValue({str(bool(tcp['sack'])).lower()})"),
        # header 52 B: the timestamp option (10 B, padded to 12); 40 B: none.
        (
            "ns3::TcpSocketBase::Timestamp",
            f"BooleanValue({'true' if _size(tcp['header']) == 52 else 'false'})",
        ),
        (
            "ns3::TcpSocketBase::UseEcn",
            f"EnumValue(TcpSocketState::{'On' if protocol in ('ecn', 'dctcp') else 'Off'})",
        ),
        ("ns3::TcpDctcp::DctcpShiftG", f"DoubleValue({float(dctcp.get('g', 0.0625))!r})"),
        (
            "ns3::TcpDctcp::DctcpAlphaOnInit",
            f"DoubleValue({float(dctcp.get('alpha_init', 1.0))!r})",
        ),
        ("ns3::TcpDctcp::UseEct0", "BooleanValue(true)"),  # dcnsim marks ECT(0)
    ]
    return [f'    Config::SetDefault("{k}", {v});' for k, v in lines]


def translate(model: Model) -> tuple[str, list[int]]:
    """The C++ program of ``model`` and the dcnsim ``flow_id`` of each of its flows."""
    nodes = model.hosts + model.switches
    index = {n: i for i, n in enumerate(nodes)}
    flows = [(f, -1) for f in model.flows] + [
        (f, k) for k, inc in enumerate(model.incasts) for f in inc.flows
    ]
    protocol = flows[0][0].protocol if flows else model.tcp["protocol"]
    full = _size(model.tcp["mss"]) + _size(model.tcp["header"])
    mean = full if flows else (model.probes[0].size if model.probes else 1500)
    # One link per pair, its delay the mean of the two directions (host and switch
    # delays folded in: the same on every host-to-host path). ns-3's point-to-point
    # link sends a 2-byte PPP header dcnsim does not have; the rate is raised by
    # (S + 2) / S so that packets of S bytes (full TCP segments, else the probes')
    # take dcnsim's serialization time.
    pairs: dict[tuple[str, str], list[Any]] = {}
    for link in model.links:
        key = (link.a, link.b) if (link.b, link.a) not in pairs else (link.b, link.a)
        pairs.setdefault(key, []).append(link)
    link_rows = []
    for (a, b), both in pairs.items():
        delay_ps = round(sum(x.delay_s for x in both) / len(both) * 1e12)
        rate = both[0].rate_bps * (mean + 2) / mean
        link_rows.append(f"    {{{index[a]}, {index[b]}, {rate!r}, {delay_ps}ULL}},")

    def q(spec: Any) -> str:
        return (
            f"    {{{spec.capacity}u, {str(spec.unit == 'B').lower()}, "
            f"{str(spec.aqm is not None).lower()}, "
            f"{spec.min}, {spec.max}, {spec.max_p!r}, {spec.weight!r}}},"
        )

    src = [
        "// ns-3.37 program generated by dcnsim crosscheck: the scenario as data, then the",
        f"// fixed driver (dcnsim/crosscheck/ns3_driver.cc). Profile {model.profile}.",
        "// Build: g++ -std=c++17 -O1 this.cc $(pkg-config --cflags --libs "
        + " ".join(_MODULES)
        + ")",
        "#include <algorithm>",
        "#include <fstream>",
        '#include "ns3/core-module.h"',
        '#include "ns3/network-module.h"',
        '#include "ns3/internet-module.h"',
        '#include "ns3/point-to-point-module.h"',
        '#include "ns3/traffic-control-module.h"',
        "namespace xc {",
        "using namespace ns3;",
        "struct Link { int a, b; double bps; uint64_t delayPs; };",
        "struct QueueSpec {",
        "    uint32_t capacity; bool bytes, aqm; uint32_t min, max; double maxP, weight; };",
        "struct Flow { int src, dst; uint64_t size; uint64_t startPs; int incast; };",
        "struct Incast { int app; uint64_t sru; int rounds; uint64_t startPs; };",
        "struct Probe { int src, dst; uint32_t size; uint64_t timePs; };",
        "struct Stream { int src, dst; uint32_t size; double interval, start, stop; };",
        f"const int N_NODES = {len(nodes)}, N_HOSTS = {len(model.hosts)};",
        f"const int N_FLOWS = {len(flows)}, N_INCASTS = {len(model.incasts)};",
        f"const int N_PROBES = {len(model.probes)}, N_STREAMS = {len(model.streams)};",
        f"const uint32_t MEAN_PKT = {mean};",
        f"const uint64_t STOP_PS = {round(model.stop_s * 1e12) if model.stop_s else 0}ULL;",
        "const char* NAMES[] = {" + ", ".join(f'"{n}"' for n in nodes) + "};",
        "const Link LINKS[] = {",
        *link_rows,
        "};",
        "const QueueSpec QUEUES[] = {",
        q(model.host_queue),
        q(model.switch_queue),
        "};",
        "const Flow FLOWS[] = {",
        *[
            f"    {{{f.src}, {f.dst}, {f.size}ULL, {round(f.start_s * 1e12)}ULL, {k}}},"
            for f, k in flows
        ],
        "    {0, 0, 0, 0, 0}};",
        "const Incast INCASTS[] = {",
        *[
            f"    {{{i.app}, {i.sru}ULL, {i.rounds}, {round(i.start_s * 1e12)}ULL}},"
            for i in model.incasts
        ],
        "    {0, 0, 0, 0}};",
        "const Probe PROBES[] = {",
        *[
            f"    {{{p.src}, {p.dst}, {p.size}u, {round(p.time_s * 1e12)}ULL}},"
            for p in model.probes
        ],
        "    {0, 0, 0, 0}};",
        "const Stream STREAMS[] = {",
        *[
            f"    {{{s.src}, {s.dst}, {s.size}u, {s.interval_s!r}, {s.start_s!r}, {s.stop_s!r}}},"
            for s in model.streams
        ],
        "    {0, 0, 0, 0, 0, 0}};",
        "void SetDefaults() {",
        *_defaults(model.tcp, protocol),
    ]
    if model.policy == "rps":
        # Per-packet spraying: Ipv4GlobalRouting::RandomEcmpRouting (ipv4-global-routing.cc).
        src.append(
            '    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", '
            "BooleanValue(true));"
        )
    src += ["}", "} // namespace xc", ""]
    driver = resources.files("dcnsim.crosscheck").joinpath("ns3_driver.cc").read_text()
    return "\n".join(src) + driver, [f.flow_id for f, _ in flows]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dcnsim" / "crosscheck"


def _compile(source: str) -> Path:
    """The compiled program of ``source``, built once per distinct source."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    binary = _cache_dir() / f"ns3-{digest}"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    cc = binary.with_suffix(".cc")
    cc.write_text(source)
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", *_MODULES], capture_output=True, text=True, check=True
    )
    # Debian's ns3 .pc files carry a stray "-I/usr\;": dropped.
    args = [a for a in flags.stdout.split() if not a.endswith("\\;")]
    tmp = binary.with_suffix(f".tmp{os.getpid()}")
    proc = subprocess.run(
        ["g++", "-std=c++17", "-O1", "-w", str(cc), "-o", str(tmp), *args],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the ns-3 program failed: {proc.stderr.strip()[-3000:]}")
    tmp.replace(binary)
    return binary


def run(model: Model, workdir: Path) -> tuple[dict[str, pd.DataFrame], str]:
    source, flow_ids = translate(model)
    (workdir / "crosscheck.cc").write_text(source)
    binary = _compile(source)
    # The run number of ns-3's random streams (RngSeedManager's "RngRun" global value,
    # src/core/model/rng-seed-manager.cc, default 1 as dcnsim's seed) from the
    # environment (GlobalValue reads NS_GLOBAL_VALUE), so one compiled program serves
    # every seed.
    env = dict(os.environ, NS_GLOBAL_VALUE=f"RngRun={model.seed}")
    proc = subprocess.run([str(binary)], cwd=workdir, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(
            f"the ns-3 program failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}"
        )
    return read(model, workdir / "results.txt", flow_ids), source


def read(model: Model, results: Path, flow_ids: list[int]) -> dict[str, pd.DataFrame]:
    starts = {f.flow_id: f.start_s for f in model.flows} | {
        f.flow_id: f.start_s for i in model.incasts for f in i.flows
    }
    flows, probes, rounds, ports = [], [], [], []
    for line in results.read_text().splitlines():
        kind, *rest = line.split()
        if kind == "flow":
            i, end = int(rest[0]), float(rest[1])
            fid = flow_ids[i]
            fct = end - starts[fid] if end >= 0 else math.nan
            flows.append(
                {
                    "flow_id": fid,
                    "fct_s": fct,
                    "drops": int(rest[2]),
                    "retransmits": int(rest[3]),
                    "timeouts": int(rest[4]),
                }
            )
        elif kind == "probe":
            rx = float(rest[1])
            p = model.probes[int(rest[0])]
            probes.append(
                {"probe_id": p.probe_id, "latency_s": rx - p.time_s if rx >= 0 else math.nan}
            )
        elif kind == "round":
            start, end = float(rest[2]), float(rest[3])
            rounds.append(
                {
                    "app": int(rest[0]),
                    "round": int(rest[1]),
                    "start_s": start,
                    "end_s": end,
                    "round_time_s": end - start,
                }
            )
        elif kind == "port" and rest[0].split("->")[0] not in model.hosts_set:
            ports.append(
                {
                    "port": rest[0],
                    "packets_dropped": int(rest[1]),
                    "max_queue_packets": int(rest[2]),
                    "max_queue_bytes": int(rest[3]),
                }
            )
    return reference_tables(flows, probes, rounds, ports)


def notes(model: Model) -> list[str]:
    """Where ns-3.37 cannot be set to the profile's value (no attribute)."""
    out = []
    tcp = model.tcp
    if tcp.get("ssthresh_from") != "pipe":
        out.append(
            f"ssthresh_from = {tcp['ssthresh_from']!r}: "
            "ns-3.37 halves BytesInFlight() (the RFC 6675 pipe)"
        )
    if not tcp.get("rto_keeps_ssthresh"):
        out.append("rto_keeps_ssthresh = false: ns-3.37's ReTxTimeout keeps ssthresh in CA_LOSS")
    if _time_s(tcp["max_rto"]) != 60:
        out.append("max_rto: ns-3.37 caps the RTO at 60 s (no attribute)")
    return out
