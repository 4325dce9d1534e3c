"""STS's loops compiled by numba (heuristic/sts/compiled.py) where numba can keep its
compiled code in no folder: compiled in the process, not refused."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import numba.core.caching as c
c.CacheImpl._locator_classes = []  # every folder refused, as on a read-only install and home
import numpy as np
from heuristic.sts.cells import place_runs
from heuristic.sts.profile import Option
from heuristic.sts.switching import Relaunch, relaunch_profile
from instances import Config, EpochDistribution

cost, cells = place_runs(np.array([1.0, 1.0]), np.array([3.0, 1.0, 1.0, 1.0]), np.zeros(2), False)
print((cost, cells.tolist()))
a, b = Config("v100", 1), Config("v100", 4)
options = [Option(a, 1.0, 1.0), Option(b, 0.3, 2.0)]
dist = EpochDistribution((2.0, 10.0), (0.5, 0.5))
p = relaunch_profile(options, dist, 5.0, 10.0, Relaunch(0.1, {a: 0.2, b: 0.6}))
print([s.config.gpus for s in p.steps])
"""


def test_both_loops_run_where_numba_finds_no_folder_to_keep_them_in():
    """numba raises a RuntimeError at ``cache=True`` where it can write nowhere; the
    search for cheap hours and the search over a job's chains then still answer."""
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.strip().splitlines()
    assert first == "(2.0, [1, 2])"
    assert second == "[1, 4]", second  # the slow option first, then the fast one
