"""``gpusched improve``: the large-neighbourhood search of :mod:`milp.improve` with a
progress bar (the incumbent, the best bound and the certified gap as it goes), a summary
of every plan's cost against the bound, and the improved plan written to a file; or,
with ``--method colgen``, column generation and branch-and-price
(:mod:`milp.decomposition`) from the same start."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from heuristic.core.result import certified_gap
from heuristic.sts.policy import StsPolicy
from instances import Instance, Plan, write_plan
from milp.decomposition import DecompositionResult
from milp.decomposition import solve as decompose
from milp.improve import Improvement, Step, improve, tune_sts
from validation.simulator import rollout


def _percent(gap: float) -> str:
    return f"{100 * gap:.1f}%" if gap < 10 else f"{gap:.0f}x"


def certified_table(res: Improvement) -> str:
    """The costs of the plans (evaluator), the bound, and their certified gaps (what the
    command prints; :meth:`Improvement.summary` is the result's own)."""
    rows = []
    if res.sts_cost is not None:
        rows.append(("STS (greedy)", res.sts_cost))
        rows.append(("STS tuned (start)", res.start_cost))
    else:
        rows.append(("given plan (start)", res.start_cost))
    rows.append(("improved", res.objective))
    width = max(len(r[0]) for r in rows)
    lines = [
        f"{name:<{width}}  {cost:>12.6g}  certified gap {_percent(certified_gap(cost, res.bound))}"
        for name, cost in rows
    ]
    lines.append(f"{'lower bound':<{width}}  {res.bound:>12.6g}")
    kept = res.improvements
    lines.append(
        f"{len(res.history) - 1} neighbourhoods in {res.runtime:.1f} s, {kept} improved the plan; "
        "gap = (cost - bound) / bound"
    )
    return "\n".join(lines)


def run_improve(
    instance: Instance,
    *,
    time_limit: float,
    out: str | Path | None,
    seed: int = 0,
    search_evaluations: int | None = None,
    initial_plan: Plan | None = None,
    progress: bool = True,
    stream: TextIO | None = None,
    echo: Callable[[str], object] = print,
) -> Improvement:
    """Improve ``instance``'s plan for ``time_limit`` seconds, showing progress on
    ``stream`` (stderr by default); write the plan to ``out`` if given."""
    bar = tqdm(
        total=round(time_limit, 1),
        desc="improve",
        unit="s",
        disable=not progress,
        file=stream or sys.stderr,
        bar_format="{desc}: {bar} {n:.0f}/{total:.0f} s{postfix}",
        mininterval=0.2,
    )

    def show(step: Step) -> None:
        bar.update(max(0.0, min(step.seconds, time_limit) - bar.n))
        bar.set_postfix_str(
            f"cost {step.incumbent:.6g}, bound {step.bound:.6g}, gap {_percent(step.certified_gap)}"
        )

    with bar:
        res = improve(
            instance,
            time_limit=time_limit,
            initial_plan=initial_plan,
            search_evaluations=search_evaluations,
            seed=seed,
            on_step=show,
        )
    echo(certified_table(res))
    if out is not None:
        write_plan(res.plan, out, instance=instance.name, policy="improve")
        echo(f"plan written to {out}")
    return res


def run_colgen(
    instance: Instance,
    *,
    time_limit: float,
    out: str | Path | None,
    search_evaluations: int | None = None,
    initial_plan: Plan | None = None,
    echo: Callable[[str], object] = print,
) -> DecompositionResult:
    """Column generation and branch-and-price for ``time_limit`` seconds in all, from
    ``initial_plan`` or else STS tuned by its search (within a quarter of the time);
    print its summary and the certified gap; write the plan to ``out`` if given."""
    t0 = time.perf_counter()
    if initial_plan is None:
        budget = search_evaluations or max(50, 4000 // len(instance.jobs))
        found = tune_sts(instance, evaluations=budget, deadline=t0 + time_limit / 4)
        initial_plan = rollout(instance, StsPolicy(tuning=found.tuning))
    left = max(0.01, t0 + time_limit - time.perf_counter())
    res = decompose(instance, initial_plan=initial_plan, time_limit=left)
    echo(res.summary())
    if res.plan is None or res.objective is None:
        echo("no plan within the horizon")
        return res
    gap = _percent(certified_gap(res.objective, res.bound))
    echo(f"certified gap {gap} = (cost - bound) / bound")
    if out is not None:
        write_plan(res.plan, out, instance=instance.name, policy="colgen")
        echo(f"plan written to {out}")
    return res
