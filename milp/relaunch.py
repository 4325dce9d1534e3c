"""The relaunch overhead in the MILP (docs/model.md, E1; docs/milp.md states the
formulation and why it is exact).

For a job with overhead ``δ`` (``r = δ / Δ`` slots), a slot in which it takes a
placement it did not hold in the slot before (a first start, a resume, another
configuration, another node or shared GPU) *relaunches* it. The ``i``-th slot after a
relaunch loses the fraction ``λ_i = min(1, max(0, r - i))`` of its time while the job
still runs; a later relaunch starts over. Only jobs with ``δ > 0`` get these variables,
so a model without overhead is the model it was.

- ``begin_place[j,k,n,t]``, ``begin_share[j,n,u,t]`` in [0, 1]: the placement is new in
  slot ``t``; with place/share binary they are exactly ``max(0, x_t - x_{t-1})``;
- ``relaunched[j,t]`` in [0, 1]: some placement is new (exactly their maximum);
- ``lost[j,t]`` in [0, 1]: the fraction of slot ``t`` spent in overhead, the
  ``λ_i`` of the latest relaunch while the job runs. ``λ_i < 1`` only for the last
  index, so the maximum of the ``λ_i`` of the relaunches within reach equals their sum
  capped at 1: the bounds below pin it;
- ``overhead_cost[j,t] >= 0``: its energy cost, ``lost`` times a slot at the running
  configuration's power times ``P(N > w)`` at the relaunch; the progress ``w`` does not
  move during the overhead, so ``P(N > w)`` is read from the ``done`` flags of the slot
  before.

Cuts that the integer solutions satisfy but the LP relaxation did not see (without
them the root bound ignored the overhead almost entirely, docs/milp.md):

- ``ever[j,t]`` in [0, 1], fixed to 1 in the job's last slot, and ``first_run[j,k,t]``
  in [0, 1]: the job has run by slot ``t``, and its first start falls in slot ``t`` on
  configuration ``k`` (``ever`` grows only by ``first_run``, ``first_run <= run``).
  Every plan starts each job once with ``P(N > 0) = 1``, so ``overhead_cost >= λ_0 ·
  Σ_k b_k first_run``: the LP must pay a first start at some power;
- ``relaunched <= Σ_k run`` and ``lost >= λ_0 · relaunched`` (a relaunch in slot ``t``
  loses ``λ_0`` of that very slot);
- per configuration, a new placement of ``k`` or ``run[k,t] - run[k,t-1]`` is a
  relaunch on ``k``, charged ``b_k λ_0 q_b`` with ``q_b`` the survival of the block in
  progress: ``start_block[j,k,t,b]`` in [0, 1] splits the relaunch by that block,
  ``Σ_b start_block >= new``, ``start_block[b] <= in_progress[b]`` (1 exactly for the
  block in progress at the start of slot ``t``, read from ``done`` of slot ``t - 1``),
  and ``overhead_cost >= Σ_k Σ_b b_k λ_0 q_b start_block``. This is the convex hull of
  the product of a relaunch with the one-hot block in progress; the McCormick row it
  replaced, ``b_k λ_0 (new + S - 1)``, charged nothing for a fractional relaunch below
  ``1 - S`` (docs/milp.md). Summing over configurations is valid: a job runs one per
  slot.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pyomo.environ as pyo

from milp.constraints import _add
from milp.data import JobData, MilpData

ON = 0.5  # a binary's value read as 1 above this


def lost_fractions(jd: JobData) -> tuple[float, ...]:
    """``λ_i``: the share of the ``i``-th slot after a relaunch lost to overhead."""
    r = jd.relaunch
    return tuple(min(1.0, r - i) for i in range(math.ceil(r - 1e-12)))


def relaunch_jobs(d: MilpData) -> list[str]:
    return [j for j, jd in d.jobs.items() if jd.relaunch > 0]


def add_relaunch(
    m: pyo.ConcreteModel, d: MilpData, step: Callable[[str], None] | None = None
) -> None:
    """The variables and constraints above, for the jobs that pay an overhead.
    ``step(stage)`` is called after each job's rows of each family, so that a time
    limit can stop the build inside these two large families (see :func:`milp.solve`)."""

    def check(family: str, j: str, done: set[str]) -> None:
        if step is not None and j not in done:
            done.add(j)
            step(f"{family} (job {len(done)} of {len(jobs)})")

    jobs = set(relaunch_jobs(d))
    if not jobs:
        return
    place = [i for i in m.place_index if i[0] in jobs]
    share = [i for i in m.share_index if i[0] in jobs]
    slots = [(j, t) for j in sorted(jobs) for t in d.slot_range(j)]
    m.begin_place_index = pyo.Set(initialize=place, dimen=4, ordered=True)
    m.begin_share_index = pyo.Set(initialize=share, dimen=4, ordered=True)
    m.relaunch_index = pyo.Set(initialize=slots, dimen=2, ordered=True)
    m.begin_place = pyo.Var(m.begin_place_index, bounds=(0, 1))
    m.begin_share = pyo.Var(m.begin_share_index, bounds=(0, 1))
    m.relaunched = pyo.Var(m.relaunch_index, bounds=(0, 1))
    m.lost = pyo.Var(m.relaunch_index, bounds=(0, 1))
    m.overhead_cost = pyo.Var(m.relaunch_index, domain=pyo.NonNegativeReals)
    m.ever = pyo.Var(m.relaunch_index, bounds=(0, 1))
    m.first_run = pyo.Var([i for i in m.run_index if i[0] in jobs], bounds=(0, 1))
    m.start_block = pyo.Var(
        [(j, k, t, b) for j, k, t in m.run_index if j in jobs for b in d.jobs[j].blocks],
        bounds=(0, 1),
    )

    begins: dict[tuple[str, int], list[Any]] = defaultdict(list)
    # per (job, configuration, slot): the begin variables that relaunch it on that
    # configuration (a shared tenancy names no configuration: it counts where the job
    # has exactly one shared configuration of the node's GPU type)
    config_begins: dict[tuple[str, int, int], list[Any]] = defaultdict(list)

    def shared_config(j: str, node_id: str) -> list[int]:
        gpu = d.instance.node(node_id).gpu_type
        ks = [k for k, c in enumerate(d.jobs[j].configs) if c.shared and c.gpu_type == gpu]
        return ks if len(ks) == 1 else []

    rows: list[tuple[Any, Any]] = []
    seen: set[str] = set()
    for name, var, x in (("p", m.begin_place, m.place), ("s", m.begin_share, m.share)):
        seen.clear()
        for idx in var:
            j, t = idx[0], idx[-1]
            check("relaunch_begin", j, seen)
            before = (*idx[:-1], t - 1)
            prev = x[before] if before in x.index_set() else 0
            rows += [
                ((name, *idx, "new"), var[idx] >= x[idx] - prev),
                ((name, *idx, "on"), var[idx] <= x[idx]),
            ]
            if not isinstance(prev, int):
                rows.append(((name, *idx, "was"), var[idx] <= 1 - prev))
            begins[j, t].append(var[idx])
            for k in [idx[1]] if name == "p" else shared_config(j, idx[1]):
                config_begins[j, k, t].append(var[idx])
    for j, t in slots:
        jd = d.jobs[j]
        for n, b in enumerate(begins.get((j, t), ())):
            rows.append(((j, t, "any", n), m.relaunched[j, t] >= b))
        rows.append(((j, t, "only"), m.relaunched[j, t] <= sum(begins.get((j, t), ()))))
        rows += _first_start_rows(m, jd, j, t)
    _add(m, "relaunch_begin", rows)

    rows = []
    seen.clear()
    for j, t in slots:
        check("relaunch_overhead", j, seen)
        jd = d.jobs[j]
        lam = lost_fractions(jd)
        running = sum(m.run[j, k, t] for k in range(len(jd.configs)))
        within = [(i, m.relaunched[j, t - i]) for i in range(len(lam)) if t - i >= jd.first_slot]
        for i, r in within:
            rows.append(((j, t, "at_least", i), m.lost[j, t] >= lam[i] * (r + running - 1)))
        rows.append(((j, t, "running"), m.lost[j, t] <= running))
        rows.append(((j, t, "now"), m.lost[j, t] >= lam[0] * m.relaunched[j, t]))
        first = sum(jd.slot_power_cost[k] * m.first_run[j, k, t] for k in range(len(jd.configs)))
        rows.append(((j, t, "first_energy"), m.overhead_cost[j, t] >= lam[0] * first))
        rows.append(((j, t, "relaunched"), m.lost[j, t] <= sum(lam[i] * r for i, r in within)))
        works = {}
        for k in range(len(jd.configs)):
            work = sum(m.work[j, b, k, t] for b in jd.blocks if (j, b, k, t) in m.work_index)
            if not isinstance(work, int):
                works[k] = work
                rows.append(((j, t, "work", k), work <= jd.speed[k] * (1 - m.lost[j, t])))
        if works:
            # the slot's time is shared by the configurations that run in it, less the
            # overhead; summed over configurations this binds where run is fractional
            used = sum(w / jd.speed[k] for k, w in works.items())
            rows.append(((j, t, "work_all"), used <= running - m.lost[j, t]))
        survival = _survival_before(m, jd, j, t)
        for k, work in works.items():
            news = list(config_begins.get((j, k, t), ()))
            if t > jd.first_slot:
                news.append(m.run[j, k, t] - m.run[j, k, t - 1])
            for n, new in enumerate(news):
                rows.append(
                    ((j, t, "work_k", k, n), work <= jd.speed[k] * (m.run[j, k, t] - lam[0] * new))
                )
        charges = []
        for k in range(len(jd.configs)):
            news = list(config_begins.get((j, k, t), ()))
            if t > jd.first_slot:
                news.append(m.run[j, k, t] - m.run[j, k, t - 1])
            split = [m.start_block[j, k, t, b] for b in jd.blocks]
            for n, new in enumerate(news):
                rows.append(((j, t, "start_k", k, n), sum(split) >= new))
            charges += [_start_charge(jd, k, b) * split[b] for b in jd.blocks]
        for b in jd.blocks:
            pending = _in_progress(m, jd, j, t, b)
            rows += [
                ((j, t, "start_block", k, b), m.start_block[j, k, t, b] <= pending)
                for k in range(len(jd.configs))
            ]
        rows.append(((j, t, "energy_start"), m.overhead_cost[j, t] >= sum(charges)))
        for k in range(len(jd.configs)):
            for i, r in within:
                charge = jd.slot_power_cost[k] * lam[i]
                rows.append(
                    (
                        (j, t, "energy", k, i),
                        m.overhead_cost[j, t] >= charge * (r + m.run[j, k, t] + survival - 2),
                    )
                )
    _add(m, "relaunch_overhead", rows)


def _first_start_rows(m: pyo.ConcreteModel, jd: JobData, j: str, t: int) -> list[tuple[Any, Any]]:
    """A relaunch only while running, and ``ever`` and ``first_run`` of job ``j`` in slot
    ``t`` (see the module's cuts)."""
    ks = range(len(jd.configs))
    running = sum(m.run[j, k, t] for k in ks)
    firsts = sum(m.first_run[j, k, t] for k in ks)
    before = m.ever[j, t - 1] if t > jd.first_slot else 0
    rows = [
        ((j, t, "on_run"), m.relaunched[j, t] <= running),
        ((j, t, "ever"), m.ever[j, t] == before + firsts),
        ((j, t, "ever_run"), m.ever[j, t] >= running),
        ((j, t, "first_relaunch"), m.relaunched[j, t] >= firsts),
        *(((j, t, "first_k", k), m.first_run[j, k, t] <= m.run[j, k, t]) for k in ks),
    ]
    if t == jd.last_slot and math.fsum(jd.lengths) > 0:
        m.ever[j, t].fix(1)  # a job with epochs to run starts within the horizon
    return rows


def _start_charge(jd: JobData, k: int, b: int) -> float:
    """The expected energy of the overhead a relaunch on ``k`` loses in its own slot
    while block ``b`` is in progress: ``b_k λ_0 q_b``."""
    return jd.slot_power_cost[k] * lost_fractions(jd)[0] * jd.survival[b]


def _in_progress(m: pyo.ConcreteModel, jd: JobData, j: str, t: int, b: int) -> Any:
    """1 if block ``b`` is the job's block in progress at the start of slot ``t``:
    blocks before it complete by the end of slot ``t - 1``, ``b`` not."""
    if t <= jd.first_slot:
        return 1 if b == 0 else 0
    before = m.done[j, b - 1, t - 1] if b > 0 else 1
    return before - m.done[j, b, t - 1]


def _survival_before(m: pyo.ConcreteModel, jd: JobData, j: str, t: int) -> Any:
    """``P(N > w)`` for the progress ``w`` at the start of slot ``t``: ``q_b`` of the
    first block not complete by the end of slot ``t - 1`` (0 once all are)."""
    if t <= jd.first_slot:
        return 1.0
    q = (*jd.survival, 0.0)
    return q[0] - sum((q[b] - q[b + 1]) * m.done[j, b, t - 1] for b in jd.blocks)


def overhead_cost(m: pyo.ConcreteModel) -> Any:
    """The overhead's expected energy cost (0 in a model without overhead)."""
    if not hasattr(m, "overhead_cost"):
        return 0
    return sum(m.overhead_cost[i] for i in m.overhead_cost)


def lost_values(m: pyo.ConcreteModel, d: MilpData, j: str) -> dict[int, float]:
    """For a MIP start: set ``begin_*``, ``relaunched`` and ``lost`` of job ``j`` from
    its ``run``/``place``/``share`` values; returns the lost fraction per slot."""
    jd = d.jobs[j]
    if jd.relaunch <= 0:
        return {}
    lam = lost_fractions(jd)
    relaunched: dict[int, float] = {}
    for var, x in ((m.begin_place, m.place), (m.begin_share, m.share)):
        for idx in var:
            if idx[0] != j:
                continue
            before = (*idx[:-1], idx[-1] - 1)
            prev = (x[before].value or 0) > ON if before in x.index_set() else False
            new = 1.0 if (x[idx].value or 0) > ON and not prev else 0.0
            var[idx].set_value(new)
            relaunched[idx[-1]] = max(relaunched.get(idx[-1], 0.0), new)
    lost: dict[int, float] = {}
    ever = 0.0
    for t in d.slot_range(j):
        m.relaunched[j, t].set_value(relaunched.get(t, 0.0))
        runs = any((m.run[j, k, t].value or 0) > ON for k in range(len(jd.configs)))
        for k in range(len(jd.configs)):
            first = ever == 0.0 and (m.run[j, k, t].value or 0) > ON
            m.first_run[j, k, t].set_value(1.0 if first else 0.0)
        ever = 1.0 if runs else ever
        if not m.ever[j, t].fixed:
            m.ever[j, t].set_value(ever)
        hits = [lam[i] for i in range(len(lam)) if relaunched.get(t - i, 0.0) > ON]
        lost[t] = max(hits) if runs and hits else 0.0
        m.lost[j, t].set_value(lost[t])
    return lost


def overhead_values(m: pyo.ConcreteModel, d: MilpData, j: str) -> None:
    """For a MIP start, once ``done`` is set: ``overhead_cost`` of job ``j``."""
    jd = d.jobs[j]
    if jd.relaunch <= 0:
        return
    lam = lost_fractions(jd)
    for t in d.slot_range(j):
        s = pyo.value(_survival_before(m, jd, j, t))
        relaunched = (m.relaunched[j, t].value or 0) > ON
        best = 0.0  # the split relaunch charge, then the rows of earlier relaunches
        for k in range(len(jd.configs)):
            start = relaunched and (m.run[j, k, t].value or 0) > ON
            for b in jd.blocks:
                on = start and pyo.value(_in_progress(m, jd, j, t, b)) > ON
                m.start_block[j, k, t, b].set_value(1.0 if on else 0.0)
                best += _start_charge(jd, k, b) * on
        for k in range(len(jd.configs)):
            run = m.run[j, k, t].value or 0
            for i in range(len(lam)):
                if t - i >= jd.first_slot:
                    r = m.relaunched[j, t - i].value or 0
                    best = max(best, jd.slot_power_cost[k] * lam[i] * (r + run + s - 2))
        m.overhead_cost[j, t].set_value(best)
