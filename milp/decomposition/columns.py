"""Columns: whole single-job schedules on the slot grid, and their exact cost.

A column is a job's choice (:mod:`milp.decomposition.space`) in every slot from
``start`` to its completion slot, or idle (``-1``). Its cost is the evaluator's cost of
that job's segments (docs/model.md, 'Plans and their cost' and 'Relaunch overhead'),
computed here slot by slot with the evaluator's rules: a slot continues the job's
previous one when it runs the same choice in the slot before (the plan keeps its GPUs
there), else it relaunches and the first ``delta_j`` hours make no progress, paid at
the configuration's power with the probability that the job runs past its progress; a
continuation carries what is left of the overhead; epochs cost ``pi * e_c`` times their
survival; completions count at the end of their slot. With prices that change by the
slot (:func:`milp.data.slot_prices`), the epochs and the overhead of slot ``t`` are paid
at slot ``t``'s price of a kWh, carbon included, as the compact MILP pays them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from instances import GpuRef, Plan, PlanError, TardinessMode
from milp.data import JobData
from milp.decomposition.space import JobSpace, Space

TOL_E = 1e-9  # the evaluator's snap of progress to E (relative to max(1, E))
TOL_STOP = 1e-12  # its tolerance on reaching a stopping point


@dataclass(frozen=True)
class Column:
    """Job ``job`` (index in the space) takes ``choices[i]`` in slot ``start + i``
    (``-1``: idle) and completes in the last of them; ``cost`` is the evaluator's."""

    job: int
    start: int
    choices: tuple[int, ...]
    cost: float

    @property
    def end(self) -> int:
        """The completion slot."""
        return self.start + len(self.choices) - 1

    def at(self, t: int) -> tuple[int, ...]:
        """The choice run in slot ``t`` (empty if none)."""
        i = t - self.start
        return (self.choices[i],) if 0 <= i < len(self.choices) and self.choices[i] >= 0 else ()

    def slots(self) -> list[tuple[int, int]]:
        """(slot, choice) of every slot the job runs."""
        return [(self.start + i, c) for i, c in enumerate(self.choices) if c >= 0]

    def entries(self, space: Space) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The master rows it holds: resource, slot and amount, one entry each."""
        js = space.jobs[self.job]
        r, t, a = [], [], []
        for s, c in self.slots():
            for res, amount in js.choices[c].usage:
                r.append(res)
                t.append(s)
                a.append(amount)
        return np.array(r, dtype=np.int64), np.array(t, dtype=np.int64), np.array(a)


def schedule_cost(
    js: JobSpace,
    slot: float,
    mode: TardinessMode,
    start: int,
    choices: Sequence[int],
    charge: np.ndarray | None = None,
) -> float:
    """The evaluator's cost of job ``js`` taking ``choices`` from slot ``start`` on;
    :class:`ValueError` if it does not complete in the last of them. ``charge`` (per
    slot of the horizon, or ``None``): a weight on the probability that the job has not
    completed by each slot's end (:mod:`milp.decomposition.lower`), added."""
    cost, ends = _walk(js, slot, mode, start, choices)
    if charge is None:
        return cost
    return cost + float(np.dot(charge, survival(js, start, ends, len(charge))))


def survival(js: JobSpace, start: int, ends: Sequence[float], slots: int) -> np.ndarray:
    """Per slot of a horizon of ``slots``, the probability that the job has not
    completed by its end, run from ``start`` to the progress ``ends`` at the end of
    each slot of its column: 1 from its first slot to ``start`` (a job not yet run),
    then ``P(N > w)`` at the slot's end, 0 after its completion slot, and 0 before its
    window (where no charge falls). A progress a stop's tolerance short of the stop
    counts it passed: never above the evaluator's survival."""
    dist = js.jd.job.distribution
    out = np.zeros(slots)
    first = js.jd.first_slot
    out[first:start] = dist.beyond(TOL_STOP)
    for i, w in enumerate(ends):
        if start + i < slots:
            out[start + i] = dist.beyond(w + TOL_STOP)
    return out


def column_survival(space: Space, column: Column) -> np.ndarray:
    """Per slot of ``space``'s horizon, the probability that ``column``'s job has not
    completed by the slot's end (:func:`survival`)."""
    js = space.jobs[column.job]
    _, ends = _walk(js, space.d.slot, space.d.tardiness, column.start, column.choices)
    return survival(js, column.start, ends, space.d.slots)


def _walk(
    js: JobSpace, slot: float, mode: TardinessMode, start: int, choices: Sequence[int]
) -> tuple[float, list[float]]:
    """:func:`schedule_cost` without a charge, and the job's progress at the end of each
    slot of its column."""
    jd = js.jd
    job = jd.job
    dist = job.distribution
    big_e = job.max_epochs
    delta = jd.relaunch * slot
    w = 0.0
    cost = 0.0
    prev, left = -1, 0.0
    ends: list[float] = []
    for i, c in enumerate(choices):
        if c < 0:
            prev = -1
            ends.append(w)
            continue
        if c != prev:  # a relaunch: the overhead starts over
            left = delta
        lost = min(left, slot)
        left -= lost
        k = js.choices[c].k
        w1 = min(big_e, w + (slot - lost) * jd.speed[k] / slot)
        if big_e - w1 <= TOL_E * max(1.0, big_e):
            w1 = big_e
        t = start + i
        # the slot's own price of a kWh where it has one (the series are constant
        # within a slot, so the evaluator's integral over the slot is this product)
        cost += jd.epoch_cost(k, t) * (dist.phi(w1) - dist.phi(w))
        if lost > 0:
            cost += jd.power_cost(k, t) * lost / slot * dist.beyond(w)
        late = max(0.0, (t + 1) * slot - job.due)
        cost += jd.omega * late * _crossed(jd, mode, w, w1)
        w, prev = w1, c
        ends.append(w1)
        if w1 >= big_e:
            if i != len(choices) - 1:
                raise ValueError(f"job {job.id!r} completes before the end of its column")
            return cost, ends
    raise ValueError(f"job {job.id!r} does not complete within its column")


