"""Network topology (E4 of the seed-systems notes): nodes in racks, racks in domains,
link bandwidths, held as a networkx tree.

The tree has one switch per rack (top of rack), one per domain (aggregation) and a
core; every node hangs from its rack's switch by its NIC, every rack's switch from its
domain's (or from the core, if the rack names no domain), every domain's from the core.
A job spread over a set of nodes sends its traffic over the links of the smallest
subtree that joins them (below their lowest common switch): a ring all-reduce crosses
each of those links once each way (docs/model.md, E4).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import networkx as nx

from instances.errors import InstanceError
from instances.fields import ident, index, items_of, positive

Span = Literal["rack", "domain", "cluster"]
# how far a job's GPUs spread, narrowest first; "node" is the span of a one-node set
SPANS: tuple[str, ...] = ("node", "rack", "domain", "cluster")
LinkId = tuple[str, str]
"""A link, named by its lower end: ("node", id) for a NIC, ("rack", id) or ("domain", id)
for a switch's uplink."""
CORE: LinkId = ("core", "")

MAX_GBPS = 1.0e6  # 1 Pb/s: beyond any real link; keeps sums finite


def gbps(path: str, value: object) -> float:
    """A positive, finite bandwidth (Gb/s) no larger than :data:`MAX_GBPS`."""
    return positive(path, value, upper=MAX_GBPS)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Rack:
    """A rack: its switch's uplink bandwidth and the domain it belongs to (if any)."""

    id: str
    uplink_gbps: float
    domain: str | None = None

    def __post_init__(self) -> None:
        ident("id", self.id)
        object.__setattr__(self, "uplink_gbps", gbps("uplink_gbps", self.uplink_gbps))
        if self.domain is not None:
            ident("domain", self.domain)


@dataclass(frozen=True)
class Domain:
    """A group of racks under one aggregation switch, and that switch's uplink."""

    id: str
    uplink_gbps: float

    def __post_init__(self) -> None:
        ident("id", self.id)
        object.__setattr__(self, "uplink_gbps", gbps("uplink_gbps", self.uplink_gbps))


@dataclass(frozen=True)
class Topology:
    """The network as the instance file states it: every node's NIC bandwidth, the
    racks and the domains. Which rack a node is in is the node's ``rack`` field."""

    nic_gbps: float
    racks: tuple[Rack, ...]
    domains: tuple[Domain, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "nic_gbps", gbps("nic_gbps", self.nic_gbps))
        # as the instance's own lists: "r0" was read letter by letter
        object.__setattr__(self, "racks", items_of("racks", self.racks, Rack))
        object.__setattr__(self, "domains", items_of("domains", self.domains, Domain))
        if not self.racks:
            raise InstanceError("racks", [], "a topology needs at least one rack")
        index("racks", self.racks, "id")
        known = index("domains", self.domains, "id")
        for i, r in enumerate(self.racks):
            if r.domain is not None and r.domain not in known:
                raise InstanceError(
                    f"racks[{i}].domain", r.domain, f"unknown domain (known: {sorted(known)})"
                )


@dataclass(frozen=True)
class Network:
    """The topology joined with the cluster's nodes: the tree, each link's capacity,
    and the queries placement and checking need."""

    topology: Topology
    node_rack: dict[str, str]  # node id -> rack id, in the instance's node order
    # each node's links up to the core (a link is named by its lower end), with the
    # switch each leads to
    _up: dict[str, tuple[tuple[LinkId, LinkId], ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        g = self.graph
        up = {}
        for node in self.node_rack:
            path = nx.shortest_path(g, ("node", node), CORE)
            up[node] = tuple(itertools.pairwise(path))
        object.__setattr__(self, "_up", up)

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The tree, each edge from a vertex ``(kind, id)`` (node, rack, domain) to its
        parent switch, with attribute ``gbps``; the core is ``("core", "")``."""
        t = self.topology
        g = nx.DiGraph()
        g.add_node(CORE)
        for d in t.domains:
            g.add_edge(("domain", d.id), CORE, gbps=d.uplink_gbps)
        for r in t.racks:
            parent = ("domain", r.domain) if r.domain is not None else CORE
            g.add_edge(("rack", r.id), parent, gbps=r.uplink_gbps)
        for node, rack in self.node_rack.items():
            g.add_edge(("node", node), ("rack", rack), gbps=t.nic_gbps)
        return g

    @cached_property
    def capacity(self) -> dict[LinkId, float]:
        """Every link's bandwidth (Gb/s), by :data:`LinkId`."""
        return {a: float(d["gbps"]) for a, _, d in self.graph.edges(data=True)}

    def links(self, node_ids: Iterable[str]) -> tuple[LinkId, ...]:
        """The links a job on these nodes sends its traffic over: those below the nodes'
        lowest common switch (none for one node), in a stable order."""
        nodes = list(dict.fromkeys(node_ids))
        if len(nodes) <= 1:
            return ()
        paths = [self._up[n] for n in nodes]
        common = set.intersection(*({parent for _, parent in p} for p in paths))
        out: dict[LinkId, None] = {}
        for p in paths:
            for lower, parent in p:  # climb until the first switch they all share
                out[lower] = None
                if parent in common:
                    break
        return tuple(out)

    def span(self, node_ids: Sequence[str] | Iterable[str]) -> str:
        """The narrowest of :data:`SPANS` that holds these nodes."""
        nodes = set(node_ids)
        if len(nodes) <= 1:
            return "node"
        racks = {self.node_rack[n] for n in nodes}
        if len(racks) == 1:
            return "rack"
        domains = {self.rack_domain[r] for r in racks}
        if len(domains) == 1 and None not in domains:
            return "domain"
        return "cluster"

    @cached_property
    def rack_domain(self) -> dict[str, str | None]:
        return {r.id: r.domain for r in self.topology.racks}

    def groups(self, span: str) -> list[tuple[str, ...]]:
        """The node sets a job of this span may spread over: each node, each rack, each
        domain (a rack without one is its own), or the whole cluster; nodes in file
        order."""
        return self._groups[span]

    @cached_property
    def _groups(self) -> dict[str, list[tuple[str, ...]]]:
        # every placement of a distributed configuration asks: computed once
        out: dict[str, list[tuple[str, ...]]] = {
            "node": [(n,) for n in self.node_rack],
            "cluster": [tuple(self.node_rack)],
        }
        for span in ("rack", "domain"):
            key: dict[str, list[str]] = {}
            for n, r in self.node_rack.items():
                d = self.rack_domain[r]
                key.setdefault(r if span == "rack" or d is None else f"domain:{d}", []).append(n)
            out[span] = [tuple(v) for v in key.values()]
        return out


def within(span: str, allowed: str) -> bool:
    """Whether a set of nodes of span ``span`` lies within ``allowed``."""
    return SPANS.index(span) <= SPANS.index(allowed)
