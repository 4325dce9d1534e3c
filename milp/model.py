"""Building the Pyomo model of the time-indexed MILP."""

from __future__ import annotations

import pyomo.environ as pyo

from instances import Instance, TardinessMode
from milp.constraints import CONSTRAINT_FAMILIES
from milp.data import MilpData, milp_data
from milp.objective import add_objective
from milp.variables import add_variables


def build_model(
    instance: Instance,
    slots: int,
    *,
    tardiness: TardinessMode | None = None,
    cutoff: float | None = None,
) -> tuple[pyo.ConcreteModel, MilpData]:
    """The MILP of ``instance`` over ``slots`` slots of ``instance.slot`` hours, and its
    index sets. The model is plain Pyomo: add constraints to it before solving.

    ``cutoff``: the cost of a known plan; slots in which no plan at least as good can
    run a job are left out (:func:`milp.data.milp_data`)."""
    d = milp_data(instance, slots, tardiness, cutoff)
    m = pyo.ConcreteModel(name=f"gpusched-{instance.name}")
    add_variables(m, d)
    for family in CONSTRAINT_FAMILIES:
        family(m, d)
    add_objective(m, d)
    return m, d
