"""One sampled scenario: each job's number of epochs known in advance.

The simulator's sampled mode, the clairvoyant bound and the online metrics all draw and
cost scenarios through this module, so a seed means the same stops everywhere.
"""

from __future__ import annotations

import numpy as np

from instances import EpochDistribution, Instance
from validation.montecarlo import sample_epochs


def scenario_epochs(instance: Instance, seed: int) -> dict[str, float]:
    """Each job's stop in the simulator's sampled mode with this seed."""
    return sample_epochs(instance, np.random.default_rng(seed))


def scenario_instance(instance: Instance, epochs: dict[str, float]) -> Instance:
    """The instance with each job's epochs known: a run to exactly ``epochs[j]``.

    Costing an online run's realised segments on it with the one evaluator gives the
    run's realised energy (every epoch run is paid) and tardiness (at the realised end).
    """
    jobs = tuple(
        instance.pinned_job(j.id, distribution=EpochDistribution.deterministic(epochs[j.id]))
        for j in instance.jobs
    )
    return instance.replace(jobs=jobs, name=f"{instance.name}-clairvoyant")
