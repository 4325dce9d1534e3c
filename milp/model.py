"""Building the Pyomo model of the time-indexed MILP."""

from __future__ import annotations

from collections.abc import Callable

import pyomo.environ as pyo

from instances import Instance, TardinessMode
from milp.constraints import CONSTRAINT_FAMILIES
from milp.data import MilpData, milp_data
from milp.idle import add_idle
from milp.objective import add_objective
from milp.overhead import add_relaunch
from milp.variables import add_variables


def build_model(
    instance: Instance,
    slots: int,
    *,
    tardiness: TardinessMode | None = None,
    cutoff: float | None = None,
    step: Callable[[str], None] | None = None,
) -> tuple[pyo.ConcreteModel, MilpData]:
    """The MILP of ``instance`` over ``slots`` slots of ``instance.slot`` hours, and its
    index sets. The model is plain Pyomo: add constraints to it before solving.

    ``cutoff``: the cost of a known plan; slots in which no plan at least as good can
    run a job are left out (:func:`milp.data.milp_data`).

    ``step(stage)`` is called before each stage of the build (variables, each constraint
    family, the objective): :func:`milp.solve` stops there when its time is up."""
    d = milp_data(instance, slots, tardiness, cutoff)
    return model_of_data(d, step), d


def model_of_data(d: MilpData, step: Callable[[str], None] | None = None) -> pyo.ConcreteModel:
    """The Pyomo model of already computed index sets (see :func:`build_model`)."""
    stages: list[tuple[str, Callable[[pyo.ConcreteModel, MilpData], None]]] = [
        ("variables", add_variables),
        ("relaunch", lambda m, d: add_relaunch(m, d, step)),
        *((f.__name__, f) for f in CONSTRAINT_FAMILIES),
        ("idle power", add_idle),
        ("objective", add_objective),
    ]
    m = pyo.ConcreteModel(name=f"gpusched-{d.instance.name}")
    for name, add in stages:
        if step is not None:
            step(name)
        add(m, d)
    return m
