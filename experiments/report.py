"""Campaign reports: one self-contained HTML page (plots inlined as PNG data URIs).

Every figure is read from the results store, where the one evaluator put it; this
module only aggregates (means, confidence intervals, ratios) and draws.
"""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.gantt import DECODE_SCRIPT
from experiments.report_charts import (
    cost_breakdown,
    gantt_chart,
    gap_chart,
    grouped_bars,
    utilisation_chart,
)
from experiments.report_sweep import best_share, sweep_chart, sweep_table
from experiments.stats import ci95
from experiments.store import Store
from instances.jsonfile import write_atomic

REFERENCE = "clairvoyant"


def policy_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and policy: runs, mean total with its 95% CI, and mean metrics."""
    g = runs.groupby(["scenario", "policy"], sort=False)
    out = g.agg(
        runs=("total_cost", "count"),
        total=("total_cost", "mean"),
        energy=("energy_cost", "mean"),
        tardiness=("tardiness_cost", "mean"),
        missed=("missed", "mean"),
        relaunches=("relaunches", "mean"),
        utilisation=("utilisation", "mean"),
        peak_jobs=("peak_jobs", "mean"),
        mean_jct_h=("mean_jct_h", "mean"),
        decision_ms=("decision_mean_ms", "mean"),
    )
    out.insert(2, "total_ci95", g["total_cost"].apply(ci95))
    return out


def jct_table(runs: pd.DataFrame, base: str = "static") -> pd.DataFrame:
    """The JCT-oriented view (the seed systems' measure): per scenario and policy, mean
    JCT, makespan and utilisation, and the mean JCT and makespan as fractions of ``base``'s (a plain
    cluster manager). Empty where ``base`` did not run."""
    if base not in set(runs["policy"]):
        return pd.DataFrame()
    g = runs.groupby(["scenario", "policy"], sort=False)
    out = g.agg(
        mean_jct_h=("mean_jct_h", "mean"),
        makespan_h=("makespan_h", "mean"),
        utilisation=("utilisation", "mean"),
        energy=("energy_cost", "mean"),
    ).reset_index()
    ref = out[out["policy"] == base].set_index("scenario")
    out["jct_vs_" + base] = out["mean_jct_h"] / out["scenario"].map(ref["mean_jct_h"])
    out["makespan_vs_" + base] = out["makespan_h"] / out["scenario"].map(ref["makespan_h"])
    return out


def relative_table(runs: pd.DataFrame, base: str = "sts") -> pd.DataFrame:
    """How much lower ``base``'s mean energy and total cost are than each other
    policy's, per scenario (1 - base/other, as %; positive: ``base`` is cheaper)."""
    rows = []
    means = runs.groupby(["scenario", "policy"], sort=False)[["energy_cost", "total_cost"]].mean()
    for scenario in runs["scenario"].unique():
        m = means.loc[scenario]
        if base not in m.index:
            continue
        for other in m.index:
            if other in (base, REFERENCE):
                continue
            rows.append(
                {
                    "scenario": scenario,
                    "versus": other,
                    "energy_cut_%": 100
                    * (1 - m.at[base, "energy_cost"] / m.at[other, "energy_cost"]),
                    "total_cut_%": 100 * (1 - m.at[base, "total_cost"] / m.at[other, "total_cost"]),
                }
            )
    return pd.DataFrame(rows)


def bound_gaps(runs: pd.DataFrame) -> pd.DataFrame:
    """Each online run's cost above the clairvoyant bound of its scenario and seed, as
    a fraction of the bound: 0 means the policy did as well as knowing every stop."""
    ref = runs[runs["policy"] == REFERENCE][["scenario", "seed", "bound"]]
    online = runs[runs["policy"] != REFERENCE][["scenario", "seed", "policy", "total_cost"]]
    df = online.merge(ref, on=["scenario", "seed"])
    df["gap"] = (df["total_cost"] - df["bound"]) / df["bound"].clip(lower=1e-12)
    return df


def sharing_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Scenarios that differ only in ``sharing``: how much lower each policy's mean cost
    is with GPU sharing allowed than forbidden (same seeds, so same jobs and stops)."""
    params = runs["params"].map(json.loads)
    has = params.map(lambda p: "sharing" in p)
    if not has.any():
        return pd.DataFrame()
    df = runs[has].assign(
        sharing=params[has].map(lambda p: bool(p["sharing"])),
        group=params[has].map(
            lambda p: ",".join(f"{k}={v}" for k, v in sorted(p.items()) if k != "sharing")
        ),
    )
    m = df.groupby(["group", "policy", "sharing"], sort=False)[["energy_cost", "total_cost"]].mean()
    rows = []
    for (group, policy), sub in m.groupby(level=[0, 1], sort=False):
        sub = sub.droplevel([0, 1])
        if True not in sub.index or False not in sub.index:
            continue
        on, off = sub.loc[True], sub.loc[False]
        rows.append(
            {
                "scenario": group,
                "policy": policy,
                "total_shared": on["total_cost"],
                "total_exclusive": off["total_cost"],
                "total_cut_%": 100 * (1 - on["total_cost"] / off["total_cost"]),
                "energy_cut_%": 100 * (1 - on["energy_cost"] / off["energy_cost"]),
            }
        )
    return pd.DataFrame(rows)


def _undefined_as_na(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its NaNs (an interval of one seed) as None, which the markdown
    prints as its missing value (it prints a float NaN as "nan")."""
    return table.astype(object).where(table.notna(), None)


