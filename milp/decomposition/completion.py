"""A lower bound on what a job still costs, from any slot and progress, at given prices:
the backward dynamic program of a relaxation, on a grid of progress.

What is left to pay from progress ``w`` splits into ``A(w)``, every epoch left at the
job's cheapest cost per epoch with its survival (exact, no grid), and the *excess*: each
slot's epochs at what their configuration costs above the cheapest, the prices of what
it holds and the tardiness of the stops it reaches. The excess is bounded on a grid of
progress, for a relaxation that drops the relaunch overhead (a slot always makes its
full progress, and pays no overhead energy) and lets each slot take the cheapest
placement of its configuration. Every real schedule has a relaxed copy that costs no
more, and more progress never costs more excess later (the same continuation does the
same slots on later epochs, of no higher survival, completes no later and holds no
more). So the relaxed excess at progress ``w`` is at least its value at the next grid
point ``g >= w``; a grid value is computed from the next slot's value at the grid point
at or above where the slot ends, so by induction every grid value is at most the true
relaxed excess there. The grid's steps are at most a quarter of the job's slowest
progress per slot where ``grid`` allows: the rounding up gives a slot at most one step
more.

**Relaunches that must be paid.** The relaxation drops a switch's overhead but not a
start's: it has two states, *running* (the slot before ran: the next may run any
configuration at full progress, as if it continued) and *idle* (the job has not run
yet or paused: running again relaunches, and the first slot loses ``min(delta, slot)``
hours of progress and pays their energy, ``opower * lost / slot`` times the survival
at the grid point, no more than at the true progress). Every real schedule pays at
least that on each start after an idle slot, and at most full progress with no
overhead when it continues or switches, so its relaxed copy still costs no more; the
monotony in progress holds in each state (the survival only falls). Every heuristic
round's Lagrangian bound is these bounds summed, and a job whose bound meets its best
column is not priced: on the overloaded 20-job real-data instance (overheads of 15-250
s on 0.25 h slots), at the prices of a late exact round, 7 of the 20 jobs' bounds now
meet the heuristic's schedule (none before), so they need no pricing (one of them took
7.3 million labels and 58 s of CPU to price exactly); the sum rose from 29.58 to 29.74.

**Prices by the slot.** Where a kWh costs ``pi_t`` in slot ``t`` (a price or carbon
series), an epoch in slot ``t`` costs ``e_k pi_t``, so no epoch run in slot ``t`` or
later costs less than the *floor* ``f_t = min_k e_k * min_{s >= t} pi_s`` (the least
kWh per epoch at the least price of the slots left; it rises with ``t``). The bound
from slot ``t`` is then ``f_t`` times the epochs left (exact) plus an excess over
``f_t``: a slot's kWh at its own price, less ``f_t`` per epoch it runs, plus the
floor's rise ``f_{t+1} - f_t`` times the epochs still left after it (those are paid
from ``t + 1`` on, at ``f_{t+1}`` at least), and idling a slot costs that rise times
the epochs left. Every epoch's excess is ``e_k pi_s - f_t >= 0`` for ``s >= t`` (prices
are never negative), so more progress still never costs more excess, and the epochs
left after a slot are counted at the grid point at or above where it ends (fewer, and
the rise is at least 0): each grid value is still at most the true relaxed excess. At
one price the floor is the cheapest cost per epoch in every slot and the rise 0: the
tables and figures are those without prices, to the last digit.

The pricing prunes a partial schedule whose cost plus this bound cannot beat the best
schedule known; its value at the job's first slot with no progress bounds the job's
priced optimum from below, so the Lagrangian bound holds at every round, also where
only the heuristic pricer ran (:mod:`milp.decomposition.colgen`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from milp.decomposition.slots import SlotModel

# grid steps per slot of the slowest configuration (where the grid's cap allows)
STEPS_PER_SLOT = 4


def grid_steps(m: SlotModel, grid: int) -> int:
    """The steps of the job's grid: ``grid`` at most, fewer where a quarter of its
    slowest configuration's progress per slot is coarser (8 at least)."""
    return int(min(grid, max(8, np.ceil(STEPS_PER_SLOT * m.big_e / m.speed.min()))))


@dataclass(frozen=True)
class BySlot:
    """What :class:`Steps` needs where a kWh costs ``price`` in each window slot: the
    slot tables at a price of 1 (expected kWh, overhead included; the expected epochs
    run, ``dphi``; the epochs left at the grid point it ends at, ``left``) and those
    left at each grid point (``left_grid``)."""

    price: np.ndarray  # (W,)
    kwh: np.ndarray  # (2, K, G+1)
    dphi: np.ndarray  # (2, K, G+1)
    left: np.ndarray  # (2, K, G+1)
    left_grid: np.ndarray  # (G+1,)


