"""The gap report's page and its chart of certified gaps against instance size.

The page puts a summary first, then one table (costs to four significant digits, gaps in
percent, times in seconds; it scrolls sideways when wider than the page), the chart, and
each instance's Gantt charts. Every text from an input is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from experiments.gantt import DECODE_SCRIPT, png
from heuristic.core.result import certified_gap
from instances.jsonfile import write_atomic

SIZE_CHART = "gaps-by-size.png"
PLANS = ("sts", "sts-tuned", "improved", "milp")


def _cost(v: Any) -> str:
    return "-" if isinstance(v, float) and math.isnan(v) else f"{v:.4g}"


def _pct(v: Any) -> str:
    return "-" if isinstance(v, float) and math.isnan(v) else f"{100 * v:.2f}%"


def _sec(v: Any) -> str:
    return "-" if isinstance(v, float) and math.isnan(v) else f"{v:.1f} s"


# the page's columns: field, header, how a value reads
_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("nodes", "nodes", str),
    ("jobs", "jobs", str),
    ("slots", "slots", str),
    ("sts_cost", "STS", _cost),
    ("tuned_cost", "tuned STS", _cost),
    ("improved_cost", "improved", _cost),
    ("milp_cost", "MILP best", _cost),
    ("colgen_cost", "B&P plan", _cost),
    ("colgen_bound", "B&P bound", _cost),
    ("bound", "best bound", _cost),
    ("sts_certified", "STS cert. gap", _pct),
    ("tuned_certified", "tuned cert. gap", _pct),
    ("improved_certified", "improved cert. gap", _pct),
    ("sts_gap", "STS gap", _pct),
    ("tuned_gap", "tuned gap", _pct),
    ("milp_gap", "MILP gap", _pct),
    ("proved", "proved", lambda v: "yes" if v else "NO"),
    ("seconds_search", "search", _sec),
    ("seconds_improve", "improve", _sec),
    ("seconds_warm", "MILP warm", _sec),
    ("seconds_cold", "MILP cold", _sec),
    ("seconds_colgen", "B&P", _sec),
)
_CSS = (
    "body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}"
    ".wide{overflow-x:auto}table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
    "th{background:#f2f2f2}td:first-child{text-align:left}img{max-width:100%}"
)


def bound_proved(cost: float, bound: float) -> bool:
    """Whether the best plan meets the best bound (within branch-and-price's relative
    1e-6): the optimum is then known, whether or not the MILP proved it."""
    return math.isfinite(cost) and certified_gap(cost, bound) <= 1e-6


def proved_by_bound(df: pd.DataFrame) -> pd.Series:
    """Per instance, whether the MILP did not prove it but its best plan meets the best
    bound (:func:`bound_proved`)."""
    met = [bound_proved(c, b) for c, b in zip(df["best_cost"], df["bound"], strict=True)]
    return ~df["proved"].astype(bool) & pd.Series(met, index=df.index, dtype=bool)


def summary_items(df: pd.DataFrame) -> list[str]:
    g, tg = 100 * df["sts_gap"], 100 * df["tuned_gap"]
    built = df["milp_built"].astype(bool)
    proved = int(df["proved"].sum())
    cert = 100 * df["improved_certified"]
    items = [
        f"{len(df)} instances; {proved} proved optimal by both MILP solves"
        + ("" if proved == len(df) else f", {len(df) - proved} NOT proved")
        + ("" if built.all() else f" ({int((~built).sum())} too large for the MILP)"),
        f"the improved plan (MILP neighbourhood search) is at most {cert.max():.2f}% above "
        f"the optimum (median {cert.median():.2f}%), certified by the best lower bound",
    ]
    if built.any():
        g, tg = g.dropna(), tg.dropna()
        items += [
            f"STS above the best plan found: median {g.median():.2f}%, max {g.max():.2f}%",
            f"STS tuned by its search: median {tg.median():.2f}%, max {tg.max():.2f}%",
        ]
    ratios = df.dropna(subset=["solver_ratio"])
    if len(ratios):
        items.append(
            "MILP time with the warm start / without: median "
            f"{ratios['solver_ratio'].median():.2f} (with the search counted: "
            f"{ratios['warm_ratio'].median():.2f})"
        )
    by_bound = int(proved_by_bound(df).sum())
    if by_bound:
        items.append(
            f"{by_bound} of those the MILP did not prove are optimal all the same: the best "
            "plan meets the best bound (branch-and-price's, on the same slots)"
        )
    if proved + by_bound < len(df):
        items.append(
            "where optimality is not proved, gaps are to the best plan found (the MILP's or "
            "the improved one) and the optimum may be as low as the best bound"
        )
    return items


def gaps_by_size(df: pd.DataFrame, path: Path) -> Path:
    """Certified gaps (log scale) of STS, tuned STS and the improved plan against the
    number of jobs."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for column, label, marker in (
        ("sts_certified", "STS", "o"),
        ("tuned_certified", "tuned STS", "s"),
        ("improved_certified", "improved", "^"),
    ):
        # a gap of zero has no place on a log axis: drawn at 0.01%
        ax.scatter(df["jobs"], (100 * df[column]).clip(lower=1e-2), label=label, marker=marker)
    ax.set_yscale("log")
    ax.set_xlabel("jobs")
    ax.set_ylabel("certified gap (%), log scale")
    ax.set_title("(cost - best bound) / best bound")
    ax.legend()
    fig.tight_layout()
    data = png(fig)
    plt.close(fig)
    return write_atomic(path, data)


def page(df: pd.DataFrame, stems: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h, _ in _COLUMNS)
    body = "".join(
        f"<tr><td>{html.escape(str(name))}</td>"
        + "".join(f"<td>{html.escape(fmt(row[c]))}</td>" for c, _, fmt in _COLUMNS)
        + "</tr>"
        for name, row in df.iterrows()
    )
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>gpusched gap report</title>",
        f"<style>{_CSS}</style><script>{DECODE_SCRIPT}</script></head><body>",
        "<h1>STS against the exact MILP and the best lower bound</h1><ul>",
        *(f"<li>{html.escape(item)}</li>" for item in summary_items(df)),
        "</ul><p>Costs are the evaluator's (expected energy + tardiness). A certified gap "
        "is (cost − best bound) / best bound: the plan is at most that far above the "
        "optimum. A gap to the MILP is (cost − MILP best) / MILP best. Every figure is "
        "also in <a href='gap.csv'>gap.csv</a>.</p>",
        f"<div class='wide'><table><tr><th>instance</th>{head}</tr>{body}</table></div>",
        f"<h2>Certified gaps by size</h2><img src='{SIZE_CHART}' alt='certified gaps by size'>",
    ]
    for (name, row), stem in zip(df.iterrows(), stems, strict=True):
        n = html.escape(str(name))
        parts.append(f"<h2>{n}</h2>")
        for kind in PLANS:
            if kind == "milp" and not row["milp_built"]:
                continue
            if kind == "improved" and row["seconds_improve"] == 0:
                continue
            src = html.escape(f"{stem}-{kind}.png")
            parts.append(f"<img src='{src}' alt='{kind} plan of {n}'>")
    parts.append("</body></html>")
    return "\n".join(parts)
