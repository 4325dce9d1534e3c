"""Where Synergy's jobs go (:mod:`heuristic.seeds.synergy`): one round's scratch state,
consolidated placement, TUNE's peer reverting, and the repack of a round whose GPUs are
scattered (docs/synergy.md, "Placement").

Synergy's simulator (``msr-fiddle/synergy`` at 1bb2bed6edc9) never leaves a job of the
round without GPUs because of where the free ones are: every lease ends at the round
(``events/job_lease_end_event.py`` releases the job's GPUs, cores and memory), the round
re-places every job from scratch in the base policy's order (``schedulers/
fifo_synergy_new.py``), and its placement (``resources/cluster.py``,
``allocate_synergy_random`` and ``_top_synergy_gpus``; ``allocate_synergy_placement``
likewise after one try on a single server) takes free GPUs on any servers, a job split
over as many as it needs, at no speed penalty (``placement_penalty = 1`` in every
shipped profile). gpusched runs a job on one node and charges a relaunch for every move
(E1), so :func:`repack` does the part of that re-placement that matters: when a job of
the round finds no node with its GPU count free while the cluster has them, it moves
the fewest relaunch-hours of running jobs off one node to the others' free GPUs, and
nothing else moves.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.seeds.synergy_levels import best_case, proportional_config
from instances import Config, Instance, Job, Node
from instances.model import fits_node


@dataclass
class Round:
    """One round's scratch state: the occupancy and the allocations made so far."""

    inst: Instance
    occ: Occupancy
    placed: dict[str, Allocation]

    def copy(self) -> Round:
        return Round(self.inst, self.occ.copy(), dict(self.placed))


def put(r: Round, job: Job, alloc: Allocation | None) -> None:
    if alloc is not None:
        r.occ.place(job, alloc)
        r.placed[job.id] = alloc


def candidate_nodes(r: Round, gpu_type: str, gpus: int, but: str | None = None) -> list[Node]:
    """Nodes of the type with ``gpus`` free GPUs, the fewest free first (consolidation),
    other than ``but``."""
    nodes = [
        n
        for n in r.inst.nodes_by_type.get(gpu_type, ())
        if len(r.occ.free[n.id]) >= gpus and n.id != but
    ]
    return sorted(nodes, key=lambda n: (len(r.occ.free[n.id]), n.id))


def on_node(
    r: Round, job: Job, config_for: Callable[[Node], Config | None], level: Config | None = None
) -> Allocation | None:
    """The first candidate node on which the level ``config_for(node)`` fits now: nodes
    of ``level``'s GPU type where one is given (LP1's target), else of the job's best
    case. (The target's type was ignored: a level of one type was put on a node of the
    best case's other type, a plan the checker refused; a fuzz of valid instances.)"""
    demand = best_case(r.inst, job)
    if demand is None:
        return None
    gpu_type = demand.gpu_type if level is None else level.gpu_type
    for node in candidate_nodes(r, gpu_type, demand.gpus):
        cfg = config_for(node)
        if cfg is None or not fits_node(cfg, node) or not r.occ.host_fits(node.id, cfg):
            continue
        if len(r.occ.free[node.id]) < cfg.gpus:
            continue
        return _first_gpus(r, node, cfg)
    return None


def _first_gpus(r: Round, node: Node, cfg: Config) -> Allocation:
    gpus = sorted(r.occ.free[node.id])[: cfg.gpus]
    return Allocation(cfg, tuple((node.id, g) for g in gpus))


def revert_peers(r: Round, job: Job) -> Allocation | None:
    """TUNE's step (c): on the first node with enough free GPUs where reverting peers
    above their proportional share makes room, revert them (the most cores per GPU
    first, then the most DRAM per GPU) until the job fits at its own share."""
    demand = best_case(r.inst, job)
    if demand is None:
        return None
    for node in candidate_nodes(r, demand.gpu_type, demand.gpus):
        mine = proportional_config(r.inst, job, node)
        if mine is None:
            continue
        above = _above_share(r, node)
        trial = r.occ.copy()
        for peer, alloc, share in above:
            trial.release(peer.id)
            trial.place(peer, Allocation(share, alloc.gpus))
        if not trial.host_fits(node.id, mine):
            continue
        for peer, alloc, share in above:  # now for real, only as many as needed
            if r.occ.host_fits(node.id, mine):
                break
            r.occ.release(peer.id)
            reverted = Allocation(share, alloc.gpus)
            r.occ.place(peer, reverted)
            r.placed[peer.id] = reverted
        return _first_gpus(r, node, mine)
    return None


