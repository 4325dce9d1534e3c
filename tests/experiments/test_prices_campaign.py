"""The bundled ``prices`` campaign (docs/prices.md), run small: every policy billed by
the real series, carbon and its price stored with each run."""

from __future__ import annotations

import re

from experiments.campaign import bundled_campaigns, load_campaign
from tests.experiments.shrunk import run_small, shrunk


def _small() -> str:
    text = shrunk("prices", ("sts", "sts-price-blind", "edf"))
    return re.sub(r"prices = \[[^\]]*\]", 'prices = ["au-nsw-2023:840"]', text)


def test_the_prices_campaign_is_bundled_over_both_families_and_three_offsets():
    assert "prices" in bundled_campaigns()
    c = load_campaign("prices")
    assert {"sts", "sts-price-blind", "lp", "edf"} <= set(c.policies)
    assert {s.generator for s in c.scenarios} == {"philly-week", "synthetic"}
    offsets = {dict(s.params)["prices"] for s in c.scenarios}
    assert len(offsets) == 3 and all(o.startswith("au-nsw-2023:") for o in offsets)


def test_a_small_prices_campaign_stores_bill_carbon_and_missed(tmp_path):
    runs = run_small("prices", _small(), tmp_path, 6)
    assert (runs["carbon_kg"] > 0).all() and (runs["carbon_cost"] > 0).all()
    assert (runs["idle_kwh"] == 0).all()
    # carbon at 100 per tonne is priced into the energy bill and the total
    assert (runs["total_cost"] >= runs["energy_cost"] + runs["carbon_cost"] - 1e-9).all()
