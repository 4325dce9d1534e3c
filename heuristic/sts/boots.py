"""STS planning the boot's wait where empty nodes are powered off (docs/model.md, 'Nodes
powered off when empty').

Work placed on a node that is off starts a boot later, and on one still booting when that
boot ends; the engine holds the GPUs meanwhile. STS's profiles plan from now, so a job
planned to finish near its due date and placed on such a node finished late (issue 36:
on the contended family, of the jobs late only when powered off, most had waited for a
boot). Three rules, each for a placement that would wait:

- **The profile waits too.** The job's profile on that GPU type is planned again with
  its budget shortened by the wait (faster steps where slack does not absorb it), its
  step timed from when the node is up (under a changing price, a profile so planned
  that waits for cheaper hours is placed then, not now).
- **A wait that costs is compared.** If the wait costs the job (its re-planned profile
  is dearer), the same step on a node already on (ignoring best fit) is taken; failing
  that, the later candidates are tried, and a cheaper one that starts now, or waits
  less, wins. A wait that costs nothing keeps best fit's choice.
- **A job waiting for its boot stays.** A job whose allocation is still booting keeps it
  rather than move to a placement that must boot too (a move cancels its boot where it
  was the node's only job, and a new boot takes longer than what is left of it); it is
  re-planned once its work has begun. A move to a node already on is still made.

Absent power-off, or with STS blind to power states (``power_states``) or not planning
boots (``plan_boots``), none of this runs and every decision is as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.power import PowerStates
from heuristic.sts.hulls import HullTable, JobProfiles, TypeProfile
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Step
from heuristic.sts.steps import place, step_now
from instances import Config, Instance, slot_ceil

# a profile chosen for a job, the step it runs now, when that step ends, and whether it
# is the profile's last (:class:`heuristic.sts.policy.StsPolicy`'s)
Booked = tuple[TypeProfile, Step, float, bool]
# a candidate profile planned again to start some hours from now
Replan = Callable[[TypeProfile, float], TypeProfile]

# a re-planned profile costing at most this much more than the plan from now: the wait
# cost nothing (slack absorbed it)
TOL = 1e-9
# hours after a boot's end at which a job kept waiting for it is re-planned, unslotted
MOMENT = 1.0 / 60.0


def _nodes(alloc: Allocation) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n, _ in alloc.gpus))


@dataclass(frozen=True)
class Boots:
    """What one decision knows of the nodes' boots: the states the engine reported and
    the wait of a whole boot (rounded up to the slot grid, as the engine starts work)."""

    inst: Instance
    now: float
    power: PowerStates
    boot: float

    @classmethod
    def of(cls, state: SchedulerState, aware: bool) -> Boots | None:
        """The decision's boots where nodes may be off and STS plans them, else ``None``."""
        option = state.instance.power_off
        if not aware or state.power is None or option is None:
            return None
        now, slot = state.time, state.instance.slot
        up = slot_ceil(now + option.boot_h, slot)
        return cls(state.instance, now, state.power, up - now)

    def wait(self, status: JobStatus, alloc: Allocation) -> float:
        """Hours from now until work placed on ``alloc`` starts: 0 on nodes on, and for
        the job's own allocation (its wait is in its overhead left). A node booting for
        the job itself counts a whole boot: moving cancels that boot where the job was its
        only one, and the node boots again."""
        if alloc == status.allocation:
            return 0.0
        own = set(_nodes(status.allocation)) if status.allocation is not None else set()
        wait = 0.0
        for n in _nodes(alloc):
            left = self.power.booting.get(n)
            if n in self.power.off or (left is not None and n in own):
                wait = max(wait, self.boot)
            elif left is not None:
                wait = max(wait, left)
        return wait

    def booting(self, status: JobStatus) -> bool:
        """Whether the job's allocation is still waiting for a boot."""
        cur = status.allocation
        return cur is not None and any(n in self.power.booting for n in _nodes(cur))

    def resumed(self, status: JobStatus) -> float:
        """When a job kept waiting for its boot is re-planned: once its overhead is done
        and its work runs; at least a moment (a slot, slotted) after the boot's end, as
        the engine counts a job that leaves then as leaving before its work began, and
        cancels the boot."""
        assert status.allocation is not None
        up = max(self.power.booting.get(n, 0.0) for n in _nodes(status.allocation))
        if status.overhead_left > up + 1e-6:
            return self.now + status.overhead_left
        return self.now + up + (self.inst.slot or MOMENT)

    def on_nodes(
        self, occ: Occupancy, status: JobStatus, cfg: Config, holds: Holds | None, displace: bool
    ) -> Allocation | None:
        """Best fit of ``cfg`` on nodes already on only, not placed (``None``: none
        fits). As :func:`heuristic.sts.steps.place`: GPUs no running job holds first,
        then, with ``displace``, any free ones. A shared slot whose best fit is a GPU
        already shared on a node not on finds none: the job stays with that GPU's tenant,
        for whom the node boots anyway, rather than take a fresh GPU on a node on (tried
        on 2026-12-07: the synthetic family powered off 0.1-0.9% dearer on 5 of 15 seeds,
        cheaper on none; docs/model.md)."""
        bases = [holds.soft] if holds is not None else []
        if displace or holds is None:
            bases.append(occ)
        for base in bases:
            off = [n for n in base.free if not self.power.on(n)]
            alloc = base.masked(off).find(status.job, cfg)
            if alloc is None or any(not self.power.on(n) for n in _nodes(alloc)):
                continue  # (a shared GPU with room on a node not on is not masked)
            if occ.why_not(status.job, alloc) is None:
                return alloc
        return None


