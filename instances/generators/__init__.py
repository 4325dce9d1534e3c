"""Seeded instance generators: synthetic thesis-style scenarios, real-data instances,
the seed systems' settings and whole traces; ``GENERATORS`` names them all."""

from instances.generators.early_stopping import FAMILIES, make_distribution
from instances.generators.realdata import RealDataSpec, real_data
from instances.generators.registry import GENERATORS, Generator
from instances.generators.spec import GeneratorSpec
from instances.generators.synthetic import SyntheticSpec, synthetic

__all__ = [
    "FAMILIES",
    "GENERATORS",
    "Generator",
    "GeneratorSpec",
    "RealDataSpec",
    "SyntheticSpec",
    "make_distribution",
    "real_data",
    "synthetic",
]
