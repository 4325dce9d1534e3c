"""Writes the deliberately broken files of tests/data from base.json (run once, by hand).

Each broken file differs from base.json in one place; test_errors.py checks that the
error names that field and value.
"""

import copy
import json
from pathlib import Path

HERE = Path(__file__).parent
BASE = json.loads((HERE / "base.json").read_text())


def write(name, mutate):
    doc = copy.deepcopy(BASE)
    mutate(doc)
    (HERE / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")


def job(doc, i=0):
    return doc["jobs"][i]


write("missing_field", lambda d: job(d).pop("due"))
write("unknown_field", lambda d: job(d).update(deadline=5.0))
write("negative_epoch_time", lambda d: job(d)["configs"][0].update(epoch_time=-0.5))
write("zero_epoch_time", lambda d: job(d)["configs"][0].update(epoch_time=0.0))
write(
    "zero_throughput",
    lambda d: job(d).update(
        configs=[
            {k: v for k, v in c.items() if k != "epoch_time"} | {"throughput": 0.0}
            for c in job(d)["configs"]
        ]
    ),
)
write("probabilities_not_one", lambda d: job(d)["distribution"].update(probabilities=[0.5, 0.4]))
write("stops_not_increasing", lambda d: job(d)["distribution"].update(stops=[10.0, 5.0]))
write("stops_not_max_epochs", lambda d: job(d).update(max_epochs=12.0))
write("due_before_release", lambda d: job(d).update(release=4.0, due=3.0))
write(
    "no_node_fits",
    lambda d: job(d).update(
        configs=[{"gpu_type": "v100", "gpus": 8, "nodes": 1, "shared": False, "epoch_time": 0.1}]
    ),
)
write("shared_memory_too_big", lambda d: job(d).update(memory_gb=40.0))
write("unknown_gpu_type", lambda d: d["nodes"][1].update(gpu_type="h100"))
write("unknown_config_gpu_type", lambda d: job(d)["configs"][0].update(gpu_type="a100"))
write("duplicate_job_id", lambda d: job(d, 1).update(id=job(d, 0)["id"]))
write("duplicate_node_id", lambda d: d["nodes"][1].update(id=d["nodes"][0]["id"]))
write("negative_probability", lambda d: job(d)["distribution"].update(probabilities=[-0.5, 1.5]))
(HERE / "malformed.json").write_text(json.dumps(BASE, indent=1)[:200] + "\n")
