"""The residual-resource view the simulator gives to policies, and its mutable copy.

An online policy (system-model.md, "Online"; its contract: ``policies.contract`` and docs/policies.md) is called
by the simulator at every scheduling event with the current time, the jobs it may start and a read-only
``ClusterState``: free GPUs per region, free Gbit/s per link (the same in both directions, since every hop
reserves its bandwidth both ways), and the electricity prices at ``now`` (via ``bace_opt.formulas.price_at``).
The simulator verifies each plan a policy returns against the residual resources (``ClusterState.fits``); a
policy that over-commits is a bug and the simulator raises ``PolicyError``.

Policies that start several jobs in one decision work on a private mutable copy, ``state.copy()`` (a
``Residual``), and ``commit`` each plan they choose to it.

Hot loops read the resources through two views that copy nothing: ``free_gpus`` (a read-only live mapping of
the region's idle GPUs) and ``free_link_gbps`` (a tuple of every link's free Gbit/s, by link index; a
``Residual`` replaces it by a new tuple when it commits or releases a plan).  No other module reads the private
fields.  ``eligible_set(inst, job)`` is the cached set of regions that may host a job.
"""
from __future__ import annotations

import math
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence

from .. import formulas as F
from ..errors import BaceOptError
from ..instance import Instance, Job
from ..schedule import JobPlan

#: a reservation counts as fitting a link if it exceeds the residual by at most this (relative) slack,
#: the same tolerance the evaluator allows on link capacity sums
BW_TOL = 1e-9
#: a residual below this (Gbit/s) is treated as no bandwidth at all: nothing can be reserved on it
MIN_GBPS = 1e-9


class PolicyError(BaceOptError):
    """A policy returned a plan the simulator cannot apply (over-commits GPUs or bandwidth, wrong start
    time, a job that is not waiting, ...).  Always a bug of the policy; the message names policy and job."""


class ClusterState:
    """Read-only residual resources at time ``now``.

    ``free_gpus[region]`` idle GPUs (a read-only live view); ``free_link_gbps[link_index]`` unreserved Gbit/s of
    every link (in each direction; a tuple), ``free_gbps(link_index)`` the same for one link;
    ``reserved_gbps(link_index)``; ``price(region)`` USD/kWh at ``now``; ``alpha()`` the mean utilization of the
    links in use.
    """

    __slots__ = ("inst", "now", "_free", "_bw", "_prices", "_in_use")

    def __init__(self, inst: Instance, now: float, free_gpus: Mapping[str, int], free_gbps: Sequence[float],
                 links_in_use: Iterable[int] | None = None):
        """``links_in_use`` (optional): indexes of the links that may carry a reservation, a speed hint for
        ``alpha`` (links not listed must be fully free)."""
        self.inst = inst
        self._in_use = None if links_in_use is None else sorted(links_in_use)
        self.now = float(now)
        self._free = dict(free_gpus)
        self._bw = tuple(free_gbps)
        self._prices: dict[str, float] = {}
        if len(self._bw) != len(inst.links):
            raise ValueError(f"free_gbps has {len(self._bw)} entries, the instance has {len(inst.links)} links")

    @classmethod
    def empty(cls, inst: Instance, now: float = 0.0) -> "ClusterState":
        """All resources free."""
        return cls(inst, now, {r.name: r.gpus for r in inst.regions}, [l.bandwidth_gbps for l in inst.links])

    # ------------------------------------------------------------------ reading
    @property
    def free_gpus(self) -> Mapping[str, int]:
        """Idle GPUs per region: a read-only view of the state's own mapping (no copy)."""
        return MappingProxyType(self._free)

    @property
    def free_link_gbps(self) -> tuple[float, ...]:
        """Free Gbit/s of every link, by link index (the state's own tuple, no copy)."""
        return self._bw

    def free(self, region: str) -> int:
        return self._free[region]

    def free_stages(self, job: Job, region: str) -> int:
        """How many stages of ``job`` fit in ``region``'s idle GPUs (0 if the region cannot host the job)."""
        if region not in eligible_set(self.inst, job):
            return 0
        return self._free[region] // job.gpus_per_stage

    def free_gbps(self, link: int) -> float:
        return self._bw[link]

    def reserved_gbps(self, link: int) -> float:
        return self.inst.links[link].bandwidth_gbps - self._bw[link]

    def route_free_gbps(self, regions: Sequence[str]) -> float:
        """Bottleneck residual of a path of regions (inf for a one-region path)."""
        li = self.inst.link_index
        return min((self._bw[li[(u, v)]] for u, v in zip(regions, regions[1:])), default=math.inf)

    def price(self, region: str) -> float:
        p = self._prices.get(region)
        if p is None:
            p = self._prices[region] = F.price_at(self.inst, region, self.now)
        return p

    def total_free_gpus(self) -> int:
        return sum(self._free.values())

    def alpha(self) -> float:
        """Mean utilization (reserved / capacity) of the links with any reservation; 0 when none."""
        tot, n = 0.0, 0
        caps = _capacities(self.inst)
        for k in (range(len(caps)) if self._in_use is None else self._in_use):
            used = caps[k] - self._bw[k]
            if used > MIN_GBPS:
                tot += used / caps[k]
                n += 1
        return min(1.0, tot / n) if n else 0.0

    def fits(self, job: Job, plan: JobPlan) -> str | None:
        """Why ``plan`` does not fit the residual resources (None if it fits).  Checks GPUs per region and,
        summing over every hop and link of the route, the bandwidth of each link; every reservation > 0."""
        need: dict[str, int] = {}
        for b in plan.blocks:
            need[b.region] = need.get(b.region, 0) + job.gpus_per_stage * b.stages
        for r, n in need.items():
            if r not in self._free:
                return f"region {r!r} does not exist"
            if n > self._free[r]:
                return f"needs {n} GPUs in {r!r}, {self._free[r]} free"
        li = self.inst.link_index
        bw: dict[int, float] = {}
        for h in plan.hops:
            if not (h.reserved_gbps > 0 and math.isfinite(h.reserved_gbps)):
                return f"reservation {h.reserved_gbps!r} on route {list(h.route)} is not > 0"
            for u, v in zip(h.route, h.route[1:]):
                k = li.get((u, v))
                if k is None:
                    return f"route {list(h.route)} uses {u!r}-{v!r}, which is not a link"
                bw[k] = bw.get(k, 0.0) + h.reserved_gbps
        for k, w in bw.items():
            cap = self._bw[k]
            if w > cap + BW_TOL * max(1.0, self.inst.links[k].bandwidth_gbps):
                l = self.inst.links[k]
                return f"reserves {w:.9g} Gbit/s on link {l.a}-{l.b}, {cap:.9g} free"
        return None

    # ------------------------------------------------------------------ copies
    def copy(self) -> "Residual":
        """A private mutable copy a policy may ``commit`` plans to while it decides."""
        r = Residual(self.inst, self.now, self._free, self._bw)
        r._prices = dict(self._prices)
        return r


