"""The small MILP suite: 24 seeded synthetic instances within the exact MILP's reach
(2-4 nodes, 4-10 jobs, at most 48 slots of 0.25 h), half with GPU sharing, half without;
the seed-2 half pays measured relaunch overheads (15-250 s a relaunch), the seed-1 half
none.

They are generated from this code (seeded, byte-reproducible): ``gpusched gap suite``
runs them, ``gpusched generate suite --out DIR`` writes them as JSON files.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from instances.errors import InstanceError
from instances.generators.synthetic import SyntheticSpec, synthetic
from instances.model import Instance

SLOT = 0.25


def suite_specs() -> list[tuple[str, SyntheticSpec, int]]:
    """(name, spec, seed) of each suite instance."""
    out = []
    shapes = [(2, 4), (2, 6), (3, 6), (3, 8), (4, 8), (4, 10)]
    for sharing in (True, False):
        for nodes, jobs in shapes:
            for seed in (1, 2):
                spec = SyntheticSpec(
                    nodes=nodes,
                    jobs=jobs,
                    gpus_per_node=(2, 4),
                    rate="exponential",
                    epochs=(3, 8),
                    epoch_hours_k80=(0.2, 0.6),
                    blocks=3,
                    sharing=sharing,
                    slot=SLOT,
                    relaunch="measured" if seed == 2 else "none",
                )
                tag = "share" if sharing else "excl"
                out.append((f"suite-{tag}-{nodes}n{jobs}j-s{seed}", spec, seed))
    return out


# the generator options a suite instance takes besides its own spec: overheads, and the
# energy layers laid over any generated instance (docs/model.md)
LAYERS = ("relaunch", "prices", "carbon_price", "idle", "power_off")


def suite_instance(name: str, relaunch: str | None = None, **layers: Any) -> Instance:
    """A suite instance by name; ``relaunch`` ("measured" or "none"), if given, replaces
    the overheads its half of the suite carries; ``layers`` (``prices``,
    ``carbon_price``, ``idle``, ``power_off``: the generators' options) are laid over it
    as over any generated instance, a bad one refused naming the option."""
    spec, seed = suite_spec(name, relaunch, **layers)
    return synthetic(spec, seed, name)


def suite_spec(name: str, relaunch: str | None = None, **layers: Any) -> tuple[SyntheticSpec, int]:
    """The spec and seed :func:`suite_instance` generates from (checked, not built)."""
    found = [(spec, seed) for n, spec, seed in suite_specs() if n == name]
    if not found:
        raise InstanceError("instance", name, "not a suite instance name")
    spec, seed = found[0]
    unknown = sorted(set(layers) - set(LAYERS))
    if unknown:
        raise InstanceError(unknown[0], layers[unknown[0]], f"not one of {LAYERS}")
    if relaunch is not None:
        layers["relaunch"] = relaunch
    return dataclasses.replace(spec, **layers), seed  # checked by the spec, naming the field


def milp_suite(relaunch: str | None = None) -> list[Instance]:
    """The 24 suite instances; ``relaunch``, if given, for all of them."""
    return [suite_instance(name, relaunch) for name, _, _ in suite_specs()]
