"""The plan checker: lists every way a plan breaks the model (docs/model.md, 'Plans and
their cost').

Checked: known jobs and allowed configurations, release times, slot alignment, GPUs that
exist and match the configuration's shape (one node, whole nodes of one type, one shared
GPU), one configuration per job at a time, each job reaching its maximum epochs, and the
capacity of every GPU at every instant (exclusive use, or at most ``K_max`` shared jobs
whose memory fits), of every node's CPU cores and DRAM where it states them (E3), and
of every network link, and each distributed segment's span (E4).
"""

from __future__ import annotations

import itertools
import numbers
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from instances import Config, GpuRef, Instance, Job, LinkId, Plan, PlanError, Segment
from instances.distribution import reaches
from instances.fields import huge_integer
from instances.limits import MAX_PLAN_HOURS
from instances.topology import within
from validation.timeline import TIME_TOL, Timeline, slot_ceil


@dataclass(frozen=True)
class Violation:
    """One broken rule: its kind, the job (if any), the time (hours) and the details."""

    kind: str
    job: str | None
    time: float | None
    detail: str

    def __str__(self) -> str:
        who = f"job {self.job!r}" if self.job else "plan"
        when = f" at t={self.time:g}h" if self.time is not None else ""
        return f"[{self.kind}] {who}{when}: {self.detail}"


def _on_grid(t: float, slot: float) -> bool:
    k = round(t / slot)
    return abs(k * slot - t) <= 1e-7 * max(1.0, abs(t))


def gpu_shape(inst: Instance, cfg: Config, gpus: tuple[GpuRef, ...]) -> list[str]:
    """Problems with ``gpus`` as the GPUs of configuration ``cfg`` (a segment's, or an
    allocation a policy gives the engine): pairs (node id, GPU index) of existing GPUs
    of its type, none twice, as many as it takes, on as many nodes as it spans."""
    for ref in gpus:
        if not (isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[0], str)):
            return [f"GPU {ref!r} is not a pair (node id, GPU index)"]
    out: list[str] = []
    if len(set(gpus)) != len(gpus):
        out.append(f"names a GPU twice: {list(gpus)}")
    for node_id, idx in gpus:
        if not inst.has_node(node_id):
            out.append(f"unknown node {node_id!r}")
            continue
        if not isinstance(idx, numbers.Integral) or isinstance(idx, bool):
            # GPUs 0 and 0.5 of a one-GPU node were two GPUs to the sweep
            out.append(f"GPU index {idx!r} of node {node_id!r} is not a whole number")
            continue
        node = inst.node(node_id)
        if node.gpu_type != cfg.gpu_type:
            out.append(
                f"node {node_id!r} has {node.gpu_type} GPUs, config {cfg.label} needs "
                f"{cfg.gpu_type}"
            )
        if not 0 <= idx < node.num_gpus:
            out.append(f"node {node_id!r} has no GPU {idx} (it has {node.num_gpus})")
    if out:
        return out
    per_node: dict[str, int] = defaultdict(int)
    for node_id, _ in gpus:
        per_node[node_id] += 1
    want_gpus = 1 if cfg.shared else cfg.gpus
    if len(gpus) != want_gpus:
        out.append(f"config {cfg.label} needs {want_gpus} GPU(s), {len(gpus)} named")
    elif cfg.distributed:
        assert inst.network is not None and cfg.span is not None  # the instance checked
        span = inst.network.span(per_node)
        if not within(span, cfg.span):
            out.append(
                f"config {cfg.label} keeps its GPUs within one {cfg.span}, the "
                f"nodes {sorted(per_node)} span the {span}"
            )
    elif len(per_node) != cfg.nodes:
        out.append(f"config {cfg.label} needs {cfg.nodes} node(s), {len(per_node)} used")
    elif cfg.nodes > 1 and any(k != cfg.gpus_per_node for k in per_node.values()):
        out.append(
            f"config {cfg.label} needs {cfg.gpus_per_node} GPUs on each node, got {dict(per_node)}"
        )
    return out


def require_plan(plan: object) -> None:
    """A :class:`PlanError` naming a plan argument that is not a Plan (a file's name
    given for it met an AttributeError inside)."""
    if not isinstance(plan, Plan):
        raise PlanError(f"plan = {plan!r:.60}: must be a Plan")


