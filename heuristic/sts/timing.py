"""When a job's profile runs, where the price of a kWh changes with time (docs/model.md,
'STS deciding when').

The single-job profile (:mod:`heuristic.sts.profile`) chooses how fast: which
configuration runs which epochs, back to back from now. Under a price series its slack
may instead wait for cheap hours. Time from now to the budget is cut into *cells* on the
series' own grid (an hour for an hourly series; a multiple of the slot), so that the
price is constant within each full cell; a profile's worst-case run of ``R`` hours is
cut into *portions* of one cell each (the last one shorter). Running portion ``j`` in
cell ``k`` costs ``w_k · a_j``: the cell's price (energy plus carbon priced per kWh)
times the portion's expected energy (kWh), its configuration's power weighted by the
probability that the job still runs then, exactly as the evaluator bills it. Which
cells run is then a shortest path over (cell, portions done, running or not):
:func:`heuristic.sts.cells.place_runs`, exact on the grid for the profile given, in
``O(cells · portions)``.
A run that resumes after an idle cell pays the relaunch overhead's energy (``δ`` hours
at the portion's power and survival), and so does a running job that idles a short
first cell, wherever it next runs; its ``δ`` hours are not added to the run (the last
portion's spare time and the re-plan at every decision absorb them).

The speed profile and the timing are not optimised jointly: :func:`timed` tries the
exact profiles for a few shorter budgets (faster profiles leave more hours to choose
from) and keeps the cheapest timing of any. ``benchmarks/when.py`` measures the gap to
the MILP, which chooses both at once, on single-job instances.

With a flat bill (no series, a flat one, or carbon unpriced or flat) none of this runs:
:meth:`Tariff.of` is ``None`` and STS is the price-blind STS to the last digit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from heuristic.sts.cells import place_runs
from heuristic.sts.profile import Profile
from heuristic.sts.tariff import HORIZON_CELLS, TOL, Grid, Tariff
from instances import Config, EpochDistribution, Instance, Job
from instances.sums import dot

# budgets tried for the speed profile, as shares of the time left: a faster profile
# leaves more cells idle for the timing to choose from
# (five shares, 1.0-0.25 by 0.2, cut 0.3-0.9% more of the bill of single jobs at
# their release on the synthetic family, at 1.3 times the time: docs/model.md)
FRACTIONS = (1.0, 0.7, 0.45, 0.25)
# the share of the time left that a timed profile keeps free before its budget (0.1
# against none: no more missed due dates than price-blind STS on the synthetic family,
# docs/model.md)
MARGIN = 0.1
# seven shares, 1.0-0.25 by 0.125 (``fine_shares``)
FINE_FRACTIONS = (1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25)


@dataclass(frozen=True)
class TimingRule:
    """How :func:`timed` searches: the ``shares`` of a job's window its shorter speed
    budgets are, and the margin it keeps free before the budget, ``MARGIN`` of the time
    left; with ``recover``, less the hours the profile's last step would gain relaunched
    on the fastest of the job's configurations with room then beside the profiles
    booked (a timed job that meets others in the cheap hours can still catch up by
    speeding up; only what it cannot catch up is kept). With ``loose`` above 0, a job
    whose window (release to due date) is shorter than ``loose`` times its fastest
    worst-case run (every epoch on its fastest configuration, after its relaunch) is
    timed by :data:`PLAIN` instead (:meth:`heuristic.sts.hulls.HullTable.rule_for`).
    With ``late``, a run may also end after the due date where a price spike costs more
    than being late (:meth:`_Late.search`); it is kept where :data:`PLAIN` replaces a rule."""

    shares: tuple[float, ...] = FRACTIONS
    recover: bool = False
    loose: float = 0.0
    late: bool = True

    def plain(self) -> TimingRule:
        """:data:`PLAIN`, with this rule's ``late``."""
        return replace(PLAIN, late=self.late)


PLAIN = TimingRule()