def _md(table: pd.DataFrame, **kwargs: Any) -> str:
    """``table`` as markdown with its text cells and index escaped: a ``|`` in a
    scenario's label (a campaign file names it) began a cell and shifted every column
    after it, and HTML in one reached the page a renderer makes (a hostile-input review,
    2026-12-07)."""

    def cell(value: object) -> object:
        if not isinstance(value, str):
            return value
        return html.escape(value, quote=False).replace("|", "\\|")

    out = table.map(cell)
    out.index = out.index.map(cell)
    return str(out.to_markdown(**kwargs))


def markdown_summary(store_path: str | Path, campaign: str) -> str:
    """The campaign's tables as markdown (for docs): per policy, STS's cuts, sharing,
    gaps to the clairvoyant bound."""
    with Store(store_path, readonly=True) as store:
        runs = store.runs(campaign)
    failed = int((runs["status"] != "ok").sum())
    runs = runs[runs["status"] == "ok"]
    cols = ["runs", "total", "total_ci95", "energy", "tardiness", "missed", "relaunches"]
    cols += ["utilisation", "peak_jobs", "decision_ms"]
    # the HTML names the failed runs; the markdown said "0 runs" where every run failed
    also = f", {failed} failed (the HTML report lists them)" if failed else ""
    parts = [
        f"Campaign `{campaign}`: {len(runs)} runs{also}.",
        "",
        _md(
            _undefined_as_na(policy_table(runs)[cols].reset_index()),
            index=False,
            floatfmt=".4g",
            missingval="n/a",
        ),
    ]
    rel = relative_table(runs)
    if not rel.empty:
        parts += ["", _md(rel, index=False, floatfmt=".1f")]
    jct = jct_table(runs)
    if not jct.empty:
        parts += ["", _md(jct, index=False, floatfmt=".4g")]
    share = sharing_table(runs)
    if not share.empty:
        parts += ["", _md(share, index=False, floatfmt=".4g")]
    gaps = bound_gaps(runs)
    if not gaps.empty:
        g = gaps.groupby("policy", sort=False)["gap"]
        table = pd.DataFrame(
            {
                "runs": g.count(),
                "mean_gap_%": 100 * g.mean(),
                "median_gap_%": 100 * g.median(),
                "max_gap_%": 100 * g.max(),
                "at_bound": g.apply(lambda x: int((x <= 1e-6).sum())),
            }
        )
        parts += ["", _md(table, floatfmt=".3g")]
    return "\n".join(parts)


# -- the page -------------------------------------------------------------------------
_CSS = """
body { font-family: sans-serif; margin: 2em; max-width: 1100px; color: #222; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; }
th { background: #f2f2f2; }
img { max-width: 100%; display: block; margin: 0.5em 0; }
.caption { font-size: 12px; color: #555; }
"""


def _fmt(df: pd.DataFrame, index: bool = True) -> str:
    # an undefined value (one seed's interval) reads as the markdown's n/a, not a blank
    return df.to_html(index=index, float_format=lambda v: f"{v:.4g}", na_rep="n/a", border=0)


def _figure(src: str, alt: str, caption: str = "") -> str:
    cap = f'<p class="caption">{html.escape(caption)}</p>' if caption else ""
    return f'<img src="{src}" alt="{html.escape(alt)}">{cap}'


def campaign_section(store: Store, campaign: str) -> str:
    """The HTML section of one campaign: what ran, costs by policy and scenario, STS
    against the others, sharing, completion times, the cost breakdown, the online runs'
    missed due dates, utilisation and one Gantt chart, the gaps to the clairvoyant
    bound, and the failed runs."""
    all_runs = store.runs(campaign)
    runs = all_runs[all_runs["status"] == "ok"]
    errors = all_runs[all_runs["status"] != "ok"]
    parts = _heading(store, campaign, runs, errors)
    if runs.empty:
        return "\n".join(parts)
    table = policy_table(runs)
    parts += _cost_tables(runs, table)
    online = runs[runs["policy"] != REFERENCE]
    parts += _sweep_section(online)
    if not online.empty:
        parts += _online_figures(store, campaign, online)
    parts += _bound_section(runs)
    if not errors.empty:
        parts.append("<h3>Failed runs</h3>")
        parts.append(_fmt(errors[["key", "error"]], index=False))
    return "\n".join(parts)


