"""The Dantzig-Wolfe master in HiGHS: per job a convex combination of its columns, within
the capacities of :mod:`milp.decomposition.space` (one row per resource and slot), and
the shared-mode variables ``y[n,u,t]``.

Rows are made when a column first holds them: a row no column holds cannot bind, and
its price is 0 (any prices ``>= 0`` give a valid Lagrangian bound, so the bound counts
it as 0 too). A label's rows (tenants, memory, the node's GPU row) and its ``y`` are made
together. One artificial column per job, at ``big``, keeps the master feasible before
enough columns exist; it is no schedule, the integer master leaves it out, and it is
deleted once the real columns alone are feasible. With a warm start for every job
there is none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp

from heuristic.core import highs_run
from milp.decomposition.columns import Column
from milp.decomposition.space import LINK, Space

INF = highspy.kHighsInf

#: rows above which an ``"auto"`` master is solved by HiGHS's interior point method
#: without crossover. Warm-started dual simplex re-solves a small master in a few hundred
#: pivots, but on the contended 100-job root (10,000 columns, 50,000-60,000 rows) it
#: took 10,000-20,000 degenerate pivots a solve; the interior point method's solves were
#: faster there and its central duals price better columns (the LP after 30 master solves
#: 64.9 against 68.6-69.3). On the 20-job real-data root (5,000 rows) each interior solve
#: took twice the simplex's, for the same progress (docs/benchmarks.md).
IPM_ROWS = 20_000


@dataclass
class _Store:
    """What the master holds, kept to build its integer program and to value columns at
    any prices: every model column (cost, bounds, rows, coefficients, whether integer)."""

    cost: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    coefs: list[np.ndarray] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)  # "artificial", "y", "column"


class Master:
    """The restricted master LP (see the module's docstring)."""

    def __init__(
        self, space: Space, big: float, artificial: bool = True, method: str = "auto"
    ) -> None:
        """``method``: ``"simplex"`` (warm-started), ``"ipm"`` (interior point, no
        crossover: the solution and duals are interior, not a vertex) or ``"auto"``
        (simplex until the master holds ``IPM_ROWS`` rows, then the interior point
        method)."""
        if method not in ("simplex", "ipm", "auto"):
            raise ValueError(f"master method must be simplex, ipm or auto, got {method!r}")
        self.method = method
        self.space = space
        self.slots = space.d.slots
        self.n_jobs = len(space.jobs)
        self.row_of: dict[tuple[int, int], int] = {}  # (resource, slot) -> row
        self.row_key: list[tuple[int, int]] = []
        self.columns: list[Column] = []  # the real columns, in model order among them
        self.col_index: list[int] = []  # their model column index
        self.known: set[tuple[int, int, tuple[int, ...]]] = set()
        self.y_of: dict[tuple[int, int], int] = {}  # (label, slot) -> model column
        self.store = _Store()
        self._matrix: sp.csr_array | sp.csr_matrix | None = None
        self.label_of = {(lab.node, lab.u): i for i, lab in enumerate(space.labels)}
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        none = np.zeros(0, dtype=np.int32)
        h.addRows(
            self.n_jobs, np.ones(self.n_jobs), np.ones(self.n_jobs), 0, none, none, np.zeros(0)
        )
        self.h = h
        self.interior = False
        if method == "ipm":
            self._to_interior()
        self.artificial = artificial
        for j in range(self.n_jobs if artificial else 0):
            self._add_model_column(big, 1.0, np.array([j]), np.ones(1), "artificial")

    def _add_model_column(
        self, cost: float, upper: float, rows: np.ndarray, coefs: np.ndarray, kind: str
    ) -> int:
        self.h.addCol(cost, 0.0, upper, len(rows), rows.astype(np.int32), coefs.astype(float))
        s = self.store
        s.cost.append(cost)
        s.upper.append(upper)
        s.rows.append(rows)
        s.coefs.append(coefs)
        s.kind.append(kind)
        return len(s.cost) - 1

    def _row(self, r: int, t: int) -> int:
        """The row of resource ``r`` in slot ``t``, made if new (with the label's ``y``
        and its other rows, for a label's rows; a link row joins its label's ``y``)."""
        key = (r, t)
        if key in self.row_of:
            return self.row_of[key]
        res = self.space.resources[r]
        none = np.zeros(0, dtype=np.int32)
        self.h.addRows(1, np.array([-INF]), np.array([res.capacity]), 0, none, none, np.zeros(0))
        row = self.n_jobs + len(self.row_key)
        self.row_of[key] = row
        self.row_key.append(key)
        if res.label >= 0:
            label = self.label_of[res.node, res.label]
            self._label(label, t)
            if res.kind == LINK:
                self._join(self.y_of[label, t], row)
        return row

    def _label(self, label: int, t: int) -> None:
        """``y`` of a shared label in slot ``t``: a GPU of its node, room for ``K_max``
        tenants and the GPU's memory (and, as they are made, its link rows)."""
        if (label, t) in self.y_of:
            return
        self.y_of[label, t] = -1  # being made: its rows call back here
        inst = self.space.instance
        lab = self.space.labels[label]
        rows = [self._row(lab.gpu, t), self._row(lab.tenants, t)]
        coefs = [1.0, -float(inst.max_share)]
        if lab.memory >= 0:
            rows.append(self._row(lab.memory, t))
            coefs.append(-inst.gpu(inst.node(lab.node).gpu_type).memory_gb)
        self.y_of[label, t] = self._add_model_column(0.0, 1.0, np.array(rows), np.array(coefs), "y")

    def _join(self, col: int, row: int) -> None:
        """A ``y`` enters a new link row (``tenant - y <= 0``)."""
        self.h.changeCoeff(row, col, -1.0)
        self.store.rows[col] = np.append(self.store.rows[col], row)
        self.store.coefs[col] = np.append(self.store.coefs[col], -1.0)

    def add(self, columns: list[Column]) -> int:
        """Add the columns not yet in the master; how many were new."""
        new = 0
        for col in columns:
            key = (col.job, col.start, col.choices)
            if key in self.known:
                continue
            self.known.add(key)
            r, t, a = col.entries(self.space)
            rows = np.array(
                [col.job] + [self._row(int(x), int(s)) for x, s in zip(r, t, strict=True)]
            )
            coefs = np.concatenate([[1.0], a])
            self.col_index.append(self._add_model_column(col.cost, INF, rows, coefs, "column"))
            self.columns.append(col)
            new += 1
        if new and self._matrix is not None:  # the holdings of the new columns only
            block = _holdings(self.space, self.columns[-new:])
            self._matrix = sp.vstack([self._matrix, block], format="csr")
        return new

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """The LP's value, the prices (resources x slots, ``>= 0``) and the jobs'
        convexity duals. Once the real columns alone are feasible, the artificial ones
        are fixed at 0: left in at 0 they would stay basic in a degenerate optimum and
        price the job at ``big``, which its real columns would then pay in prices; so
        they are deleted."""
        if self.method == "auto" and not self.interior and self.h.getNumRow() > IPM_ROWS:
            self._to_interior()
        highs_run.run(self.h, 1)
        if self.interior and self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            # IPX stopped short of its tolerances: simplex from scratch, for this solve
            self.h.setOptionValue("solver", "simplex")
            highs_run.run(self.h, 1)
            self.h.setOptionValue("solver", "ipm")
        if self.artificial:
            x = np.asarray(self.h.getSolution().col_value)[: self.n_jobs]
            # an interior solution leaves unused columns near 0, not at it
            if np.all(x <= (1e-7 if self.interior else 1e-9)):
                self._retire()
                highs_run.run(self.h, 1)
        dual = np.asarray(self.h.getSolution().row_dual)
        lam = np.zeros((len(self.space.resources), self.slots))
        if self.row_key:
            r, t = np.array(self.row_key).T
            lam[r, t] = np.maximum(0.0, -dual[self.n_jobs :])
        return float(self.h.getInfo().objective_function_value), lam, dual[: self.n_jobs]

    def vertex(self) -> None:
        """Replace an interior solution of the last solve by a basic one of the same
        value (HiGHS's crossover from it): the values read next are a vertex, as the
        simplex leaves them, so a plan the LP chooses whole reads as one and the support
        is no wider than a basis. Columns added since the last solve are at 0 in it
        (HiGHS extends the solution with zeros: still feasible, the same value), so no
        solve is needed first. A no-op after a simplex solve."""
        if not self.interior:
            return
        self.h.crossover(self.h.getSolution())

    def _to_interior(self) -> None:
        self.h.setOptionValue("solver", "ipm")
        self.h.setOptionValue("run_crossover", "off")
        self.interior = True

    def _retire(self) -> None:
        """Delete the artificial columns (the first ``n_jobs`` of the model)."""
        self.h.deleteCols(self.n_jobs, np.arange(self.n_jobs, dtype=np.int32))
        s = self.store
        for part in (s.cost, s.upper, s.rows, s.coefs, s.kind):
            del part[: self.n_jobs]
        self.col_index = [i - self.n_jobs for i in self.col_index]
        self.y_of = {key: i - self.n_jobs for key, i in self.y_of.items()}
        self.artificial = False

    def values(self) -> np.ndarray:
        """The LP's value of every real column."""
        x = np.asarray(self.h.getSolution().col_value)
        return x[np.array(self.col_index, dtype=np.int64)] if self.col_index else np.zeros(0)

    def support(self, eps: float = 1e-6) -> list[tuple[Column, float]]:
        """The real columns above ``eps`` in the last LP solution, with their values
        (columns added since it was solved are not in it)."""
        x = np.asarray(self.h.getSolution().col_value)
        return [
            (c, float(x[i]))
            for c, i in zip(self.columns, self.col_index, strict=True)
            if i < len(x) and x[i] > eps
        ]

    def priced(self, lam: np.ndarray) -> np.ndarray:
        """Every real column's cost plus the prices of what it holds."""
        if not self.columns:
            return np.zeros(0)
        if self._matrix is None:
            self._matrix = _holdings(self.space, self.columns)
        cost = np.fromiter((c.cost for c in self.columns), float, len(self.columns))
        return cost + self._matrix @ lam.ravel()


def _holdings(space: Space, columns: list[Column]) -> sp.csr_array:
    """Columns x (resource, slot) amounts held, flattened as ``lam.ravel()`` is."""
    rows, cols, vals = [], [], []
    slots = space.d.slots
    for i, col in enumerate(columns):
        r, t, a = col.entries(space)
        rows.append(np.full(len(r), i))
        cols.append(r * slots + t)
        vals.append(a)
    shape = (len(columns), len(space.resources) * slots)
    return sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=shape
    )


def label_terms(space: Space, lam: np.ndarray) -> float:
    """The Lagrangian's part outside the jobs at prices ``lam``: each ``y`` at its best
    in ``[0, 1]`` (``min(0, reduced cost)``, summed over labels and slots) less the
    priced capacities."""
    inst = space.instance
    total = -float(np.sum(lam * space.capacity[:, None]))
    for lab in space.labels:
        rc = lam[lab.gpu] - inst.max_share * lam[lab.tenants] - lam[list(lab.links)].sum(axis=0)
        if lab.memory >= 0:
            rc = rc - inst.gpu(inst.node(lab.node).gpu_type).memory_gb * lam[lab.memory]
        total += float(np.minimum(0.0, rc).sum())
    return total
