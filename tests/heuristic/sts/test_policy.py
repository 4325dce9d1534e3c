import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.baselines.edf import EdfPolicy
from heuristic.sts.hulls import options
from heuristic.sts.policy import StsPolicy
from heuristic.sts.profile import exact_profile
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
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


def test_sts_saves_energy_by_starting_slow():
    """One job that stops after 2 of its 10 epochs with probability 0.7, due in 6 h: one
    V100 (1 h and 0.3 kWh an epoch) cannot finish by then, four (0.4 h and 0.48 kWh)
    can. EDF runs the four throughout (2.112 kWh expected); STS starts on one and
    switches to four after 3 1/3 epochs (1.68 kWh), meeting the due date. A STS that
    started fast would spend at least EDF's energy."""
    one, four = Config("v100", 1), Config("v100", 4)
    dist = EpochDistribution((2.0, 10.0), (0.7, 0.3))
    job = Job("j", 0.0, 6.0, dist, {one: 1.0, four: 0.4}, 4.0)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 4),), (job,))
    sts_plan = simulate(inst, StsPolicy()).plan
    sts = evaluate(inst, sts_plan)
    edf = evaluate(inst, simulate(inst, EdfPolicy()).plan)
    assert edf.expected_energy_kwh == pytest.approx(0.48 * (2 + 0.3 * 8))
    assert sts_plan.for_job("j")[0].config == one
    assert sts.expected_energy_kwh == pytest.approx(0.3 * (2 + 0.3 * 4 / 3) + 0.48 * 0.3 * 20 / 3)
    assert sts.energy_cost < 0.85 * edf.energy_cost
    assert sts.missed == 0


@given(instances(max_jobs=5), st.integers(0, 50))
def test_sts_same_seed_same_online_run(inst, seed):
    """STS itself draws nothing: an online run's randomness is the engine's sampled
    stops. The same seed gives the same stops and the same run, also after a run with
    another seed (nothing carried over between runs, nothing read from the clock)."""
    a = simulate(inst, StsPolicy(), mode="sampled", seed=seed)
    simulate(inst, StsPolicy(), mode="sampled", seed=seed + 1)
    b = simulate(inst, StsPolicy(), mode="sampled", seed=seed)
    assert a.epochs == b.epochs
    assert a.plan == b.plan and a.completions == b.completions


def test_sts_online_runs_follow_the_seeds_stops(base):
    """Different seeds draw different stops (job a stops at 5 or 10 epochs), and each
    run stops the job where its seed says."""
    runs = [simulate(base, StsPolicy(), mode="sampled", seed=s) for s in range(12)]
    assert {r.epochs["a"] for r in runs} == {5.0, 10.0}
    assert base.relaunch("a") == 0  # every hour of a segment runs epochs
    for r in runs:
        done = sum((s.end - s.start) / base.epoch_time("a", s.config) for s in r.plan.for_job("a"))
        assert done == pytest.approx(r.epochs["a"], rel=1e-9)


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


@settings(max_examples=40)
@given(distributions(), st.floats(0.05, 1.0), st.floats(0.4, 0.95), st.floats(0.0, 2.0))
def test_sts_alone_slotted_meets_any_due_date_the_grid_allows(dist, tau1, alpha, extra):
    """Slotted, switches happen on the grid only: a profile step shorter than a slot is
    skipped for a faster one, so a lone job still finishes by any due date that its
    fastest configuration can meet on the grid."""
    slot = 0.25
    times = {Config("v100", g): tau1 / g**alpha for g in (1, 2, 4, 8)}
    fastest = min(times.values()) * dist.max_epochs
    due = math.ceil(fastest / slot) * slot + extra
    job = Job("j", 0.0, due, dist, times, 4.0)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 8),), (job,), slot=slot)
    ev = evaluate(inst, simulate(inst, StsPolicy()).plan)
    assert ev.missed == 0


def test_sts_running_job_moves_to_a_faster_type_when_its_own_is_full():
    """j holds the only v100 slot it can get; when its faster step finds the v100 node
    full it takes a free, at least as fast configuration on another type instead of
    falling behind."""
    ten = EpochDistribution.deterministic(10)
    j = Job(
        "j",
        0.0,
        4.0,
        ten,
        {
            Config("v100", 1, shared=True): 0.5,
            Config("v100", 2): 0.2,
            Config("a100", 2): 0.15,
        },
        4.0,
    )
    blocker = Job("b", 0.5, 30.0, ten, {Config("v100", 1): 2.0}, 4.0)
    inst = Instance(
        (GpuType("v100", 16.0, 300.0), GpuType("a100", 40.0, 400.0)),
        (Node("n", "v100", 2), Node("m", "a100", 2)),
        (j, blocker),
    )
    ev = evaluate(inst, simulate(inst, StsPolicy()).plan)
    assert ev.by_job().loc["j", "missed"] == 0
