"""The bundled real series and the generator option that lays it over an instance
(instances/generators/prices.py, instances/data/README.md)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from experiments.cli import main
from instances import InstanceError, read_instance
from instances.bundled import bundled
from instances.generators import SyntheticSpec, synthetic
from instances.generators.prices import lay_prices, parse_prices, real_series


def test_the_bundled_series_is_four_months_of_hours():
    s = real_series("au-nsw-2023")
    assert s.hours == 2928 == 24 * (30 + 31 + 31 + 30)
    assert s.start == "2023-05-31T14:00Z"  # 2023-06-01 00:00 in Australian Eastern time
    assert np.isfinite(s.price_per_mwh).all() and np.isfinite(s.carbon_g_per_kwh).all()
    assert 150 < s.carbon_g_per_kwh.min() < s.carbon_g_per_kwh.max() < 800
    assert (s.price_per_mwh < 0).sum() == 182  # kept as published; clipped when laid
    # the diurnal shape a scheduler can use: the evening peak dearer than midday
    by_hour = np.clip(s.price_per_mwh, 0, None).reshape(-1, 24).mean(axis=0)
    assert by_hour[17:19].min() > 4 * by_hour[10:14].max()


@pytest.mark.parametrize("offset", [0, 7, 2927])
def test_a_laid_series_is_the_real_shape_at_the_instance_level(offset):
    inst = bundled("small")
    laid = lay_prices(inst, f"au-nsw-2023:{offset}", carbon_price=100.0)
    raw = real_series("au-nsw-2023")
    prices = np.asarray(laid.prices.values)
    assert laid.prices.end == raw.hours and laid.prices.after == "repeat"
    assert prices.mean() == pytest.approx(inst.energy_price, rel=1e-5)
    assert prices.min() == 0.0  # negative hours clipped
    expect = np.roll(np.clip(raw.price_per_mwh, 0, None), -offset)
    assert prices == pytest.approx(expect * inst.energy_price / expect.mean(), abs=1e-7)
    assert laid.carbon is not None and laid.carbon.price == 100.0
    assert laid.carbon.intensity.values[0] == raw.carbon_g_per_kwh[offset]
    # the whole series is the period: its first hour follows its last, and the hours
    # before the offset come after the rest
    assert laid.prices.at(raw.hours + 0.5) == laid.prices.at(0.5)
    assert laid.prices.at(raw.hours - offset + 0.5) == pytest.approx(prices[-offset % raw.hours])
    assert laid.jobs == inst.jobs and laid.nodes == inst.nodes


def test_the_generator_option_is_the_same_series_laid_after():
    spec = SyntheticSpec(nodes=3, jobs=6, slot=0.25)
    plain = synthetic(spec, seed=2)
    priced = synthetic(SyntheticSpec(nodes=3, jobs=6, slot=0.25, prices="au-nsw-2023:24"), seed=2)
    assert priced == lay_prices(plain, "au-nsw-2023:24")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("nsw", "unknown series"),
        ("au-nsw-2023:x", "whole hours"),
        ("au-nsw-2023:", "whole hours"),  # an offset left out after the colon
        ("au-nsw-2023:-1", "[0, 2928)"),
    ],
)
def test_bad_series_names_are_refused(text, words):
    with pytest.raises(InstanceError) as err:
        parse_prices(text)
    assert err.value.path == "prices" and words in str(err.value)


def test_a_level_whose_dearest_hour_passes_the_bound_is_refused_naming_prices():
    """Scaled to a mean of 2e5, the series' dearest hour costs 7.6e6 (above the 1e6
    bound): refused naming ``prices`` and both figures (it was refused as
    ``values[281] = np.float64(...)``, a field no file or option holds)."""
    spec = SyntheticSpec(nodes=2, jobs=3, energy_price=2e5, prices="au-nsw-2023")
    with pytest.raises(InstanceError) as err:
        synthetic(spec, seed=0)
    assert err.value.path == "prices" and err.value.value == "au-nsw-2023"
    assert "energy price 200000" in str(err.value) and "above 1e+06" in str(err.value)
    # a level at the bound's edge is laid
    assert synthetic(dataclasses.replace(spec, energy_price=2e4), seed=0).prices is not None


def test_a_carbon_price_needs_a_series():
    with pytest.raises(InstanceError) as err:
        SyntheticSpec(carbon_price=10.0)
    assert err.value.path == "carbon_price"


def test_generate_with_prices_writes_the_series(tmp_path, capsys):
    out = tmp_path / "p.json"
    args = ["generate", "synthetic", "--nodes", "3", "--jobs", "6", "--seed", "2"]
    assert (
        main([*args, "--prices", "au-nsw-2023:24", "--carbon-price", "80", "--out", str(out)]) == 0
    )
    inst = read_instance(out)
    spec = SyntheticSpec(nodes=3, jobs=6, prices="au-nsw-2023:24", carbon_price=80.0)
    assert inst == synthetic(spec, seed=2, name=inst.name)
    assert main(["solve", str(out), "--policy", "sts"]) == 0
    assert "carbon" in capsys.readouterr().out
    assert main([*args, "--prices", "nowhere", "--out", str(tmp_path / "x.json")]) == 2
    assert "--prices: prices = 'nowhere': unknown series" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    suite = tmp_path / "suite"
    assert main(["generate", "suite", "--prices", "au-nsw-2023", "--out", str(suite)]) == 0
    assert all(read_instance(f).prices is not None for f in suite.glob("*.json"))
