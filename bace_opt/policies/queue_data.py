"""The data structures of the incremental queue (``policies.queue``): each keeps, under insertions and deletions,
what the session's decisions and head-of-line accounting read, so that an event costs what changed.

``Group`` (waiting jobs with the same GPUs per stage and eligible regions) holds one ``Bucket`` per stage count;
a bucket keeps its jobs as numpy columns (``Table``) that a ``Stream`` yields in decision order under a
priority ``Key``, and its head-of-line clocks (mode ``OUT`` / ``IN`` / ``MIX``, and under a demand rule one
``Band`` per chain speed: a Fenwick tree over the jobs sorted by demand).  ``MinMax`` keeps the priority's
normalization over all waiting jobs; ``PriceClock`` the price vector, recomputed only near a step;
``uncapped_end`` places the end of a demand rule's uncapped interval exactly.
"""
from __future__ import annotations

import heapq
import math
from bisect import bisect_right, insort
from typing import Sequence

import numpy as np

from .. import formulas as F
from ..instance import Job
from .base import ClusterState


class MinMax:
    """Min and max of a multiset of floats under insertions and deletions (heaps with lazy deletion)."""

    __slots__ = ("_lo", "_hi", "_gone_lo", "_gone_hi", "n")

    def __init__(self):
        self._lo: list[float] = []
        self._hi: list[float] = []
        self._gone_lo: dict[float, int] = {}
        self._gone_hi: dict[float, int] = {}
        self.n = 0

    def add(self, x: float) -> None:
        heapq.heappush(self._lo, x)
        heapq.heappush(self._hi, -x)
        self.n += 1

    def remove(self, x: float) -> None:
        self._gone_lo[x] = self._gone_lo.get(x, 0) + 1
        self._gone_hi[x] = self._gone_hi.get(x, 0) + 1
        self.n -= 1

    def min(self) -> float:
        h, g = self._lo, self._gone_lo
        while g.get(h[0], 0):
            g[h[0]] -= 1
            heapq.heappop(h)
        return h[0]

    def max(self) -> float:
        h, g = self._hi, self._gone_hi
        while g.get(-h[0], 0):
            g[-h[0]] -= 1
            heapq.heappop(h)
        return -h[0]


#: head-of-line mode of a bucket: wholly out of the set, wholly in it, or its jobs asked one by one
OUT, IN, MIX = 0, 1, 2


class Band:
    """Head-of-line clocks of a mixed bucket under a demand rule (module doc), for one chain speed: every job of
    the instance that can enter the bucket, sorted by its demand b at that speed; the jobs in the set form the
    positions [lo, hi), open since ``since``; ``point(p)`` is the time position p spent in the set in closed
    intervals (a Fenwick tree over the difference array: range add, point query).  Waiting jobs above the
    interval that pass their own replay are members one by one: ``inm`` (member), ``isince`` (since when) and
    ``iacc`` (time settled) per position, as numpy arrays, so that the members of a band are settled at once."""

    __slots__ = ("bs", "bs_np", "pos", "names", "waiting", "fw", "lo", "hi", "since", "inm", "isince", "iacc",
                 "nin")

    def __init__(self, jobs: Sequence[Job], speed: float, waiting):
        vals = sorted((F.demand_gbps(j, j.stage_time_s / speed), j.name) for j in jobs)
        self.bs = [v for v, _ in vals]
        self.bs_np = np.array(self.bs, dtype=float)
        self.names = [n for _, n in vals]
        self.pos = {n: i for i, n in enumerate(self.names)}
        self.waiting = np.zeros(len(vals), dtype=bool)          # positions of the bucket's waiting jobs
        self.waiting[[self.pos[n] for n in waiting]] = True
        self.fw = [0.0] * (len(vals) + 1)
        self.lo = self.hi = 0
        self.since = 0.0
        self.inm = np.zeros(len(vals), dtype=bool)
        self.isince = np.zeros(len(vals))
        self.iacc = np.zeros(len(vals))
        self.nin = 0

    def join(self, ps: np.ndarray, now: float) -> None:
        """Positions ``ps`` (not members) become members at ``now``."""
        self.inm[ps] = True
        self.isince[ps] = now
        self.nin += len(ps)

    def settle(self, now: float) -> None:
        """Every member leaves at ``now``; its time is settled."""
        if self.nin:
            m = self.inm
            self.iacc[m] += now - self.isince[m]
            m[:] = False
            self.nin = 0

    def take(self, p: int, now: float) -> float:
        """The member time of position p up to ``now`` (its job leaves the queue); p is no member after."""
        h = float(self.iacc[p])
        self.iacc[p] = 0.0
        if self.inm[p]:
            h += now - float(self.isince[p])
            self.inm[p] = False
            self.nin -= 1
        return h

    def _add(self, i: int, x: float) -> None:
        fw, n = self.fw, len(self.fw)
        i += 1
        while i < n:
            fw[i] += x
            i += i & -i

    def point(self, i: int) -> float:
        fw, v = self.fw, 0.0
        i += 1
        while i > 0:
            v += fw[i]
            i -= i & -i
        return v

    def close(self, now: float) -> None:
        if self.hi > self.lo and now > self.since:
            d = now - self.since
            self._add(self.lo, d)
            if self.hi < len(self.bs):
                self._add(self.hi, -d)
        self.lo = self.hi = 0


