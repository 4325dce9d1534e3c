"""Synergy's levels of CPU cores and DRAM per job (:mod:`heuristic.seeds.synergy`): the
GPU-proportional share a node gives a job, its best case, and Synergy-OPT's LP1 over
the levels, on HiGHS."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import highspy
import numpy as np

from heuristic.core import highs_run
from heuristic.core.choice import requested_configs
from heuristic.core.occupancy import Occupancy
from instances import Config, Instance, Job, Node, fits_node


def proportional_config(inst: Instance, job: Job, node: Node) -> Config | None:
    """The job's level that a GPU-proportional share of ``node`` gives it: the fastest
    of its requested-size configurations within ``floor(cores·g/G)`` cores and
    ``DRAM·g/G`` GB (the most resources on a tie: what the share hands out). A node
    that states no cores or DRAM gives as much as asked. Where every level the node
    can host holds more than the share (a file's levels need not straddle it), the one
    holding the fewest cores, then the least DRAM, stands in for it."""
    best: tuple[float, tuple[int, float], Config] | None = None
    hostable = [c for c in levels(inst, job) if fits_node(c, node)]
    for c in hostable:
        g = c.gpus_per_node
        if node.cpu_cores is not None and c.cpus_per_node > node.cpu_cores * g // node.num_gpus:
            continue
        if node.dram_gb is not None and c.dram_per_node > node.dram_gb * g / node.num_gpus + 1e-9:
            continue
        key = (inst.epoch_time(job, c), (-(c.cpus or 0), -(c.dram_gb or 0.0)), c)
        if best is None or key[:2] < best[:2]:
            best = key
    if best is None:
        return min(hostable, key=lambda c: (c.cpus or 0, c.dram_gb or 0.0, c), default=None)
    return best[2]


def levels(inst: Instance, job: Job) -> list[Config]:
    """The job's one-node configurations of its requested size: its CPU/DRAM levels."""
    return [c for c in requested_configs(inst, job) if c.one_node]


def best_case(inst: Instance, job: Job) -> Config | None:
    """The job's demand vector: its fastest level, the fewest cores then the least DRAM
    among equals."""
    return min(
        levels(inst, job),
        key=lambda c: (inst.epoch_time(job, c), c.cpus or 0, c.dram_gb or 0.0, c),
        default=None,
    )


def lp1_levels(
    inst: Instance,
    jobs: Sequence[Job],
    occ: Occupancy,
    current: Mapping[str, Config] | None = None,
) -> dict[str, Config]:
    """Synergy-OPT's LP1 on HiGHS: one level per job maximising the total throughput
    normalised to each job's proportional share, within the cluster's cores and DRAM
    (``occ``'s free amounts: the nodes that state none do not bound), no job below its
    share. A job's current level gets a tie-breaking bonus (1e-6): equal throughput,
    no relaunch."""
    rows = _lp1_rows(inst, jobs, current or {})
    if not rows:
        return {}
    _, choice = _solve_lp1(inst, rows, occ)
    return choice


def lp1_objective(inst: Instance, jobs: Sequence[Job], occ: Occupancy) -> float:
    """LP1's optimum: an upper bound on the normalised throughput any allocation of
    these jobs at or above their shares can reach (Synergy's OPT)."""
    rows = _lp1_rows(inst, jobs, {})
    return _solve_lp1(inst, rows, occ)[0] if rows else 0.0


def normalised_throughput(inst: Instance, job: Job, cfg: Config) -> float:
    """``W``: the level's speed over the job's proportional share's (on its first
    hosting node's shape)."""
    share = _reference_share(inst, job)
    if share is None:
        return 1.0
    return inst.epoch_time(job, share) / inst.epoch_time(job, cfg)


def _reference_share(inst: Instance, job: Job) -> Config | None:
    demand = best_case(inst, job)
    if demand is None:
        return None
    for node in inst.nodes_by_type.get(demand.gpu_type, ()):
        share = proportional_config(inst, job, node)
        if share is not None:
            return share
    return None


def _lp1_rows(
    inst: Instance, jobs: Iterable[Job], current: Mapping[str, Config]
) -> list[tuple[Job, Config, float, float]]:
    """(job, level, its W, W plus the current level's tie-breaking bonus) for every
    level at or above the job's share."""
    out = []
    for job in jobs:
        share = _reference_share(inst, job)
        for c in levels(inst, job):
            w = 1.0 if share is None else inst.epoch_time(job, share) / inst.epoch_time(job, c)
            if share is not None and w < 1.0 - 1e-12:
                continue  # never below the proportional share
            out.append((job, c, w, w + (1e-6 if current.get(job.id) == c else 0.0)))
    return out


def _solve_lp1(
    inst: Instance, rows: list[tuple[Job, Config, float, float]], occ: Occupancy
) -> tuple[float, dict[str, Config]]:
    ids = sorted({r[0].id for r in rows})
    index = {j: k for k, j in enumerate(ids)}
    n = len(rows)
    a_one = np.zeros((len(ids), n))
    for col, row in enumerate(rows):
        a_one[index[row[0].id], col] = 1.0
    constraints: list[tuple[np.ndarray, float, float]] = [(a_one, 1.0, 1.0)]
    # cluster-wide cores and DRAM, only where every node states both: a node that
    # states none is unlimited, and so is then the cluster's total
    limited = all(n.cpu_cores is not None and n.dram_gb is not None for n in inst.nodes)
    if limited:
        cpus = sum(occ.cpus_free.values())
        dram = sum(occ.dram_free.values())
        constraints.append((np.array([[r[1].cpus or 0 for r in rows]]), -np.inf, cpus))
        constraints.append((np.array([[r[1].dram_gb or 0.0 for r in rows]]), -np.inf, dram + 1e-9))
    x = _highs_binary_max(np.array([r[3] for r in rows]), constraints)
    if x is None:  # the shares alone exceed what is free: everyone at the share
        choice = {}
        for job, c, _, _ in rows:
            share = _reference_share(inst, job)
            choice[job.id] = share if share is not None else c
        return float(len(ids)), choice
    taken = [r for col, r in enumerate(rows) if x[col] > 0.5]
    return float(sum(r[2] for r in taken)), {r[0].id: r[1] for r in taken}


def _highs_binary_max(
    gain: np.ndarray, rows: list[tuple[np.ndarray, float, float]]
) -> np.ndarray | None:
    """``max gain·x`` over binary ``x`` within ``lower <= A x <= upper`` for each row
    block, on HiGHS (silent); ``None`` if infeasible."""
    a = np.vstack([m for m, _, _ in rows])
    lower = np.concatenate([np.full(m.shape[0], lo) for m, lo, _ in rows])
    upper = np.concatenate([np.full(m.shape[0], up) for m, _, up in rows])
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = gain.size
    h.addVars(n, np.zeros(n), np.ones(n))
    h.changeColsIntegrality(n, np.arange(n), np.full(n, highspy.HighsVarType.kInteger))
    h.changeColsCost(n, np.arange(n), -gain)
    for i in range(a.shape[0]):
        nz = np.nonzero(a[i])[0]
        h.addRow(
            lower[i] if np.isfinite(lower[i]) else -highspy.kHighsInf,
            upper[i] if np.isfinite(upper[i]) else highspy.kHighsInf,
            nz.size,
            nz,
            a[i, nz],
        )
    highs_run.run(h)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return np.asarray(h.getSolution().col_value, dtype=float)
