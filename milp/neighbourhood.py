"""Neighbourhoods of a plan for the large-neighbourhood search (:mod:`milp.improve`): which
jobs to free, which nodes they may use, and the GPUs the fixed jobs hold slot by slot.

A neighbourhood frees a few jobs that compete with one another: around a late job, around
the job furthest above its own lower bound, in one GPU type's busiest window, or at
random. A freed job may stay on, or move to, a shared GPU beside fixed tenants.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from instances import Instance, Plan
from milp.data import Outside

KINDS = ("late", "excess", "window", "random")


@dataclass(frozen=True)
class Neighbourhood:
    kind: str
    jobs: tuple[str, ...]
    nodes: tuple[str, ...]


def _span(plan: Plan, job: str, slot: float) -> tuple[int, int]:
    segs = plan.for_job(job)
    return round(segs[0].start / slot), round(segs[-1].end / slot)


def outside(
    instance: Instance, plan: Plan, fixed: set[str], nodes: Iterable[str] | None = None
) -> Outside:
    """What the ``fixed`` jobs of a slot-aligned ``plan`` hold on ``nodes`` (default:
    every node), per (node id, slot), as the sub-MILP of the freed jobs sees it: GPU
    indices (a node of a multi-node configuration whole, as the model reserves it), per
    shared GPU among them its fixed tenants and their memory, which freed jobs may join,
    and the CPU cores and DRAM they hold (:class:`milp.data.Outside`)."""
    keep = None if nodes is None else set(nodes)
    gpus, tenants = _gpus_and_tenants(instance, plan, fixed)
    host = _host(instance, plan, fixed)
    if keep is not None:
        gpus = {k: v for k, v in gpus.items() if k[0] in keep}
        host = {k: v for k, v in host.items() if k[0] in keep}
        tenants = {k: v for k, v in tenants.items() if k[0] in keep}
    return Outside(gpus=gpus, tenants=tenants, host=host)


def _gpus_and_tenants(
    instance: Instance, plan: Plan, fixed: set[str]
) -> tuple[
    dict[tuple[str, int], frozenset[int]], dict[tuple[str, int], dict[int, tuple[int, float]]]
]:
    """The GPUs and the shared GPUs' tenants of :func:`outside`, on every node."""
    slot = instance.slot
    assert slot is not None
    held: dict[tuple[str, int], set[int]] = defaultdict(set)
    tenants: dict[tuple[str, int], dict[int, tuple[int, float]]] = defaultdict(dict)
    for s in plan:
        if s.job not in fixed:
            continue
        memory = instance.job(s.job).memory_gb
        for t in range(round(s.start / slot), round(s.end / slot)):
            if s.config.nodes > 1:
                for n in s.node_ids:
                    held[n, t].update(range(instance.node(n).num_gpus))
                continue
            for n, g in s.gpus:
                held[n, t].add(g)
            if s.config.shared:
                n, g = s.gpus[0]
                count, used = tenants[n, t].get(g, (0, 0.0))
                tenants[n, t][g] = (count + 1, used + memory)
    return {k: frozenset(v) for k, v in held.items()}, dict(tenants)


def _host(
    instance: Instance, plan: Plan, fixed: set[str]
) -> dict[tuple[str, int], tuple[int, float]]:
    """The CPU cores and DRAM of :func:`outside`, on every node; empty where no
    configuration states them (E3)."""
    slot = instance.slot
    assert slot is not None
    out: dict[tuple[str, int], tuple[int, float]] = {}
    for s in plan:
        if s.job not in fixed or not s.config.host_resources:
            continue
        for t in range(round(s.start / slot), round(s.end / slot)):
            for n in s.node_ids:
                cpus, dram = out.get((n, t), (0, 0.0))
                out[n, t] = (cpus + s.config.cpus_per_node, dram + s.config.dram_per_node)
    return out


