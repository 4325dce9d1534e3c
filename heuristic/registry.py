"""The policy registry: a name per policy, one line each. No if/elif chains on names."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from heuristic.policy import Policy

# name -> "module:factory"; a factory takes the seed as keyword argument ``seed``.
# Adding a policy = adding its module and one line here.
_POLICIES: dict[str, str] = {
    "fifo": "heuristic.fifo:FifoPolicy",
    "edf": "heuristic.edf:EdfPolicy",
    "sts": "heuristic.sts:StsPolicy",
    "rg": "heuristic.rg:RgPolicy",
    "pr": "heuristic.pr:PrPolicy",
}


def policy_names() -> tuple[str, ...]:
    return tuple(_POLICIES)


def register(name: str, target: str) -> None:
    """Register a policy factory (``"package.module:Factory"``) under ``name``."""
    if name in _POLICIES and _POLICIES[name] != target:
        raise ValueError(f"policy {name!r} is already registered as {_POLICIES[name]}")
    _POLICIES[name] = target


def make_policy(name: str, *, seed: int = 0) -> Policy:
    """A fresh policy object for ``name``."""
    try:
        target = _POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(_POLICIES)}") from None
    module, _, attr = target.partition(":")
    factory: Callable[..., Policy] = getattr(import_module(module), attr)
    return factory(seed=seed)
