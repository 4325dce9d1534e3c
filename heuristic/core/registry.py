"""The policy registry: a name per policy, one line each, with the options it presets.

A name maps to a policy class (imported when first made) and the options that name
fixes: ``sts-greedy`` is STS with ``lookahead = False``, ``edf-fastest`` EDF with
``rule = "fastest"``. :func:`make_policy` merges the caller's options over the preset and
checks every name and type against the class's ``Options`` dataclass
(:mod:`heuristic.core.options`). No if/elif chains on names.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from heuristic.core.options import build_options
from heuristic.core.policy import Policy
from instances.fields import seed_number


@dataclass(frozen=True)
class Entry:
    """What a registered name makes: ``target`` is ``"package.module:Class"``."""

    target: str
    preset: Mapping[str, Any] = field(default_factory=dict)
    # solves exact models at each decision: only for small instances, so listings meant
    # for any instance size (``gpusched compare``) leave it out
    small_only: bool = False
    # an optional extra it needs: (module to import, what to install)
    extra: tuple[str, str] | None = None


# Adding a policy = adding its module (a class with ``Options``) and one line here. The
# rolling MILP is named here too, so ``make_policy("milp")`` works before anything has
# imported ``milp`` (the class is imported only when made).
_POLICIES: dict[str, Entry] = {
    "fifo": Entry("heuristic.baselines.fifo:FifoPolicy"),
    "edf": Entry("heuristic.baselines.edf:EdfPolicy"),
    "edf-fastest": Entry("heuristic.baselines.edf:EdfPolicy", {"rule": "fastest"}),
    # STS re-planning the jobs an event concerns while capacity does not bind, every
    # job where it does (docs/model.md, 'STS re-planning only what an event concerns'),
    # and choosing there between its two orders by what-if runs of the event engine
    # (validation.rollout_choice, named here as the MILP is; docs/model.md, 'STS
    # choosing its order by rollout'); ``rollout_below = 0``: without the what-if runs
    "sts": Entry("validation.rollout_choice:RolloutStsPolicy"),
    # STS re-planning every present job at every event: the definition the pinned
    # decisions and the offline plans (gap, improve, warm starts) follow
    "sts-full": Entry("heuristic.sts.policy:StsPolicy"),
    "sts-greedy": Entry(
        "heuristic.sts.policy:StsPolicy",
        {
            "lookahead": False,
            "urgency": "slack",
            "backfill": False,
            "unstick": False,
            "pull": False,
            "spare": 0.0,
            "displace_cost": "relaunch",
        },
    ),
    # STS blind to a price series (billed by it): the reference for deciding when
    "sts-price-blind": Entry("validation.rollout_choice:RolloutStsPolicy", {"timing": False}),
    # STS blind to the hours its last job keeps an idle cluster powered, its what-if runs
    # costed without that power (charged by both)
    "sts-idle-blind": Entry("validation.rollout_choice:RolloutStsPolicy", {"idle_tail": False}),
    "rg": Entry("heuristic.baselines.rg:RgPolicy"),
    "pr": Entry("heuristic.baselines.pr:PrPolicy"),
    "lp": Entry("heuristic.baselines.lp:LpPolicy"),
    "static": Entry("heuristic.baselines.static:StaticPolicy"),
    "optimus": Entry("heuristic.seeds.optimus:OptimusPolicy"),
    "gandiva": Entry("heuristic.seeds.gandiva:GandivaPolicy"),
    "synergy": Entry("heuristic.seeds.synergy:SynergyPolicy"),
    "synergy-greedy": Entry("heuristic.seeds.synergy:SynergyPolicy", {"allocation": "greedy"}),
    "synergy-proportional": Entry(
        "heuristic.seeds.synergy:SynergyPolicy", {"allocation": "proportional"}
    ),
    "synergy-opt": Entry("heuristic.seeds.synergy:SynergyPolicy", {"allocation": "opt"}),
    "liquid": Entry("heuristic.seeds.liquid:LiquidPolicy"),
    "liquid-forest": Entry(
        "heuristic.seeds.liquid:LiquidPolicy",
        {"estimate": "forest"},
        extra=("sklearn", "pip install 'gpusched[forest]'"),
    ),
    # the baseline Liquid was measured against: the requested size, topology-blind first
    # fit, first come first served, no GA and no sharing
    "first-fit": Entry(
        "heuristic.seeds.liquid:LiquidPolicy",
        {"estimate": "request", "placement": "first-fit", "batch": False, "share_ratio": math.inf},
    ),
    "milp": Entry("milp.rolling:RollingMilpPolicy", small_only=True),
}


def missing_extra(name: str) -> str | None:
    """How to install what ``name`` needs but is missing, or ``None``."""
    entry = _POLICIES.get(name)
    if entry is None or entry.extra is None:
        return None
    module, install = entry.extra
    return None if importlib.util.find_spec(module) is not None else install


def policy_names(*, small_only: bool = False) -> tuple[str, ...]:
    """The registered names that can run here (their optional extras installed); with
    ``small_only`` also the exact, small-instance ones."""
    return tuple(
        n
        for n, e in _POLICIES.items()
        if (small_only or not e.small_only) and missing_extra(n) is None
    )


def register(name: str, target: str, *, small_only: bool = False, **preset: Any) -> None:
    """Register a policy class (``"package.module:Class"``) under ``name``, with the
    options that name presets. Packages that build on ``heuristic`` register their
    policies this way, so the import direction stays one way."""
    entry = Entry(target, dict(preset), small_only)
    if name in _POLICIES and _POLICIES[name] != entry:
        raise ValueError(f"policy {name!r} is already registered as {_POLICIES[name].target}")
    _POLICIES[name] = entry


# names retired, and what a file naming one should say instead
_RENAMED = {
    "sts-incremental": "'sts', which decides incrementally; 'sts-full' re-plans every "
    "job at every event",
    "sts-rollout": "'sts', which chooses its order by rollout; 'sts' with rollout_below = 0 "
    "does not",
}


def renamed_to(name: str) -> str | None:
    """What a retired name now goes by (for a file or command written before the
    rename), or None."""
    return _RENAMED.get(name)


def unknown_policy(name: str, known: Sequence[str]) -> str:
    """What to tell a user who named ``name``, not among ``known``: the name it now goes
    by where it was retired, else the names known. The library and the command line
    say this; a campaign file says it of its field."""
    if name in _RENAMED:
        return f"policy {name!r} is now {_RENAMED[name]}"
    return f"unknown policy {name!r}; known: {', '.join(known)}"


def _entry(name: str) -> Entry:
    try:
        return _POLICIES[name]
    except KeyError:
        raise ValueError(unknown_policy(name, list(_POLICIES))) from None


def policy_class(name: str) -> Any:
    """The class ``name`` makes (its module imported)."""
    module, _, attr = _entry(name).target.partition(":")
    return getattr(import_module(module), attr)


def policy_preset(name: str) -> dict[str, Any]:
    """The options ``name`` sets over its class's defaults (``sts-greedy``: STS's class
    with the thesis's rules)."""
    return dict(_entry(name).preset)


def policy_options(name: str, **options: Any) -> Any:
    """The options dataclass ``name`` makes with ``options`` over its preset, every name
    and type checked (:class:`heuristic.core.options.OptionError` names the bad one)."""
    entry = _entry(name)
    cls = policy_class(name)
    return build_options(cls.Options, {**entry.preset, **options}, where=f"policy {name!r}")


def make_policy(name: str, *, seed: int = 0, **options: Any) -> Policy:
    """A fresh policy object for ``name`` with ``options`` over its preset, e.g.
    ``make_policy("sts", reserve=0.3)``."""
    if not isinstance(name, str):  # a list was met by "unhashable type" in the lookup
        raise TypeError(f"policy = {name!r:.60}: must be a registered policy's name")
    seed = seed_number("seed", seed)  # None drew a fresh seed; numpy's named none
    install = missing_extra(name)
    if install is not None:
        raise ValueError(f"policy {name!r} needs an optional extra: {install}")
    policy: Policy = policy_class(name)(policy_options(name, **options), seed=seed)
    policy.name = name  # the registered name (sts-greedy) rather than the class's (sts)
    return policy
