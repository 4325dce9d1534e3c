"""The bundled ``idle`` campaign (docs/prices.md, 'Idle power'), run small: every policy
charged the nodes' own power on nodes always on, STS with and without its rule for the
job ending last."""

from __future__ import annotations

from experiments.campaign import bundled_campaigns, load_campaign
from tests.experiments.shrunk import run_small, shrunk


def _small() -> str:
    return shrunk("idle", ("sts", "sts-idle-blind"))


def test_the_idle_campaign_is_bundled_over_both_families_and_two_levels():
    assert "idle" in bundled_campaigns()
    c = load_campaign("idle")
    assert {"sts", "sts-idle-blind", "lp", "edf", "optimus", "liquid"} <= set(c.policies)
    assert {s.generator for s in c.scenarios} == {"philly-week", "synthetic"}
    assert {dict(s.params)["idle"] for s in c.scenarios} == {"low", "high"}


def test_a_small_idle_campaign_stores_the_idle_energy(tmp_path):
    runs = run_small("idle", _small(), tmp_path, 8)
    assert (runs["idle_kwh"] > 0).all()
    by = runs.set_index(["scenario", "policy"])
    for scenario in ("contended[load=1.2,idle=low]", "thesis[rate=high,idle=low]"):
        high = scenario.replace("idle=low", "idle=high")
        for policy in ("sts", "sts-idle-blind"):  # twice the power: more idle energy
            assert by.loc[(high, policy), "idle_kwh"] > by.loc[(scenario, policy), "idle_kwh"]
        # on these small runs STS's rule for its last job pays (4.04 against 4.86 and
        # 1.92 against 2.02 at `low`, 2026-11-27)
        for sc in (scenario, high):
            assert by.loc[(sc, "sts"), "total_cost"] < by.loc[(sc, "sts-idle-blind"), "total_cost"]
