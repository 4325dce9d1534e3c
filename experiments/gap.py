"""Gap analysis: STS (slotted worst-case rollout) against the warm-started MILP.

Per instance: the cost (evaluator) of the STS plan and of STS tuned by the local search
of :mod:`heuristic.sts_search`, the MILP's best cost and dual bound, both STS gaps to
the best, the time to optimality with the warm start (the tuned plan; the search's time
counts) and without it, and a Gantt chart of the plans; written as CSV, PNG and one
HTML page.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.gantt import gantt
from experiments.paths import plain_name
from heuristic.sts import StsPolicy, StsTuning
from heuristic.sts_search import SearchResult, search
from instances import Instance, Plan
from instances.io import write_atomic
from milp import solve
from milp.data import require_slot
from validation.evaluate import evaluate
from validation.simulator import rollout

SEARCH_EVALUATIONS = 2000  # rollouts per instance for the STS search (2-5 s on the suite)


@dataclass(frozen=True)
class GapRow:
    instance: str
    nodes: int
    jobs: int
    slots: int
    sharing: bool
    sts_cost: float  # STS as the thesis: one greedy pass
    tuned_cost: float  # STS with the per-job adjustments found by the search
    milp_cost: float
    milp_bound: float
    milp_gap: float  # HiGHS's remaining gap on the warm-started solve
    sts_gap: float  # (STS - MILP best) / MILP best
    tuned_gap: float  # (tuned STS - MILP best) / MILP best
    proved: bool  # both solves proved optimality
    seconds_search: float  # the STS search that makes the warm start
    seconds_warm: float  # the MILP solve from the warm start (model building included)
    seconds_cold: float
    cold_cost: float
    evaluations: int  # rollouts costed by the search

    @property
    def warm_ratio(self) -> float:
        """Time to optimality with the warm start, its search included, over without."""
        return (self.seconds_search + self.seconds_warm) / self.seconds_cold

    @property
    def solver_ratio(self) -> float:
        """The MILP's own time (model building included) with the warm start over without."""
        return self.seconds_warm / self.seconds_cold


def tune_sts(instance: Instance, *, evaluations: int = SEARCH_EVALUATIONS) -> SearchResult:
    """The STS search on ``instance``, each tuning costed by the evaluator on its
    worst-case rollout."""

    def cost(tuning: StsTuning) -> float:
        return evaluate(instance, rollout(instance, StsPolicy(tuning=tuning))).total_cost

    return search(instance, cost, evaluations=evaluations)


def analyse(
    instance: Instance,
    *,
    time_limit: float = 60.0,
    threads: int | None = None,
    evaluations: int = SEARCH_EVALUATIONS,
) -> tuple[GapRow, dict[str, Plan | None]]:
    """Gap analysis of one slotted instance; also returns the plans (STS, tuned STS,
    MILP)."""
    require_slot(instance)  # a MilpError with a hint, before the search runs
    sts_plan = rollout(instance, StsPolicy())
    t0 = time.perf_counter()
    found = tune_sts(instance, evaluations=evaluations)
    tuned_plan = rollout(instance, StsPolicy(tuning=found.tuning))
    seconds_search = time.perf_counter() - t0
    warm = solve(instance, initial_plan=tuned_plan, time_limit=time_limit, threads=threads)
    tuned_cost = warm.warm_start_cost  # the evaluator's cost of the tuned plan
    sts_cost = found.start_cost  # the search began with plain STS: the same rollout, costed
    cold = solve(instance, slots=warm.slots, time_limit=time_limit, threads=threads)
    # the tuned plan is the warm start, so the warm solve always has a plan and a bound
    assert warm.objective is not None and warm.bound is not None and tuned_cost is not None
    best = min(warm.objective, cold.objective if cold.objective is not None else float("inf"))
    row = GapRow(
        instance=instance.name,
        nodes=len(instance.nodes),
        jobs=len(instance.jobs),
        slots=warm.slots,
        sharing=any(c.shared for j in instance.jobs for c in instance.allowed_configs(j)),
        sts_cost=sts_cost,
        tuned_cost=tuned_cost,
        milp_cost=best,
        milp_bound=max(warm.bound, cold.bound if cold.bound is not None else warm.bound),
        milp_gap=warm.gap if warm.gap is not None else float("nan"),
        sts_gap=(sts_cost - best) / max(best, 1e-12),
        tuned_gap=(tuned_cost - best) / max(best, 1e-12),
        proved=warm.optimal and cold.optimal,
        seconds_search=seconds_search,
        seconds_warm=warm.seconds,
        seconds_cold=cold.seconds,
        cold_cost=cold.objective if cold.objective is not None else float("nan"),
        evaluations=found.evaluations,
    )
    return row, {"sts": sts_plan, "sts-tuned": tuned_plan, "milp": warm.plan}


