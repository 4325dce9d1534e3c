"""The policy registry: a name per policy, one line each. No if/elif chains on names."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from importlib import import_module
from typing import Any

from heuristic.policy import Policy

# name -> "module:factory"; a factory takes the seed as keyword argument ``seed``.
# Adding a policy = adding its module and one line here.
_POLICIES: dict[str, str] = {
    "fifo": "heuristic.fifo:FifoPolicy",
    "edf": "heuristic.edf:EdfPolicy",
    "edf-fastest": "heuristic.edf:EdfFastestPolicy",
    "sts": "heuristic.sts:StsPolicy",
    "sts-greedy": "heuristic.sts:GreedyStsPolicy",
    "sts-incremental": "heuristic.sts_incremental:IncrementalStsPolicy",
    "rg": "heuristic.rg:RgPolicy",
    "pr": "heuristic.pr:PrPolicy",
    "lp": "heuristic.lp:LpPolicy",
    "static": "heuristic.static:StaticPolicy",
    "optimus": "heuristic.optimus:OptimusPolicy",
    "gandiva": "heuristic.gandiva:GandivaPolicy",
    "synergy": "heuristic.synergy:SynergyPolicy",
    "synergy-greedy": "heuristic.synergy:SynergyGreedyPolicy",
    "synergy-proportional": "heuristic.synergy:SynergyProportionalPolicy",
    "synergy-opt": "heuristic.synergy:SynergyOptPolicy",
    "liquid": "heuristic.liquid:LiquidPolicy",
    "liquid-forest": "heuristic.liquid:LiquidForestPolicy",
    "first-fit": "heuristic.liquid:FirstFitPolicy",
}


# policies that solve exact models at each decision: only for small instances, so
# listings meant for any instance size (``gpusched compare``) leave them out
_SMALL_ONLY: set[str] = set()


# policies that need an optional extra: name -> (module to import, what to install)
_EXTRAS: dict[str, tuple[str, str]] = {
    "liquid-forest": ("sklearn", "pip install 'gpusched[forest]'"),
}


def missing_extra(name: str) -> str | None:
    """How to install what ``name`` needs but is missing, or ``None``."""
    if name not in _EXTRAS:
        return None
    module, install = _EXTRAS[name]
    return None if importlib.util.find_spec(module) is not None else install


def policy_names(*, small_only: bool = False) -> tuple[str, ...]:
    """The registered names that can run here (their optional extras installed); with
    ``small_only`` also the exact, small-instance ones."""
    return tuple(
        n for n in _POLICIES if (small_only or n not in _SMALL_ONLY) and missing_extra(n) is None
    )


def register(name: str, target: str, *, small_only: bool = False) -> None:
    """Register a policy factory (``"package.module:Factory"``) under ``name``.

    Packages that build on ``heuristic`` (the MILP) register their policies this way, so
    the import direction stays one way. A ``small_only`` policy solves exact models and
    its factory takes a ``time_limit`` (seconds per solve) besides the seed."""
    if name in _POLICIES and _POLICIES[name] != target:
        raise ValueError(f"policy {name!r} is already registered as {_POLICIES[name]}")
    _POLICIES[name] = target
    if small_only:
        _SMALL_ONLY.add(name)


def make_policy(name: str, *, seed: int = 0, **options: Any) -> Policy:
    """A fresh policy object for ``name``; ``options`` go to its factory."""
    try:
        target = _POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(_POLICIES)}") from None
    install = missing_extra(name)
    if install is not None:
        raise ValueError(f"policy {name!r} needs an optional extra: {install}")
    module, _, attr = target.partition(":")
    factory: Callable[..., Policy] = getattr(import_module(module), attr)
    return factory(seed=seed, **options)