def require_types(instance: object, plan: object) -> None:
    """:func:`require_plan`, and a :class:`PlanError` naming an instance argument that
    is not an Instance."""
    require_plan(plan)
    if not isinstance(instance, Instance):
        raise PlanError(f"instance = {instance!r:.60}: must be an Instance")


def check_plan(instance: Instance, plan: Plan) -> list[Violation]:
    """Every violation of the plan, in a stable order; an empty list means feasible:
    each segment's own problems in plan order, then each job's (in the instance's
    order), then the capacity sweeps over the segments whose GPUs are sound."""
    require_types(instance, plan)
    v: list[Violation] = []
    usable: list[Segment] = []
    timeless: set[int] = set()  # segments without a time a timeline can hold
    for s in plan:
        found, sound = _segment_problems(instance, s)
        v.extend(found)
        if sound:
            usable.append(s)
        elif found and found[0].kind == "bad-time":
            timeless.add(id(s))
    ends: dict[int, float] = {}  # by segment id: its end, or the job's completion if sooner
    for job in instance.jobs:
        segs = tuple(s for s in plan.for_job(job.id) if id(s) not in timeless)
        found, done = _job_problems(instance, job, segs)
        v.extend(found)
        ends.update(done)
    live = [(s, ends.get(id(s), s.end)) for s in usable]
    v.extend(_capacity(instance, live))
    v.extend(_host_capacity(instance, live))
    v.extend(_link_capacity(instance, live))
    return v


def require_feasible(instance: Instance, plan: Plan) -> None:
    """:class:`PlanError` listing every violation of ``plan``, if it has any."""
    violations = check_plan(instance, plan)
    if violations:
        raise PlanError(
            f"the plan is infeasible for instance {instance.name!r} "
            f"({len(violations)} violation(s)):",
            tuple(violations),
        )


def _time_text(t: float) -> str:
    """A segment's time as text: an integer past any double (10**400) as its size."""
    try:
        return f"{float(t):g}"
    except OverflowError:
        return huge_integer(int(t))


def _segment_problems(instance: Instance, s: Segment) -> tuple[list[Violation], bool]:
    """One segment's problems on its own, and whether its GPUs may be swept for
    capacity (a known job, a positive length, an allowed configuration, sound GPUs)."""
    if not instance.has_job(s.job):
        return [Violation("unknown-job", s.job, s.start, "not a job of the instance")], False
    # within a plan file's bound (NaN fails the test too): 2e14 h drifted a priced bill
    # and an integer past any double (10**400) overflowed the test for finite
    if not all(-MAX_PLAN_HOURS <= t <= MAX_PLAN_HOURS for t in (s.start, s.end)):
        why = (
            f"segment [{_time_text(s.start)}, {_time_text(s.end)}) needs a finite start and "
            f"end, within {MAX_PLAN_HOURS:g} h"
        )
        return [Violation("bad-time", s.job, None, why)], False
    if not (s.end > s.start):
        why = (
            f"segment ends at {s.end:g}, before it starts"
            if s.end < s.start
            else "segment has no length (it ends where it starts)"
        )
        return [Violation("empty-segment", s.job, s.start, why)], False
    out: list[Violation] = []
    if s.start < -TIME_TOL:
        out.append(Violation("negative-time", s.job, s.start, "segment starts before t=0"))
    if s.config not in instance.allowed_configs(s.job):
        why = f"{s.config.label} is not a configuration this job may use"
        out.append(Violation("config-not-allowed", s.job, s.start, why))
        return out, False
    out.extend(_timing(instance, s))
    bad = gpu_shape(instance, s.config, s.gpus)
    out.extend(Violation("bad-gpus", s.job, s.start, b) for b in bad)
    return out, not bad


def _timing(instance: Instance, s: Segment) -> list[Violation]:
    """A segment before its job's release, or off the slot grid."""
    out = []
    release = instance.job(s.job).release
    if s.start < release - TIME_TOL:
        why = f"starts before its release time {release:g}"
        out.append(Violation("before-release", s.job, s.start, why))
    slot = instance.slot
    if slot is not None and not (_on_grid(s.start, slot) and _on_grid(s.end, slot)):
        why = f"segment [{s.start:g}, {s.end:g}) is not aligned to slots of {slot:g} h"
        out.append(Violation("off-slot", s.job, s.start, why))
    return out


