"""Dantzig-Wolfe decomposition of the slotted model: per-job schedule columns, priced by
an exact label-setting program, in a stabilised column generation whose Lagrangian bound
holds at every round; plans from the columns by the integer master (docs/milp.md,
"Column generation")."""

from milp.decomposition.colgen import CgOptions
from milp.decomposition.result import DecompositionResult
from milp.decomposition.solve import solve

__all__ = ["CgOptions", "DecompositionResult", "solve"]
