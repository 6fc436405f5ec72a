"""ns-2.35: a scenario as a Tcl script, run with ``ns``, its trace read back.

The script builds every link as two simplex links (each direction its own egress
queue), attaches one TCP agent pair per flow (the profile's agents, below), a UDP
agent per probe and a CBR source per stream, traces every link (``trace-all``) and
reports incast rounds from an ``Application`` on each receiving agent, whose
``recv`` ns-2 calls with the bytes each segment delivers in order
(``Application::recv``, apps/app.cc; ``TcpSink::recv``, tcp/tcp-sink.cc).

ns-2's defaults this relies on are cited where they are used: tcl/lib/ns-default.tcl
(compiled into ``ns``; ``strings $(which ns) | grep 'Agent/TCP set'`` shows them).
"""

from __future__ import annotations

import math
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from dcnsim.crosscheck.compare import reference_tables
from dcnsim.crosscheck.model import (
    Model,
    NotTranslatable,
    Queue,
    check_fixed,
    profile_values,
    segments,
)

__all__ = ["AGENTS", "INSTALL", "agents", "available", "run", "translate"]

INSTALL = "ns-2 is not installed: apt-get install ns2 (Debian's ns-2.35)"

#: Profile -> whether its agents are FullTcp (two-way: a three-way handshake, ACKs
#: from the other FullTcp) or one-way (paired with their sinks, tcp/tcp-sink.cc).
FULLTCP = {"ns2": True, "ns2_sack": True, "ns2_newreno": True, "ns2_oneway": False}

#: (FullTcp?, sack, recovery) -> (sender agent, receiver agent): the recovery the
#: resolved keys ask for picks the agent. Plain FullTcp is Reno (`reno_fastrecov_
#: true`, `FullTcpAgent::pack_action`, tcp/tcp-full.cc); FullTcp/Newreno keeps the
#: recovery over partial ACKs (`NewRenoFullTcpAgent::pack_action`); FullTcp/Sack
#: recovers by its scoreboard (`SackFullTcpAgent`); one-way Newreno and Sack1 keep it
#: too (tcp/tcp-newreno.cc, tcp/tcp-sack1.cc).
AGENTS = {
    (True, False, "reno"): ("Agent/TCP/FullTcp", "Agent/TCP/FullTcp"),
    (True, False, "classic"): ("Agent/TCP/FullTcp/Newreno", "Agent/TCP/FullTcp/Newreno"),
    (True, True, "classic"): ("Agent/TCP/FullTcp/Sack", "Agent/TCP/FullTcp/Sack"),
    (False, False, "classic"): ("Agent/TCP/Newreno", "Agent/TCPSink"),
    (False, True, "classic"): ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1"),
}

#: Keys translated into agent variables or the agent's class (the others must keep
#: the profile's value).
_TRANSLATED = {
    "protocol", "mss", "header", "init_cwnd", "initial_ssthresh", "rwnd", "min_rto",
    "max_rto", "initial_rto", "rto_granularity", "dupack_threshold", "delayed_ack",
    "delayed_ack_timeout", "handshake", "limited_transmit", "nagle", "oneway_syn",
    "idle_restart", "rto_ticks", "recovery",
}  # fmt: skip


def agents(model: Model) -> tuple[str, str, bool]:
    """The sender and receiver agents of ``model`` and whether they are FullTcp."""
    fulltcp = FULLTCP[model.profile]
    key = (fulltcp, bool(model.tcp["sack"]), model.tcp["recovery"])
    if key not in AGENTS:
        kind = "FullTcp" if fulltcp else "the one-way agents"
        raise NotTranslatable(
            f"transport.recovery: {model.tcp['recovery']!r} with sack = "
            f"{str(key[1]).lower()} has no ns-2.35 agent among {kind} (FullTcp: reno, or "
            "classic as FullTcp/Newreno and FullTcp/Sack; one-way: classic)"
        )
    return (*AGENTS[key], fulltcp)


def available() -> bool:
    return shutil.which("ns") is not None


