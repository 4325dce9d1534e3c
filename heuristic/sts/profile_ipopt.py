"""The reference solver of the single-job model: the same LP through Ipopt (cyipopt).

The thesis solved its stochastic model with Ipopt; gpusched keeps that path to check the
exact greedy of :mod:`heuristic.sts.profile` against it (tests, benchmarks).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from heuristic.sts.profile import Option, Step
from instances import EpochDistribution


class _Lp:
    """min c.x  s.t.  A x (=, <=) b  for x = (y_bi for b, i; s), in Ipopt's callbacks."""

    def __init__(self, cost: np.ndarray, jac: np.ndarray) -> None:
        self.cost = cost
        self.jac = jac
        self.rows, self.cols = np.nonzero(jac)

    def objective(self, x: np.ndarray) -> float:
        return float(self.cost @ x)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.cost

    def constraints(self, x: np.ndarray) -> np.ndarray:
        return self.jac @ x

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        return self.jac[self.rows, self.cols]

    def jacobianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return self.rows, self.cols

    def hessianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)

    def hessian(self, x: np.ndarray, lagrange: np.ndarray, obj_factor: float) -> np.ndarray:
        return np.zeros(0)


def ipopt_profile(
    options: Sequence[Option],
    dist: EpochDistribution,
    budget: float,
    omega: float,
    *,
    tol: float = 1e-10,
) -> tuple[float, list[Step]]:
    """Objective and steps of the single-job LP solved by Ipopt (all options, no hull)."""
    import cyipopt

    opts = list(options)
    L = dist.block_lengths
    q = dist.block_survival
    B, N = len(L), len(opts)
    n = B * N + 1  # y_bi, then the tardiness hours s
    cost = np.zeros(n)
    jac = np.zeros((B + 1, n))
    for b in range(B):
        for i, o in enumerate(opts):
            cost[b * N + i] = q[b] * o.cost
            jac[b, b * N + i] = 1.0
            jac[B, b * N + i] = o.time
    cost[-1] = omega
    jac[B, -1] = -1.0
    cl = np.array([*L, -1e19])
    cu = np.array([*L, budget])
    nlp = cyipopt.Problem(
        n=n, m=B + 1, problem_obj=_Lp(cost, jac), lb=np.zeros(n), ub=np.full(n, 1e19), cl=cl, cu=cu
    )
    nlp.add_option("print_level", 0)
    nlp.add_option("sb", "yes")
    nlp.add_option("tol", tol)
    nlp.add_option("mu_strategy", "adaptive")
    # Ipopt relaxes bounds by 1e-8 by default, which lets it undercut the true optimum
    nlp.add_option("bound_relax_factor", 0.0)
    x0 = np.zeros(n)
    for b in range(B):  # start from everything on the slowest option
        slow = max(range(N), key=lambda i: opts[i].time)
        x0[b * N + slow] = L[b]
    x0[-1] = max(0.0, float(jac[B] @ x0) - budget) + 1.0
    x, info = nlp.solve(x0)
    if info["status"] not in (0, 1):
        raise RuntimeError(f"Ipopt failed on the profile LP: {info['status_msg']!r}")
    steps = []
    pos = 0.0
    for b in range(B):
        for i in sorted(range(N), key=lambda i: -opts[i].time):
            y = float(x[b * N + i])
            if y > 1e-9:
                steps.append(Step(opts[i].config, pos, pos + y))
                pos += y
    return float(info["obj_val"]), steps