def gap_report(
    instances: Sequence[Instance],
    out: str | Path,
    *,
    time_limit: float = 60.0,
    threads: int | None = None,
    evaluations: int = SEARCH_EVALUATIONS,
    echo: Callable[[str], object] = print,
) -> pd.DataFrame:
    """Analyse every instance, then write ``gap.csv``, Gantt PNGs and ``index.html`` in
    ``out`` (nothing is written if an analysis fails)."""
    rows, charts = [], []
    for k, inst in enumerate(instances):
        row, plans = analyse(inst, time_limit=time_limit, threads=threads, evaluations=evaluations)
        rows.append(row)
        charts.append((chart_stem(k, inst.name), inst, plans))
        echo(_line(row))
    ratios = [{"warm_ratio": r.warm_ratio, "solver_ratio": r.solver_ratio} for r in rows]
    df = pd.DataFrame([{**asdict(r), **q} for r, q in zip(rows, ratios, strict=True)])
    df = df.set_index("instance")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for stem, inst, plans in charts:
        for kind, plan in plans.items():
            if plan is not None:
                gantt(inst, plan, out / f"{stem}-{kind}.png", f"{inst.name}: {kind}")
    write_atomic(out / "gap.csv", df.to_csv())
    write_atomic(out / "index.html", _html(df, [stem for stem, _, _ in charts]))
    return df


def chart_stem(position: int, name: str) -> str:
    """The file name stem of an instance's charts: its position in the report and its
    name cut down to letters, digits, '.', '_' and '-', so that no instance name
    decides where a file goes."""
    return f"{position:02d}-{plain_name(name, 60, 'instance')}"


def _line(row: GapRow) -> str:
    """One instance's figures; "optimal" only where both solves proved it."""
    verdict = (
        "proved optimal in"
        if row.proved
        else f"NOT proved optimal: MILP gap {100 * row.milp_gap:.2f}% when stopped after"
    )
    times = (
        f"{verdict} {row.seconds_search + row.seconds_warm:.1f} s warm (search "
        f"{row.seconds_search:.1f} s) / {row.seconds_cold:.1f} s cold"
    )
    return (
        f"{row.instance}: STS {row.sts_cost:.4f}, tuned {row.tuned_cost:.4f}, MILP "
        f"{row.milp_cost:.4f} (bound {row.milp_bound:.4f}), STS gap "
        f"{100 * row.sts_gap:.2f}%, tuned {100 * row.tuned_gap:.2f}%, {times}"
    )


def summary(df: pd.DataFrame) -> str:
    g, tg = 100 * df["sts_gap"], 100 * df["tuned_gap"]
    warm = df["seconds_search"].sum() + df["seconds_warm"].sum()
    return (
        f"{len(df)} instances, {int(df['proved'].sum())} proved optimal; STS gap median "
        f"{g.median():.2f}%, mean {g.mean():.2f}%, max {g.max():.2f}%; tuned STS gap median "
        f"{tg.median():.2f}%, mean {tg.mean():.2f}%, max {tg.max():.2f}%; MILP time with "
        f"warm start / without: median {df['solver_ratio'].median():.2f}, total "
        f"{df['seconds_warm'].sum() / df['seconds_cold'].sum():.2f}; with the search "
        f"included: median {df['warm_ratio'].median():.2f}, total "
        f"{warm / df['seconds_cold'].sum():.2f}" + _unproved(df)
    )


