"""The problem: immutable data model, cost primitives, plans, JSON I/O and generators."""

from instances.distribution import EpochDistribution
from instances.errors import InstanceError, PlanError
from instances.io import (
    instance_from_dict,
    instance_to_dict,
    plan_from_dict,
    plan_to_dict,
    read_instance,
    read_plan,
    write_instance,
    write_plan,
)
from instances.model import (
    Config,
    GpuType,
    Instance,
    Job,
    Node,
    Requested,
    TardinessMode,
    fits_node,
)
from instances.plan import GpuRef, Plan, Segment, slot_ceil
from instances.topology import Domain, LinkId, Network, Rack, Topology

__all__ = [
    "Config",
    "Domain",
    "EpochDistribution",
    "GpuRef",
    "GpuType",
    "Instance",
    "InstanceError",
    "Job",
    "LinkId",
    "Network",
    "Node",
    "Plan",
    "PlanError",
    "Rack",
    "Requested",
    "Segment",
    "TardinessMode",
    "Topology",
    "fits_node",
    "instance_from_dict",
    "instance_to_dict",
    "plan_from_dict",
    "plan_to_dict",
    "read_instance",
    "read_plan",
    "slot_ceil",
    "write_instance",
    "write_plan",
]
