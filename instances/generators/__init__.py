"""Seeded instance generators: synthetic thesis-style scenarios and real-data instances."""

from instances.generators.early_stopping import FAMILIES, make_distribution
from instances.generators.realdata import RealDataSpec, real_data
from instances.generators.synthetic import SyntheticSpec, synthetic

__all__ = [
    "FAMILIES",
    "RealDataSpec",
    "SyntheticSpec",
    "make_distribution",
    "real_data",
    "synthetic",
]
