"""Review tests: the rules and boundaries of STS's rollout choice
(validation.rollout_choice: bursts of arrivals, arrivals since the run's first decision,
the greedy copy's hand-back, the cap, the share held, the flat-price billing) and of the
chain search (heuristic.sts.chainset, heuristic.sts.chainsearch)."""

import dataclasses

import pytest

import validation.rollout_choice as rc
from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.registry import make_policy
from heuristic.sts.chainset import chain_set
from heuristic.sts.incremental import IncrementalStsPolicy
from heuristic.sts.profile import Option
from heuristic.sts.switching import Relaunch, relaunch_profile
from instances import Config, EpochDistribution, Instance
from instances.bundled import bundled
from validation.simulator import simulate


def _small(releases: list[float]) -> Instance:
    """The bundled `small` with its first jobs released at ``releases``."""
    inst = bundled("small")
    jobs = [dataclasses.replace(j, release=r) for j, r in zip(inst.jobs, releases, strict=False)]
    return inst.replace(jobs=(*jobs, *inst.jobs[len(jobs) :]))


def _at(inst: Instance, time: float, present: int) -> SchedulerState:
    """A decision of ``inst`` at ``time`` with its first ``present`` jobs present, none
    yet placed."""
    jobs = tuple(JobStatus(j, 0.0, None) for j in inst.jobs[:present])
    return SchedulerState(time, inst, jobs, Occupancy(inst))


def _state(time: float, releases: list[float]) -> SchedulerState:
    """A decision at ``time`` of `small` with jobs released at ``releases`` present."""
    return _at(_small(releases), time, len(releases))


def _policy(first: float = 0.0):
    """``sts`` as if its run's first decision had been at ``first``."""
    policy = make_policy("sts")
    policy._first_time = first
    return policy


def test_a_burst_is_two_present_jobs_released_within_the_last_tenth_of_an_hour():
    """docs/model.md: at least 2 present jobs released within the last 0.1 h make a
    burst; one does not, nor two of which one came 0.15 h ago."""
    policy = _policy()
    assert policy._in_burst(_state(1.0, [0.95, 0.95]))
    assert not policy._in_burst(_state(1.0, [0.0, 0.95]))
    assert not policy._in_burst(_state(1.0, [0.85, 0.95]))


def test_a_job_released_exactly_burst_hours_ago_counts_in_a_burst():
    """'within the last 0.1 h' includes its start."""
    since = 1.0 - 0.1
    assert _policy()._in_burst(_state(1.0, [since, since]))


def test_jobs_present_at_the_runs_first_decision_make_no_burst():
    """Jobs released at the run's first decision are the run's to begin with, not
    arrivals the what-if runs missed; a job released after it is one."""
    assert not _policy(first=0.95)._in_burst(_state(1.0, [0.95, 0.95]))
    assert _policy(first=0.95)._in_burst(_state(1.0, [0.96, 0.96]))


def test_no_arrival_where_every_job_is_released_at_the_first_decision():
    """Jobs released at the run's first decision have not arrived since it (where every
    job is released at once no greedy copy hands back, and the guarantee holds); a job
    released after it has."""
    inst = _small([0.0, 0.0, 0.7])
    policy = make_policy("sts")
    policy.decide(_at(inst, 0.0, 2))
    assert policy._arrivals is False
    policy.decide(_at(inst, 1.0, 3))
    assert policy._arrivals is True


def test_what_ifs_only_below_64_jobs_present_by_default():
    """docs/model.md, 'What-ifs only below rollout_below jobs present (64)'."""
    assert make_policy("sts").options.rollout_below == 64


def test_a_job_off_its_chains_continues_only_before_a_faster_and_dearer_option():
    """A job running an option off the Pareto front may continue it alone, or before a
    faster and dearer option: not before a faster one that costs the same."""
    a, b = Option(Config("v100", 1), 4.0, 1.0), Option(Config("v100", 2), 2.0, 1.5)
    off = Option(Config("v100", 4), 3.0, 1.6)  # slower and dearer than b
    same = Option(Config("v100", 8), 1.0, 1.6)  # faster than it, the same cost
    cs = chain_set([a, b, off, same], off.config, {o.config: 1.0 for o in (a, b, off, same)})
    assert [c for c in cs.index if 2 in c] == [(2,)]


