"""The solvers the MILP and the profile reference need are installed and work (in CI too)."""

import numpy as np
import pytest


def test_highs_solves_a_small_mip_through_pyomo():
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=2 * m.x + m.y >= 3.5)
    m.o = pyo.Objective(expr=3 * m.x + 2 * m.y)
    solver = pyo.SolverFactory("appsi_highs")
    assert solver.available()
    solver.solve(m)
    assert pyo.value(m.o) == pytest.approx(6.0)  # x = 2 (or x = 1, y = 1.5); y alone: 7


def test_ipopt_solves_a_small_nlp_through_cyipopt():
    import cyipopt

    class Problem:
        """min (x0 - 1)^2 + (x1 + 2)^2  s.t.  x0 + x1 >= 0 (active: optimum (1.5, -1.5))."""

        def objective(self, x):
            return (x[0] - 1.0) ** 2 + (x[1] + 2.0) ** 2

        def gradient(self, x):
            return np.array([2 * (x[0] - 1.0), 2 * (x[1] + 2.0)])

        def constraints(self, x):
            return np.array([x[0] + x[1]])

        def jacobian(self, x):
            return np.array([1.0, 1.0])

    nlp = cyipopt.Problem(
        n=2, m=1, problem_obj=Problem(), lb=[-10, -10], ub=[10, 10], cl=[0.0], cu=[1e19]
    )
    nlp.add_option("print_level", 0)
    nlp.add_option("hessian_approximation", "limited-memory")
    x, info = nlp.solve(np.zeros(2))
    assert info["status"] == 0
    assert x == pytest.approx([1.5, -1.5], abs=1e-6)
