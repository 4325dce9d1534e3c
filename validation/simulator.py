"""The discrete-event engine (docs/model.md, 'The event engine').

Events: a job's arrival, a job's end (at its sampled epochs, or at its maximum in a
worst-case rollout), a wake-up a policy asked for. At each event the policy sees the
state (never the sampled epochs) and returns changes; progress accrues in between,
after the relaunch overhead of a new placement (docs/model.md, E1), read by the same
rule as the evaluator (:func:`validation.timeline.continues`).

- ``mode="rollout"``: every job runs to its maximum epochs; the segments form a static
  plan for the evaluator (and, slotted, a MILP warm start).
- ``mode="sampled"``: each job stops at a sampled number of epochs (seeded).

With a slot length (the instance's, or ``slot=``), every decision happens at a slot
boundary and a job that finishes inside a slot holds its GPUs to the slot's end, exactly
as the evaluator and the MILP count it.
"""

from __future__ import annotations

import math
import time as clock
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, Policy, SchedulerState, begin_run
from instances import Instance, Plan, Segment
from instances.distribution import reaches
from instances.fields import seed_number, whole_number
from validation.check import gpu_shape
from validation.power_states import NodePower, PowerLedger
from validation.scenario import scenario_epochs
from validation.timeline import continues, slot_ceil, start_overhead

Mode = Literal["rollout", "sampled"]
EPS = 1e-9


class SimulationError(RuntimeError):
    """The policy broke the rules (over-subscribed GPUs, unknown job) or left jobs stuck."""


# A run whose events, this many in a row, run no epoch and admit or end no job is
# stuck (e.g. turns that are all overhead): it fails now rather than after max_events.
# Waiting out a long overhead takes one event per wake-up; a day of overhead woken
# every minute is 1,440.
STALL_EVENTS = 100_000


@dataclass
class _Run:
    """Engine-side state of one job."""

    target: float  # epochs at which it ends in this run (E, or the sampled N)
    progress: float = 0.0
    alloc: Allocation | None = None
    since: float = 0.0
    done_at: float | None = None
    busy_until: float = 0.0  # end of the current allocation's relaunch overhead
    last: Segment | None = None  # the job's last recorded segment
    last_left: float = 0.0  # overhead still to run when that segment ended
    # hours per epoch on the current allocation (read at every event for every running
    # job: 2.9 million lookups on the Philly week)
    tau: float = 0.0


@dataclass(frozen=True)
class SimulationResult:
    """What happened in one run. Costs are obtained from validation.evaluate on ``plan``."""

    policy: str
    mode: Mode
    seed: int
    slot: float | None
    plan: Plan
    epochs: dict[str, float]  # epochs each job ran (its stop)
    completions: dict[str, float]  # time each job ended (slot-rounded when slotted)
    decision_seconds: tuple[float, ...] = field(repr=False)
    # where empty nodes are powered off: their off spells and boots (docs/model.md)
    power: PowerLedger | None = None

    @property
    def decisions(self) -> int:
        return len(self.decision_seconds)


