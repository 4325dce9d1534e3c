"""The plot of the sensitivity study: STS's energy cut against each baseline per
scenario of a ``thesis-sensitivity`` store, beside the thesis's 38-40% band.

Run: gpusched campaign thesis-sensitivity --store S.sqlite, then
    python -m benchmarks.sensitivity_plot S.sqlite [--out docs/thesis-sensitivity.png]
"""

from __future__ import annotations

import argparse

import numpy as np

from experiments.report import relative_table
from experiments.store import Store

THESIS_BAND = (38.0, 40.0)  # % lower energy cost than RG and EDF, the thesis's claim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("store")
    ap.add_argument("--campaign", default="thesis-sensitivity")
    ap.add_argument("--out", default="docs/thesis-sensitivity.png")
    args = ap.parse_args()
    with Store(args.store, readonly=True) as store:
        runs = store.runs(args.campaign)
    runs = runs[runs["status"] == "ok"]
    rel = relative_table(runs)
    if rel.empty:
        raise SystemExit(f"{args.store}: no STS runs beside a baseline in {args.campaign!r}")
    print(rel.to_markdown(index=False, floatfmt=".1f"))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = list(dict.fromkeys(rel["scenario"]))
    baselines = list(dict.fromkeys(rel["versus"]))
    cut = rel.pivot(index="scenario", columns="versus", values="energy_cut_%")
    y = np.arange(len(scenarios))
    height = 0.8 / len(baselines)
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(scenarios) + 1.2))
    ax.axvspan(*THESIS_BAND, color="tab:red", alpha=0.2, label="thesis: 38-40%")
    for k, base in enumerate(baselines):
        ax.barh(y + k * height, cut.loc[scenarios, base], height, label=f"against {base}")
    ax.set_yticks(y + height * (len(baselines) - 1) / 2, scenarios, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("STS's energy cost cut (%)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
