import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.baselines.fifo import FifoPolicy
from tests.strategies import instances, serial_plans
from validation.evaluate import evaluate
from validation.montecarlo import replay
from validation.simulator import rollout


@settings(max_examples=25)
@given(st.data())
def test_exact_cost_inside_monte_carlo_99_interval(data):
    inst = data.draw(instances(max_jobs=4))
    p = data.draw(serial_plans(inst))
    exact = evaluate(inst, p)
    mc = replay(inst, p, samples=1500, seed=data.draw(st.integers(0, 5)))
    # The seeds are fixed, so this is deterministic. Stopping points of tiny probability
    # (hypothesis draws some ~1e-8) may never be sampled, which leaves the interval too
    # narrow by that mass: hence a 1e-5 relative slack, far below any modelling error.
    assert mc.contains(exact.total_cost, rel_tol=1e-5), (mc.interval, exact.total_cost)


def test_monte_carlo_on_bundled_small(small):
    p = rollout(small, FifoPolicy())
    exact = evaluate(small, p)
    mc = replay(small, p, samples=3000, seed=1)
    assert mc.contains(exact.total_cost)
    assert abs(mc.mean_energy_cost - exact.energy_cost) < 0.05 * exact.energy_cost
    assert replay(small, p, samples=200, seed=7) == replay(small, p, samples=200, seed=7)


@pytest.mark.parametrize("seed", [None, -1, "x", 1.5, True, 2**32])
def test_a_seed_that_is_no_whole_number_is_refused_by_name(seed):
    """``seed=None`` drew fresh stops on every call (four runs, four plans); the rest
    failed inside numpy without naming the argument."""
    from heuristic.core.registry import make_policy
    from instances.bundled import bundled
    from validation.online import run_online
    from validation.simulator import simulate

    inst = bundled("tiny")
    plan = rollout(inst, make_policy("fifo"))
    for call in (
        lambda: run_online(inst, "fifo", seed=seed),
        lambda: simulate(inst, make_policy("fifo"), mode="sampled", seed=seed),
        lambda: replay(inst, plan, seed=seed),
    ):
        with pytest.raises(ValueError, match=f"seed = {seed!r}: must be a whole number"):
            call()
    with pytest.raises(ValueError, match="samples = 0: must be a whole number, at least 1"):
        replay(inst, plan, samples=0)  # NaN means and six RuntimeWarnings


@pytest.mark.parametrize("confidence", [[0.99], 0.5, "0.99"])
def test_a_confidence_not_offered_is_refused_by_name(confidence):
    """A list was a TypeError (unhashable) from inside (a hunt of the library's
    arguments)."""
    from instances.bundled import bundled

    tiny = bundled("tiny")
    with pytest.raises(ValueError, match="confidence must be one of"):
        replay(tiny, rollout(tiny, FifoPolicy()), samples=2, confidence=confidence)