class Table:
    """A bucket's waiting jobs as numpy columns (compute time, reference demand, b_min, arrival, instance index),
    rows [0, hw) one per job (a job that leaves is replaced by the last row), so that adding and removing a job
    is O(1) and a decision orders a bucket with a few vectorized operations (``Stream``).  ``ni``/``nd``: each
    row's 1 - i and 1 - d of the priority key under the normalization ``norm`` (``Key.norm``; None: not
    computed), kept as rows come while the normalization stays."""

    __slots__ = ("x", "names", "slot", "hw", "ni", "nd", "norm")

    def __init__(self):
        self.x = np.zeros((8, 5))
        self.ni = np.zeros(8)
        self.nd = np.zeros(8)
        self.norm = None
        self.names: list[str | None] = [None] * 8
        self.slot: dict[str, int] = {}
        self.hw = 0             # rows in use are below it

    def add(self, name: str, row: tuple) -> None:
        k = self.hw
        self.hw += 1
        if k == len(self.ni):
            self.x = np.concatenate([self.x, np.zeros_like(self.x)])
            self.ni = np.concatenate([self.ni, np.zeros_like(self.ni)])
            self.nd = np.concatenate([self.nd, np.zeros_like(self.nd)])
            self.names.extend([None] * k)
        self.x[k] = row
        self.names[k] = name
        self.slot[name] = k
        if self.norm is not None:
            self.ni[k], self.nd[k] = Key.terms(self.norm, row[0], row[1])

    def remove(self, name: str) -> None:
        k = self.slot.pop(name)
        last = self.hw - 1
        if k != last:
            self.x[k] = self.x[last]
            self.ni[k] = self.ni[last]
            self.nd[k] = self.nd[last]
            moved = self.names[k] = self.names[last]
            self.slot[moved] = k
        self.x[last] = 0.0
        self.names[last] = None
        self.hw = last


class Key:
    """The priority key of ``priority.priorities`` for one decision, with the same float expressions, on one
    job (``__call__``) or on a bucket's table (``many``: elementwise IEEE operations in the same order, so every
    value is equal; the terms 1 - i and 1 - d kept in the table while the normalization stays).  ``None``
    weights: arrival order (key 0.0)."""

    __slots__ = ("alpha", "clo", "cspan", "dlo", "dspan", "cflat", "dflat", "fifo", "norm")

    def __init__(self, alpha=None, clo=0.0, chi=0.0, dlo=0.0, dhi=0.0):
        self.fifo = alpha is None
        self.alpha, self.clo, self.dlo = alpha, clo, dlo
        self.cflat = chi - clo <= 1e-12 * max(abs(chi), 1.0)
        self.dflat = dhi - dlo <= 1e-12 * max(abs(dhi), 1.0)
        self.cspan, self.dspan = chi - clo, dhi - dlo
        self.norm = (self.clo, self.cspan, self.cflat, self.dlo, self.dspan, self.dflat)

    @staticmethod
    def terms(norm: tuple, c: float, d: float) -> tuple[float, float]:
        """(1 - i, 1 - d) of one job under ``norm``."""
        clo, cspan, cflat, dlo, dspan, dflat = norm
        i = 0.0 if cflat else (c - clo) / cspan
        dd = 0.0 if dflat else (d - dlo) / dspan
        return 1.0 - i, 1.0 - dd

    def __call__(self, c: float, d: float) -> float:
        if self.fifo:
            return 0.0
        alpha = self.alpha
        ni, nd = Key.terms(self.norm, c, d)
        return -((1.0 - alpha) * ni + alpha * nd)

    def many(self, t: Table) -> np.ndarray:
        """The keys of the rows [0, hw) of table ``t`` (a new array)."""
        n = t.hw
        if self.fifo:
            return np.zeros(n)
        if t.norm != self.norm:
            x = t.x[:n]
            i = np.zeros(n) if self.cflat else (x[:, 0] - self.clo) / self.cspan
            dd = np.zeros(n) if self.dflat else (x[:, 1] - self.dlo) / self.dspan
            t.ni[:n] = 1.0 - i
            t.nd[:n] = 1.0 - dd
            t.norm = self.norm
        alpha = self.alpha
        return -((1.0 - alpha) * t.ni[:n] + alpha * t.nd[:n])


