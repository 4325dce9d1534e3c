import itertools
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from heuristic.sts.profile import Option, continuous_profile, exact_profile, lower_hull
from heuristic.sts.profile_ipopt import ipopt_profile
from instances import Config, GpuType, Instance, Job, Node, Plan, Segment
from tests.strategies import distributions
from validation.evaluate import evaluate


@st.composite
def option_sets(draw):
    """Configurations of one v100 job: 1-8 GPUs with diminishing returns, maybe shared."""
    tau1 = draw(st.floats(0.05, 2.0))
    alpha = draw(st.floats(0.3, 0.99))
    out = [
        Option(Config("v100", g), tau1 / g**alpha, 0.06 * g * tau1 / g**alpha)
        for g in (1, 2, 4, 8)
        if draw(st.booleans()) or g == 1
    ]
    if draw(st.booleans()):
        rho = draw(st.floats(0.3, 1.0))
        out.append(Option(Config("v100", 1, shared=True), tau1 / rho, 0.03 * tau1 / rho))
    return out


@settings(max_examples=40)
@given(option_sets(), distributions(), st.floats(0.1, 1.5), st.floats(0.5, 50.0))
def test_exact_matches_ipopt(opts, dist, budget_factor, omega):
    fastest = min(o.time for o in opts) * dist.max_epochs
    budget = budget_factor * max(o.time for o in opts) * dist.max_epochs
    assume(budget > 0)
    exact = exact_profile(opts, dist, budget, omega)
    ref, _ = ipopt_profile(opts, dist, budget, omega)
    assert exact.objective == pytest.approx(ref, rel=1e-6, abs=1e-9), (fastest, budget)


@given(option_sets(), distributions(), st.floats(0.0, 2.0))
def test_profile_is_monotone_and_meets_budget_when_it_can(opts, dist, factor):
    slowest = max(o.time for o in opts) * dist.max_epochs
    budget = factor * slowest
    p = exact_profile(opts, dist, budget, omega=1e6)
    times = {o.config: o.time for o in opts}
    speeds = [times[s.config] for s in p.steps]
    assert all(a >= b - 1e-15 for a, b in itertools.pairwise(speeds))
    assert sum(s.epochs for s in p.steps) == pytest.approx(dist.max_epochs)
    if min(times.values()) * dist.max_epochs <= budget:
        assert p.worst_time <= budget * (1 + 1e-9) + 1e-12
        assert p.tardiness_cost <= 1e-6 * max(1.0, p.energy_cost)


@given(
    option_sets(), distributions(), st.floats(0.0, 2.0), st.floats(0.0, 1.0), st.floats(0.1, 100.0)
)
def test_larger_budget_never_costs_more(opts, dist, f1, extra, omega):
    slowest = max(o.time for o in opts) * dist.max_epochs
    a = exact_profile(opts, dist, f1 * slowest, omega)
    b = exact_profile(opts, dist, (f1 + extra) * slowest, omega)
    assert b.objective <= a.objective * (1 + 1e-12) + 1e-12


def test_hull_drops_dominated_and_non_convex_options():
    c = [Config("v100", g) for g in (1, 2, 4, 8)]
    opts = [
        Option(c[0], 1.0, 1.0),
        Option(c[1], 0.6, 1.5),  # on the hull
        Option(c[2], 0.5, 3.0),  # above the chord from (0.6, 1.5) to (0.2, 3.2)
        Option(c[3], 0.2, 3.2),
    ]
    assert [o.config for o in lower_hull(opts)] == [c[0], c[1], c[3]]
    dominated = [Option(c[0], 1.0, 1.0), Option(c[1], 1.2, 1.5)]  # slower and dearer
    assert [o.config for o in lower_hull(dominated)] == [c[0]]
    # equal times up to rounding: the cheaper one stays, whichever sorts first
    tie = [Option(c[0], 1.0, 0.06), Option(c[1], 1.0000000000000002, 0.03)]
    assert [o.config for o in lower_hull(tie)] == [c[1]]


@settings(max_examples=30)
@given(option_sets(), distributions(), st.floats(0.2, 1.5), st.floats(0.0, 3.0))
def test_profile_cost_equals_the_evaluators(opts, dist, factor, release):
    """Run the profile alone on one 8-GPU node: the evaluator charges what it promised."""
    budget = factor * max(o.time for o in opts) * dist.max_epochs
    price = 0.2
    epoch_times = {o.config: o.time for o in opts}
    # cost per epoch in Option must be price * power * time / 1000 for the comparison
    gpu = GpuType("v100", 16.0, 300.0)
    inst_opts = [Option(c, t, price * c.power_w(gpu, 2) * t / 1000) for c, t in epoch_times.items()]
    job = Job("j", release, release + budget, dist, epoch_times, 4.0, weight=7.0)
    inst = Instance((gpu,), (Node("n", "v100", 8),), (job,), energy_price=price)
    p = exact_profile(inst_opts, dist, budget, omega=7.0)
    t = release
    segs = []
    for s in p.steps:
        dur = s.epochs * epoch_times[s.config]
        segs.append(
            Segment(
                t,
                t + dur,
                "j",
                s.config,
                tuple(("n", g) for g in range(1 if s.config.shared else s.config.gpus)),
            )
        )
        t += dur
    ev = evaluate(inst, Plan(tuple(segs)))
    assert ev.energy_cost == pytest.approx(p.energy_cost, rel=1e-9)
    assert ev.tardiness_cost == pytest.approx(p.tardiness_cost, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("budget", [3.0, 5.0, 8.0])
def test_continuous_profile_is_the_limit_of_fine_discrete_ones(budget):
    from instances import EpochDistribution

    opts = [
        Option(Config("v100", 1), 0.3, 0.02),
        Option(Config("v100", 2), 0.17, 0.03),
        Option(Config("v100", 4), 0.1, 0.045),
        Option(Config("v100", 8), 0.07, 0.09),
        Option(Config("v100", 1, shared=True), 0.5, 0.015),
    ]
    mu, work = 8.0, 20.0
    cont = continuous_profile(
        opts, lambda w: math.exp(-w / mu), lambda p: -mu * math.log(p), work, budget
    )
    assert cont.worst_time == pytest.approx(budget, rel=1e-9)
    errors = []
    for n in (500, 1000):
        stops = tuple(work * (k + 1) / n for k in range(n))
        surv = [math.exp(-work * k / n / mu) for k in range(n + 1)]
        probs = [surv[k] - surv[k + 1] for k in range(n)]
        probs[-1] += surv[n]
        disc = exact_profile(opts, EpochDistribution(stops, tuple(probs)), budget, omega=1e9)
        errors.append(abs(disc.energy_cost - cont.energy_cost) / cont.energy_cost)
    assert errors[1] < 3e-3 and errors[1] < 0.6 * errors[0]  # first-order convergence
