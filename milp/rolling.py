"""The rolling-horizon MILP policy: an exact online reference for small instances.

At each event it builds the static instance of the jobs present (remaining epochs with
their conditional stopping distribution, due dates relative to now, the original
tardiness weights), solves its MILP warm-started by STS under a time limit, and applies
the first slot of the optimal plan. It wakes up again at the plan's next change, so
between events it follows the plan it solved. It never sees a job's sampled stop.
"""

from __future__ import annotations

from heuristic.occupancy import Allocation
from heuristic.policy import Decision, JobStatus, SchedulerState
from heuristic.sts import StsPolicy
from instances import Instance, Job, Plan
from milp.data import MilpError, require_slot
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

    return inst.replace(jobs=tuple(rest(js) for js in state.jobs), name=f"{inst.name}@{now:g}h")


class RollingMilpPolicy:
    """Re-solves the MILP of the present jobs at every event (``time_limit`` s each)."""

    name = "milp"

    def __init__(self, seed: int = 0, time_limit: float = 10.0, max_jobs: int = 12) -> None:
        self.seed = seed  # HiGHS is deterministic; kept for the registry's interface
        self.time_limit = time_limit
        self.max_jobs = max_jobs
        self.solves = 0
        self.proved = 0

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
        self.solves += 1
        self.proved += res.optimal
        plan: Plan = res.plan if res.plan is not None else start
        first = {s.job: Allocation(s.config, s.gpus) for s in plan if s.start < 1e-9}
        assign = {js.job.id: first.get(js.job.id) for js in state.jobs}
        later = [t for s in plan for t in (s.start, s.end) if t > 1e-9]
        wake = state.time + min(later) if later else state.time + slot
        return Decision(assign, wake_at=wake)
