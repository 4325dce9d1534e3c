"""benchmarks/spikes.py: spikes laid over jobs alone, and the summary against the MILP."""

from __future__ import annotations

from benchmarks.spikes import cases, run, spiked, summary


def test_a_spike_lays_hours_in_a_row_in_the_job_s_window_and_factor_1_changes_nothing():
    seed, inst = cases(1)[0]
    assert spiked(inst, seed, 1.0, 4) is inst
    hot = spiked(inst, seed, 50.0, 4)
    job = inst.jobs[0]
    mean = inst.price_series.mean()
    changed = [
        h
        for h, (a, b) in enumerate(
            zip(inst.price_series.values, hot.price_series.values, strict=True)
        )
        if a != b
    ]
    assert changed and all(hot.price_series.values[h] == 50.0 * mean for h in changed)
    assert changed == list(range(changed[0], changed[0] + len(changed))) and len(changed) <= 4
    assert job.release - 1 < changed[0] < job.due


def test_sts_late_for_a_spike_is_near_the_proved_optimum_on_jobs_alone():
    """One seed's six jobs at 1,000 times the mean: the MILP proves each optimum, and
    STS's sum is far below the on-time STS's, its worst job nearer its optimum."""
    df = run(1, [1000.0], 4, 60.0)
    table = summary(df).set_index("policy")
    assert (table["proved"] == 6).all()
    sts, on_time = table.loc["sts"], table.loc["sts (on time)"]
    assert sts["sum"] < 0.5 * on_time["sum"]
    assert sts["worst_ratio"] < on_time["worst_ratio"]
