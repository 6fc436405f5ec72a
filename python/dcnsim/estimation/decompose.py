"""The decomposition: what cannot be decomposed (refused by name), the drawn flows on
each link, and the small packet-level scenario of a link.

Parsimon (Zhao et al., NSDI 2023, §4.1; ``parsimon-core/src/network.rs``,
``link_sim_desc``) turns each directed link with traffic into a topology of its own:
every source host of a flow crossing the link gets an access link into the link's
upstream node, at the rate of the source's first hop (less the rate its ACKs take)
with the propagation delay of the path up to the link; the link itself (less the rate
the reverse direction's ACKs take); and a link from its downstream node to every
destination host, ten times faster than the slowest link of the rest of the path
(``path.bandwidths().min() * 10``), with its delay. The flows keep their sizes and
start times. So traffic from upstream arrives paced by the sources' first hops, not by
the upstream links it really crossed (the decomposition's main assumption, §4.2), and
the flows' round trips are those of their whole paths.

dcnsim builds that topology as a scenario (``topology.kind = "edges"``, the flows as
``[[traffic.flows]]``, the scenario's own ``network`` and ``transport``) and runs it
with its own core. Three details differ from Parsimon and are dcnsim's choice, made
before any run:

- the delay of an access link (and of a destination link) also holds the
  store-and-forward time of one full-sized packet at each upstream (downstream) hop
  the link stands for, so that the link-level path's unloaded latency is the real
  path's; a source that is the link's own upstream node (the link is its NIC) keeps
  the link itself as its access link;
- a link's delay for a flow is its FCT in the link-level run less its FCT *alone* on
  its path (``solo_scenario``), not less its ideal FCT: dcnsim's TCP starts in slow
  start (Parsimon's back ends start a flow at line rate), and a delay taken against
  the ideal would count the flow's own slow start once per link of its path;
- so the links keep their full rates: Parsimon lowers them by the rate of the reverse
  direction's ACKs, which here would slow every flow alone too and be counted as delay
  on every link (the ACKs' share, 40 B per segment of the reverse traffic, about 1.4 %
  of a link at 50 % load, is left out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dcnsim.scenario import Scenario, ScenarioError

__all__ = [
    "Drawn",
    "LinkFlows",
    "draw",
    "link_flows",
    "link_scenario",
    "path_chains",
    "refuse",
    "solo_scenario",
]

#: Forwarding policies that keep a flow on one path (what the decomposition routes).
ONE_PATH = ("ecmp", "single")
#: Protocols whose feedback is carried along the whole path, not per link.
MULTI_HOP_FEEDBACK = {
    "botcp": "in-band multi-hop feedback (BOTCP's stamp of the path's busiest queue "
    "rides every hop; a per-link simulation sees one)",
}
#: The transport's default header (``transport.header``: IPv4 + TCP, no options).
HEADER_BYTES = 40
#: Parsimon's destination links: this many times the slowest rest of the path.
FAT_LINK = 10.0


def refuse(scenario: Scenario) -> None:
    """Raise ``ScenarioError`` naming what the decomposition cannot carry: state that
    spans links (PAUSE/PFC back-pressure and every other switch agent, outages, port
    stages), packet spraying, multi-hop in-band feedback, per-port traces."""
    if scenario.get("agents"):
        kinds = sorted({a.get("kind", "?") for a in scenario.get("agents")})
        raise ScenarioError(
            f"agents: switch agents ({', '.join(kinds)}) act across links or signal "
            "senders (PAUSE/PFC back-pressure, Packet Slicing's MSS advice): the "
            "decomposition simulates each link alone and cannot carry them"
        )
    policy = scenario.get("forwarding.policy", "ecmp")
    if policy not in ONE_PATH:
        raise ScenarioError(
            f"forwarding.policy: '{policy}' sends one flow's packets over several paths: "
            f"the decomposition routes each flow on one path ({' or '.join(ONE_PATH)})"
        )
    for key, why in (
        ("network.outages", "a link that fails mid-run reroutes flows across links"),
        ("network.stages", "port stages are not modelled by the link-level scenarios"),
        ("trace", "queue and flow traces are packet-level outputs (use dcnsim run)"),
    ):
        if scenario.get(key):
            raise ScenarioError(f"{key}: {why}")
    protocols = {("transport.protocol", scenario.get("transport.protocol", "newreno"))}
    traffic = scenario.get("traffic") or {}
    for key in ("flows", "workloads"):
        for i, entry in enumerate(traffic.get(key) or []):
            if "protocol" in entry:
                protocols.add((f"traffic.{key}[{i}].protocol", entry["protocol"]))
    for where, protocol in sorted(protocols):
        if protocol in MULTI_HOP_FEEDBACK:
            raise ScenarioError(f"{where}: '{protocol}': {MULTI_HOP_FEEDBACK[protocol]}")


@dataclass(frozen=True)
class Drawn:
    """The drawn flows (a dict of arrays, ``dcnsim._core.drawn``'s ``flows``), the
    flattened paths (``port`` per hop, ``flow`` and ``pos``, its place in the path),
    the ports, the span the flows arrive over (for loads), and sums made once from them
    (``cache``)."""

    flows: dict[str, np.ndarray]
    port: np.ndarray
    flow: np.ndarray
    pos: np.ndarray
    ports: dict[str, np.ndarray]
    span_s: float
    cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


def draw(scenario: Scenario) -> Drawn:
    """The scenario's flows and paths, drawn by the core (no packet simulated)."""
    from dcnsim import _core

    d = _core.drawn(scenario.to_json())
    flows = {k: np.asarray(v) for k, v in d["flows"].items()}
    ports = {k: np.asarray(v) for k, v in d["ports"].items()}
    port = np.asarray(d["hops"]["port"])
    hops = flows["hops"]
    flow = np.repeat(np.arange(len(hops)), hops)
    pos = np.arange(len(port)) - np.repeat(flows["first_hop"], hops)
    stop = scenario.describe()["stop_time_s"]
    starts = flows["start_s"]
    span = stop if stop is not None else (float(starts.max()) if len(starts) else 0.0)
    return Drawn(flows, port, flow, pos, ports, max(span, 1e-9))


@dataclass(frozen=True)
class LinkFlows:
    """The flows on each port: ``order`` sorts the hops by port, ``starts[i]`` is port
    ``ports[i]``'s first hop in that order (``starts[-1]``: the end)."""

    ports: np.ndarray
    starts: np.ndarray
    order: np.ndarray

    def hops_of(self, i: int) -> np.ndarray:
        """Indices (into the flattened hops) of the flows crossing ``ports[i]``."""
        return self.order[self.starts[i] : self.starts[i + 1]]


def link_flows(d: Drawn) -> LinkFlows:
    order = np.argsort(d.port, kind="stable")
    sorted_ports = d.port[order]
    ports, starts = np.unique(sorted_ports, return_index=True)
    return LinkFlows(ports, np.append(starts, len(order)), order)


#: A path as a chain of links from source host to destination host: (rate in bit/s,
#: delay in ps) per link; the nodes between are switches.
Chain = tuple[tuple[int, int], ...]


def link_scenario(
    scenario: Mapping[str, Any],
    d: Drawn,
    port: int,
    hops: np.ndarray,
    mss_wire: int,
    pace_bps: np.ndarray | None = None,
) -> tuple[dict[str, Any], list[Chain]]:
    """The link-level scenario of ``port`` for the flows of ``hops`` (indices into the
    flattened hops; see the module's doc), and each flow's path in it (without pacing).

    ``pace_bps`` (one per flow, NaN: not paced) is a paced pass's (docs/estimate.md,
    "Bottleneck pacing"): a flow with a rate arrives from a host of its own, ``p{j}``,
    over an access link of that rate (at most its source's) with its own upstream delay,
    instead of over its source's. A link that is a NIC paces nothing."""
    P = d.ports
    f = d.flow[hops]
    pos = d.pos[hops]
    first = d.flows["first_hop"][f]
    end = first + d.flows["hops"][f]
    rate = P["rate_bps"].astype(float)
    cum_arrive, cum_full = _path_sums(d, mss_wire)
    at = first + pos  # this hop's index in the flattened hops
    up = (
        cum_arrive[at]
        - cum_arrive[first]
        + np.where(pos > 1, cum_full[at] - cum_full[first + 1], 0)
    )
    down = cum_arrive[end] - cum_arrive[at + 1]
    down = down + np.where(end - at > 2, cum_full[end] - cum_full[np.minimum(at + 2, end)], 0)
    src, dst = d.flows["src"][f], d.flows["dst"][f]
    nic, last = bool(P["node_is_host"][port]), bool(P["peer_is_host"][port])
    node_a = f"s{int(src[0])}" if nic else "A"
    node_b = f"d{int(dst[0])}" if last else "B"
    sources, dests = np.unique(src), np.unique(dst)
    paced = np.zeros(len(f), bool) if pace_bps is None or nic else np.isfinite(pace_bps)
    hosts = [f"s{h}" for h in sources] + [f"p{j}" for j in np.flatnonzero(paced)]
    hosts += [f"d{h}" for h in dests]
    host_index = {name: i for i, name in enumerate(hosts)}
    nodes = [{"name": n, "kind": "host"} for n in hosts]
    nodes += [{"name": n, "kind": "switch"} for n in ("A", "B") if n in (node_a, node_b)]
    link = (_bps(rate[port]), _ps(P["delay_s"][port]))
    links = [_link(node_a, node_b, link)]
    access: dict[int, Chain] = {int(h): () for h in sources}
    if not nic:
        first_port = d.port[first]
        latency = _latency(d)
        for h in sources:
            mine = src == h
            # A's switch latency is the link-level network's own.
            delay = max(0.0, float(up[mine].mean()) - latency)
            access[int(h)] = ((_bps(rate[int(first_port[mine][0])]), _ps(delay)),)
            links.append(_link(f"s{h}", "A", access[int(h)][0]))
        for j in np.flatnonzero(paced):
            nic_bps, delay_ps = access[int(src[j])][0]
            links.append(_link(f"p{j}", "A", (_bps(min(pace_bps[j], nic_bps)), delay_ps)))
    dest: dict[int, Chain] = {int(h): () for h in dests}
    if not last:
        for h in dests:
            mine = dst == h
            slowest = rate[d.port[int(at[mine][0]) + 1 : int(end[mine][0])]].min()
            dest[int(h)] = ((_bps(FAT_LINK * slowest), _ps(float(down[mine].mean()))),)
            links.append(_link("B", f"d{h}", dest[int(h)][0]))
    flows = [
        {
            "src": host_index[f"p{j}" if paced[j] else f"s{s}"],
            "dst": host_index[f"d{t}"],
            "size": f"{int(n)}B",
            "start": f"{_ps(st)}ps",
            **({"class": int(c)} if c else {}),
            **({"protocol": p} if p else {}),
        }
        for j, (s, t, n, st, c, p) in enumerate(
            zip(
                src,
                dst,
                d.flows["size_bytes"][f],
                d.flows["start_s"][f],
                d.flows["class"][f],
                d.flows["protocol"][f],
                strict=True,
            )
        )
    ]
    out: dict[str, Any] = {
        "name": f"link {P['node_name'][port]}->{P['peer_name'][port]}",
        "seed": scenario.get("seed", 1),
        "topology": {"kind": "edges", "nodes": nodes, "links": links},
        "traffic": {"flows": flows},
    }
    for key in ("stop_time", "network", "transport"):
        if key in scenario:
            out[key] = scenario[key]
    chains = [access[int(s)] + (link,) + dest[int(t)] for s, t in zip(src, dst, strict=True)]
    return out, chains


def _path_sums(d: Drawn, mss_wire: int) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums over the flattened hops of each hop's arrival delay (link delay and
    switch latency) and of a full packet's serialization at it (made once per drawn
    flows and packet size: every link-level scenario of an estimate reads them)."""
    key = ("path_sums", mss_wire)
    if key not in d.cache:
        full = mss_wire * 8.0 / d.ports["rate_bps"].astype(float)
        d.cache[key] = (
            np.concatenate([[0.0], np.cumsum(d.ports["arrive_s"][d.port])]),
            np.concatenate([[0.0], np.cumsum(full[d.port])]),
        )
    return d.cache[key]


def _link(a: str, b: str, hop: tuple[int, int]) -> dict[str, Any]:
    return {"a": a, "b": b, "rate": f"{hop[0]}bps", "delay": f"{hop[1]}ps"}


def _latency(d: Drawn) -> float:
    """The switch latency: what a port towards a switch adds to its link's delay."""
    towards_switch = d.ports["peer_is_host"] == 0
    extra = d.ports["arrive_s"][towards_switch] - d.ports["delay_s"][towards_switch]
    return float(extra[0]) if len(extra) else 0.0


