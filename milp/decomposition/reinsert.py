"""Plans by exact re-insertion: each job taken out of the plan and priced again.

A plan is one column per job. Taken out, a job leaves the others' columns holding what
they hold in every slot (:class:`Room`); the arcs (choice, slot) where one more tenant
fits beside them are the master's integer rows read for that job alone: the GPUs of a
node (with one per shared label in use), a label's tenants, memory and link rows (a
label not yet in use takes a GPU of its node), the node's cores and DRAM. Priced at its
true cost on those arcs only (no duals; the others' arcs at infinity), the pricing
program of :mod:`milp.decomposition.pricing` gives the job's cheapest schedule beside
the others: its *best response*. Where that is cheaper than its column, the plan is
cheaper by the difference (the master is exact: a column's cost is its job's cost in
any plan that holds it, :mod:`milp.decomposition.space`).

:func:`reinsert` runs best responses job by job, dearest first, until a whole pass
changes nothing (a plan no single job can improve alone). :func:`eject` then takes out
a few jobs at once and puts them back one by one, each by its best response below what
is left of their old cost (ruin and recreate; Shaw 1998, Schrimpf et al. 2000): a job
is drawn with weight its cost above its cheapest schedule alone (one at that cost
cannot gain), the jobs holding the arcs of that schedule are taken out with it, and the
job goes back first. A move is kept only where the jobs cost less in all.

Measured on the contended 100-job window of ``scale_gaps`` from the STS plan (84.11):
single-job passes to 77.61 in 20 s (six passes), ejections to 76.40 in 60 s more; the
whole solve's plan in 600 s was 80.11 before this step (docs/benchmarks.md). The
ejections' best responses keep up to ``EJECT_BUDGET`` labels, 16 times the passes': a
long job's exact pricing beside the others ran out of the passes' budget before it
found anything below its column, and the moves that gain most move long jobs (from the
improved STS plan, 300 s: 71.38 with the passes' budget, 65.59 with this one).

Every arc a reduced-cost fixing removed stays removed: it is in no plan cheaper than the
incumbent, and only cheaper plans are kept here.
"""

from __future__ import annotations

import math
import time

import numpy as np

from milp.decomposition.columns import Column, make_column
from milp.decomposition.completion import completion_bound
from milp.decomposition.oracle import Oracle
from milp.decomposition.pricing import Job, price_jobs
from milp.decomposition.search import Incumbent
from milp.decomposition.space import LINK, MEMORY, TENANTS, Label, Space

# labels a job may keep in one exact re-insertion in the passes: the rounds' exact budget
BUDGET = 200_000
# and in the ejections, where a long job's best response decides whether a move is kept:
# on the contended 100-job window, from its improved STS plan (80.28 on the slot grid),
# 300 s of re-insertion (the passes: 74.41 in 28 s; then ejections) stood at 71.38 with
# 200,000 labels (about 370 draws), 67.04 with 800,000 (178 draws), 65.59 with 3,200,000
# (65) and 68.75 with 12,800,000 (58, each draw too slow); a long job's exact best
# response found nothing below its column within 200,000 labels, and most moves that
# gain much move one; scratch runs of 2026-11-28, docs/benchmarks.md
EJECT_BUDGET = 3_200_000
# labels per state of the heuristic pricing where it runs out (the rounds' beam)
BEAM = 4
# at most this many jobs taken out with the one drawn in an ejection
EJECTED = 3
# ejections stop after this many draws a job in a row without a move kept (on the
# contended 100-job window the three moves kept came within 500 draws, none in the
# 2,900 after; a small instance's search should not wait for its deadline)
PATIENCE = 10
_TOL = 1e-9


