"""The single-job stochastic model (docs/model.md, 'STS'): the heart of STS.

One job, one GPU type, ``W`` remaining epochs in blocks of length ``L_b`` run with
probability ``q_b``, a time budget ``D`` (hours), candidate configurations with time per
epoch ``t_i`` and energy cost per epoch ``c_i``. The linear program

    min  sum_b q_b sum_i c_i y_bi + omega * s
    s.t. sum_i y_bi = L_b,   sum_bi t_i y_bi - s <= D,   y, s >= 0

is solved exactly by a greedy fractional knapsack over block upgrades on the lower convex
hull of (t_i, c_i), in O(B N log(B N)). ``ipopt_profile`` solves the same LP with Ipopt
(cyipopt), the thesis's method, as the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from instances import Config, EpochDistribution


@dataclass(frozen=True)
class Option:
    """A candidate configuration: hours per epoch and energy cost per epoch (currency)."""

    config: Config
    time: float
    cost: float


@dataclass(frozen=True)
class Step:
    """Run ``config`` from epoch ``start`` to ``end`` (relative to the job's progress),
    after ``lost`` hours of relaunch overhead (:mod:`heuristic.sts.switching`)."""

    config: Config
    start: float
    end: float
    lost: float = 0.0

    @property
    def epochs(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Profile:
    """The optimal speed profile: steps in order of increasing speed.

    ``worst_time`` is the hours to run all remaining epochs; ``energy_cost`` the expected
    energy cost; ``tardiness_cost`` ``omega * max(0, worst_time - budget)``.

    ``runs``: under a changing price (:mod:`heuristic.sts.timing`), the windows (hours
    from now) in which the steps run, one after the other, idle between them; empty,
    back to back from now. ``energy_cost`` is then the bill at those hours.
    """

    steps: tuple[Step, ...]
    worst_time: float
    energy_cost: float
    tardiness_cost: float
    budget: float
    runs: tuple[tuple[float, float], ...] = ()

    @property
    def objective(self) -> float:
        return self.energy_cost + self.tardiness_cost

    @property
    def first(self) -> Step:
        return self.steps[0]

    @property
    def wait(self) -> float:
        """Hours from now before the profile starts to run (0: at once)."""
        return self.runs[0][0] if self.runs else 0.0

    def clock(self, x: float) -> float:
        """Hours from now when the run has done ``x`` hours of its worst case (the end
        of a window, not the next one's start, for ``x`` at a window's end)."""
        for start, end in self.runs:
            if x <= end - start + 1e-9:
                return start + x
            x -= end - start
        return self.runs[-1][1] + x if self.runs else x

    def on_clock(self, a: float, b: float) -> list[tuple[float, float]]:
        """The hours from now during which the run's ``[a, b)`` (worst-case hours of
        run) is done: one interval, or one per window it spans."""
        if not self.runs:
            return [(a, b)]
        out = []
        done = 0.0
        for start, end in self.runs:
            lo, hi = max(a, done), min(b, done + end - start)
            if hi > lo:
                out.append((start + lo - done, start + hi - done))
            done += end - start
        return out


def pareto_front(options: Sequence[Option]) -> list[Option]:
    """Options no other is both as fast and as cheap as, slowest (cheapest) first."""
    pts = sorted(options, key=lambda o: (o.time, o.cost, o.config))
    pareto: list[Option] = []
    for o in pts:  # fastest first: keep only strictly cheaper as time grows
        if not pareto or o.cost < pareto[-1].cost - 1e-15 * max(1.0, abs(o.cost)):
            if pareto and abs(o.time - pareto[-1].time) <= 1e-15 * max(1.0, o.time):
                pareto[-1] = o  # as fast, up to rounding, and cheaper: it replaces the other
                continue
            pareto.append(o)
    return pareto[::-1]


def lower_hull(options: Sequence[Option]) -> list[Option]:
    """Options on the lower convex hull of (time, cost), slowest (cheapest) first.

    Dominated options (slower and not cheaper) and options above the segment joining
    their neighbours (a mix of the neighbours is at least as good) are dropped.
    """
    return front_hull(pareto_front(options))


def front_hull(front: Sequence[Option]) -> list[Option]:
    """:func:`lower_hull` of options that are already their own Pareto front (as
    :func:`pareto_front` returns it, slowest first)."""
    hull: list[Option] = []
    for o in front[::-1]:
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b is kept only if it lies strictly below the chord a-o
            cross = (b.time - a.time) * (o.cost - a.cost) - (b.cost - a.cost) * (o.time - a.time)
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(o)
    return hull[::-1]


def exact_profile(
    options: Sequence[Option],
    dist: EpochDistribution,
    budget: float,
    omega: float,
    *,
    on_hull: bool = False,
) -> Profile:
    """The optimal profile for a discrete early-stopping distribution (exact greedy).

    ``dist`` is the distribution of the *remaining* epochs (see
    :meth:`EpochDistribution.conditional`); ``budget`` may be negative (already late).
    ``on_hull``: ``options`` already are :func:`lower_hull`'s output (callers that solve
    many profiles over the same options compute the hull once).
    """
    hull = list(options) if on_hull else lower_hull(options)
    if not hull:
        raise ValueError("exact_profile needs at least one option")
    parts, worst, energy = greedy_parts(hull, dist, budget, omega)
    steps = tuple(Step(hull[k].config, start, end) for k, start, end in parts)
    return Profile(steps, worst, energy, omega * max(0.0, worst - budget), budget)


def greedy_parts(
    hull: Sequence[Option], dist: EpochDistribution, budget: float, omega: float
) -> tuple[list[tuple[int, float, float]], float, float]:
    """:func:`exact_profile`'s solution on a (non-empty) lower hull as steps (hull index,
    start epoch, end epoch), with its worst-case hours and expected energy cost.
    :mod:`heuristic.sts.chainsearch` runs the same steps compiled, for every chain of a
    job with relaunch overheads (its test compares the two)."""
    L = dist.block_lengths
    q = dist.block_survival
    B = len(L)
    work = sum(L)
    upgraded = _upgrades(hull, L, q, work * hull[0].time, budget, omega)
    if upgraded is None:  # one step on the slowest option: the floats of the loop below
        # (block lengths are positive; L * (1 - 0.0) is L; the steps' end sums L as
        # ``work`` does)
        cost = hull[0].cost
        energy = 0.0
        for b in range(B):
            energy += q[b] * cost * L[b]
        return [(0, 0.0, work)], work * hull[0].time, energy
    level, frac = upgraded
    # steps as (hull index, start, end), merged while the configuration stays the same
    # (hull configurations are distinct, so equal indices mean equal configurations)
    idx: list[int] = []
    lo: list[float] = []
    hi: list[float] = []
    energy = 0.0
    pos = 0.0
    for b in range(B):
        i, f = level[b], frac[b]
        for k, epochs in ((i, L[b] * (1 - f)), (i + 1, L[b] * f)):
            if epochs <= 0:
                continue  # with f == 0, the faster part is empty
            energy += q[b] * hull[k].cost * epochs
            if idx and idx[-1] == k:
                hi[-1] = pos + epochs
            else:
                idx.append(k)
                lo.append(pos)
                hi.append(pos + epochs)
            pos += epochs
    parts = _without_slivers(list(zip(idx, lo, hi, strict=True)), work)
    worst = sum((end - start) * hull[k].time for k, start, end in parts)
    return parts, worst, energy


def _upgrades(
    hull: Sequence[Option],
    L: Sequence[float],
    q: Sequence[float],
    time: float,
    budget: float,
    omega: float,
) -> tuple[list[int], list[float]] | None:
    """The greedy's upgrades from ``time`` (every block on the slowest option): each
    block's hull index and the fraction of it on the next one; ``None`` if none is
    made (no upgrade is needed, or none is worth its rate)."""
    N, B = len(hull), len(L)
    if not (time > budget + 1e-12 and N > 1):  # no upgrade is needed: skip building them
        return None
    level = [0] * B  # index of the config of block b (below: fraction of the next one)
    frac = [0.0] * B
    moved = False
    dts = [hull[i].time - hull[i + 1].time for i in range(N - 1)]
    dcs = [hull[i + 1].cost - hull[i].cost for i in range(N - 1)]
    ups = [(q[b] * dcs[i] / dts[i], -b, i, dts[i]) for b in range(B) for i in range(N - 1)]
    ups.sort()  # equal rates: later blocks first, which keeps the speed monotone
    for rate, nb, i, dt in ups:
        if time <= budget + 1e-12 or rate >= omega:
            break
        b, moved = -nb, True
        need = (time - budget) / dt  # epochs to move to reach the budget
        if need >= L[b]:
            level[b], frac[b] = i + 1, 0.0
            time -= L[b] * dt
        else:
            level[b], frac[b] = i, need / L[b]
            time = budget
    return (level, frac) if moved else None


def _without_slivers(
    parts: list[tuple[int, float, float]], work: float
) -> list[tuple[int, float, float]]:
    """Float leftovers (a step of ~1e-12 epochs) are merged into the next, faster step:
    a policy cannot act on them (a wake-up that close to now is no event) and running
    them faster only shortens the worst case. Energy changes by at most ~1e-12 relative.
    Steps are (hull index, start, end)."""
    tol = 1e-9 * max(1.0, work)
    out: list[tuple[int, float, float]] = []
    carry = None
    for n, (k, s_start, s_end) in enumerate(parts):
        start = carry if carry is not None else s_start
        carry = None
        if s_end - start <= tol:
            if n < len(parts) - 1:
                carry = start  # the next step starts here instead
                continue
            if out:  # a sliver at the very end: the previous step runs to the end
                out[-1] = (out[-1][0], out[-1][1], s_end)
                continue
        out.append((k, start, s_end))
    return out


def continuous_profile(
    options: Sequence[Option],
    survival: Callable[[float], float],
    inverse_survival: Callable[[float], float],
    work: float,
    budget: float,
    *,
    tol: float = 1e-12,
) -> Profile:
    """The optimal profile for a continuous survival ``S`` on ``[0, work]`` epochs.

    Hull config ``i`` (slowest first) gives way to ``i+1`` at epoch ``a_i`` with
    ``S(a_i) = lam (t_i - t_{i+1}) / (c_{i+1} - c_i)``; one bisection on ``lam`` meets the
    budget (Anselmi & Gaujal, MASCOTS 2022). If even the fastest config misses the
    budget it runs throughout (the tardiness weight dominates energy). ``inverse_survival``
    maps a probability ``p`` in (0, 1) to the ``w`` with ``S(w) = p``.
    """
    hull = lower_hull(options)
    ratios = [
        (hull[i].time - hull[i + 1].time) / (hull[i + 1].cost - hull[i].cost)
        for i in range(len(hull) - 1)
    ]

    def cuts(lam: float) -> list[float]:
        """Epoch positions [0, a_0, ..., a_{N-2}, work]; config i runs between i and i+1."""
        a = []
        for r in ratios:
            p = lam * r
            a.append(
                0.0 if p >= 1.0 else work if p <= 0.0 else min(work, max(0.0, inverse_survival(p)))
            )
        for k in range(1, len(a)):  # non-decreasing by convexity; enforce against rounding
            a[k] = max(a[k], a[k - 1])
        return [0.0, *a, work]

    def worst_time(c: list[float]) -> float:
        return sum(hull[i].time * (c[i + 1] - c[i]) for i in range(len(hull)))

    if len(hull) == 1 or worst_time(cuts(0.0)) <= budget:
        c = cuts(0.0)
    elif hull[-1].time * work >= budget:
        c = [0.0] * len(hull) + [work]  # fastest throughout
    else:
        lo, hi = 0.0, 1.0 / min(ratios)  # at hi every switch happens at epoch 0
        while hi - lo > tol * hi:
            mid = (lo + hi) / 2
            if worst_time(cuts(mid)) > budget:
                lo = mid
            else:
                hi = mid
        c = cuts(hi)
    steps = []
    energy = 0.0
    for i, opt in enumerate(hull):
        if c[i + 1] - c[i] > 1e-12:
            steps.append(Step(opt.config, c[i], c[i + 1]))
            energy += opt.cost * _integral(survival, c[i], c[i + 1])
    worst = worst_time(c)
    return Profile(tuple(steps), worst, energy, 0.0, budget)


def _integral(f: Callable[[float], float], a: float, b: float, n: int = 2000) -> float:
    """Simpson's rule; the survival functions used here are smooth."""
    if b <= a:
        return 0.0
    h = (b - a) / n
    s = f(a) + f(b) + sum((4 if k % 2 else 2) * f(a + k * h) for k in range(1, n))
    return s * h / 3
