"""The generator options that lay idle power and power-off over an instance
(instances/generators/power.py): the spec fields, the command line, campaign files, and
summaries that show boots only where the nodes' own power is charged."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.campaign import CampaignError, parse_campaign
from experiments.cli import main
from heuristic.core.registry import make_policy
from instances import InstanceError, read_instance
from instances.bundled import bundled
from instances.generators import SyntheticSpec, synthetic
from instances.generators.power import lay_idle, lay_power_off, parse_idle, parse_power_off
from instances.power import PowerOff
from validation.evaluate import evaluate
from validation.online import run_online
from validation.simulator import rollout


def test_levels_and_numbers_lay_idle_power_per_gpu_and_slot():
    inst = bundled("small")
    low = lay_idle(inst, "low")
    assert [g.idle_w for g in low.gpu_types] == [0.15 * g.power_w for g in inst.gpu_types]
    assert [n.base_w for n in low.nodes] == [50.0 * n.num_gpus for n in inst.nodes]
    assert lay_idle(inst, "0.15,50") == low
    high = lay_idle(inst, "high")
    assert [n.base_w for n in high.nodes] == [100.0 * n.num_gpus for n in inst.nodes]
    assert lay_idle(inst, "none") is inst and lay_idle(inst, "0,0") is inst
    assert low.jobs == inst.jobs and low.power_off is None


def test_power_off_defaults_the_boot_to_nothing():
    assert parse_power_off("0.5") == PowerOff(0.5)
    assert parse_power_off("0.5,0.1") == PowerOff(0.5, 0.1)
    assert parse_power_off("0.5,0.1,0.2") == PowerOff(0.5, 0.1, 0.2)
    assert parse_power_off("none") is None
    inst = bundled("small")
    assert lay_power_off(inst, "none") is inst
    assert lay_power_off(inst, "1,0,0.3").power_off == PowerOff(1.0, 0.0, 0.3)


@pytest.mark.parametrize(
    ("parse", "text", "words"),
    [
        (parse_idle, "medium", "is not a number"),
        (parse_idle, "0.15", "IDLE_FRACTION,BASE_W_PER_GPU"),
        (parse_idle, "0.1,2,3", "IDLE_FRACTION,BASE_W_PER_GPU"),
        (parse_idle, "1.5,50", "fraction <= 1"),
        (parse_idle, "0.1,-5", "-5 must be a finite number >= 0"),
        (parse_idle, "inf,5", "inf must be a finite number"),
        (parse_idle, "0.1,5000", "W per GPU slot"),
        (parse_power_off, "", "is not a number"),
        (parse_power_off, "nan", "nan must be a finite number"),
        (parse_power_off, "1,2,3,4", "AFTER_H[,BOOT_H[,BOOT_KWH]]"),
        (parse_power_off, "0.5,2000", "boot_h: must be at most 1000"),
        (parse_power_off, "0.5,0,1e9", "boot_kwh: must be at most"),
    ],
)
def test_bad_values_are_refused_naming_the_option_and_the_value(parse, text, words):
    with pytest.raises(InstanceError) as err:
        parse(text)
    field = "idle" if parse is parse_idle else "power_off"
    assert err.value.path == field and err.value.value == text
    assert words in str(err.value)


def test_the_spec_lays_both_and_is_the_same_instance_laid_after():
    plain = synthetic(SyntheticSpec(nodes=3, jobs=6), seed=2)
    spec = SyntheticSpec(nodes=3, jobs=6, idle="low", power_off="0.5,0.1,0.2")
    assert synthetic(spec, seed=2) == lay_power_off(lay_idle(plain, "low"), "0.5,0.1,0.2")
    # absent, or none: the instance as it was
    assert synthetic(SyntheticSpec(nodes=3, jobs=6, idle="none", power_off="none"), 2) == plain
    with pytest.raises(InstanceError) as err:
        SyntheticSpec(power_off="soon")
    assert err.value.path == "power_off"


def test_generate_lays_them_and_refuses_bad_ones_naming_the_flag(tmp_path, capsys):
    out = tmp_path / "p.json"
    args = ["generate", "synthetic", "--nodes", "3", "--jobs", "6", "--seed", "2"]
    assert main([*args, "--idle", "low", "--power-off", "0.5,0.1,0.2", "--out", str(out)]) == 0
    inst = read_instance(out)
    spec = SyntheticSpec(nodes=3, jobs=6, idle="low", power_off="0.5,0.1,0.2")
    assert inst == synthetic(spec, seed=2, name=inst.name)
    capsys.readouterr()
    bad = tmp_path / "x.json"
    assert main([*args, "--idle", "2,50", "--out", str(bad)]) == 2
    assert "--idle: idle = '2,50': an idle GPU draws at most" in capsys.readouterr().err
    assert main([*args, "--power-off", "-1", "--out", str(bad)]) == 2
    assert "--power-off: power_off = '-1': -1 must be" in capsys.readouterr().err
    # a list that starts with a minus sign is a value, refused naming it (argparse took
    # it for an option and said only "expected one argument")
    for flag, value in (("--power-off", "-0.5,0.1"), ("--idle", "-.1,50")):
        assert main([*args, flag, value, "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert f"{flag}: {flag[2:].replace('-', '_')} = '{value}'" in err, err
    assert not bad.exists()
    suite = tmp_path / "suite"
    laying = ["--idle", "high", "--power-off", "1"]
    assert main(["generate", "suite", *laying, "--out", str(suite)]) == 0
    laid = [read_instance(f) for f in suite.glob("*.json")]
    assert laid and all(i.idle_power and i.power_off == PowerOff(1.0) for i in laid)
    assert main(["generate", "suite", "--idle", "x", "--out", str(tmp_path / "s2")]) == 2
    assert "--idle: idle = 'x'" in capsys.readouterr().err


_CAMPAIGN = """
name = "t"
policies = ["sts"]
seeds = [0]
[[scenarios]]
generator = "synthetic"
nodes = 3
jobs = 4
idle = "low"
grid = {{ power_off = ["none", {value}] }}
"""


def test_campaign_files_set_them_and_bad_ones_are_refused_before_any_run():
    c = parse_campaign(_CAMPAIGN.format(value='"0.5,0.1,0.2"'), base=Path("."), default_name="t")
    labels = [s.label for s in c.scenarios]
    assert labels == ["synthetic[power_off=none]", "synthetic[power_off=0.5,0.1,0.2]"]
    with pytest.raises(CampaignError, match="power_off = 'x'"):
        parse_campaign(_CAMPAIGN.format(value='"x"'), base=Path("."), default_name="t")
    with pytest.raises(CampaignError, match="must be a string"):
        parse_campaign(_CAMPAIGN.format(value="0.5"), base=Path("."), default_name="t")


def test_summaries_show_boots_only_where_node_power_is_charged():
    inst = bundled("small")
    plan = rollout(inst, make_policy("sts"))
    plain = evaluate(inst, plan).summary()
    assert "boots" not in plain
    # power-off that charges nothing (no idle power, no boot energy): the same keys
    assert evaluate(lay_power_off(inst, "0.5,0.1"), plan).summary() == plain
    always = evaluate(lay_idle(inst, "low"), plan)
    assert always.summary()["boots"] == 0.0 and always.idle.boots == 0.0
    keys = list(plain)
    keys.insert(keys.index("idle_kwh") + 1, "boots")
    assert list(always.summary()) == keys
    powered = lay_power_off(lay_idle(inst, "low"), "0.1,0.1,0.2")
    ev = evaluate(powered, plan)
    assert ev.summary()["boots"] == ev.idle.boots > 0
    run = run_online(powered, "sts", seed=0)
    assert run.summary()["boots"] == run.evaluation.idle.boots > 0
    assert "boots" not in run_online(inst, "sts", seed=0).summary()
