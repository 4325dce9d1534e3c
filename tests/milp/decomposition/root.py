"""A root's master and oracle as ``milp.decomposition.solve`` starts them, from STS's
worst-case rollout, for tests that drive the column generation by hand."""

from __future__ import annotations

from heuristic.sts.policy import StsPolicy
from instances import Instance
from milp.decomposition.colgen import CgOptions
from milp.decomposition.master import Master
from milp.decomposition.oracle import Oracle
from milp.decomposition.solve import _start
from validation.simulator import rollout


def root_master(inst: Instance, slots: int) -> tuple[Master, Oracle, float]:
    """The master holding the STS plan's columns, the oracle over the same space, and
    the separable bound the generation starts from."""
    start = _start(inst, rollout(inst, StsPolicy()), slots, None)
    master = Master(start.space, big=10.0 * max(1.0, start.evaluation.total_cost))
    master.add(start.columns)
    return master, Oracle(start.space, CgOptions().grid), start.d.separable_bound()
