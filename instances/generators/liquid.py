"""Liquid's setting (Gu et al., IEEE TPDS 2022): a small cluster in racks and domains,
communication-heavy multi-GPU jobs arriving in bursts, user requests larger than the
jobs need.

- **Cluster.** ``racks`` racks of ``nodes_per_rack`` nodes with ``gpus_per_node`` V100
  each (the paper's testbed had 2 T4 per node; Gavel measured no T4), racks grouped in
  ``domains``; every NIC ``nic_gbps``, every switch's uplink its children's sum over
  ``oversubscription`` (a common 4:1 design). The topology goes into the instance (E4).
- **Jobs.** A Gavel job type of a data-parallel family (ResNet-18, ResNet-50,
  Transformer, LM), its single-V100 iteration time from Gavel's measured throughput
  (MIT); a Philly duration as its single-GPU run time; its gradient size from the
  family's parameter count (:data:`PARAMETERS`, fp32).
- **Speed on g GPUs.** Strong scaling (the global batch is the job's): an iteration
  computes ``t_c / g`` on each GPU and then all-reduces the gradient in a ring,
  ``2 (g - 1) / g * S / B`` seconds over the bottleneck bandwidth ``B`` (Gb/s). Inside
  one node ``B`` is ``intra_node_gbps`` (PCIe); spread over a rack, a domain or the
  cluster it is the bandwidth the configuration holds on its links (``net_gbps``): the
  NIC within a rack, half the rack's uplink across racks, half the domain's uplink
  across domains (two such jobs per uplink at once). Contention beyond what is held is
  not modelled (docs/model.md, E4).
- **Configurations.** For g in 1, 2, 4, 8: on one node where it fits (exclusive), and
  spread within a rack, a domain and the cluster (distributed) where those hold g GPUs;
  a shared slot for one GPU (Gavel's co-location ratio).
- **Requests.** The knee (the fewest GPUs whose best epoch time is within ``knee_tolerance``
  of the fastest, Liquid's "law of diminishing marginal utility") is what a job needs;
  its user asks for twice that (at most 8) with probability ``inflated``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from instances.errors import InstanceError
from instances.generators.common import assemble, draw_tightness, due_date
from instances.generators.early_stopping import make_distribution
from instances.generators.measured_overheads import family_relaunch_hours
from instances.generators.realdata import MEMORY_GB, family, gavel_interference, philly_jobs
from instances.generators.realdata import gavel_throughputs as _gavel
from instances.generators.spec import MIN_RATE, Bound, GeneratorSpec
from instances.generators.synthetic import gpu_specs
from instances.limits import MAX_JOBS, MAX_RUN_HOURS
from instances.model import Config, Instance, Job, Node, Requested
from instances.topology import Domain, Rack, Topology

# Parameters (millions) of each family as Gavel runs it: ResNet-18 and ResNet-50 as in
# torchvision (He et al., 2016); the Transformer of Vaswani et al. (2017), base size;
# LM, PyTorch's word-language-model example at its defaults (2-layer LSTM, 200 units,
# Wikitext-2's 33,278 words: 6.7 M embedding + 6.7 M decoder + 0.6 M LSTM).
PARAMETERS = {"ResNet-18": 11.7, "ResNet-50": 25.6, "Transformer": 65.0, "LM": 14.0}
FAMILIES = tuple(PARAMETERS)
GPU_COUNTS = (1, 2, 4, 8)
GPU = "v100"


@dataclass(frozen=True)
class LiquidSpec(GeneratorSpec):
    """Which jobs, on which cluster (and :class:`GeneratorSpec`'s options). Times in
    hours, bandwidths Gb/s."""

    jobs: int = 60
    racks: int = 4
    nodes_per_rack: int = 5
    domains: int = 2
    gpus_per_node: int = 2
    nic_gbps: float = 25.0
    intra_node_gbps: float = 96.0  # PCIe 3.0 x16 all-reduce, about 12 GB/s
    oversubscription: float = 4.0
    rate: float = 2.0  # bursts per hour, Poisson
    burst: int = 4  # jobs per burst, uniform in 1..burst
    inflated: float = 0.75  # share of users asking for twice the knee
    knee_tolerance: float = 0.1
    min_hours: float = 0.5
    max_hours: float = 12.0
    sharing: bool = True

    BOUNDS: ClassVar[Mapping[str, Bound]] = {
        **GeneratorSpec.BOUNDS,
        "jobs": Bound(1, MAX_JOBS),
        "racks": Bound(1, 64),
        "nodes_per_rack": Bound(1, 64),
        "domains": Bound(1, 64),
        "gpus_per_node": Bound(1, 16),
        "burst": Bound(1, 64),
        "nic_gbps": Bound(0, 1e6, open_low=True),
        "intra_node_gbps": Bound(0, 1e6, open_low=True),
        "rate": Bound(MIN_RATE, 1e6),
        "oversubscription": Bound(1, 64),
        "inflated": Bound(0, 1),
        "min_hours": Bound(0, MAX_RUN_HOURS, open_low=True),
        "max_hours": Bound(0, MAX_RUN_HOURS, open_low=True),
    }
    # at most one domain per rack
    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = (
        ("domains", "racks"),
        ("min_hours", "max_hours"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.knee_tolerance < 1:
            raise InstanceError("knee_tolerance", self.knee_tolerance, "must be in [0, 1)")


def topology(spec: LiquidSpec) -> tuple[list[Node], Topology]:
    """The nodes (rack by rack) and the network of ``spec``."""
    rack_up = spec.nodes_per_rack * spec.nic_gbps / spec.oversubscription
    per_domain = -(-spec.racks // spec.domains)
    domain_up = per_domain * rack_up / spec.oversubscription
    racks = [Rack(f"rack{r}", rack_up, f"dom{r // per_domain}") for r in range(spec.racks)]
    used = sorted({r // per_domain for r in range(spec.racks)})
    domains = [Domain(f"dom{d}", domain_up) for d in used]
    nodes = [
        Node(f"r{r}n{i}", GPU, spec.gpus_per_node, rack=f"rack{r}")
        for r in range(spec.racks)
        for i in range(spec.nodes_per_rack)
    ]
    return nodes, Topology(spec.nic_gbps, tuple(racks), tuple(domains))


def span_bandwidths(spec: LiquidSpec) -> dict[str, tuple[float, int]]:
    """Per span: the Gb/s a configuration of that span holds, and the GPUs the span's
    largest group has (a span that cannot hold g GPUs gives no configuration)."""
    nodes, topo = topology(spec)
    rack_up, domain_up = topo.racks[0].uplink_gbps, topo.domains[0].uplink_gbps
    per_domain = -(-spec.racks // spec.domains)
    g = spec.gpus_per_node
    return {
        "rack": (spec.nic_gbps, spec.nodes_per_rack * g),
        "domain": (min(spec.nic_gbps, rack_up / 2), per_domain * spec.nodes_per_rack * g),
        "cluster": (min(spec.nic_gbps, rack_up / 2, domain_up / 2), len(nodes) * g),
    }


def epoch_seconds(t_c: float, params_m: float, gpus: int, gbps: float) -> float:
    """Seconds per iteration on ``gpus`` GPUs at ``gbps``: compute split over the GPUs,
    then a ring all-reduce of the fp32 gradient (``params_m`` million parameters)."""
    grad_gbit = params_m * 1e6 * 4 * 8 / 1e9
    return t_c / gpus + 2 * (gpus - 1) / gpus * grad_gbit / gbps


def knee(times: dict[int, float], tolerance: float) -> int:
    """The fewest GPUs whose time is within ``tolerance`` of the fastest."""
    best = min(times.values())
    return min(g for g, t in times.items() if t <= (1 + tolerance) * best)


def liquid(spec: LiquidSpec, seed: int = 0, name: str | None = None) -> Instance:
    """An instance of Liquid's setting; same seed, same instance."""
    rng = np.random.default_rng(seed)
    nodes, topo = topology(spec)
    spans = span_bandwidths(spec)
    kinds = sorted(t for t in _gavel() if family(t) in PARAMETERS)
    trace = [h for _, h, _ in philly_jobs() if spec.min_hours <= h <= spec.max_hours]
    if not trace:
        raise InstanceError(
            "min_hours",
            spec.min_hours,
            f"no Philly job of the bundled day runs {spec.min_hours:g} to {spec.max_hours:g} h",
        )
    jobs: list[Job] = []
    release = 0.0
    left = 0
    for k in range(spec.jobs):
        if left == 0:  # a new burst
            release += float(rng.exponential(1.0 / spec.rate)) if k else 0.0
            left = int(rng.integers(1, spec.burst + 1))
        left -= 1
        job_type = str(rng.choice(kinds))
        fam = family(job_type)
        t_c = 1.0 / _gavel()[job_type][(GPU, 1)]  # seconds per iteration on one V100
        hours = trace[int(rng.integers(len(trace)))]
        E = int(rng.integers(spec.epochs[0], spec.epochs[1] + 1))
        iters = hours * 3600.0 / t_c / E  # iterations per epoch
        times: dict[Config, float] = {}
        for g in GPU_COUNTS:
            if g <= spec.gpus_per_node:
                sec = epoch_seconds(t_c, PARAMETERS[fam], g, spec.intra_node_gbps)
                times[Config(GPU, g)] = iters * sec / 3600.0
            if g == 1:
                continue
            for span, (gbps, room) in spans.items():
                if g <= room:
                    sec = epoch_seconds(t_c, PARAMETERS[fam], g, gbps)
                    times[Config(GPU, g, span=span, net_gbps=gbps)] = iters * sec / 3600.0  # type: ignore[arg-type]
        rho = gavel_interference().get((job_type, GPU))
        if spec.sharing and rho and MEMORY_GB[fam] <= gpu_specs()[GPU].memory_gb:
            times[Config(GPU, 1, shared=True)] = times[Config(GPU, 1)] / rho
        best: dict[int, float] = {}
        for c, t in times.items():
            if not c.shared:
                best[c.gpus] = min(t, best.get(c.gpus, t))
        need = knee(best, spec.knee_tolerance)
        asked = min(max(best), 2 * need) if rng.random() < spec.inflated else need
        delta = family_relaunch_hours(fam) if spec.relaunch == "measured" else None
        at = round(release, 4)
        fastest = E * min(times.values())
        due = due_date(at, draw_tightness(rng, spec), fastest, spec.slot, delta or 0.0)
        jobs.append(
            Job(
                f"q{k}",
                at,
                due,
                make_distribution(spec.early_stopping, E, spec.blocks),
                times,
                MEMORY_GB[fam],
                job_type=job_type,
                requested=Requested(asked, GPU),
                relaunch_hours=delta,
            )
        )
    label = name or f"liquid-{len(nodes)}n{spec.jobs}j-s{seed}"
    return assemble((gpu_specs()[GPU],), nodes, jobs, spec, label, topology=topo)
