"""Tiny fixtures shared by the tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from instances import Instance, read_instance
from instances.bundled import bundled

DATA = Path(__file__).parent / "data"

# derandomize: the same examples in every run, so that CI does not fail by chance (a
# Monte Carlo 99% interval misses the exact figure in one example of a hundred; a fresh
# draw per run made test_exact_cost_inside_monte_carlo_99_interval fail once)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")

# The slowest tests (measured with --durations on a 2-core machine), started first: with
# pytest-xdist's workers, a long test collected late (validation/ and tests/milp/ come
# last alphabetically) leaves one worker alone at the end of the run. Only the order
# changes; every test runs. A test id matches its own name and its parameters.
SLOW_FIRST = (
    "tests/milp/decomposition/test_cliques.py::test_share_2n6j_s2_without_overheads",
    "tests/instances/test_topology.py::test_a_topology_no_configuration_uses_changes_no_figure[medium]",
    "tests/heuristic/sts/test_switching.py::test_relaunch_profile_gap_to_the_optimum_on_500",
    "tests/validation/test_prices.py::test_an_explicit_flat_series_changes_no_figure[medium]",
    "tests/validation/test_online_pinned.py::test_sts_online_figures_are_unchanged",
    "tests/milp/decomposition/test_cliques.py::test_branch_and_price_reaches_the_optimum_with",
    "tests/milp/decomposition/test_bound.py::test_branch_and_price_equals_the_compact_milp",
    "tests/milp/decomposition/test_prices.py::test_branch_and_price_reaches_the_brute_force",
    "tests/milp/decomposition/test_prices.py::test_branch_and_price_equals_the_compact_milp_under",
    "tests/milp/test_milp.py::test_milp_with_relaunch_overhead_equals_brute_force",
    "tests/milp/test_improve.py::test_improve_never_worsens_the_start",
    "tests/experiments/test_campaign.py::test_the_philly_week_campaign_runs_a_window_on_a_dask",
    "tests/heuristic/sts/test_incremental.py::test_it_costs_about_what_sts_does",
    "tests/milp/test_milp.py::test_highs_accepts_the_warm_start_and_logs_its_objective",
    "tests/milp/decomposition/test_pricing.py::test_the_exact_pricer_finds_the_cheapest",
    "tests/milp/decomposition/test_bound_hypothesis.py::test_the_bound_is_never_above",
    "tests/experiments/test_gap.py::test_where_the_milp_is_not_proved",
    "tests/experiments/test_gap.py::test_on_a_priced_instance_branch_and_price_agrees",
    "tests/heuristic/sts/test_search.py::test_search_waits_for_the_efficient_type",
    "tests/milp/decomposition/test_search.py::test_branch_and_price_reaches_the_brute_force",
    "tests/milp/test_milp.py::test_the_warm_starts_cutoff_removes_late_slots",
    "tests/milp/test_improve.py::test_merged_plans_pass_the_checker",
    "tests/validation/test_power_off.py::test_exact_cost_inside_monte_carlo_99_interval",
    "tests/milp/test_prices.py::test_milp_with_prices_and_relaunch_overhead_equals_brute_force",
    "tests/experiments/test_campaign.py::test_a_killed_campaign_resumes_and_loses_no_run",
    "tests/experiments/test_gap.py::test_branch_and_price_joins_the_report",
    "tests/experiments/test_campaign.py::test_dask_cluster_gives_the_same_results",
    "tests/experiments/test_campaign.py::test_bundled_campaigns_load",
    "tests/instances/test_host_resources.py::test_ample_cores_and_dram_change_no_figure[medium]",
    "tests/validation/test_online_pinned.py::test_incremental_sts_figures_are_pinned",
)


def _slow_rank(item: pytest.Item) -> int:
    for rank, prefix in enumerate(SLOW_FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest tests first (in the order above), the others in collection order."""
    items.sort(key=_slow_rank)  # stable: the same order in every xdist worker


@pytest.fixture
def base() -> Instance:
    """Two nodes (k80x2, v100x4), two jobs: see tests/data/base.json."""
    return read_instance(DATA / "base.json")


@pytest.fixture
def tiny() -> Instance:
    return bundled("tiny")


@pytest.fixture
def small() -> Instance:
    return bundled("small")
