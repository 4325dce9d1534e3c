"""The one table of instance generators, by the name users give them: ``gpusched
generate NAME`` and a campaign's ``generator = "NAME"`` read the same entries.

Each entry holds the generator's spec class (a :class:`GeneratorSpec`), the function
making an instance of a spec, and the spec fields its name fixes (``philly-week`` and
``alibaba`` are the trace generator on one trace each). :meth:`Generator.spec_of` builds
the spec from plain values (lists where the spec holds tuples, as TOML and JSON give
them), so both front ends hand it what the user wrote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from instances.errors import InstanceError
from instances.generators.clusters import parse_cluster
from instances.generators.liquid import LiquidSpec, liquid
from instances.generators.realdata import RealDataSpec, cluster_mix, real_data
from instances.generators.spec import GeneratorSpec
from instances.generators.synergy import SynergySpec, synergy
from instances.generators.synthetic import SyntheticSpec, synthetic
from instances.generators.traces import TRACES, TraceSpec, trace_instance
from instances.model import Instance


def _cluster_form(value: Any) -> Any:
    """A trace's ``cluster``: node kinds as a list, or as the command line's string."""
    return parse_cluster(value) if isinstance(value, str) else value


def _node_mix(value: Any) -> Any:
    """realdata's ``nodes``: a count stands for that many nodes of the default mix."""
    if isinstance(value, int) and not isinstance(value, bool):
        return cluster_mix(value)
    return value


@dataclass(frozen=True)
class Generator:
    """A named generator: its spec class, the function making an instance of a spec
    (``make(spec, seed, name)``), the spec fields its name fixes, and the plain values
    it reads in a form of its own (``read``: field -> conversion)."""

    name: str
    spec: type[GeneratorSpec]
    make: Callable[..., Instance]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    read: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    @property
    def fields(self) -> tuple[str, ...]:
        """The spec fields a user may set (those the name fixes excluded)."""
        return tuple(f.name for f in dataclasses.fields(self.spec) if f.name not in self.fixed)

    def spec_of(self, params: Mapping[str, Any]) -> GeneratorSpec:
        """The spec of ``params`` (plain values); an unknown field, or a value the spec
        refuses, raises :class:`InstanceError` naming it."""
        values = dict(self.fixed)
        for key, value in params.items():
            if key not in self.fields:
                raise InstanceError(
                    key,
                    value,
                    f"unknown parameter of generator {self.name!r}; known: {sorted(self.fields)}",
                )
            if key in self.read:
                value = self.read[key](value)
            if key in self._tuple_fields and isinstance(value, list):
                value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
            values[key] = value
        return self.spec(**values)

    @property
    def _tuple_fields(self) -> set[str]:
        """The fields holding tuples, which TOML and JSON give as arrays (the field's
        type is a string: the spec modules postpone their annotations)."""
        return {f.name for f in dataclasses.fields(self.spec) if str(f.type).startswith("tuple")}

    def instance(self, params: Mapping[str, Any], seed: int, name: str | None = None) -> Instance:
        """The instance of ``params`` for ``seed`` (same seed, same instance)."""
        return self.make(self.spec_of(params), seed, name)


GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in (
        Generator("synthetic", SyntheticSpec, synthetic),
        Generator("realdata", RealDataSpec, real_data, read={"nodes": _node_mix}),
        Generator("synergy", SynergySpec, synergy),
        Generator("liquid", LiquidSpec, liquid),
        *(
            Generator(
                t, TraceSpec, trace_instance, fixed={"trace": t}, read={"cluster": _cluster_form}
            )
            for t in TRACES
        ),
    )
}
