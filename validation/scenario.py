"""One sampled scenario: each job's number of epochs known in advance.

The simulator's sampled mode, the clairvoyant bound and the online metrics all draw and
cost scenarios through this module, so a seed means the same stops everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from instances import EpochDistribution, Instance
from instances.fields import seed_number
from validation.evaluate import require_stops
from validation.montecarlo import sample_epochs


def scenario_epochs(instance: Instance, seed: int) -> dict[str, float]:
    """Each job's stop in the simulator's sampled mode with this seed."""
    return sample_epochs(instance, np.random.default_rng(seed_number("seed", seed)))


def scenario_instance(
    instance: Instance, epochs: dict[str, float], only: Iterable[str] | None = None
) -> Instance:
    """The instance with each job's epochs known: a run to exactly ``epochs[j]``; with
    ``only``, those jobs alone (a what-if run's, :mod:`validation.whatif`).

    Costing an online run's realised segments on it with the one evaluator gives the
    run's realised energy (every epoch run is paid) and tardiness (at the realised end).
    """
    if isinstance(only, str):  # one id was read letter by letter
        raise TypeError(f"only = {only!r}: must be a list of job ids")
    ids = [j.id for j in instance.jobs] if only is None else list(only)
    require_stops(ids, epochs)
    jobs = tuple(
        instance.pinned_job(j, distribution=EpochDistribution.deterministic(epochs[j])) for j in ids
    )
    return instance.replace(jobs=jobs, name=f"{instance.name}-clairvoyant")