@dataclass(frozen=True)
class Steps:
    """Price-free tables of the relaxation on ``grid + 1`` progress points, per
    configuration (its first choice stands for it) and per way into the slot (0:
    continuing, 1: relaunching after an idle slot): the slot's excess energy, its
    tardiness weight, whether it completes and the grid point at or above where it
    ends; ``cheapest``, the job's least cost per epoch; ``floor``, per window slot (and
    one past the window), the least cost of an epoch in it or later (``cheapest`` in
    every slot at one price); ``by_slot``, the tables of prices by the slot (``None`` at
    one price: ``energy`` is then the excess of every slot)."""

    grid: int
    cheapest: float
    configs: np.ndarray  # index of the first choice of each configuration
    energy: np.ndarray  # (2, K, G+1)
    crossed: np.ndarray  # (2, K, G+1)
    done: np.ndarray  # (2, K, G+1)
    after: np.ndarray  # (2, K, G+1)
    floor: np.ndarray  # (W+1,)
    by_slot: BySlot | None = None

    @classmethod
    def of(cls, m: SlotModel, grid: int) -> Steps:
        """``grid``: at most this many steps; fewer where a quarter of the slowest
        configuration's progress per slot is coarser."""
        starts = np.flatnonzero(np.r_[True, m.k[1:] != m.k[:-1]])
        grid = grid_steps(m, grid)
        losses = (0.0, min(m.delta, m.slot))
        width = m.last - m.first + 1
        if m.price is None:
            cheapest = float(m.ecost.min())
            ways = [_slot_tables(m, starts, grid, lost, m.ecost, m.opower) for lost in losses]
            cost, dphi, crossed, done, after = (np.stack(t) for t in zip(*ways, strict=True))
            energy = cost - cheapest * dphi
            floor = np.full(width + 1, cheapest)
            return cls(grid, cheapest, starts, energy, crossed, done, after, floor)
        # a kWh's price by the slot: the tables at a price of 1 (kWh), priced per slot
        # by :meth:`excess`; an epoch run in slot t or later costs at least the least
        # kWh per epoch times the least price from t on
        ways = [_slot_tables(m, starts, grid, lost, m.energy, m.kwh) for lost in losses]
        kwh, dphi, crossed, done, after = (np.stack(t) for t in zip(*ways, strict=True))
        price = m.window_prices()
        ahead = np.minimum.accumulate(price[::-1])[::-1]
        floor = float(m.energy.min()) * np.append(ahead, ahead[-1])
        points = np.arange(grid + 1) * (m.big_e / grid)
        end = float(m.phi(np.array([m.big_e]))[0])
        left = end - m.phi(after * (m.big_e / grid))
        by_slot = BySlot(price, kwh, dphi, left, end - m.phi(points))
        energy = np.zeros_like(kwh)  # unused: :meth:`excess` prices each slot
        return cls(grid, float(floor[0]), starts, energy, crossed, done, after, floor, by_slot)

    def excess(self, i: int) -> np.ndarray:
        """Window slot ``i``'s excess over the floor, per way in, configuration and grid
        point (see :func:`completion_bound`)."""
        b = self.by_slot
        if b is None:
            return self.energy
        lo, rise = self.floor[i], self.floor[i + 1] - self.floor[i]
        return b.price[i] * b.kwh - lo * b.dphi + rise * b.left

    def waiting(self, i: int, idle: np.ndarray) -> np.ndarray:
        """The excess of idling through window slot ``i`` from each grid point, given
        the next slot's idle row: the floor's rise over the epochs left."""
        b = self.by_slot
        if b is None:
            return idle
        return idle + (self.floor[i + 1] - self.floor[i]) * b.left_grid

    def index(self, m: SlotModel, w: np.ndarray) -> np.ndarray:
        """The grid point at or above each progress ``w``."""
        return np.minimum(self.grid, np.ceil(w * self.grid / m.big_e)).astype(np.int64)

    def remaining(self, m: SlotModel, excess: np.ndarray, t: int, w: np.ndarray) -> np.ndarray:
        """The bound from progress ``w`` at the start of slot ``t``, given that slot's
        row of the excess bound: the epochs left at the floor's cost, plus the larger
        of the excess and the tardiness of the stops left reached at top speed (the
        grid may run ahead of the true progress; this never does)."""
        left = m.phi(np.full_like(w, m.big_e)) - m.phi(w)
        floor = self.floor[t - m.first]
        return floor * left + np.maximum(excess[self.index(m, w)], _top_speed(m, t, w))


