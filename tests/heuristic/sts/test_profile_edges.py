"""STS's single-job profile (heuristic/sts/profile.py) on cases the property tests do not
reach: against every epoch-by-epoch configuration sequence of a small job costed by the
evaluator, the hull's own contract (a slower option no cheaper, an option on the chord),
float slivers at a profile's ends, the clock of a profile timed in windows, and the
continuous profile's energy in closed form."""

from __future__ import annotations

import itertools
import math

import pytest

from heuristic.sts.profile import (
    Option,
    Profile,
    Step,
    _without_slivers,
    continuous_profile,
    exact_profile,
    lower_hull,
)
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from validation.evaluate import evaluate

PRICE = 0.2
GPU = GpuType("v100", 16.0, 300.0)
TAU = {Config("v100", 1): 1.0, Config("v100", 2): 0.6, Config("v100", 4): 0.4}
# four epochs; blocks [0, 1), [1, 2), [2, 4) run with probability 1, 0.75, 0.5
DIST = EpochDistribution((1.0, 2.0, 4.0), (0.25, 0.25, 0.5))


def _options() -> list[Option]:
    """The configurations' energy cost per epoch as the evaluator charges it."""
    return [Option(c, t, PRICE * c.power_w(GPU, 2) * t / 1000) for c, t in TAU.items()]


def _instance(budget: float, omega: float) -> Instance:
    job = Job("j", 0.0, budget, DIST, TAU, 4.0, weight=omega)
    return Instance((GPU,), (Node("n", "v100", 8),), (job,), energy_price=PRICE)


def _cost(inst: Instance, runs: list[tuple[Config, float]]) -> float:
    """The evaluator's expected cost of running ``(config, epochs)`` one after the other."""
    segs, t = [], 0.0
    for c, epochs in runs:
        dur = epochs * TAU[c]
        segs.append(Segment(t, t + dur, "j", c, tuple(("n", g) for g in range(c.gpus))))
        t += dur
    ev = evaluate(inst, Plan(tuple(segs)))
    return ev.energy_cost + ev.tardiness_cost


@pytest.mark.parametrize(
    ("omega", "budget", "best", "profile_cost"),
    [
        (1e3, 1.8, 0.24, 0.24),  # 2 GPUs for the first epoch, then 4
        (1e3, 2.2, 0.21, 0.21),
        (0.05, 2.8, 0.186, 0.186),  # late would cost more than the second GPU
        (0.05, 3.6, 0.171, 0.171),
        (1e3, 3.0, 0.186, 0.1815),  # the optimum splits an epoch: below every sequence
        (0.01, 2.0, 0.185, 0.185),  # late is cheaper than any GPU added
    ],
)
def test_the_profile_is_the_cheapest_epoch_sequence_the_evaluator_costs(
    omega, budget, best, profile_cost
):
    """Every sequence of one configuration per epoch (81) costed by the evaluator: none
    is cheaper than the profile, which costs what it claims, and where the optimum runs
    whole epochs the profile's cost is the cheapest sequence's."""
    inst = _instance(budget, omega)
    cheapest = min(_cost(inst, [(c, 1.0) for c in seq]) for seq in itertools.product(TAU, repeat=4))
    assert cheapest == pytest.approx(best, rel=1e-12)
    p = exact_profile(_options(), DIST, budget, omega)
    assert p.objective == pytest.approx(profile_cost, rel=1e-12)
    assert _cost(inst, [(s.config, s.epochs) for s in p.steps]) == pytest.approx(
        p.objective, rel=1e-12
    )
    assert p.objective <= cheapest * (1 + 1e-12)


def test_the_hull_drops_a_slower_option_that_is_no_cheaper():
    """Slower at the same cost is dominated: a profile never runs it."""
    slow, fast = Config("v100", 1), Config("v100", 2)
    opts = [Option(slow, 1.0, 0.5), Option(fast, 0.5, 0.5)]
    assert [o.config for o in lower_hull(opts)] == [fast]
    p = exact_profile(opts, EpochDistribution.deterministic(4.0), 10.0, 1.0)
    assert [(s.config, s.start, s.end) for s in p.steps] == [(fast, 0.0, 4.0)]
    assert p.worst_time == 2.0


