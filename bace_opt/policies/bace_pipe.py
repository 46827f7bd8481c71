"""BACE-Pipe: dynamic prioritization, bandwidth-aware pathfinder, cost-minimizing allocator (system-model.md,
"BACE-Pipe (the heuristic; our reading of its three stages)"), the policy class and its ablations.

The three stages are functions usable on their own (so the exact models can be compared stage by stage):
``priority.prioritize`` (stage 1), ``pathfinder.find_chains`` / ``grow_chain`` (stage 2) and
``allocators.allocate`` (stage 3).  ``BacePipe.place(job, state)`` runs pathfinder and allocator on every chain
found and keeps the cheapest (estimated electricity cost ``formulas.electricity_usd`` over the run time
``N * formulas.iteration_s``, plus egress when the instance's objective counts it, ``plans.plan_cost``; ties:
shorter run, then chain order).

``BacePipe.place`` and ``fits`` run these stages through ``chain_search`` (the same decisions, every float
equal, on precomputed integer tables, with exact pruning: issue 15); the readable reference functions are
used with ``BacePipe.reference_path = True`` and by the tests that compare the two.

Ablations are options of the same class: ``order="fifo"`` (no priority), ``pathfinder="price"`` (chain of
regions in ascending price, bandwidth unchecked, ``greedy_chains.price_chain``; each hop reserves
min(b_j, residual), so it may stall; a region whose connecting hop has no residual bandwidth at all is
skipped), ``allocator="even"`` (no cost-min: stages spread evenly over the chain, leftovers to the regions
with the most free GPUs).  Each ablation removes one stage and keeps the others: ``order="fifo"`` and
``allocator="even"`` keep the all-seeds pathfinder; ``pathfinder="price"`` replaces the whole pathfinder
(seeding, growth, bandwidth check) by the one price-ordered chain, so it has no single-region fallback beyond
"the cheapest host region holds the job alone".
"""
from __future__ import annotations

from ..instance import Job
from ..schedule import JobPlan
from . import chain_search
from .allocators import ALLOCATE
from .base import ClusterState, eligible_set
from .contract import QueueTraits
from .greedy_chains import greedy_chain_bounds, greedy_chain_fits, greedy_demand_rule, price_chain
from .ordered import OrderedPolicy
from .pathfinder import (Chain, check_pathfinder_options, find_chains, grow_chain, host_stages,
                         one_component_holds, resolve_via)
from .plans import make_plan, plan_cost

PATHFINDERS = ("bandwidth", "price")
ALLOCATORS = tuple(ALLOCATE)


