"""The pricing oracle of the column generation: for every job at given prices, a lower
bound on its priced optimum (the completion bound at its first slot), and its cheapest
schedules by the heuristic (beam) or exact label-setting program, as columns."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from milp.decomposition.columns import Column, make_column
from milp.decomposition.completion import Steps, completion_bound
from milp.decomposition.pricing import Priced, price_job
from milp.decomposition.slots import SlotModel
from milp.decomposition.space import JobSpace, Space


@dataclass(frozen=True)
class Round:
    """One pricing of every job: ``lower`` bounds each job's priced optimum from below,
    ``value`` from above (exactly when the pricer was exact); ``columns`` are the
    schedules found cheaper than the job's best known column; ``labels`` counts the
    partial schedules kept."""

    lower: np.ndarray
    value: np.ndarray
    columns: list[Column]
    labels: int
    exact: bool


class Oracle:
    """Per job its slot arithmetic and price-free completion tables, made once."""

    def __init__(self, space: Space, grid: int) -> None:
        self.space = space
        self.models = [SlotModel.of(js, space.d.slot, space.d.tardiness) for js in space.jobs]
        self.steps = [Steps.of(m, grid) for m in self.models]

    def prices(self, js: JobSpace, m: SlotModel, lam: np.ndarray) -> np.ndarray:
        """What each choice holds, priced in each slot of the job's window."""
        return np.asarray(js.usage @ lam[:, m.first : m.last + 1])

    def price(
        self,
        lam: np.ndarray,
        upper: np.ndarray,
        *,
        beam: int | None,
        keep: int,
        deadline: float | None = None,
    ) -> Round:
        """Price every job at ``lam`` (resources x slots); ``upper``: each job's best known
        column at these prices (its pricing looks only below it). ``beam=None``: exact."""
        lower = np.empty(len(self.models))
        value = np.empty(len(self.models))
        columns: list[Column] = []
        labels = 0
        exact = beam is None
        for j, (js, m, steps) in enumerate(
            zip(self.space.jobs, self.models, self.steps, strict=True)
        ):
            price = self.prices(js, m, lam)
            bound = completion_bound(m, steps, price)
            lower[j] = min(bound[0, 0], upper[j])
            if deadline is not None and time.perf_counter() > deadline:
                value[j], exact = upper[j], False  # out of time: this round proves nothing
                continue
            got: Priced = price_job(m, steps, price, bound, float(upper[j]), beam=beam, keep=keep)
            value[j] = got.value
            labels += got.labels
            columns += [make_column(self.space, j, s, ch) for s, ch in got.schedules]
        return Round(lower, value, columns, labels, exact)
