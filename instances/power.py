"""When an empty node is powered off (docs/model.md, 'Idle power'): the cluster option
that turns a node off after an idle delay and boots it, with a boot's energy and delay,
before its next work. Absent, every node stays powered until the last job completes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from instances.errors import InstanceError
from instances.fields import positive
from instances.limits import MAX_BOOT_KWH, MAX_HOURS, MAX_RELAUNCH_HOURS

_FIELDS = ("after_h", "boot_h", "boot_kwh")


@dataclass(frozen=True)
class PowerOff:
    """A node empty for ``after_h`` hours is powered off; it boots for ``boot_h`` hours
    before its next work, drawing ``boot_kwh`` kWh on top of its powered draw."""

    after_h: float
    boot_h: float = 0.0
    boot_kwh: float = 0.0

    def __post_init__(self) -> None:
        # an idle delay of a few seconds to years; a boot as long as a relaunch may be
        limits = {"after_h": MAX_HOURS, "boot_h": MAX_RELAUNCH_HOURS, "boot_kwh": MAX_BOOT_KWH}
        for name in _FIELDS:
            value = positive(name, getattr(self, name), allow_zero=True, upper=limits[name])
            object.__setattr__(self, name, value)

    @property
    def gap(self) -> float:
        """The longest empty spell (hours) that keeps a node powered: ``after_h + boot_h``."""
        return self.after_h + self.boot_h

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in _FIELDS}


def power_off_from_dict(doc: dict[str, Any]) -> PowerOff:
    """The option from its JSON object (the schema has checked its keys)."""
    if "after_h" not in doc:
        raise InstanceError("after_h", None, "the idle delay is required (hours)")
    return PowerOff(**{k: doc[k] for k in _FIELDS if k in doc})
