"""The bill of a kWh over time that STS times its profiles by (docs/model.md, 'STS
deciding when'): the price series plus the carbon price times the grid's intensity
(:class:`Tariff`), read on *cells* of the series' own step, in which the price is
constant (:class:`Grid`). :mod:`heuristic.sts.timing` searches when a profile runs on
them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from heuristic.sts.memo import kept
from instances import Instance
from instances.energy import Series

TOL = 1e-9

# the cells looked at, from now: thirty days of hours (a longer run is not timed; the
# search holds a row of cells per portion of the run)
HORIZON_CELLS = 720


@dataclass(frozen=True)
class Tariff:
    """The bill of a kWh over time: the price series plus the carbon price times the
    grid's intensity, on cells of ``cell`` hours from time 0."""

    price: Series
    carbon: Series | None
    per_gram: float
    cell: float
    # the grids asked for, by (now, hours): every type and share of a job's profiles at a
    # decision, and every job released at one time, time on the same cells
    grids: dict[Hashable, Grid] = field(default_factory=dict, compare=False, repr=False)
    # the longest grid built from each now, and its whole cells: a shorter one is its
    # first cells (on a priced contended run 78,557 grids from 2,632 times)
    longest: dict[float, tuple[int, Grid]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, inst: Instance) -> Tariff | None:
        """The instance's tariff, or ``None`` where the bill is the same every hour."""
        price = inst.price_series
        carbon, per_gram = None, 0.0
        if inst.carbon is not None and inst.carbon.price > 0:
            carbon, per_gram = inst.carbon.intensity, inst.carbon.price_per_gram
        if price.constant is not None and (carbon is None or carbon.constant is not None):
            return None
        step = price.step if price.constant is None else None
        if step is None and carbon is not None and carbon.constant is None:
            step = carbon.step
        cell = 1.0 if step is None else step
        if inst.slot is not None:  # cells on the slot grid, so wake-ups are too
            cell = inst.slot * max(1, round(cell / inst.slot))
        return cls(price, carbon, per_gram, cell)

    def least(self, a: float, b: float) -> float:
        """A lower bound on the price per kWh over ``[a, b]`` (the least of the series'
        values there for an hourly-like series, else over the whole series)."""
        out = _least(self.price, a, b)
        if self.carbon is not None:
            out += self.per_gram * _least(self.carbon, a, b)
        return out

    def most(self, a: float, b: float) -> float:
        """An upper bound on the price per kWh over ``[a, b]`` (as :meth:`least`)."""
        out = _least(self.price, a, b, most=True)
        if self.carbon is not None:
            out += self.per_gram * _least(self.carbon, a, b, most=True)
        return out

    def grid(self, now: float, hours: float) -> Grid:
        """:meth:`Grid.of` from ``now`` for ``hours``, kept by the cells it holds (at most
        10,000 kept: then the memo starts again). A timing that recovers its margin asks
        for as many horizons as profiles, most of them ending in the same cell: one grid
        serves them all (a tenth of the thesis family's time went to rebuilding it)."""
        cells = _whole_cells(self.cell, now, hours)
        return kept(self.grids, (now, cells), lambda: self._cut(now, hours, cells), 10_000)

    def _cut(self, now: float, hours: float, cells: tuple[float, int] | None) -> Grid:
        """:meth:`Grid.of` from ``now`` for ``hours`` (whose whole cells are ``cells``),
        cut from the longest grid built from ``now``, which is made again, at least twice
        as long, where it is too short. A cell's price is its own two edges' (the
        series' integral between them), so the first cells of a longer grid are the
        same floats as a shorter grid's."""
        if cells is None:
            return Grid.of(self, now, hours)
        first, count = cells
        built = self.longest.get(now)
        if built is None or built[0] < count:
            most = _whole_cells(self.cell, now, HORIZON_CELLS * self.cell)
            assert most is not None and most[1] >= count  # as many cells as any budget's
            more = count if built is None else min(most[1], max(count, 2 * built[0]))
            if len(self.longest) >= 1_000:
                self.longest.clear()
            built = self.longest[now] = (more, Grid.cells(self, now, first, more))
        whole, grid = built
        k = len(grid.price) - (whole - count)  # the last whole cells left out
        return grid if k == len(grid.price) else Grid(grid.edges[: k + 1], grid.price[:k])

    def cost(self, edges: np.ndarray) -> np.ndarray:
        """The bill of one kWh drawn evenly over each interval between ``edges``,
        times its hours (price·hours, the integral of the tariff)."""
        out = self.price.integrals(edges)
        if self.carbon is not None:
            out = out + self.per_gram * self.carbon.integrals(edges)
        return out


def _least(series: Series, a: float, b: float, most: bool = False) -> float:
    """The least value of ``series`` over ``[a, b]`` (its least value anywhere, unless
    it repeats with a regular step: then only the intervals met are read); with
    ``most``, the greatest."""
    pick = max if most else min
    step = series.step
    n = len(series.values)
    if step is None or series.after != "repeat" or (b - a) / step >= n:
        return pick(series.values)
    first = math.floor(a / step + TOL)
    count = math.floor(b / step + TOL) - first + 1
    idx = (first + np.arange(count)) % n
    found = series.values_array[idx]
    return float(found.max() if most else found.min())


@dataclass(frozen=True)
class Grid:
    """The cells from ``now`` to ``now + budget`` (at most :data:`HORIZON_CELLS`): the
    first ends at the tariff's next cell boundary (it may be short), the rest are
    whole; a last part-cell is left out."""

    edges: np.ndarray  # hours from now
    price: np.ndarray  # the tariff's price per kWh in each cell

    @property
    def floor(self) -> float:
        """The least price per kWh of a cell."""
        return float(self.price.min()) if len(self.price) else 0.0

    @classmethod
    def of(cls, tariff: Tariff, now: float, budget: float) -> Grid:
        cells = _whole_cells(tariff.cell, now, budget)
        if cells is None:
            return cls(np.zeros(1), np.zeros(0))
        return cls.cells(tariff, now, *cells)

    @classmethod
    def cells(cls, tariff: Tariff, now: float, first: float, count: int) -> Grid:
        """The grid from ``now`` whose whole cells start at ``first``, ``count`` of them
        (:func:`_whole_cells`)."""
        d = tariff.cell
        absolute = np.concatenate(([now], first + d * np.arange(count + 1)))
        edges = absolute - now
        width = np.diff(edges)
        keep = width > TOL  # now on a boundary: no empty first cell
        price = tariff.cost(absolute)[keep] / width[keep]
        edges = np.concatenate(([0.0], edges[1:][keep]))
        return cls(edges, price)


def _whole_cells(d: float, now: float, budget: float) -> tuple[float, int] | None:
    """The first cell boundary after ``now`` and how many whole cells of ``d`` hours
    follow it within ``budget`` (at most :data:`HORIZON_CELLS`); ``None`` where that
    boundary is not reached: all :meth:`Grid.of` reads of the budget."""
    first = (math.floor(now / d + TOL) + 1) * d
    end = now + min(budget, HORIZON_CELLS * d)
    last = math.floor(end / d + TOL) * d
    if last <= first - TOL:
        return None
    return first, round((last - first) / d)
