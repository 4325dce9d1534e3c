"""The restricted master LP of the Lagrangian bound's column generation
(:mod:`milp.lagrange`), in HiGHS: its duals are the capacity prices of the next round."""

from __future__ import annotations

import highspy
import numpy as np

from heuristic.core import highs_run


class Master:
    """The restricted master LP of the column generation: per job a convex combination
    of its paths found so far, within the capacity of every (type, slot); a slack per
    capacity row, at ``penalty`` per GPU-slot, keeps it feasible from the first round
    (and caps the prices at ``penalty``)."""

    def __init__(self, capacity: np.ndarray, slots: int, jobs: int, penalty: float) -> None:
        self.types, self.slots, self.jobs = len(capacity), slots, jobs
        self.cap_rows = self.types * slots
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        lower = np.concatenate([np.full(self.cap_rows, -highspy.kHighsInf), np.ones(jobs)])
        upper = np.concatenate([np.repeat(capacity, slots), np.ones(jobs)])
        none = np.zeros(0, dtype=np.int32)
        h.addRows(len(lower), lower, upper, 0, none, none, np.zeros(0))
        n = self.cap_rows
        h.addCols(
            n,
            np.full(n, penalty),
            np.zeros(n),
            np.full(n, highspy.kHighsInf),
            n,
            np.arange(n, dtype=np.int32),
            np.arange(n, dtype=np.int32),
            -np.ones(n),
        )
        self.h = h

    def add(self, costs: np.ndarray, held: np.ndarray, jobs: np.ndarray) -> None:
        """Columns: each listed job's path, of ``costs`` and ``held`` GPUs (jobs, types,
        slots)."""
        starts, index, value = [], [], []
        nnz = 0
        for j, per in zip(jobs, held, strict=True):
            rows = np.flatnonzero(per.ravel())
            starts.append(nnz)
            index += [rows, np.array([self.cap_rows + j])]
            value += [per.ravel()[rows], np.ones(1)]
            nnz += len(rows) + 1
        n = len(jobs)
        self.h.addCols(
            n,
            costs,
            np.zeros(n),
            np.full(n, highspy.kHighsInf),
            nnz,
            np.array(starts, dtype=np.int32),
            np.concatenate(index).astype(np.int32),
            np.concatenate(value),
        )

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """The LP's value, the capacity prices (types x slots, >= 0) and the jobs' duals."""
        highs_run.run(self.h, 1)
        dual = np.asarray(self.h.getSolution().row_dual)
        lam = np.maximum(0.0, -dual[: self.cap_rows]).reshape(self.types, self.slots)
        return float(self.h.getInfo().objective_function_value), lam, dual[self.cap_rows :]
