"""Campaign reports: one self-contained HTML page (plots inlined as PNG data URIs).

Every figure is read from the results store, where the one evaluator put it; this
module only aggregates (means, confidence intervals, ratios) and draws.
"""

from __future__ import annotations

import base64
import html
import json
import math
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.gantt import DECODE_SCRIPT, gantt_figure, literal, png
from experiments.store import Store
from instances.io import write_atomic
from validation.online import busy_gpus

# two-sided 95% Student t quantiles by degrees of freedom (1..30); 1.96 beyond
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
REFERENCE = "clairvoyant"


def t95(n: int) -> float:
    """The 95% t quantile for a mean of ``n`` values (n >= 2)."""
    return _T95[n - 2] if n - 1 <= len(_T95) else 1.96


def ci95(values: pd.Series) -> float:
    """Half-width of the 95% confidence interval of the mean (0 for one value)."""
    n = int(values.count())
    return t95(n) * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0


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


def markdown_summary(store_path: str | Path, campaign: str) -> str:
    """The campaign's tables as markdown (for docs): per policy, STS's cuts, sharing,
    gaps to the clairvoyant bound."""
    with Store(store_path, readonly=True) as store:
        runs = store.runs(campaign)
    runs = runs[runs["status"] == "ok"]
    cols = ["runs", "total", "total_ci95", "energy", "tardiness", "missed", "relaunches"]
    cols += ["utilisation", "peak_jobs", "decision_ms"]
    parts = [
        f"Campaign `{campaign}`: {len(runs)} runs.",
        "",
        policy_table(runs)[cols].reset_index().to_markdown(index=False, floatfmt=".4g"),
    ]
    rel = relative_table(runs)
    if not rel.empty:
        parts += ["", rel.to_markdown(index=False, floatfmt=".1f")]
    jct = jct_table(runs)
    if not jct.empty:
        parts += ["", jct.to_markdown(index=False, floatfmt=".4g")]
    share = sharing_table(runs)
    if not share.empty:
        parts += ["", share.to_markdown(index=False, floatfmt=".4g")]
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
        parts += ["", table.to_markdown(floatfmt=".3g")]
    return "\n".join(parts)


# -- plots ----------------------------------------------------------------------------
def _png(fig: Figure) -> str:
    return "data:image/png;base64," + base64.b64encode(png(fig)).decode()


def _grouped(table: pd.DataFrame, column: str, err: str | None, ylabel: str, title: str) -> str:
    scenarios = list(dict.fromkeys(table.index.get_level_values(0)))
    policies = list(dict.fromkeys(table.index.get_level_values(1)))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(scenarios) * len(policies) / 3), 4))
    width = 0.8 / len(policies)
    x = np.arange(len(scenarios))
    for k, pol in enumerate(policies):
        vals = [table[column].get((s, pol), np.nan) for s in scenarios]
        errs = [table[err].get((s, pol), 0.0) for s in scenarios] if err else None
        ax.bar(x + k * width, vals, width, yerr=errs, capsize=2, label=literal(str(pol)))
    labels = [literal(str(s)) for s in scenarios]
    ax.set_xticks(x + 0.4 - width / 2, labels, rotation=20, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)