def test_the_hull_drops_an_option_on_the_chord_of_its_neighbours():
    """An option on the segment joining its neighbours is a mix of them: dropped."""
    c = [Config("v100", g) for g in (1, 2, 4)]
    opts = [Option(c[0], 1.0, 1.0), Option(c[1], 0.75, 1.5), Option(c[2], 0.5, 2.0)]
    assert [o.config for o in lower_hull(opts)] == [c[0], c[2]]


def test_a_sliver_at_either_end_of_a_profile_is_merged_into_its_neighbour():
    """Float leftovers of ~1e-12 epochs: one at the start runs on the next step, one at
    the very end on the step before; no epoch is lost either way."""
    at_end = [(0, 0.0, 5.0), (1, 5.0, 10.0 - 1e-12), (2, 10.0 - 1e-12, 10.0)]
    assert _without_slivers(at_end, 10.0) == [(0, 0.0, 5.0), (1, 5.0, 10.0)]
    at_start = [(0, 0.0, 1e-12), (1, 1e-12, 10.0)]
    assert _without_slivers(at_start, 10.0) == [(1, 0.0, 10.0)]
    middle = [(0, 0.0, 5.0), (1, 5.0, 5.0 + 1e-12), (2, 5.0 + 1e-12, 10.0)]
    assert _without_slivers(middle, 10.0) == [(0, 0.0, 5.0), (2, 5.0, 10.0)]
    # 5e-9 epochs of 1: above the tolerance (1e-9 an epoch of work), kept
    kept = [(0, 0.0, 5e-9), (1, 5e-9, 1.0)]
    assert _without_slivers(kept, 1.0) == kept


def _timed() -> Profile:
    """Two windows, 0-1 h and 3-5 h from now."""
    step = Step(Config("v100", 1), 0.0, 3.0)
    return Profile((step,), 3.0, 0.0, 0.0, 10.0, runs=((0.0, 1.0), (3.0, 5.0)))


def test_the_clock_of_a_timed_profile():
    """At a window's end the clock reads that end (not the next window's start); past
    the last window it runs on from that window's end."""
    p = _timed()
    assert p.clock(0.5) == 0.5
    assert p.clock(1.0) == 1.0
    assert p.clock(1.5) == 3.5
    assert p.clock(3.0) == 5.0
    assert p.clock(4.0) == 6.0
    assert p.wait == 0.0
    assert p.on_clock(0.5, 2.0) == [(0.5, 1.0), (3.0, 4.0)]


def test_a_timed_profile_waits_until_its_first_window():
    step = Step(Config("v100", 1), 0.0, 1.0)
    p = Profile((step,), 1.0, 0.0, 0.0, 10.0, runs=((2.0, 3.0),))
    assert p.wait == 2.0
    assert p.clock(1.0) == 3.0


def test_the_continuous_profiles_energy_is_the_survivals_integral():
    """An exponential survival ``e^{-w/mu}`` on one option: the energy is
    ``c mu (1 - e^{-W/mu})`` (Simpson's rule is exact to ~1e-13 here)."""
    mu, work, cost = 8.0, 20.0, 0.05
    p = continuous_profile(
        [Option(Config("v100", 1), 0.3, cost)],
        lambda w: math.exp(-w / mu),
        lambda q: -mu * math.log(q),
        work,
        10.0,
    )
    assert p.energy_cost == pytest.approx(cost * mu * (1 - math.exp(-work / mu)), rel=1e-10)


def test_equal_rates_upgrade_the_later_block_first():
    """A stop of probability 0 between two blocks gives them the same survival (0.5), so
    the same rate: the later block is upgraded first and the profile stays as slow
    first as it can (one slow step, then the fast one)."""
    slow, fast = Config("v100", 1), Config("v100", 2)
    dist = EpochDistribution((1.0, 2.0, 3.0), (0.5, 0.0, 0.5))
    assert dist.block_survival == (1.0, 0.5, 0.5)
    p = exact_profile([Option(slow, 1.0, 0.06), Option(fast, 0.5, 0.09)], dist, 2.5, 1.0)
    assert [(s.config, s.start, s.end) for s in p.steps] == [(slow, 0.0, 2.0), (fast, 2.0, 3.0)]
    assert p.objective == pytest.approx(0.06 * 1.5 + 0.09 * 0.5)