def _slot_tables(
    m: SlotModel,
    starts: np.ndarray,
    grid: int,
    lost: float,
    ecost: np.ndarray,
    opower: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One slot on each configuration from each grid point, losing ``lost`` hours to
    a relaunch, its epochs and power at ``ecost`` and ``opower``: energy (overhead
    energy included), expected epochs run, tardiness weight, completion and the grid
    point at or above where it ends, each (K, G+1)."""
    g = np.arange(grid + 1) * (m.big_e / grid)
    n_k = len(starts)
    w = np.tile(g, n_k)
    choice = np.repeat(starts, grid + 1)
    # slot -1: never late; the cost is energy, the overhead's included
    w1, cost, done = m.advance(-1, w, choice, np.full_like(w, lost), ecost, opower)
    dphi = m.phi(w1) - m.phi(w)
    after = np.where(done, grid, np.ceil(w1 * grid / m.big_e)).astype(np.int64)
    after = np.minimum(after, grid)
    # a stop counts as reached once the grid passes it: never later than truly
    reach = after * (m.big_e / grid)
    e = m.stops
    crossed = ((w[:, None] < e - 1e-12) & (e - 1e-12 <= reach[:, None] + 1e-12)) @ m.late
    done = after == grid
    shape = (n_k, grid + 1)
    parts = (cost, dphi, crossed, done, after)
    return tuple(a.reshape(shape) for a in parts)  # type: ignore[return-value]


def _top_speed(m: SlotModel, t: int, w: np.ndarray) -> np.ndarray:
    """The tardiness of the stops not yet reached, each reached as soon as the fastest
    configuration can from progress ``w`` at the start of slot ``t``."""
    if len(w) == 0 or (t + np.ceil((m.big_e - w.min()) / m.speed.max())) * m.slot <= m.due:
        return np.zeros(len(w))  # even the label furthest behind is on time at top speed
    ahead = m.stops[None, :] - w[:, None]
    slots = np.ceil(ahead / m.speed.max() - 1e-9)
    late = np.maximum(0.0, (t + slots) * m.slot - m.due)
    return m.omega * (np.where(ahead > 1e-12, late, 0.0) @ m.late)


def completion_bound(m: SlotModel, steps: Steps, price: np.ndarray) -> np.ndarray:
    """``H[s, i, g]``: a lower bound on the excess cost (over the floor of window slot
    ``i``), prices included, of finishing the job from the start of slot ``m.first + i``
    at grid progress ``g``, having run the slot before (``s = 0``) or not (``s = 1``:
    its next run relaunches). Row ``i = last - first + 1``: after the window, infinite
    unless complete (see the module's docstring). ``price``: choices x window slots."""
    width = m.last - m.first + 1
    cheapest = np.minimum.reduceat(price, steps.configs, axis=0)  # (K, W)
    out = np.full((2, width + 1, steps.grid + 1), np.inf)
    out[:, :, steps.grid] = 0.0
    for i in range(width - 1, -1, -1):
        out[:, i] = _slot(m, steps, i, cheapest[:, i], out[0, i + 1], out[1, i + 1])
    return out


def alone_bound(m: SlotModel, steps: Steps) -> float:
    """The job's cost alone from its first slot, not started, at no prices, bounded from
    below as :func:`completion_bound` bounds it but keeping one slot's rows at a time
    (so ``steps`` may have a far finer grid than the pricing's). Prices are never
    negative, so every pricing's optimum is at least this."""
    running = np.full(steps.grid + 1, np.inf)
    running[steps.grid] = 0.0
    idle = running.copy()
    none = np.zeros(len(steps.configs))
    for i in range(m.last - m.first, -1, -1):
        running, idle = _slot(m, steps, i, none, running, idle)
    return float(steps.remaining(m, idle, m.first, np.zeros(1))[0])


def _slot(
    m: SlotModel,
    steps: Steps,
    i: int,
    cheapest: np.ndarray,
    running: np.ndarray,
    idle: np.ndarray,
) -> np.ndarray:
    """Row ``i`` of the table, both states, from row ``i + 1``'s (``running``,
    ``idle``) and each configuration's least price in the slot (``cheapest``, (K,))."""
    t = m.first + i
    late = m.omega * max(0.0, (t + 1) * m.slot - m.due)
    cand = steps.excess(i)  # the terms that are 0 skipped: the same floats, sooner
    if late > 0:
        cand = cand + late * steps.crossed
    if cheapest.any():
        cand = cand + cheapest[None, :, None]
    # a slot that completes the job ends at the last grid point, whose value is 0
    cand = cand + running[steps.after]
    out = np.minimum(steps.waiting(i, idle)[None, :], cand.min(axis=1))  # idle, or run a slot
    out[:, steps.grid] = 0.0
    return out
