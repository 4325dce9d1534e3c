"""The Lagrangian bound with idle power (milp/lagrange_idle.py; docs/milp.md, 'Lower
bounds that scale'): on nodes always on, the bound that splits the nodes' own energy
over the jobs, and on nodes powered off when empty (after 0.25 h, booting in 0.1 h
for 0.05 kWh), the one that charges each epoch its share of its node's base power,
each beside the bound that counts the nodes' energy as nothing and against STS's plan
(its worst-case rollout costed by the evaluator), on a synthetic and a real-data
instance at the generator's idle levels; and column generation's root with the same
power (milp/decomposition/lower.py: the share that splits over the jobs in the columns,
what the cluster surely draws as a constant; always on, the powered hours carried by
one job a slot, beside the hours surely powered alone), from STS's plan, with the plan
it finds.
CPU seconds of each bound.

Run: python -m benchmarks.lagrange_idle [--states 32] [--time-limit 120] [--colgen-time 120]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from heuristic.sts.policy import StsPolicy
from instances import Instance
from instances.generators import SyntheticSpec, synthetic
from instances.generators.power import lay_idle, lay_power_off
from instances.generators.registry import GENERATORS
from milp.decomposition import solve as decompose
from milp.decomposition.colgen import CgOptions
from milp.lagrange import lagrangian_bound
from milp.solve import default_slots
from validation.evaluate import evaluate
from validation.simulator import rollout

POWER_OFF = "0.25,0.1,0.05"  # after_h, boot_h, boot_kwh


def cases() -> list[tuple[str, Instance]]:
    return [
        (
            "synthetic 30 jobs x 10 nodes",
            synthetic(SyntheticSpec(nodes=10, jobs=30, rate="high", slot=0.25), seed=1),
        ),
        (
            "real data 20 jobs x 6 nodes",
            GENERATORS["realdata"].instance({"nodes": 6, "jobs": 20, "slot": 0.25}, 0),
        ),
    ]


def measure(states: int, time_limit: float, colgen_time: float) -> pd.DataFrame:
    rows = []
    for name, base in cases():
        for level, off in (("low", None), ("high", None), ("low", POWER_OFF), ("high", POWER_OFF)):
            inst = lay_idle(base, level)
            if off is not None:
                inst = lay_power_off(inst, off)
            slots = default_slots(inst)
            plan = rollout(inst, StsPolicy())
            sts = evaluate(inst, plan).total_cost
            row: dict[str, object] = {
                "instance": name,
                "idle": level,
                "nodes": "always on" if off is None else "off when empty",
                "slots": slots,
                "STS": sts,
            }
            for label, idle in (("nothing", False), ("with the nodes", True)):
                t0 = time.process_time()
                lb = lagrangian_bound(
                    inst, slots, upper=sts, states=states, time_limit=time_limit, idle=idle
                )
                row[f"bound ({label})"] = lb.bound
                row[f"gap ({label})"] = f"{sts / lb.bound - 1:.1%}"
                row[f"CPU s ({label})"] = round(time.process_time() - t0, 2)
            if colgen_time > 0:
                # always on, the powered hours carried by one job a slot (the default)
                # beside the hours surely powered alone, in the same run
                runs = [("column generation", CgOptions())]
                if off is None:
                    runs.append(("surely powered alone", CgOptions(carry=False)))
                for label, options in runs:
                    t0 = time.process_time()
                    cg = decompose(
                        inst,
                        plan,
                        slots=slots,
                        time_limit=colgen_time,
                        branch=False,
                        options=options,
                    )
                    row[f"bound ({label})"] = cg.bound
                    row[f"gap ({label})"] = f"{sts / cg.bound - 1:.1%}"
                    row[f"plan ({label})"] = cg.objective
                    row[f"CPU s ({label})"] = round(time.process_time() - t0, 2)
                if off is None:
                    carried = row["bound (column generation)"]
                    row["carried / surely"] = round(
                        carried / row["bound (surely powered alone)"], 4
                    )
            rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=32)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--colgen-time", type=float, default=120.0, help="0: not run")
    args = ap.parse_args()
    table = measure(args.states, args.time_limit, args.colgen_time)
    print(table.to_markdown(index=False, floatfmt=".4g"))


if __name__ == "__main__":
    main()
