"""The rolling-horizon MILP policy: an exact online reference for small instances.

At each event it builds the static instance of the jobs present (remaining epochs with
their conditional stopping distribution, due dates relative to now, the original
tardiness weights), solves its MILP warm-started by STS under a time limit, and applies
the first slot of the optimal plan. It wakes up again at the plan's next change, so
between events it follows the plan it solved. It never sees a job's sampled stop.

With a relaunch overhead the static instance charges every present job a start, so to
the MILP continuing a running job is priced like moving it (the evaluator knows no plan
that starts from a running state); a job the plan keeps on its configuration and nodes
keeps its very GPUs (:func:`keep_gpus`), so the engine charges it nothing. A reference
for small instances, not exact online (docs/milp.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from heuristic.core.occupancy import Allocation
from heuristic.core.options import CheckedOptions, require
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.sts.policy import StsPolicy
from instances import Instance, Job, Plan
from milp.requirements import MilpError, require_slot
from milp.solve import solve
from validation.simulator import rollout

# a due date already passed becomes this close to "now": tardiness then differs from the
# true one by a constant, which changes no decision
_PAST_DUE = 1e-6


def remaining_instance(state: SchedulerState) -> Instance:
    """The jobs present at ``state.time`` as a static instance starting at time 0."""
    inst, now = state.instance, state.time

    def rest(js: JobStatus) -> Job:
        return inst.pinned_job(
            js.job.id,
            release=0.0,
            due=max(js.job.due - now, _PAST_DUE),
            distribution=js.job.distribution.conditional(js.progress),
        )

    # the bill seen from now: the series shifted so that their time 0 is now
    carbon = inst.carbon
    return inst.replace(
        jobs=tuple(rest(js) for js in state.jobs),
        name=f"{inst.name}@{now:g}h",
        prices=None if inst.prices is None else inst.prices.shifted(now),
        carbon=None if carbon is None else replace(carbon, intensity=carbon.intensity.shifted(now)),
    )


def keep_gpus(state: SchedulerState, first: dict[str, Allocation]) -> dict[str, Allocation]:
    """The plan's first slot with each job that keeps its configuration and nodes on the
    very GPUs it holds (else the engine would see a move and relaunch it). The plan's
    GPU ids are one assignment of the counts the MILP chose per node: the other jobs'
    ids are renamed, node by node, around the kept ones."""
    held = {js.job.id: js.allocation for js in state.jobs if js.allocation is not None}
    kept: dict[str, Allocation] = {}
    for j, alloc in first.items():
        cur = held.get(j)
        if (
            cur is not None
            and cur.config == alloc.config
            and not cur.config.shared
            and {n for n, _ in cur.gpus} == {n for n, _ in alloc.gpus}
        ):
            kept[j] = cur
    used: dict[str, set[int]] = {}
    for alloc in kept.values():
        for n, g in alloc.gpus:
            used.setdefault(n, set()).add(g)
    rename: dict[tuple[str, int], int] = {}
    others = sorted({ref for j, a in first.items() if j not in kept for ref in a.gpus})
    for n, g in others:  # an id no kept job holds stays as it is
        if g not in used.setdefault(n, set()):
            rename[n, g] = g
            used[n].add(g)
    for n, g in others:
        if (n, g) not in rename:
            rename[n, g] = min(set(range(state.instance.node(n).num_gpus)) - used[n])
            used[n].add(rename[n, g])
    out = dict(kept)
    for j, a in first.items():
        if j not in kept:
            out[j] = Allocation(a.config, tuple((n, rename[n, g]) for n, g in a.gpus))
    return out


@dataclass(frozen=True)
class RollingMilpOptions(CheckedOptions):
    """``time_limit_seconds``: HiGHS's wall-clock limit per event's solve; ``max_jobs``:
    the most jobs present at once it accepts (an exact model is for small instances)."""

    time_limit_seconds: float = 10.0
    max_jobs: int = 12

    def ranges(self) -> None:
        limit = self.time_limit_seconds
        require(
            math.isfinite(limit) and limit > 0,
            "time_limit_seconds",
            limit,
            "must be a positive, finite number of seconds",
        )
        require(self.max_jobs >= 1, "max_jobs", self.max_jobs, "must be at least 1")


class RollingMilpPolicy:
    """Re-solves the MILP of the present jobs at every event."""

    name = "milp"
    Options = RollingMilpOptions

    def __init__(self, options: RollingMilpOptions | None = None, *, seed: int = 0) -> None:
        self.options = o = options if options is not None else RollingMilpOptions()
        self.seed = seed  # HiGHS is deterministic; kept for the registry's interface
        self.time_limit = o.time_limit_seconds
        self.max_jobs = o.max_jobs

    def decide(self, state: SchedulerState) -> Decision:
        slot = require_slot(state.instance)
        if len(state.jobs) > self.max_jobs:
            raise MilpError(
                f"the rolling-horizon MILP is for small instances: {len(state.jobs)} jobs "
                f"are present at t={state.time:g} h (limit {self.max_jobs}); use a heuristic"
            )
        sub = remaining_instance(state)
        start = rollout(sub, StsPolicy())
        res = solve(sub, initial_plan=start, time_limit=self.time_limit, threads=1)
        plan: Plan = res.plan if res.plan is not None else start
        first = {s.job: Allocation(s.config, s.gpus) for s in plan if s.start < 1e-9}
        if sub.has_relaunch:
            first = keep_gpus(state, first)
        assign = {js.job.id: first.get(js.job.id) for js in state.jobs}
        later = [t for s in plan for t in (s.start, s.end) if t > 1e-9]
        wake = state.time + min(later) if later else state.time + slot
        return Decision(assign, wake_at=wake)
