"""The capacity sweep of ``benchmarks/when_capacity.py``: a larger cluster keeps the jobs
and their arrival times, and the table's cut is STS's against price-blind STS."""

from __future__ import annotations

import pandas as pd
import pytest

from benchmarks.when_capacity import instance, table


def test_a_scaled_cluster_keeps_the_jobs_and_their_arrivals():
    small, large = instance(1, 1.2, 0, 840), instance(2, 1.2, 0, 840)
    assert sum(n.num_gpus for n in small.nodes) == 32
    assert sum(n.num_gpus for n in large.nodes) == 64
    assert [j.id for j in small.jobs] == [j.id for j in large.jobs]
    assert [j.release for j in small.jobs] == pytest.approx([j.release for j in large.jobs])
    assert [j.due for j in small.jobs] == pytest.approx([j.due for j in large.jobs])
    # the series laid from the same hour on both
    assert small.price_series.values == large.price_series.values


def test_the_table_sums_runs_and_gives_sts_cut_against_price_blind():
    rows = []
    for gpus, load, policy, bill, missed in [
        (32, 0.6, "sts", 9.0, 3),
        (32, 0.6, "sts-price-blind", 10.0, 4),
        (32, 1.2, "sts", 6.0, 1),
        (32, 1.2, "sts-price-blind", 10.0, 0),
    ]:
        rows.append(
            {
                "gpus": gpus,
                "load on 32 GPUs": load,
                "seed": 0,
                "offset_h": 0,
                "policy": policy,
                "bill": bill,
                "total": bill + missed,
                "missed": missed,
                "by a minute": 0,
                "window under a minute": 0,
            }
        )
    out = table(pd.DataFrame(rows))
    assert out.loc[(32, 0.6), "STS's cut of the bill"] == pytest.approx(0.1)
    assert out.loc[(32, 1.2), "STS's cut of the bill"] == pytest.approx(0.4)
    assert out.loc[(32, "all"), "bill (sts)"] == 15.0
    assert out.loc[(32, "all"), "STS's cut of the bill"] == pytest.approx(0.25)
    assert out.loc[(32, "all"), "missed (sts-price-blind)"] == 4
