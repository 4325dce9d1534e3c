"""Monte Carlo replay: run a plan on sampled numbers of epochs and average the cost.

The exact evaluator must agree with it (its expected cost lies in the confidence
interval); this is how the ``Phi`` algebra is cross-checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from instances import Instance, Plan
from instances.fields import is_number, seed_number, whole_number
from instances.model import TardinessMode
from validation.check import require_feasible
from validation.evaluate import scenario_costs

# two-sided standard normal quantiles for the confidence levels we offer
_Z = {0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


@dataclass(frozen=True)
class MonteCarloResult:
    """Mean total cost over ``samples`` scenarios with its confidence interval."""

    samples: int
    mean_energy_cost: float
    mean_tardiness_cost: float
    std_total: float
    confidence: float
    mean_carbon_cost: float = 0.0  # the price of the carbon of the energy run

    @property
    def mean_total(self) -> float:
        return self.mean_energy_cost + self.mean_carbon_cost + self.mean_tardiness_cost

    @property
    def half_width(self) -> float:
        return _Z[self.confidence] * self.std_total / math.sqrt(self.samples)

    @property
    def interval(self) -> tuple[float, float]:
        return (self.mean_total - self.half_width, self.mean_total + self.half_width)

    def contains(self, value: float, *, rel_tol: float = 1e-9) -> bool:
        lo, hi = self.interval
        slack = rel_tol * max(1.0, abs(value))
        return lo - slack <= value <= hi + slack


def sample_epochs(instance: Instance, rng: np.random.Generator) -> dict[str, float]:
    """One scenario: a sampled number of epochs for every job."""
    if not isinstance(rng, np.random.Generator):  # a seed met an AttributeError inside
        raise TypeError(f"rng = {rng!r:.60}: must be a numpy Generator (default_rng(seed))")
    return {j.id: float(j.distribution.sample(rng)) for j in instance.jobs}


def replay(
    instance: Instance,
    plan: Plan,
    *,
    samples: int = 2000,
    seed: int = 0,
    confidence: float = 0.99,
    tardiness: TardinessMode | None = None,
    check: bool = True,
) -> MonteCarloResult:
    """Average realised cost of ``plan`` over seeded scenarios. Raises
    :class:`PlanError` listing every violation, as :func:`evaluate` does: a plan that
    never runs a job replayed to an infinite mean and a NaN deviation."""
    if not is_number(confidence) or confidence not in _Z:  # a list was a TypeError
        raise ValueError(f"confidence must be one of {sorted(_Z)}, got {confidence}")
    whole_number("samples", samples, 1)  # 0 gave NaN means beside six RuntimeWarnings
    # (None drew fresh stops on every call; numpy's own refusals named no argument)
    rng = np.random.default_rng(seed_number("seed", seed))
    if check:
        require_feasible(instance, plan)
    energy = np.empty(samples)
    carbon = np.empty(samples)
    tard = np.empty(samples)
    for k in range(samples):
        cost = scenario_costs(instance, plan, sample_epochs(instance, rng), tardiness=tardiness)
        energy[k], carbon[k], tard[k] = cost.energy_cost, cost.carbon_cost, cost.tardiness_cost
    total = energy + tard + carbon  # carbon is 0 without a series: the same sums
    return MonteCarloResult(
        samples,
        float(energy.mean()),
        float(tard.mean()),
        float(total.std(ddof=1)) if samples > 1 else 0.0,
        confidence,
        float(carbon.mean()),
    )