def _tcl_time(text: str) -> float:
    from dcnsim.crosscheck.model import _time_s

    return _time_s(text)


def _agent_vars(tcp: dict[str, Any], fulltcp: bool) -> dict[str, Any]:
    """Agent variables from the resolved TCP keys, each against its ns-default.tcl line."""
    mss = int(tcp["mss"] if isinstance(tcp["mss"], int) else _size(tcp["mss"]))
    rwnd = segments(tcp.get("rwnd"), mss)
    ssthresh = segments(tcp.get("initial_ssthresh"), mss)
    out: dict[str, Any] = {
        "tcpip_base_hdr_size_": _size(tcp["header"]),  # Agent/TCP tcpip_base_hdr_size_ 40
        "windowInit_": int(tcp["init_cwnd"]),  # Agent/TCP windowInit_ 2
        # Agent/TCP window_ 20: the most packets outstanding (no receiver window in ns-2)
        "window_": rwnd if rwnd is not None else 1_000_000,
        "minrto_": _tcl_time(tcp["min_rto"]),  # Agent/TCP minrto_ 0.2
        "maxrto_": _tcl_time(tcp["max_rto"]),  # Agent/TCP maxrto_ 60
        "rtxcur_init_": _tcl_time(tcp["initial_rto"]),  # Agent/TCP rtxcur_init_ 3.0
        "tcpTick_": _tcl_time(tcp["rto_granularity"]),  # Agent/TCP tcpTick_ 0.01
        "ecn_": 1 if tcp["protocol"] == "ecn" else 0,  # Agent/TCP ecn_ 0
    }
    # ssthresh_ 0 (Agent/TCP) makes TcpAgent::reset start ssthresh_ at window_.
    if ssthresh != rwnd:
        out["ssthresh_"] = ssthresh if ssthresh is not None else 1_000_000
    if fulltcp:
        out["segsize_"] = mss  # Agent/TCP/FullTcp segsize_ 536
        out["tcprexmtthresh_"] = int(tcp["dupack_threshold"])  # FullTcp tcprexmtthresh_ 3
        # Agent/TCP/FullTcp segsperack_ 1, interval_ 0.1 (the delayed-ACK timer)
        out["segsperack_"] = 2 if tcp["delayed_ack"] else 1
        out["interval_"] = _tcl_time(tcp["delayed_ack_timeout"])
        # Agent/TCP/FullTcp nodelay_ false: Nagle on, FullTcpAgent::foutput holds a
        # segment shorter than maxseg_ while data is outstanding (tcp/tcp-full.cc).
        out["nodelay_"] = "false" if tcp["nagle"] else "true"
        # Agent/TCP slow_start_restart_ true: FullTcpAgent::foutput restarts from the
        # initial window after an idle period longer than the RTO (idle_restart()).
        out["slow_start_restart_"] = "true" if tcp["idle_restart"] else "false"
    else:
        out["packetSize_"] = mss  # Agent/TCP packetSize_ 1000 (the payload)
        out["numdupacks_"] = int(tcp["dupack_threshold"])  # Agent/TCP numdupacks_ 3
        out["singledup_"] = 1 if tcp["limited_transmit"] else 0  # Agent/TCP singledup_ 1
        # Agent/TCP syn_ true, delay_growth_ true: sequence 0 is a bare header with cwnd
        # 1 (TcpAgent::set_initial_window), the window opens on its ACK (last_ack_ == 0,
        # NewRenoTcpAgent::recv). Without the SYN, delay_growth_ would undo the first
        # ACK's growth, which dcnsim does not: both follow oneway_syn.
        syn = "true" if tcp["oneway_syn"] else "false"
        out["syn_"] = syn
        out["delay_growth_"] = syn
    return out


def _size(value: Any) -> int:
    from dcnsim import _core

    return int(value) if isinstance(value, int) else int(_core.parse_bytes(value))


