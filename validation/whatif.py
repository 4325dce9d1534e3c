"""What-if runs from a decision point (docs/model.md, 'STS choosing its order by
rollout'): the jobs present now, with no arrival to come, each run by the event engine
under a policy, from a first decision given, to its maximum epochs or to the epochs of
a scenario (:func:`quantile_epochs`); and what they then cost, by the one evaluator.

A policy sees the state of each decision, not the engine's record of the past. The
engine needs that record to resume: a job's next segment continues its last one or
relaunches it (:func:`validation.timeline.continues`), and the evaluator reads a job's
progress from all its segments. :class:`History` keeps it, for the present jobs, from
the decisions a policy makes: it sees every one, and the cluster changes only by them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import Decision, Policy, SchedulerState
from heuristic.sts.options import StsOptions
from heuristic.sts.tail import Arrivals, bill_of, charges_tail, running_cost
from instances import Instance, Plan, Segment
from validation.evaluate import evaluate_timelines, job_cost, timelines
from validation.scenario import scenario_instance
from validation.simulator import EPS, _Engine

# a what-if run that does not end within this many events fails as a run would
WHAT_IF_EVENTS = 1_000_000


@dataclass
class History:
    """The segments the present jobs have run, as the engine records them."""

    # closed segments per job, and the overhead left when the last of them ended
    past: dict[str, list[Segment]] = field(default_factory=dict)
    left: dict[str, float] = field(default_factory=dict)
    # the allocation each job runs on now and since when
    open: dict[str, tuple[float, Allocation]] = field(default_factory=dict)

    def forget_ended(self, state: SchedulerState) -> None:
        """Drop the jobs that have ended (they are no longer in the state)."""
        present = {s.job.id for s in state.jobs}
        for memo in (self.past, self.left, self.open):
            for j in [j for j in memo if j not in present]:
                del memo[j]

    def record(self, state: SchedulerState, decision: Decision) -> None:
        """The engine applies ``decision`` at ``state.time``: a job given another
        allocation closes its segment now (unless it lasted no time, as the engine
        counts it) and opens the new one."""
        now = state.time
        status = {s.job.id: s for s in state.jobs}
        for job_id, alloc in decision.assign.items():
            s = status[job_id]
            if s.allocation == alloc:
                continue
            if job_id in self.open:
                since, held = self.open.pop(job_id)
                if now > since + EPS:
                    seg = Segment(since, now, job_id, held.config, held.gpus)
                    self.past.setdefault(job_id, []).append(seg)
                    self.left[job_id] = s.overhead_left
            if alloc is not None:
                self.open[job_id] = (now, alloc)


# what a policy sees of the present jobs at an event: the time, and each job's id,
# progress, allocation and overhead still to run, in arrival order
Key = tuple[float, tuple[tuple[str, float, Allocation | None, float], ...]]


def key_of(state: SchedulerState) -> Key:
    """The state's time and present jobs as a what-if run's policy sees them (where empty
    nodes are always on, the cluster is no more than that: the GPUs the jobs hold)."""
    return state.time, tuple(
        (s.job.id, s.progress, s.allocation, s.overhead_left) for s in state.jobs
    )


def resumes_exactly(state: SchedulerState) -> bool:
    """Whether a what-if run resumed from ``state`` ends each job's overhead where the
    engine that made the state does. :func:`what_if` sets it at ``time + overhead_left``
    and the engine holds it where it began; the two are the same float where no
    overhead is left (the engine then reads the end only as "passed") or where
    ``overhead_left`` is at most the time and the sum is exact (Sterbenz: the engine's
    difference was exact, and adding it back is), which is every state but an
    overhead longer than the hours since 0, early in a run."""
    now = state.time
    return all(
        (left := s.overhead_left) == 0.0 or (left <= now and (now + left) - now == left)
        for s in state.jobs
    )


class Watched:
    """A copy of STS deciding a what-if run, whose decisions are kept with the state each
    met (:class:`Ahead`)."""

    def __init__(self, policy: Policy, options: StsOptions) -> None:
        self.policy, self.options, self.name = policy, options, policy.name
        self.seen: list[tuple[Key, Decision]] = []

    def decide(self, state: SchedulerState) -> Decision:
        decision = self.policy.decide(state)
        self.seen.append((key_of(state), decision))
        return decision


@dataclass(frozen=True)
class Ahead:
    """A what-if run whose first decision was applied: its plan (the segments of the
    jobs present then, ``jobs``), and its later events, each the state met and the
    decision made, for the copy in ``options`` that made them, from ``seen[at]`` on
    still ahead. Where the run goes on as that one foresaw (no job arrived or stopped,
    the same state, the same decision), the what-if run of that decision is the rest
    of this one (:meth:`follows`). A run made from a state that does not resume exactly
    (:func:`resumes_exactly`) foresees nothing (``seen`` empty): its overheads may end
    an ulp away from the engine's."""

    plan: Plan
    seen: tuple[tuple[Key, Decision], ...]
    options: StsOptions
    jobs: frozenset[str]
    at: int = 0

    def follows(
        self, state: SchedulerState, options: StsOptions, decision: Decision
    ) -> Ahead | None:
        """The rest of the run where the state and the decision of its next event are
        ``state`` and ``decision``, made by a copy with ``options``; else None. Its plan
        holds the segments of the jobs present in ``state``, as a what-if run made from
        it would."""
        if self.at >= len(self.seen) or options != self.options:
            return None
        key, made = self.seen[self.at]
        if key != key_of(state) or differ(made, decision) or not resumes_exactly(state):
            return None
        jobs = frozenset(k[0] for k in key[1])
        plan = self.plan
        if jobs != self.jobs:  # jobs that ended since: not the present jobs' cost
            plan = Plan(tuple(s for s in plan.segments if s.job in jobs))
        return Ahead(plan, self.seen, options, jobs, self.at + 1)