def _heading(store: Store, campaign: str, runs: pd.DataFrame, errors: pd.DataFrame) -> list[str]:
    """The campaign's name, description, and what ran."""
    parts = [f"<h2>Campaign {html.escape(campaign)}</h2>"]
    info = store.campaigns().set_index("name")
    if campaign in info.index and info.at[campaign, "description"]:
        parts.append(f"<p>{html.escape(str(info.at[campaign, 'description']))}</p>")
    parts.append(
        f"<p>{len(runs)} runs finished, {len(errors)} failed; "
        f"{runs['scenario'].nunique()} scenarios, policies: "
        f"{html.escape(', '.join(map(str, runs['policy'].unique())))}.</p>"
    )
    return parts


def _cost_tables(runs: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """Costs by policy and scenario, STS against the others, sharing against not,
    completion times, and the energy/tardiness breakdown (each where it has data)."""
    parts = ["<h3>Cost by policy and scenario (mean, 95% CI over seeds)</h3>"]
    parts.append(
        _figure(
            grouped_bars(table, "total", "total_ci95", "total cost", "Total cost"),
            "total cost by policy and scenario",
        )
    )
    parts.append(_fmt(table))
    for heading, extra in (
        ("STS against the other policies (lower cost = positive cut)", relative_table(runs)),
        ("GPU sharing allowed vs forbidden (positive: sharing is cheaper)", sharing_table(runs)),
        ("Job completion time and makespan, against static requested sizes", jct_table(runs)),
    ):
        if not extra.empty:
            parts.append(f"<h3>{heading}</h3>")
            parts.append(_fmt(extra, index=False))
    parts.append("<h3>Energy vs tardiness</h3>")
    parts.append(_figure(cost_breakdown(table), "cost breakdown"))
    return parts


def _sweep_section(online: pd.DataFrame) -> list[str]:
    """Cost, energy and missed due dates against the offered load, where scenarios
    differ only in it, and how often each policy was within 2% of a run's best."""
    sweep = sweep_table(online)
    if sweep.empty:
        return []
    parts = ["<h3>Against the offered load (mean, band: 95% CI over seeds)</h3>"]
    for family in dict.fromkeys(sweep["family"]):
        parts.append(_figure(sweep_chart(sweep, family), f"{family} against offered load"))
    shares = pd.DataFrame(
        {"policy": p, "runs within 2% of the run's best (%)": 100 * best_share(online, p)}
        for p in online["policy"].unique()
    )
    parts.append(_fmt(shares, index=False))
    return parts


def _online_figures(store: Store, campaign: str, online: pd.DataFrame) -> list[str]:
    """The online runs' missed due dates, GPU utilisation over time and one Gantt chart."""
    otable = policy_table(online)
    parts = ["<h3>Missed due dates</h3>"]
    missed = grouped_bars(
        otable, "missed", None, "due dates missed per run", "Missed due dates (mean per run)"
    )
    parts.append(_figure(missed, "missed due dates"))
    src, caption = utilisation_chart(store, campaign, online)
    parts.append("<h3>GPU utilisation over time</h3>")
    parts.append(_figure(src, "utilisation over time", caption))
    src, caption = gantt_chart(store, campaign, online)
    parts.append("<h3>One run</h3>")
    parts.append(_figure(src, "Gantt chart", caption))
    return parts


def _bound_section(runs: pd.DataFrame) -> list[str]:
    """The gaps to the clairvoyant bound, where the campaign ran it."""
    gaps = bound_gaps(runs)
    if gaps.empty:
        return []
    summary = gaps.groupby("policy", sort=False)["gap"].describe(percentiles=[0.5])
    return [
        "<h3>Gap to the clairvoyant bound (MILP with every stop known)</h3>",
        _figure(gap_chart(gaps), "gap distribution"),
        _fmt((100 * summary.drop(columns="count")).join(summary["count"])),
    ]


def write_report(store_path: str | Path, out: str | Path, campaign: str | None = None) -> Path:
    """Write the HTML report of ``campaign`` (default: every campaign in the store)."""
    with Store(store_path, readonly=True) as store:
        names = store.campaign_names(campaign)
        sections = [campaign_section(store, n) for n in names]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>gpusched report: {html.escape(", ".join(names))}</title>
<style>{_CSS}</style><script>{DECODE_SCRIPT}</script></head>
<body>
<h1>gpusched campaign report</h1>
<p class="caption">Store {html.escape(str(store_path))}, written {stamp}. Costs are realised
costs of online runs (sampled stops), computed by the one evaluator; the clairvoyant bound
is the exact MILP with each run's stops known.</p>
{"".join(sections)}
</body></html>
"""
    return write_atomic(out, page)
