"""Early-stopping families: the distribution of the epochs a job really runs.

Stopping points are ``B`` evenly spaced validation checkpoints ending at ``E``.

- ``none``: always runs to ``E`` (deterministic).
- ``uniform``: equally likely to stop at any checkpoint.
- ``early``: mostly early: 10% run to the end, the rest decays geometrically
  (ratio 0.7) from the first checkpoint on.
- ``helios``: fitted to SenseTime Helios (SC'21, bundled ``helios_cluster_summary.csv``):
  the share of GPU jobs that completed (62.4% over the four clusters) runs to ``E``; the
  cancelled and failed ones stop uniformly at an earlier checkpoint. The GPU-time shares
  (51.3% completed) cannot also be matched with equal-length jobs: they would need the
  early-ending jobs to run over 100% of a completed job's work, i.e. cancelled jobs are
  longer on average; we fit the job counts.
"""

from __future__ import annotations

import csv
from functools import cache
from importlib import resources

from instances.distribution import EpochDistribution
from instances.errors import InstanceError

FAMILIES = ("none", "uniform", "early", "helios")


@cache
def helios_completion_share() -> float:
    """Share of GPU jobs that completed, over all Helios clusters (the ``total`` row)."""
    text = resources.files("instances.data").joinpath("helios_cluster_summary.csv").read_text()
    for row in csv.DictReader(text.splitlines()):
        if row["id"] == "total":
            return float(row["complete_rate_gpu"])
    raise RuntimeError("helios_cluster_summary.csv has no 'total' row")


def checkpoints(max_epochs: int, blocks: int) -> tuple[float, ...]:
    """``blocks`` checkpoints evenly spread over ``(0, E]``, rounded to whole epochs."""
    b = max(1, min(blocks, max_epochs))
    pts = sorted({max(1, round(max_epochs * (i + 1) / b)) for i in range(b)})
    return tuple(float(p) for p in pts)


def _normalise(weights: list[float]) -> tuple[float, ...]:
    total = sum(weights)
    probs = [w / total for w in weights]
    probs[-1] = 1.0 - sum(probs[:-1])
    return tuple(probs)


def make_distribution(family: str, max_epochs: int, blocks: int = 10) -> EpochDistribution:
    """The named family on ``blocks`` checkpoints of a job with ``max_epochs`` epochs."""
    if family not in FAMILIES:
        raise InstanceError("early_stopping", family, f"must be one of {FAMILIES}")
    stops = checkpoints(max_epochs, blocks)
    n = len(stops)
    if family == "none" or n == 1:
        return EpochDistribution.deterministic(float(max_epochs))
    if family == "uniform":
        probs = _normalise([1.0] * n)
    elif family == "early":
        early = [0.7**i for i in range(n - 1)]
        s = sum(early)
        probs = _normalise([0.9 * w / s for w in early] + [0.1])
    else:  # helios
        done = helios_completion_share()
        probs = _normalise([(1.0 - done) / (n - 1)] * (n - 1) + [done])
    return EpochDistribution(stops, probs)
