"""Gap analysis: STS (slotted worst-case rollout) against the warm-started MILP, at every
size.

Per instance: the cost (evaluator) of the STS plan, of STS tuned by the local search of
:mod:`heuristic.sts.search`, and of the tuned plan improved by the MILP neighbourhood
search (:func:`milp.improve`); the MILP's best cost and dual bound where the model fits
in memory; the best lower bound (the MILP's, the Lagrangian bound of
:mod:`milp.lagrange`, the capacity relaxation); gaps to the best plan found (the
MILP's, or the improved one where that is cheaper) and certified gaps to the bound;
the time to optimality with the warm start (the tuned plan; the search's time counts)
and without it; and a Gantt chart of the plans. Written as CSV, PNG and one HTML page
(:mod:`experiments.gap_page`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd

from experiments.gantt import gantt
from experiments.gap_page import SIZE_CHART, bound_proved, gaps_by_size, page, proved_by_bound
from experiments.paths import output_folder, plain_name
from heuristic.core.result import certified_gap
from heuristic.sts.policy import StsPolicy
from heuristic.sts.search import SearchResult
from instances import Instance, Plan
from instances.jsonfile import write_atomic
from milp import Improvement, LagrangeBound, Result, improve, lagrangian_bound, solve
from milp.decomposition import DecompositionResult
from milp.decomposition import solve as decompose
from milp.decomposition.solve import require_decomposable
from milp.improve import tune_sts
from milp.requirements import MilpError, ModelTooLarge, require_no_distributed, require_slot
from milp.solve import horizon
from validation.simulator import rollout

SEARCH_EVALUATIONS = 2000  # rollouts per instance for the STS search (2-5 s on the suite)
# the neighbourhood search per instance: enough to come within 1% of the optimum at up
# to 20 jobs (docs/benchmarks.md)
IMPROVE_SECONDS = 30.0
# column generation and branch-and-price from the improved plan (docs/benchmarks.md)
COLGEN_SECONDS = 30.0


NAN = float("nan")


@dataclass(frozen=True)
class GapRow:
    instance: str
    nodes: int
    jobs: int
    slots: int
    sharing: bool
    sts_cost: float  # STS as the thesis: one greedy pass
    tuned_cost: float  # STS with the per-job adjustments found by the search
    improved_cost: float  # the tuned plan improved by the MILP neighbourhood search
    milp_cost: float  # the MILP's best (nan where the model is too large to build)
    # the cheapest plan found, the MILP's or the improved one (nan where the model is too
    # large to build): the optimum where the MILP proves it, else what the gaps are to
    best_cost: float
    milp_bound: float  # the MILP's dual bound (the capacity relaxation where not built)
    lagrange_bound: float  # the Lagrangian bound (never below the capacity relaxation)
    bound: float  # the best of the bounds
    milp_gap: float  # HiGHS's remaining gap on the warm-started solve
    sts_gap: float  # (STS - best) / best
    tuned_gap: float  # (tuned STS - best) / best
    sts_certified: float  # (STS - bound) / bound
    tuned_certified: float
    improved_certified: float
    proved: bool  # both solves proved optimality
    milp_built: bool  # the model fitted in memory
    seconds_search: float  # the STS search that makes the warm start
    seconds_lagrange: float
    seconds_improve: float
    seconds_warm: float  # the MILP solve from the warm start (model building included)
    seconds_cold: float
    cold_cost: float
    evaluations: int  # rollouts costed by the search
    # column generation and branch-and-price from the improved plan (nan: not run)
    colgen_cost: float = NAN
    colgen_bound: float = NAN
    colgen_certified: float = NAN
    seconds_colgen: float = 0.0

    @property
    def warm_ratio(self) -> float:
        """Time to optimality with the warm start, its search included, over without."""
        return (self.seconds_search + self.seconds_warm) / self.seconds_cold

    @property
    def solver_ratio(self) -> float:
        """The MILP's own time (model building included) with the warm start over without."""
        return self.seconds_warm / self.seconds_cold


def _gap(cost: float, best: float) -> float:
    """How far ``cost`` is above ``best``, relative to it, whatever the currency unit: a
    floor under ``best`` (1e-12, as it was) printed a 36% gap as 0% at costs of 1e-300
    and 4e18% where the best plan was free (found by a probe, 2026-12-05)."""
    if not math.isfinite(best):
        return NAN
    if best > 0:
        return (cost - best) / best
    return 0.0 if cost <= best else math.inf