class Chooser:
    """Draws neighbourhoods of the current plan (seeded: same seed, same draws)."""

    def __init__(self, instance: Instance, seed: int, extra_nodes: int = 2) -> None:
        self.instance = instance
        self.rng = np.random.default_rng(seed)
        self.extra_nodes = extra_nodes

    def draw(
        self, plan: Plan, excess: Mapping[str, float], late: Mapping[str, float], size: int
    ) -> Neighbourhood:
        """Up to ``size`` jobs. ``excess``:
        each job's cost above its own lower bound; ``late``: its tardiness cost."""
        kinds = [k for k in KINDS if k != "late" or any(v > 0 for v in late.values())]
        kind = kinds[int(self.rng.integers(len(kinds)))]
        jobs = self._jobs(kind, plan, excess, late, size)
        return Neighbourhood(kind, tuple(jobs), self._nodes(plan, jobs))

    def _pick(self, weights: Mapping[str, float]) -> str:
        ids = sorted(weights)
        w = np.array([max(weights[j], 0.0) for j in ids])
        if w.sum() <= 0:
            return ids[int(self.rng.integers(len(ids)))]
        return ids[int(self.rng.choice(len(ids), p=w / w.sum()))]

    def _jobs(
        self,
        kind: str,
        plan: Plan,
        excess: Mapping[str, float],
        late: Mapping[str, float],
        size: int,
    ) -> list[str]:
        ids = [j.id for j in self.instance.jobs]
        if kind == "random" or size >= len(ids):
            return [str(j) for j in self.rng.permutation(ids)[:size]]
        if kind == "window":
            return self._window(plan, size)
        seed = self._pick(late if kind == "late" else excess)
        return [seed, *self._competitors(plan, seed, size - 1)]

    def _competitors(self, plan: Plan, seed: str, count: int) -> list[str]:
        """The jobs whose runs overlap the seed job's most, on the GPU types it may use
        (ties broken at random)."""
        slot = self.instance.slot
        assert slot is not None
        lo, hi = _span(plan, seed, slot)
        job = self.instance.job(seed)
        types = {c.gpu_type for c in self.instance.allowed_configs(job)}
        score: dict[str, float] = defaultdict(float)
        for s in plan:
            if s.job == seed or s.config.gpu_type not in types:
                continue
            overlap = min(hi * slot, s.end) - max(lo * slot, s.start)
            if overlap > 0:
                score[s.job] += overlap * s.config.gpus
        order = sorted(score, key=lambda j: (-score[j], self.rng.random()))
        return order[:count]

    def _window(self, plan: Plan, size: int) -> list[str]:
        """The jobs running on one GPU type around a random busy instant."""
        segs = list(plan)
        pick = segs[int(self.rng.integers(len(segs)))]
        t, gpu_type = (pick.start + pick.end) / 2, pick.config.gpu_type
        near = sorted(
            {s.job for s in segs if s.config.gpu_type == gpu_type},
            key=lambda j: (min(abs(s.start - t) + abs(s.end - t) for s in plan.for_job(j)), j),
        )
        return near[:size]

    def _nodes(self, plan: Plan, jobs: Sequence[str]) -> tuple[str, ...]:
        """The nodes the freed jobs use, and per GPU type they may use, the
        ``extra_nodes`` nodes with the most GPU-slots free over their span."""
        inst = self.instance
        slot = inst.slot
        assert slot is not None
        freed = set(jobs)
        used = {n for j in jobs for s in plan.for_job(j) for n in s.node_ids}
        lo = min(_span(plan, j, slot)[0] for j in jobs)
        hi = max(_span(plan, j, slot)[1] for j in jobs)
        busy: dict[str, float] = defaultdict(float)  # GPU-hours held by fixed jobs
        for s in plan:
            if s.job in freed:
                continue
            overlap = min(hi * slot, s.end) - max(lo * slot, s.start)
            if overlap > 0:
                for n in s.node_ids:
                    if s.config.shared:
                        held = 1.0
                    elif s.config.nodes > 1:  # whole nodes, each held whole
                        held = inst.node(n).num_gpus
                    else:  # its GPUs, split over the nodes it spans (E4)
                        held = s.config.gpus / len(s.node_ids)
                    busy[n] += overlap * held
        types = {c.gpu_type for j in jobs for c in inst.allowed_configs(j)}
        chosen = set(used)
        width = max(hi - lo, 1) * slot
        for gpu_type in sorted(types):
            spare = sorted(
                (n for n in inst.nodes_by_type[gpu_type] if n.id not in used),
                key=lambda n: (busy[n.id] / width - n.num_gpus, n.id),
            )
            chosen.update(n.id for n in spare[: self.extra_nodes])
        return tuple(n.id for n in inst.nodes if n.id in chosen)
