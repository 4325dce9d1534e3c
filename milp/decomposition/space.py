"""Where a job can be in one slot, and what that holds in the master.

A *choice* is a configuration and a placement: one node (exclusive), a set of whole
nodes (multi-node), or one shared-GPU label ``u`` of a node (shared). Labels are the
compact MILP's (docs/milp.md): per node, ``U_n = min(G_n, jobs that can share there)``
GPUs that may be in shared mode, each a master variable ``y[n,u,t]`` in ``[0, 1]``.

The master's coupling rows, per slot ``t`` (each a *resource* here, with one row per
slot):

- ``gpu n``: exclusive GPUs on ``n`` + ``G_n`` per multi-node column on it (a node of a
  multi-node configuration hosts nothing else) + ``sum_u y[n,u,t] <= G_n``;
- ``tenants n,u``: tenants of label ``u`` ``<= K_max * y[n,u,t]``;
- ``memory n,u``: their memory ``<= M * y[n,u,t]`` (only where the K_max largest
  sharers of that GPU type could overflow it; elsewhere it is implied);
- ``link C,n,u``: the jobs of ``C`` are tenants of label ``u`` at most ``y[n,u,t]``
  together, for every maximal clique ``C`` of the label's *conflict graph* (the jobs
  that may share the GPU type, two of them joined when their memory together
  overflows the GPU, so no two of ``C`` are ever its tenants at once); a job that
  conflicts with none is a clique of its own: job ``j`` at most ``y[n,u,t]`` (a tenant
  makes its GPU shared, all of it). Implied for whole numbers by the rows above, these
  rows cut fractional points: a single job's row keeps a fractional ``y`` from paying
  for a fraction of a GPU under a whole tenant (without it the relaxation charged a
  12 GB tenant 0.75 of a 16 GB GPU, and branching on one ``y`` at a time moved tenants
  between symmetric labels without end); a clique's row keeps two tenants that cannot
  share from splitting a third over two GPUs (on ``suite-share-2n6j-s2`` without
  overheads, an 8 GB tenant half on each of two 16 GB GPUs beside a 12 GB tenant on
  each met every memory row, and hundreds of search nodes held that bound). The
  memory ``m_i + m_j > M`` makes the conflict graph a threshold graph: its maximal
  cliques are at most one per job;
- ``cpu n`` and ``dram n`` (E3) where the node states them.

These are the compact MILP's rows (with the link rows, its ``share <= shared_gpu``),
so the master is exact: a column names the node (and label) of every slot, and a plan
keeps a job's GPUs while it stays on a node with its configuration (and a label its GPU
while it stays in shared mode), so a column's cost is its job's cost in the plan
(:mod:`milp.decomposition.plans`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import scipy.sparse as sp

from instances import Config, Instance, Node
from milp.data import JobData, MilpData

GPU, TENANTS, MEMORY, LINK, CPU, DRAM = "gpu", "tenants", "memory", "link", "cpu", "dram"


@dataclass(frozen=True)
class Resource:
    """One family of master rows, one per slot: ``kind`` on ``node`` (and ``label``,
    and for a link row its clique's job ids, one a line, in ``job``), with right-hand
    side ``capacity``."""

    kind: str
    node: str
    label: int
    capacity: float
    job: str = ""


@dataclass(frozen=True)
class Label:
    """Shared label ``u`` of ``node`` and the resources its ``y`` is in: the node's GPU
    row, its tenants and memory rows (``memory = -1``: none), and its link rows (one
    per maximal clique of the conflict graph of the jobs that may be its tenants)."""

    node: str
    u: int
    gpu: int
    tenants: int
    memory: int
    links: tuple[int, ...]


@dataclass(frozen=True)
class Choice:
    """A configuration (index ``k`` in the job's allowed configurations) on ``nodes``
    (one node, or a multi-node configuration's node set), on shared ``label`` of
    ``nodes[0]`` (``-1``: not shared), holding ``usage`` (resource index, amount)."""

    k: int
    nodes: tuple[str, ...]
    label: int
    usage: tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class JobSpace:
    """One job's data (:class:`milp.data.JobData`) and its choices; ``usage`` is the
    choices x resources matrix of what each holds in a slot."""

    jd: JobData
    choices: tuple[Choice, ...]
    usage: sp.csr_array

    @property
    def id(self) -> str:
        return self.jd.job.id


@dataclass(frozen=True)
class Space:
    """Every job's choices and the master's resources over ``d.slots`` slots;
    ``charge`` (jobs x slots, or ``None``): a weight on each job's probability of not
    having completed by each slot's end, which every column of the job pays
    (:mod:`milp.decomposition.lower`)."""

    d: MilpData
    resources: tuple[Resource, ...]
    jobs: tuple[JobSpace, ...]
    labels: tuple[Label, ...]
    charge: np.ndarray | None = field(default=None, compare=False)

    def window_charge(self, job: int) -> np.ndarray | None:
        """``charge`` of job ``job`` over its window's slots (``None`` if none)."""
        if self.charge is None:
            return None
        jd = self.jobs[job].jd
        return self.charge[job, jd.first_slot : jd.last_slot + 1]

    @property
    def instance(self) -> Instance:
        return self.d.instance

    @property
    def capacity(self) -> np.ndarray:
        return np.array([r.capacity for r in self.resources])

    def job(self, job_id: str) -> JobSpace:
        return self.jobs[self.index[job_id]]

    @property
    def index(self) -> dict[str, int]:
        return {js.id: i for i, js in enumerate(self.jobs)}


def build_space(d: MilpData) -> Space:
    """The choices of every job of ``d`` and the master's resources."""
    inst = d.instance
    res: list[Resource] = []
    ids: dict[tuple[str, str, int, str], int] = {}

    def rid(kind: str, node: str, label: int = -1, capacity: float = 0.0, job: str = "") -> int:
        key = (kind, node, label, job)
        if key not in ids:
            ids[key] = len(res)
            res.append(Resource(kind, node, label, capacity, job))
        return ids[key]

    for n in inst.nodes:
        rid(GPU, n.id, capacity=float(n.num_gpus))
        if n.cpu_cores is not None:
            rid(CPU, n.id, capacity=float(n.cpu_cores))
        if n.dram_gb is not None:
            rid(DRAM, n.id, capacity=float(n.dram_gb))
    memory_binds = _memory_binds(d)
    labels = []
    cliques: dict[str, list[tuple[str, ...]]] = {}  # per node, its labels' link rows' jobs
    for n in inst.nodes:
        sharers = [
            jd
            for jd in d.jobs.values()
            if any(c.shared and c.gpu_type == n.gpu_type for c in jd.configs)
        ]
        cliques[n.id] = conflict_cliques(
            {jd.job.id: float(jd.job.memory_gb) for jd in sharers},
            inst.gpu(n.gpu_type).memory_gb,
            inst.max_share,
        )
        for u in range(d.shared_labels[n.id]):
            mem = rid(MEMORY, n.id, u) if memory_binds[n.gpu_type] else -1
            links = tuple(rid(LINK, n.id, u, job=_key(c)) for c in cliques[n.id])
            gpu = ids[GPU, n.id, -1, ""]
            labels.append(Label(n.id, u, gpu, rid(TENANTS, n.id, u), mem, links))
    jobs = []
    for jd in d.jobs.values():
        choices = tuple(_choices(d, jd, ids, cliques))
        jobs.append(JobSpace(jd, choices, _usage_matrix(choices, len(res))))
    return Space(d, tuple(res), tuple(jobs), tuple(labels))


def _memory_binds(d: MilpData) -> dict[str, bool]:
    """Per GPU type: whether ``K_max`` of the jobs that may share it can overflow its
    memory (else the memory rows are implied by the tenant rows and left out)."""
    k = d.instance.max_share
    out = {}
    for gpu in d.instance.gpu_types:
        mems = sorted(
            (
                jd.job.memory_gb
                for jd in d.jobs.values()
                if any(c.shared and c.gpu_type == gpu.name for c in jd.configs)
            ),
            reverse=True,
        )
        out[gpu.name] = sum(mems[:k]) > gpu.memory_gb + 1e-9
    return out


Ids = dict[tuple[str, str, int, str], int]


def _host_usage(ids: Ids, cfg: Config, node: str) -> list[tuple[int, float]]:
    """The CPU cores and DRAM ``cfg`` holds on ``node`` where the node counts them."""
    out = []
    if cfg.cpus and (CPU, node, -1, "") in ids:
        out.append((ids[CPU, node, -1, ""], float(cfg.cpus_per_node)))
    if cfg.dram_gb and (DRAM, node, -1, "") in ids:
        out.append((ids[DRAM, node, -1, ""], float(cfg.dram_per_node)))
    return out


def conflict_cliques(
    memory: dict[str, float], gpu_memory: float, max_share: int
) -> list[tuple[str, ...]]:
    """The maximal cliques of the conflict graph of jobs (id: memory in GB) that may
    share a GPU of ``gpu_memory`` GB: two conflict when their memory together exceeds
    it (with ``max_share`` 1 no two share anyway, and the tenants row says so). Each
    clique's ids in the order given; every job is in at least one."""
    ids = list(memory)
    graph = nx.Graph()
    graph.add_nodes_from(ids)
    if max_share >= 2:
        graph.add_edges_from(
            (a, b)
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
            if memory[a] + memory[b] > gpu_memory + 1e-9
        )
    order = {j: i for i, j in enumerate(ids)}
    found = [tuple(sorted(c, key=order.__getitem__)) for c in nx.find_cliques(graph)]
    return sorted(found, key=lambda c: [order[j] for j in c])


def _key(clique: tuple[str, ...]) -> str:
    """A link row's name: its jobs' ids (printable, never containing a newline)."""
    return "\n".join(clique)


def _choices(
    d: MilpData, jd: JobData, ids: Ids, cliques: dict[str, list[tuple[str, ...]]]
) -> list[Choice]:
    """Every (configuration, placement) of the job, in a fixed order (configurations as
    allowed, nodes in file order)."""
    out = []
    for k, cfg in enumerate(jd.configs):
        hosts: tuple[Node, ...] = d.hosts(cfg)
        if cfg.shared:
            mem = float(jd.job.memory_gb)
            for n in hosts:
                mine = [c for c in cliques[n.id] if jd.job.id in c]
                for u in range(d.shared_labels[n.id]):
                    use = [(ids[TENANTS, n.id, u, ""], 1.0)]
                    use += [(ids[LINK, n.id, u, _key(c)], 1.0) for c in mine]
                    if (MEMORY, n.id, u, "") in ids:
                        use.append((ids[MEMORY, n.id, u, ""], mem))
                    out.append(Choice(k, (n.id,), u, tuple(use + _host_usage(ids, cfg, n.id))))
        elif cfg.nodes > 1:
            for group in itertools.combinations(hosts, cfg.nodes):
                use = []
                for n in group:  # whole nodes: nothing else runs on them
                    use += [
                        (ids[GPU, n.id, -1, ""], float(n.num_gpus)),
                        *_host_usage(ids, cfg, n.id),
                    ]
                out.append(Choice(k, tuple(n.id for n in group), -1, tuple(use)))
        else:
            for n in hosts:
                use = [(ids[GPU, n.id, -1, ""], float(cfg.gpus)), *_host_usage(ids, cfg, n.id)]
                out.append(Choice(k, (n.id,), -1, tuple(use)))
    return out


def _usage_matrix(choices: tuple[Choice, ...], resources: int) -> sp.csr_array:
    rows, cols, vals = [], [], []
    for c, ch in enumerate(choices):
        for r, a in ch.usage:
            rows.append(c)
            cols.append(r)
            vals.append(a)
    return sp.csr_array((vals, (rows, cols)), shape=(len(choices), resources))