class _Engine:
    """One run: the clock, the jobs' progress, the GPUs held, the segments recorded."""

    def __init__(
        self, instance: Instance, policy: Policy, targets: dict[str, float], slot: float | None
    ) -> None:
        self.instance = instance
        self.policy = policy
        self.slot = slot
        # the jobs of this run: every job of the instance, or those of a what-if run
        # (:mod:`validation.whatif`)
        jobs = [j for j in instance.jobs if j.id in targets]
        self.runs = {j.id: _Run(targets[j.id]) for j in jobs}
        self.arrivals = sorted((slot_ceil(j.release, slot), j.id) for j in jobs)
        self.next_arrival = 0
        self.occ = Occupancy(instance)
        self.present: list[str] = []  # arrival order
        self.segments: list[Segment] = []
        # the wake-up the last decision asked for: each decision restates when the
        # policy next wants to decide, so an earlier request it did not repeat is void
        # (kept, they piled up: one per decision, each a decision of its own later)
        self.wake_at: float | None = None
        self.seconds: list[float] = []
        self.t = self.arrivals[0][0] if self.arrivals else 0.0
        self.ended = 0  # jobs done, for a progress bar
        self.moved = True  # the last event advanced, admitted or ended some job
        self.power = (
            None
            if instance.power_off is None
            else NodePower(instance.power_off, [n.id for n in instance.nodes], slot)
        )

    def close(self, job_id: str, busy_until: float | None = None) -> None:
        """End the job's current segment and free its GPUs; its work ended at
        ``busy_until`` (its completion inside the slot, or within the clock's tolerance
        after now, where the segment ends; default now)."""
        run = self.runs[job_id]
        if run.alloc is not None:
            if self.t > run.since + EPS:
                end = self.t if busy_until is None else max(self.t, busy_until)
                run.last = Segment(run.since, end, job_id, run.alloc.config, run.alloc.gpus)
                run.last_left = max(0.0, run.busy_until - self.t)
                self.segments.append(run.last)
            if self.power is not None:
                until = self.t if busy_until is None else busy_until
                started = self.t > run.since + EPS  # else it left waiting for a boot
                self.power.leave(job_id, _nodes(run.alloc), until if started else None)
            self.occ.release(job_id)
            run.alloc = None

    def start(self, job_id: str, alloc: Allocation) -> None:
        """The job runs ``alloc`` from now: a relaunch pays the overhead afresh, a
        continuation of its last segment (same GPUs, ending now) carries what is left."""
        run = self.runs[job_id]
        now = Segment(self.t, self.t, job_id, alloc.config, alloc.gpus)
        if continues(run.last, now):
            left = run.last_left
        else:
            left = start_overhead(self.instance, run.last, now, run.last_left)
        # a node powered off boots first (docs/model.md): the work starts when it is up
        begin = self.t if self.power is None else self.power.place(job_id, _nodes(alloc), self.t)
        run.alloc = alloc
        run.tau = self.instance.epoch_time(job_id, alloc.config)
        run.since = begin
        run.busy_until = begin + left

    def overhead_left(self, job_id: str) -> float:
        run = self.runs[job_id]
        return max(0.0, run.busy_until - self.t) if run.alloc is not None else 0.0

    def stop_time(self, job_id: str) -> float:
        """When a running job reaches its target (inside its slot when slotted)."""
        run = self.runs[job_id]
        assert run.alloc is not None
        begin = run.busy_until if run.busy_until > self.t else self.t
        return begin + (run.target - run.progress) * run.tau

    def decide(self) -> None:
        inst = self.instance
        state = SchedulerState(
            self.t,
            inst,
            tuple(
                JobStatus(
                    inst.job(j), self.runs[j].progress, self.runs[j].alloc, self.overhead_left(j)
                )
                for j in self.present
            ),
            self.occ.copy(),
            None if self.power is None else self.power.states(self.t),
        )
        t0 = clock.perf_counter()
        decision = self.policy.decide(state)
        self.seconds.append(clock.perf_counter() - t0)
        self.apply(decision.assign)
        self.wake(decision.wake_at)

    def apply(self, assign: Mapping[str, Allocation | None]) -> None:
        """All releases first, then all placements, each checked against the rules."""
        name = self.policy.name
        changed = []
        for job_id, alloc in assign.items():
            if job_id not in self.runs or job_id not in self.present:
                raise SimulationError(
                    f"policy {name!r} assigned job {job_id!r}, which is not present at t={self.t:g}"
                )
            if self.runs[job_id].alloc != alloc:
                self.close(job_id)
                changed.append((job_id, alloc))
        for job_id, alloc in changed:
            if alloc is None:
                continue
            job = self.instance.job(job_id)
            if alloc.config not in self.instance.allowed_configs(job):
                raise SimulationError(
                    f"policy {name!r} gave job {job_id!r} configuration "
                    f"{alloc.config.label}, which it may not use"
                )
            # the GPUs' shape first (as many as the configuration takes, none twice, on
            # as many nodes as it spans): the occupancy books what it is given, and a
            # single-node configuration named on two nodes let another job onto a GPU
            # it held (a review of 2026-12-07)
            shape = gpu_shape(self.instance, alloc.config, alloc.gpus)
            why = shape[0] if shape else self.occ.why_not(job, alloc)
            if why is not None:
                raise SimulationError(
                    f"policy {name!r} placed job {job_id!r} on "
                    f"{list(alloc.gpus)} at t={self.t:g}: {why}"
                )
            self.occ.place(job, alloc)
            self.start(job_id, alloc)

    def admit(self) -> None:
        """Jobs whose (slot-rounded) release time has come join the present jobs."""
        while (
            self.next_arrival < len(self.arrivals)
            and self.arrivals[self.next_arrival][0] <= self.t + EPS
        ):
            self.present.append(self.arrivals[self.next_arrival][1])
            self.next_arrival += 1

    def advance(self) -> bool:
        """Move the clock to the next event; False when every job has ended."""
        running = [j for j in self.present if self.runs[j].alloc is not None]
        stops = {j: self.stop_time(j) for j in running}
        finish = {j: slot_ceil(stops[j], self.slot) for j in running}
        candidates = list(finish.values())
        if self.next_arrival < len(self.arrivals):
            candidates.append(self.arrivals[self.next_arrival][0])
        if self.wake_at is not None:
            candidates.append(self.wake_at)
        if not candidates:
            if self.present:
                raise SimulationError(
                    f"policy {self.policy.name!r} left jobs {self.present[:10]} waiting at "
                    f"t={self.t:g} with nothing running, no arrival and no wake-up to come"
                )
            return False
        t_next = max(min(candidates), self.t)
        dt = t_next - self.t
        t_prev, self.t = self.t, t_next
        arrived = self.next_arrival
        self.moved = False
        for j in running:
            run = self.runs[j]
            ended = finish[j] <= t_next + EPS
            if not ended:
                tau = run.tau
                if run.busy_until > t_prev:  # part of the interval is overhead
                    run.progress += max(0.0, t_next - run.busy_until) / tau
                else:
                    run.progress += dt / tau
                # at its stop as the evaluator reads progress, though the clock's
                # tolerance (hours) has not seen it: it ends now, not after a relaunch
                ended = reaches(run.progress, run.target)
            if ended or t_prev < t_next > run.busy_until:
                self.moved = True  # epochs were run (or the job ended)
            if ended:
                run.progress = run.target
                # a stop within the clock's tolerance after now is where its segment
                # ends: closed now, it stopped up to 1e-9 h short, 3.3e-9 of 0.3-h
                # epochs, which the checker refused (a fuzz of valid instances); the
                # overlap with a job starting now is within the checker's TIME_TOL
                self.close(j, stops[j] if stops[j] <= t_next + EPS else t_next)
                run.done_at = t_next
                self.present.remove(j)
                self.ended += 1
        self.admit()
        self.moved = self.moved or self.next_arrival > arrived
        if self.wake_at is not None and self.wake_at <= self.t + EPS:
            self.wake_at = None
        return True

    def run(
        self,
        max_events: int,
        progress: Callable[[int], None] | None = None,
        *,
        decided: bool = False,
    ) -> None:
        """Decide and advance until every job has ended (``decided``: the decision at
        the current time has been applied already)."""
        still = 0  # events in a row in which no job ran an epoch, arrived or ended
        for _ in range(max_events):
            if self.present and not decided:
                self.decide()
            decided = False
            done = self.ended
            if not self.advance():
                return
            still = 0 if self.moved else still + 1
            if still >= STALL_EVENTS:
                raise SimulationError(
                    f"policy {self.policy.name!r} ran {still} events in a row, up to "
                    f"t={self.t:g}, in which no job ran an epoch, arrived or ended: it does "
                    "not converge"
                )
            if progress is not None and self.ended > done:
                progress(self.ended)
        raise SimulationError(f"more than {max_events} events: the policy does not converge")

    def wake(self, at: float | None) -> None:
        """The next decision asked for: at ``at`` (slot-rounded) if it is to come, else
        none; it replaces the request before."""
        self.wake_at = slot_ceil(at, self.slot) if at is not None and at > self.t + EPS else None