class Settled(NamedTuple):
    """Where a candidate whose placement waits for a boot ends up: its cost to the job
    (its profile's objective, planned from when it starts), the allocation and booked
    profile, and whether it is taken at once (``final``) or only if no later candidate
    costs less. No allocation: the profile, planned again, waits for cheaper hours."""

    cost: float
    alloc: Allocation | None
    booked: Booked
    final: bool


def settle(
    boots: Boots,
    occ: Occupancy,
    holds: Holds | None,
    status: JobStatus,
    found: tuple[Allocation, Booked],
    types: tuple[str, ...],
    displace: bool,
    replanned: Replan,
) -> Settled:
    """The three rules of the module for ``found``, a candidate's step placed on ``occ``
    where its work would wait for a boot. ``occ`` is left without the job's placement
    (the caller places a ``final`` one, and keeps the others aside)."""
    inst, now, job = boots.inst, boots.now, status.job
    alloc, (plan, step, step_end, last) = found
    occ.release(job.id)
    wait = boots.wait(status, alloc)
    if boots.booting(status):
        on = boots.on_nodes(occ, status, step.config, holds, displace)
        if on is not None:
            return Settled(plan.profile.objective, on, (plan, step, step_end, last), True)
        cur = status.allocation
        if cur is not None and occ.why_not(job, cur) is None:
            kept = (plan, step, boots.resumed(status), False)
            return Settled(plan.profile.objective, cur, kept, True)
    waited = replanned(plan, wait)
    if waited.profile.wait > 0:  # under a tariff: it now waits for cheaper hours
        first = (waited, waited.profile.first, now + waited.profile.wait, False)
        return Settled(waited.profile.objective, None, first, True)
    w_step, w_end, w_last = step_now(inst, job, waited.profile, now + wait)
    w_alloc = alloc
    if w_step.config != alloc.config:  # a faster step now: placed afresh
        faster = place(occ, status, w_step.config, types, holds, displace)
        if faster is None:  # none fits: the plan as from now, as blind to the wait
            return Settled(plan.profile.objective, alloc, found[1], True)
        occ.release(job.id)
        w_alloc = faster
        moved = boots.wait(status, w_alloc)
        if moved != wait:
            w_step, w_end, w_last = step_now(inst, job, waited.profile, now + moved)
    booked = (waited, w_step, w_end, w_last)
    cost = waited.profile.objective
    if cost <= plan.profile.objective * (1 + TOL) + TOL:
        return Settled(cost, w_alloc, booked, True)  # the wait costs nothing: best fit
    on = boots.on_nodes(occ, status, step.config, holds, displace)
    if on is not None:  # the same step on a node on: the plan as from now holds
        return Settled(plan.profile.objective, on, (plan, step, step_end, last), True)
    return Settled(cost, w_alloc, booked, False)


def replan(
    inst: Instance,
    status: JobStatus,
    now: float,
    table: HullTable,
    plan: TypeProfile,
    wait: float,
    ran: float = 0.0,
    ledger: Ledger | None = None,
) -> TypeProfile:
    """``plan``'s profile on its type planned again to start ``wait`` hours from now: its
    budget shortened by the wait (the rest of it is the same job at the same decision)."""
    earlier = status.job.due - now - (plan.profile.budget - wait)
    return JobProfiles(inst, status, now, (), table, earlier, ran, ledger).solve(plan.gpu_type)