def test_no_copy_is_asked_once_rollout_below_jobs_are_present():
    """'fewer than rollout_below jobs present': with exactly that many, STS decides
    alone; with one fewer, the copy in the other order decides too."""
    at_cap = make_policy("sts", rollout_below=2)
    at_cap.decide(_state(0.0, [0.0, 0.0]))
    assert at_cap.alternatives == 0
    below = make_policy("sts", rollout_below=3)
    below.decide(_state(0.0, [0.0, 0.0]))
    assert below.alternatives == 1


def _burst(policy) -> None:
    """The policy's run starts at 0 with no job; at 1 h two jobs arrived 0.05 h ago."""
    inst = _small([0.95, 0.95])
    policy.decide(_at(inst, 0.0, 0))
    policy.decide(_at(inst, 1.0, 2))


def test_sts_without_shared_slots_shares_none_in_a_burst():
    """Only a run that may share (``_shares``) puts shared slots back in a burst: STS
    whose options leave them out keeps them out."""
    policy = make_policy("sts", shared_slots=False)
    _burst(policy)
    assert policy.sts.options.shared_slots is False


def test_a_copy_that_left_shared_slots_out_puts_them_back_in_a_burst():
    """A deciding copy without shared slots (as after such a copy won) puts them back at
    a decision in a burst of arrivals."""
    policy = make_policy("sts")
    inst = _small([0.95, 0.95])
    policy.decide(_at(inst, 0.0, 0))
    policy.sts.options = dataclasses.replace(policy.sts.options, shared_slots=False)
    policy.decide(_at(inst, 1.0, 2))
    assert policy.sts.options.shared_slots is True


def _asked(monkeypatch, share: float, state: SchedulerState) -> tuple[rc.RolloutStsPolicy, list]:
    """``sts`` after deciding ``state`` where the present jobs hold ``share`` of the
    GPUs, and the shared-slot setting of every copy that decided."""
    seen = []
    decide = IncrementalStsPolicy.decide

    def record(self, state):
        seen.append(self.options.shared_slots)
        return decide(self, state)

    monkeypatch.setattr(IncrementalStsPolicy, "decide", record)
    monkeypatch.setattr(rc, "held_share", lambda inst, jobs: share)
    policy = make_policy("sts")
    policy.decide(state)
    return policy, seen


def _flipped_decides(monkeypatch, share: float) -> bool:
    """Whether, at a calm first decision where the present jobs hold ``share`` of the
    GPUs, a copy with shared slots flipped (here: left out) decides."""
    policy, seen = _asked(monkeypatch, share, _state(0.0, [0.0, 0.0]))
    # capacity did not bind: the share held decides
    assert policy.alternatives == 1 and not policy.sts.contended
    return False in seen


def test_sharing_weighed_from_three_tenths_of_the_gpus_held(monkeypatch):
    """docs/model.md: the copy with shared slots flipped decides where the present jobs
    hold at least 0.3 of the cluster's GPUs (capacity not binding), not below."""
    assert _flipped_decides(monkeypatch, 0.3)
    assert not _flipped_decides(monkeypatch, 0.29)


