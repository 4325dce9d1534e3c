"""The sets of ``benchmarks/contention_rules.py``: their sizes, and the bundled day's
last windows holding exactly the jobs asked for (the set docs/model.md quotes)."""

from __future__ import annotations

import pytest

from benchmarks.contention_rules import LOADS, SETS, cases, instance
from instances import InstanceError
from instances.generators import RealDataSpec, real_data
from instances.generators.realdata import cluster_mix


def test_the_sets_have_the_runs_the_docs_count():
    sizes = {name: len(list(cases(name, LOADS))) for name in SETS}
    assert sizes == {"week": 72, "day": 100, "c32": 25, "c128": 25, "light": 30}


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
