"""The greedy chains of the baselines and of the no-pathfinder ablation (system-model.md, "Baselines from the
paper"): regions taken in a fixed greedy order, bandwidth unchecked, and what lets the queue answer them for a
whole group of jobs at once.

``price_chain(job, state)``
    The no-pathfinder / CR-LCF chain: hosting regions in ascending price until S_j stages fit.
``capacity_chain(job, state)``
    The CR-LDF chain: the hosting region with the most free GPUs first, then repeatedly the one with the most
    free GPUs (ties: more residual bandwidth on the hop from the tail).

Each hop takes the direct link or the lowest-latency route and reserves min(b_j, residual); a region whose hop
from the tail has no link or no residual bandwidth at all is skipped (a reservation must be > 0), so the
pipeline may stall.  The greedy order and each step do not depend on the job, only where the growth stops and
the reservations, so one growth per residual state and job group (GPUs per stage, eligible regions) answers
``greedy_chain_fits``, ``greedy_chain_bounds`` and ``greedy_demand_rule`` for every job of the group.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from typing import Mapping, Sequence

import numpy as np

from .. import formulas as F
from ..instance import Instance, Job
from .base import MIN_GBPS, ClusterState, eligible_set
from .chain_tables import hop_caps, tables
from .pathfinder import Chain, host_stages, resolve_via


def price_chain(job: Job, state: ClusterState, via: str = "auto") -> Chain | None:
    """The no-pathfinder / CR-LCF chain: hosting regions in ascending price until S_j stages fit, bandwidth
    unchecked.  Each hop uses the direct link (``via="links"``; a region without a link from the tail is
    skipped) or the lowest-latency route (``via="routes"``) and reserves min(b_j, residual); a region whose
    hop would have no residual bandwidth is skipped (our reading: a reservation must be > 0)."""
    hosts = host_stages(job, state)
    order = sorted(hosts, key=lambda r: (state.price(r), r))
    return _greedy_chain(job, state, order, via, by_capacity=False, hosts=hosts)


def capacity_chain(job: Job, state: ClusterState, via: str = "auto") -> Chain | None:
    """The CR-LDF chain: seed = hosting region with the most free GPUs, then repeatedly the hosting region
    with the most free GPUs, ties broken by more residual bandwidth on the hop from the tail (then price,
    name); bandwidth unchecked, reserve min(b_j, residual), regions with no residual on the hop skipped."""
    hosts = host_stages(job, state)
    order = sorted(hosts, key=lambda r: (-state.free(r), state.price(r), r))
    return _greedy_chain(job, state, order, via, by_capacity=True, hosts=hosts)


def _greedy_chain(job: Job, state: ClusterState, order: Sequence[str], via: str, by_capacity: bool,
                  hosts: Mapping[str, int] | None = None) -> Chain | None:
    """Chain from ``order[0]``; next region: the first of ``order`` reachable from the tail with residual
    bandwidth > 0 (``by_capacity``: the one with the most free GPUs, then the most residual bandwidth).  Each
    hop's route is the direct link or the lowest-latency route (``_hop_route``), read from ``chain_tables``'
    tables with its bottleneck residual (the chain's own earlier hops are not subtracted here: the
    reservations below take them in turn)."""
    via = resolve_via(state.inst, via)
    inst = state.inst
    if hosts is None:
        hosts = host_stages(job, state)
    if sum(hosts.values()) < job.stages or not order:
        return None
    T = tables(inst, via, 1)
    ri = inst.region_index
    bw = state.free_link_gbps
    caps = T.residual(bw).caps
    free = state.free_gpus
    chain = [order[0]]
    slots = hosts[order[0]]
    opts: list = []
    rest = list(order[1:])
    while slots < job.stages:
        ti = ri[chain[-1]]
        best = None
        for pos, r in enumerate(rest):
            hc = hop_caps(T, caps, bw, ti, ri[r])
            if not hc:
                continue
            cap, _, opt = hc[0]
            if cap <= MIN_GBPS:
                continue
            if not by_capacity:
                best = (pos, r, opt)
                break                    # the first of ``order`` that is reachable
            key = (-free[r], -cap, pos)
            if best is None or key < best[0]:
                best = (key, r, opt)
        if best is None:
            return None
        _, r, opt = best
        rest.remove(r)
        chain.append(r)
        opts.append(opt)
        slots += hosts[r]
    tau = F.tau_s(inst, job, chain)
    b = F.demand_gbps(job, tau)
    # reservations: min(b, residual), with hops sharing a link (routes) taking it in turn
    left: dict[int, float] = {}
    res = []
    for opt in opts:
        ks = opt[0]
        cap = min(left.get(k, bw[k]) for k in ks)
        w = min(b, cap)
        if w <= MIN_GBPS:
            return None
        for k in ks:
            left[k] = left.get(k, bw[k]) - w
        res.append(w)
    return Chain(tuple(chain), tuple(o[1] for o in opts), tau, b, tuple(res))


def greedy_chain_fits(job: Job, state: ClusterState, by_capacity: bool, via: str, cache: dict) -> bool:
    """Whether ``price_chain`` (``by_capacity=False``) or ``capacity_chain`` returns a chain for ``job``,
    answered from one growth shared by all jobs of the same GPUs per stage and eligible regions (grown only
    as far as a job needs): the greedy order and each step do not depend on the job, only where the growth
    stops (S_j stages) and the per-hop reservations min(b_j, residual), checked for the job only where two
    hops share a link.  ``cache`` must be private to ``state`` (the caller keeps one per residual state)."""
    inst = state.inst
    g = _greedy_growth(job, state, by_capacity, via, cache)
    S = job.stages
    g.grow_to(S)
    chain, routes, cum, shared = g.chain, g.routes, g.cum, g.shared
    if not chain or cum[-1] < S:
        return False
    i = next(i for i, c in enumerate(cum) if c >= S)
    if not shared[i]:
        return True
    # hops share a link: replay _greedy_chain's reservation step for this job's demand
    li = inst.link_index
    b = F.demand_gbps(job, F.tau_s(inst, job, chain[:i + 1]))
    left: dict[int, float] = {}
    for route in routes[:i]:
        ks = [li[(u, v)] for u, v in zip(route, route[1:])]
        cap = min(left.get(k, state.free_gbps(k)) for k in ks)
        w = min(b, cap)
        if w <= MIN_GBPS:
            return False
        for k in ks:
            left[k] = left.get(k, state.free_gbps(k)) - w
    return True


def greedy_chain_bounds(job: Job, state: ClusterState, by_capacity: bool, via: str, cache: dict) -> tuple[int, int]:
    """For every job of ``job``'s group (GPUs per stage, eligible regions): S <= sure always gets a chain
    (no two hops of the prefix share a link), S > limit never does (the growth gets stuck)."""
    g = _greedy_growth(job, state, by_capacity, via, cache)
    g.grow_to(1 << 30)
    if not g.chain:
        return 0, 0
    return max(c for c, sh in zip(g.cum, g.shared) if not sh), g.cum[-1]


def _greedy_growth(job: Job, state: ClusterState, by_capacity: bool, via: str, cache: dict) -> "_GreedyGrowth":
    key = (job.gpus_per_stage, eligible_set(state.inst, job), by_capacity, via)
    g = cache.get(key)
    if g is None:
        g = cache[key] = _GreedyGrowth(job, state, by_capacity, resolve_via(state.inst, via))
    return g


class _GreedyGrowth:
    """``_greedy_chain``'s growth, shared by a job group and extended on demand: chain, routes, cumulative
    stages, and whether the routes of the first i hops share a link, for each prefix."""

    def __init__(self, job: Job, state: ClusterState, by_capacity: bool, via: str):
        self.state, self.by_capacity, self.via = state, by_capacity, via
        hosts = self.hosts = host_stages(job, state)
        if by_capacity:
            order = sorted(hosts, key=lambda r: (-state.free(r), state.price(r), r))
        else:
            order = sorted(hosts, key=lambda r: (state.price(r), r))
        self.chain = order[:1]
        self.cum = [hosts[order[0]]] if order else []
        self.routes: list[tuple[str, ...]] = []
        self.shared = [False] if order else []
        self.seen: set[int] = set()
        self.rest = list(order[1:])
        self.stuck = not order

    def grow_to(self, S: int) -> None:
        state, inst = self.state, self.state.inst
        T = tables(inst, self.via, 1)
        ri = inst.region_index
        bw = state.free_link_gbps
        caps = T.residual(bw).caps
        free = state.free_gpus
        while not self.stuck and self.cum[-1] < S:
            if not self.rest:
                self.stuck = True
                break
            ti = ri[self.chain[-1]]
            best = None
            for pos, r in enumerate(self.rest):
                hc = hop_caps(T, caps, bw, ti, ri[r])
                if not hc:
                    continue
                cap, _, opt = hc[0]
                if cap <= MIN_GBPS:
                    continue
                if not self.by_capacity:
                    best = (pos, r, opt)
                    break
                key = (-free[r], -cap, pos)
                if best is None or key < best[0]:
                    best = (key, r, opt)
            if best is None:
                self.stuck = True
                break
            _, r, opt = best
            ks = opt[0]
            self.rest.remove(r)
            self.chain.append(r)
            self.routes.append(opt[1])
            self.cum.append(self.cum[-1] + self.hosts[r])
            self.shared.append(self.shared[-1] or any(k in self.seen for k in ks))
            self.seen.update(ks)


def _hop_route(inst: Instance, u: str, v: str, via: str) -> tuple[str, ...] | None:
    if via == "links":
        return (u, v) if (u, v) in inst.link_index else None
    rs = inst.routes(u, v, 1)
    return rs[0].regions if rs else None


class _Replay:
    """``greedy_chain_fits``'s reservation replay over a fixed chain prefix (two or more hops), as predicates of
    the demand b.  ``passes(b)``: the replay itself.  ``uncapped(b)``: b > MIN_GBPS and every hop's residual
    is >= b, so that every hop reserves b itself; then the replay passes.  ``uncapped`` holds on an interval
    (MIN_GBPS, b*]: a smaller b leaves every link at least as much (each float step is monotone), so every
    residual is still >= b.  Above b* a hop is capped at its residual, and a smaller b can take *more* of a
    link shared with a later hop than a larger one, so ``passes`` is not monotone there and is asked per b."""

    __slots__ = ("ks", "free")

    def __init__(self, inst, routes, state: ClusterState):
        li = inst.link_index
        self.ks = [[li[(u, v)] for u, v in zip(route, route[1:])] for route in routes]
        self.free = state.free_link_gbps

    def passes(self, b: float) -> bool:
        free = self.free
        left: dict[int, float] = {}
        for ks in self.ks:
            cap = min(left.get(k, free[k]) for k in ks)
            w = min(b, cap)
            if w <= MIN_GBPS:
                return False
            for k in ks:
                left[k] = left.get(k, free[k]) - w
        return True

    def passes_array(self, b: np.ndarray) -> np.ndarray:
        """``[passes(x) for x in b]`` as a boolean array, vectorized: the same float operations elementwise
        (numpy's minimum and subtraction round as Python's), so the answers are identical."""
        ok = np.ones(len(b), dtype=bool)
        free = self.free
        left: dict[int, np.ndarray | float] = {}
        for ks in self.ks:
            cap = None
            for k in ks:
                v = left.get(k, free[k])
                cap = v if cap is None else np.minimum(cap, v)
            w = np.minimum(b, cap)
            ok &= w > MIN_GBPS
            for k in ks:
                left[k] = left.get(k, free[k]) - w
        return ok

    def signature(self) -> tuple:
        """(link indexes of every hop, their residuals): everything ``passes`` and ``uncapped`` read."""
        free = self.free
        return tuple(map(tuple, self.ks)), tuple([free[k] for ks in self.ks for k in ks])

    def limit(self) -> float:
        """b* in exact arithmetic: every hop reserves b, so a link already taken n times by earlier hops has
        free - n b left, which must be >= b.  An estimate of ``uncapped``'s end (float rounding aside)."""
        free = self.free
        taken: dict[int, int] = {}
        lim = math.inf
        for ks in self.ks:
            for k in ks:
                v = free[k] / (taken.get(k, 0) + 1)
                if v < lim:
                    lim = v
            for k in ks:
                taken[k] = taken.get(k, 0) + 1
        return lim

    def uncapped(self, b: float) -> bool:
        if b <= MIN_GBPS:
            return False
        free = self.free
        left: dict[int, float] = {}
        for ks in self.ks:
            if min(left.get(k, free[k]) for k in ks) < b:
                return False
            for k in ks:
                left[k] = left.get(k, free[k]) - b
        return True


def greedy_demand_rule(job: Job, S: int, state: ClusterState, by_capacity: bool, via: str, cache: dict):
    """For every job j of ``job``'s group (GPUs per stage, eligible regions) with S stages, b_j =
    ``F.demand_gbps(j, j.stage_time_s / speed)`` (b at the slowest GPU of the chain prefix holding S stages, the
    same prefix for the whole bucket, as ``greedy_chain_fits`` computes it): returns (speed, replay) with
    ``greedy_chain_fits(j) == replay.passes(b_j)`` (replay None: every job fits, no two hops share a link), or
    None when no such job fits."""
    g = _greedy_growth(job, state, by_capacity, via, cache)
    g.grow_to(S)
    if not g.chain or g.cum[-1] < S:
        return None
    i = bisect_left(g.cum, S)
    key = ("demand-rule", id(g), i)
    r = cache.get(key)
    if r is None:
        inst = state.inst
        speed = min(inst.speed[x] for x in g.chain[:i + 1])
        r = (speed, _Replay(inst, g.routes[:i], state) if g.shared[i] else None)
        cache[key] = r
    return r
