"""The sets of ``benchmarks/contention_rules.py``: their sizes, and the bundled day's
last windows holding exactly the jobs asked for (the set docs/model.md quotes)."""

from __future__ import annotations

import pytest

from benchmarks.contention_rules import (
    LOADS,
    SETS,
    cases,
    instance,
    misses,
    window_means,
    write_runs,
)
from instances import InstanceError
from instances.generators import RealDataSpec, real_data
from instances.generators.realdata import cluster_mix


def test_the_sets_have_the_runs_the_docs_count():
    sizes = {name: len(list(cases(name, LOADS))) for name in SETS}
    assert sizes == {"week": 72, "day": 100, "c32": 25, "c128": 25, "light": 30}


def test_seeds_per_window_multiply_every_set_and_keep_its_windows():
    for name in SETS:
        own = list(cases(name, LOADS))
        five = list(cases(name, LOADS, 5))
        assert {c[:4] for c in five} == {c[:4] for c in own}
        assert len(five) == 5 * len({c[:4] for c in own})
        assert {c[4] for c in five} == set(range(5))


def test_a_window_mean_is_over_its_own_seeds():
    a, b = ("week", 30, 4, 0, 0), ("week", 30, 4, 0, 1)
    c = ("week", 30, 8, 0, 0)
    got = {(a, "sts"): 1.0, (b, "sts"): 5.0, (c, "sts"): 2.0}
    got |= {(a, "lp"): 2.0, (b, "lp"): 3.0, (c, "lp"): 1.0}
    means = window_means([a, b, c], got, "sts")
    # STS wins seed 0's run (1 against 2) yet its mean over the window is above lp's
    assert means == {a[:4]: (3.0, 2.5), c[:4]: (2.0, 1.0)}


def test_misses_name_the_worst_run_and_every_window_not_below_lp(tmp_path):
    todo = list(cases("c32", (0.3, 0.6), 2))
    got = {(c, "lp"): 10.0 for c in todo} | {(c, "sts"): 9.0 for c in todo}
    got[("c32", 0.6, 0, 0, 1), "sts"] = 12.0  # 1.2 times lp: the worst run
    got[("c32", 0.6, 0, 0, 0), "sts"] = 8.5  # the window's mean 10.25 is still above lp
    lines = misses(["c32"], ["sts"], got, (0.3, 0.6), 2)
    assert lines == [
        "c32 sts: worst run ('c32', 0.6, 0, 0, 1) at 1.200 times lp",
        "c32 sts: window ('c32', 0.6, 0, 0) mean 10.2500 against lp's 10.0000",
    ]
    write_runs(str(tmp_path / "runs.csv"), got)
    rows = (tmp_path / "runs.csv").read_text().splitlines()
    assert rows[0] == "set,a,b,c,seed,policy,total_cost"
    assert len(rows) == 1 + len(got)
    assert "c32,0.6,0,0,1,sts,12.0" in rows


def test_a_last_window_of_the_day_ends_with_its_last_usable_job():
    last = instance(("day", 30, 4, "last", 0), "uniform")
    first = instance(("day", 30, 4, "first", 0), "uniform")
    assert len(last.jobs) == len(first.jobs) == 30
    assert {j.id for j in last.jobs} != {j.id for j in first.jobs}
    # one job later and the day no longer holds 30 usable jobs
    start = min(int(j.id[1:]) for j in last.jobs)
    later = RealDataSpec(jobs=30, start=start + 1, nodes=cluster_mix(4))
    with pytest.raises(InstanceError, match="jobs"):
        real_data(later, 0)


def test_idle_lays_the_power_of_nodes_always_on_over_the_case():
    case = ("c32", 0.6, 0, 0, 0)
    bare, low = instance(case, "uniform"), instance(case, "uniform", "low")
    assert bare.powered_kw == 0 and low.powered_kw > 0 and low.power_off is None
    assert low.jobs == bare.jobs and [n.id for n in low.nodes] == [n.id for n in bare.nodes]
