"""Same seed, same result on every machine.

numpy hands vector products to OpenBLAS, which picks its kernel by the CPU, and the
kernels add in different orders: the Philly week's fitted stops came out different in
the last digit on an AVX-512 machine, and with them a pinned figure. ``instances/sums.py``
keeps such sums off BLAS. Here each figure is computed in fresh processes told to use
the kernels of other CPUs (``OPENBLAS_CORETYPE``: Prescott has SSE3 only, Haswell AVX2;
both run on any x86-64 machine this runs on) and must be the same to the last digit:
generated instances with fitted stops, STS deciding when under an hourly price,
Optimus (a run, and its speed model's predictions), and the online report's
utilisation. STS's search for cheap hours and its search over a job's chains are
compiled by numba for the CPU they run on (``heuristic/sts/cells.py``,
``heuristic/sts/chainsearch.py``: the STS run below uses both); compiled for a generic
x86-64 (no AVX, no fused multiply-add) they must give the same figures too.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FIGURES = """
import hashlib, json
from instances.generators import GENERATORS
from instances.generators.prices import lay_prices
from instances.io import instance_to_dict
from validation.online import run_online

def digest(inst):
    text = json.dumps(instance_to_dict(inst), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()

week = GENERATORS["philly-week"].instance({"start": 24.0, "hours": 1.0}, 0)
ali = GENERATORS["alibaba"].instance({"start": 3200.0, "hours": 2.0}, 0)
small = {"cluster": "k80x4:1,p100x4:1,v100x8:1", "load": 1.2, "hours": 1.0}
priced = lay_prices(GENERATORS["philly-week"].instance(small, 0), "au-nsw-2023:840")
out = [digest(week), digest(ali)]
for policy in ("sts", "optimus"):
    run = run_online(priced, policy, seed=0)
    out += [repr(run.summary()["total_cost"]), repr(run.utilisation)]
# Optimus' speed model on its own: a three- or four-term product, which the kernels
# also add differently
import numpy as np
from heuristic.seeds.optimus import predicted_epoch_hours, speed_features
rng = np.random.default_rng(0)
h = hashlib.sha256()
for _ in range(2000):
    theta = rng.random(len(speed_features(1))) * rng.choice([1e-3, 1.0, 10.0])
    h.update(repr(predicted_epoch_hours(theta, int(rng.integers(1, 65)))).encode())
out.append(h.hexdigest())
print(out)
"""


def _figures(coretype: str | None, numba_cpu: str | None = None, cache: str = "") -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    if numba_cpu is not None:  # compiled afresh, into a cache of its own
        env["NUMBA_CPU_NAME"], env["NUMBA_CACHE_DIR"] = numba_cpu, cache
    done = subprocess.run(
        [sys.executable, "-c", FIGURES], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 kernels")
def test_figures_do_not_depend_on_the_cpus_blas_kernel(tmp_path):
    native = _figures(None)
    assert "nan" not in native
    for coretype in ("Prescott", "Haswell"):
        assert _figures(coretype) == native, coretype
    assert _figures(None, "generic", str(tmp_path)) == native, "numba for a generic x86-64"