def analyse(
    instance: Instance,
    *,
    time_limit: float = 60.0,
    threads: int | None = None,
    evaluations: int = SEARCH_EVALUATIONS,
    improve_time: float = IMPROVE_SECONDS,
    colgen_time: float = COLGEN_SECONDS,
) -> tuple[GapRow, dict[str, Plan | None]]:
    """Gap analysis of one slotted instance; also returns the plans (STS, tuned STS,
    improved, MILP). ``improve_time``: seconds for the neighbourhood search (0: none);
    ``colgen_time``: for column generation and branch-and-price (0: none). Where the
    instance charges the nodes' own power, the neighbourhood search does not run (its
    sub-MILPs see single jobs, not the cluster's own energy: docs/milp.md) and its column
    stays empty; column generation bounds that energy (:mod:`milp.decomposition.lower`)."""
    require_slot(instance)  # a MilpError with a hint, before the search runs
    require_no_distributed(instance)  # the same: no bound or MILP would run (E4)
    sts_plan = rollout(instance, StsPolicy())
    found = tune_sts(instance, evaluations=evaluations)
    tuned_plan = rollout(instance, StsPolicy(tuning=found.tuning))
    reach = horizon(instance, tuned_plan)
    if reach.short:
        # a bound over a horizon that may cut off a cheaper late plan bounds nothing
        raise MilpError(
            f"instance {instance.name!r}: no certified gap, {reach.short} "
            "(a plan late past it may cost less than any bound over it)"
        )
    slots = reach.slots
    if colgen_time > 0:
        # with no `improve` the decomposition starts from this plan: its space of
        # schedules is known now (after `improve` a cheaper start only cuts it smaller)
        improves = improve_time > 0 and not instance.node_power
        require_decomposable(instance, slots, None if improves else tuned_plan)
    lag = lagrangian_bound(instance, slots, upper=found.objective, time_limit=time_limit)
    warm, cold = _milp_solves(instance, tuned_plan, slots, time_limit, threads)
    solved = [r.bound for r in (warm, cold) if r is not None and r.bound is not None]
    bound = max([lag.bound, *solved])
    better = None
    if improve_time > 0 and not instance.node_power:  # improve refuses it
        better = improve(
            instance,
            initial_plan=tuned_plan,
            time_limit=improve_time,
            bound=bound,
            lagrangian=False,
            threads=1 if threads is None else threads,
        )
    row = _row(instance, slots, found, lag, warm, cold, better, bound)
    if colgen_time > 0:
        start = better.plan if better is not None else tuned_plan
        row = _with_colgen(row, decompose(instance, start, slots=slots, time_limit=colgen_time))
    plans = {
        "sts": sts_plan,
        "sts-tuned": tuned_plan,
        "improved": better.plan if better is not None else None,
        "milp": warm.plan if warm is not None else None,
    }
    return row, plans


def _with_colgen(row: GapRow, res: DecompositionResult) -> GapRow:
    """The row with the column generation's plan and bound: the best bound and the best
    plan may come from it, and the certified gaps are to the best bound."""
    bound = max(row.bound, res.bound)
    cost = res.objective if res.objective is not None else NAN
    best = min(row.best_cost, cost) if math.isfinite(row.best_cost) else NAN
    return replace(
        row,
        colgen_cost=cost,
        colgen_bound=res.bound,
        colgen_certified=certified_gap(cost, bound) if math.isfinite(cost) else NAN,
        seconds_colgen=res.runtime,
        bound=bound,
        best_cost=best,
        sts_gap=_gap(row.sts_cost, best),
        tuned_gap=_gap(row.tuned_cost, best),
        sts_certified=certified_gap(row.sts_cost, bound),
        tuned_certified=certified_gap(row.tuned_cost, bound),
        improved_certified=certified_gap(row.improved_cost, bound),
    )


def _milp_solves(
    instance: Instance, tuned_plan: Plan, slots: int, time_limit: float, threads: int | None
) -> tuple[Result | None, Result | None]:
    """The MILP warm-started by the tuned plan, and cold, over the horizon's ``slots``
    (the reach the bounds read); ``None`` where the model is too large to build (the
    cold one may be, without the warm start's cutoff). On those slots given, a model
    too large raises rather than falling back to a shorter horizon that bounds
    nothing."""
    warm = cold = None
    try:
        warm = solve(
            instance, initial_plan=tuned_plan, slots=slots, time_limit=time_limit, threads=threads
        )
        cold = solve(instance, slots=warm.slots, time_limit=time_limit, threads=threads)
    except ModelTooLarge:
        pass  # the bounds and the neighbourhood search still apply
    # the tuned plan is the warm start, so the warm solve always has a plan and a bound
    assert warm is None or (warm.objective is not None and warm.bound is not None)
    return warm, cold