def _above_share(r: Round, node: Node) -> list[tuple[Job, Allocation, Config]]:
    """The node's placed jobs above their share, in TUNE's order for reverting."""
    above = []
    for peer_id, alloc in r.placed.items():
        if alloc.gpus[0][0] != node.id:
            continue
        peer = r.inst.job(peer_id)
        share = proportional_config(r.inst, peer, node)
        if share is not None and _holds_more(alloc.config, share):
            above.append((peer, alloc, share))
    above.sort(
        key=lambda p: (
            -(p[1].config.cpus or 0) / p[1].config.gpus,
            -(p[1].config.dram_gb or 0.0) / p[1].config.gpus,
            p[0].id,
        )
    )
    return above


def _holds_more(cfg: Config, share: Config) -> bool:
    return (cfg.cpus or 0) > (share.cpus or 0) or (cfg.dram_gb or 0.0) > (share.dram_gb or 0.0)


def scattered(r: Round, job: Job) -> bool:
    """Whether the job waits only because of where the free GPUs are: the cluster has
    its GPU count free on its type, no node has."""
    demand = best_case(r.inst, job)
    if demand is None:
        return False
    free = [len(r.occ.free[n.id]) for n in r.inst.nodes_by_type.get(demand.gpu_type, ())]
    return sum(free) >= demand.gpus and max(free, default=0) < demand.gpus


def repack(
    r: Round,
    job: Job,
    running: Mapping[str, Allocation | None],
    place: Callable[[Round], Allocation | None],
) -> Round | None:
    """The round after moving running jobs off one node so that ``job`` gets its GPUs
    there, or ``None``. ``running`` maps each job to its allocation before the round
    (moving a job that keeps it is a relaunch: its overhead times its GPUs is the move's
    cost; a job placed afresh this round moves for nothing). The cheapest set of movers
    is tried first, over every node; each mover goes to the other nodes' free GPUs
    (fewest free first) at its level, else at that node's share; ``place`` then places
    ``job`` on the trial round (TUNE's own rule)."""
    demand = best_case(r.inst, job)
    if demand is None:
        return None
    options = []
    for node in r.inst.nodes_by_type.get(demand.gpu_type, ()):
        need = demand.gpus - len(r.occ.free[node.id])
        residents = [
            (jid, a) for jid, a in r.placed.items() if a.config.one_node and a.gpus[0][0] == node.id
        ]
        for group in _minimal_sets(residents, need):
            cost = sum(_move_cost(r.inst, jid, a, running) for jid, a in group)
            moved = sum(len(a.gpus) for _, a in group)
            options.append((cost, moved, len(group), node.id, tuple(j for j, _ in group)))
    for *_, node_id, movers in sorted(options):
        trial = _moved(r, node_id, movers)
        if trial is not None and (alloc := place(trial)) is not None:
            put(trial, job, alloc)
            return trial
    return None


def _minimal_sets(
    residents: list[tuple[str, Allocation]], need: int
) -> list[tuple[tuple[str, Allocation], ...]]:
    """The sets of residents holding at least ``need`` GPUs, none of whose members could
    stay (a node holds at most a few jobs: eight one-GPU jobs give 70 sets at most)."""
    out = []
    for k in range(1, len(residents) + 1):
        for combo in itertools.combinations(residents, k):
            held = sum(len(a.gpus) for _, a in combo)
            if held >= need and all(held - len(a.gpus) < need for _, a in combo):
                out.append(combo)
    return out


def _move_cost(
    inst: Instance, jid: str, alloc: Allocation, running: Mapping[str, Allocation | None]
) -> float:
    """GPU-hours a move loses: the relaunch overhead on the job's GPUs if it keeps a
    running allocation, nothing if it starts this round anyway."""
    if running.get(jid) != alloc:
        return 0.0
    return inst.relaunch(jid) * len(alloc.gpus)


def _moved(r: Round, node_id: str, movers: tuple[str, ...]) -> Round | None:
    """A trial round with ``movers`` taken off ``node_id`` and placed elsewhere (the
    largest first), or ``None`` if one has no other home."""
    trial = r.copy()
    allocs = {jid: trial.placed.pop(jid) for jid in movers}
    for jid in movers:
        trial.occ.release(jid)
    for jid in sorted(movers, key=lambda j: (-len(allocs[j].gpus), j)):
        job = trial.inst.job(jid)
        home = _home(trial, job, allocs[jid].config, node_id)
        if home is None:
            return None
        put(trial, job, home)
    return trial


def _home(r: Round, job: Job, cfg: Config, but: str) -> Allocation | None:
    """Free GPUs on a node other than ``but`` for the job at ``cfg``, else at that
    node's share (a moved job never goes below its share)."""
    for node in candidate_nodes(r, cfg.gpu_type, cfg.gpus, but=but):
        for level in (cfg, proportional_config(r.inst, job, node)):
            if level is not None and r.occ.host_fits(node.id, level):
                return _first_gpus(r, node, level)
    return None