def _job_problems(
    instance: Instance, job: Job, segs: tuple[Segment, ...]
) -> tuple[list[Violation], dict[int, float]]:
    """A job's segments together: two at once, not reaching its maximum epochs, one
    after its completion; and, by segment id, when each frees its resources (its end,
    or the completion if sooner) once the job completes."""
    out: list[Violation] = []
    ordered = sorted(segs, key=lambda s: s.start)
    for a, b in itertools.pairwise(ordered):
        if b.start < a.end - TIME_TOL:
            why = (
                f"runs {a.config.label} and {b.config.label} at once "
                f"([{a.start:g},{a.end:g}) and [{b.start:g},{b.end:g}))"
            )
            out.append(Violation("overlap", job.id, b.start, why))
    tl = Timeline.of(instance, job.id, segs)
    if not tl.complete:
        # enough digits that a shortfall of a rounding never reads "5 of its 5"
        done_text = f"{tl.progress:.6g}"
        if float(done_text) >= job.max_epochs:
            done_text = f"{tl.progress!r} (short by {job.max_epochs - tl.progress:.3g})"
        why = f"reaches {done_text} of its {job.max_epochs:g} epochs"
        return [*out, Violation("incomplete", job.id, None, why)], {}
    done = slot_ceil(tl.time_at(job.max_epochs), instance.slot)
    # epochs done before each segment: one starting within the clock's tolerance before
    # the completion that the job still needs is not after it (a review, 2026-12-07:
    # 1e-3-h epochs, a last piece of 5e-10 h, and no form of the plan was accepted)
    before = {id(p.segment): p.w0 for p in tl.pieces}
    ends = {}
    for s in ordered:
        if s.start >= done - TIME_TOL and reaches(before[id(s)], job.max_epochs):
            why = f"segment starts after the job completed at {done:g}"
            out.append(Violation("after-completion", job.id, s.start, why))
        ends[id(s)] = min(s.end, done)  # resources are free once the job is done
    return out, ends


def relaunch_notes(instance: Instance, plan: Plan) -> list[Violation]:
    """Segments too short to get past their relaunch overhead (docs/model.md, E1): they
    hold GPUs and draw power but make no progress. Not infeasible, only wasteful, so
    they are notes beside :func:`check_plan`'s violations, not among them."""
    require_types(instance, plan)
    out: list[Violation] = []
    for job in instance.jobs:
        if instance.relaunch(job) <= 0:
            continue
        tl = Timeline.of(instance, job.id, plan.for_job(job.id))
        for p in tl.pieces:
            s = p.segment
            done = reaches(p.w0, job.max_epochs)
            if p.lost > 0 and p.w1 <= p.w0 and not done and s.end > s.start:
                out.append(
                    Violation(
                        "overhead-only",
                        job.id,
                        s.start,
                        f"segment [{s.start:g}, {s.end:g}) on {s.config.label} ends within "
                        f"its relaunch overhead of {instance.relaunch(job):g} h: no progress",
                    )
                )
    return out


def _starts(
    uses: list[tuple[float, float, Segment]],
) -> Iterator[tuple[float, Segment, list[Segment]]]:
    """At each segment's start, in time order: the time, the segment and the segments
    running then (itself included). Ends come before starts at the same instant: a
    resource freed at ``t`` is free for a segment starting at ``t``; and, as every other
    check here, within ``TIME_TOL`` (a segment ending at ``0.1 * 3`` overlapped one
    starting at ``0.3`` by 5.6e-17 h and was reported as sharing a GPU). A segment
    shorter than twice the tolerance keeps its own end, after its start."""
    events = sorted(
        [(a, 1, s) for a, _, s in uses]
        + [(b - TIME_TOL if b - a > 2 * TIME_TOL else b, 0, s) for a, b, s in uses],
        key=lambda e: (e[0], e[1]),
    )
    active: list[Segment] = []
    for t, kind, s in events:
        if kind == 0:
            active.remove(s)
            continue
        active.append(s)
        yield t, s, active


