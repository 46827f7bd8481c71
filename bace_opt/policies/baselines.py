"""The paper's baselines (system-model.md, "Baselines from the paper"): LCF, LDF, CR-LCF, CR-LDF; and FIFO,
our reference (BACE-Pipe's placement in arrival order), which is not one of the paper's four.

All are FIFO (arrival order, ties by instance order).  Our reading of FIFO for a job that does not fit:
strict head-of-line blocking (``hol="block"``, default: the round stops at the first job that does not fit,
which is the behaviour behind the paper's HoL-blocking discussion); ``hol="skip"`` tries the later jobs
instead.  A job that does not fit even on the empty cluster under the baseline's rules (e.g. LCF with a
job larger than every region) never blocks the queue: it is skipped and ends ``unscheduled``.

``lcf``     single region: the cheapest (price at now) region that holds all S_j stages.
``ldf``     single region: the region with the most free GPUs, if it holds all S_j stages.
``cr-lcf``  cross-region: hosting regions in ascending price, each filled to its free GPUs, until S_j
            stages are placed (``bace_pipe.price_chain`` + fill).  No bandwidth check: each hop reserves
            min(b_j, residual), so the pipeline may stall; a region whose hop from the chain's tail has no
            link or no residual bandwidth at all is skipped (a reservation must be > 0).
``cr-ldf``  cross-region: start at the region with the most free GPUs, repeatedly append the region with
            the most free GPUs (ties: more residual bandwidth on the hop), fill in chain order
            (``bace_pipe.capacity_chain`` + fill); reservations as CR-LCF.
``fifo``    BACE-Pipe's placement (pathfinder + cost-min allocator) in FIFO order with HoL blocking.
"""
from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from ..instance import Job
from ..schedule import Block, JobPlan
from .bace_pipe import (BacePipe, OrderedPolicy, _greedy_growth, _hosts, allocate_fill, capacity_chain,
                        greedy_chain_bounds, greedy_chain_fits, make_plan, price_chain)
from .base import MIN_GBPS, ClusterState


class SingleRegion(OrderedPolicy):
    """LCF (``rule="price"``) or LDF (``rule="free"``)."""

    def __init__(self, name: str, rule: str, order: str = "fifo", hol: str = "block", seed: int = 0):
        if rule not in ("price", "free"):
            raise ValueError(f"rule must be 'price' or 'free', got {rule!r}")
        super().__init__(name, order=order, hol=hol, rule=rule)
        self.rule = rule
        self.single_region_places = self.single_region_only = True

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place`` returns a plan: some region holds all S_j stages (for LDF the region with the
        most free GPUs then does too)."""
        return any(n >= job.stages for n in _hosts(job, state).values())

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        hosts = _hosts(job, state)
        if not hosts:
            return None
        if self.rule == "price":
            fits = [r for r, n in hosts.items() if n >= job.stages]
            if not fits:
                return None
            r = min(fits, key=lambda r: (state.price(r), r))
        else:
            r = min(hosts, key=lambda r: (-state.free(r), state.price(r), r))
            if hosts[r] < job.stages:
                return None
        return JobPlan(job.name, "done", state.now, (Block(r, job.stages),), ())


class CrossRegion(OrderedPolicy):
    """CR-LCF (``rule="price"``) or CR-LDF (``rule="free"``)."""

    def __init__(self, name: str, rule: str, order: str = "fifo", hol: str = "block", via: str = "auto",
                 seed: int = 0):
        if rule not in ("price", "free"):
            raise ValueError(f"rule must be 'price' or 'free', got {rule!r}")
        if via not in ("auto", "links", "routes"):
            raise ValueError(f"via must be 'auto', 'links' or 'routes', got {via!r}")
        super().__init__(name, order=order, hol=hol, rule=rule, via=via)
        self.rule, self.via = rule, via
        # CR-LDF seeds at the region with the most free GPUs, which holds the job alone if any region does
        self.single_region_places = rule == "free"

    def group_bounds(self, job: Job, state: ClusterState) -> tuple[int, int]:
        """See ``policies.queue.QueueSession.hol_bounds``."""
        return greedy_chain_bounds(job, state, self.rule == "free", self.via, self._state_cache(state))

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place`` returns a plan, from the chain grown once per residual state and job group."""
        return greedy_chain_fits(job, state, self.rule == "free", self.via, self._state_cache(state))

    def demand_rule(self, job: Job, S: int, state: ClusterState):
        """See ``greedy_demand_rule`` (``policies.queue`` uses it for the head-of-line set)."""
        return greedy_demand_rule(job, S, state, self.rule == "free", self.via, self._state_cache(state))

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        chain = (price_chain if self.rule == "price" else capacity_chain)(job, state, via=self.via)
        if chain is None:
            return None
        blocks = allocate_fill(job, chain, state)
        if blocks is None:
            return None
        return make_plan(state.inst, job, chain, blocks, state.now)


def lcf(**kw) -> SingleRegion:
    return SingleRegion("lcf", "price", **kw)


def ldf(**kw) -> SingleRegion:
    return SingleRegion("ldf", "free", **kw)


def cr_lcf(**kw) -> CrossRegion:
    return CrossRegion("cr-lcf", "price", **kw)


def cr_ldf(**kw) -> CrossRegion:
    return CrossRegion("cr-ldf", "free", **kw)


def fifo(**kw) -> BacePipe:
    kw.setdefault("order", "fifo")
    kw.setdefault("hol", "block")
    return BacePipe(name="fifo", **kw)


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
        self.free = state._bw

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
