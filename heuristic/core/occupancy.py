"""Which GPUs (and, where nodes state them, CPU cores and DRAM, and where the instance
has a topology, link bandwidth) of the cluster are in use, and best-fit placement of a
configuration.

Nodes are bucketed by GPU type and number of free GPUs so that a best-fit search costs
O(max GPUs per node), not O(nodes): the STS benchmarks run 16,000 nodes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from heuristic.core.placement import consolidated
from heuristic.core.power import PowerStates
from instances import Config, GpuRef, Instance, Job, LinkId
from instances.topology import within


@dataclass(frozen=True)
class Allocation:
    """A configuration and the GPUs it runs on (see :class:`instances.Segment`)."""

    config: Config
    gpus: tuple[GpuRef, ...]


def _nodes_of(alloc: Allocation) -> tuple[str, ...]:
    """The allocation's nodes in its own order. Not a set: the order in which nodes are
    taken and given back orders the best-fit buckets, and a set of strings iterates in
    an order that changes with each process's hash seed (same seed, same plan)."""
    return tuple(dict.fromkeys(n for n, _ in alloc.gpus))


class Occupancy:
    """Mutable GPU usage: free GPUs per node, shared GPUs and their tenants, owners."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        # frozen, replaced on each change: a copy (STS copies the occupancy a few times per
        # decision, ~500 nodes on the Philly week) then shares the unchanged nodes' sets
        self.free: dict[str, frozenset[int]] = {
            n.id: frozenset(range(n.num_gpus)) for n in instance.nodes
        }
        # bucket[gpu_type][k] = nodes of that type with exactly k free GPUs (ordered dict as
        # an ordered set, so that choices are deterministic)
        self._bucket: dict[str, dict[int, dict[str, None]]] = {}
        for n in instance.nodes:
            self._bucket.setdefault(n.gpu_type, {}).setdefault(n.num_gpus, {})[n.id] = None
        self.shared: dict[GpuRef, dict[str, float]] = {}  # shared GPU -> {job: memory}
        # shared GPUs with room for another tenant, by GPU type (an ordered set): a
        # shared placement scans these, not every shared GPU of the cluster
        self._open: dict[str, dict[GpuRef, None]] = {}
        self.owner: dict[str, Allocation] = {}
        # E3: CPU cores and DRAM left on the nodes that state them (others: unlimited)
        self.cpus_free: dict[str, int] = {
            n.id: n.cpu_cores for n in instance.nodes if n.cpu_cores is not None
        }
        self.dram_free: dict[str, float] = {
            n.id: n.dram_gb for n in instance.nodes if n.dram_gb is not None
        }
        # E4: bandwidth left on every link of the topology (none without one)
        net = instance.network
        self.link_free: dict[LinkId, float] = dict(net.capacity) if net is not None else {}
        # where empty nodes are powered off, the nodes' states as a policy that sees
        # them set them (heuristic/core/power.py): best fit then prefers, among equally
        # fitting nodes, one already on (None: blind, every choice as always on)
        self.power: PowerStates | None = None

    def copy(self) -> Occupancy:
        new = copy.copy(self)
        new.free = dict(self.free)
        new._bucket = {t: {k: dict(d) for k, d in b.items()} for t, b in self._bucket.items()}
        new.shared = {k: dict(v) for k, v in self.shared.items()}
        new._open = {t: dict(d) for t, d in self._open.items()}
        new.owner = dict(self.owner)
        new.cpus_free = dict(self.cpus_free)
        new.dram_free = dict(self.dram_free)
        new.link_free = dict(self.link_free)
        return new

    def masked(self, nodes: Iterable[str]) -> Occupancy:
        """A copy on which ``nodes`` have no free GPU (a search there avoids them; shared
        GPUs with room on them stay open)."""
        new = self.copy()
        for n in nodes:
            if new.free[n]:
                new._take(n, set(new.free[n]))
        return new

    def links_fit(self, cfg: Config, node_ids: tuple[str, ...]) -> bool:
        """Whether every link between these nodes has the bandwidth ``cfg`` holds (E4)."""
        net = self.instance.network
        if not cfg.distributed or net is None:
            return True
        need = (cfg.net_gbps or 0.0) - 1e-9
        return all(self.link_free[k] >= need for k in net.links(node_ids))

    def _hold_links(self, alloc: Allocation, sign: int) -> None:
        net = self.instance.network
        if alloc.config.distributed and net is not None:
            for k in net.links(_nodes_of(alloc)):
                self.link_free[k] -= sign * (alloc.config.net_gbps or 0.0)

    def _per_node(self, alloc: Allocation) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for node_id, idx in alloc.gpus:
            out.setdefault(node_id, set()).add(idx)
        return out

    def host_fits(self, node_id: str, cfg: Config) -> bool:
        """Whether the node has the CPU cores and DRAM one node of ``cfg`` holds (E3)."""
        if not cfg.host_resources:
            return True
        cpus = self.cpus_free.get(node_id)
        if cpus is not None and cfg.cpus_per_node > cpus:
            return False
        dram = self.dram_free.get(node_id)
        return dram is None or cfg.dram_per_node <= dram + 1e-9

    def _hold_host(self, alloc: Allocation, sign: int) -> None:
        cfg = alloc.config
        if not cfg.host_resources:
            return
        for node_id in _nodes_of(alloc):
            if node_id in self.cpus_free:
                self.cpus_free[node_id] -= sign * cfg.cpus_per_node
            if node_id in self.dram_free:
                self.dram_free[node_id] -= sign * cfg.dram_per_node

    # -- bookkeeping ------------------------------------------------------------------------
    def _take(self, node_id: str, gpus: set[int]) -> None:
        t = self.instance.node(node_id).gpu_type
        k = len(self.free[node_id])
        del self._bucket[t][k][node_id]
        self.free[node_id] = self.free[node_id] - gpus
        self._bucket[t].setdefault(len(self.free[node_id]), {})[node_id] = None

    def _give(self, node_id: str, gpus: set[int]) -> None:
        t = self.instance.node(node_id).gpu_type
        k = len(self.free[node_id])
        del self._bucket[t][k][node_id]
        self.free[node_id] = self.free[node_id] | gpus
        self._bucket[t].setdefault(len(self.free[node_id]), {})[node_id] = None

    def why_not(self, job: Job, alloc: Allocation) -> str | None:
        """Why ``alloc`` cannot be placed now for ``job`` (``None`` if it can)."""
        cfg = alloc.config
        inst = self.instance
        if job.id in self.owner:
            return f"job {job.id!r} already holds GPUs"
        for node_id in _nodes_of(alloc):
            # (synergy-opt put a level of one type on a node of another, which only the
            # plan's checker refused, after the run; a fuzz of valid instances)
            kind = inst.node(node_id).gpu_type if node_id in self.free else None
            if kind is not None and kind != cfg.gpu_type:
                return f"node {node_id!r} has {kind} GPUs, {cfg.label} needs {cfg.gpu_type}"
        for node_id in _nodes_of(alloc) if cfg.host_resources else ():
            if node_id in self.free and not self.host_fits(node_id, cfg):
                return f"node {node_id!r} lacks the CPU cores or DRAM of {cfg.label}"
        if cfg.shared:
            (ref,) = alloc.gpus
            tenants = self.shared.get(ref)
            if tenants is None:
                return None if ref[1] in self.free.get(ref[0], ()) else f"GPU {ref} is busy"
            if len(tenants) >= inst.max_share:
                return f"shared GPU {ref} has no free slot"
            mem = inst.gpu(cfg.gpu_type).memory_gb - sum(tenants.values())
            return None if job.memory_gb <= mem + 1e-9 else f"shared GPU {ref} lacks memory"
        for node_id, idx in alloc.gpus:
            if idx not in self.free.get(node_id, ()):
                return f"GPU {idx} of node {node_id!r} is not free"
        if cfg.nodes > 1:
            for node_id in _nodes_of(alloc):
                if len(self.free[node_id]) != inst.node(node_id).num_gpus:
                    return f"node {node_id!r} is not wholly free for a multi-node job"
        if cfg.distributed:
            net = inst.network
            assert net is not None and cfg.span is not None
            span = net.span(_nodes_of(alloc))
            if not within(span, cfg.span):
                return f"its GPUs span the {span}, {cfg.label} keeps within one {cfg.span}"
            if not self.links_fit(cfg, _nodes_of(alloc)):
                return f"a link between its nodes lacks the {cfg.net_gbps:g} Gb/s of {cfg.label}"
        return None

    def place(self, job: Job, alloc: Allocation) -> None:
        cfg = alloc.config
        if cfg.shared:
            (ref,) = alloc.gpus
            if ref not in self.shared:
                self._take(ref[0], {ref[1]})
                self.shared[ref] = {}
            self.shared[ref][job.id] = job.memory_gb
            self._mark_open(ref)
        elif cfg.nodes > 1:
            for node_id in _nodes_of(alloc):
                self._take(node_id, set(self.free[node_id]))
        elif cfg.distributed:
            for node_id, idx in self._per_node(alloc).items():
                self._take(node_id, idx)
            self._hold_links(alloc, 1)
        else:
            self._take(alloc.gpus[0][0], {i for _, i in alloc.gpus})
        self._hold_host(alloc, 1)
        self.owner[job.id] = alloc

    def release(self, job_id: str) -> None:
        alloc = self.owner.pop(job_id)
        cfg = alloc.config
        self._hold_host(alloc, -1)
        if cfg.shared:
            (ref,) = alloc.gpus
            del self.shared[ref][job_id]
            if not self.shared[ref]:
                del self.shared[ref]
                self._give(ref[0], {ref[1]})
            self._mark_open(ref)
        elif cfg.nodes > 1:
            for node_id in _nodes_of(alloc):
                self._give(node_id, set(range(self.instance.node(node_id).num_gpus)))
        elif cfg.distributed:
            self._hold_links(alloc, -1)
            for node_id, idx in self._per_node(alloc).items():
                self._give(node_id, idx)
        else:
            self._give(alloc.gpus[0][0], {i for _, i in alloc.gpus})

    def keep(self, job: Job, current: Allocation | None, cfg: Config) -> bool:
        """Places ``job`` back on ``current`` if that runs ``cfg`` and its GPUs are
        free: a job whose configuration does not change stays on its very GPUs."""
        if current is None or (current.config is not cfg and current.config != cfg):
            return False  # (identity first: comparing configurations field by field is not)
        if self.why_not(job, current) is not None:
            return False
        self.place(job, current)
        return True

    # -- best-fit search ----------------------------------------------------------------------
    def _nodes_with(self, gpu_type: str, at_least: int) -> Iterator[str]:
        """Nodes of a type with at least ``at_least`` free GPUs, fewest free first (ties:
        with power states seen, nodes on first, then booting, then off)."""
        buckets = self._bucket.get(gpu_type, {})
        for k in sorted(b for b in buckets if b >= at_least):
            if self.power is None:
                yield from buckets[k]
            else:
                yield from self._readiest(buckets[k], self.power)

    @staticmethod
    def _readiest(nodes: dict[str, None], power: PowerStates) -> Iterator[str]:
        """``nodes`` in their order, those on first: a search stops at its first fit,
        so the nodes not on are only sorted if no node on fits."""
        later = []
        for n in nodes:
            if power.on(n):
                yield n
            else:
                later.append(n)
        yield from sorted(later, key=power.rank)  # stable: ties in the bucket's order

    def find(self, job: Job, cfg: Config) -> Allocation | None:
        """A best-fit placement of ``cfg`` for ``job`` now, or ``None``."""
        if cfg.shared:
            return self._find_shared(job, cfg)
        if cfg.nodes > 1:
            return self._find_whole_nodes(cfg)
        if cfg.distributed:
            refs = consolidated(self, cfg)
            return None if refs is None else Allocation(cfg, refs)
        for node_id in self._nodes_with(cfg.gpu_type, cfg.gpus):
            if self.host_fits(node_id, cfg):
                gpus = sorted(self.free[node_id])[: cfg.gpus]
                return Allocation(cfg, tuple((node_id, g) for g in gpus))
        return None

    def _mark_open(self, ref: GpuRef) -> None:
        """Keep ``ref`` in its type's open set exactly while it is shared and has room."""
        tenants = self.shared.get(ref)
        opened = self._open.setdefault(self.instance.node(ref[0]).gpu_type, {})
        if tenants and len(tenants) < self.instance.max_share:
            opened[ref] = None
        else:
            opened.pop(ref, None)

    def _find_shared(self, job: Job, cfg: Config) -> Allocation | None:
        inst = self.instance
        cap = inst.gpu(cfg.gpu_type).memory_gb
        best: tuple[float, GpuRef] | None = None
        # the least memory left wins, ties by GPU: the same choice in any scan order
        for ref in self._open.get(cfg.gpu_type, {}):
            tenants = self.shared[ref]
            if not self.host_fits(ref[0], cfg):
                continue
            left = cap - sum(tenants.values()) - job.memory_gb
            if left >= -1e-9 and (best is None or (left, ref) < best):
                best = (left, ref)
        if best is not None:
            return Allocation(cfg, (best[1],))
        for node_id in self._nodes_with(cfg.gpu_type, 1):
            if self.host_fits(node_id, cfg):
                return Allocation(cfg, ((node_id, min(self.free[node_id])),))
        return None

    def _find_whole_nodes(self, cfg: Config) -> Allocation | None:
        inst = self.instance
        whole = [
            n
            for n in inst.nodes_by_type.get(cfg.gpu_type, ())
            if n.num_gpus >= cfg.gpus_per_node
            and len(self.free[n.id]) == n.num_gpus
            and self.host_fits(n.id, cfg)
        ]
        if len(whole) < cfg.nodes:
            return None
        power = self.power
        # smallest nodes first: least capacity blocked (ties, with power states seen:
        # nodes on first; blind, every tie ranks alike and keeps the nodes' order)
        whole.sort(key=lambda n: (n.num_gpus, (0, 0.0) if power is None else power.rank(n.id)))
        gpus = tuple((n.id, g) for n in whole[: cfg.nodes] for g in range(cfg.gpus_per_node))
        return Allocation(cfg, gpus)
