"""A currency unit too small for the solvers' absolute tolerances, changed for the
decomposition's solves.

HiGHS's tolerances are absolute. The compact MILP scales its objective by a power of
two (:func:`heuristic.core.highs_run.cost_scale`), but the decomposition holds its costs
in many places: the columns, the masters' objectives, their duals, the pricing. At an
energy price of 1e-4 of the usual one its bound was 0.75% above the optimum (found in
review, 2026-12-05). So the whole instance is restated in a unit a power of two
larger: every cost here is a price times kWh or a weight times hours, so every cost,
and every bound, scales by the factor exactly, and the plans do not change.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from heuristic.core.highs_run import cost_scale
from instances import Instance, InstanceError


def cost_factor(cost: float) -> float:
    """The power of two that brings a plan's cost of ``cost`` to [1, 2) where it is below
    :data:`~heuristic.core.highs_run.TINY_COST`; 1 otherwise (no instance in the usual
    units changes)."""
    return cost_scale(np.array([cost]))


def in_unit(instance: Instance, factor: float) -> Instance | None:
    """``instance`` with every price and weight times ``factor``: the energy price, the
    price series, the carbon price and the jobs' explicit weights (a default weight
    follows the energy price). ``None`` where a scaled value would pass its bound."""
    try:
        return instance.replace(
            energy_price=instance.energy_price * factor,
            prices=None if instance.prices is None else instance.prices.scaled(factor),
            carbon=None
            if instance.carbon is None
            else replace(instance.carbon, price=instance.carbon.price * factor),
            jobs=tuple(
                j if j.weight is None else replace(j, weight=j.weight * factor)
                for j in instance.jobs
            ),
        )
    except InstanceError:
        return None