class Residual(ClusterState):
    """A mutable ``ClusterState``: ``commit(job, plan)`` takes the plan's GPUs and bandwidth."""

    __slots__ = ()

    def commit(self, job: Job, plan: JobPlan, checked: bool = False) -> None:
        """Take ``plan``'s GPUs and bandwidth; ``PolicyError`` if it does not fit (``checked``: the caller has just
        had ``fits`` say None on this state, so it is not asked again)."""
        why = None if checked else self.fits(job, plan)
        if why is not None:
            raise PolicyError(f"job {job.name!r}: plan does not fit the residual resources: {why}")
        for b in plan.blocks:
            self._free[b.region] -= job.gpus_per_stage * b.stages
        if plan.hops:
            li = self.inst.link_index
            bw = list(self._bw)
            for h in plan.hops:
                for u, v in zip(h.route, h.route[1:]):
                    k = li[(u, v)]
                    bw[k] = max(0.0, bw[k] - h.reserved_gbps)
            self._bw = tuple(bw)

    def release(self, job: Job, plan: JobPlan) -> None:
        for b in plan.blocks:
            self._free[b.region] += job.gpus_per_stage * b.stages
        if plan.hops:
            li = self.inst.link_index
            bw = list(self._bw)
            for h in plan.hops:
                for u, v in zip(h.route, h.route[1:]):
                    k = li[(u, v)]
                    cap = self.inst.links[k].bandwidth_gbps
                    bw[k] = min(cap, bw[k] + h.reserved_gbps)
            self._bw = tuple(bw)

    def freeze(self) -> ClusterState:
        c = ClusterState(self.inst, self.now, self._free, self._bw)
        c._prices = dict(self._prices)
        return c


def _capacities(inst: Instance) -> list[float]:
    caps = inst.__dict__.get("_policy_caps")
    if caps is None:
        caps = inst.__dict__["_policy_caps"] = [l.bandwidth_gbps for l in inst.links]
    return caps


def eligible_set(inst: Instance, job: Job) -> frozenset[str]:
    """Cached set form of ``inst.eligible_regions(job)``."""
    cache = inst.__dict__.setdefault("_policy_eligible", {})
    s = cache.get(job.name)
    if s is None:
        s = cache[job.name] = frozenset(inst.eligible_regions(job))
    return s