def test_a_step_starting_a_rounding_short_of_a_stop_pays_its_overhead_beyond_it():
    """The compiled search prices a step that begins within the stops' tolerance of a
    stop as beyond it (as ``EpochDistribution.beyond`` and the Python form do): here
    the upgraded last block starts at 0.2 + (0.9 - 0.2) = 0.8999999999999999 epochs,
    and its relaunch is paid with P(N > 0.9) = 0.5, not P(N > 0.2) = 0.8."""
    from tests.heuristic.sts.test_chainsearch import python_profile

    slow, fast = Option(Config("v100", 1), 1.0, 1.0), Option(Config("v100", 2), 0.5, 3.0)
    dist = EpochDistribution((0.2, 0.9, 2.0), (0.2, 0.3, 0.5))
    rl = Relaunch(0.1, {slow.config: 1.0, fast.config: 1.0})
    cs = chain_set([slow, fast], None, rl.hourly_cost)
    got = relaunch_profile([slow, fast], dist, 1.5, 3.0, rl, chained=cs)
    assert [s.config for s in got.steps] == [slow.config, fast.config]
    assert got.steps[1].start < 0.9  # a rounding short of the stop
    # running 0.2 x 1 + 0.8 x 0.7 x 1 + 0.5 x 1.1 x 3; relaunches 0.1 at 1, 0.1 at 0.5
    assert got.energy_cost == pytest.approx(2.41 + 0.1 + 0.1 * 0.5, rel=1e-12)
    assert got == python_profile(cs, dist, 1.5, 3.0, rl)


def _greedy_deciding(arrivals: bool, bound_at: float):
    """``sts`` whose deciding copy has greedy STS's rules, capacity last bound at
    ``bound_at`` (not at the last decision), jobs arrived since the run's first decision
    or not."""
    policy = make_policy("sts")
    policy.decide(_state(0.0, [0.0]))
    policy.sts.options = dataclasses.replace(policy.sts.options, **rc.GREEDY)
    policy.sts.contended = False
    policy.sts._bound_at = bound_at
    policy._arrivals = arrivals
    return policy


def test_a_greedy_copy_hands_back_only_after_arrivals_and_once_calm():
    """'greedy_yields': a greedy copy hands back where capacity bound neither at its last
    decision nor within calm_hours (2 h), and only in a run where jobs have arrived
    since its first decision (where every job is released at once it decides on)."""
    assert _greedy_deciding(True, 1.0)._hands_back(3.0)
    assert not _greedy_deciding(False, 1.0)._hands_back(3.0)
    assert not _greedy_deciding(True, 1.5)._hands_back(3.0)


def test_of_two_equally_cheap_profiles_the_one_with_fewer_steps_is_kept():
    """Chains whose profiles cost the same are ranked by their steps, fewest first:
    here a mix of `a` and `b` (5 epochs each) and `c` alone both cost 15 exactly, and
    `c` alone, one step, is kept."""
    a = Option(Config("v100", 1), 2.0, 1.0)
    c = Option(Config("v100", 2), 1.5, 1.5)  # on the chord from a to b
    b = Option(Config("v100", 4), 1.0, 2.0)
    dist = EpochDistribution.deterministic(10.0)
    rl = Relaunch(0.0, {o.config: 1.0 for o in (a, b, c)})
    got = relaunch_profile([a, c, b], dist, 15.0, 3.0, rl)
    assert got.energy_cost + got.tardiness_cost == 15.0
    assert [s.config for s in got.steps] == [c.config]


def test_a_greedy_copy_that_hands_back_keeps_its_shared_slots():
    """A greedy copy that hands back goes to STS's own rules in STS's first order, with
    shared slots as the copy had them (left out here)."""
    inst = _small([0.0, 0.0])
    policy = make_policy("sts")
    policy.decide(_at(inst, 0.0, 1))
    own = policy._orders[0]
    policy.sts.options = dataclasses.replace(own, shared_slots=False, **rc.GREEDY)
    policy.sts.contended, policy.sts._bound_at, policy._arrivals = False, -10.0, True
    policy.decide(_at(inst, 3.0, 2))
    assert policy.sts.options == dataclasses.replace(own, shared_slots=False)


def test_a_new_run_forgets_the_last_runs_arrivals():
    """The same policy object on another instance starts afresh: jobs that arrived in
    the last run do not count as arrivals in the new one."""
    policy = make_policy("sts")
    arriving = _small([0.0, 0.7])
    policy.decide(_at(arriving, 0.0, 1))
    policy.decide(_at(arriving, 1.0, 2))
    assert policy._arrivals is True
    policy.decide(_at(_small([0.0, 0.0]), 0.0, 2))
    assert policy._arrivals is False