class BacePipe(OrderedPolicy):
    """BACE-Pipe and its ablations (see module doc for every option)."""

    def __init__(self, name: str = "bace-pipe", order: str = "priority", hol: str = "skip",
                 pathfinder: str = "bandwidth", allocator: str = "costmin", seeds: str = "all",
                 via: str = "auto", k_routes: int = 4, prefer: str = "bandwidth", seed: int = 0):
        if pathfinder not in PATHFINDERS:
            raise ValueError(f"pathfinder must be one of {PATHFINDERS}, got {pathfinder!r}")
        if allocator not in ALLOCATORS:
            raise ValueError(f"allocator must be one of {ALLOCATORS}, got {allocator!r}")
        check_pathfinder_options(seeds, via, prefer)
        super().__init__(name, order=order, hol=hol, pathfinder=pathfinder, allocator=allocator, seeds=seeds,
                         via=via, k_routes=k_routes, prefer=prefer)
        self.pathfinder, self.allocator, self.seeds, self.via, self.k_routes, self.prefer = \
            pathfinder, allocator, seeds, via, k_routes, prefer

    def queue_traits(self) -> QueueTraits:
        """Every seed grows, and a seed holding the whole job is a one-region chain (the price chain and the
        cheapest-seed rule have no such fallback); the bandwidth pathfinder checks every hop.  The queue asks
        ``fits`` before ``place`` where ``fits`` is much cheaper when it fails: not for the bandwidth
        pathfinder, whose ``fits`` grows the same seeds ``place`` grows (``place`` only prices them too), so
        asking both costs twice when the job fits.  The price chain is a greedy chain: its demand rule."""
        bandwidth = self.pathfinder == "bandwidth"
        return QueueTraits(order=self.order, hol=self.hol,
                           single_region_places=bandwidth and self.seeds == "all",
                           bandwidth_checked=bandwidth, fits_first=not bandwidth,
                           demand_rule=None if bandwidth else self.demand_rule, group_bounds=self.group_bounds)

    def chains(self, job: Job, state: ClusterState) -> list[Chain]:
        if self.pathfinder == "bandwidth":
            return find_chains(job, state, seeds=self.seeds, via=self.via, k_routes=self.k_routes,
                               prefer=self.prefer)
        c = price_chain(job, state, via=self.via)
        return [] if c is None else [c]

    #: True: ``place`` and ``fits`` run the readable reference functions (``find_chains``, ``allocate``,
    #: ``make_plan``, ``plan_cost``) instead of ``chain_search``'s tables (same decisions; benchmarks and tests
    #: compare the two)
    reference_path = False

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place`` returns a plan, without pricing: some seed's growth succeeds (every allocator
        fills a grown chain: it has at most S_j regions, each with a free stage, holding S_j together)."""
        if self.pathfinder != "bandwidth":
            return greedy_chain_fits(job, state, False, self.via, self._state_cache(state))
        if not self.reference_path:
            return chain_search.fits(job, state, resolve_via(state.inst, self.via), self.k_routes, self.seeds,
                                     self.prefer)
        hosts = host_stages(job, state)
        if sum(hosts.values()) < job.stages:
            return False
        if self.seeds == "all" and max(hosts.values()) >= job.stages:
            return True
        if not one_component_holds(job, state, hosts):
            return False
        order = sorted(hosts, key=lambda r: (state.price(r), r))
        if self.seeds == "cheapest":
            order = order[:1]
        via = resolve_via(state.inst, self.via)
        return any(grow_chain(job, state, seed, via=via, k_routes=self.k_routes, hosts=hosts, prefer=self.prefer)
                   is not None for seed in order)

    def group_bounds(self, job: Job, state: ClusterState) -> tuple[int, int]:
        """See ``queue_hol.HolSession.hol_bounds``."""
        if self.pathfinder != "bandwidth":
            return greedy_chain_bounds(job, state, False, self.via, self._state_cache(state))
        T = max((state.free(r) // job.gpus_per_stage for r in eligible_set(state.inst, job)), default=0)
        return (T if self.seeds == "all" else 0), 1 << 30

    def demand_rule(self, job: Job, S: int, state: ClusterState):
        """The price chain's demand rule (``greedy_chains.greedy_demand_rule``), for the queue's head-of-line
        set; only for ``pathfinder="price"``."""
        return greedy_demand_rule(job, S, state, False, self.via, self._state_cache(state))

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        if self.pathfinder == "bandwidth" and not self.reference_path:
            return chain_search.place(job, state, resolve_via(state.inst, self.via), self.k_routes, self.seeds,
                                      self.prefer, self.allocator)
        return self.reference_place(job, state)

    def reference_place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """``place`` through the readable reference functions (every chain priced as a ``JobPlan``)."""
        inst = state.inst
        alloc = ALLOCATE[self.allocator]
        best = None
        for i, chain in enumerate(self.chains(job, state)):
            blocks = alloc(job, chain, state)
            if blocks is None:
                continue
            plan = make_plan(inst, job, chain, blocks, state.now)
            cost, run = plan_cost(inst, job, plan)
            key = (cost, run, i)
            if best is None or key < best[0]:
                best = (key, plan)
        return None if best is None else best[1]