def differ(a: Decision, b: Decision) -> bool:
    """Whether two decisions differ: an allocation, or when the next decision is."""
    return dict(a.assign) != dict(b.assign) or a.wake_at != b.wake_at


def quantile_epochs(state: SchedulerState, q: float) -> dict[str, float]:
    """Each present job's epochs in a scenario: the ``q``-quantile of its epochs given
    that it has not stopped by its progress (the least stopping point ``s`` past it with
    ``P(N <= s | N > progress) >= q``); its maximum at ``q = 1``."""
    out = {}
    for s in state.jobs:
        job = s.job
        if q >= 1.0:
            out[job.id] = job.max_epochs
            continue
        left = job.distribution.conditional(s.progress)  # stops shifted by the progress
        # the last stop closes the sum whatever its rounding
        at = len(left.stops) - 1
        acc = 0.0
        for i, p in enumerate(left.probabilities[:-1]):
            acc += p
            if acc >= q:
                at = i
                break
        # the job's own stop (the conditional's stops are its last ones, shifted):
        # progress + (stop - progress) can be a float's last bit past it
        stops = job.distribution.stops
        out[job.id] = stops[len(stops) - len(left.stops) + at]
    return out


def what_if(
    state: SchedulerState,
    history: History,
    policy: Policy,
    first: Decision,
    epochs: dict[str, float] | None = None,
) -> Plan:
    """The present jobs' segments, past and to come, when ``first`` is applied now and
    ``policy`` decides every later event, with no arrival and every present job run to
    its ``epochs`` (by default its maximum). Not where empty nodes power off: a
    placement's work there starts when its node has booted, which :class:`History` does
    not see."""
    inst = state.instance
    if inst.power_off is not None:
        raise ValueError(
            f"instance {inst.name!r} powers empty nodes off: a what-if run cannot resume "
            "the engine's boots"
        )
    jobs = {s.job.id: s for s in state.jobs}
    if epochs is None:
        epochs = {j: s.job.max_epochs for j, s in jobs.items()}
    eng = _Engine(inst, policy, {j: epochs[j] for j in jobs}, inst.slot)
    eng.t = state.time
    eng.admit()
    eng.occ = state.occupancy.copy()
    for job_id, s in jobs.items():
        run = eng.runs[job_id]
        run.progress = s.progress
        past = history.past.get(job_id)
        if past:
            run.last, run.last_left = past[-1], history.left.get(job_id, 0.0)
            eng.segments.extend(past)
        if s.allocation is not None:
            since, _ = history.open.get(job_id, (state.time, s.allocation))
            run.alloc, run.since = s.allocation, since
            run.busy_until = state.time + s.overhead_left
            run.tau = inst.epoch_time(job_id, s.allocation.config)
    eng.apply(first.assign)
    eng.wake(first.wake_at)  # it replaces every wake-up asked for before
    eng.run(WHAT_IF_EVENTS, decided=True)
    return Plan(tuple(eng.segments))


def present_cost(
    state: SchedulerState,
    plan: Plan,
    jobs: Iterable[str] | None = None,
    billed: Instance | None = None,
    epochs: dict[str, float] | None = None,
    powered: Arrivals | None = None,
) -> float:
    """What the present jobs (or ``jobs``) cost under ``plan`` by the evaluator: expected
    energy and carbon, and tardiness in the instance's mode. ``billed``: the instance
    whose prices bill it (the state's by default). With ``epochs`` (a what-if run to a
    scenario's epochs, :func:`quantile_epochs`), the cost realised when each present
    job stops there.

    The cluster's own power (idle GPUs, node base power), which the evaluator charges
    to no job, is left out unless ``powered`` gives the jobs still to come
    (:class:`heuristic.sts.tail.Arrivals`) and nodes are always on: then it is charged
    as the evaluator charges it were these jobs the only ones, except that from now on
    the hours the cluster is powered for them count only while none of the jobs to come
    would be present (``e^{-rate L(t - now)}``, as the rule for STS's last job discounts
    them: docs/model.md, 'STS and idle power')."""
    ids = [s.job.id for s in state.jobs] if jobs is None else list(jobs)
    inst = state.instance if billed is None else billed
    if epochs is not None:
        # the jobs costed alone, each known to stop at its scenario's epochs
        inst = scenario_instance(inst, epochs, ids)
    if powered is None or not charges_tail(inst):
        return math.fsum(job_cost(inst, plan, j).total_cost for j in ids)
    alone = inst if epochs is not None else inst.replace(jobs=tuple(inst.job(j) for j in ids))
    lines = timelines(alone, plan)  # made once: the ends and the evaluator read them
    ends = [lines[j].ends(alone.job(j).distribution) for j in ids]
    kw, bill = alone.powered_kw, bill_of(alone)
    undiscounted = running_cost(ends, state.time, kw, bill)
    discounted = running_cost(ends, state.time, kw, bill, powered)
    return evaluate_timelines(alone, plan, lines).total_cost - undiscounted + discounted