def test_sts_blind_to_the_price_series_bills_its_what_ifs_at_the_flat_price():
    """docs/model.md: ``sts-price-blind`` (``timing = false``) bills its what-if runs at
    the instance's flat price, as its profiles are billed; ``sts`` on the series."""
    from instances.generators.prices import lay_prices

    priced = lay_prices(bundled("small"), "au-nsw-2023:840")
    blind = make_policy("sts-price-blind")
    blind.decide(_at(priced, 0.0, 1))
    assert blind._billed.prices is None and blind._billed.carbon is None
    sts = make_policy("sts")
    sts.decide(_at(priced, 0.0, 1))
    assert sts._billed is priced


def test_beside_a_greedy_copy_without_shared_slots_sts_orders_leave_them_out_too():
    """A greedy copy is weighed against STS's own two orders with no copy with shared
    slots flipped: the orders take the greedy copy's shared slots."""
    policy = make_policy("sts")
    policy.decide(_state(0.0, [0.0]))
    greedy = dataclasses.replace(policy._orders[0], shared_slots=False, **rc.GREEDY)
    rivals = policy._rivals(greedy, bound=True)
    assert [o.urgency for o in rivals] == [o.urgency for o in policy._orders]
    assert not any(o.shared_slots for o in rivals)


def test_sts_without_lookahead_is_no_greedy_copy():
    """Where ``lookahead`` is off STS is greedy already: no copy is the greedy kind, and
    its rivals are the other order and the copy with shared slots flipped."""
    policy = make_policy("sts", lookahead=False)
    policy.decide(_state(0.0, [0.0]))
    own = policy.sts.options
    assert not policy._is_greedy(own)
    assert [o.shared_slots for o in policy._rivals(own, bound=True)] == [True, False]


def _running(time: float, left: float) -> SchedulerState:
    """`small` at ``time``, its first three jobs released at 0: the first running (its
    overhead ``left`` hours from done), the next two waiting."""
    inst = _small([0.0, 0.0, 0.0])
    occ = Occupancy(inst)
    first = inst.jobs[0]
    alloc = occ.find(first, inst.allowed_configs(first)[0])
    assert alloc is not None
    occ.place(first, alloc)
    jobs = (JobStatus(first, 0.0, alloc, left), *(JobStatus(j, 0.0, None) for j in inst.jobs[1:3]))
    return SchedulerState(time, inst, jobs, occ)


@pytest.mark.parametrize(("time", "left", "kept"), [(0.1, 0.25, False), (1.0, 0.25, True)])
def test_a_what_if_run_keeps_its_events_only_where_it_resumes_exactly(time, left, kept):
    """An overhead longer than the hours since 0 may end an ulp away from the engine's in
    a what-if run: such a run's events are not kept for a later decision to take."""
    policy = make_policy("sts")
    decision = policy.sts.decide(_running(time, left))  # it places on the state's occupancy
    ahead = policy._run(_running(time, left), policy.sts, decision, None)
    assert bool(ahead.seen) is kept


def test_capacity_binding_alone_weighs_the_copy_with_shared_slots_flipped(monkeypatch):
    """docs/model.md: where capacity binds, the copy with shared slots flipped decides
    even if the present jobs hold none of the GPUs (`small`'s 8 jobs four times over,
    released at 0 on its 12 GPUs, none yet placed)."""
    inst = bundled("small")
    jobs = tuple(
        dataclasses.replace(j, id=f"{j.id}-{k}", release=0.0) for k in range(4) for j in inst.jobs
    )
    policy, seen = _asked(monkeypatch, 0.0, _at(inst.replace(jobs=jobs), 0.0, len(jobs)))
    assert policy.sts.contended and False in seen


def test_a_partial_decision_asks_no_other_copy():
    """With partial decisions from 2 jobs present (`small`, calm, worst case), only the
    events decided in full weigh copies."""
    policy = make_policy("sts", full_below=2)
    run = simulate(bundled("small"), policy, mode="rollout")
    assert policy.sts.full_decisions < run.decisions
    assert policy.alternatives == policy.sts.full_decisions
