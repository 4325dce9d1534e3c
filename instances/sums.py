"""Sums whose last digit does not depend on the machine.

``numpy.dot`` and ``@`` hand a vector product to the BLAS library numpy ships with
(OpenBLAS), which picks its kernel by the CPU: an AVX-512 kernel adds the products in
another order than an AVX2 one, so the same inputs give results that differ in the last
digit from machine to machine (seen: the Philly week's fitted stops moved when the
tests ran on an AVX-512 machine, ``OPENBLAS_CORETYPE`` reproduces both). A figure, a
generated instance or a decision must not: every product summed here is rounded once,
elementwise, and the sum is ``math.fsum``'s, correctly rounded.
"""

from __future__ import annotations

import math

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` for two vectors, correctly rounded from the rounded products."""
    return math.fsum(np.multiply(a, b).tolist())
