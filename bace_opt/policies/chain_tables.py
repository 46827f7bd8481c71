"""The integer tables BACE-Pipe's fast pathfinder (``chain_search``) and the greedy chains (``greedy_chains``)
read, each computed once and cached (issue 15):

* per instance and (via, k_routes) (``Tables``, cached on the instance): regions as integers in
  ``region_index`` order, each name's rank, speed, power and PUE, price curves, and lazily for each ordered
  pair of regions the hop options the pathfinder reads: the direct link (``via="links"``) or the
  ``k_routes`` lowest-latency routes in the order ``inst.routes`` gives (``via="routes"``), each as (link
  indexes, region names, latency ms, egress USD/GB);
* per job (``JobTables``, cached on the instance by name, checked by identity): eligible regions as
  integers, the stage time on each region (t_j / f_r) and b_j's numerator 8 A_j / 1000;
* per residual bandwidth vector (``ResidualCaps``; the exact values, as a tuple key; a few kept): each hop
  option's bottleneck residual, computed once and shared by every seed's growth and every job asked on the same
  residual bandwidth, and the connected components of the links above any threshold.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Sequence

from .. import formulas as F
from ..instance import Instance, Job, negative_price_regions
from .base import ClusterState, eligible_set
from .plans import route_latency_ms

#: residual-bandwidth vectors whose hop bottlenecks are kept at once (a decision alternates between the
#: live residual and a frozen snapshot; the head-of-line pass reads one more)
_CAP_CACHE_SIZE = 8


class Tables:
    """Per-instance constants of the pathfinder and pricing (see module doc)."""

    __slots__ = ("inst", "via", "k_routes", "names", "n", "rank", "speed", "power_pue", "curves", "links_ab",
                 "_hops", "_caps", "egress_on", "price_now", "prunable", "f0",
                 "elig_ints",
                 "price")

    def __init__(self, inst: Instance, via: str, k_routes: int):
        self.inst, self.via, self.k_routes = inst, via, k_routes
        names = self.names = tuple(inst.region_index)
        self.n = len(names)
        rank = [0] * self.n
        for pos, i in enumerate(sorted(range(self.n), key=lambda i: names[i])):
            rank[i] = pos
        self.rank = rank
        self.speed = [inst.speed[r] for r in names]
        regs = [inst.region(r) for r in names]
        self.power_pue = [(inst.gpu_types[reg.gpu_type].power_w, reg.pue) for reg in regs]
        curves = F.price_curves(inst)
        self.curves = [_Curve(curves[r]) for r in names]
        self.links_ab = inst.link_ends
        self._hops: dict[int, tuple] = {}
        self._caps: dict[tuple, dict] = {}
        self.egress_on = bool(inst.objective.egress)
        self.price_now: float | None = None
        self.prunable = (not negative_price_regions(inst) and all(l.latency_ms >= 0 for l in inst.links)
                         and all(p >= 0 and e >= 0 for p, e in self.power_pue)
                         and not (self.egress_on and any(l.egress_usd_per_gb < 0 for l in inst.links)))
        self.price: list = []
        self.f0: list = []
        self.elig_ints: dict = {}       # eligible set (frozenset of names) -> region ints in order

    def hop_options(self, a: int, b: int) -> tuple:
        """((link indexes, region names, latency ms, egress USD/GB), ...) of the hop a -> b, in the order the
        pathfinder tries them."""
        key = a * self.n + b
        v = self._hops.get(key)
        if v is None:
            inst = self.inst
            u, w = self.names[a], self.names[b]
            if self.via == "links":
                k = inst.link_index.get((u, w))
                rts = [] if k is None else [(u, w)]
            else:
                rts = [rt.regions for rt in inst.routes(u, w, self.k_routes)]
            li = inst.link_index
            v = self._hops[key] = tuple(
                (tuple(li[(x, y)] for x, y in zip(rt, rt[1:])), tuple(rt), route_latency_ms(inst, tuple(rt)),
                 inst.route(rt).egress_usd_per_gb) for rt in rts)
        return v

    def residual(self, bw: Sequence[float]) -> "ResidualCaps":
        """The ``ResidualCaps`` of residual bandwidth ``bw`` (the exact values are the key; a few are kept)."""
        key = tuple(bw)
        d = self._caps.get(key)
        if d is None:
            if len(self._caps) >= _CAP_CACHE_SIZE:
                self._caps.clear()
            d = self._caps[key] = ResidualCaps()
        return d


class ResidualCaps:
    """What the pathfinder reads of one residual-bandwidth vector, each part computed once when first asked:
    ``caps``, (a * n + b) -> ((bottleneck Gbit/s, link indexes, hop option), ...) of the hop a -> b
    (``_hop_caps``); ``labels(...)``, the connected components of the links whose residual is >= a threshold,
    for every threshold (Kruskal order: the links sorted by residual, descending, merged one at a time)."""

    __slots__ = ("caps", "_neg", "_labels", "_asked")

    def __init__(self):
        self.caps: dict = {}
        self._asked = False
        self._neg = None
        self._labels: list = []

    def labels(self, T: "Tables", bw: Sequence[float], b_min: float) -> tuple:
        """Component label of every region in the graph of the links with residual >= ``b_min`` (the first
        question on a residual is answered by one union-find pass; the table for every threshold is built at
        the second, when the residual is asked again)."""
        if self._neg is None and not self._asked:
            self._asked = True
            parent = list(range(T.n))
            for k, (a, b) in enumerate(T.links_ab):
                if bw[k] >= b_min:
                    while parent[a] != a:
                        a = parent[a]
                    while parent[b] != b:
                        b = parent[b]
                    if a != b:
                        parent[a] = b
            out = []
            for x in range(T.n):
                while parent[x] != x:
                    x = parent[x]
                out.append(x)
            return out
        if self._neg is None:
            order = sorted(range(len(bw)), key=lambda k: -bw[k])
            self._neg = [-bw[k] for k in order]
            label = list(range(T.n))
            members = {i: [i] for i in range(T.n)}
            labels = [tuple(label)]
            for k in order:
                a, b = T.links_ab[k]
                la, lb = label[a], label[b]
                if la != lb:
                    if len(members[la]) < len(members[lb]):
                        la, lb = lb, la
                    for x in members[lb]:
                        label[x] = la
                    members[la] += members.pop(lb)
                labels.append(tuple(label))
            self._labels = labels
        return self._labels[bisect_right(self._neg, -b_min)]


def tables(inst: Instance, via: str, k_routes: int) -> Tables:
    """The instance's ``Tables`` for a resolved ``via`` ("links" or "routes") and ``k_routes``."""
    cache = inst.__dict__.setdefault("_bace_chain_tables", {})
    t = cache.get((via, k_routes))
    if t is None:
        t = cache[(via, k_routes)] = Tables(inst, via, k_routes)
    return t


