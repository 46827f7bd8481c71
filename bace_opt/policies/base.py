"""The policy protocol and the residual-resource view the simulator gives to policies.

An online policy (system-model.md, "Online") is called by the simulator at every scheduling event with the
current time, the jobs it may start (waiting jobs in queue mode, the new arrivals in blocking mode) and a
read-only ``ClusterState``: free GPUs per region, free Gbit/s per link (the same in both directions, since
every hop reserves its bandwidth both ways), and the electricity prices at ``now`` (via
``bace_opt.formulas.price_at``).  It returns the ``JobPlan``s to start now (``start_s == now``).  The simulator
verifies each plan against the residual resources and applies it; a policy that over-commits is a bug and
the simulator raises ``PolicyError``.

Besides ``decide``, a policy exposes ``place(job, state)``: the placement its own rules give one job on the
given resources, or None.  The simulator uses it (and only it) to measure head-of-line blocking, and the
tests use it to check that a rejected job really had no placement under the policy's rules.

Policies that start several jobs in one decision work on a private mutable copy, ``state.copy()``
(a ``Residual``), and ``commit`` each plan they choose to it.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Protocol, Sequence, runtime_checkable

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

    ``free_gpus[region]`` idle GPUs; ``free_gbps(link_index)`` unreserved Gbit/s of a link (in each
    direction); ``reserved_gbps(link_index)``; ``price(region)`` USD/kWh at ``now``; ``alpha()`` the mean
    utilization of the links in use.
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
        self._bw = list(free_gbps)
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
        return _ReadOnlyDict(self._free)

    def free(self, region: str) -> int:
        return self._free[region]

    def free_stages(self, job: Job, region: str) -> int:
        """How many stages of ``job`` fit in ``region``'s idle GPUs (0 if the region cannot host the job)."""
        if region not in _eligible(self.inst, job):
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

    def commit(self, job: Job, plan: JobPlan) -> None:
        why = self.fits(job, plan)
        if why is not None:
            raise PolicyError(f"job {job.name!r}: plan does not fit the residual resources: {why}")
        for b in plan.blocks:
            self._free[b.region] -= job.gpus_per_stage * b.stages
        li = self.inst.link_index
        for h in plan.hops:
            for u, v in zip(h.route, h.route[1:]):
                k = li[(u, v)]
                self._bw[k] = max(0.0, self._bw[k] - h.reserved_gbps)

    def release(self, job: Job, plan: JobPlan) -> None:
        for b in plan.blocks:
            self._free[b.region] += job.gpus_per_stage * b.stages
        li = self.inst.link_index
        for h in plan.hops:
            for u, v in zip(h.route, h.route[1:]):
                k = li[(u, v)]
                cap = self.inst.links[k].bandwidth_gbps
                self._bw[k] = min(cap, self._bw[k] + h.reserved_gbps)

    def freeze(self) -> ClusterState:
        c = ClusterState(self.inst, self.now, self._free, self._bw)
        c._prices = dict(self._prices)
        return c


class _ReadOnlyDict(Mapping):
    __slots__ = ("_d",)

    def __init__(self, d):
        self._d = d

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


def _capacities(inst: Instance) -> list[float]:
    caps = inst.__dict__.get("_policy_caps")
    if caps is None:
        caps = inst.__dict__["_policy_caps"] = [l.bandwidth_gbps for l in inst.links]
    return caps


def _eligible(inst: Instance, job: Job) -> frozenset[str]:
    """Cached set form of ``inst.eligible_regions(job)``."""
    cache = inst.__dict__.setdefault("_policy_eligible", {})
    s = cache.get(job.name)
    if s is None:
        s = cache[job.name] = frozenset(inst.eligible_regions(job))
    return s


class WaitingQueue:
    """The waiting jobs of a queue-mode session and their head-of-line-blocked time (the bookkeeping the
    simulator's generic session and ``exact-p1``'s share): ``since`` holds when each job in the head-of-line
    set joined it; ``hol_s`` a job's settled blocked time, added when it leaves the set, starts, or the run
    ends.  Subclasses give ``decide(now, state)`` and ``hol_update(state, now)``."""

    def __init__(self) -> None:
        self.waiting: dict[str, Job] = {}
        self.since: dict[str, float] = {}       # head-of-line-blocked job -> since when
        self.hol_s: dict[str, float] = {}       # settled head-of-line-blocked time
        self.place_calls = 0

    def add(self, job: Job, now: float = 0.0) -> None:
        self.waiting[job.name] = job

    def _leave(self, name: str, now: float) -> None:
        t0 = self.since.pop(name, None)
        if t0 is not None:
            self.hol_s[name] = self.hol_s.get(name, 0.0) + (now - t0)

    def _mark(self, name: str, blocked: bool, now: float) -> None:
        if blocked:
            self.since.setdefault(name, now)
        else:
            self._leave(name, now)

    def remove(self, name: str, now: float = 0.0) -> None:
        del self.waiting[name]
        self._leave(name, now)

    def finish(self, now: float) -> None:
        for name in list(self.since):
            self._leave(name, now)

    def released(self) -> None:
        pass


@runtime_checkable
class Policy(Protocol):
    """What the simulator calls.  ``name`` goes into the schedule's ``method``; ``options`` into its meta."""

    name: str
    options: Mapping

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        """Plans (status done, start_s == now) for the jobs of ``queue`` to start now."""
        ...

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """The placement this policy's rules give ``job`` alone on ``state`` (start_s = state.now), or None."""
        ...


def fifo_order(queue: Sequence[Job], inst: Instance) -> list[Job]:
    """Arrival order; ties by the instance's job order."""
    idx = inst.job_index
    return sorted(queue, key=lambda j: (j.arrival_s, idx[j.name]))
