"""The registry and the one options convention: every policy is made by name with its
options checked by name, type and range."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import pytest

from heuristic.core.options import OptionError, as_dict, build_options, option_names
from heuristic.core.registry import make_policy, policy_class, policy_names, policy_options


@pytest.mark.parametrize("name", policy_names(small_only=True))
def test_every_policy_is_made_by_name_with_its_options_dataclass(name):
    policy = make_policy(name)
    assert policy.name == name
    cls = policy_class(name)
    assert isinstance(policy, cls)
    options = policy.options  # type: ignore[attr-defined]
    assert type(options) is cls.Options
    assert dataclasses.is_dataclass(options)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(options, "x", 1)  # noqa: B010 (frozen: options never change under a run)
    # every field's type is one the checker reads, and the values round-trip
    assert build_options(cls.Options, as_dict(options), where=name) == options


def test_options_are_passed_by_keyword_over_the_preset():
    sts = make_policy("sts", reserve=0.3)
    assert sts.options.reserve == 0.3 and sts.options.lookahead  # type: ignore[attr-defined]
    greedy = make_policy("sts-greedy", reserve=0.3)
    assert not greedy.options.lookahead  # type: ignore[attr-defined]
    assert make_policy("edf-fastest").options.rule == "fastest"  # type: ignore[attr-defined]
    first_fit = policy_options("first-fit")
    assert first_fit.placement == "first-fit" and math.isinf(first_fit.share_ratio)
    assert policy_options("synergy-opt", round_hours=0.5).allocation == "opt"


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("sts", {"resrve": 0.3}, "policy 'sts': unknown option 'resrve' .*reserve"),
        ("fifo", {"rule": "slowest"}, "rule = 'slowest': must be one of 'cheapest', 'fastest'"),
        ("sts", {"reserve": "0.3"}, "reserve = '0.3': must be a number"),
        ("sts", {"reserve": math.nan}, "reserve = nan: must be a number, not NaN"),
        ("sts", {"reserve": 1.0}, r"reserve = 1.0: must be in \[0, 1\)"),
        ("sts", {"lookahead": 1}, "lookahead = 1: must be true or false"),
        ("rg", {"starts": 2.5}, "starts = 2.5: must be an integer"),
        ("rg", {"starts": True}, "starts = True: must be an integer"),
        ("gandiva", {"quantum_hours": math.nan}, "quantum_hours = nan: must be a number"),
        (
            "gandiva",
            {"quantum_hours": 0},
            r"quantum_hours = 0.0: must be a number of hours in \[0.001",
        ),
        # a period shorter than the shortest slot: 5e-324 overflowed synergy's count of
        # rounds, 1e-6 ran past 90 s on three jobs
        ("synergy", {"round_hours": 5e-324}, "round_hours = 5e-324: must be a number of hours"),
        ("optimus", {"interval_hours": 1e-6}, "interval_hours = 1e-06: must be a number"),
        # an integer beyond any double (an OverflowError from float())
        ("sts", {"reserve": 10**400}, "reserve = an integer of about 401 digits: too large"),
        ("sts", {"reserve": 10**5000}, "reserve = an integer of about 5,001 digits"),
        # durations past the model's span of time (1e5 h): 1e308 overflowed the ledger's
        # count of bins, 1e7 gave synergy a plan the checker refused
        ("sts", {"lead_hours": 1e308}, r"lead_hours = 1e\+308: must be a number of hours"),
        ("sts-full", {"lead_hours": 2e5}, r"lead_hours = 200000.0: .* \[0, 100000\]"),
        ("sts", {"calm_hours": 1e6}, r"calm_hours = 1000000.0: .* \[0, 100000\]"),
        ("synergy", {"round_hours": 1e7}, r"round_hours = 10000000.0: .* \[0.001, 100000\]"),
        ("optimus", {"interval_hours": 1e300}, r"interval_hours = 1e\+300: .* \[0.001, 100000\]"),
        ("synergy", {"allocation": "fair"}, "allocation = 'fair': must be one of"),
        # a log-normal sigma whose exp() overflowed (a RuntimeWarning, infinite times)
        ("liquid", {"noise": 1e308}, r"noise = 1e\+308: must be at most 3"),
        ("milp", {"time_limit": 5}, "unknown option 'time_limit'.*time_limit_seconds"),
        ("lp", {"reserve": 0.3}, r"policy 'lp': unknown option 'reserve' \(options: none\)"),
    ],
)
def test_a_bad_option_is_refused_naming_the_policy_and_the_option(name, options, message):
    with pytest.raises(OptionError, match=message):
        make_policy(name, **options)


@pytest.mark.parametrize("name", [*sorted(set(policy_names()) - {"milp"}), "milp"])
def test_options_built_directly_are_checked_as_by_name(name):
    """docs/policies.md gives ``make_policy(name, **options)`` and the class built from its
    ``Options`` as one policy, but options built directly were checked for range only:
    ``StsOptions(lookahead="false")`` ran with the look-ahead on, a misspelt order as the
    default one (a hunt of the library's arguments). Every field of every policy's
    options, given a value of the wrong kind, is refused naming the class and the field;
    an int is taken for a float, an enum's value for the enum, as by name."""
    cls = policy_class(name).Options
    for f in dataclasses.fields(cls):
        with pytest.raises(OptionError, match=f"{cls.__name__}: {f.name} = "):
            cls(**{f.name: ["not", "an", "option"]})
    taken = cls(**policy_options(name).__dict__)
    assert taken == policy_options(name)


def test_misspelt_and_textual_options_built_directly_are_refused():
    from heuristic.sts.options import StsOptions

    with pytest.raises(OptionError, match="StsOptions: lookahead = 'false': must be true"):
        StsOptions(lookahead="false")
    with pytest.raises(OptionError, match="StsOptions: urgency = 'slak': must be one of"):
        StsOptions(urgency="slak")  # type: ignore[arg-type]
    assert isinstance(StsOptions(reserve=0).reserve, float)


def test_a_range_error_names_the_class_built_directly_and_the_policy_by_name():
    """A range error of options built directly named the option alone (a type error
    named the class); by name it names the policy, once."""
    from heuristic.seeds.liquid import LiquidOptions
    from heuristic.sts.incremental import IncrementalOptions
    from validation.rollout_choice import RolloutStsOptions

    with pytest.raises(OptionError, match=r"^IncrementalOptions: reserve = 2\.0: must be in"):
        IncrementalOptions(reserve=2)  # StsOptions' range, checked for its subclass
    with pytest.raises(OptionError, match=r"^IncrementalOptions: calm_hours = -1\.0: must be"):
        IncrementalOptions(calm_hours=-1)
    with pytest.raises(OptionError, match=r"^RolloutStsOptions: burst_jobs = -1: must be"):
        RolloutStsOptions(burst_jobs=-1)
    with pytest.raises(OptionError, match=r"^LiquidOptions: noise = 4\.0: must be at most 3"):
        LiquidOptions(noise=4)
    with pytest.raises(OptionError, match=r"^policy 'sts': reserve = 2\.0: must be in \[0, 1\)$"):
        make_policy("sts", reserve=2)
    with pytest.raises(
        OptionError, match=r"^policy 'sts': lookahead = 'x': must be true or false$"
    ):
        make_policy("sts", lookahead="x")


def test_an_unknown_policy_is_refused_listing_the_known_ones():
    with pytest.raises(ValueError, match="unknown policy 'stss'; known: fifo, edf"):
        make_policy("stss")


def test_a_retired_name_says_what_it_became():
    with pytest.raises(ValueError, match=r"policy 'sts-incremental' is now 'sts'.*'sts-full'"):
        make_policy("sts-incremental")
    with pytest.raises(ValueError, match=r"policy 'sts-rollout' is now 'sts'.*rollout_below = 0"):
        make_policy("sts-rollout")


def test_sts_decides_incrementally_and_sts_full_every_job_at_every_event():
    from heuristic.sts.incremental import IncrementalStsPolicy
    from heuristic.sts.policy import StsPolicy
    from validation.rollout_choice import RolloutStsPolicy

    for name in ("sts", "sts-price-blind", "sts-idle-blind"):
        policy = make_policy(name)  # choosing its order by what-if runs, incremental
        assert type(policy) is RolloutStsPolicy and type(policy.sts) is IncrementalStsPolicy
    assert make_policy("sts-price-blind").options.timing is False
    full = make_policy("sts-full")
    assert type(full) is StsPolicy and full.name == "sts-full"


def test_the_milp_policy_is_known_before_milp_is_imported():
    code = (
        "import sys\n"
        "from heuristic import make_policy, policy_names\n"
        "assert 'milp' in policy_names(small_only=True)\n"
        "assert 'milp' not in sys.modules\n"
        "p = make_policy('milp', time_limit_seconds=5)\n"
        "print(type(p).__module__, p.time_limit)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["milp.rolling", "5.0"]


def test_docs_list_every_policy_and_every_option():
    # docs/policies.md is the user's table of names and options: a new policy or option
    # that is not in it fails here
    text = (Path(__file__).resolve().parents[3] / "docs" / "policies.md").read_text()
    for name in policy_names(small_only=True):
        assert f"| `{name}` |" in text, name
        cls = policy_class(name)
        assert f"`{cls.Options.__name__}`" in text, cls.Options.__name__
        for option in option_names(cls.Options):
            assert f"`{option}`" in text, (name, option)


@pytest.mark.parametrize("name", ["rg", "pr"])
def test_a_number_of_starts_that_would_never_finish_is_refused(name):
    """``starts = 1e9`` ran without end (a hostile-input probe, 2026-12-04)."""
    with pytest.raises(OptionError, match="starts = 1000000000: must be 1 to 10,000"):
        make_policy(name, starts=10**9)
    make_policy(name, starts=10_000)


@pytest.mark.parametrize(
    "name", [n for n in policy_names(small_only=True) if n not in ("milp", "liquid-forest")]
)
def test_a_policy_object_run_again_decides_as_a_fresh_one(name):
    """Same instance, same seed, same decisions, whether the policy object is new or
    has run before: optimus and synergy kept the last run's round clock (49.62 and
    95.18 the second time on ``small``, policy seed 5, against 1.63 and 1.20)."""
    from instances.bundled import bundled
    from validation.simulator import simulate

    inst = bundled("small")
    policy = make_policy(name)
    first = simulate(inst, policy, mode="rollout").plan
    assert simulate(inst, policy, mode="rollout").plan == first
    assert simulate(inst, make_policy(name), mode="rollout").plan == first
