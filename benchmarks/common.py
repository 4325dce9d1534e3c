"""Helpers shared by the benchmark scripts: timing with peak memory, markdown tables,
the MILP suite with the overheads asked."""

from __future__ import annotations

import resource
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

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
