"""The objective: expected energy cost + tardiness cost (docs/model.md, "Plans and their
cost"), the same definition as validation.evaluate, restricted to slot-aligned plans."""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo

from milp.data import MilpData
from milp.idle import idle_total
from milp.overhead import overhead_cost


def expected_energy_cost(m: pyo.ConcreteModel, d: MilpData) -> Any:
    """``sum q_b * pi_t * e_c * work``: an epoch of block b runs only if the job survives
    to it, with probability q_b, and pays the price of its slot (``pi`` in every slot
    without a series); plus the relaunch overhead's (:mod:`milp.overhead`)."""
    epochs = sum(
        d.jobs[j].survival[b] * d.jobs[j].epoch_cost(k, t) * m.work[j, b, k, t]
        for j, b, k, t in m.work_index
    )
    return epochs + overhead_cost(m) if hasattr(m, "overhead_cost") else epochs


def tardiness_cost(m: pyo.ConcreteModel, d: MilpData) -> Any:
    """Worst case: ``omega * late`` of the last block. Expected: ``sum_b P(N = e_b) *
    omega * late_b``."""
    if d.tardiness == "worst_case":
        return sum(jd.omega * m.late[j, jd.last] for j, jd in d.jobs.items())
    return sum(
        d.jobs[j].stop_probability[b] * d.jobs[j].omega * m.late[j, b] for j, b in m.late_index
    )


def add_objective(m: pyo.ConcreteModel, d: MilpData) -> None:
    m.energy_cost = pyo.Expression(expr=expected_energy_cost(m, d))
    m.tardiness_cost = pyo.Expression(expr=tardiness_cost(m, d))
    # idle power, where charged: a lower bound on it (milp.idle), so the objective is a
    # lower bound on the evaluator's cost of the plan
    total = m.energy_cost + m.tardiness_cost + idle_total(m)
    m.total_cost = pyo.Objective(expr=total, sense=pyo.minimize)
