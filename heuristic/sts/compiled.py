"""STS's loops compiled by numba on first use (:mod:`heuristic.sts.cells`,
:mod:`heuristic.sts.chainsearch`).

numba is imported, and a loop compiled, when the loop is first called, so a run that
never needs it pays nothing. The compiled code is kept in ``__pycache__`` (or in
numba's folder in the user's home where that cannot be written): about 1 s a loop the
first time on a machine, a few tenths of a second a process after. Where neither
folder can be written (a read-only install and home), numba raises a RuntimeError at
``cache=True``; the loop is then compiled in each process instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Compiled:
    """``loop`` compiled by numba when first called (see the module docstring)."""

    def __init__(self, loop: Callable[..., Any]) -> None:
        self.loop = loop
        self._run: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        run = self._run
        if run is None:
            import numba  # here, not at import: see the module docstring

            try:
                run = numba.njit(cache=True)(self.loop)
            except RuntimeError:  # no folder to keep it in
                run = numba.njit(self.loop)
            self._run = run
        return run(*args)
