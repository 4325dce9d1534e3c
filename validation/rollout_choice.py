"""STS choosing its order by rollout (``sts-rollout``; docs/model.md, 'STS choosing its
order by rollout').

Under contention no one order of STS wins: least slack first and the weighted modified
slack each cost up to a quarter more than the other run by run, and which wins is
decided by collisions hours after the decision (docs/contended.md). So at each event
two copies of STS (the full form, :class:`heuristic.sts.policy.StsPolicy`), one per
order, decide; where their decisions differ, each is played out by the event engine
with the present jobs alone, every job to its maximum epochs (the worst case STS's
profiles plan for; :mod:`validation.whatif`), the copy that made it deciding every
later event, and the decision whose run the evaluator costs least is applied (the
first order on a tie). It is Bertsekas's rollout with the two orders as base
heuristics (Bertsekas, Tsitsiklis and Wu 1997, "Rollout algorithms for combinatorial
optimization"). The run does not see jobs still to come, nor the sampled stops.

It lives here, not in ``heuristic/``, because it runs the event engine; it is
registered by name like the rolling MILP. Each copy sees every event; its memory of
the run (the jobs it pulled to their last step, the wake-ups it asked for) follows its
own decisions, while the cluster follows the chosen ones. No what-if run is made where
the cluster's own power is charged or empty nodes power off: there the first copy
decides alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from heuristic.core.options import require
from heuristic.core.policy import Decision, SchedulerState
from heuristic.sts.options import StsOptions
from heuristic.sts.policy import StsPolicy
from instances import Instance
from validation.whatif import History, present_cost, what_if

# jobs present from which no what-if run is made: the contended 32-GPU runs have at
# most 17 present where their copies differ, the real-data windows up to 70, and on 128
# GPUs a quarter of the events have 64 or more (docs/contended.md)
ROLLOUT_BELOW = 64


@dataclass(frozen=True)
class RolloutStsOptions(StsOptions):
    """STS's options, for both copies; ``urgency`` is the first copy's order and
    ``alternative`` the second's. ``rollout_below``: what-if runs only while fewer jobs
    than this are present; with more, the first copy decides alone (a what-if run
    re-plans every present job at each of its events, so its cost grows with their
    square: a run with 120 jobs present takes tens of seconds)."""

    alternative: Literal["modified-slack", "slack"] = "slack"
    rollout_below: int = ROLLOUT_BELOW

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.rollout_below >= 0, "rollout_below", self.rollout_below, "must be at least 0")
        require(
            self.alternative != self.urgency,
            "alternative",
            self.alternative,
            f"must differ from urgency ({self.urgency!r}): the two copies would decide alike",
        )


class RolloutStsPolicy:
    """STS deciding each event by the cheaper of its two orders' what-if runs."""

    name = "sts-rollout"
    Options = RolloutStsOptions

    def __init__(self, options: RolloutStsOptions | None = None, *, seed: int = 0) -> None:
        self.options = options if options is not None else RolloutStsOptions()
        self.seed = seed  # deterministic
        sts = {f.name: getattr(self.options, f.name) for f in dataclasses.fields(StsOptions)}
        first = StsOptions(**sts)
        second = dataclasses.replace(first, urgency=self.options.alternative)
        self.copies = (StsPolicy(first), StsPolicy(second))
        self.history = History()
        self._instance: Instance | None = None
        self._priced_alike = True  # the what-if cost is the evaluator's on this instance
        self.what_ifs = 0  # decisions that needed them (two runs each)

    def decide(self, state: SchedulerState) -> Decision:
        inst = state.instance
        if inst is not self._instance:  # a new run
            self._instance, self.history = inst, History()
            # not where the cluster's own power is charged (idle GPUs, node base power)
            # or empty nodes power off: the what-if cost leaves that power out, and the
            # engine's boots cannot be resumed; the first copy then decides alone
            self._priced_alike = not inst.idle_power and inst.power_off is None
        if not self._priced_alike:
            return self.copies[0].decide(state)
        self.history.forget_ended(state)
        occ = state.occupancy  # each copy plans on a copy of its own
        decisions = [
            c.decide(dataclasses.replace(state, occupancy=occ.copy())) for c in self.copies
        ]
        pick = 0
        if len(state.jobs) < self.options.rollout_below and _differ(*decisions):
            self.what_ifs += 1
            costs = [
                present_cost(state, what_if(state, self.history, c.fork(), d))
                for c, d in zip(self.copies, decisions, strict=True)
            ]
            pick = 1 if costs[1] < costs[0] else 0
        chosen = decisions[pick]
        self.history.record(state, chosen)
        return chosen


def _differ(a: Decision, b: Decision) -> bool:
    """Whether two decisions differ: an allocation, or when the next decision is."""
    return dict(a.assign) != dict(b.assign) or a.wake_at != b.wake_at
