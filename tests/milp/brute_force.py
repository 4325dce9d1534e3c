"""Brute-force enumeration of slot-aligned plans on tiny instances (one node), for the
MILP's exactness test. Costs come from the evaluator: each job's cost depends on its own
segments only, so jobs are enumerated separately and combined under the node's capacity
by branch and bound."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import replace

import pytest

from instances import Config, Instance, Plan, Segment
from milp import SolutionStatus, solve
from milp.data import milp_data
from milp.result import Result
from validation.evaluate import evaluate

Schedule = tuple[Config | None, ...]  # configuration per slot, from slot 0


def job_schedules(inst: Instance, job_id: str, slots: int) -> Iterator[Schedule]:
    """Every slot-by-slot choice (idle or a configuration) that completes the job by the
    horizon and runs nothing after completion. A slot on another configuration than the
    slot before (or after idling) relaunches the job: its overhead comes first."""
    assert inst.slot is not None
    slot = inst.slot
    job = inst.job(job_id)
    first = math.ceil(job.release / slot - 1e-9)
    configs = inst.allowed_configs(job)
    tau = {c: inst.epoch_time(job, c) for c in configs}
    top = max(slot / t for t in tau.values())
    E = job.max_epochs
    delta = inst.relaunch(job)

    def rec(
        t: int, done: float, prefix: tuple[Config | None, ...], left: float
    ) -> Iterator[Schedule]:
        if done >= E - 1e-9 * E:
            yield prefix + (None,) * (slots - t)
            return
        if t == slots or done + (slots - t) * top < E - 1e-9 * E:
            return
        for c in (None, *configs):
            if c is None:
                yield from rec(t + 1, done, (*prefix, c), 0.0)
                continue
            ov = left if prefix and prefix[-1] == c else delta
            lost = min(ov, slot)
            yield from rec(t + 1, done + (slot - lost) / tau[c], (*prefix, c), ov - lost)

    yield from rec(first, 0.0, (None,) * first, 0.0)


def _segments(inst: Instance, job_id: str, sched: Schedule, gpus_of) -> list[Segment]:
    assert inst.slot is not None
    return [
        Segment(t * inst.slot, (t + 1) * inst.slot, job_id, c, gpus_of(t, c))
        for t, c in enumerate(sched)
        if c is not None
    ]


def _fits(inst: Instance, chosen: dict[str, Schedule], slots: int) -> bool:
    (node,) = inst.nodes
    mem = inst.gpu(node.gpu_type).memory_gb
    for t in range(slots):
        exclusive = sum(s[t].gpus for s in chosen.values() if s[t] is not None and not s[t].shared)
        tenants = sorted(
            (inst.job(j).memory_gb for j, s in chosen.items() if s[t] is not None and s[t].shared),
            reverse=True,
        )
        if exclusive + _shared_gpus(tenants, mem, inst.max_share) > node.num_gpus:
            return False
        running = [s[t] for s in chosen.values() if s[t] is not None]
        if node.cpu_cores is not None and sum(c.cpus or 0 for c in running) > node.cpu_cores:
            return False
        if node.dram_gb is not None and sum(c.dram_gb or 0 for c in running) > node.dram_gb:
            return False
    return True


def _shared_gpus(mems: list[float], cap: float, k: int) -> int:
    """Fewest GPUs holding these tenants (exhaustive: there are at most a few)."""
    for g in range(len(mems) + 1):
        for assign in itertools.product(range(g), repeat=len(mems)):
            load = [0.0] * g
            count = [0] * g
            for m, a in zip(mems, assign, strict=True):
                load[a] += m
                count[a] += 1
            if all(x <= cap + 1e-9 for x in load) and all(c <= k for c in count):
                return g
    return len(mems) + 1


def brute_force(inst: Instance, slots: int) -> tuple[float, Plan]:
    """The cheapest slot-aligned plan within ``slots`` slots and its evaluator cost."""
    cost, chosen = cheapest_schedules(inst, slots)
    return cost, _joint_plan(inst, chosen, slots)


def own_cost(inst: Instance, plan: Plan, job_id: str) -> float:
    """The evaluator's total cost of job ``job_id`` under ``plan`` (its row of
    ``Evaluation.by_job``, read from the evaluation's ``JobCost`` rather than through a
    DataFrame: the same float, a sixteenth of the time)."""
    (cost,) = (j for j in evaluate(inst, plan, check=False).jobs if j.job == job_id)
    return cost.total_cost


def _job_options(
    inst: Instance, costed: Instance, slots: int
) -> dict[str, list[tuple[float, Schedule]]]:
    """Per job, every schedule of :func:`job_schedules` with the job's own cost on
    ``costed`` (the instance, or a variant pricing the same jobs), cheapest first."""
    (node,) = inst.nodes

    def dummy(t: int, c: Config) -> tuple:
        return tuple((node.id, g) for g in range(1 if c.shared else c.gpus))

    options: dict[str, list[tuple[float, Schedule]]] = {}
    for job in inst.jobs:
        rows = []
        for sched in job_schedules(inst, job.id, slots):
            plan = Plan.of(_segments(inst, job.id, sched, dummy))
            rows.append((own_cost(costed, plan, job.id), sched))
        rows.sort(key=lambda r: r[0])
        options[job.id] = rows
    return options


def cheapest_schedules(inst: Instance, slots: int) -> tuple[float, dict[str, Schedule]]:
    """The cheapest schedules, one per job, that fit the node together slot by slot
    (tenants packed onto GPUs exhaustively), and their cost. Without relaunch overheads
    it is the optimum whatever GPU ids a plan gives them; :func:`_joint_plan` gives ids
    by first fit, which may fail to pack three or more tenants."""
    options = _job_options(inst, inst, slots)
    ids = list(options)
    best: list[float | dict[str, Schedule] | None] = [math.inf, None]
    floor = [sum(options[j][0][0] for j in ids[i:]) for i in range(len(ids) + 1)]

    def rec(i: int, cost: float, chosen: dict[str, Schedule]) -> None:
        if cost + floor[i] >= best[0] - 1e-12:  # type: ignore[operator]
            return
        if i == len(ids):
            best[0], best[1] = cost, dict(chosen)
            return
        for c, sched in options[ids[i]]:
            if cost + c + floor[i + 1] >= best[0] - 1e-12:  # type: ignore[operator]
                break
            chosen[ids[i]] = sched
            if _fits(inst, chosen, slots):
                rec(i + 1, cost + c, chosen)
            del chosen[ids[i]]

    rec(0, 0.0, {})
    assert best[1] is not None, "no feasible plan within the horizon"
    return float(best[0]), best[1]  # type: ignore[return-value]


def _joint_plan(inst: Instance, chosen: dict[str, Schedule], slots: int) -> Plan:
    """GPU ids for the chosen schedules, slot by slot (first fit)."""
    (node,) = inst.nodes
    mem = inst.gpu(node.gpu_type).memory_gb
    segs = []
    assert inst.slot is not None
    held: dict[str, tuple] = {}  # each job's GPUs in the slot before
    for t in range(slots):
        free = list(range(node.num_gpus))
        shared: list[tuple[int, float, int]] = []  # (gpu, memory used, tenants)
        # a job on the configuration it ran in the slot before keeps its GPUs (as the
        # per-job costs assume: no relaunch); the others fit around them
        keep = {
            j: held[j]
            for j, s in chosen.items()
            if t > 0 and s[t] is not None and s[t] == s[t - 1] and j in held
        }
        for j, gpus in keep.items():
            c = chosen[j][t]
            assert c is not None
            if c.shared:
                (g,) = (i for _, i in gpus)
                hit = next((k for k, x in enumerate(shared) if x[0] == g), None)
                m = inst.job(j).memory_gb
                if hit is None:
                    free.remove(g)
                    shared.append((g, m, 1))
                else:
                    shared[hit] = (g, shared[hit][1] + m, shared[hit][2] + 1)
            else:
                for _, i in gpus:
                    free.remove(i)
        now: dict[str, tuple] = dict(keep)
        for j, s in sorted(
            chosen.items(), key=lambda kv: (kv[1][t] is None or kv[1][t].shared, kv[0])
        ):
            c = s[t]
            if c is None or j in keep:
                continue
            if c.shared:
                m = inst.job(j).memory_gb
                for i, (g, used, n) in enumerate(shared):
                    if used + m <= mem + 1e-9 and n < inst.max_share:
                        shared[i] = (g, used + m, n + 1)
                        gpus = ((node.id, g),)
                        break
                else:
                    g = free.pop(0)
                    shared.append((g, m, 1))
                    gpus = ((node.id, g),)
            else:
                gpus = tuple((node.id, free.pop(0)) for _ in range(c.gpus))
            now[j] = gpus
        for j, gpus in now.items():
            c = chosen[j][t]
            segs.append(Segment(t * inst.slot, (t + 1) * inst.slot, j, c, gpus))
        held = now
    return Plan.of(segs)


def joint_brute_force(inst: Instance, slots: int) -> tuple[float, Plan]:
    """The cheapest slot-aligned plan where a plan's cost is not a sum over its jobs
    (idle power: the cluster is powered until the last job completes). Each job's own
    cost, which leaves the cluster's idle energy out, is a lower bound on its share, so
    combinations are enumerated cheapest first and pruned by it; every complete one is
    costed whole by the evaluator. Two jobs at most (``_joint_plan`` packs tenants by
    first fit)."""
    assert len(inst.jobs) <= 2
    # a job's own cost leaves the cluster's energy out: costed on the nodes without
    # their own power (a plan of one job never completes the other, powered for ever)
    plain = inst.replace(
        gpu_types=tuple(replace(g, idle_w=0.0) for g in inst.gpu_types),
        nodes=tuple(replace(n, base_w=0.0) for n in inst.nodes),
    )
    options = _job_options(inst, plain, slots)
    ids = list(options)
    best: list = [math.inf, None]
    floor = [sum(options[j][0][0] for j in ids[i:]) for i in range(len(ids) + 1)]

    def rec(i: int, cost: float, chosen: dict[str, Schedule]) -> None:
        if i == len(ids):
            plan = _joint_plan(inst, chosen, slots)
            whole = evaluate(inst, plan).total_cost
            if whole < best[0]:
                best[0], best[1] = whole, plan
            return
        for c, sched in options[ids[i]]:
            if cost + c + floor[i + 1] >= best[0] - 1e-12:
                break
            chosen[ids[i]] = sched
            if _fits(inst, chosen, slots):
                rec(i + 1, cost + c, chosen)
            del chosen[ids[i]]

    rec(0, 0.0, {})
    assert best[1] is not None, "no feasible plan within the horizon"
    return float(best[0]), best[1]


def solved_at_brute_force(inst: Instance, slots: int) -> tuple[float, Result]:
    """Solve ``inst`` on ``slots`` slots and check it against the brute force: the
    brute-force plan costs what it claims by the evaluator, HiGHS proves the same
    optimum, the evaluator's cost of HiGHS's plan is its own objective, and the
    capacity relaxation is below the optimum. The optimum and the solve's result."""
    best, plan = brute_force(inst, slots)
    assert evaluate(inst, plan).total_cost == pytest.approx(best, rel=1e-9)
    res = solve(inst, slots=slots, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert res.objective == pytest.approx(res.solver_objective, rel=1e-6, abs=1e-9)
    assert milp_data(inst, slots).separable_bound() <= best + 1e-12
    return best, res
