"""Helpers shared by the benchmark scripts: timing with peak memory, markdown tables,
the MILP suite with the overheads asked."""

from __future__ import annotations

import resource
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

from instances import Instance
from instances.generators.suite import milp_suite, suite_specs
from instances.generators.synthetic import synthetic


@dataclass(frozen=True)
class Measured:
    seconds: float  # best wall time over the repeats
    peak_mib: float  # peak Python heap allocated during one call (tracemalloc)
    result: Any


def measure(fn: Callable[[], Any], repeats: int = 3, trace: bool = True) -> Measured:
    """Best of ``repeats`` timed calls (untraced), then one traced call for peak memory
    (``trace=False``: none, peak reported as NaN; tracing slows a call several times)."""
    best = float("inf")
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    if not trace:
        return Measured(best, float("nan"), result)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Measured(best, peak / 2**20, result)


def max_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def markdown(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(x: object) -> str:
        return f"{x:.4g}" if isinstance(x, float) else str(x)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


RELAUNCH_CHOICES = ("both", "measured", "none")


def relaunch_modes(choice: str) -> tuple[str, ...]:
    """The generators' ``relaunch`` modes a benchmark runs side by side: measured
    overheads (the default) and none (the figures before it)."""
    return ("measured", "none") if choice == "both" else (choice,)


SUITE_RELAUNCH = ("suite", "all", "none")


def suite_instances(relaunch: str = "suite") -> list[Instance]:
    """The 24 MILP suite instances: as bundled (``suite``: the seed-2 half pays measured
    relaunch overheads), every one with its measured overheads (``all``), or none."""
    if relaunch == "suite":
        return milp_suite()
    mode = "measured" if relaunch == "all" else "none"
    return [
        synthetic(replace(spec, relaunch=mode), seed, name) for name, spec, seed in suite_specs()
    ]


# resamples of :func:`paired_ratio`'s bootstrap, and its generator's seed (the same
# runs give the same interval)
RESAMPLES = 9999
BOOTSTRAP_SEED = 0


def _ratio_of_sums(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """``sum(a) / sum(b)`` along ``axis``: the statistic and, on the runs, its point."""
    return np.asarray(a.sum(axis=axis) / b.sum(axis=axis))


@dataclass(frozen=True)
class PairedRatio:
    """The ratio of two policies' total costs over the same runs, and its 95% interval."""

    ratio: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.ratio:.3f} [{self.low:.3f}, {self.high:.3f}]"


def paired_ratio(mine: Sequence[float], base: Sequence[float]) -> PairedRatio:
    """``sum(mine) / sum(base)`` over the same runs (the same instances and seeds), with
    the 95% percentile interval of a paired bootstrap over the runs: resampling whole
    runs keeps what the two policies share (a run's jobs and stops), so the interval
    measures how much the ratio depends on which runs were drawn. Where one decision
    moves a run by tens of percent (docs/contended.md, 'How far one threshold moves a
    128-GPU run'), a ratio of 0.99 over five runs may say nothing; an interval that
    holds 1 says so."""
    x = np.asarray(mine, dtype=float)
    y = np.asarray(base, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise ValueError(f"paired_ratio needs two equal, non-empty series: {x.shape} and {y.shape}")
    ratio = float(_ratio_of_sums(x, y))
    if len(x) == 1 or np.allclose(x, ratio * y, rtol=1e-12, atol=0.0):
        return PairedRatio(ratio, ratio, ratio)  # no spread to resample
    res = stats.bootstrap(
        (x, y),
        _ratio_of_sums,
        paired=True,
        vectorized=True,
        n_resamples=RESAMPLES,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(BOOTSTRAP_SEED),
    )
    ci = res.confidence_interval
    return PairedRatio(ratio, float(ci.low), float(ci.high))
