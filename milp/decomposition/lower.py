"""The nodes' own power in column generation: an instance without it whose cost of any
plan, plus a constant, is at most the true cost of that plan (docs/milp.md, 'Idle
power: a bound, not a price').

A column is one job's schedule costed alone, so it cannot see the cluster's powered
hours, a product over every job. What it can carry is the part of the nodes' energy
that splits over the jobs, folded into the busy power of each GPU type; the rest is a
constant over the plans, or left out (each part left out keeps a lower bound):

- **Powered off when empty.** A node is on while any job is active on it (its
  relaunch included), and those jobs keep at most its ``G_n`` GPUs busy; so each busy
  GPU pays ``B_n / G_n`` while it is busy (a shared slot ``1/K_max`` of that), the
  least such rate over the nodes of its type (as :func:`milp.lagrange_idle.node_share`
  charges per epoch). Idle GPUs, the delay before powering off and boots are left out.
- **Always on**, two splits (the caller keeps the larger on its plan):
  ``credit``: each busy GPU draws its busy power less its idle power (what it adds to
  the cluster's draw), and the cluster draws all its base and idle power while
  powered; ``base``: the GPUs as they are, the nodes' base power while powered (their
  GPUs' idle draw, less what busy GPUs do not draw, is never negative, and is left
  out). The powered hours are at least ``1 − Π_j F⁺_j`` in each slot, ``F⁺_j`` the
  job's completion by the slot's end were it run at top speed from its release
  (:func:`milp.lagrange_idle.sooner`): a constant per kW, priced per slot. And more,
  with one job carrying each slot (:func:`carried`): ``P(H > t) >= (1 − q_i) + q_i
  S_i(t)``, ``q_i = Π_{j≠i} F⁺_j(t)``, ``S_i(t)`` job ``i``'s probability of not having
  completed by the slot's end (:func:`milp.lagrange_idle.powered_shares`, as the
  Lagrangian bound splits it): a smaller constant, and every column of job ``i`` paying
  ``q_i π_t Δ kW S_i(t)`` for its own schedule.

Where a GPU type idles at its busy power, the credit split would leave a GPU drawing
nothing: only the base split is offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from instances import Instance, InstanceError
from instances.model import GpuType, Node
from milp.data import MilpData
from milp.decomposition.columns import Column, column_survival
from milp.decomposition.space import Space
from milp.idle import base_kw, base_per_gpu_w, prices_of
from milp.lagrange_idle import powered_shares, sooner
from milp.requirements import MilpError


@dataclass(frozen=True)
class Lowered:
    """An instance without the nodes' own power (``instance``), and the kW the cluster
    is charged for every hour it is surely powered (``kw``); ``split`` names the rule."""

    instance: Instance
    kw: float
    split: str


def lowered(instance: Instance) -> list[Lowered]:
    """The splits of ``instance``'s own power that apply (none where it has none)."""
    if not instance.node_power:
        return []
    bare = tuple(replace(g, idle_w=0.0) for g in instance.gpu_types)
    nodes = tuple(replace(n, base_w=0.0) for n in instance.nodes)
    if instance.power_off is not None:
        per_gpu = base_per_gpu_w(instance)
        try:
            gpus = tuple(replace(g, power_w=g.power_w + per_gpu.get(g.name, 0.0)) for g in bare)
        except InstanceError as err:  # a busy power raised past the model's limit
            raise MilpError(
                f"instance {instance.name!r}: the nodes' base power shared out by GPU puts "
                f"a GPU type's power out of range ({err}); column generation cannot bound it"
            ) from None
        return [Lowered(_bare(instance, gpus, nodes), 0.0, "node share")]
    out = [Lowered(_bare(instance, bare, nodes), base_kw(instance), "base")]
    idles = any(g.idle_w > 0 for g in instance.gpu_types)
    if idles and all(g.idle_w < g.power_w for g in instance.gpu_types):
        gpus = tuple(
            replace(g, power_w=g.power_w - g.idle_w, idle_w=0.0) for g in instance.gpu_types
        )
        out.append(Lowered(_bare(instance, gpus, nodes), instance.powered_kw, "credit"))
    return out


def _bare(instance: Instance, gpus: tuple[GpuType, ...], nodes: tuple[Node, ...]) -> Instance:
    # the default tardiness weight follows the top configuration's power: each job
    # keeps the weight it has on the true instance
    jobs = tuple(instance.pinned_job(j.id) for j in instance.jobs)
    return instance.replace(gpu_types=gpus, nodes=nodes, jobs=jobs, power_off=None)


@dataclass(frozen=True)
class Carried:
    """The powered hours split by one job per slot: ``charge`` (jobs x slots), the
    weight on each job's survival past each slot's end that its columns pay, and
    ``constant``, what the kW costs in the slots' shares that no job carries."""

    charge: np.ndarray
    constant: float


def carried(kw: float, space: Space, columns: Sequence[Column]) -> Carried | None:
    """The powered hours of ``kw`` split over the jobs of ``space``, each slot carried
    by the job that makes the split largest on the plan of ``columns`` (one per job;
    any choice is valid, and this one is worth most where that plan lies), or by no
    job where the hours surely powered are more (:func:`powered_shares`); ``None``
    without a kW or a plan."""
    d = space.d
    if kw <= 0 or len(columns) != len(space.jobs):
        return None
    alive = np.ones((len(space.jobs), d.slots))
    for col in columns:
        alive[col.job] = column_survival(space, col)
    done = np.array([sooner(js.jd, d.slots) for js in space.jobs]).reshape(alive.shape)
    first = np.array([js.jd.first_slot for js in space.jobs], dtype=np.int64)
    last = np.array([js.jd.last_slot for js in space.jobs], dtype=np.int64)
    share, weight = powered_shares(done, alive, first, last)
    price = np.asarray(prices_of(d)) * d.slot
    return Carried(weight * price[None, :] * kw, kw * float(np.sum(price * share)))


def powered_cost(d: MilpData) -> float:
    """The cost of one kW drawn whenever the cluster is surely powered, over the
    horizon's slots: ``Σ_t π_t Δ (1 − Π_j F⁺_j(t))``."""
    sure = 1.0 - np.prod([sooner(jd, d.slots) for jd in d.jobs.values()], axis=0)
    return float(np.sum(np.asarray(prices_of(d)) * d.slot * sure))
