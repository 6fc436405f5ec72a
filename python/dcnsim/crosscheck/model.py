"""A scenario as the references see it: the network link by link, the queues, the
TCP settings a profile resolves to, and the traffic as a list.

Both translators (``ns2.py``, ``ns3.py``) read this model, never the scenario, so
what cannot be translated is refused here, once, naming the key
(:class:`NotTranslatable`). The traffic comes from dcnsim's own run of the
scenario: its ``flows`` table is the flow list (listed flows, the flows a workload
drew, the incast connections), so both simulators run the very same flows with the
same ``flow_id``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from typing import Any

from dcnsim import _core
from dcnsim._core import ScenarioError

__all__ = ["Incast", "Link", "Model", "NotTranslatable", "Probe", "Queue", "Stream", "build"]


class NotTranslatable(ScenarioError):
    """A scenario key the reference cannot model; the message names it."""


def _time_s(text: str) -> float:
    return _core.quantity("time", text) / 1e12


def _rate(text: str) -> int:
    return int(_core.quantity("rate", text))


def _capacity(text: str) -> tuple[int, str]:
    n, unit = _core.quantity("capacity", text)
    return int(n), str(unit)


@dataclass(frozen=True)
class Link:
    """One direction of a link: the egress port ``a->b``."""

    a: str
    b: str
    rate_bps: int
    delay_s: float

    @property
    def port(self) -> str:
        return f"{self.a}->{self.b}"


@dataclass(frozen=True)
class Queue:
    """A drop-tail queue, possibly with an AQM: ``capacity`` waiting packets or bytes
    (the packet on the wire not counted, as in dcnsim)."""

    capacity: int
    unit: str  # "pkt" or "B"
    aqm: str | None = None  # None, "threshold" or "red"
    min: int = 0  # threshold's k, RED's min (in unit)
    max: int = 0
    max_p: float = 0.1
    weight: float = 0.002


@dataclass(frozen=True)
class Flow:
    flow_id: int
    src: int
    dst: int
    size: int
    start_s: float
    protocol: str


@dataclass(frozen=True)
class Incast:
    """A persistent incast: ``flows[i]`` is worker ``i``'s connection."""

    app: int
    aggregator: int
    flows: tuple[Flow, ...]
    sru: int
    rounds: int
    start_s: float


@dataclass(frozen=True)
class Probe:
    probe_id: int
    src: int
    dst: int
    size: int
    time_s: float


@dataclass(frozen=True)
class Stream:
    """A constant-rate datagram stream."""

    stream_id: int
    src: int
    dst: int
    size: int
    interval_s: float
    start_s: float
    stop_s: float


@dataclass
class Model:
    hosts: list[str]
    switches: list[str]
    links: list[Link]
    multipath: bool
    policy: str
    host_queue: Queue
    switch_queue: Queue
    tcp: dict[str, Any]  # the resolved [transport] keys
    profile: str
    flows: list[Flow] = field(default_factory=list)
    incasts: list[Incast] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    streams: list[Stream] = field(default_factory=list)
    stop_s: float | None = None
    #: The scenario's ``seed``: ns-3's run number (``RngRun``), so the reference's own
    #: random draws (spraying, RED) change with it as dcnsim's do.
    seed: int = 1
    #: Without stop_time, when the reference gives up: twice dcnsim's last event plus 1 s.
    horizon_s: float = 1.0

    def queue(self, link: Link) -> Queue:
        return self.host_queue if link.a in self.hosts_set else self.switch_queue

    @property
    def hosts_set(self) -> set[str]:
        return set(self.hosts)


# --- topology ------------------------------------------------------------------------

_DEFAULT_LINK = {"rate": "10Gbps", "delay": "1us"}


def _link_table(topo: dict[str, Any], key: str, fallback: dict[str, str]) -> dict[str, str]:
    table = topo.get(key)
    return {**fallback, **(table or {})}