def check(model: Model, explicit: dict[str, Any]) -> None:
    """Refuse what ns-2 cannot run (naming the key)."""
    if model.multipath:
        raise NotTranslatable(
            "forwarding.policy: ns-2's static routing keeps one path per destination; "
            "a topology with equal-cost paths translates to ns-3 only"
        )
    check_fixed(explicit, profile_values(model.profile), _TRANSLATED)
    _, _, fulltcp = agents(model)
    tcp = model.tcp
    if not tcp["rto_ticks"]:
        raise NotTranslatable(
            "transport.rto_ticks: ns-2 always counts its RTO in ticks of tcpTick_ "
            "(TcpAgent::rtt_update, tcp/tcp.cc)"
        )
    protocols = {f.protocol for f in model.flows} | {
        f.protocol for i in model.incasts for f in i.flows
    }
    for p in protocols - {"newreno", "ecn"}:
        raise NotTranslatable(
            f"transport.protocol: {p!r} is not in stock ns-2.35 (newreno and ecn translate)"
        )
    if fulltcp and not tcp["handshake"]:
        raise NotTranslatable("transport.handshake: FullTcp always opens with a SYN")
    if not fulltcp and tcp["handshake"]:
        raise NotTranslatable(
            "transport.handshake: the one-way agents have no three-way handshake "
            "(their SYN is oneway_syn: syn_, delay_growth_)"
        )
    if not fulltcp and tcp["nagle"]:
        raise NotTranslatable(
            "transport.nagle: the one-way agents send whole packets of packetSize_ "
            "(nodelay_ is FullTcp's)"
        )
    if not fulltcp and tcp["idle_restart"]:
        raise NotTranslatable(
            "transport.idle_restart: the one-way agent's slow_start_restart_ acts from its "
            "timer (TcpAgent::timeout: cwnd 1 with nothing outstanding), not on the next send"
        )
    if fulltcp and tcp["limited_transmit"]:
        raise NotTranslatable(
            "transport.limited_transmit: FullTcp has none (singledup_ is one-way only)"
        )
    for q, key in ((model.switch_queue, "network.queue"), (model.host_queue, "network.nic_queue")):
        if q.aqm is not None and q.unit != "pkt":
            raise NotTranslatable(f"{key}.capacity: ns-2's RED is translated in packets only")
        if q.aqm == "threshold" and protocols - {"ecn"}:
            raise NotTranslatable(
                f"{key}.aqm: ns-2's RED drops what it cannot mark; threshold marking "
                "translates with ECN-capable TCP only"
            )
        if q.aqm is not None and (model.probes or model.streams):
            raise NotTranslatable(f"{key}.aqm: datagrams would be dropped early by ns-2's RED")


def _queue_lines(q: Queue, var: str) -> list[str]:
    # DropTail::enque drops when length + 1 >= limit_ (or bytes + size >= limit_ *
    # mean_pktsize_), so limit_ = capacity + 1 holds `capacity` waiting (queue/drop-tail.cc).
    lines = [f"$q set limit_ {q.capacity + 1}"]
    if q.unit == "B":
        lines += ["$q set queue_in_bytes_ true", "$q set mean_pktsize_ 1"]
    if q.aqm is not None:
        # Queue/RED in packets: thresh_, maxthresh_, linterm_ = 1/max_p, q_weight_;
        # gentle_ false (at maxthresh every packet), setbit_ true (mark ECT, drop the
        # rest), wait_ false (p spread by the count since the last mark,
        # REDQueue::modify_p), mark_p_ 1 so that a high probability still marks.
        lines += [
            "$q set bytes_ false",
            "$q set queue_in_bytes_ false",
            f"$q set thresh_ {q.min}",
            f"$q set maxthresh_ {q.max}",
            f"$q set linterm_ {1.0 / q.max_p!r}",
            f"$q set q_weight_ {q.weight!r}",
            "$q set gentle_ false",
            "$q set setbit_ true",
            "$q set wait_ false",
            "$q set mark_p_ 1.0",
        ]
    return [line.replace("$q", var) for line in lines]


