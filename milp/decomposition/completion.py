"""A lower bound on what a job still costs, from any slot and progress, at given prices:
the backward dynamic program of a relaxation, on a grid of progress.

The relaxation drops the relaunch overhead (a slot always makes its full progress, and
pays no overhead energy) and lets each slot take the cheapest placement of its
configuration. Every real schedule then has a relaxed copy that costs no more, and more
progress never costs more later (the epochs left are fewer and, by the survival, no
dearer; completions come no later; fewer slots hold GPUs). The relaxed value at progress
``w`` is thus at least its value at the next grid point ``g >= w``, and a grid value is
computed from the next slot's value at the grid point at or above where the slot ends,
so by induction every grid value is at most the true relaxed value there.

The pricing prunes a partial schedule whose cost plus this bound cannot beat the best
schedule known; its value at the job's first slot with no progress bounds the job's
priced optimum from below, so the Lagrangian bound holds at every round, also where
only the heuristic pricer ran (:mod:`milp.decomposition.colgen`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from milp.decomposition.slots import SlotModel


@dataclass(frozen=True)
class Steps:
    """Price-free tables of the relaxation on ``grid + 1`` progress points, per
    configuration (its first choice stands for it): the slot's energy, its tardiness
    weight, whether it completes and the grid point at or above where it ends."""

    grid: int
    configs: np.ndarray  # index of the first choice of each configuration
    energy: np.ndarray  # (K, G+1)
    crossed: np.ndarray  # (K, G+1)
    done: np.ndarray  # (K, G+1)
    after: np.ndarray  # (K, G+1)

    @classmethod
    def of(cls, m: SlotModel, grid: int) -> Steps:
        starts = np.flatnonzero(np.r_[True, m.k[1:] != m.k[:-1]])
        g = np.arange(grid + 1) * (m.big_e / grid)
        n_k = len(starts)
        w = np.tile(g, n_k)
        choice = np.repeat(starts, grid + 1)
        w1, energy, done = m.step(-1, w, choice, np.zeros_like(w))  # slot -1: never late
        e = m.stops
        crossed = ((w[:, None] < e - 1e-12) & (e - 1e-12 <= w1[:, None])) @ m.late
        after = np.minimum(grid, np.ceil(w1 * grid / m.big_e)).astype(np.int64)
        shape = (n_k, grid + 1)
        return cls(
            grid,
            starts,
            energy.reshape(shape),
            crossed.reshape(shape),
            done.reshape(shape),
            after.reshape(shape),
        )

    def index(self, m: SlotModel, w: np.ndarray) -> np.ndarray:
        """The grid point at or above each progress ``w``."""
        return np.minimum(self.grid, np.ceil(w * self.grid / m.big_e)).astype(np.int64)


def completion_bound(m: SlotModel, steps: Steps, price: np.ndarray) -> np.ndarray:
    """``H[i, g]``: a lower bound on the cost, prices included, of finishing the job from
    the start of slot ``m.first + i`` at grid progress ``g`` (row ``i = last - first + 1``:
    after the window, infinite unless complete). ``price``: choices x window slots."""
    width = m.last - m.first + 1
    cheapest = np.minimum.reduceat(price, steps.configs, axis=0)  # (K, W)
    out = np.full((width + 1, steps.grid + 1), np.inf)
    out[:, steps.grid] = 0.0
    for i in range(width - 1, -1, -1):
        t = m.first + i
        late = m.omega * max(0.0, (t + 1) * m.slot - m.due)
        nxt = out[i + 1]
        cand = steps.energy + late * steps.crossed + cheapest[:, i : i + 1]
        cand = cand + np.where(steps.done, 0.0, nxt[steps.after])
        out[i] = np.minimum(nxt, cand.min(axis=0))
        out[i, steps.grid] = 0.0
    return out
