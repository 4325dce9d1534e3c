"""Decision variables of the time-indexed MILP (docs/milp.md), sparse: only the
indices :mod:`milp.data` allows exist.

Index conventions: ``j`` job id, ``k`` position of a configuration in the job's allowed
configurations, ``n`` node id, ``u`` shared-GPU label on a node (0..U_n-1), ``b``
block, ``t`` slot.
"""

from __future__ import annotations

import pyomo.environ as pyo

from milp.data import JobData, MilpData


def _fits(d: MilpData, jd: JobData, node_id: str, u: int, t: int) -> bool:
    """Whether the job could join label ``u`` at all: always for the model's own labels;
    for a GPU with outside tenants, if a tenant's place and enough memory are left."""
    outside = d.outside_label(node_id, u, t)
    if outside is None:
        return True
    _, count, memory = outside
    cap = d.instance.gpu(d.instance.node(node_id).gpu_type).memory_gb
    return count < d.instance.max_share and memory + jd.job.memory_gb <= cap + 1e-9


def add_variables(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Adds ``run``, ``place``, ``share``, ``shared_gpu``, ``work``, ``done``,
    ``progress`` and ``late`` with their index sets (``*_index``) to ``m``."""
    run_idx, place_idx, share_idx, work_idx, done_idx = _job_indices(d)
    label_idx = [
        (n, u, t)
        for n, count in d.shared_labels.items()
        for u in range(count)
        for t in range(d.slots)
    ]
    progress_idx = [(j, t) for j in d.jobs for t in d.slot_range(j)]
    late_idx = [(j, b) for j in d.jobs for b in d.late_blocks(j)]

    m.run_index = pyo.Set(initialize=run_idx, dimen=3, ordered=True)
    m.place_index = pyo.Set(initialize=place_idx, dimen=4, ordered=True)
    m.share_index = pyo.Set(initialize=share_idx, dimen=4, ordered=True)
    m.label_index = pyo.Set(initialize=label_idx, dimen=3, ordered=True)
    m.work_index = pyo.Set(initialize=work_idx, dimen=4, ordered=True)
    m.done_index = pyo.Set(initialize=done_idx, dimen=3, ordered=True)
    m.progress_index = pyo.Set(initialize=progress_idx, dimen=2, ordered=True)
    m.late_index = pyo.Set(initialize=late_idx, dimen=2, ordered=True)

    # run[j,k,t] = 1: job j runs its configuration k in slot t
    m.run = pyo.Var(m.run_index, domain=pyo.Binary)
    # place[j,k,n,t] = 1: ... on node n (exclusive GPUs; each node of a multi-node config)
    m.place = pyo.Var(m.place_index, domain=pyo.Binary)
    # share[j,n,u,t] = 1: job j is a tenant of shared GPU label u of node n in slot t
    m.share = pyo.Var(m.share_index, domain=pyo.Binary)
    # shared_gpu[n,u,t] = 1: label u of node n is a GPU in shared mode in slot t
    m.shared_gpu = pyo.Var(m.label_index, domain=pyo.Binary)
    # work[j,b,k,t] >= 0: epochs of block b done in slot t on configuration k
    m.work = pyo.Var(m.work_index, domain=pyo.NonNegativeReals)
    # done[j,b,t] = 1: block b is complete by the end of slot t
    m.done = pyo.Var(m.done_index, domain=pyo.Binary)
    # progress[j,t] >= 0: epochs of job j done by the end of slot t (tightens completion)
    m.progress = pyo.Var(m.progress_index, domain=pyo.NonNegativeReals)
    # late[j,b] >= 0: hours by which block b completes after the due date (the last
    # block's is the worst-case lateness)
    m.late = pyo.Var(m.late_index, domain=pyo.NonNegativeReals)
    _fix_done(m, d)


Index = list[tuple[object, ...]]


def _job_indices(d: MilpData) -> tuple[Index, Index, Index, Index, Index]:
    """The indices of ``run``, ``place``, ``share``, ``work`` and ``done``, job by job:
    only allowed configurations, their hosts, the shared labels a job may join, and the
    slots in which a block can progress."""
    run_idx: Index = []
    place_idx: Index = []
    share_idx: Index = []
    work_idx: Index = []
    done_idx: Index = []
    for j, jd in d.jobs.items():
        for k, c in enumerate(jd.configs):
            for t in d.slot_range(j):
                run_idx.append((j, k, t))
                if c.shared:
                    for n in d.hosts(c):
                        share_idx += [
                            (j, n.id, u, t) for u in d.labels(n.id, t) if _fits(d, jd, n.id, u, t)
                        ]
                else:
                    place_idx += [(j, k, n.id, t) for n in d.hosts(c)]
            for b in jd.blocks:
                work_idx += [(j, b, k, t) for t in d.slot_range(j) if t >= jd.earliest_work_slot(b)]
        for b in jd.blocks:
            done_idx += [(j, b, t) for t in d.slot_range(j)]
    return run_idx, place_idx, share_idx, work_idx, done_idx


def _fix_done(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Blocks cannot be complete before their earliest finish slot, and are by the end."""
    for j, jd in d.jobs.items():
        for b in jd.blocks:
            for t in range(jd.first_slot, min(jd.earliest_finish_slot(b), jd.last_slot + 1)):
                m.done[j, b, t].fix(0)
            m.done[j, b, jd.last_slot].fix(1)
