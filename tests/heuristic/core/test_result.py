"""The result vocabulary's gaps and its summary layout (heuristic/core/result.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from heuristic.core.result import (
    SolutionStatus,
    Termination,
    certified_gap,
    relative_gap,
    summary_text,
)


def test_the_relative_gap_is_highs_s_and_missing_where_a_figure_is():
    assert relative_gap(10.0, 9.0) == pytest.approx(0.1)
    assert relative_gap(10.0, 11.0) == 0.0  # a bound above the plan (rounding) reads 0
    assert relative_gap(None, 9.0) is None and relative_gap(10.0, None) is None
    assert relative_gap(0.0, 0.0) == 0.0
    # relative in any unit: a 36% gap at costs of 1e-300 is still 36%
    assert relative_gap(1e-300, 0.64e-300) == pytest.approx(0.36)
    assert relative_gap(0.0, -1.0) == math.inf


def test_the_certified_gap_is_relative_to_the_bound():
    assert certified_gap(10.0, 8.0) == pytest.approx(0.25)
    assert certified_gap(0.0, 0.0) == 0.0
    assert certified_gap(1.0, 0.0) == math.inf


@dataclass(frozen=True)
class _Made:
    objective: float | None
    bound: float | None
    status: SolutionStatus
    termination: Termination
    runtime: float

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    def summary(self) -> str:
        return summary_text("a made-up result", self, [("a longer label", "x")])


def test_the_summary_aligns_the_vocabulary_and_the_method_s_figures():
    text = _Made(0.5, 0.4, SolutionStatus.FEASIBLE, Termination.TIME_LIMIT, 1.234).summary()
    title, *lines = text.splitlines()
    assert title == "a made-up result"
    labels = [line.split("  ")[1].strip() for line in lines]
    assert labels == ["objective", "bound", "gap", "status", "runtime", "a longer label"]
    # every value starts in one column
    assert len({len(line) - len(line[2:].split("  ", 1)[1].lstrip()) for line in lines}) == 1
    assert "0.5" in lines[0] and "0.4" in lines[1] and "20.00%" in lines[2]
    assert "feasible (stopped: time_limit)" in lines[3] and "1.23 s" in lines[4]


def test_missing_figures_read_as_words_not_nan():
    text = _Made(None, None, SolutionStatus.NONE, Termination.OPTIMAL, 0.0).summary()
    assert "none (no plan)" in text and "none (no bound proved)" in text
    assert "nan" not in text and "None" not in text