def _row(
    instance: Instance,
    slots: int,
    found: SearchResult,
    lag: LagrangeBound,
    warm: Result | None,
    cold: Result | None,
    better: Improvement | None,
    bound: float,
) -> GapRow:
    """The figures of one instance (see :class:`GapRow`)."""
    tuned_cost, sts_cost = found.objective, found.start_cost  # the search began with plain STS
    better_cost = better.objective if better is not None else tuned_cost
    milp_cost = NAN
    if warm is not None and warm.objective is not None:
        cold_cost = cold.objective if cold is not None else None
        milp_cost = min(warm.objective, cold_cost if cold_cost is not None else math.inf)
    # an unproved MILP may end above the improved plan (suite-share-4n10j-s2: 0.2676
    # against 0.1917): the gaps are then to the improved plan, the best one known
    best_cost = min(milp_cost, better_cost) if math.isfinite(milp_cost) else NAN
    return GapRow(
        instance=instance.name,
        nodes=len(instance.nodes),
        jobs=len(instance.jobs),
        slots=slots,
        sharing=any(c.shared for j in instance.jobs for c in instance.allowed_configs(j)),
        sts_cost=sts_cost,
        tuned_cost=tuned_cost,
        improved_cost=better_cost,
        milp_cost=milp_cost,
        best_cost=best_cost,
        milp_bound=warm.bound
        if warm is not None and warm.bound is not None
        else lag.capacity_relaxation,
        lagrange_bound=lag.bound,
        bound=bound,
        milp_gap=warm.gap if warm is not None and warm.gap is not None else NAN,
        sts_gap=_gap(sts_cost, best_cost),
        tuned_gap=_gap(tuned_cost, best_cost),
        sts_certified=certified_gap(sts_cost, bound),
        tuned_certified=certified_gap(tuned_cost, bound),
        improved_certified=certified_gap(better_cost, bound),
        proved=warm is not None and cold is not None and warm.optimal and cold.optimal,
        milp_built=warm is not None,
        seconds_search=found.runtime,
        seconds_lagrange=lag.runtime,
        seconds_improve=better.runtime if better is not None else 0.0,
        seconds_warm=warm.runtime if warm is not None else NAN,
        seconds_cold=cold.runtime if cold is not None else NAN,
        cold_cost=cold.objective if cold is not None and cold.objective is not None else NAN,
        evaluations=found.evaluations,
    )


def gap_report(
    instances: Sequence[Instance],
    out: str | Path,
    *,
    time_limit: float = 60.0,
    threads: int | None = None,
    evaluations: int = SEARCH_EVALUATIONS,
    improve_time: float = IMPROVE_SECONDS,
    colgen_time: float = COLGEN_SECONDS,
    echo: Callable[[str], object] = print,
) -> pd.DataFrame:
    """Analyse every instance, then write ``gap.csv``, Gantt PNGs, a chart of the
    certified gaps against the number of jobs and ``index.html`` in ``out`` (nothing is
    written if an analysis fails)."""
    rows, charts = [], []
    for inst in instances:  # every instance's own refusals first, not after the others' solves
        require_slot(inst)
        require_no_distributed(inst)
    for k, inst in enumerate(instances):
        try:
            row, plans = analyse(
                inst,
                time_limit=time_limit,
                threads=threads,
                evaluations=evaluations,
                improve_time=improve_time,
                colgen_time=colgen_time,
            )
        except MilpError as exc:  # which of the instances (a hostile-input review)
            where = f"instance {k + 1} of {len(instances)} ({inst.name!r})"
            raise type(exc)(f"{where}: {exc}") from None
        rows.append(row)
        charts.append((chart_stem(k, inst.name), inst, plans))
        echo(_line(row))
    ratios = [{"warm_ratio": r.warm_ratio, "solver_ratio": r.solver_ratio} for r in rows]
    df = pd.DataFrame([{**asdict(r), **q} for r, q in zip(rows, ratios, strict=True)])
    df = df.set_index("instance")
    with output_folder(Path(out)) as folder:
        for stem, inst, plans in charts:
            for kind, plan in plans.items():
                if plan is not None:
                    gantt(inst, plan, folder / f"{stem}-{kind}.png", f"{inst.name}: {kind}")
        gaps_by_size(df, folder / SIZE_CHART)
        write_atomic(folder / "gap.csv", df.to_csv())
        write_atomic(folder / "index.html", page(df, [stem for stem, _, _ in charts]))
    return df