def translate(model: Model, trace: str, results: str) -> str:
    """The Tcl script of ``model``, writing ``trace`` and ``results``."""
    sender, receiver, fulltcp = agents(model)
    nodes = model.hosts + model.switches
    t = [
        f"# ns-2.35 script generated by dcnsim crosscheck (profile {model.profile}).",
        "set ns [new Simulator]",
        f'set tf [open "{trace}" w]',
        "$ns trace-all $tf",
        f'set rf [open "{results}" w]',
    ]
    t += [f"set n({name}) [$ns node]" for name in nodes]
    for link in model.links:
        q = model.queue(link)
        kind = "RED" if q.aqm else "DropTail"
        t.append(
            f"$ns simplex-link $n({link.a}) $n({link.b}) {link.rate_bps} {link.delay_s!r} {kind}"
        )
        t += _queue_lines(q, f"[[$ns link $n({link.a}) $n({link.b})] queue]")
    agent_vars = _agent_vars(model.tcp, fulltcp)
    mss, header = (
        agent_vars.get("segsize_", agent_vars.get("packetSize_")),
        agent_vars["tcpip_base_hdr_size_"],
    )
    # What a one-way connection's sink hands up besides its packets of mss + header:
    # the SYN, a bare header, first; without it (syn_ false) packet 0 is data sent
    # without its header, TcpAgent::output adding headersize() only to the other
    # sequence numbers (tcp/tcp.cc lines 710-774), so 40 B less.
    first = 0 if fulltcp else header if agent_vars["syn_"] == "true" else -header
    t += [
        "Class Application/XcRecv -superclass Application",
        "Application/XcRecv instproc recv {b} { $self instvar cb; if {$cb != {}} { eval $cb $b } }",
        "set senders {}",
    ]

    def pair(flow_id: int, src: int, dst: int, protocol: str) -> None:
        vars_ = {**agent_vars, "ecn_": 1 if protocol == "ecn" else 0, "fid_": flow_id}
        t.append(f"set s({flow_id}) [new {sender}]; set r({flow_id}) [new {receiver}]")
        for var, value in vars_.items():
            # A FullTcp receiver is a full peer; a TCPSink takes only the flow id (its
            # packetSize_ would be its ACKs' size).
            both = fulltcp or var == "fid_"
            t.append(
                f"$s({flow_id}) set {var} {value}"
                + (f"; $r({flow_id}) set {var} {value}" if both else "")
            )
        t.append(f"$ns attach-agent $n({nodes[src]}) $s({flow_id})")
        t.append(f"$ns attach-agent $n({nodes[dst]}) $r({flow_id})")
        t.append(f"$ns connect $s({flow_id}) $r({flow_id})")
        if fulltcp:
            t.append(f"$r({flow_id}) listen")
        t.append(f"lappend senders {flow_id}")

    def send(flow_id: int, size: int) -> str:
        if fulltcp:
            return f"$s({flow_id}) advance-bytes {size}"
        return f"$s({flow_id}) advanceby {math.ceil(size / mss)}"  # one-way: whole packets

    # The run ends when every flow and round is delivered (ns-2 would otherwise run its
    # timers on for ever), or at stop_time.
    # Datagrams count as one more thing to wait for: done 100 ms after the last is sent.
    datagrams = [p.time_s for p in model.probes] + [s.stop_s for s in model.streams]
    flows_total = len(model.flows) + len(model.incasts) + (1 if datagrams else 0)
    t += [
        f"set remaining {flows_total}",
        "proc xc_done {} {",
        "  global remaining; incr remaining -1; if {$remaining == 0} { xc_finish }",
        "}",
        "proc xc_flow_recv {f b} {",
        "  global got need ns rf; incr got($f) $b",
        "  if {$got($f) >= $need($f) && $need($f) > 0} {",
        '    set need($f) 0; puts $rf "end $f [format %.15g [$ns now]]"; xc_done',
        "  }",
        "}",
    ]
    for f in model.flows:
        pair(f.flow_id, f.src, f.dst, f.protocol)
        # What the receiving agent hands its application (Application::recv): FullTcp
        # the payload, TCPSink whole packets with their header, the SYN first.
        need = f.size if fulltcp else math.ceil(f.size / mss) * (mss + header) + first
        t += [
            f"set got({f.flow_id}) 0; set need({f.flow_id}) {need}",
            f"set app({f.flow_id}) [new Application/XcRecv]",
            f"$app({f.flow_id}) set cb {{xc_flow_recv {f.flow_id}}}",
            f"$app({f.flow_id}) attach-agent $r({f.flow_id}); $app({f.flow_id}) start",
            f'$ns at {f.start_s!r} "{send(f.flow_id, f.size)}"',
        ]
    for inc in model.incasts:
        # A round ends when every worker's bytes of it are delivered in order; the next
        # starts at once (docs/scenario.md, traffic.incast). One-way sinks report whole
        # packets with their header and the SYN (header bytes) first, skipped here, or
        # without the SYN a first packet 40 B short (``first``).
        unit = inc.sru if fulltcp else math.ceil(inc.sru / mss) * (mss + header)
        short = -min(first, 0)
        a = inc.app
        t += [
            f"set inc({a},round) 0; set inc({a},start) {inc.start_s!r}; set inc({a},done) 0",
            f"proc xc_round_{a} {{}} {{",
            f"  global ns s inc; set inc({a},start) [format %.15g [$ns now]]; set inc({a},done) 0",
            *[f"  {send(f.flow_id, inc.sru)}" for f in inc.flows],
            "}",
            f"proc xc_recv_{a} {{w b}} {{",
            f"  global ns inc rf; if {{!{int(fulltcp)} && $b == {header} && !$inc($w,syn)}} "
            "{ set inc($w,syn) 1; return }",
            f"  set before [expr $inc($w,got) >= ($inc({a},round) + 1) * {unit} - {short}]",
            "  incr inc($w,got) $b",
            f"  if {{!$before && $inc($w,got) >= ($inc({a},round) + 1) * {unit} - {short}}} {{",
            f"    incr inc({a},done)",
            f"    if {{$inc({a},done) == {len(inc.flows)}}} {{",
            f'      puts $rf "round {a} $inc({a},round) $inc({a},start) [format %.15g [$ns now]]"',
            f"      incr inc({a},round)",
            f"      if {{$inc({a},round) < {inc.rounds}}} {{ xc_round_{a} }} else {{ xc_done }}",
            "    }",
            "  }",
            "}",
        ]
        for f in inc.flows:
            pair(f.flow_id, f.src, f.dst, f.protocol)
            t += [
                f"set inc({f.flow_id},got) 0; set inc({f.flow_id},syn) {int(first <= 0)}",
                f"set app({f.flow_id}) [new Application/XcRecv]",
                f"$app({f.flow_id}) set cb {{xc_recv_{a} {f.flow_id}}}",
                f"$app({f.flow_id}) attach-agent $r({f.flow_id}); $app({f.flow_id}) start",
            ]
        t.append(f'$ns at {inc.start_s!r} "xc_round_{a}"')
    base = 1 + max(
        [f.flow_id for f in model.flows]
        + [f.flow_id for i in model.incasts for f in i.flows]
        + [-1]
    )
    for p in model.probes:
        v = f"u{p.probe_id}"
        t += [
            f"set {v} [new Agent/UDP]; ${v} set packetSize_ {p.size}",
            f"${v} set fid_ {base + p.probe_id}",
            f"$ns attach-agent $n({nodes[p.src]}) ${v}; set k{v} [new Agent/Null]",
            f"$ns attach-agent $n({nodes[p.dst]}) $k{v}; $ns connect ${v} $k{v}",
            f'$ns at {p.time_s!r} "${v} send {p.size}"',
        ]
    sbase = base + len(model.probes)
    for st in model.streams:
        v = f"c{st.stream_id}"
        t += [
            f"set {v}u [new Agent/UDP]; ${v}u set fid_ {sbase + st.stream_id}",
            f"$ns attach-agent $n({nodes[st.src]}) ${v}u; set {v}k [new Agent/Null]",
            f"$ns attach-agent $n({nodes[st.dst]}) ${v}k; $ns connect ${v}u ${v}k",
            f"set {v} [new Application/Traffic/CBR]; ${v} attach-agent ${v}u",
            f"${v} set packetSize_ {st.size}; ${v} set interval_ {st.interval_s!r}",
            f"${v} set random_ 0",
            f'$ns at {st.start_s!r} "${v} start"; $ns at {st.stop_s!r} "${v} stop"',
        ]
    t += [
        "proc xc_finish {} {",
        "  global s senders rf tf",
        '  foreach i $senders { puts $rf "tcp $i [$s($i) set nrexmit_]" }',
        "  close $rf; close $tf; exit 0",
        "}",
    ]
    if model.stop_s is not None:
        t.append(f'$ns at {model.stop_s!r} "xc_finish"')
    if datagrams:
        t.append(f'$ns at {max(datagrams) + 0.1!r} "xc_done"')
    if model.stop_s is None:
        # A flow whose delivery the receiving agent under-reports would keep ns-2
        # waiting for ever: it gives up at the horizon (twice dcnsim's run, plus 1 s).
        t.append(f'$ns at {model.horizon_s!r} "xc_finish"')
    if flows_total == 0 and model.stop_s is None:
        t.append('$ns at 0.0 "xc_finish"')  # nothing to send
    t += ["$ns run", "xc_finish", ""]
    return "\n".join(t)


