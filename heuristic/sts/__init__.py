"""STS, the stochastic heuristic: the single-job profile (exact, and the cyipopt
reference in :mod:`heuristic.sts.profile_ipopt`), the switching-cost rule, the ledger,
the cluster policy, its per-instance search and its incremental form."""

from heuristic.sts.hulls import HullTable, JobProfiles, TypeProfile
from heuristic.sts.incremental import IncrementalStsPolicy
from heuristic.sts.ledger import Ledger
from heuristic.sts.options import StsOptions, StsTuning
from heuristic.sts.policy import StsPolicy
from heuristic.sts.profile import Option, Profile, Step, exact_profile, lower_hull
from heuristic.sts.search import SearchResult, search
from heuristic.sts.switching import Relaunch, relaunch_profile

__all__ = [
    "HullTable",
    "IncrementalStsPolicy",
    "JobProfiles",
    "Ledger",
    "Option",
    "Profile",
    "Relaunch",
    "SearchResult",
    "Step",
    "StsOptions",
    "StsPolicy",
    "StsTuning",
    "TypeProfile",
    "exact_profile",
    "lower_hull",
    "relaunch_profile",
    "search",
]
