"""HiGHS solves asking for different thread counts in one process all solve
(heuristic.core.highs_run; highspy 1.16 refuses the second count without it)."""

import re

import highspy
import numpy as np
import pytest

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


def test_the_environment_sets_the_thread_count_left_to_highs(monkeypatch):
    monkeypatch.delenv(highs_run.THREADS_VARIABLE, raising=False)
    assert highs_run.default_threads() is None
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    highs_run.run(h)  # an empty model: only the option is looked at
    assert h.getOptionValue("threads")[1] == 0  # HiGHS's own default
    monkeypatch.setenv(highs_run.THREADS_VARIABLE, " 3 ")
    assert highs_run.default_threads() == 3
    assert _solve(None) == highspy.HighsModelStatus.kOptimal
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    highs_run.run(h)
    assert h.getOptionValue("threads")[1] == 3


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_thread_count_is_refused_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv(highs_run.THREADS_VARIABLE, raw)
    with pytest.raises(ValueError, match=f"GPUSCHED_HIGHS_THREADS.*{re.escape(repr(raw))}"):
        highs_run.default_threads()