@dataclass(frozen=True)
class Lateness:
    """What a run that may end after its due date pays for it, as the evaluator counts
    ``worst_case`` tardiness: ``weight`` per hour from ``due`` (absolute) to its end,
    counted at the end of its slot (``slot`` hours from time 0; ``None`` unslotted), for
    a run that starts ``now``. Each resume adds its ``relaunch`` hours to the end (the
    windows leave them out: on time the margin absorbs them), so the search charges
    ``weight · relaunch`` a resume. An end after ``free_from`` (where the on-time
    search's cells end: a margin before its budget, which a caller may set before the
    due date) and by ``due`` costs :data:`FULL`: those hours are kept free for the
    cluster, and for the earlier end a caller asked for."""

    weight: float
    due: float
    now: float
    slot: float | None
    relaunch: float
    free_from: float

    def tardiness(self, end: float) -> float:
        """The tardiness of a run ending ``end`` hours from now."""
        t = self._clock(np.array([end]))
        return float(self.weight * max(float(t[0]) - self.due, 0.0))

    def cost(self, ends: np.ndarray) -> np.ndarray:
        """The tardiness of runs ending at ``ends`` (hours from now), :data:`FULL` in the
        margin."""
        t = self._clock(ends)
        out = self.weight * np.maximum(t - self.due, 0.0)
        kept = (t > self.free_from + TOL) & (t <= self.due + TOL)
        return np.where(kept, FULL, out)

    def _clock(self, ends: np.ndarray) -> np.ndarray:
        t = self.now + ends
        if self.slot is not None:
            t = np.ceil(t / self.slot - TOL) * self.slot
        return t


def load(inst: Instance, job: Job, profile: Profile, dist: EpochDistribution) -> np.ndarray:
    """The profile's expected power over its worst-case run from 0: rows (from, to,
    kW · probability the job still runs), overheads at ``P(N > start)`` and epochs at
    their block's survival, as the evaluator bills them."""
    stops = np.cumsum(dist.block_lengths)
    q = dist.block_survival
    rows = []
    t = 0.0
    for s in profile.steps:
        kw = inst.power_w(s.config) / 1000.0
        tau = inst.epoch_time(job, s.config)
        if s.lost > 0:
            rows.append((t, t + s.lost, kw * dist.beyond(s.start)))
            t += s.lost
        cuts = [s.start, *(float(e) for e in stops if s.start < e < s.end), s.end]
        for a, b in itertools.pairwise(cuts):
            if b > a:
                block = min(int(np.searchsorted(stops, 0.5 * (a + b))), len(q) - 1)
                rows.append((t, t + (b - a) * tau, kw * q[block]))
                t += (b - a) * tau
    return np.array(rows, dtype=float).reshape(-1, 3)