def _nodes(alloc: Allocation) -> tuple[str, ...]:
    return tuple(sorted({n for n, _ in alloc.gpus}))


def _check_arguments(
    instance: object, policy: object, max_events: object, progress: object = None
) -> None:
    """The types the engine relies on, named: a policy's name given for the policy met
    an AttributeError at the first decision, its class a TypeError, and a progress
    that cannot be called failed once the run had started."""
    if not isinstance(instance, Instance):
        raise TypeError(f"instance = {instance!r:.60}: must be an Instance")
    if (
        isinstance(policy, type)
        or not callable(getattr(policy, "decide", None))
        or not isinstance(getattr(policy, "name", None), str)
    ):
        hint = f" (make_policy({policy!r}) builds one)" if isinstance(policy, str) else ""
        hint = f" ({policy.__name__}() builds one)" if isinstance(policy, type) else hint
        raise TypeError(f"policy = {policy!r:.60}: must be a Policy{hint}")
    whole_number("max_events", max_events, 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress = {progress!r:.60}: must be a function of the jobs done")


def simulate(
    instance: Instance,
    policy: Policy,
    *,
    mode: Mode = "rollout",
    seed: int = 0,
    slot: float | None = None,
    max_events: int = 10_000_000,
    progress: Callable[[int], None] | None = None,
) -> SimulationResult:
    """Run ``policy`` on ``instance``; see the module docstring for the modes.
    ``progress`` is told the number of jobs done whenever it grows."""
    if mode not in ("rollout", "sampled"):
        raise ValueError(f"mode must be 'rollout' or 'sampled', got {mode!r}")
    _check_arguments(instance, policy, max_events, progress)
    seed = seed_number("seed", seed)  # recorded with the result in either mode
    if slot is not None and instance.slot != slot:
        instance = instance.replace(slot=slot)
    if mode == "sampled":
        targets = scenario_epochs(instance, seed)
    else:
        targets = {j.id: j.max_epochs for j in instance.jobs}
    begin_run(policy, instance)  # a policy object run again decides as a new one
    eng = _Engine(instance, policy, targets, instance.slot)
    eng.admit()
    eng.run(max_events, progress)
    return SimulationResult(
        policy=policy.name,
        mode=mode,
        seed=seed,
        slot=instance.slot,
        plan=Plan(tuple(eng.segments)),
        epochs=targets,
        completions={
            j: r.done_at if r.done_at is not None else math.inf for j, r in eng.runs.items()
        },
        decision_seconds=tuple(eng.seconds),
        power=None if eng.power is None else eng.power.ledger(),
    )


def rollout(instance: Instance, policy: Policy, *, slot: float | None = None) -> Plan:
    """The worst-case rollout of ``policy``: a static plan (every job to its maximum)."""
    return simulate(instance, policy, mode="rollout", slot=slot).plan
