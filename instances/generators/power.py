"""Idle power and power states laid over an instance (docs/model.md, 'Idle power'): the
generator options ``idle`` and ``power_off``, read from the command line and from
campaign files as the same text.

- ``idle``: a level (``low``: GPUs idle at 15% of their busy power, nodes draw 50 W per
  GPU slot; ``high``: 30% and 100 W; ``none``: nothing laid), or
  ``IDLE_FRACTION,BASE_W_PER_GPU``, e.g. ``0.15,50``. The levels are those
  ``benchmarks/idle.py`` measured (an idle board reads about 15% of its busy power on
  ``nvidia-smi``; a 4-GPU server's CPUs, memory and fans about 200 W).
- ``power_off``: ``AFTER_H[,BOOT_H[,BOOT_KWH]]`` (the cluster option
  ``instances/power.py``; the boot's delay and energy default to 0), or ``none``.

``none`` lets a campaign grid hold the instance as it was beside the laid ones.
"""

from __future__ import annotations

import math
from dataclasses import replace

from instances.errors import InstanceError
from instances.limits import MAX_GPUS_PER_NODE, MAX_NODE_POWER_W
from instances.model import Instance
from instances.power import PowerOff

NONE = "none"
# level -> (idle power as a fraction of busy power, node base power in W per GPU slot)
IDLE_LEVELS: dict[str, tuple[float, float]] = {
    NONE: (0.0, 0.0),
    "low": (0.15, 50.0),
    "high": (0.30, 100.0),
}
# a node's base power is bounded (instances/limits.py) whatever GPUs it holds
MAX_PER_SLOT_W = MAX_NODE_POWER_W / MAX_GPUS_PER_NODE


def _numbers(field: str, text: str, most: int, form: str) -> list[float]:
    """The comma-separated finite numbers of ``text`` (one to ``most`` of them)."""
    parts = text.split(",")
    if not 1 <= len(parts) <= most:
        raise InstanceError(field, text, f"give {form}")
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise InstanceError(
                field, text, f"{part.strip()!r} is not a number; give {form}"
            ) from None
        if not math.isfinite(value) or value < 0:
            raise InstanceError(field, text, f"{part.strip()} must be a finite number >= 0")
        values.append(value)
    return values


def parse_idle(text: str) -> tuple[float, float]:
    """``idle`` as (idle fraction of busy power, base W per GPU slot)."""
    form = f"a level ({', '.join(IDLE_LEVELS)}) or IDLE_FRACTION,BASE_W_PER_GPU"
    if text in IDLE_LEVELS:
        return IDLE_LEVELS[text]
    values = _numbers("idle", text, 2, form)
    if len(values) != 2:
        raise InstanceError("idle", text, f"give {form}")
    share, per_slot = values
    if share > 1:
        raise InstanceError("idle", text, "an idle GPU draws at most its busy power: fraction <= 1")
    if per_slot > MAX_PER_SLOT_W:
        # checked here, not when laid: a campaign's value is refused before any run
        raise InstanceError(
            "idle", text, f"at most {MAX_PER_SLOT_W:g} W per GPU slot (a node's bound, per GPU)"
        )
    return share, per_slot


def parse_power_off(text: str) -> PowerOff | None:
    """``power_off`` as the cluster option (``None`` for ``none``)."""
    if text == NONE:
        return None
    values = _numbers("power_off", text, 3, f"{NONE} or AFTER_H[,BOOT_H[,BOOT_KWH]]")
    try:
        return PowerOff(*values)
    except InstanceError as exc:  # a bound of the option: name the option and its field
        raise InstanceError("power_off", text, f"{exc.path}: {exc.reason}") from None


def lay_idle(instance: Instance, text: str) -> Instance:
    """``instance`` with its GPUs idling at the fraction of their busy power and its
    nodes drawing the base power per GPU slot they hold, as ``text`` says."""
    share, per_slot = parse_idle(text)
    if share == 0 and per_slot == 0:
        return instance  # nothing charged: the instance as it was, to the last field
    types = tuple(replace(g, idle_w=share * g.power_w) for g in instance.gpu_types)
    nodes = tuple(replace(n, base_w=per_slot * n.num_gpus) for n in instance.nodes)
    return instance.replace(gpu_types=types, nodes=nodes)


def lay_power_off(instance: Instance, text: str) -> Instance:
    """``instance`` with empty nodes powered off as ``text`` says."""
    option = parse_power_off(text)
    return instance if option is None else instance.replace(power_off=option)