def _unproved(df: pd.DataFrame) -> str:
    n = int((~df["proved"].astype(bool)).sum())
    if n == 0:
        return ""
    return (
        f". {n} of {len(df)} NOT proved optimal: their STS gaps are to the best plan found "
        "(the optimum may be lower, down to milp_bound) and their times are time limits"
    )


# the page's columns: field, header, how a value reads (costs to 4 significant digits,
# gaps in %, times in s)
_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("nodes", "nodes", str),
    ("jobs", "jobs", str),
    ("slots", "slots", str),
    ("sts_cost", "STS", lambda v: f"{v:.4g}"),
    ("tuned_cost", "tuned STS", lambda v: f"{v:.4g}"),
    ("milp_cost", "MILP best", lambda v: f"{v:.4g}"),
    ("milp_bound", "bound", lambda v: f"{v:.4g}"),
    ("sts_gap", "STS gap", lambda v: f"{100 * v:.2f}%"),
    ("tuned_gap", "tuned gap", lambda v: f"{100 * v:.2f}%"),
    ("milp_gap", "MILP gap", lambda v: f"{100 * v:.2f}%"),
    ("proved", "proved", lambda v: "yes" if v else "NO"),
    ("seconds_search", "search", lambda v: f"{v:.1f} s"),
    ("seconds_warm", "MILP warm", lambda v: f"{v:.1f} s"),
    ("seconds_cold", "MILP cold", lambda v: f"{v:.1f} s"),
)
_CSS = (
    "body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}"
    ".wide{overflow-x:auto}table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
    "th{background:#f2f2f2}td:first-child{text-align:left}img{max-width:100%}"
)
# the load handler records that every chart decoded, for readers and for the test that
# opens the page in a headless browser
_SCRIPT = (
    "window.addEventListener('load',()=>{const i=Array.from(document.images);"
    "document.body.dataset.imagesDecoded="
    "i.filter(x=>x.complete&&x.naturalWidth>0).length+'/'+i.length;});"
)


def _summary_items(df: pd.DataFrame) -> list[str]:
    g, tg = 100 * df["sts_gap"], 100 * df["tuned_gap"]
    proved = int(df["proved"].sum())
    items = [
        f"{len(df)} instances; {proved} proved optimal by both MILP solves"
        + ("" if proved == len(df) else f", {len(df) - proved} NOT proved"),
        f"greedy STS above the MILP's best: median {g.median():.2f}%, max {g.max():.2f}%",
        f"STS tuned by its search: median {tg.median():.2f}%, max {tg.max():.2f}%",
        f"MILP time with the warm start / without: median {df['solver_ratio'].median():.2f} "
        f"(with the search counted: {df['warm_ratio'].median():.2f})",
    ]
    if proved < len(df):
        items.append(
            "where optimality is not proved, gaps are to the best plan found and the "
            "optimum may be as low as the bound"
        )
    return items


def _html(df: pd.DataFrame, stems: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h, _ in _COLUMNS)
    body = "".join(
        f"<tr><td>{html.escape(str(name))}</td>"
        + "".join(f"<td>{html.escape(fmt(row[c]))}</td>" for c, _, fmt in _COLUMNS)
        + "</tr>"
        for name, row in df.iterrows()
    )
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>gpusched gap report</title>",
        f"<style>{_CSS}</style><script>{_SCRIPT}</script></head><body>",
        "<h1>STS against the exact MILP</h1><ul>",
        *(f"<li>{html.escape(item)}</li>" for item in _summary_items(df)),
        "</ul><p>Costs are the evaluator's (expected energy + tardiness); a gap is (cost − "
        "MILP best) / MILP best. Every figure is also in <a href='gap.csv'>gap.csv</a>.</p>",
        f"<div class='wide'><table><tr><th>instance</th>{head}</tr>{body}</table></div>",
    ]
    for name, stem in zip(df.index, stems, strict=True):
        n = html.escape(str(name))
        parts.append(f"<h2>{n}</h2>")
        for kind in ("sts", "sts-tuned", "milp"):
            src = html.escape(f"{stem}-{kind}.png")
            parts.append(f"<img src='{src}' alt='{kind} plan of {n}'>")
    parts.append("</body></html>")
    return "\n".join(parts)
