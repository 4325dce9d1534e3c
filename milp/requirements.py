"""What the time-indexed MILP requires of an instance, and the errors it raises: a slot
length, no cheaper resume than a relaunch, one shared configuration per GPU type, no
distributed configuration. Each refusal names the job and says what to do."""

from __future__ import annotations

import math
from numbers import Integral, Real

from instances import Config, Instance
from instances.fields import is_number, whole_at_least


class MilpError(ValueError):
    """The MILP cannot be built or has no solution; the message says which job and why."""


class ModelTooLarge(MilpError):
    """The MILP would not fit in memory: the instance is for heuristics and bounds."""


def require_time_limit(time_limit: object) -> float | None:
    """A call's time limit in seconds: ``None`` or infinity for none, else a positive
    finite number (a string, a bool or ``10**400`` are refused naming it, not met by a
    TypeError or an OverflowError inside)."""
    if time_limit is None or time_limit == math.inf:
        return None
    ok = isinstance(time_limit, Real) and not isinstance(time_limit, bool)
    if ok and isinstance(time_limit, Integral) and abs(int(time_limit)) > 2**53:
        ok = False  # math.isfinite would overflow converting it
    if not ok or not (math.isfinite(time_limit) and time_limit > 0):  # type: ignore[arg-type,operator]
        raise MilpError(f"time_limit = {time_limit!r}: must be a positive number of seconds")
    return float(time_limit)  # type: ignore[arg-type]


def require_count(name: str, value: object, least: int, *, optional: bool = False) -> None:
    """A count an MILP call takes (threads, rounds, a seed): a whole number of at least
    ``least`` (``None`` too where ``optional``), else a :class:`MilpError` naming it."""
    if not (optional and value is None) and not whole_at_least(value, least):
        raise MilpError(f"{name} = {value!r}: must be a whole number, at least {least}")


def require_gap(name: str, gap: object) -> None:
    """A relative gap a solve stops at: a number in [0, 1), else a :class:`MilpError`
    naming it (NaN, -1 or "x" reported OPTIMAL)."""
    if not (is_number(gap) and 0 <= gap < 1):  # type: ignore[operator]
        raise MilpError(f"{name} = {gap!r}: must be a relative gap in [0, 1)")


def require_slots(slots: object) -> int | None:
    """A horizon in slots: ``None`` for the default, else a whole number, at least 1."""
    if slots is None:
        return None
    if not whole_at_least(slots, 1):
        raise MilpError(f"slots = {slots!r}: must be a whole number of slots, at least 1")
    return int(slots)


def require_cost(name: str, cost: object) -> None:
    """``None``, or a plan's cost: a finite number, at least 0 (NaN cut no window and
    ended the Lagrangian bound's rounds after two)."""
    if cost is None:
        return
    if not (is_number(cost) and math.isfinite(cost) and cost >= 0):  # type: ignore[arg-type,operator]
        raise MilpError(f"{name} = {cost!r}: must be the cost of a plan, a number >= 0")


def require_slot(instance: Instance) -> float:
    """The instance's slot length; :class:`MilpError` with a hint if it has none."""
    if instance.slot is None:
        raise MilpError(
            f"instance {instance.name!r} has no slot length: the time-indexed MILP needs one "
            "(set 'slot' in the instance, or give one: slot= in the library, --slot on "
            "the command line)"
        )
    return instance.slot


def require_no_suspend(instance: Instance) -> None:
    """The MILP's start indicators price every new placement as a relaunch; a cheaper
    resume on the very GPUs a job was suspended from (``suspend_hours``) would need
    per-GPU placement variables. Refused with :class:`MilpError` rather than mispriced."""
    for job in instance.jobs:
        if instance.resume(job) < instance.relaunch(job):
            raise MilpError(
                f"job {job.id!r} resumes in {instance.resume(job):g} h but relaunches in "
                f"{instance.relaunch(job):g} h (suspend_hours): the MILP prices every start "
                "as a relaunch and cannot tell a resume on the same GPUs; drop suspend_hours "
                "to solve it"
            )