def power_at(rows: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Expected kW of ``rows`` at run times ``x`` (the row starting there)."""
    # (rows start at 0 and ``x`` is within the run: only a time before 0 needs clipping)
    k = np.maximum(np.searchsorted(rows[:, 0], x, side="right") - 1, 0)
    out: np.ndarray = rows[k, 2]
    return out


def timing(
    rows: np.ndarray,
    grid: Grid,
    resume_hours: float,
    running: bool,
    beat: float = math.inf,
    late: Lateness | None = None,
) -> tuple[float, tuple[tuple[float, float], ...]] | None:
    """The cheapest run windows (hours from now) of a profile whose expected power over
    its run is ``rows``, on ``grid``, and their bill; ``None`` if the run does not fit
    or cannot cost less than ``beat``. A short first cell is run (its hours first) or
    idled: both are solved. ``late``: a run may end after the due date, paying its
    worst-case tardiness and ``late.weight`` times the relaunch hours of each resume
    (:class:`Lateness`), included in the cost returned."""
    if len(rows) == 0 or len(grid.price) == 0:
        return None
    total = float(rows[-1, 1])
    # the expected kWh of ``rows`` between consecutive edges of its run, from the
    # cumulative kWh built once for the cases below
    times = np.concatenate((rows[:, 0], rows[-1:, 1]))
    cum = np.concatenate(([0.0], np.cumsum((rows[:, 1] - rows[:, 0]) * rows[:, 2])))

    def kwh(edges: np.ndarray) -> np.ndarray:
        at = np.interp(edges, times, cum)
        out: np.ndarray = at[1:] - at[:-1]  # np.diff's floats, without its wrapper
        return out

    edges = grid.edges
    d = float(edges[-1] - edges[-2])
    head = float(edges[1] - edges[0])
    # a resume whose relaunch lasts a cell or more would make no progress in a cell's
    # window (its hours are not added to the run): the run does not pause (a job
    # relaunched for 1.2 h into one-hour cheap windows, paused and resumed for ever, a
    # review of 2026-12-06)
    stay = resume_hours >= d - TOL
    best: tuple[float, tuple[tuple[float, float], ...]] | None = None
    # (hours of the run done in cell 0, first cell of the search)
    cases = [(0.0, 0)] if head >= d - TOL else [(head, 1), (0.0, 1)]
    for done, k0 in cases:
        if done >= total - TOL:
            cost = float(kwh(np.array([0.0, total]))[0] * grid.price[0])
            if late is not None:
                cost += float(late.cost(np.array([total]))[0])
                if cost >= FULL:
                    continue
            windows: tuple[tuple[float, float], ...] = ((0.0, total),)
        else:
            n = math.ceil((total - done) / d - TOL)
            w = grid.price[k0:]
            if n > len(w):
                continue
            cuts = np.minimum(done + d * np.arange(n + 1), total)
            a = kwh(cuts)
            resume = resume_hours * power_at(rows, cuts[:-1])
            # no order of the portions costs less than the dearest on the cheapest
            # cells (rearrangement): a case that cannot win is not searched
            head_cost = 0.0
            if done > 0:
                head_cost = float(kwh(np.array([0.0, done]))[0] * grid.price[0])
            floor = dot(np.sort(a)[::-1], np.sort(np.partition(w, n - 1)[:n]))
            if floor + head_cost >= min(beat, best[0] if best else math.inf):
                continue
            tail, extra = None, 0.0
            if late is not None:  # the last portion's end in each cell, past the due date
                tail = late.cost(edges[k0 : k0 + len(w)] + (cuts[-1] - cuts[-2]))
                extra = late.weight * late.relaunch
            # a running job that idles a short first cell resumes wherever it next runs
            idled = running and done == 0 and k0 > 0
            run_on = running or done > 0
            cost, cells = place_runs(a, w, resume, run_on, tail, extra, idled, stay)
            if not len(cells) or cost >= FULL:
                continue
            if done > 0:
                cost += head_cost
            if not _cheaper(cost, best):
                continue  # its windows are not needed
            windows = run_windows(grid.edges[k0 + cells], np.diff(cuts), done)
        if _cheaper(cost, best):
            best = (cost, windows)
    return best


def _cheaper(cost: float, best: tuple[float, object] | None) -> bool:
    """Whether ``cost`` beats the ``best`` case so far by more than rounding."""
    return best is None or cost < best[0] - TOL * max(1.0, abs(best[0]))


def run_windows(
    starts: np.ndarray, hours: np.ndarray, done: float
) -> tuple[tuple[float, float], ...]:
    """The run windows of portions of ``hours`` starting at ``starts`` (after ``done``
    hours run from 0, if any): back-to-back portions as one window, a portion within
    ``TOL`` of the end of the one before counting as back to back."""
    s, e = starts, starts + hours
    if done > 0:
        s, e = np.concatenate(([0.0], s)), np.concatenate(([done], e))
    new = np.flatnonzero(s[1:] > e[:-1] + TOL) + 1  # where a window begins, after the first
    first = np.concatenate(([0], new))
    last = np.concatenate((new - 1, [len(s) - 1]))
    return tuple(zip(s[first].tolist(), e[last].tolist(), strict=True))


# where a configuration fits beside the booked profiles, per interval between edges
Room = Callable[[Config, np.ndarray], np.ndarray]
FULL = 1e12  # the price of a cell where the profile does not fit: never chosen


def _kept_room(room: Room) -> Room:
    """``room``, each configuration's answer kept (for one grid's edges)."""
    kept: dict[Config, np.ndarray] = {}

    def fits(cfg: Config, edges: np.ndarray) -> np.ndarray:
        found = kept.get(cfg)
        if found is None:
            found = kept[cfg] = room(cfg, edges)
        return found

    return fits


def _booked(grid: Grid, profile: Profile, room: Room | None) -> Grid:
    """``grid`` with the cells where a step of ``profile`` does not fit priced out."""
    if room is None:
        return grid
    ok = np.ones(len(grid.price), dtype=bool)
    for cfg in {s.config for s in profile.steps}:
        ok &= room(cfg, grid.edges)
    if ok.all():
        return grid
    return Grid(grid.edges, np.where(ok, grid.price, FULL))


def contiguous(rows: np.ndarray, tariff: Tariff, now: float) -> float:
    """The bill of the profile run back to back from ``now``."""
    if len(rows) == 0:
        return 0.0
    edges = now + np.concatenate((rows[:, 0], rows[-1:, 1]))
    return dot(tariff.cost(edges), rows[:, 2])


def timed(
    inst: Instance,
    job: Job,
    dist: EpochDistribution,
    solve: Callable[[float], Profile],
    budget: float,
    tariff: Tariff,
    now: float,
    current: Config | None,
    ran: float = 0.0,
    room: Room | None = None,
    rows_of: Callable[[Profile], np.ndarray] | None = None,
    rule: TimingRule = PLAIN,
    quick: Sequence[tuple[float, Config]] = (),
) -> Profile:
    """The profile for ``budget`` (``solve(budget)``, price-blind) run back to back and
    billed by ``tariff``, or, if cheaper, a profile planned to run a share ``f``
    (``rule.shares``, by default :data:`FRACTIONS`) of the job's window (release to due
    date), less the ``ran`` hours it has run, with its cheapest run windows within
    ``budget``. ``room``: the cells where a configuration fits beside the profiles
    booked before (a cell where a step does not fit is not chosen), or ``None``. Only
    profiles that meet their budget are timed: a job none of whose profiles does runs
    now. ``current``: the configuration the job runs now (idling first then pays a
    relaunch, where the profile continues it). ``rows_of``: :func:`load` for the job
    (kept by the caller); ``quick``: the job's configurations and their hours per
    epoch, fastest first (for ``rule.recover``)."""
    if rows_of is None:

        def rows_of(profile: Profile) -> np.ndarray:
            return load(inst, job, profile, dist)

    base = solve(budget)
    rows = rows_of(base)
    best = replace(base, energy_cost=contiguous(rows, tariff, now))
    # A profile late for its budget runs now, unless a faster one (a shorter budget's)
    # is on time in cheap hours and costs less than its bill and its tardiness: the
    # price-blind profile may take a few seconds of tardiness as cheaper than speeding
    # up, where a series makes the faster run the cheaper (the thesis family's one
    # missed due date, docs/prices.md). Timed profiles are compared on the objective.
    # The windows end a margin before the budget: a timed job meets others' timed
    # jobs in the cheap hours, and the pauses and relaunches that costs come out of it
    grid = tariff.grid(now, budget * (1.0 - MARGIN))
    margin = MARGIN * budget
    resume = inst.relaunch(job)
    fits = None if room is None else _kept_room(room)  # one grid: asked once a configuration
    seen: list[Profile] = []
    # the shorter budgets are hours of run, fixed from the job's release (a share of its
    # window, less the hours it has run): waiting spends none of them, so a later
    # decision tries the same profiles' rests and a plan re-made at each event keeps
    # to itself
    window = job.due - job.release
    for f in rule.shares:
        short = f * window - ran
        if f != 1.0 and not 0 < short < budget - TOL:
            continue
        prof = base if f == 1.0 else solve(short)
        if prof.worst_time > budget + TOL or any(p.steps == prof.steps for p in seen):
            continue
        seen.append(prof)
        cells = grid
        if rule.recover:
            last = prof.steps[-1]
            hours = _catch_up(quick, room, budget, max(margin, 0.0), last.epochs, resume)
            gain = last.epochs * (inst.epoch_time(job, last.config) - hours) - resume
            if gain > 0:
                cells = tariff.grid(now, budget - max(0.0, margin - gain))
        rows = rows_of(prof) if prof is not base else rows
        if dot(rows[:, 2], rows[:, 1] - rows[:, 0]) * cells.floor >= best.objective:
            continue  # even at the cheapest cell it costs more
        running = current is not None and prof.steps[0].config == current
        # (``fits`` answers for ``grid``'s edges only: a wider grid asks afresh)
        fitting = fits if cells is grid else (None if room is None else _kept_room(room))
        found = timing(rows, _booked(cells, prof, fitting), resume, running, best.objective)
        if found is not None and found[0] < best.objective * (1 - 1e-9):
            # late only for its shorter budget: within the job's own it is on time
            best = replace(
                prof, energy_cost=found[0], tardiness_cost=0.0, runs=found[1], budget=budget
            )
    if rule.late:
        late = _Late(inst, job, tariff, now, budget, current, rows_of, room, solve)
        best = late.search([base, *seen], best)
    return best


@dataclass
class _Late:
    """The late search of a job at a decision: :meth:`search`."""

    inst: Instance
    job: Job
    tariff: Tariff
    now: float
    budget: float
    current: Config | None
    rows_of: Callable[[Profile], np.ndarray]
    room: Room | None
    solve: Callable[[float], Profile]

    def search(self, profiles: Sequence[Profile], best: Profile) -> Profile:
        """``best``, or a run of one of ``profiles`` ending after the due date where its
        worst-case tardiness costs less than the dear hours it leaves: a price spike
        before the due date can cost more than being late (docs/prices.md, 'Late for a
        price spike'). Searched only where some cell the job would run in, to its due
        date or back to back from now, bills an hour of the profile's highest expected
        power above an hour late (moving an hour of run past the due date saves at most
        that hour's bill and costs the weight: a heuristic gate, not a bound,
        docs/model.md), and never for a job without a tardiness weight (nothing would
        bound its wait). Once the gate opens, the profiles that fill whole cells
        (:meth:`_whole`) are searched too: a late run pays its tardiness to the end of
        its slot, and once late, a slower profile may cost less. The run may end as late
        as the tardiness alone stays below ``best``'s objective, within
        :data:`HORIZON_CELLS`; the margin before the due date stays the on-time
        search's."""
        inst, job, tariff, now = self.inst, self.job, self.tariff, self.now
        omega = inst.tardiness_weight(job.id)
        if omega <= 0:
            return best
        resume = inst.relaunch(job)
        due = job.due - now  # hours from now: tardiness counts from the due date itself
        free_from = now + (1.0 - MARGIN) * max(self.budget, 0.0)  # where on-time cells end
        late = Lateness(omega, job.due, now, inst.slot, resume, free_from)
        seen: set[tuple[object, ...]] = set()
        queue, opened = list(profiles), False
        while queue:
            prof = queue.pop(0)
            if prof.steps in seen:
                continue
            seen.add(prof.steps)
            rows = self.rows_of(prof)
            if not len(rows):
                continue
            # (a cell more: the grid leaves out a last part-cell)
            near = tariff.grid(now, max(due, float(rows[-1, 1])) + tariff.cell)
            top = float(rows[:, 2].max())
            if not len(near.price) or float(near.price.max()) * top <= omega:
                continue
            reach = min(
                HORIZON_CELLS * tariff.cell,
                max(due, 0.0) + best.objective / omega + tariff.cell,
            )
            if not opened:
                opened = True
                queue += self._whole(reach)
            grid = tariff.grid(now, reach)
            fits = None if self.room is None else _kept_room(self.room)
            running = self.current is not None and prof.steps[0].config == self.current
            booked = _booked(grid, prof, fits)
            found = timing(rows, booked, resume, running, best.objective, late)
            if found is None or found[0] >= best.objective * (1 - 1e-9):
                continue
            windows = found[1]
            # the bill is the search's cost less what it charged for lateness; the
            # windows end later by each resume's relaunch hours (a running job whose
            # first window starts later resumes too)
            resumes = len(windows) - 1 + int(running and windows[0][0] > TOL)
            charged = late.tardiness(windows[-1][1]) + omega * resume * resumes
            tardiness = late.tardiness(windows[-1][1] + resume * resumes)
            objective = found[0] - charged + tardiness
            if objective < best.objective * (1 - 1e-9):
                best = replace(
                    prof,
                    energy_cost=found[0] - charged,
                    tardiness_cost=tardiness,
                    runs=windows,
                    budget=self.budget,
                )
        return best

    def _whole(self, reach: float) -> list[Profile]:
        """The profiles for budgets of ``m`` whole cells, ``m`` from 1 (every ``m`` to 8,
        then by half again) while the run fits in ``reach`` hours, up to the first equal
        to the longest budget's. (Not "up to the first that runs short of its budget":
        with a relaunch overhead the cheapest chain can run short of one budget and a
        slower chain win at a longer one, a review of 2026-12-06.)"""
        cell = self.tariff.cell
        budgets, m = [], 1
        while m * cell <= reach + TOL:
            budgets.append(m * cell)
            m = m + 1 if m < 8 else math.ceil(1.5 * m)
        if not budgets:
            return []
        longest = self.solve(budgets[-1])
        out: list[Profile] = []
        for b in budgets[:-1]:
            prof = self.solve(b)
            if prof.steps == longest.steps:
                break
            out.append(prof)
        return [*out, longest]


def _catch_up(
    quick: Sequence[tuple[float, Config]],
    room: Room | None,
    budget: float,
    margin: float,
    epochs: float,
    resume: float,
) -> float:
    """Hours per epoch of the fastest configuration in ``quick`` with room beside the
    profiles booked wherever a slipped job would catch up on it: its last ``epochs``
    relaunched there and ending at the ``budget`` (hours from now), and at least the
    ``margin`` before it. Where another job's profile holds the fastest one then (two
    timed jobs both counting on the one large node for their last hours), the margin is
    recovered only onto what is left; ``inf`` where none fits."""
    if room is None:
        return quick[0][0] if quick else math.inf
    for hours, cfg in quick:
        span = max(margin, epochs * hours + resume)
        edges = np.array([max(0.0, budget - span), max(0.0, budget)])
        if edges[1] <= edges[0] or bool(room(cfg, edges)[0]):
            return hours
    return math.inf
