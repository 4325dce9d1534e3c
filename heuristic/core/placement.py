"""Where a distributed configuration's GPUs go (E4): the default placement every policy
gets from :meth:`heuristic.core.occupancy.Occupancy.find`, and the pieces other placers
(Liquid's best fit, topology-blind first fit) share.

The default consolidates: it tries one node, then one rack, then one domain, then the
cluster, as far as the configuration's span allows, and at each level takes the group
with the fewest free GPUs that still holds the job (best fit: large free groups stay
whole for large jobs), filling its nodes with the most free GPUs first (fewest nodes,
so least traffic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from instances import Config, GpuRef
from instances.topology import SPANS, within

if TYPE_CHECKING:
    from heuristic.core.occupancy import Occupancy


def free_of_type(occ: Occupancy, cfg: Config, nodes: tuple[str, ...]) -> list[tuple[str, int]]:
    """The nodes (in the given order) of ``cfg``'s GPU type with free GPUs, and how many."""
    inst = occ.instance
    return [
        (n, len(occ.free[n]))
        for n in nodes
        if occ.free[n] and inst.node(n).gpu_type == cfg.gpu_type
    ]


def take(occ: Occupancy, counts: list[tuple[str, int]]) -> tuple[GpuRef, ...]:
    """The lowest-numbered free GPUs: ``k`` of each node ``(node, k)``."""
    return tuple((n, g) for n, k in counts for g in sorted(occ.free[n])[:k])


def _fill(free: list[tuple[str, int]], gpus: int) -> list[tuple[str, int]]:
    """``gpus`` GPUs from the nodes with the most free first (ties: given order)."""
    order = sorted(range(len(free)), key=lambda i: (-free[i][1], i))
    out: list[tuple[str, int]] = []
    left = gpus
    for i in order:
        if left == 0:
            break
        k = min(left, free[i][1])
        out.append((free[i][0], k))
        left -= k
    return out


def consolidated(occ: Occupancy, cfg: Config) -> tuple[GpuRef, ...] | None:
    """The default placement of a distributed ``cfg`` now, or ``None``."""
    net = occ.instance.network
    assert net is not None and cfg.span is not None
    for level in SPANS:
        if not within(level, cfg.span):
            break
        best: tuple[tuple[int, int], list[tuple[str, int]]] | None = None
        for group in net.groups(level):
            free = free_of_type(occ, cfg, group)
            total = sum(k for _, k in free)
            if total < cfg.gpus:
                continue
            counts = _fill(free, cfg.gpus)
            if not occ.links_fit(cfg, tuple(n for n, _ in counts)):
                continue
            key = (total, len(counts))
            if best is None or key < best[0]:
                best = (key, counts)
        if best is not None:
            return take(occ, best[1])
    return None