class Stream:
    """The waiting jobs of one bucket in ascending decision order (key, arrival, instance index), produced
    lazily: the first few by a vectorized minimum over the bucket's table each (``MIN_POPS``), the rest (when a
    decision gets that far) by one vectorized sort.  ``cap``: only the jobs with b_min <= cap (the component
    bound); ``after``: only the jobs after that (key, arrival, index)."""

    __slots__ = ("grp", "b", "S", "cap", "k", "x", "order", "pos", "first")

    def __init__(self, grp: "Group", b: "Bucket", S: int, cap: float | None, key: Key, after: tuple | None):
        self.grp, self.b, self.S, self.cap = grp, b, S, cap
        t = b.table
        x = self.x = t.x[:t.hw]
        k = key.many(t)
        m = None
        if cap is not None:
            m = x[:, 2] <= cap
        if after is not None:
            ka, aa, ia = after
            a, i = x[:, 3], x[:, 4]
            ma = (k > ka) | ((k == ka) & ((a > aa) | ((a == aa) & (i > ia))))
            m = ma if m is None else m & ma
        if m is not None:
            k[~m] = math.inf    # keys are finite: inf marks the rows that are not candidates
        self.k = k
        self.order = None
        self.pos = 0
        self.first = 0          # jobs taken by minimum so far

    def _out(self, j: int) -> tuple:
        x = self.x
        return (float(self.k[j]), float(x[j, 3]), int(x[j, 4]), self.b.table.names[j])

    def pop(self) -> tuple | None:
        """The next job: (key, arrival, index, name), or None when the bucket has no more.  The first few by
        vectorized minimum (each taken one is masked), the rest from one vectorized sort."""
        k = self.k
        if self.order is None:
            if self.first >= Stream.MIN_POPS:
                x = self.x
                sel = np.flatnonzero(k < math.inf)
                self.order = sel[np.lexsort((x[sel, 4], x[sel, 3], k[sel]))]
                self.pos = 0
            else:
                if not len(k):
                    return None
                j = int(k.argmin())
                lo = k[j]
                if lo == math.inf:
                    return None
                ties = np.flatnonzero(k == lo)
                if len(ties) > 1:
                    x = self.x
                    j = int(ties[np.lexsort((x[ties, 4], x[ties, 3]))[0]])
                self.first += 1
                out = self._out(j)
                k[j] = math.inf     # taken
                return out
        if self.pos >= len(self.order):
            return None
        j = int(self.order[self.pos])
        self.pos += 1
        return self._out(j)

    #: pops by minimum before the stream sorts what is left
    MIN_POPS = 3


class Bucket:
    """Waiting jobs of one group with one stage count, and the bucket's head-of-line clock: ``value(t)`` is the
    time the bucket has spent wholly in the head-of-line set (mode ``IN``) up to t.  ``bands``/``active``: the
    clocks of a mixed bucket under a demand rule."""

    __slots__ = ("jobs", "mode", "acc", "since", "bands", "active", "ind", "by_bmin", "replay", "table", "sig")

    def __init__(self):
        self.jobs: dict[str, Job] = {}
        self.mode = OUT
        self.acc = 0.0
        self.since = 0.0
        self.bands: dict[float, Band] = {}
        self.active: Band | None = None
        self.ind: set[str] = set()                      # jobs in the set one by one (mixed bucket)
        self.by_bmin: list[tuple[float, str]] = []      # (b_min, name) sorted (bandwidth-checked policies)
        self.replay = None                              # the demand rule's replay beyond the active band
        self.table = Table()                           # a skipping policy's decision order (``Stream``)
        self.sig = None                                 # what the open band's answers depend on (``_open_band``)

    def value(self, now: float) -> float:
        return self.acc + (now - self.since) if self.mode == IN else self.acc


