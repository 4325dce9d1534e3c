"""Many jobs' slot arithmetic side by side, so that the pricing program steps every job
of a round through one slot in one pass of numpy (:mod:`milp.decomposition.pricing`).

Each job's :class:`~milp.decomposition.slots.SlotModel` is laid out flat: its choices
get *global* indices (the jobs' choices one after the other), its stopping points a row
of a table padded with infinite stops of no weight, its completion bound rows and its
prices one flat array each with an offset per job. A label carries its job's index in
the stack and its choice's global index, so every rule below reads the label's own job.
The arithmetic is the single job's, term by term (the progress, the energy by the
survival's integral, the overhead's energy, the tardiness of the stops reached, and the
completion bound), so a stack of one job prices as the job alone does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from milp.decomposition.columns import TOL_E, TOL_STOP
from milp.decomposition.completion import Steps
from milp.decomposition.slots import SlotModel


def _pad(rows: Sequence[np.ndarray], fill: float) -> np.ndarray:
    """Rows of different lengths as one table, padded with ``fill``."""
    width = max(len(r) for r in rows)
    out = np.full((len(rows), width), fill)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


@dataclass(frozen=True)
class Flat:
    """Per job an ascending row of points (``at``), all rows one after the other, keyed
    ``job + 1j * point`` so that one :func:`numpy.searchsorted` over complex numbers
    (ordered by real part, then imaginary: exact, no rounding) finds every label's
    point in its own job's row. ``value`` (and ``slope``) hold a number per point; with
    ``values`` one longer than the points (a count's value, from 0 to all of them),
    the row's ``k``-th count is at ``value[start[j] + j + k]``."""

    at: np.ndarray
    key: np.ndarray
    start: np.ndarray  # each row's first point, and the end
    value: np.ndarray
    slope: np.ndarray

    @classmethod
    def of(
        cls,
        points: Sequence[np.ndarray],
        values: Sequence[np.ndarray],
        slopes: Sequence[np.ndarray] | None = None,
    ) -> Flat:
        at = np.concatenate(points)
        job = np.repeat(np.arange(len(points)), [len(p) for p in points])
        start = np.concatenate([[0], np.cumsum([len(p) for p in points])]).astype(np.int64)
        slope = np.concatenate(slopes) if slopes is not None else np.zeros(0)
        return cls(at, job + 1j * at, start, np.concatenate(values), slope)

    def below(self, job: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The index of the last point of each label's row at or below ``w`` (the row's
        start less one if none is)."""
        return np.searchsorted(self.key, job + 1j * w, side="right") - 1


def _prices(ms: Sequence[SlotModel]) -> dict[str, np.ndarray | None]:
    """The stack's per-slot price fields (none where every job has one price; the jobs
    of one instance share its series)."""
    priced = [m.price is not None for m in ms]
    if not any(priced):
        return {}
    if not all(priced):
        raise ValueError("a stack mixes jobs at one price with jobs priced by the slot")
    rate = np.zeros((len(ms), max(m.last - m.first + 1 for m in ms) + 1))
    for j, m in enumerate(ms):
        rate[j, : m.last - m.first + 1] = m.window_prices()
    return {
        "energy": np.concatenate([m.energy for m in ms]),
        "kwh": np.concatenate([m.kwh for m in ms]),
        "top_kwh": np.array([float(m.kwh.max()) for m in ms]),
        "rate": rate,
    }


@dataclass(frozen=True)
class Stack:
    """Per job (index ``j`` in the stack) its scalars as arrays, per global choice its
    job, configuration speed and energy costs, and the padded stop tables."""

    models: tuple[SlotModel, ...]
    slot: float
    coff: np.ndarray  # first global choice of each job
    job_of: np.ndarray  # job of each global choice
    speed: np.ndarray
    ecost: np.ndarray
    opower: np.ndarray
    big_e: np.ndarray  # per job
    delta: np.ndarray
    positions: np.ndarray
    omega: np.ndarray
    due: np.ndarray
    first: np.ndarray
    width: np.ndarray
    top: np.ndarray  # the fastest configuration's epochs per slot
    dearest: np.ndarray  # the dearest configuration's energy cost of a whole slot
    stops: np.ndarray  # (jobs, B), +inf padded
    late: np.ndarray  # (jobs, B), 0 padded
    stop_weight: np.ndarray  # (jobs, B): P(N = e_b), 0 padded
    phi_end: np.ndarray  # Phi(E) per job
    knot: Flat  # 0 and the stops, with Phi there and its slope after
    stop: Flat  # the stops, with P(N > w) once that many are passed
    reach: Flat  # the stops less the evaluator's tolerance, with the tardiness weights summed
    # prices by the slot (None: every job at its one price, the costs above): per global
    # choice kWh per epoch and per slot, per job the largest kWh of a slot, and the
    # price of a kWh in each window slot (jobs, widest window + 1; 0 past a window)
    energy: np.ndarray | None = None
    kwh: np.ndarray | None = None
    top_kwh: np.ndarray | None = None
    rate: np.ndarray | None = None

    @classmethod
    def of(cls, models: Sequence[SlotModel]) -> Stack:
        ms = tuple(models)
        sizes = np.array([len(m.speed) for m in ms])
        coff = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        knots = [m.knots for m in ms]
        slopes = [np.append(np.diff(m.phi_knots) / np.diff(m.knots), 0.0) for m in ms]
        cum = [np.concatenate([[0.0], np.cumsum(m.late)]) for m in ms]
        return cls(
            models=ms,
            slot=ms[0].slot,
            coff=coff,
            job_of=np.repeat(np.arange(len(ms)), sizes),
            speed=np.concatenate([m.speed for m in ms]),
            ecost=np.concatenate([m.ecost for m in ms]),
            opower=np.concatenate([m.opower for m in ms]),
            big_e=np.array([m.big_e for m in ms]),
            delta=np.array([m.delta for m in ms]),
            positions=np.array([m.positions for m in ms], dtype=np.int64),
            omega=np.array([m.omega for m in ms]),
            due=np.array([m.due for m in ms]),
            first=np.array([m.first for m in ms], dtype=np.int64),
            width=np.array([m.last - m.first + 1 for m in ms], dtype=np.int64),
            top=np.array([float(m.speed.max()) for m in ms]),
            dearest=np.array([float(m.opower.max()) for m in ms]),
            stops=_pad([m.stops for m in ms], np.inf),
            late=_pad([m.late for m in ms], 0.0),
            stop_weight=_pad([m.q - np.append(m.q[1:], 0.0) for m in ms], 0.0),
            phi_end=np.array([m.phi_knots[-1] for m in ms]),
            knot=Flat.of(knots, [m.phi_knots for m in ms], slopes),
            stop=Flat.of([m.stops for m in ms], [np.append(m.q, 0.0) for m in ms]),
            reach=Flat.of([m.stops - TOL_STOP for m in ms], cum),
            **_prices(ms),
        )

    def rates(self, i: int, job: np.ndarray, choice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each label's cost of an epoch and of a whole slot at its power on global
        ``choice`` in window slot ``i`` of its job (as :meth:`SlotModel.rates`)."""
        if self.rate is None:
            return self.ecost[choice], self.opower[choice]
        assert self.energy is not None and self.kwh is not None
        price = self.rate[job, i]
        return self.energy[choice] * price, self.kwh[choice] * price

    def dearest_slot(self, i: int, job: np.ndarray) -> np.ndarray:
        """Each label's job's dearest energy cost of a whole slot in window slot ``i``:
        the largest power at that slot's price."""
        if self.rate is None:
            return self.dearest[job]
        assert self.top_kwh is not None
        return self.top_kwh[job] * self.rate[job, i]

    def phi(self, job: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``Phi(w)`` of each label's job, as :func:`numpy.interp` computes it."""
        k = self.knot
        b = k.below(job, w)  # the knot at or below w
        out = k.slope[b] * (w - k.at[b]) + k.value[b]
        return np.where(b == k.start[job + 1] - 1, self.phi_end[job], out)

    def beyond(self, job: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``P(N > w)`` of each label's job."""
        return self.stop.value[self.stop.below(job, w) + 1 + job]

    def crossed(self, job: np.ndarray, w: np.ndarray, w1: np.ndarray) -> np.ndarray:
        """The tardiness weight of the stops first reached between ``w`` and ``w1``."""
        r = self.reach
        return r.value[r.below(job, w1) + 1 + job] - r.value[r.below(job, w) + 1 + job]

    def lateness(self, job: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``omega`` times the hours past the due date at the end of slot ``t``."""
        return self.omega[job] * np.maximum(0.0, (t + 1) * self.slot - self.due[job])

    def step(
        self, i: int, job: np.ndarray, w: np.ndarray, choice: np.ndarray, lost: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Window slot ``i`` of each label's job on global ``choice`` from progress ``w``
        with ``lost`` hours of overhead: as :meth:`SlotModel.step`."""
        e = self.big_e[job]
        w1 = np.minimum(e, w + (self.slot - lost) * self.speed[choice] / self.slot)
        done = e - w1 <= TOL_E * np.maximum(1.0, e)
        w1 = np.where(done, e, w1)
        ecost, opower = self.rates(i, job, choice)
        cost = ecost * (self.phi(job, w1) - self.phi(job, w))
        cost = cost + opower * (lost / self.slot) * self.beyond(job, w)
        late = self.lateness(job, self.first[job] + i)
        if late.any():
            some = late > 0
            cost[some] += late[some] * self.crossed(job[some], w[some], w1[some])
        return w1, cost, done


@dataclass(frozen=True)
class Bounds:
    """The jobs' completion bounds (``H`` of :func:`completion_bound`) in one flat array,
    and what :meth:`Steps.remaining` needs per job; with survival charges
    (:class:`milp.decomposition.pricing.Job`), their sums over each job's window slots
    (``carried``: jobs x widest window + 1, from the window's start)."""

    stack: Stack
    flat: np.ndarray
    offset: np.ndarray  # where each job's table starts
    grid: np.ndarray
    floor: np.ndarray  # (jobs, widest window + 1): each job's Steps.floor, padded
    carried: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        stack: Stack,
        steps: Sequence[Steps],
        tables: Sequence[np.ndarray],
        charges: Sequence[np.ndarray | None] = (),
    ) -> Bounds:
        sizes = np.array([t.size for t in tables])
        carried = None
        if any(c is not None for c in charges):
            # each row's sums held at its total past its window (never read there)
            width = int(stack.width.max()) + 1
            sums = [np.cumsum(np.append(0.0, np.zeros(0) if c is None else c)) for c in charges]
            carried = np.array([np.pad(r, (0, width - len(r)), mode="edge") for r in sums])
        return cls(
            stack,
            np.concatenate([t.ravel() for t in tables]),
            np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
            np.array([s.grid for s in steps], dtype=np.int64),
            _pad([s.floor for s in steps], 0.0),
            carried,
        )

    def remaining(self, i: int, job: np.ndarray, w: np.ndarray, idle: np.ndarray) -> np.ndarray:
        """The bound from progress ``w`` at the start of window slot ``i`` of each
        label's job, having run the slot before or not (``idle``: its next run
        relaunches): as :meth:`Steps.remaining` with the job's row ``i`` of that state,
        plus the survival charges to come (:meth:`_charges`)."""
        s = self.stack
        g = self.grid[job]
        idx = np.minimum(g, np.ceil(w * g / s.big_e[job])).astype(np.int64)
        rows = np.where(idle, s.width[job] + 1 + i, i)  # the idle table follows the other
        excess = self.flat[self.offset[job] + rows * (g + 1) + idx]
        left = s.phi_end[job] - s.phi(job, w)
        out = self.floor[job, i] * left + np.maximum(excess, self._top_speed(i, job, w))
        return out if self.carried is None else out + self._charges(i, job, w)

    def _charges(self, i: int, job: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The survival charges of window slots ``i`` on at their least: no schedule is
        further than ``w`` plus ``m`` slots at top speed by the end of the ``m``-th slot,
        so stop ``e`` is still ahead there (its weight still charged) while ``w + m top
        < e`` (a tolerance and a rounding margin taken off, so never more)."""
        assert self.carried is not None
        s = self.stack
        ahead = (s.stops[job] - w[:, None] - TOL_STOP) / s.top[job][:, None]
        slots = np.where(np.isfinite(ahead), np.ceil(ahead - 1e-9) - 1, 0.0)
        end = np.minimum(i + np.maximum(slots, 0.0), s.width[job][:, None]).astype(np.int64)
        rows = self.carried[job]
        cum = np.take_along_axis(rows, end, axis=1) - rows[np.arange(len(job)), i][:, None]
        weight = np.where(np.isfinite(ahead), s.stop_weight[job], 0.0)
        return np.sum(cum * weight, axis=1)

    def _top_speed(self, i: int, job: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The tardiness of the stops not yet reached, each as soon as the fastest
        configuration can (as the single job's)."""
        s = self.stack
        out = np.zeros(len(w))
        t = s.first[job] + i
        late = (t + np.ceil((s.big_e[job] - w) / s.top[job])) * s.slot > s.due[job]
        if not late.any():
            return out
        j, wl, tl = job[late], w[late], t[late]
        ahead = s.stops[j] - wl[:, None]
        slots = np.ceil(ahead / s.top[j][:, None] - 1e-9)
        hours = np.maximum(0.0, (tl[:, None] + slots) * s.slot - s.due[j][:, None])
        weight = np.where(np.isfinite(ahead) & (ahead > 1e-12), hours, 0.0) * s.late[j]
        out[late] = s.omega[j] * weight.sum(axis=1)
        return out
