"""The core every policy family builds on: the policy interface, the cluster's
occupancy and placement, holds, the configuration choice rules, urgency, options and
the registry. Imports nothing of the families."""

from heuristic.core.choice import (
    RULES,
    cheapest_placement,
    first_placement,
    ranked_configs,
    requested_configs,
    worst_case_cost,
)
from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.options import NoOptions, OptionError, build_options
from heuristic.core.policy import Decision, JobStatus, Policy, SchedulerState
from heuristic.core.registry import (
    make_policy,
    missing_extra,
    policy_class,
    policy_names,
    policy_options,
    register,
)
from heuristic.core.urgency import fastest_epoch_time, slack

__all__ = [
    "RULES",
    "Allocation",
    "Decision",
    "Holds",
    "JobStatus",
    "NoOptions",
    "Occupancy",
    "OptionError",
    "Policy",
    "SchedulerState",
    "build_options",
    "cheapest_placement",
    "fastest_epoch_time",
    "first_placement",
    "make_policy",
    "missing_extra",
    "policy_class",
    "policy_names",
    "policy_options",
    "ranked_configs",
    "register",
    "requested_configs",
    "slack",
    "worst_case_cost",
]