class Room:
    """What a plan's columns hold, resource x slot, and where one more job fits."""

    def __init__(self, space: Space, columns: list[Column]) -> None:
        self.space = space
        self.load = np.zeros((len(space.resources), space.d.slots))
        inst = space.instance
        # per resource, what one tenant may bring it to (a label's rows as if in use)
        limit = space.capacity.copy()
        for r, res in enumerate(space.resources):
            if res.kind == TENANTS:
                limit[r] = inst.max_share
            elif res.kind == LINK:
                limit[r] = 1.0
            elif res.kind == MEMORY:
                limit[r] = inst.gpu(inst.node(res.node).gpu_type).memory_gb
        self.limit = limit
        self.label_gpu = np.array([lab.gpu for lab in space.labels], dtype=np.int64)
        self.label_tenants = np.array([lab.tenants for lab in space.labels], dtype=np.int64)
        # each shared label by its node and number, made once (the ejections' hot loop
        # reads it too)
        self.label_at = {(lab.node, lab.u): lab for lab in space.labels}
        self._shared = [_shared_rows(space, j, self.label_at) for j in range(len(space.jobs))]
        # every choice holds a GPU or a label's tenants: no empty row for ``reduceat``
        assert all((np.diff(js.usage.indptr) > 0).all() for js in space.jobs)
        for col in columns:
            self.add(col)

    def add(self, col: Column, sign: float = 1.0) -> None:
        r, t, a = col.entries(self.space)
        np.add.at(self.load, (r, t), sign * a)

    def remove(self, col: Column) -> None:
        self.add(col, -1.0)

    def fits(self, j: int, first: int, last: int) -> np.ndarray:
        """Job ``j``'s choices x slots ``first..last``: whether the choice fits there
        beside what the room holds (the job itself taken out)."""
        usage = self.space.jobs[j].usage
        load = self.load[:, first : last + 1]
        # a node's GPUs hold its exclusive tenants and one per shared label in use
        in_use = load[self.label_tenants] > _TOL
        gpus = np.zeros_like(load)
        np.add.at(gpus, self.label_gpu, in_use)
        held = load + gpus
        rows, amounts = usage.indices, usage.data
        ok = held[rows] + amounts[:, None] <= self.limit[rows][:, None] + _TOL
        fit = np.logical_and.reduceat(ok, usage.indptr[:-1], axis=0)
        choices, tenants, gpu = self._shared[j]
        if len(choices):  # a label not yet in use takes a GPU of its node
            fresh = held[gpu] + 1.0 <= self.limit[gpu][:, None] + _TOL
            fit[choices] &= (load[tenants] > _TOL) | fresh
        return np.asarray(fit)