def chart_stem(position: int, name: str) -> str:
    """The file name stem of an instance's charts: its position in the report and its
    name cut down to letters, digits, '.', '_' and '-', so that no instance name
    decides where a file goes."""
    return f"{position:02d}-{plain_name(name, 60, 'instance')}"


def _line(row: GapRow) -> str:
    """One instance's figures; "optimal" only where both solves proved it."""
    bounds = (
        f"bound {row.bound:.4f}; certified gaps: STS {100 * row.sts_certified:.2f}%, tuned "
        f"{100 * row.tuned_certified:.2f}%, improved {100 * row.improved_certified:.2f}%"
    )
    head = (
        f"{row.instance}: STS {row.sts_cost:.4f}, tuned {row.tuned_cost:.4f}, improved "
        f"{row.improved_cost:.4f}"
    )
    if not row.milp_built:
        return f"{head}, MILP too large to build; {bounds}"
    if row.proved:
        verdict = "proved optimal in"
    elif bound_proved(row.best_cost, row.bound):
        verdict = (
            "optimal by the best bound (branch-and-price), the MILP did not prove it: gap "
            f"{100 * row.milp_gap:.2f}% after"
        )
    else:
        verdict = f"NOT proved optimal: MILP gap {100 * row.milp_gap:.2f}% after"
    cold = (
        f"{row.seconds_cold:.1f} s cold"
        if math.isfinite(row.seconds_cold)
        else "no cold solve (too large without the warm start's cutoff)"
    )
    times = (
        f"{verdict} {row.seconds_search + row.seconds_warm:.1f} s warm (search "
        f"{row.seconds_search:.1f} s) / {cold}"
    )
    return (
        f"{head}, MILP {row.milp_cost:.4f}; {bounds}; STS gap to the best plan "
        f"{100 * row.sts_gap:.2f}%, tuned {100 * row.tuned_gap:.2f}%, {times}"
    )


def summary(df: pd.DataFrame) -> str:
    """One paragraph of the report's figures; parts with no data (no MILP built, no cold
    solve) say so instead of printing nan."""
    cert = 100 * df["improved_certified"]
    parts = [f"{len(df)} instances, {int(df['proved'].sum())} proved optimal"]
    for column, label in (("sts_gap", "STS gap"), ("tuned_gap", "tuned STS gap")):
        g = (100 * df[column]).dropna()
        parts.append(
            f"{label} median {g.median():.2f}%, mean {g.mean():.2f}%, max {g.max():.2f}%"
            if len(g)
            else f"{label}: no MILP plan to compare with"
        )
    both = df.dropna(subset=["seconds_warm", "seconds_cold"])
    if len(both):
        cold = both["seconds_cold"].sum()
        warm = both["seconds_search"].sum() + both["seconds_warm"].sum()
        parts.append(
            f"MILP time with warm start / without: median {both['solver_ratio'].median():.2f}, "
            f"total {both['seconds_warm'].sum() / cold:.2f}; with the search included: median "
            f"{both['warm_ratio'].median():.2f}, total {warm / cold:.2f}"
        )
    else:
        parts.append("no instance had both MILP solves (too large without the warm start)")
    parts.append(
        f"improved plan's certified gap median {cert.median():.2f}%, max {cert.max():.2f}%"
    )
    return "; ".join(parts) + _unproved(df)


def _unproved(df: pd.DataFrame) -> str:
    milp = ~df["proved"].astype(bool)
    by_bound = proved_by_bound(df)
    n = int((milp & ~by_bound).sum())
    text = (
        f". {int(by_bound.sum())} more optimal by the best bound (branch-and-price) where "
        "the MILP did not prove it: their MILP times are time limits"
        if by_bound.any()
        else ""
    )
    if n == 0:
        return text
    return text + (
        f". {n} of {len(df)} NOT proved optimal: their STS gaps are to the best plan found "
        "(the optimum may be lower, down to the best bound) and their times are time "
        "limits, or the MILP's bound leaves part of idle power out (docs/milp.md)"
    )