class JobTables:
    __slots__ = ("job", "elig", "ts", "c", "g", "S")

    def __init__(self, T: Tables, job: Job):
        elig = eligible_set(T.inst, job)
        self.job = job
        self.elig = T.elig_ints.get(elig)
        if self.elig is None:
            self.elig = T.elig_ints[elig] = tuple(i for i, r in enumerate(T.names) if r in elig)
        st = job.stage_time_s
        self.ts = [st / f for f in T.speed]              # == formulas.tau_s's terms t_j / f_r
        self.c = 8.0 * job.activation_mb / 1000.0         # demand_gbps(job, tau) == c / tau
        self.g = job.gpus_per_stage
        self.S = job.stages


#: ``JobTables`` kept per instance (then the cache starts again: a job placed once, as nearly all are when
#: nobody waits, gains nothing from it, and 100,000 of them would hold ~80 MB)
_JOB_CACHE_SIZE = 16384


def job_tables(T: Tables, job: Job) -> JobTables:
    cache = T.inst.__dict__.setdefault("_bace_chain_jobs", {})
    jt = cache.get(job.name)
    if jt is None or jt.job is not job:
        if len(cache) >= _JOB_CACHE_SIZE:
            cache.clear()
        jt = cache[job.name] = JobTables(T, job)
    return jt


def hosts_of(T: Tables, J: JobTables, state: ClusterState) -> dict[int, int]:
    """Region (int) -> stages of the job its free GPUs hold, for eligible regions holding >= 1 (region order)."""
    free, names, g = state.free_gpus, T.names, J.g
    out = {}
    for i in J.elig:
        n = free[names[i]] // g
        if n > 0:
            out[i] = n
    return out


def hop_caps(T: Tables, caps: dict, bw: Sequence[float], a: int, b: int) -> tuple:
    """((bottleneck residual, link indexes, hop option), ...) of the hop a -> b on ``bw`` (``caps``: its
    ``ResidualCaps.caps``)."""
    key = a * T.n + b
    v = caps.get(key)
    if v is None:
        get = bw.__getitem__
        v = caps[key] = tuple([(min(map(get, opt[0])), opt[0], opt) for opt in T.hop_options(a, b)])
    return v


class _Curve:
    """``formulas.PriceCurve.integral`` on Python lists (the same floats: ``float()`` of a float64 is exact,
    and the arithmetic is the same IEEE double arithmetic in the same order)."""

    __slots__ = ("constant", "start", "step", "values", "cum", "n", "last", "first")

    def __init__(self, pc: F.PriceCurve):
        self.constant = pc.constant
        if pc.values is not None:
            self.start, self.step = pc.start, pc.step
            self.values = [float(v) for v in pc.values]
            self.cum = [float(v) for v in pc.cum]
            self.n = len(self.values)
            self.first, self.last = self.values[0], self.values[-1]

    def at(self, t: float) -> float:
        """``formulas.PriceCurve.at``."""
        if self.constant is not None:
            return self.constant
        k = math.floor((t - self.start) / self.step)
        k = min(max(k, 0), self.n - 1)
        return self.values[k]

    def integral_to(self, t: float) -> float:
        """The price integral from the series start to ``t`` (``formulas.PriceCurve._F``)."""
        x = t - self.start
        if x <= 0:
            return x * self.first
        step, n = self.step, self.n
        k = int(x // step)
        if k >= n:
            return self.cum[n] + (x - n * step) * self.last
        return self.cum[k] + (x - k * step) * self.values[k]

    def integral(self, t0: float, t1: float) -> float:
        if self.constant is not None:
            return self.constant * (t1 - t0)
        return self.integral_to(t1) - self.integral_to(t0)
