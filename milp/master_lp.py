"""The restricted master LP of the Lagrangian bound's column generation
(:mod:`milp.lagrange`), in HiGHS: its duals are the capacity prices of the next round,
and each job's weight on its paths' own cost."""

from __future__ import annotations

import highspy
import numpy as np

from heuristic.core import highs_run


class Master:
    """The restricted master LP of the column generation: per job a convex combination
    of its paths found so far, within the capacity of every (type, slot); a slack per
    capacity row, at ``penalty`` per GPU-slot, keeps it feasible from the first round
    (and caps the prices at ``penalty``).

    Each job counts for ``z_j``, at least its ``floor`` (its least cost alone) and at
    least its paths' cost in the combination: every real schedule of the job costs at
    least both (its path on the grid costs no more than it does). The dual ``pi_j`` of
    the row ``z_j >= cost`` (in [0, 1]) weighs the job's own cost in the pricing: a job
    whose floor binds (``pi_j < 1``) is priced mostly by the GPUs it holds, so the
    prices leave the capacity to the jobs whose cost it would raise. Its LP value is the
    Lagrangian dual of the capacity with the floors kept (at least the dual without
    them and at least the floors' sum)."""

    def __init__(
        self, capacity: np.ndarray, slots: int, floors: np.ndarray, penalty: float
    ) -> None:
        jobs = len(floors)
        self.types, self.slots, self.jobs = len(capacity), slots, jobs
        self.cap_rows = self.types * slots
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        # rows: capacity (<= GPUs), convexity (= 1), the jobs' cost (z_j - paths >= 0)
        lower = np.concatenate([np.full(self.cap_rows, -inf), np.ones(jobs), np.zeros(jobs)])
        upper = np.concatenate([np.repeat(capacity, slots), np.ones(jobs), np.full(jobs, inf)])
        none = np.zeros(0, dtype=np.int32)
        h.addRows(len(lower), lower, upper, 0, none, none, np.zeros(0))
        n = self.cap_rows
        h.addCols(
            n,
            np.full(n, penalty),
            np.zeros(n),
            np.full(n, inf),
            n,
            np.arange(n, dtype=np.int32),
            np.arange(n, dtype=np.int32),
            -np.ones(n),
        )
        self.z_row = n + jobs
        h.addCols(
            jobs,
            np.ones(jobs),
            np.asarray(floors, float),
            np.full(jobs, inf),
            jobs,
            np.arange(jobs, dtype=np.int32),
            np.arange(self.z_row, self.z_row + jobs, dtype=np.int32),
            np.ones(jobs),
        )
        self.h = h

    def add(self, costs: np.ndarray, held: np.ndarray, jobs: np.ndarray) -> None:
        """Columns: each listed job's path, of its own ``costs`` and ``held`` GPUs (jobs,
        types, slots)."""
        starts, index, value = [], [], []
        nnz = 0
        for j, cost, per in zip(jobs, costs, held, strict=True):
            rows = np.flatnonzero(per.ravel())
            starts.append(nnz)
            index += [rows, np.array([self.cap_rows + j, self.z_row + j])]
            value += [per.ravel()[rows], np.array([1.0, -cost])]
            nnz += len(rows) + 2
        n = len(jobs)
        self.h.addCols(
            n,
            np.zeros(n),
            np.zeros(n),
            np.full(n, highspy.kHighsInf),
            nnz,
            np.array(starts, dtype=np.int32),
            np.concatenate(index).astype(np.int32),
            np.concatenate(value),
        )

    def solve(self) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """The LP's value, the capacity prices (types x slots, >= 0), the jobs'
        convexity duals and their weights ``pi`` on their own cost (in [0, 1])."""
        highs_run.run(self.h, 1)
        dual = np.asarray(self.h.getSolution().row_dual)
        lam = np.maximum(0.0, -dual[: self.cap_rows]).reshape(self.types, self.slots)
        mu = dual[self.cap_rows : self.z_row]
        pi = np.clip(dual[self.z_row :], 0.0, 1.0)
        return float(self.h.getInfo().objective_function_value), lam, mu, pi
