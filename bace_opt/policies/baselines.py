"""The paper's baselines (system-model.md, "Baselines from the paper"): LCF, LDF, CR-LCF, CR-LDF, and FIFO.

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

from bisect import bisect_left

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
    """``greedy_chain_fits``'s reservation replay over a fixed chain prefix, as a predicate of the demand b: False
    for b <= MIN_GBPS, then True up to a threshold and False above it (a larger b takes more of every shared
    link, so every later hop's residual is smaller; exact in floating point, since each step is monotone), with
    the largest passing and smallest failing b seen remembered."""

    __slots__ = ("ks", "free", "ok", "bad")

    def __init__(self, inst, routes, state: ClusterState):
        li = inst.link_index
        self.ks = [[li[(u, v)] for u, v in zip(route, route[1:])] for route in routes]
        self.free = state._bw
        self.ok, self.bad = -1.0, float("inf")

    def __call__(self, b: float) -> bool:
        if b <= MIN_GBPS:
            return False
        if b <= self.ok:
            return True
        if b >= self.bad:
            return False
        free = self.free
        left: dict[int, float] = {}
        for ks in self.ks:
            cap = min(left.get(k, free[k]) for k in ks)
            w = min(b, cap)
            if w <= MIN_GBPS:
                self.bad = b
                return False
            for k in ks:
                left[k] = left.get(k, free[k]) - w
        self.ok = b
        return True


def greedy_demand_rule(job: Job, S: int, state: ClusterState, by_capacity: bool, via: str, cache: dict):
    """For every job j of ``job``'s group (GPUs per stage, eligible regions) with S stages:
    ``greedy_chain_fits(j) == passes(F.demand_gbps(j, j.stage_time_s / speed))``; returns (speed, passes,
    monotone) or None when no such job fits.  ``monotone``: passes is False for b <= MIN_GBPS, True up to a
    threshold, False above (else it is True for every b).  The chain prefix holding S stages is the same for
    the whole bucket, so b_j = b at the prefix's slowest GPU, as ``greedy_chain_fits`` computes it."""
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
        if g.shared[i]:
            r = (speed, _Replay(inst, g.routes[:i], state), True)
        else:
            r = (speed, lambda b: True, False)
        cache[key] = r
    return r
