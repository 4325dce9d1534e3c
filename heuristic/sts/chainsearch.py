"""The search over a job's chains of :func:`heuristic.sts.switching.relaunch_profile`,
compiled.

With relaunch overheads, STS solves the greedy profile on each chain a job's profile
may use, prices its overheads, and keeps the cheapest: a Python loop of small steps
(sorting a job's upgrades, merging its steps, pricing them), about 0.3 ms a profile.
On a contended 32-GPU run it took half of STS's time (4.7 of 9.7 s, profiled), and a
third under a price series. Compiled by numba, the same loop does the same operations
in the same order, so it gives the same floats and the same profile (a property test
composes the Python form from :func:`heuristic.sts.profile.greedy_parts`). It is
compiled on the first profile that pays a relaunch (:mod:`heuristic.sts.compiled`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from heuristic.sts.chainset import ChainSet
from heuristic.sts.compiled import Compiled
from instances.distribution import STOP_TOL, EpochDistribution


def _search(
    time: Any,
    cost: Any,
    each: Any,
    flat: Any,
    offsets: Any,
    at: Any,
    least_cost: Any,
    least_time: Any,
    slowest: Any,
    single: Any,
    lost_first: Any,
    lost_first_cost: Any,
    ahead: Any,
    prune: bool,
    lengths: Any,
    survival: Any,
    stops: Any,
    mean: float,
    omega: float,
    budget: float,
    hours: float,
    left: float,
    tol: float,
) -> tuple[int, Any, Any, Any, Any, float, float, float]:
    # (run compiled; each step is the Python form's, in its order, so that the sums
    # and products round alike: the chains' floors, then for each chain tried
    # profile.greedy_parts with its _upgrades and _without_slivers, and the overheads
    # its steps pay)
    nb = lengths.shape[0]
    work = 0.0
    for b in range(nb):
        work += lengths[b]
    chains = least_cost.shape[0]
    # each chain's floor, and its budget less its overheads
    low = np.empty(chains)
    budgets = np.empty(chains)
    worst_epochs = stops[nb - 1]
    for c in range(chains):
        over = worst_epochs * least_time[c] + lost_first[c] - budget
        late = 0.0 if over <= 0.0 else over
        low[c] = mean * least_cost[c] + lost_first_cost[c] + omega * late
        budgets[c] = budget - ahead[c]
    if prune:  # a chain whose slowest option alone meets its budget is its own
        todo = np.flatnonzero(single | (work * slowest > budgets + 1e-12))
    else:
        todo = np.arange(chains)
    todo = todo[np.argsort(low[todo], kind="mergesort")]  # stable: ties by index
    best = -1
    best_key = np.inf
    best_count = 0
    limit = np.inf
    out_k = np.empty(0, np.int64)
    out_lo = np.empty(0)
    out_hi = np.empty(0)
    out_lost = np.empty(0)
    out_time = 0.0
    out_energy = 0.0
    out_late = 0.0
    for r in range(todo.shape[0]):
        i = int(todo[r])
        if prune and low[i] > limit:
            break
        first, n = offsets[i], offsets[i + 1] - offsets[i]
        ct = np.empty(n)
        cc = np.empty(n)
        ce = np.empty(n)
        for j in range(n):
            ct[j] = time[flat[first + j]]
            cc[j] = cost[flat[first + j]]
            ce[j] = each[flat[first + j]]
        room = budgets[i]
        # _upgrades: from every block on the slowest option
        level = np.zeros(nb, np.int64)
        frac = np.zeros(nb)
        moved = False
        t = work * ct[0]
        if t > room + 1e-12 and n > 1:
            m = nb * (n - 1)
            rate = np.empty(m)
            neg = np.empty(m, np.int64)
            which = np.empty(m, np.int64)
            for b in range(nb):
                for k in range(n - 1):
                    u = b * (n - 1) + k
                    rate[u] = survival[b] * (cc[k + 1] - cc[k]) / (ct[k] - ct[k + 1])
                    neg[u] = -b
                    which[u] = k
            # Python sorts the tuples (rate, -b, i): stable sorts by the last key first
            order = np.argsort(which, kind="mergesort")
            order = order[np.argsort(neg[order], kind="mergesort")]
            order = order[np.argsort(rate[order], kind="mergesort")]
            for u in order:
                if t <= room + 1e-12 or rate[u] >= omega:
                    break
                b, k = -neg[u], which[u]
                moved = True
                dt = ct[k] - ct[k + 1]
                need = (t - room) / dt
                if need >= lengths[b]:
                    level[b], frac[b] = k + 1, 0.0
                    t -= lengths[b] * dt
                else:
                    level[b], frac[b] = k, need / lengths[b]
                    t = room
        # greedy_parts: the steps, merged while the option stays the same
        pk = np.empty(2 * nb, np.int64)
        plo = np.empty(2 * nb)
        phi = np.empty(2 * nb)
        count = 0
        energy = 0.0
        if not moved:
            for b in range(nb):
                energy += survival[b] * cc[0] * lengths[b]
            pk[0], plo[0], phi[0] = 0, 0.0, work
            count = 1
        else:
            pos = 0.0
            for b in range(nb):
                lv, f = level[b], frac[b]
                for side in range(2):
                    k = lv + side
                    epochs = lengths[b] * (1 - f) if side == 0 else lengths[b] * f
                    if epochs <= 0:
                        continue
                    energy += survival[b] * cc[k] * epochs
                    if count > 0 and pk[count - 1] == k:
                        phi[count - 1] = pos + epochs
                    else:
                        pk[count], plo[count], phi[count] = k, pos, pos + epochs
                        count += 1
                    pos += epochs
            # _without_slivers
            sliver = 1e-9 * max(1.0, work)
            kept = 0
            carry = 0.0
            carried = False
            for p in range(count):
                start = carry if carried else plo[p]
                carried = False
                if phi[p] - start <= sliver:
                    if p < count - 1:
                        carry, carried = start, True
                        continue
                    if kept > 0:
                        phi[kept - 1] = phi[p]
                        continue
                pk[kept], plo[kept], phi[kept] = pk[p], start, phi[p]
                kept += 1
            count = kept
        # _priced: the overhead each step pays, if the job still runs as it begins
        lost = np.empty(count)
        overhead = 0.0
        for p in range(count):
            lost[p] = left if p == 0 and pk[p] == at[i] else hours
            w = plo[p]
            if w < 0:
                beyond = 1.0
            else:
                s = np.searchsorted(stops, w, side="right")
                if s < stops.shape[0] and w >= stops[s] - tol * max(1.0, stops[s]):
                    s += 1
                beyond = survival[s] if s < stops.shape[0] else 0.0
            overhead += ce[pk[p]] * lost[p] * beyond
        worst = 0.0
        for p in range(count):
            worst += (phi[p] - plo[p]) * ct[pk[p]] + lost[p]
        energy += overhead
        late = omega * (worst - budget if worst - budget > 0.0 else 0.0)
        key = energy + late
        # Python's (cost, steps, chain index) order: the first chain tried that is
        # cheaper, or as cheap with fewer steps, or as both with a lower index
        if (
            best < 0
            or key < best_key
            or (key == best_key and (count < best_count or (count == best_count and i < best)))
        ):
            best, best_key, best_count = i, key, count
            out_k = pk[:count].copy()
            out_lo = plo[:count].copy()
            out_hi = phi[:count].copy()
            out_lost = lost.copy()
            out_time, out_energy, out_late = worst, energy, late
            limit = key * (1 + 1e-9) + 1e-15
    return best, out_k, out_lo, out_hi, out_lost, out_time, out_energy, out_late


_compiled_search = Compiled(_search)


def search(
    cs: ChainSet,
    dist: EpochDistribution,
    budget: float,
    omega: float,
    hours: float,
    left: float,
    prune: bool,
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float, float]:
    """The cheapest profile over the chains of ``cs`` (``hours`` of overhead a
    relaunch, ``left`` still to run on the current configuration): the chain's index, its steps (the
    option's place in the chain, start and end epoch, overhead hours), worst-case hours,
    expected energy cost with the overheads, and tardiness cost."""
    lost, lost_cost, ahead = cs.paid(hours, left)
    lengths, survival, stops = dist.block_arrays
    return _compiled_search(
        cs.option_time,
        cs.option_cost,
        cs.option_overhead,
        cs.flat,
        cs.offsets,
        cs.places,
        cs.cost,
        cs.time,
        cs.slowest,
        cs.single,
        lost,
        lost_cost,
        ahead,
        bool(prune),
        lengths,
        survival,
        stops,
        dist.mean(),
        float(omega),
        float(budget),
        float(hours),
        float(left),
        STOP_TOL,
    )
