"""The exact time-indexed MILP (docs/milp.md) in Pyomo, solved with HiGHS; the
neighbourhood search and the Lagrangian bound built on it. Every method returns the one
result vocabulary of :mod:`heuristic.core.result`."""

from milp.improve import Improvement, improve
from milp.lagrange import LagrangeBound, lagrangian_bound
from milp.model import build_model
from milp.requirements import MilpError, ModelTooLarge
from milp.result import Result, SolutionStatus, Termination
from milp.solve import default_slots, solve

__all__ = [
    "Improvement",
    "LagrangeBound",
    "MilpError",
    "ModelTooLarge",
    "Result",
    "SolutionStatus",
    "Termination",
    "build_model",
    "default_slots",
    "improve",
    "lagrangian_bound",
    "solve",
]