def _breakdown(table: pd.DataFrame) -> str:
    labels = [literal(f"{s} / {p}") for s, p in table.index]
    fig, ax = plt.subplots(figsize=(8, 0.25 * len(labels) + 1.5))
    y = np.arange(len(labels))
    ax.barh(y, table["energy"], label="energy")
    ax.barh(y, table["tardiness"], left=table["energy"], label="tardiness")
    ax.set_yticks(y, labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("mean cost per run")
    ax.set_title("Cost breakdown: expected energy vs tardiness", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)


def _utilisation(store: Store, campaign: str, runs: pd.DataFrame) -> tuple[str, str]:
    first = runs[runs["policy"] != REFERENCE].iloc[0]
    same = runs[
        (runs["scenario"] == first["scenario"])
        & (runs["seed"] == first["seed"])
        & (runs["policy"] != REFERENCE)
    ]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for _, r in same.iterrows():
        inst, plan = store.plan_of(campaign, r["key"])
        steps = busy_gpus(plan)
        gpus = sum(n.num_gpus for n in inst.nodes)
        ax.step(
            steps["time"], steps["busy"] / gpus, where="post", label=literal(str(r["policy"])), lw=1
        )
    ax.set_xlabel("hours")
    ax.set_ylabel("busy GPUs / all GPUs")
    caption = f"{first['scenario']}, seed {first['seed']}"
    ax.set_title(literal(f"GPU utilisation over time ({caption})"), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _png(fig), caption


def _gantt(store: Store, campaign: str, runs: pd.DataFrame) -> tuple[str, str]:
    online = runs[runs["policy"] != REFERENCE]
    pick = online[online["policy"] == "sts"]
    r = (pick if not pick.empty else online).iloc[0]
    inst, plan = store.plan_of(campaign, r["key"])
    caption = f"{r['policy']} on {r['scenario']}, seed {r['seed']}"
    return _png(gantt_figure(inst, plan, title=f"Gantt: {caption}")), caption


def _gap_plot(gaps: pd.DataFrame) -> str:
    policies = list(dict.fromkeys(gaps["policy"]))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.boxplot([100 * gaps[gaps["policy"] == p]["gap"] for p in policies], showmeans=True)
    ax.set_xticks(range(1, len(policies) + 1), [literal(str(p)) for p in policies])
    ax.set_ylabel("cost above the clairvoyant bound (%)")
    ax.set_title("Gap to the clairvoyant bound, per scenario and seed", fontsize=9)
    fig.tight_layout()
    return _png(fig)


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
    return df.to_html(index=index, float_format=lambda v: f"{v:.4g}", na_rep="", border=0)


def _figure(src: str, alt: str, caption: str = "") -> str:
    cap = f'<p class="caption">{html.escape(caption)}</p>' if caption else ""
    return f'<img src="{src}" alt="{html.escape(alt)}">{cap}'


def campaign_section(store: Store, campaign: str) -> str:
    all_runs = store.runs(campaign)
    runs = all_runs[all_runs["status"] == "ok"]
    errors = all_runs[all_runs["status"] != "ok"]
    parts = [f"<h2>Campaign {html.escape(campaign)}</h2>"]
    info = store.campaigns().set_index("name")
    if campaign in info.index and info.at[campaign, "description"]:
        parts.append(f"<p>{html.escape(str(info.at[campaign, 'description']))}</p>")
    parts.append(
        f"<p>{len(runs)} runs finished, {len(errors)} failed; "
        f"{runs['scenario'].nunique()} scenarios, policies: "
        f"{html.escape(', '.join(map(str, runs['policy'].unique())))}.</p>"
    )
    if runs.empty:
        return "\n".join(parts)
    online = runs[runs["policy"] != REFERENCE]
    table = policy_table(runs)
    parts.append("<h3>Cost by policy and scenario (mean, 95% CI over seeds)</h3>")
    parts.append(
        _figure(
            _grouped(table, "total", "total_ci95", "total cost", "Total cost"),
            "total cost by policy and scenario",
        )
    )
    parts.append(_fmt(table))
    rel = relative_table(runs)
    if not rel.empty:
        parts.append("<h3>STS against the other policies (lower cost = positive cut)</h3>")
        parts.append(_fmt(rel, index=False))
    share = sharing_table(runs)
    if not share.empty:
        parts.append("<h3>GPU sharing allowed vs forbidden (positive: sharing is cheaper)</h3>")
        parts.append(_fmt(share, index=False))
    jct = jct_table(runs)
    if not jct.empty:
        parts.append("<h3>Job completion time and makespan, against static requested sizes</h3>")
        parts.append(_fmt(jct, index=False))
    parts.append("<h3>Energy vs tardiness</h3>")
    parts.append(_figure(_breakdown(table), "cost breakdown"))
    if not online.empty:
        otable = policy_table(online)
        parts.append("<h3>Missed due dates</h3>")
        parts.append(
            _figure(
                _grouped(
                    otable,
                    "missed",
                    None,
                    "due dates missed per run",
                    "Missed due dates (mean per run)",
                ),
                "missed due dates",
            )
        )
        src, caption = _utilisation(store, campaign, runs)
        parts.append("<h3>GPU utilisation over time</h3>")
        parts.append(_figure(src, "utilisation over time", caption))
        src, caption = _gantt(store, campaign, runs)
        parts.append("<h3>One run</h3>")
        parts.append(_figure(src, "Gantt chart", caption))
    gaps = bound_gaps(runs)
    if not gaps.empty:
        parts.append("<h3>Gap to the clairvoyant bound (MILP with every stop known)</h3>")
        parts.append(_figure(_gap_plot(gaps), "gap distribution"))
        summary = gaps.groupby("policy", sort=False)["gap"].describe(percentiles=[0.5])
        parts.append(_fmt((100 * summary.drop(columns="count")).join(summary["count"])))
    if not errors.empty:
        parts.append("<h3>Failed runs</h3>")
        parts.append(_fmt(errors[["key", "error"]], index=False))
    return "\n".join(parts)


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
