"""The baselines STS is measured against: FIFO and EDF on fixed configurations, the
randomised greedy (RG) and path relinking (PR) of Filippini et al., what a plain
cluster manager does (``static``), and the fluid LP relaxation's allocation (``lp``)."""

from heuristic.baselines.edf import EdfPolicy
from heuristic.baselines.fifo import FifoPolicy, FixedConfigOptions
from heuristic.baselines.lp import LpPolicy
from heuristic.baselines.pr import PrOptions, PrPolicy
from heuristic.baselines.rg import RgOptions, RgPolicy
from heuristic.baselines.static import StaticPolicy

__all__ = [
    "EdfPolicy",
    "FifoPolicy",
    "FixedConfigOptions",
    "LpPolicy",
    "PrOptions",
    "PrPolicy",
    "RgOptions",
    "RgPolicy",
    "StaticPolicy",
]