def _bps(bps: float) -> int:
    return max(1, round(float(bps)))


def _ps(seconds: float) -> int:
    return max(0, round(float(seconds) * 1e12))


def path_chains(d: Drawn) -> tuple[np.ndarray, list[Chain]]:
    """Each flow's path as a chain of links, by index into the distinct chains. Paths
    are keyed by a sum over their hops of the hop's kind (rate, delay) times a random
    64-bit number per position."""
    P = d.ports
    kinds = np.stack([P["rate_bps"], np.round(P["delay_s"] * 1e12).astype(np.int64)])
    _, kind = np.unique(kinds, axis=1, return_inverse=True)
    width = int(d.flows["hops"].max())
    spread = np.random.default_rng(47).integers(1, 2**63, size=width, dtype=np.uint64)
    with np.errstate(over="ignore"):
        terms = (kind.ravel()[d.port].astype(np.uint64) + np.uint64(1)) * spread[d.pos]
        key = np.add.reduceat(terms, d.flows["first_hop"])
    _, one, cls = np.unique(key, return_index=True, return_inverse=True)
    chains = []
    for flow in one:
        start = d.flows["first_hop"][flow]
        path = d.port[start : start + d.flows["hops"][flow]]
        chains.append(tuple((_bps(P["rate_bps"][p]), _ps(P["delay_s"][p])) for p in path))
    return cls.ravel(), chains


