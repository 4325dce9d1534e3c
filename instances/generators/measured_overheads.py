"""Relaunch overheads from published measurements (docs/model.md, E1 defaults).

A relaunch restarts the framework, reloads the checkpoint and the data pipeline and warms
up. Measured checkpoint-restore ("rescale") times per model, in seconds, from the Sia
artifact (Jayaram Subramanya et al., SOSP 2023; ``siasosp23/artifacts``,
``sia-simulator/applications.py``, commit 37c68be): NCF 15, DeepSpeech2 25, CIFAR-10
(ResNet-18) 50, YOLOv3 80, BERT 120, ImageNet (ResNet-50) 250, and 30 for any other
model, the single value Pollux's simulator charges every re-allocation (Qiao et al., OSDI
2021; ``petuum/adaptdl``, ``simulator/simulator.py``). Larger models take longer: more
state to load, more warm-up.

Gavel's job families map to the nearest measured model by kind and size; synthetic
jobs, which have no model, draw one of the measured values, from an RNG stream of their
own so that every other figure of the instance stays what it was.
"""

from __future__ import annotations

import numpy as np

# seconds per relaunch, by measured model
MEASURED_SECONDS = {
    "ncf": 15.0,
    "deepspeech2": 25.0,
    "pollux-default": 30.0,
    "cifar10": 50.0,
    "yolov3": 80.0,
    "bert": 120.0,
    "imagenet": 250.0,
}

# Gavel's job families (instances/data/gavel_throughputs.csv) -> the measured model
GAVEL_FAMILY_MODEL = {
    "Recommendation": "ncf",  # the same model (neural collaborative filtering)
    "LM": "deepspeech2",  # a recurrent model of similar size
    "A3C": "pollux-default",  # reinforcement learning: no measurement, Pollux's value
    "ResNet-18": "cifar10",  # the same network and data set
    "CycleGAN": "yolov3",  # a mid-size convolutional vision model
    "Transformer": "bert",  # the same architecture
    "ResNet-50": "imagenet",  # the same network and data set
}

RELAUNCH_MODES = ("measured", "none")


def family_relaunch_hours(family: str) -> float:
    """The measured overhead (hours) of a Gavel job family."""
    return MEASURED_SECONDS[GAVEL_FAMILY_MODEL.get(family, "pollux-default")] / 3600.0


def drawn_relaunch_hours(seed: int, count: int) -> list[float]:
    """``count`` overheads (hours), each a measured model's, drawn with a stream of its
    own (the instance's other draws are untouched)."""
    rng = np.random.default_rng([seed, 0xE1])
    values = sorted(MEASURED_SECONDS.values())
    return [values[int(i)] / 3600.0 for i in rng.integers(0, len(values), size=count)]
