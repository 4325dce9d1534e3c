"""Liquid's batch mode: a group genetic algorithm that places a burst of jobs at once
(Gu et al., TPDS 2022, section 4.3).

A genome gives every container (GPU) of the burst a node. Its fitness, to minimise,
is the paper's: the sum of the jobs' best-fit scores plus the number of nodes the burst
uses; a job whose containers cannot run (no configuration of its span, or a link
without room) counts as a large penalty instead. Crossover copies one node's
containers from one parent into the other and re-places those it displaces first fit;
mutation empties a node and re-places its containers first fit elsewhere. The best
genome always survives (elitism), so the result scores no worse than the best-fit
genome the population starts from.

Faults of the authors' code that we avoid (the seed-systems notes): a generation cap
and a seeded RNG instead of a 30 s wall clock (same seed, same placement); first fit in
the instance's node order, not Go's randomised map order; nodes *used* counted, not the
genome's candidate nodes; crossover frees exactly the displaced containers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.seeds.liquid_place import LAMBDA, Sizes, allocation_on, best_fit_nodes, score
from instances import Config, Job

UNPLACED = 100.0  # per job that cannot run: worse than any score of a placed one
Genome = list[str | None]


@dataclass(frozen=True)
class Task:
    """One job of the burst: its size, GPU type and candidate configurations."""

    job: Job
    gpus: int
    gpu_type: str
    configs: tuple[Config, ...]


class GroupGA:
    """The GA for one burst on one cluster state; ``run`` returns the best placement."""

    def __init__(
        self,
        occ: Occupancy,
        sizes: Sizes,
        tasks: Sequence[Task],
        rng: np.random.Generator,
        *,
        lam: float = LAMBDA,
        max_generations: int = 100,
    ) -> None:
        self.occ, self.sizes, self.tasks, self.rng, self.lam = occ, sizes, tasks, rng, lam
        self.owner = [k for k, t in enumerate(tasks) for _ in range(t.gpus)]
        self.n = len(self.owner)
        self.population = 30 + self.n // 2
        self.patience = 30 + self.n
        self.max_generations = max_generations
        self.free = {n: len(f) for n, f in occ.free.items()}
        self.nodes_of = {
            t.gpu_type: [n.id for n in occ.instance.nodes_by_type.get(t.gpu_type, ())]
            for t in tasks
        }

    # -- genomes ----------------------------------------------------------------------------
    def best_fit(self) -> Genome:
        """Each job in turn by immediate-mode best fit on what the earlier ones left."""
        occ = self.occ.copy()
        out: Genome = []
        for t in self.tasks:
            nodes = best_fit_nodes(occ, self.sizes, t.gpu_type, t.gpus, self.lam)
            alloc = None if nodes is None else allocation_on(occ, t.job, nodes, t.configs)
            if alloc is None or nodes is None:
                out.extend([None] * t.gpus)
                continue
            occ.place(t.job, alloc)
            out.extend(nodes)
        return self._repair(out)

    def random_fit(self) -> Genome:
        """Every container on a random node with room (seeded)."""
        genome: Genome = [None] * self.n
        for c in self.rng.permutation(self.n):
            kinds = self.nodes_of[self.tasks[self.owner[c]].gpu_type]
            load = Counter(genome)
            room = [n for n in kinds if load[n] < self.free[n]]
            if room:
                genome[c] = room[int(self.rng.integers(len(room)))]
        return genome

    def _first_fit(self, genome: Genome, containers: Sequence[int], avoid: str | None) -> None:
        load = Counter(g for g in genome if g is not None)
        for c in containers:
            genome[c] = None
            for n in self.nodes_of[self.tasks[self.owner[c]].gpu_type]:
                if n != avoid and load[n] < self.free[n]:
                    genome[c] = n
                    load[n] += 1
                    break

    def _repair(self, genome: Genome) -> Genome:
        """Containers left without a node get one first fit where room remains."""
        self._first_fit(genome, [c for c, g in enumerate(genome) if g is None], None)
        return genome

    def crossover(self, x: Genome, y: Genome) -> Genome:
        used = sorted({g for g in y if g is not None})
        if not used:
            return list(x)
        node = used[int(self.rng.integers(len(used)))]
        mine = {c for c, g in enumerate(y) if g == node}
        child = list(x)
        for c in mine:
            child[c] = node
        displaced = [c for c, g in enumerate(child) if g == node and c not in mine]
        for c in displaced:
            child[c] = None
        self._first_fit(child, displaced, node)
        return child

    def mutate(self, x: Genome) -> Genome:
        used = sorted({g for g in x if g is not None})
        if not used:
            return list(x)
        node = used[int(self.rng.integers(len(used)))]
        child = list(x)
        moved = [c for c, g in enumerate(child) if g == node]
        self._first_fit(child, moved, node)
        return child

    # -- fitness ----------------------------------------------------------------------------
    def placements(self, genome: Genome) -> tuple[float, list[Allocation | None]]:
        """The genome's fitness (lower is better) and each job's allocation."""
        occ = self.occ.copy()
        total, used, out = 0.0, set(), []
        at = 0
        for t in self.tasks:
            nodes = genome[at : at + t.gpus]
            at += t.gpus
            alloc = None
            if None not in nodes:
                placed = [n for n in nodes if n is not None]
                alloc = allocation_on(occ, t.job, placed, t.configs)
                if alloc is not None:
                    total += score(occ, self.sizes, placed, self.lam)
                    occ.place(t.job, alloc)
                    used.update(placed)
            if alloc is None:
                total += UNPLACED
            out.append(alloc)
        return total + len(used), out

    def fitness(self, genome: Genome) -> float:
        return self.placements(genome)[0]

    def run(self) -> tuple[Genome, float, float]:
        """The best genome, its fitness, and the fitness of the best-fit genome."""
        seed = self.best_fit()
        pop = [seed, self._repair([None] * self.n)]
        while len(pop) < self.population:
            pop.append(self.random_fit())
        scores = [self.fitness(g) for g in pop]
        start = scores[0]
        best = min(range(len(pop)), key=lambda i: (scores[i], i))
        best_g, best_s = pop[best], scores[best]
        stall = 0
        for _ in range(self.max_generations):
            nxt, nxt_s = [best_g], [best_s]
            while len(nxt) < self.population:
                x = self._tournament(pop, scores)
                y = self._tournament(pop, scores)
                child = self.crossover(x, y) if self.rng.random() < 0.8 else list(x)
                if self.rng.random() < 0.2:
                    child = self.mutate(child)
                nxt.append(child)
                nxt_s.append(self.fitness(child))
            pop, scores = nxt, nxt_s
            i = min(range(len(pop)), key=lambda k: (scores[k], k))
            if scores[i] < best_s - 1e-12:
                best_g, best_s, stall = pop[i], scores[i], 0
            else:
                stall += 1
                if stall >= self.patience:
                    break
        return best_g, best_s, start

    def _tournament(self, pop: list[Genome], scores: list[float]) -> Genome:
        a, b = (int(k) for k in self.rng.integers(len(pop), size=2))
        return pop[a] if (scores[a], a) <= (scores[b], b) else pop[b]