def _capacity(instance: Instance, segs: list[tuple[Segment, float]]) -> list[Violation]:
    """GPU-by-GPU sweep: exclusive use, or shared within slot count and memory."""
    # A multi-node segment reserves every GPU of its nodes.
    uses: dict[GpuRef, list[tuple[float, float, Segment]]] = defaultdict(list)
    for s, end in segs:
        if end <= s.start:
            continue
        if s.config.nodes > 1:
            refs: list[GpuRef] = [
                (n, i) for n in s.node_ids for i in range(instance.node(n).num_gpus)
            ]
        else:
            refs = list(s.gpus)
        for r in refs:
            uses[r].append((s.start, end, s))
    out: list[Violation] = []
    for ref in sorted(uses):
        gpu = instance.gpu(instance.node(ref[0]).gpu_type)
        reported: set[tuple[str, ...]] = set()
        for t, s, active in _starts(uses[ref]):
            problem = _gpu_problem(instance, active, gpu.memory_gb)
            key = tuple(sorted(x.job for x in active))
            if problem and key not in reported:
                reported.add(key)
                out.append(
                    Violation("capacity", s.job, t, f"GPU {ref[1]} of node {ref[0]!r}: {problem}")
                )
    return out


def _gpu_problem(instance: Instance, active: list[Segment], memory_gb: float) -> str | None:
    if len(active) <= 1:
        return None
    jobs = sorted(x.job for x in active)
    if any(not x.config.shared for x in active):
        return f"used by {jobs} at once, not all as shared slots"
    if len(active) > instance.max_share:
        return f"shared by {len(active)} jobs {jobs}, at most {instance.max_share} allowed"
    mem = sum(instance.job(x.job).memory_gb for x in active)
    if mem > memory_gb + 1e-9:
        return f"shared jobs {jobs} need {mem:g} GB, the GPU has {memory_gb:g} GB"
    return None


def _host_capacity(instance: Instance, segs: list[tuple[Segment, float]]) -> list[Violation]:
    """Node-by-node sweep of the CPU cores and DRAM the running segments hold (E3), on
    the nodes that state them; a configuration that states none holds none."""
    uses: dict[str, list[tuple[float, float, Segment]]] = defaultdict(list)
    for s, end in segs:
        if end > s.start and s.config.host_resources:
            for n in s.node_ids:
                uses[n].append((s.start, end, s))
    out: list[Violation] = []
    for node_id in sorted(uses):
        node = instance.node(node_id)
        if node.cpu_cores is None and node.dram_gb is None:
            continue
        reported: set[tuple[str, ...]] = set()
        for t, s, active in _starts(uses[node_id]):
            cpus = sum(x.config.cpus_per_node for x in active)
            dram = sum(x.config.dram_per_node for x in active)
            jobs = tuple(sorted(x.job for x in active))
            problem = None
            if node.cpu_cores is not None and cpus > node.cpu_cores:
                problem = f"jobs {list(jobs)} hold {cpus} CPU cores, it has {node.cpu_cores}"
            elif node.dram_gb is not None and dram > node.dram_gb + 1e-9:
                problem = f"jobs {list(jobs)} hold {dram:g} GB of DRAM, it has {node.dram_gb:g}"
            if problem and jobs not in reported:
                reported.add(jobs)
                out.append(Violation("host-capacity", s.job, t, f"node {node_id!r}: {problem}"))
    return out


def _link_capacity(instance: Instance, segs: list[tuple[Segment, float]]) -> list[Violation]:
    """Link-by-link sweep of the bandwidth distributed segments hold (E4): each holds its
    configuration's ``net_gbps`` on every link between its nodes."""
    net = instance.network
    if net is None:
        return []
    uses: dict[LinkId, list[tuple[float, float, Segment]]] = defaultdict(list)
    for s, end in segs:
        if end > s.start and s.config.distributed:
            for link in net.links(s.node_ids):
                uses[link].append((s.start, end, s))
    out: list[Violation] = []
    for link in sorted(uses):
        cap = net.capacity[link]
        reported: set[tuple[str, ...]] = set()
        for t, s, active in _starts(uses[link]):
            held = sum(x.config.net_gbps or 0.0 for x in active)
            jobs = tuple(sorted(x.job for x in active))
            if held > cap + 1e-9 and jobs not in reported:
                reported.add(jobs)
                out.append(
                    Violation(
                        "link-capacity",
                        s.job,
                        t,
                        f"{_link_name(link)}: jobs {list(jobs)} hold "
                        f"{held:g} Gb/s, it carries {cap:g}",
                    )
                )
    return out


def _link_name(link: LinkId) -> str:
    kind, ident = link
    return f"the NIC of node {ident!r}" if kind == "node" else f"the uplink of {kind} {ident!r}"
