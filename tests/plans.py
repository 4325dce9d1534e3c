"""Rollouts of the registered policies, kept per test process.

Several tests check that a model feature absent from an instance changes no figure: each
compares a policy's plan on the instance with the feature's neutral form against its plan
on the plain instance. The plain plan is the same for all of them, and on ``medium`` the
STS family's rollouts take seconds each, so it is made once per process (keyed by the
instance's name and checked equal to the instance asked for)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from heuristic.core.registry import make_policy
from instances import Instance, Plan
from validation.simulator import rollout

_KEPT: dict[tuple[str, str], tuple[Instance, Plan]] = {}

# STS with one option off that only a price series (``timing``) or idle power
# (``idle_tail``) reads: on an instance with neither their plans are STS's (a test on
# ``small``), so on ``medium``, where each rollout takes seconds, STS stands for them
STS_BLIND = ("sts-price-blind", "sts-idle-blind")


def cases(names: Sequence[str], policies: Iterable[str]) -> list[tuple[str, str]]:
    """Each bundled instance with each policy, but ``medium`` without :data:`STS_BLIND`."""
    return [(n, p) for n in names for p in policies if not (n == "medium" and p in STS_BLIND)]


def plain_rollout(inst: Instance, policy: str) -> Plan:
    """``rollout(inst, make_policy(policy, seed=0))``, kept for the process."""
    key = (inst.name, policy)
    found = _KEPT.get(key)
    if found is not None and found[0] == inst:
        return found[1]
    plan = rollout(inst, make_policy(policy, seed=0))
    _KEPT[key] = (inst, plan)
    return plan