def _topology(topo: dict[str, Any]) -> tuple[list[str], list[str], list[tuple[str, str, dict]]]:
    """Hosts, switches and links ``(a, b, {rate, delay})`` of a built-in topology,
    named as dcnsim names its nodes (docs/scenario.md, Topology)."""
    kind = topo["kind"]
    base = _link_table(topo, "link", _DEFAULT_LINK)
    links: list[tuple[str, str, dict]] = []
    if kind == "star":
        n = topo["hosts"]
        rates = topo.get("host_rates")
        hosts = [f"host{i}" for i in range(n)]
        for i, h in enumerate(hosts):
            table = dict(base) if rates is None else {**base, "rate": rates[i]}
            links.append((h, "sw0", table))
        return hosts, ["sw0"], links
    if kind == "tree3":
        cores, aggs = topo.get("cores", 1), topo.get("aggs", 2)
        tors, per = topo.get("tors", 8), topo.get("hosts_per_tor", 16)
        host_l = _link_table(topo, "host_link", base)
        tor_l = _link_table(topo, "tor_agg_link", base)
        core_l = _link_table(topo, "agg_core_link", base)
        hosts = [f"host{h}" for h in range(tors * per)]
        switches = [f"tor{t}" for t in range(tors)] + [f"agg{a}" for a in range(aggs)]
        switches += [f"core{c}" for c in range(cores)]
        links += [(f"host{h}", f"tor{h // per}", host_l) for h in range(tors * per)]
        links += [(f"tor{t}", f"agg{t // (tors // aggs)}", tor_l) for t in range(tors)]
        links += [(f"agg{a}", f"core{c}", core_l) for a in range(aggs) for c in range(cores)]
        return hosts, switches, links
    if kind == "fat_tree":
        k = topo["k"]
        half = k // 2
        hosts = [f"host{h}" for h in range(k**3 // 4)]
        switches = [f"edge{e}" for e in range(k * half)] + [f"agg{a}" for a in range(k * half)]
        switches += [f"core{c}" for c in range(half * half)]
        links += [(f"host{h}", f"edge{h // half}", base) for h in range(len(hosts))]
        for p in range(k):
            for e in range(p * half, p * half + half):
                links += [(f"edge{e}", f"agg{a}", base) for a in range(p * half, p * half + half)]
            for j in range(half):
                agg = f"agg{p * half + j}"
                links += [(agg, f"core{c}", base) for c in range(j * half, j * half + half)]
        return hosts, switches, links
    if kind == "leaf_spine":
        leaves, spines = topo.get("leaves", 6), topo.get("spines", 6)
        per = topo.get("hosts_per_leaf", 32)
        host_l = _link_table(topo, "host_link", base)
        fabric_l = _link_table(topo, "fabric_link", base)
        hosts = [f"host{h}" for h in range(leaves * per)]
        switches = [f"leaf{i}" for i in range(leaves)] + [f"spine{j}" for j in range(spines)]
        links += [(f"host{h}", f"leaf{h // per}", host_l) for h in range(len(hosts))]
        links += [(f"leaf{i}", f"spine{j}", fabric_l) for i in range(leaves) for j in range(spines)]
        return hosts, switches, links
    if kind == "edges":
        hosts = [n["name"] for n in topo["nodes"] if n.get("kind") == "host"]
        switches = [n["name"] for n in topo["nodes"] if n.get("kind") != "host"]
        for entry in topo["links"]:
            table = {**base, **{k: v for k, v in entry.items() if k in ("rate", "delay")}}
            links.append((entry["a"], entry["b"], table))
        return hosts, switches, links
    raise NotTranslatable(f"topology.kind: {kind!r} is not translated")


def _multipath(hosts: list[str], links: list[tuple[str, str, dict]]) -> bool:
    """Whether some pair of hosts has more than one shortest path (by hop count)."""
    adj: dict[str, list[str]] = {}
    for a, b, _ in links:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    for src in hosts:
        dist, paths, frontier = {src: 0}, {src: 1}, [src]
        while frontier:
            nxt: list[str] = []
            for u in frontier:
                for v in adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        paths[v] = 0
                        nxt.append(v)
                    if dist[v] == dist[u] + 1:
                        paths[v] += paths[u]
            frontier = nxt
        if any(paths[h] > 1 for h in hosts):
            return True
    return False


# --- queues ----------------------------------------------------------------------------


def _queue(table: dict[str, Any] | None, key: str) -> Queue:
    table = table or {"capacity": "1000pkt"}
    if table.get("kind", "droptail") != "droptail":
        raise NotTranslatable(f"{key}.kind: only droptail is translated, got {table['kind']!r}")
    for extra in set(table) - {"kind", "capacity", "aqm"}:
        raise NotTranslatable(f"{key}.{extra}: not translated")
    capacity, unit = _capacity(table["capacity"])
    aqm = table.get("aqm")
    if aqm is None:
        return Queue(capacity, unit)

    def in_unit(name: str) -> int:
        n, u = _capacity(aqm[name])
        if u != unit:
            raise NotTranslatable(f"{key}.aqm.{name}: must be in the unit of the capacity ({unit})")
        return n

    if aqm["kind"] == "threshold":
        k = in_unit("k")
        return Queue(capacity, unit, "threshold", k, k, 1.0, 1.0)
    if aqm["kind"] == "red":
        return Queue(
            capacity,
            unit,
            "red",
            in_unit("min"),
            in_unit("max"),
            float(aqm.get("max_p", 0.1)),
            float(aqm.get("weight", 0.002)),
        )
    raise NotTranslatable(f"{key}.aqm.kind: {aqm['kind']!r} is not translated (threshold, red)")


# --- transport ---------------------------------------------------------------------------

#: dcnsim's defaults of the keys a profile may leave out (docs/scenario.md, Transport).
_TCP_DEFAULTS: dict[str, Any] = {
    "protocol": "newreno",
    "handshake": True,
    "sack": False,
    "sack_blocks": 3,
    "limited_transmit": True,
    "delayed_ack": False,
    "quick_acks": 0,
    "recovery": "classic",
    "sack_pipe": "rfc6675",
    "sack_holes": "rfc6675",
    "slow_start": "bytes",
    "ssthresh_from": "flight",
    "rto_keeps_ssthresh": False,
    "rack": False,
    "undo": False,
    "dsack": False,
    "dsack_undo": False,
    "pacing": False,
    "initial_ssthresh": None,
    "rwnd": None,
    "nagle": False,
    "oneway_syn": False,
    "idle_restart": False,
    "rto_ticks": False,
}


def profile_values(name: str) -> dict[str, Any]:
    """The ``[transport]`` keys profile ``name`` sets, its ``base`` chain followed."""
    table = tomllib.loads(_core.profiles_toml())
    if name not in table:
        raise NotTranslatable(f"transport.profile: unknown profile {name!r}")
    entry = dict(table[name])
    base = entry.pop("base", None)
    return {**(profile_values(base) if base else {}), **entry}


def resolve_transport(transport: dict[str, Any], profiles: tuple[str, ...], reference: str):
    """The resolved TCP keys, the keys the scenario sets beside its profile, and
    the profile. Only the references' own profiles translate: a reference runs its
    own TCP, so the scenario must start from it."""
    profile = transport.get("profile", "dcnsim")
    if profile not in profiles:
        raise NotTranslatable(
            f"transport.profile: {reference} runs its own TCP; use one of its profiles "
            f"({', '.join(profiles)}), got {profile!r}"
        )
    explicit = {k: v for k, v in transport.items() if k != "profile"}
    values = {**_TCP_DEFAULTS, **profile_values(profile), **explicit}
    return values, explicit, profile


def check_fixed(explicit: dict[str, Any], profile: dict[str, Any], translated: set[str]) -> None:
    """Refuse a key set beside the profile that the reference cannot change.

    ``host_queue_limit`` passes in every reference: neither has TCP Small Queues, the
    window waits in the NIC's queue instead of the host, and the departures are the
    same unless that queue overflows (docs/crosscheck.md, what differs by construction).
    """
    for key, value in explicit.items():
        if key in translated or key == "host_queue_limit" or isinstance(value, dict):
            continue
        if profile.get(key, _TCP_DEFAULTS.get(key)) != value:
            raise NotTranslatable(f"transport.{key}: not translated (the reference's is fixed)")


def segments(value: str | None, mss: int) -> int | None:
    """A window such as ``"20pkt"`` or ``"65535B"`` in whole segments (bytes rounded up)."""
    if value is None:
        return None
    n, unit = _capacity(value)
    return n if unit == "pkt" else math.ceil(n / mss)


# --- the model -----------------------------------------------------------------------------

_SUPPORTED_TRAFFIC = {"flows", "workloads", "incast", "probes", "streams"}


def build(scenario: dict[str, Any], flows_table: Any, reference: str) -> Model:
    """The model of ``scenario`` for ``reference``; ``flows_table`` is dcnsim's
    ``flows`` table of its run (the flow list)."""
    for key in ("agents",):
        if scenario.get(key):
            raise NotTranslatable(f"{key}: switch agents are not translated")
    network = scenario.get("network", {})
    for key in ("outages", "stages"):
        if network.get(key):
            raise NotTranslatable(f"network.{key}: not translated")
    if isinstance(network.get("host_delay"), dict):
        raise NotTranslatable("network.host_delay: a host-stack table is not translated")
    hosts, switches, raw = _topology(scenario["topology"])
    host_delay = _time_s(network.get("host_delay", "0us"))
    switch_latency = _time_s(network.get("switch_latency", "0us"))
    host_set = set(hosts)
    links: list[Link] = []
    for a, b, table in raw:
        rate, delay = _rate(table["rate"]), _time_s(table["delay"])
        for x, y in ((a, b), (b, a)):
            # Host and switch delays folded into the link that reaches the node (and the
            # sending host's into its NIC's link): the same latency on every path.
            extra = (host_delay if x in host_set else 0.0) + (
                host_delay if y in host_set else switch_latency
            )
            links.append(Link(x, y, rate, delay + extra))
    policy = scenario.get("forwarding", {}).get("policy", "ecmp")
    model = Model(
        hosts=hosts,
        switches=switches,
        links=links,
        multipath=_multipath(hosts, raw),
        policy=policy,
        host_queue=_queue(network.get("nic_queue"), "network.nic_queue"),
        switch_queue=_queue(network.get("queue"), "network.queue"),
        tcp={},
        profile="",
    )
    stop = scenario.get("stop_time")
    model.stop_s = None if stop is None else _time_s(stop)
    model.seed = int(scenario.get("seed", 1))
    traffic = scenario.get("traffic", {})
    for key in set(traffic) - _SUPPORTED_TRAFFIC:
        raise NotTranslatable(f"traffic.{key}: not translated")
    _add_traffic(model, traffic, flows_table)
    return model


def _add_traffic(model: Model, traffic: dict[str, Any], flows: Any) -> None:
    tcp = flows[flows["kind"] == "tcp"]
    by_app: dict[int, list[Flow]] = {}
    for row in tcp.itertuples():
        flow = Flow(
            int(row.flow_id),
            int(row.src),
            int(row.dst),
            int(row.size_bytes),
            row.start_s,
            row.protocol,
        )
        if row.origin == "incast":
            by_app.setdefault(int(row.app), []).append(flow)
        else:
            model.flows.append(flow)
    for i, entry in enumerate(traffic.get("incast", [])):
        where = f"traffic.incast[{i}]"
        if not entry.get("persistent", True):
            raise NotTranslatable(f"{where}.persistent: only persistent connections are translated")
        if _time_s(entry.get("spread", "0us")) > 0:
            raise NotTranslatable(f"{where}.spread: random start times are not translated")
        workers = by_app.get(i, [])
        rounds = int(entry.get("rounds", 1))
        sru = workers[0].size // rounds if workers else 0
        model.incasts.append(
            Incast(
                i,
                int(entry["aggregator"]),
                tuple(workers),
                sru,
                rounds,
                _time_s(entry.get("start", "0us")),
            )
        )
    pid = 0
    for entry in traffic.get("probes", []):
        size = _core.parse_bytes(entry.get("size", "1500B"))
        t0 = _time_s(entry.get("time", "0us"))
        src = int(entry["src"])
        if entry["dst"] == "all":
            gap = _time_s(entry["interval"])
            dsts = [d for d in range(len(model.hosts)) if d != src]
            for j, d in enumerate(dsts):
                model.probes.append(Probe(pid, src, d, size, t0 + j * gap))
                pid += 1
        else:
            model.probes.append(Probe(pid, src, int(entry["dst"]), size, t0))
            pid += 1
    for i, entry in enumerate(traffic.get("streams", [])):
        where = f"traffic.streams[{i}]"
        if entry.get("pattern", "poisson") != "constant":
            raise NotTranslatable(
                f"{where}.pattern: only constant streams translate (random gaps differ)"
            )
        if not isinstance(entry["src"], int) or not isinstance(entry["dst"], int):
            raise NotTranslatable(f"{where}.src/dst: only one source and one destination translate")
        size = _core.parse_bytes(entry.get("size", "1500B"))
        src_rate = next(x.rate_bps for x in model.links if x.a == model.hosts[entry["src"]])
        rate = _rate(entry["rate"]) if "rate" in entry else float(entry["load"]) * src_rate
        stop = entry.get("stop")
        stop_s = _time_s(stop) if stop is not None else model.stop_s
        model.streams.append(
            Stream(
                i,
                entry["src"],
                entry["dst"],
                size,
                size * 8 / rate,
                _time_s(entry.get("start", "0us")),
                stop_s,
            )
        )
