"""The solvers the MILP and the profile reference need are installed and work (in CI too)."""

import numpy as np
import pytest


def test_highs_solves_a_small_mip_the_way_the_milp_does(tmp_path):
    """The MILP's path (milp/highs.py): Pyomo's standard-form compiler, then highspy in
    this process (through heuristic.core.highs_run, as every direct solve), the
    solution loaded back into the Pyomo variables."""
    import pyomo.environ as pyo

    from milp.highs import compile_model, load_values, run_highs
    from milp.result import Termination

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=2 * m.x + m.y >= 3.5)
    m.o = pyo.Objective(expr=3 * m.x + 2 * m.y)
    mats = compile_model(m)
    answer = run_highs(
        mats,
        start=None,
        time_limit=10.0,
        mip_gap=0.0,
        threads=1,
        log_file=tmp_path / "highs.log",
        stream=False,
    )
    assert answer.termination is Termination.OPTIMAL
    # x = 2 (or x = 1, y = 1.5) costs 6; y alone 7; the LP relaxation 5.25
    assert answer.objective == pytest.approx(6.0) and answer.bound == pytest.approx(6.0)
    assert answer.values is not None and "HiGHS" in answer.log
    load_values(mats, answer.values)
    assert pyo.value(m.o) == pytest.approx(6.0)
    assert pyo.value(m.x) == pytest.approx(round(pyo.value(m.x)))


def test_ipopt_solves_a_small_nlp_through_cyipopt():
    """cyipopt's Problem interface, as the profile's reference (heuristic/sts/profile_ipopt.py)."""
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