def require_one_shared_shape(instance: Instance) -> None:
    """A shared tenancy (``share[j,n,u,t]``) names a GPU, not a configuration, so a job
    may have one shared configuration per GPU type only where they hold different CPU
    cores or DRAM (E3): otherwise the model could not tell what the tenant holds.
    Refused with :class:`MilpError` rather than mispriced."""
    for job in instance.jobs:
        seen: dict[str, Config] = {}
        for c in instance.allowed_configs(job):
            if not c.shared:
                continue
            other = seen.setdefault(c.gpu_type, c)
            if other != c:
                raise MilpError(
                    f"job {job.id!r} has two shared configurations on {c.gpu_type} "
                    f"({other.label} and {c.label}): the MILP's shared tenancy names the GPU, "
                    "not the CPU cores and DRAM; keep one shared configuration per GPU type"
                )


def require_no_distributed(instance: Instance) -> None:
    """A distributed configuration (E4) puts any number of its GPUs on each node and
    holds link bandwidth: the model would need integer per-node GPU counts and a
    variable per link, which it does not have. Refused with :class:`MilpError` rather
    than solved wrong; the simulator's policies run such instances."""
    for job in instance.jobs:
        spread = [c.label for c in instance.allowed_configs(job) if c.distributed]
        if spread:
            raise MilpError(
                f"job {job.id!r} has distributed configurations ({', '.join(spread)}): the "
                "MILP places whole GPUs of one node or whole nodes only and models no links "
                "(docs/model.md, E4); run it with a policy (gpusched online / compare)"
            )


def _charging(instance: Instance) -> str:
    """The first field of ``instance`` that charges the nodes' own power, with its value
    (a refusal named none, a hostile-input hunt)."""
    for i, g in enumerate(instance.gpu_types):
        if g.idle_w > 0:
            return f"gpu_types[{i}].idle_w = {g.idle_w:g}"
    for i, n in enumerate(instance.nodes):
        if n.base_w > 0:
            return f"nodes[{i}].base_w = {n.base_w:g}"
    boot = instance.power_off.boot_kwh if instance.power_off is not None else 0.0
    return f"power_off.boot_kwh = {boot:g}"


def require_billable(instance: Instance, slots: int, slot: float, idle_bound: bool = False) -> None:
    """The MILP prices each slot at one price: a price or carbon series must be constant
    within every slot of the horizon (breakpoints on the slot grid, as hourly prices are
    for slots dividing an hour). The nodes' own power (idle power, on nodes always on or
    powered off when empty, and boots) it bounds from below (:mod:`milp.idle`,
    :mod:`milp.power_off`), where the caller says it may (``idle_bound``: a whole
    instance, solved by :func:`milp.solve`). Refused with :class:`MilpError` rather than
    mispriced."""
    if instance.node_power and not idle_bound:
        what = "nodes powered off when empty (power_off)" if instance.power_off else "idle power"
        raise MilpError(
            f"{_charging(instance)}: instance {instance.name!r} charges the nodes' own power; "
            f"{what} is bounded only over a whole instance (docs/milp.md, 'Idle power: a "
            "bound, not a price'; milp.solve and branch-and-price bound it); run it with a "
            "policy, with branch-and-price (improve --method colgen), or without idle power"
        )
    series = [("prices", instance.prices)]
    if instance.carbon is not None:
        series.append(("carbon", instance.carbon.intensity))
    for name, s in series:
        if s is None:
            continue
        off = s.off_grid(slot, slots * slot)
        if off:
            raise MilpError(
                f"the {name} series of {instance.name!r} changes at {off[0]:g} h, inside a "
                f"slot of {slot:g} h: the MILP prices each slot at one value; give a slot "
                "that divides the series' intervals"
            )
