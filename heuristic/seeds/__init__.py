"""The seed documents' systems as policies on the same model: Optimus, Gandiva,
Synergy and Liquid (its estimate, GA and placement in their own modules)."""

from heuristic.seeds.gandiva import GandivaOptions, GandivaPolicy
from heuristic.seeds.liquid import LiquidOptions, LiquidPolicy
from heuristic.seeds.optimus import OptimusOptions, OptimusPolicy
from heuristic.seeds.synergy import SynergyOptions, SynergyPolicy

__all__ = [
    "GandivaOptions",
    "GandivaPolicy",
    "LiquidOptions",
    "LiquidPolicy",
    "OptimusOptions",
    "OptimusPolicy",
    "SynergyOptions",
    "SynergyPolicy",
]