def run(model: Model, workdir: Path) -> tuple[dict[str, pd.DataFrame], str]:
    """Run ns-2 on ``model`` in ``workdir``; its tables and the script."""
    script = translate(model, "trace.tr", "results.txt")
    (workdir / "crosscheck.tcl").write_text(script)
    proc = subprocess.run(["ns", "crosscheck.tcl"], cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ns-2 failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return read(model, workdir / "trace.tr", workdir / "results.txt"), script


def read(model: Model, trace: Path, results: Path) -> dict[str, pd.DataFrame]:
    """The trace and the results file as dcnsim's tables (flows, probes, rounds, ports)."""
    nodes = model.hosts + model.switches
    fulltcp = agents(model)[2]
    agent_vars = _agent_vars(model.tcp, fulltcp)
    header = agent_vars["tcpip_base_hdr_size_"]
    mss = agent_vars.get("segsize_", agent_vars.get("packetSize_"))
    flow_ids = {f.flow_id: f for f in model.flows} | {
        f.flow_id: f for i in model.incasts for f in i.flows
    }
    base = 1 + max([*flow_ids, -1])
    probes = {base + p.probe_id: p for p in model.probes}
    qlen: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    qmax: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    drops_port: dict[tuple[int, int], int] = defaultdict(int)
    drops_flow: dict[int, int] = defaultdict(int)
    first_arrival: dict[int, dict[int, tuple[float, int]]] = defaultdict(dict)
    sent: dict[int, set[int]] = defaultdict(set)
    rexmit: dict[int, int] = defaultdict(int)
    probe_rx: dict[int, float] = {}
    src_node = {fid: f.src for fid, f in flow_ids.items()}
    dst_node = {fid: f.dst for fid, f in flow_ids.items()}
    pending: tuple[tuple[int, int], str] | None = None  # a '+' not yet known to wait
    with open(trace) as fh:
        for line in fh:
            ev, t, a, b, ptype, size, _flags, fid, _s, _d, seq, uid = line.split()[:12]
            port, size_i, fid_i = (int(a), int(b)), int(size), int(fid)
            if pending is not None:
                pport, puid = pending
                if not (ev == "-" and port == pport and uid == puid):
                    m = qmax[pport]
                    m[0], m[1] = max(m[0], qlen[pport][0]), max(m[1], qlen[pport][1])
                pending = None
            q = qlen[port]
            if ev == "+":
                q[0] += 1
                q[1] += size_i
                pending = (port, uid)
                data = fid_i in flow_ids and size_i > header and ptype == "tcp"
                if data and port[0] == src_node[fid_i]:
                    s = int(seq)
                    if s in sent[fid_i]:
                        rexmit[fid_i] += 1
                    sent[fid_i].add(s)
            elif ev in ("-", "d"):
                q[0] -= 1
                q[1] -= size_i
                if ev == "d":
                    drops_port[port] += 1
                    drops_flow[fid_i] += 1
            elif ev == "r":
                if (
                    fid_i in flow_ids
                    and port[1] == dst_node[fid_i]
                    and size_i > header
                    and ptype == "tcp"
                ):
                    first_arrival[fid_i].setdefault(int(seq), (float(t), size_i - header))
                elif fid_i in probes and port[1] == probes[fid_i].dst:
                    probe_rx.setdefault(fid_i, float(t))
    if pending is not None:
        m = qmax[pending[0]]
        m[0], m[1] = max(m[0], qlen[pending[0]][0]), max(m[1], qlen[pending[0]][1])
    timeouts: dict[int, int] = {}
    ends: dict[int, float] = {}  # exact, from the receiving agent (the trace has 1 us)
    rounds = []
    for line in results.read_text().splitlines():
        parts = line.split()
        if parts[0] == "tcp":
            timeouts[int(parts[1])] = int(float(parts[2]))
        elif parts[0] == "end":
            ends[int(parts[1])] = float(parts[2])
        elif parts[0] == "round":
            app, r, start, end = int(parts[1]), int(parts[2]), float(parts[3]), float(parts[4])
            rounds.append(
                {
                    "app": app,
                    "round": r,
                    "start_s": start,
                    "end_s": end,
                    "round_time_s": end - start,
                }
            )
    flows = []
    for fid, f in sorted(flow_ids.items()):
        # The receiver has every byte once each segment has arrived at least once:
        # the last of those first arrivals (segments are told apart by sequence number).
        arrivals = first_arrival.get(fid, {}).values()
        if fulltcp:
            whole = sum(payload for _, payload in arrivals) >= f.size
        else:  # one-way: sequence numbers count packets (ns-2 sizes the first one apart)
            whole = len(arrivals) >= math.ceil(f.size / mss)
        end = max(time for time, _ in arrivals) if whole else math.nan
        end = ends.get(fid, end)
        flows.append(
            {
                "flow_id": fid,
                "fct_s": end - f.start_s,
                "drops": drops_flow.get(fid, 0),
                "retransmits": rexmit.get(fid, 0),
                "timeouts": timeouts.get(fid, 0),
            }
        )
    probe_rows = [
        {"probe_id": p.probe_id, "latency_s": probe_rx.get(fid, math.nan) - p.time_s}
        for fid, p in probes.items()
    ]
    ports = [
        {
            "port": f"{nodes[a]}->{nodes[b]}",
            "packets_dropped": drops_port.get((a, b), 0),
            "max_queue_packets": qmax[(a, b)][0],
            "max_queue_bytes": qmax[(a, b)][1],
        }
        for a, b in ((nodes.index(link.a), nodes.index(link.b)) for link in model.links)
        if nodes[a] not in model.hosts_set  # switch ports: dcnsim keeps a window in the host
    ]
    return reference_tables(flows, probe_rows, rounds, ports)


def profiles() -> tuple[str, ...]:
    """The ns-2 profiles this dcnsim has (ns2_newreno when defined)."""
    import tomllib

    from dcnsim import _core

    return tuple(p for p in FULLTCP if p in tomllib.loads(_core.profiles_toml()))


def notes(model: Model) -> list[str]:
    """What the translation leaves to ns-2's defaults, for the report."""
    sender, receiver, fulltcp = agents(model)
    out = [f"ns-2 agents: {sender} + {receiver}"]
    if not fulltcp:
        out.append(
            "the one-way agent keeps ns-2's slow_start_restart_ true: a timeout with nothing "
            "outstanding sets cwnd to 1 (TcpAgent::timeout), which dcnsim does not model"
        )
    return out