def _shared_rows(
    space: Space, j: int, label_at: dict[tuple[str, int], Label]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Job ``j``'s shared choices, their labels' tenants rows and their nodes' GPU rows."""
    out: tuple[list[int], list[int], list[int]] = ([], [], [])
    for c, ch in enumerate(space.jobs[j].choices):
        if ch.label >= 0:
            lab = label_at[ch.nodes[0], ch.label]
            out[0].append(c)
            out[1].append(lab.tenants)
            out[2].append(lab.gpu)
    return tuple(np.array(x, dtype=np.int64) for x in out)  # type: ignore[return-value]


def cheapest(
    oracle: Oracle,
    room: Room,
    j: int,
    upper: float,
    budget: int = BUDGET,
    free: bool = False,
    deadline: float | None = None,
) -> Column | None:
    """Job ``j``'s cheapest schedule below ``upper`` on the arcs where it fits beside the
    room (with ``free``, beside nothing), or ``None`` if none is found: exactly within
    the label budget and ``deadline`` (an exact pricing stopped early keeps what it
    found; a large budget takes seconds, which the caller's deadline must hold), else, where
    it ran out of labels before any schedule ended, by the heuristic pricer (``BEAM``
    labels per state), which goes through the window: a long job's exact pricing runs
    out early in it (on the contended 100-job window jobs 37 and 44, 2,159 and 995
    slots), and the job was never re-inserted."""
    m, steps = oracle.models[j], oracle.steps[j]
    if free:
        ok = np.ones((len(oracle.space.jobs[j].choices), m.last - m.first + 1), dtype=bool)
    else:
        ok = room.fits(j, m.first, m.last)
    price = np.where(ok & ~oracle.fixed[j], 0.0, np.inf)
    bound = completion_bound(m, steps, price)
    job = Job(m, steps, price, bound, upper, None, oracle.space.window_charge(j))
    got = price_jobs([job], keep=1, budget=budget, deadline=deadline, stack=oracle.stacks[j])[0]
    found = got.schedules
    late = deadline is not None and time.perf_counter() > deadline
    if not found and not got.complete and not late:  # out of labels before any ended
        found = price_jobs([job], beam=BEAM, keep=1, stack=oracle.stacks[j])[0].schedules
    if not found:
        return None
    start, choices = found[0]
    col = make_column(oracle.space, j, start, choices)
    return col if col.cost < upper else None


def reinsert(
    oracle: Oracle, incumbent: Incumbent, deadline: float | None, budget: int = BUDGET
) -> int:
    """Best responses job by job, dearest first, until a pass changes nothing or the
    deadline; ``incumbent`` improves in place. Returns the columns replaced."""
    if incumbent.columns is None:
        return 0
    cols = {c.job: c for c in incumbent.columns}
    room = Room(oracle.space, incumbent.columns)
    replaced, changed = 0, True
    while changed:
        changed = False
        for j in sorted(cols, key=lambda j: (-cols[j].cost, j)):
            if deadline is not None and time.perf_counter() > deadline:
                _store(incumbent, cols)
                return replaced
            old = cols[j]
            room.remove(old)
            new = cheapest(oracle, room, j, old.cost * (1 - _TOL), budget, deadline=deadline)
            cols[j] = new if new is not None else old
            room.add(cols[j])
            if new is not None:
                replaced += 1
                changed = True
    _store(incumbent, cols)
    return replaced


def eject(
    oracle: Oracle,
    incumbent: Incumbent,
    deadline: float,
    seed: int = 0,
    most: int = EJECTED,
    budget: int = EJECT_BUDGET,
) -> int:
    """Ruin and recreate until the deadline, or ``PATIENCE`` draws a job in a row keep
    nothing (see the module's docstring); ``incumbent`` improves in place. Returns the
    moves kept."""
    if incumbent.columns is None or len(incumbent.columns) < 2:
        return 0
    space = oracle.space
    cols = {c.job: c for c in incumbent.columns}
    room = Room(space, incumbent.columns)
    rng = np.random.default_rng(seed)
    jobs = sorted(cols)
    # each job's cheapest schedule beside nothing (within the budget): the arcs it
    # would take, and what it costs there
    alone: dict[int, Column | None] = {}
    kept = idle = 0
    while time.perf_counter() < deadline and idle < PATIENCE * len(jobs):
        idle += 1
        floor = np.array([_alone_cost(oracle, alone, j) for j in jobs])
        excess = np.maximum(0.0, np.array([cols[j].cost for j in jobs]) - floor)
        if excess.sum() <= _TOL:
            break  # no job costs more than its schedule alone: nothing to gain
        drawn = jobs[int(rng.choice(len(jobs), p=excess / excess.sum()))]
        if drawn not in alone:
            alone[drawn] = cheapest(oracle, room, drawn, math.inf, budget, True, deadline)
            continue  # its weight may have fallen: draw again
        ideal = alone[drawn]
        if ideal is None:
            continue
        out = _holders(room, cols, ideal)
        rng.shuffle(out)
        taken = [drawn, *out[: int(rng.integers(1, most + 1))]]
        if _recreate(oracle, room, cols, taken, budget, deadline):
            kept += 1
            idle = 0
    _store(incumbent, cols)
    return kept


def _alone_cost(oracle: Oracle, alone: dict[int, Column | None], j: int) -> float:
    found = alone.get(j)
    return found.cost if found is not None else float(oracle.own[j])


def _holders(room: Room, cols: dict[int, Column], ideal: Column) -> list[int]:
    """The jobs whose columns hold a resource in a slot where ``ideal`` does (for a
    shared slot, also its node's GPUs, which a label not in use needs one of)."""
    space = room.space
    r, t, _ = ideal.entries(space)
    wanted = set(zip(r.tolist(), t.tolist(), strict=True))
    for slot, c in ideal.slots():
        choice = space.jobs[ideal.job].choices[c]
        if choice.label >= 0:
            wanted.add((room.label_at[choice.nodes[0], choice.label].gpu, slot))
    out = []
    for j, col in cols.items():
        if j == ideal.job:
            continue
        r2, t2, _ = col.entries(space)
        if any(key in wanted for key in zip(r2.tolist(), t2.tolist(), strict=True)):
            out.append(j)
    return out


def _recreate(
    oracle: Oracle,
    room: Room,
    cols: dict[int, Column],
    taken: list[int],
    budget: int,
    deadline: float | None = None,
) -> bool:
    """Take ``taken`` out and put them back in that order, each below what is left of
    their old cost less the bounds of the jobs still to go back; keep the move if it
    costs less."""
    old = [cols[j] for j in taken]
    for col in old:
        room.remove(col)
    left = math.fsum(c.cost for c in old)
    new: list[Column] = []
    for i, j in enumerate(taken):
        rest = math.fsum(float(oracle.own[x]) for x in taken[i + 1 :])
        back = cheapest(
            oracle, room, j, left - rest - _TOL * max(1.0, left), budget, deadline=deadline
        )
        if back is None:
            break
        new.append(back)
        room.add(back)
        left -= back.cost
    if len(new) == len(taken) and left > 0:
        for col in new:
            cols[col.job] = col
        return True
    for col in new:
        room.remove(col)
    for col in old:
        room.add(col)
    return False


def _store(incumbent: Incumbent, cols: dict[int, Column]) -> None:
    columns = [cols[j] for j in sorted(cols)]
    cost = math.fsum(c.cost for c in columns)
    if cost < incumbent.cost:
        incumbent.columns, incumbent.cost = columns, cost


def improve_by_reinsertion(
    oracle: Oracle, incumbent: Incumbent, deadline: float | None, seed: int = 0
) -> tuple[int, int]:
    """Best responses until no job gains alone, then (with a deadline) ejections until
    it, and best responses after any kept, all within the deadline; ``incumbent``
    improves in place. Returns the columns replaced and the ejections kept."""
    replaced = reinsert(oracle, incumbent, deadline)
    if deadline is None or time.perf_counter() >= deadline:
        return replaced, 0
    kept = eject(oracle, incumbent, deadline, seed)
    if kept:  # (only where the ejections stopped before the deadline)
        replaced += reinsert(oracle, incumbent, deadline)
    return replaced, kept
