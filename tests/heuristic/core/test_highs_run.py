"""HiGHS solves asking for different thread counts in one process all solve
(heuristic.core.highs_run; highspy 1.16 refuses the second count without it)."""

import highspy
import numpy as np

from heuristic.core import highs_run


def _solve(threads: int | None) -> highspy.HighsModelStatus:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if threads is not None:
        h.setOptionValue("threads", threads)
    h.addVars(2, np.zeros(2), np.full(2, 4.0))
    h.changeColsCost(2, np.arange(2, dtype=np.int32), np.array([-1.0, -2.0]))
    h.addRow(-highspy.kHighsInf, 5.5, 2, np.arange(2, dtype=np.int32), np.array([1.0, 2.0]))
    h.changeColsIntegrality(
        2, np.arange(2, dtype=np.int32), np.full(2, highspy.HighsVarType.kInteger)
    )
    highs_run.run(h, threads)
    assert h.getInfo().objective_function_value == -5.0 or h.getModelStatus() != (
        highspy.HighsModelStatus.kOptimal
    )
    return h.getModelStatus()


def test_solves_with_different_thread_counts_in_turn_all_solve():
    for threads in (None, 1, 2, None, 1):
        assert _solve(threads) == highspy.HighsModelStatus.kOptimal
