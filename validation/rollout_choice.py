"""STS choosing its order by rollout (``sts``, and the forms of it that are blind to a
price series or to idle power; docs/model.md, 'STS choosing its order by rollout').

Under contention no one order of STS wins: least slack first and the weighted modified
slack each cost up to a quarter more than the other run by run, and which wins is
decided by collisions hours after the decision (docs/contended.md). So where STS
decides an event in full (:mod:`heuristic.sts.incremental`: capacity bound at the last
decision, or few jobs are present) with fewer than ``rollout_below`` jobs present, a
copy of it with the other order decides too; where the two decisions differ, each is
played out by the event engine with the present jobs alone, every job to its maximum
epochs (the worst case STS's profiles plan for; :mod:`validation.whatif`), the copy
that made it deciding every later event, and the decision whose run the evaluator
costs least is applied (the copy's own on a tie). The copy whose decision is applied
carries on, in its own order, which the copy in the other order is weighed against at
the next event decided in full; once ``rollout_below`` jobs are present no order is
weighed, and STS decides in its first. With ``weigh_sharing`` (the default since
2026-12-01), where a present job may run on a shared slot and the decision is a busy one
(capacity bound, or the present jobs hold :data:`SHARE_WEIGHED_FROM` of the GPUs), a
third copy, in the deciding copy's order with shared slots flipped in its profiles
(``shared_slots``), decides too, and where its decision or the deciding copy's puts a
job on a shared slot now, it is weighed the same way:
a shared slot is the slowest way to run, and the work it leaves for a job's fast last
steps may meet a crunch that the what-if run sees (docs/contended.md, 'Shared slots
weighed by rollout'). With ``weigh_greedy`` (the default since late on 2026-12-01),
where capacity bound at the deciding copy's last decision a copy with greedy STS's
rules decides too, and a copy of the other kind is taken only by
:data:`GREEDY_MARGIN` (docs/contended.md, 'A greedy copy where capacity binds'). With
``greedy_yields`` (the default since 2026-12-02) a greedy copy that decides hands back
to STS's own rules, in STS's first order, once capacity has not bound for
``calm_hours``: it was weighed for a crunch, and after one its decisions for the jobs
present are paid by the jobs still to come (docs/contended.md, 'A greedy copy hands
back once the crunch is over').
It is Bertsekas's rollout with the copies as base heuristics
(Bertsekas, Tsitsiklis and Wu 1997, "Rollout algorithms for combinatorial
optimization"). The run does not see jobs still to come, nor the sampled
stops; in a burst of arrivals (``burst_jobs`` present jobs arrived within
:data:`BURST_HOURS`) no copy without shared slots is weighed, and a deciding copy that
left them out puts them back. ``rollout_below = 0`` is STS without the rollout
(:class:`heuristic.sts.incremental.IncrementalStsPolicy`), decision for decision.

A what-if run is made once: where the run goes on as the winning copy's what-if run
foresaw (no job arrived or stopped before its next event, and that copy meets the state
and makes the decision its run recorded there), the rest of that run is the what-if run
of the copy's next decision, to the last digit, and is taken rather than made again
(``reuse``; about a fifth of the runs of a worst-case contended rollout, where arrivals
alone part the two).

It lives here, not in ``heuristic/``, because it runs the event engine; it is
registered by name like the rolling MILP. No what-if run is made where empty nodes
power off (the engine's boots cannot be resumed): there STS decides alone. Where nodes
are always on and draw power of their own, a what-if run is charged that power for the
jobs present, the hours from now counted while no job to come would be present, as
STS's rule for its last job sees them (:func:`validation.whatif.present_cost`); STS blind to idle
power (``idle_tail = false``) leaves it out. STS blind to a price series (``timing =
false``) bills its what-if runs at the instance's flat price, as its profiles are
billed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

from heuristic.core.options import require
from heuristic.core.policy import Decision, SchedulerState
from heuristic.core.registry import policy_preset
from heuristic.sts.contention import held_share
from heuristic.sts.incremental import IncrementalOptions, IncrementalStsPolicy
from heuristic.sts.options import StsOptions
from instances import Instance
from validation.whatif import (
    Ahead,
    History,
    Watched,
    differ,
    present_cost,
    quantile_epochs,
    resumes_exactly,
    what_if,
)

# jobs present from which no what-if run is made: the contended 32-GPU runs have at
# most 17 present where their copies differ, the real-data windows up to 70, and on 128
# GPUs a quarter of the events have 64 or more (docs/contended.md)
ROLLOUT_BELOW = 64
# the what-if runs' scenario: each present job stops at this quantile of its epochs
# given its progress; 1, every job to its maximum (the worst case STS's profiles plan
# for), costed in expectation. The median was measured online and not kept: cheaper on
# two contention sets, dearer on two, by 0.5-1.9% (docs/contended.md)
ROLLOUT_QUANTILE = 1.0
# the share of the GPUs held from which a copy with shared slots flipped is weighed
# where capacity did not bind: 0.5 and 0.3 were measured on the bundled `medium`, and
# only 0.3 kept its win there (docs/contended.md)
SHARE_WEIGHED_FROM = 0.3
# a burst of arrivals: at least ``burst_jobs`` of the present jobs released within the
# last BURST_HOURS. The what-if runs see none of the jobs still to come, and in a burst
# more come within minutes: on 128 GPUs at load 0.3 a copy without shared slots won
# there, took whole GPUs for the jobs present and left the burst's later ones waiting
# (Philly's arrivals come in bursts, 91 of the run's 282 jobs within an hour;
# docs/contended.md). Two jobs, not one: a decision at an arrival always has the job
# that arrived, and `medium`'s sharing is won at such decisions
BURST_HOURS = 0.1
BURST_JOBS = 2
# greedy STS's rules (the thesis's STS, registered as ``sts-greedy``): the third kind of
# copy weighed where capacity bound at the deciding copy's last decision
GREEDY = policy_preset("sts-greedy")
# a copy of the other kind (greedy against STS's own rules) is taken only where its
# what-if run costs less than the deciding copy's by this share: on the bundled
# `medium` (worst case) greedy decisions won by less cost 2.9% more (33.71 against
# 32.76) and leave it unchanged with the margin (docs/contended.md, 'A greedy copy
# where capacity binds')
GREEDY_MARGIN = 0.005


@dataclass(frozen=True)
class RolloutStsOptions(IncrementalOptions):
    """STS's options; ``urgency`` is the order STS starts each run in and
    ``alternative`` the other copy's (``"other"``, the default: the one ``urgency`` is
    not); a copy whose decision wins goes on in its own order. ``rollout_below``:
    what-if runs only while fewer jobs than this are present; with more, STS decides
    alone (a what-if run re-plans the present jobs at each of its events, so its cost
    grows with their square: a run with 120 jobs present takes tens of seconds).
    ``rollout_quantile``: below 1, the what-if runs stop each present job at that
    quantile of its epochs given its progress (:func:`validation.whatif.quantile_epochs`)
    and are costed as they realise; at 1 every job runs to its maximum and the runs are
    costed in expectation, the form whose worst-case rollout is no dearer than either
    order's. ``weigh_sharing`` (docs/contended.md, 'Shared slots weighed by rollout'):
    where a present job may run on a shared slot and the decision finds capacity
    binding or the present jobs hold at least :data:`SHARE_WEIGHED_FROM` of the GPUs, a
    third copy, in the deciding copy's order with ``shared_slots`` flipped, decides too,
    and is weighed where its decision or the deciding copy's puts a job on a shared
    slot (none where ``shared_slots`` is off). ``burst_jobs``: where at least this many
    present jobs arrived within the last :data:`BURST_HOURS` after the run's first
    decision, no copy with shared slots flipped is weighed, and a deciding copy that
    left them out puts them back (0: weighed in bursts too). ``weigh_greedy``: where
    capacity bound at the deciding copy's last decision, a copy with greedy STS's rules
    (:data:`GREEDY`) decides too and is weighed; a copy of the other kind (greedy
    against STS's own rules, either way) is taken only where its what-if run costs
    :data:`GREEDY_MARGIN` less, and a greedy copy that decides is weighed against STS's
    own two orders at each event decided in full (none where ``lookahead`` is off: STS
    is greedy already). ``greedy_yields``: a greedy copy that decides hands back to
    STS's own rules, in its first order, at a decision where capacity bound neither at
    the copy's last decision nor within ``calm_hours`` of it
    (:meth:`IncrementalStsPolicy.calm`), in a run where jobs have arrived since its first
    decision; the decision is then made and weighed as STS's."""

    alternative: Literal["other", "modified-slack", "slack"] = "other"
    rollout_below: int = ROLLOUT_BELOW
    rollout_quantile: float = ROLLOUT_QUANTILE
    weigh_sharing: bool = True
    burst_jobs: int = BURST_JOBS
    weigh_greedy: bool = True
    greedy_yields: bool = True

    def ranges(self) -> None:
        super().ranges()
        require(self.rollout_below >= 0, "rollout_below", self.rollout_below, "must be at least 0")
        require(self.burst_jobs >= 0, "burst_jobs", self.burst_jobs, "must be at least 0")
        q = self.rollout_quantile
        require(0 < q <= 1, "rollout_quantile", q, "must be a number above 0 and at most 1")
        require(
            self.alternative != self.urgency,
            "alternative",
            self.alternative,
            f"must differ from urgency ({self.urgency!r}): the two copies would decide alike",
        )


class RolloutStsPolicy:
    """STS deciding each event it decides in full by the cheaper of its two orders'
    what-if runs."""

    name = "sts"
    Options = RolloutStsOptions
    # a what-if run the deciding copy has made already is not made again
    # (:meth:`_foreseen`); off, every one is made afresh (for benchmarks and tests)
    reuse = True

    def __init__(self, options: RolloutStsOptions | None = None, *, seed: int = 0) -> None:
        self.options = options if options is not None else RolloutStsOptions()
        self.seed = seed  # deterministic
        names = {f.name for f in dataclasses.fields(IncrementalOptions)}
        own = IncrementalOptions(**{n: getattr(self.options, n) for n in names})
        other = self.options.alternative
        if other == "other":
            other = "slack" if own.urgency == "modified-slack" else "modified-slack"
        self._orders = (own, dataclasses.replace(own, urgency=other))
        self.sts = IncrementalStsPolicy(own)
        self.history = History()
        # the what-if run of the decision applied last, where it was weighed and its
        # copy decides on (:meth:`_foreseen`)
        self._ahead: Ahead | None = None
        self._instance: Instance | None = None
        self._last_time = -math.inf  # the last decision's time
        self._first_time = -math.inf  # the run's first decision's time
        self._arrivals = False  # a job arrived after the run's first decision
        self._resumable = True  # what-if runs can resume the engine (no node powers off)
        self._billed: Instance | None = None  # the instance whose prices bill a what-if run
        self._shares = False  # a copy with shared slots flipped is weighed
        self._greedy = self.options.weigh_greedy and self.options.lookahead
        self.what_ifs = 0  # decisions that needed them (a run per distinct decision)
        self.alternatives = 0  # decisions where the other copies decided too
        self.reused = 0  # what-if runs not made again (:meth:`_foreseen`)

    @property
    def full_decisions(self) -> int:
        """Events STS decided in full (:class:`IncrementalStsPolicy`), for benchmarks."""
        return self.sts.full_decisions

    def begin(self, instance: Instance) -> None:
        """A new run forgets the last: its first decision starts it afresh."""
        self._instance = None

    def decide(self, state: SchedulerState) -> Decision:
        inst = state.instance
        # a new run: another instance, or the same one from an earlier time
        if inst is not self._instance or state.time < self._last_time:
            self._instance, self.history, self._ahead = inst, History(), None
            self.what_ifs = self.alternatives = self.reused = 0  # the run's own counts
            self._first_time = state.time
            self._arrivals = False
            # a fresh STS, in the first order: the last run's winning copy may be in the
            # other, and STS's memory of a run (hours run, pulled jobs) is the run's
            self.sts = IncrementalStsPolicy(self._orders[0])
            # not where empty nodes power off: the engine's boots cannot be resumed, and
            # STS then decides alone
            self._resumable = inst.power_off is None
            self._billed = inst
            self._shares = (
                self.options.weigh_sharing
                and self.options.shared_slots
                and any(c.shared for j in inst.jobs for c in inst.allowed_configs(j))
            )
            if not self.options.timing and (inst.prices is not None or inst.carbon is not None):
                self._billed = inst.replace(prices=None, carbon=None)  # as its profiles are
        self._last_time = state.time
        if not self._resumable:
            return self.sts.decide(state)
        self.history.forget_ended(state)
        chosen = self._decide(state)
        self.history.record(state, chosen)
        return chosen

    def _decide(self, state: SchedulerState) -> Decision:
        self._arrivals = self._arrivals or any(s.job.release > self._first_time for s in state.jobs)
        if len(state.jobs) >= self.options.rollout_below:
            # no order is weighed here, so none has earned its keep: STS decides in its
            # own (a copy that won by a hair on a burst of arrivals would otherwise set
            # the order of every decision while the cluster stays this full), with
            # shared slots as its options say
            self.sts.options = self._orders[0]
            self._ahead = None
            return self.sts.decide(state)
        sts = self.sts
        if self._hands_back(state.time):
            # the crunch the greedy copy was weighed for is over: in the hours after it,
            # its choices for the jobs present cost the jobs still to come (the week's
            # worst run against `lp`, 21.98 without the hand-back, 15.75 with it)
            sts.options = dataclasses.replace(
                self._orders[0], shared_slots=sts.options.shared_slots
            )
        burst = self._shares and self._in_burst(state)
        if burst and not sts.options.shared_slots:
            # a copy that left shared slots out puts them back: they pack more of a
            # burst's jobs, and no what-if run weighs them here
            sts.options = dataclasses.replace(sts.options, shared_slots=True)
        bound = sts.contended  # capacity bound at the deciding copy's last decision
        rivals = [(sts.fork(), o) for o in self._rivals(sts.options, burst, bound)]  # as STS is now
        full = sts.full_decisions
        occ = state.occupancy  # each copy plans on a copy of its own
        first = sts.decide(dataclasses.replace(state, occupancy=occ.copy()))
        foreseen = self._foreseen(state, first)
        if sts.full_decisions == full:
            # a partial decision (kept only where capacity did not bind and every job it
            # re-plans fits): no other copy is weighed
            self._ahead = foreseen
            return first
        self.alternatives += 1
        # sharing is weighed only where this decision found capacity binding or the
        # present jobs hold SHARE_WEIGHED_FROM of the GPUs: elsewhere the copies'
        # decisions differ at nearly every event, each a what-if run, for the same costs
        # (six times the CPU on the Philly week; docs/contended.md)
        busy = self._shares and (
            sts.contended or held_share(state.instance, state.jobs) >= SHARE_WEIGHED_FROM
        )
        weighed = [(sts, first)]
        for copy, options in rivals:
            if options.shared_slots != sts.options.shared_slots and not busy:
                continue
            copy.options = options
            decision = copy.decide(dataclasses.replace(state, occupancy=occ.copy()))
            if options.shared_slots != sts.options.shared_slots and not (
                _on_shared_slot(first) or _on_shared_slot(decision)
            ):
                # neither puts a job on a shared slot now: the two differ only in the
                # steps their profiles plan later, and the next busy decision weighs them
                # again (on `medium`, 34 what-if decisions instead of 92, the same cost)
                continue
            if all(differ(decision, d) for _, d in weighed):
                weighed.append((copy, decision))
        if len(weighed) == 1:
            self._ahead = foreseen
            return first
        self.what_ifs += 1
        self.reused += foreseen is not None
        q = self.options.rollout_quantile
        # below 1, the scenario where each job stops at its quantile, costed as it
        # realises; at 1, every job to its maximum epochs, the plan's expected cost
        epochs = quantile_epochs(state, q) if q < 1 else None
        # the cluster's own power on nodes always on, for the jobs present while no job
        # to come would be there, as STS's rule for its last job counts it; left out
        # where that rule is off (sts-idle-blind)
        powered = sts.arrivals(state.time) if sts.options.idle_tail else None
        runs: list[Ahead] = []
        costs = []
        for c, d in weighed:
            # the deciding copy's run taken where it was made already
            run = foreseen if c is sts and foreseen is not None else self._run(state, c, d, epochs)
            runs.append(run)
            costs.append(
                present_cost(state, run.plan, billed=self._billed, epochs=epochs, powered=powered)
            )
        # a copy of the other kind (greedy against STS's rules) wins only by a margin:
        # won by less, greedy decisions made for the jobs present are paid by the jobs
        # that arrive later (docs/contended.md, 'A greedy copy where capacity binds')
        kind = self._is_greedy(sts.options)
        costs = [
            cost * (1 + GREEDY_MARGIN) if self._is_greedy(c.options) != kind else cost
            for cost, (c, _) in zip(costs, weighed, strict=True)
        ]
        # the deciding copy's own on a tie, then the other order's
        best = min(range(len(weighed)), key=lambda i: (costs[i], i))
        # it carries on with its own options: its what-if run decided every later
        # event so (the partial decisions too, where no other copy is asked), and the
        # promise made by that run is what bounds the cost of the rest
        self.sts, chosen = weighed[best]
        self._ahead = runs[best]
        return chosen

    def _run(
        self,
        state: SchedulerState,
        copy: IncrementalStsPolicy,
        decision: Decision,
        epochs: dict[str, float] | None,
    ) -> Ahead:
        """The what-if run of ``decision`` with ``copy`` deciding every later event; its
        events are kept only where a later decision may take its rest: with ``reuse``, to
        every job's maximum epochs (a quantile below 1 moves with the progress), and from
        a state whose overheads a what-if run ends where the engine does."""
        ids = frozenset(s.job.id for s in state.jobs)
        if not (self.reuse and epochs is None and resumes_exactly(state)):
            return Ahead(
                what_if(state, self.history, copy.fork(), decision, epochs), (), copy.options, ids
            )
        watched = Watched(copy.fork(), copy.options)
        plan = what_if(state, self.history, watched, decision, epochs)
        return Ahead(plan, tuple(watched.seen), copy.options, ids)

    def _foreseen(self, state: SchedulerState, first: Decision) -> Ahead | None:
        """The rest of the last what-if run the deciding copy made, where this event,
        the deciding copy's options and ``first`` are those it foresaw (no job arrived
        or stopped since): then the what-if run of ``first`` is that rest, made already
        (none where the run kept no events: :meth:`_run`)."""
        ahead, self._ahead = self._ahead, None
        return None if ahead is None else ahead.follows(state, self.sts.options, first)

    def _in_burst(self, state: SchedulerState) -> bool:
        """Whether at least ``burst_jobs`` present jobs arrived within the last
        :data:`BURST_HOURS`, after the run's first decision (never with ``burst_jobs =
        0``). The jobs present at the first decision are the run's to begin with, not
        arrivals the what-if runs missed: where every job is released at once, as on
        the static instances of the rollout's guarantee (docs/model.md), no decision is
        in a burst."""
        least = self.options.burst_jobs
        if least == 0:
            return False
        since, first = state.time - BURST_HOURS, self._first_time
        return sum(since <= s.job.release and s.job.release > first for s in state.jobs) >= least

    def _hands_back(self, time: float) -> bool:
        """Whether the deciding copy is a greedy one that hands back to STS's own rules
        (``greedy_yields``): capacity is calm (:meth:`IncrementalStsPolicy.calm`), and
        jobs have arrived since the run's first decision. Where every job is released at
        once, nothing is paid by jobs to come, and the copy decides on as its what-if run
        promised (the rollout's guarantee, docs/model.md)."""
        return (
            self.options.greedy_yields
            and self._arrivals
            and self._is_greedy(self.sts.options)
            and self.sts.calm(time)
        )

    def _is_greedy(self, options: StsOptions) -> bool:
        """Whether a copy with these options is the greedy kind (``weigh_greedy``)."""
        return self._greedy and not options.lookahead

    def _rivals(
        self, options: StsOptions, burst: bool = False, bound: bool = False
    ) -> list[StsOptions]:
        """The options of the copies weighed beside STS's: the other order; where the
        run may share GPUs and no burst of arrivals is on, STS's own order with shared
        slots flipped in its profiles; and where capacity bound at its last decision
        (``bound``), a greedy copy. Beside a greedy copy, STS's own two orders."""
        own, alt = self._orders
        if self._is_greedy(options):
            return [dataclasses.replace(o, shared_slots=options.shared_slots) for o in (own, alt)]
        order = alt.urgency if options.urgency == own.urgency else own.urgency
        out = [dataclasses.replace(options, urgency=order)]
        if self._shares and not burst:
            out.append(dataclasses.replace(options, shared_slots=not options.shared_slots))
        if self._greedy and bound:
            out.append(dataclasses.replace(options, **GREEDY))
        return out


def _on_shared_slot(decision: Decision) -> bool:
    """Whether the decision places a job on a shared slot (a job it names; one kept where
    it runs is not named, docs/model.md)."""
    return any(a is not None and a.config.shared for a in decision.assign.values())
