import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.edf import EdfPolicy
from heuristic.profile import exact_profile
from heuristic.sts import StsPolicy, options
from instances import Config, GpuType, Instance, Job, Node
from tests.strategies import distributions, instances
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import simulate


@given(instances(max_jobs=6))
def test_sts_rollout_plans_are_feasible(inst):
    res = simulate(inst, StsPolicy())
    assert check_plan(inst, res.plan) == []


@settings(max_examples=40)
@given(
    distributions(),
    st.floats(0.05, 1.0),
    st.floats(0.4, 0.95),
    st.floats(0.3, 2.0),
    st.floats(0.0, 2.0),
)
def test_sts_alone_on_the_cluster_achieves_its_profile(dist, tau1, alpha, factor, release):
    """No contention, exact time: the rollout costs exactly the profile's objective."""
    times = {Config("v100", g): tau1 / g**alpha for g in (1, 2, 4, 8)}
    times[Config("v100", 1, shared=True)] = tau1 / 0.6
    slowest = max(times.values()) * dist.max_epochs
    job = Job("j", release, release + factor * slowest, dist, times, 4.0)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 8),), (job,))
    profile = exact_profile(
        options(inst, job, "v100"), dist, job.due - job.release, inst.tardiness_weight("j")
    )
    ev = evaluate(inst, simulate(inst, StsPolicy()).plan)
    assert ev.total_cost == pytest.approx(profile.objective, rel=1e-7, abs=1e-9)


def test_sts_saves_energy_by_starting_slow(base):
    """On the base instance STS spends less expected energy than the fixed-config EDF."""
    sts = evaluate(base, simulate(base, StsPolicy()).plan)
    edf = evaluate(base, simulate(base, EdfPolicy()).plan)
    assert sts.energy_cost <= edf.energy_cost + 1e-12
    assert sts.missed == 0


@given(instances(max_jobs=5), st.integers(0, 50))
def test_sts_same_seed_same_result(inst, seed):
    a = simulate(inst, StsPolicy(seed=seed), mode="sampled", seed=seed)
    b = simulate(inst, StsPolicy(seed=seed), mode="sampled", seed=seed)
    assert a.plan == b.plan


def test_edf_serves_earliest_due_date_first(base):
    # one GPU only: b (due 4) must go before a (due 6) once both are present
    one = base.replace(
        nodes=(Node("n1", "v100", 1),),
        gpu_types=base.gpu_types[1:],
        jobs=tuple(
            j.__class__(**{**j.__dict__, "release": 0.0, "epoch_times": {Config("v100", 1): 0.2}})
            for j in base.jobs
        ),
    )
    res = simulate(one, EdfPolicy())
    assert res.plan.for_job("b")[0].start == 0.0
    assert res.plan.for_job("a")[0].start == pytest.approx(0.8)
