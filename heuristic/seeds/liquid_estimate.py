"""Liquid's resource-requirement estimators: the oracle knee with measurement noise (the
light default) and a random forest learnt from past jobs.

Liquid (Gu et al., IEEE TPDS 2022, section 4.1) predicts the "appropriate" amount of
GPUs of a job from its launch parameters with a random forest trained offline on past
runs; the label is the knee of the job's speed-up curve (the law of diminishing
marginal utility). We follow that with what a gpusched job says about itself at
submission:

- **Features**: its model family (one-hot over Liquid's data-parallel families), batch
  size, parameter count and memory, and the GPU count its user asked for. Jobs that
  carry no Gavel job type of those families have no features: the policy falls back to
  the oracle estimate for them (and counts them).
- **Labels**: the knee a past run measured, i.e. the knee of its epoch times each with
  the same log-normal measurement noise as the oracle estimate (``noise``), seeded by the
  history instance. The forest sees many noisy runs of a job type and so averages the
  noise away, which a single noisy measurement cannot.
- **History**: past instances on the same cluster. The default is Liquid's own setting
  (``LiquidSpec()``) at seeds 1000-1009, which no campaign uses (600 jobs). On another
  cluster that history is mis-trained, as a real deployment trained elsewhere would be;
  pass ``history`` to :meth:`KneeForest.train` for that cluster.
- **Model**: scikit-learn's ``RandomForestRegressor`` with the hyper-parameters of the
  authors' estimator code (YAO-optimizer ``rf.py``: 70 trees, depth 13, at least 10
  samples to split and 5 per leaf, every feature at every split), regressing
  ``log2`` of the knee; a prediction rounds to the nearest power of two.

scikit-learn is an optional extra (``pip install 'gpusched[forest]'``); nothing else in
gpusched needs it.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from heuristic.core.registry import missing_extra
from instances import Instance, Job
from instances.generators.liquid import FAMILIES, PARAMETERS, LiquidSpec, liquid
from instances.generators.realdata import family

HISTORY_SEEDS = tuple(range(1000, 1010))
# YAO-optimizer rf.py (the authors' estimator service)
FOREST_PARAMETERS: dict[str, Any] = {
    "n_estimators": 70,
    "max_depth": 13,
    "min_samples_split": 10,
    "min_samples_leaf": 5,
    "max_features": None,
}
_BATCH = re.compile(r"\(batch size (\d+)\)")


def features(job: Job) -> list[float] | None:
    """The job's feature vector, or ``None`` when it is not a job of Liquid's families
    (no job type, another family, or no batch size in the type's name)."""
    if job.job_type is None:
        return None
    fam = family(job.job_type)
    batch = _BATCH.search(job.job_type)
    if fam not in PARAMETERS or batch is None:
        return None
    asked = job.requested.gpus if job.requested is not None else 1
    return [
        *(1.0 if fam == f else 0.0 for f in FAMILIES),
        math.log2(int(batch.group(1))),
        math.log(PARAMETERS[fam]),
        job.memory_gb,
        math.log2(asked),
    ]


def knee_gpus(instance: Instance, job: Job, tolerance: float, noise: float, seed: int) -> int:
    """The oracle estimate: the fewest GPUs whose best epoch time is within ``tolerance``
    of the fastest, on epoch times each multiplied by ``exp(noise · z)``, ``z`` standard
    normal, drawn from an RNG of the seed and the job's id (the same estimate whatever
    else runs). With ``noise`` 0 it is the job's true knee."""
    rng = np.random.default_rng([seed, zlib.crc32(job.id.encode())])
    best: dict[int, float] = {}
    for c in instance.allowed_configs(job):
        if c.shared:
            continue
        t = instance.epoch_time(job, c) * float(np.exp(noise * rng.standard_normal()))
        best[c.gpus] = min(t, best.get(c.gpus, t))
    fastest = min(best.values())
    return min(g for g, t in best.items() if t <= (1 + tolerance) * fastest)


@dataclass(frozen=True)
class ForestScore:
    """How well the forest predicts held-out knees."""

    jobs: int
    r2_log2: float  # R² of log2(knee), the regression target
    r2: float  # R² of the knee in GPUs, after rounding to a power of two
    exact: float  # share of jobs whose rounded prediction is the true knee


class KneeForest:
    """A trained estimator: GPUs for a job, or ``None`` where it has no features."""

    def __init__(self, model: Any) -> None:
        self.model = model

    @classmethod
    def train(
        cls,
        history: Sequence[Instance],
        *,
        tolerance: float = 0.1,
        noise: float = 0.1,
        seed: int = 0,
    ) -> KneeForest:
        """Fit on every job of ``history`` that has features; its label is the knee one
        run measured (noise seeded per history instance and job)."""
        install = missing_extra("liquid-forest")  # the registry names the extra once
        if install is not None:
            raise ValueError(f"the random-forest estimator needs scikit-learn: {install}")
        from sklearn.ensemble import RandomForestRegressor

        rows: list[list[float]] = []
        labels: list[float] = []
        for k, inst in enumerate(history):
            for job in inst.jobs:
                x = features(job)
                if x is not None:
                    rows.append(x)
                    g = knee_gpus(inst, job, tolerance, noise, seed * 7919 + k)
                    labels.append(math.log2(g))
        need = FOREST_PARAMETERS["min_samples_split"]
        if len(rows) < need:
            raise ValueError(f"history: {len(rows)} jobs with Liquid's features, need {need}")
        model = RandomForestRegressor(**FOREST_PARAMETERS, random_state=seed, n_jobs=1)
        model.fit(np.array(rows), np.array(labels))
        return cls(model)

    def predict_log2(self, jobs: Sequence[Job]) -> list[float | None]:
        """The forest's raw ``log2`` estimate per job (``None``: no features)."""
        rows = [features(j) for j in jobs]
        known = [r for r in rows if r is not None]
        out = iter(self.model.predict(np.array(known)).tolist() if known else [])
        return [None if r is None else float(next(out)) for r in rows]

    def predict(self, job: Job) -> int | None:
        """GPUs for the job: the estimate rounded to the nearest power of two."""
        (y,) = self.predict_log2([job])
        return None if y is None else 2 ** math.floor(y + 0.5)

    def score(self, instances: Sequence[Instance], tolerance: float = 0.1) -> ForestScore:
        """R² and exact-hit share against the true (noise-free) knee of every job with
        features in ``instances``."""
        truth: list[float] = []
        guess: list[float] = []
        for inst in instances:
            jobs = [j for j in inst.jobs if features(j) is not None]
            for job, est in zip(jobs, self.predict_log2(jobs), strict=True):
                assert est is not None
                truth.append(math.log2(knee_gpus(inst, job, tolerance, 0.0, 0)))
                guess.append(est)
        from sklearn.metrics import r2_score

        t, y = np.array(truth), np.array(guess)
        rounded = np.floor(y + 0.5)
        return ForestScore(
            len(t),
            float(r2_score(t, y)),
            float(r2_score(2.0**t, 2.0**rounded)),
            float(np.mean(rounded == t)),
        )


@functools.lru_cache(maxsize=8)
def default_forest(tolerance: float = 0.1, noise: float = 0.1, seed: int = 0) -> KneeForest:
    """The forest trained on the default history (Liquid's setting, seeds 1000-1009);
    trained once per process and arguments."""
    history = [liquid(LiquidSpec(), s) for s in HISTORY_SEEDS]
    return KneeForest.train(history, tolerance=tolerance, noise=noise, seed=seed)
