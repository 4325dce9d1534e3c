"""``benchmarks.common.paired_ratio``: the ratio of two policies' totals over the same
runs and its paired-bootstrap interval, which the contention and prices benchmarks print
so that a difference the runs cannot resolve reads as such (docs/contended.md,
docs/prices.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.common import paired_ratio
from benchmarks.when import bill_cut_interval


def test_the_same_runs_give_one_and_a_scaled_copy_its_scale_exactly():
    runs = [3.0, 70.0, 12.5, 400.0]
    assert (paired_ratio(runs, runs).low, paired_ratio(runs, runs).high) == (1.0, 1.0)
    r = paired_ratio([1.1 * x for x in runs], runs)
    assert r.ratio == pytest.approx(1.1)
    assert (r.low, r.high) == pytest.approx((1.1, 1.1))


def test_the_interval_holds_the_ratio_and_is_reproducible():
    rng = np.random.default_rng(1)
    base = rng.uniform(300, 700, 15)
    mine = base * rng.normal(1.0, 0.05, 15)
    r = paired_ratio(mine, base)
    assert r.low < r.ratio < r.high
    assert paired_ratio(mine, base) == r
    assert str(r).startswith(f"{r.ratio:.3f} [")


def test_noise_that_the_runs_share_does_not_widen_it():
    # the two policies' runs vary together by a factor of four (the runs' own spread)
    # and apart by 1%: pairing resamples whole runs, so only the 1% moves the ratio
    rng = np.random.default_rng(2)
    base = rng.uniform(100, 400, 20)
    mine = base * 1.10 * rng.uniform(0.99, 1.01, 20)
    r = paired_ratio(mine, base)
    assert r.low > 1.08 and r.high < 1.12


def test_runs_that_cannot_tell_two_forms_apart_give_an_interval_holding_one():
    # the fifteen runs of 128 GPUs at load 0.3 (docs/contended.md): sts against sts-full
    # fmt: off
    sts = [540.99, 483.39, 530.87, 731.67, 585.76, 384.90, 706.97, 455.44, 437.97, 382.02,
           511.49, 544.00, 515.48, 702.26, 390.92]
    full = [539.02, 470.83, 557.70, 682.41, 599.00, 371.58, 702.94, 466.27, 443.22, 321.05,
            514.26, 545.55, 521.64, 721.05, 393.93]
    # fmt: on
    r = paired_ratio(sts, full)
    assert r.low < 1.0 < r.high


@pytest.mark.parametrize("mine, base", [([], []), ([1.0, 2.0], [1.0]), ([[1.0]], [[1.0]])])
def test_series_that_do_not_pair_are_refused(mine, base):
    with pytest.raises(ValueError, match="paired_ratio"):
        paired_ratio(mine, base)


def test_the_prices_table_gives_the_bill_cut_with_its_interval():
    # two scenarios, two seeds: STS pays 0.8 of price-blind STS's bill on every run
    rows = [
        {"scenario": sc, "seed": seed, "policy": p, "bill": bill * (0.8 if p == "sts" else 1.0)}
        for sc, bill in (("thesis[a]", 10.0), ("thesis[b]", 30.0))
        for seed in (0, 1)
        for p in ("sts", "sts-price-blind", "lp")
    ]
    line = bill_cut_interval(pd.DataFrame(rows))
    assert "0.800 [0.800, 0.800]" in line
    assert "a cut of 20.0%; 95% interval 20.0% to 20.0%" in line