class Group:
    """Waiting jobs with the same GPUs per stage and eligible regions, bucketed by stage count."""

    __slots__ = ("key", "g", "regions", "buckets", "keys", "T", "slots", "hol_T", "hol_sure", "hol_limit", "hol_v",
                 "smin")

    def __init__(self, key: tuple, g: int, regions: Sequence[str], smin: float = 1.0):
        self.key = key
        self.g = g
        self.regions = tuple(regions)
        self.smin = smin                     # the slowest speed of the regions (b_min is b_j at it; ``Stream``)
        self.buckets: dict[int, Bucket] = {}
        self.keys: list[int] = []            # sorted stage counts with a bucket
        self.T = self.slots = 0
        self.hol_T = self.hol_sure = self.hol_limit = 0   # T and hol_bounds at the last hol_update
        self.hol_v = -1                                     # the version they were measured at

    def add(self, job: Job) -> Bucket:
        b = self.buckets.get(job.stages)
        if b is None:
            b = self.buckets[job.stages] = Bucket()
            insort(self.keys, job.stages)
        b.jobs[job.name] = job
        return b

    def remove(self, job: Job) -> Bucket:
        b = self.buckets[job.stages]
        b.jobs.pop(job.name, None)
        return b

    def measure(self, state: ClusterState) -> tuple[int, int]:
        """(T, slots): the most stages of a job of the group one eligible region holds, and all of them together."""
        g, free = self.g, state.free_gpus
        T = slots = 0
        for r in self.regions:
            n = free[r] // g
            slots += n
            if n > T:
                T = n
        return T, slots

    def any_job(self) -> Job | None:
        for s in self.keys:
            for j in self.buckets[s].jobs.values():
                return j
        return None

    def jobs_between(self, lo: int, hi: int):
        """Jobs with lo < S <= hi."""
        for s in self.keys:
            if s > hi:
                break
            if s > lo:
                yield from self.buckets[s].jobs.values()


def uncapped_end(replay, bs: Sequence[float], lo: int, hi: int) -> tuple[int, bool]:
    """(e, hit): ``replay.uncapped`` holds on bs[lo:e] and not on bs[e:hi] (bs sorted, every bs[lo:] > MIN_GBPS:
    an interval, see ``greedy_chains._Replay``).  The closed form ``replay.limit()`` places e, which is kept only when
    ``uncapped`` confirms it on both sides (hit); else e is found by bisection.  The closed form is exact
    arithmetic, the replay float, so near b* they may disagree by rounding: the check makes e exact."""
    p = max(lo, bisect_right(bs, replay.limit(), lo, hi))
    if (p == lo or replay.uncapped(bs[p - 1])) and (p == hi or not replay.uncapped(bs[p])):
        return p, True
    a, z = lo, hi
    while a < z:
        m = (a + z) // 2
        if replay.uncapped(bs[m]):
            a = m + 1
        else:
            z = m
    return a, False


class PriceClock:
    """The tuple of prices at ``now`` of the curves that step, recomputed only near a step (exactly
    ``tuple(c.at(now) for c in curves)``: away from a step boundary by a relative 1e-9 the step index is certain)."""

    def __init__(self, curves):
        self.curves = curves
        self.lo, self.hi = math.inf, -math.inf
        self._key: tuple = ()

    def key(self, now: float) -> tuple:
        if self.lo <= now <= self.hi:
            return self._key
        lo, hi = -math.inf, math.inf
        for c in self.curves:
            n = len(c.values)
            k = math.floor((now - c.start) / c.step)
            if k >= 1:
                lo = max(lo, c.start + k * c.step)
            if k < n - 1:
                hi = min(hi, c.start + (k + 1) * c.step)
        self._key = tuple(c.at(now) for c in self.curves)
        self.lo = lo + 1e-9 * max(1.0, abs(lo)) if lo > -math.inf else -math.inf
        self.hi = hi - 1e-9 * max(1.0, abs(hi)) if hi < math.inf else math.inf
        return self._key
