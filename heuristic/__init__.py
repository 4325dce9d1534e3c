"""Decisions without a MILP, as four families on one core: :mod:`heuristic.core` (the
policy interface, occupancy, the registry), :mod:`heuristic.sts`, :mod:`heuristic.baselines`
and :mod:`heuristic.seeds`. A family imports the core (and ``sts`` only where it reuses
the profile), never another family. ``make_policy(name, **options)`` makes any of them."""

from heuristic.core.registry import make_policy, policy_names

__all__ = ["make_policy", "policy_names"]
