"""The exact time-indexed MILP (MODEL.md section 5) in Pyomo, solved with HiGHS."""

from milp.data import MilpError
from milp.improve import Improvement, improve
from milp.model import build_model
from milp.result import Result, SolutionStatus, Termination
from milp.solve import default_slots, solve

__all__ = [
    "Improvement",
    "MilpError",
    "Result",
    "SolutionStatus",
    "Termination",
    "build_model",
    "default_slots",
    "improve",
    "solve",
]