def solo_sizes(sizes: np.ndarray) -> np.ndarray:
    """The flow sizes whose FCT alone is simulated: every size when few, else 96
    log-spaced sizes from the least to the largest (interpolated between)."""
    distinct = np.unique(sizes)
    if len(distinct) <= 96:
        return distinct
    return np.unique(np.round(np.geomspace(distinct[0], distinct[-1], 96))).astype(np.int64)


def solo_scenario(
    scenario: Mapping[str, Any], chain: Chain, sizes: np.ndarray, mss_wire: int
) -> dict[str, Any]:
    """Flows of ``sizes``, one after the other and each alone, on a chain of links:
    each size's FCT alone on that path, as the fabric's ``network`` and ``transport``
    make it."""
    names = ["src", *(f"sw{i}" for i in range(1, len(chain))), "dst"]
    nodes = [{"name": "src", "kind": "host"}, {"name": "dst", "kind": "host"}]
    nodes += [{"name": n, "kind": "switch"} for n in names[1:-1]]
    links = [_link(a, b, hop) for a, b, hop in zip(names, names[1:], chain, strict=False)]
    slowest = min(rate for rate, _ in chain)
    latency = sum(delay for _, delay in chain) * 1e-12
    flows, start = [], 0.0
    for n in sizes:
        flows.append({"src": 0, "dst": 1, "size": f"{int(n)}B", "start": f"{_ps(start)}ps"})
        wire = (int(n) + mss_wire) * 8.0 / slowest
        start += 4 * wire + 100 * latency + 1e-3  # the previous one is surely done
    out: dict[str, Any] = {
        "name": f"alone on {len(chain)} links",
        "seed": scenario.get("seed", 1),
        "topology": {"kind": "edges", "nodes": nodes, "links": links},
        "traffic": {"flows": flows},
    }
    for key in ("network", "transport"):
        if key in scenario:
            out[key] = scenario[key]
    return out