def _crossed(jd: JobData, mode: TardinessMode, w0: float, w1: float) -> float:
    """The tardiness weight of the stopping points first reached between ``w0`` and
    ``w1``: the last one's in the worst case, ``P(N = e_b)`` of each in expected mode."""
    dist = jd.job.distribution
    out = 0.0
    for b, (e, p) in enumerate(zip(dist.stops, dist.probabilities, strict=True)):
        if mode == "worst_case" and b != len(dist.stops) - 1:
            continue
        if w0 < e - TOL_STOP <= w1:
            out += 1.0 if mode == "worst_case" else p
    return out


def make_column(space: Space, job: int, start: int, choices: Sequence[int]) -> Column:
    """The column of these choices, its trailing idle slots dropped, costed."""
    choices = tuple(int(c) for c in choices)
    while choices and choices[-1] < 0:
        choices = choices[:-1]
    js = space.jobs[job]
    charge = None if space.charge is None else space.charge[job]
    cost = schedule_cost(js, space.d.slot, space.d.tardiness, start, choices, charge)
    return Column(job, start, choices, cost)


def columns_of_plan(space: Space, plan: Plan) -> list[Column]:
    """A slot-aligned plan of the instance cut into one column per job (a shared GPU
    becomes the label it keeps while it stays in shared mode; a job that stays on a node
    with its configuration is taken to keep its GPUs). :class:`PlanError` if a job's
    segments leave its window or are not on the slot grid."""
    d = space.d
    labels = _labels_of(space, plan)
    out = []
    for j, js in enumerate(space.jobs):
        lookup = {(ch.k, ch.nodes, ch.label): c for c, ch in enumerate(js.choices)}
        per_slot: dict[int, int] = {}
        for seg in plan.for_job(js.id):
            k = js.jd.configs.index(seg.config)
            for t in _slot_range(d.slot, seg.start, seg.end):
                key: tuple[int, tuple[str, ...], int]
                if seg.config.shared:
                    (ref,) = seg.gpus
                    key = (k, (ref[0],), labels[t][ref])
                else:
                    key = (k, tuple(sorted(set(n for n, _ in seg.gpus), key=_order(space))), -1)
                per_slot[t] = lookup[key]
        if not per_slot or min(per_slot) < js.jd.first_slot or max(per_slot) > js.jd.last_slot:
            raise PlanError(f"the plan runs job {js.id!r} outside its slots in the master", ())
        first = min(per_slot)
        choices = [per_slot.get(t, -1) for t in range(first, max(per_slot) + 1)]
        out.append(_completed(space, j, first, choices))
    return out


def _completed(space: Space, job: int, start: int, choices: list[int]) -> Column:
    """The column of a plan's job, cut at the slot in which it completes."""
    col = first_completion(space, job, start, choices)
    if col is None:
        raise PlanError(f"the plan does not complete job {space.jobs[job].id!r}", ())
    return col


def first_completion(space: Space, job: int, start: int, choices: Sequence[int]) -> Column | None:
    """The column of ``choices`` from ``start`` cut at the slot in which the job
    completes (``None`` if it never does)."""
    for end in range(len(choices)):
        if choices[end] < 0:
            continue
        try:
            return make_column(space, job, start, choices[: end + 1])
        except ValueError:
            continue
    return None


def _order(space: Space) -> Callable[[str], int]:
    order = {n.id: i for i, n in enumerate(space.instance.nodes)}
    return lambda n: order[n]


def _slot_range(slot: float, start: float, end: float) -> range:
    a, b = start / slot, end / slot
    if abs(a - round(a)) > 1e-6 or abs(b - round(b)) > 1e-6:
        raise PlanError(f"a segment [{start:g}, {end:g}) h is not on the slot grid", ())
    return range(round(a), round(b))


def _labels_of(space: Space, plan: Plan) -> dict[int, dict[GpuRef, int]]:
    """Per slot, the label of each GPU in shared mode: a GPU keeps its label while it
    stays shared, a new one takes the lowest free label of its node."""
    d = space.d
    uses: dict[int, list[GpuRef]] = defaultdict(list)
    for seg in plan:
        if seg.config.shared:
            for t in _slot_range(d.slot, seg.start, seg.end):
                if seg.gpus[0] not in uses[t]:
                    uses[t].append(seg.gpus[0])
    out: dict[int, dict[GpuRef, int]] = {}
    before: dict[GpuRef, int] = {}
    # only the slots a shared segment runs in (a loop over every slot of a horizon of
    # 10**7 took 1.4 GB): after a slot with none, the labels start afresh
    for t in sorted(k for k in uses if k <= d.slots):
        if t - 1 not in out:
            before = {}
        now = {r: before[r] for r in uses.get(t, []) if r in before}
        for r in sorted(uses.get(t, [])):
            if r not in now:
                taken = {u for g, u in now.items() if g[0] == r[0]}
                now[r] = min(set(range(len(taken) + 1)) - taken)
        if any(u >= d.shared_labels[r[0]] for r, u in now.items()):
            raise PlanError(f"the plan uses more shared GPUs than labels in slot {t}", ())
        out[t] = now
        before = now
    return out
