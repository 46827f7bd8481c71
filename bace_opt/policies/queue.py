"""Incremental queue-mode decisions for the ordered policies (issue 15): each event's work follows what changed,
not the length of the queue, and every decision is the one ``OrderedPolicy.decide`` makes on the whole queue.

``OrderedPolicy.queue_session(inst)`` returns a ``QueueSession`` (or None for an option mix it does not cover,
e.g. priority order with head-of-line blocking; the simulator then offers every waiting job, as before).  The
simulator tells the session which jobs wait (``add`` / ``remove``) and when resources were released
(``released``); the session answers ``decide(now, state)`` and ``hol_update(state_after)``.

Why the answers are the same (each rule is exact, none is a heuristic):

* Groups.  Waiting jobs are grouped by (GPUs per stage g, eligible regions) and, inside a group, bucketed by
  their stage count S.  For a group, ``T`` = the most stages one eligible region holds (max free // g) and
  ``slots`` = the stages all eligible regions hold together.  Every placement rule needs S <= slots (each
  policy's ``place`` returns None otherwise), so only buckets S <= slots are looked at: a job that did not
  fit stays out of sight until capacity that could make it fit is freed.  Policies whose rules always place a
  job one region can hold (``single_region_places``: BACE-Pipe with all seeds, LCF, LDF, CR-LDF) need no
  placement call to know that a job with S <= T fits; single-region policies (``single_region_only``: LCF,
  LDF) never place a job with S > T.
* Component bound (bandwidth-checked pathfinders: BACE-Pipe, its ablations but the price chain, FIFO).  Every
  hop of a chain carries b_j >= b_min (b_j at the slowest eligible GPU), so the chain lies in one component of
  the links with residual >= b_min, which must hold S stages.  Adding the links in descending residual
  (Kruskal, once per group and state) gives, for each S, the residual x_S at which a component first holds S
  stages; a bucket's jobs are kept sorted by b_min and only those with b_min <= x_S (slack 1e-8) are asked.
  The bound is monotone in the free resources, so it also holds after the decision's commits.
* Versions.  The residual state is numbered: every commit (a job started), every release (a job finished)
  and every change of the price vector gives a new version.  ``place`` is deterministic in (job, residual
  GPUs and bandwidth, prices), and whether it returns a plan does not depend on the time otherwise, so a
  job whose ``place`` returned None (or a plan) at version v gives the same answer at version v again.
  The price vector is recomputed only near a step of a curve (``_PriceClock``); ``never_fits`` is ``not
  fits`` on one empty cluster per price vector.
* Order.  Skipping policies (``hol="skip"``) start, in priority (or FIFO) order, exactly the jobs whose
  ``place`` succeeds on what the jobs before them left.  The candidates are the jobs the group bounds let
  through on the state at the start (whole buckets, or with a bandwidth-checked pathfinder the jobs of a
  bucket whose b_min is within the component bound); jobs already known to fail on that state are among
  them (the greedy rules are not monotone in the free resources, so such a job may start after the
  decision's first commit).  The priority of a job uses the min and max of compute time and demand over
  *all* waiting jobs, kept in heaps with lazy deletion, with the same float expressions as
  ``bace_pipe.priorities``.  The order is produced lazily: each bucket keeps its jobs as numpy columns
  (``_Table``), a ``_Stream`` per candidate bucket yields them in (key, arrival, index) order (vectorized
  keys, the same IEEE operations elementwise), and a heap merges the streams.  After a commit the bounds on
  what is left are monotone (commits only take), so a bucket they rule out leaves the merge with all its
  jobs, as each of them would have been skipped.  Quiet decisions: when the previous decision started
  nothing and the version is unchanged, every candidate but the jobs that arrived since is known to fail
  before a commit, so only those are asked, in order; if one starts, the merge goes on behind it (the jobs
  before it failed first, as in the full order).  FIFO policies with head-of-line blocking walk the queue in
  arrival order and stop at the first job that does not fit (skipping jobs that never fit), as ``decide``
  does; the head is asked ``fits`` first (cheaper where it fails, which is what a blocked head does).  A
  skipping policy asks ``fits`` before ``place`` for a job one region cannot hold only where its ``fits`` is
  cheaper (``fits_first``: not the bandwidth pathfinder, whose ``fits`` grows the same seeds); under a rule
  whose chain may fail for a job one region holds (the price chain), also for such a job once a placement
  failed at this version.  Under a demand rule (CR-LCF, CR-LDF, the price-chain ablation) a skipping policy's
  ``fits`` is the rule (``_rule_fits``): one shared growth per version, group and S, then the job's replay;
  where the rule says no job of the bucket fits (the growth is stuck before S), the bucket's stream is parked
  until the next commit and then resumes behind the committed job (its jobs in between would each have
  failed at that version).
* Head-of-line blocked set (``hol_update``): the waiting jobs whose ``place`` succeeds on the state after the
  decision (the decision's own state object when it started nothing, so per-state caches are shared).  A
  group's bounds (sure, limit) put a whole bucket in (S <= sure), out (S > limit) or mixed.  A bucket in
  the set keeps one clock for all its jobs (the time it spent wholly in the set); a job's blocked time is
  its bucket's clock at leaving minus at joining, so a bucket that crosses a bound costs O(1), not a step
  per job.  In a mixed bucket the jobs are asked one by one (``fits``) and tracked individually, except
  under a demand rule (CR-LCF, CR-LDF, the price-chain ablation): there every job of the bucket gets the
  same chain prefix, and the reservation replay decides by the job's demand b alone.  While no hop is capped
  at its residual the replay passes, and that holds on an interval (MIN_GBPS, b*] (a smaller b leaves every
  link at least as much); the bucket's jobs sorted by b (a ``_Band`` per chain speed, over all the
  instance's jobs that can enter the bucket) are in the set on a range of positions found by binary search,
  and the time each position spends in the set is kept in a Fenwick tree (range add, point query).  Above
  b* a hop is capped, a smaller b can take more of a later shared link than a larger one, so the jobs there
  are replayed one by one (vectorized) and tracked individually (numpy arrays per band, settled at once).
  What a band's answers read is its signature (chain speed, the replay's links and their residuals); while
  it is unchanged the band stays open.
  The interval's end b* is placed by its closed form (``_Replay.limit``) and confirmed by the replay on both
  sides (``uncapped_end``), else found by bisection.
"""
from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right, insort
from typing import Sequence

import numpy as np

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import JobPlan
from .base import MIN_GBPS, ClusterState, _eligible


class _MinMax:
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


_OUT, _IN, _MIX = 0, 1, 2      # head-of-line mode of a bucket (see module doc)


class _Band:
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


class _Table:
    """A bucket's waiting jobs as numpy columns (compute time, reference demand, b_min, arrival, instance index),
    rows [0, hw) one per job (a job that leaves is replaced by the last row), so that adding and removing a job
    is O(1) and a decision orders a bucket with a few vectorized operations (``_Stream``).  ``ni``/``nd``: each
    row's 1 - i and 1 - d of the priority key under the normalization ``norm`` (``_Key.norm``; None: not
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
            self.ni[k], self.nd[k] = _Key.terms(self.norm, row[0], row[1])

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


class _Key:
    """The priority key of ``bace_pipe.priorities`` for one decision, with the same float expressions, on one
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
        ni, nd = _Key.terms(self.norm, c, d)
        return -((1.0 - alpha) * ni + alpha * nd)

    def many(self, t: _Table) -> np.ndarray:
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


class _Stream:
    """The waiting jobs of one bucket in ascending decision order (key, arrival, instance index), produced
    lazily: the first few by a vectorized minimum over the bucket's table each (``MIN_POPS``), the rest (when a
    decision gets that far) by one vectorized sort.  ``cap``: only the jobs with b_min <= cap (the component
    bound); ``after``: only the jobs after that (key, arrival, index)."""

    __slots__ = ("grp", "b", "S", "cap", "k", "x", "order", "pos", "first")

    def __init__(self, grp: "_Group", b: "_Bucket", S: int, cap: float | None, key: _Key, after: tuple | None):
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
            if self.first >= _Stream.MIN_POPS:
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


class _Bucket:
    """Waiting jobs of one group with one stage count, and the bucket's head-of-line clock: ``value(t)`` is the
    time the bucket has spent wholly in the head-of-line set (mode ``_IN``) up to t.  ``bands``/``active``: the
    clocks of a mixed bucket under a demand rule."""

    __slots__ = ("jobs", "mode", "acc", "since", "bands", "active", "ind", "by_bmin", "replay", "table", "sig")

    def __init__(self):
        self.jobs: dict[str, Job] = {}
        self.mode = _OUT
        self.acc = 0.0
        self.since = 0.0
        self.bands: dict[float, _Band] = {}
        self.active: _Band | None = None
        self.ind: set[str] = set()                      # jobs in the set one by one (mixed bucket)
        self.by_bmin: list[tuple[float, str]] = []      # (b_min, name) sorted (bandwidth-checked policies)
        self.replay = None                              # the demand rule's replay beyond the active band
        self.table = _Table()                           # a skipping policy's decision order (``_Stream``)
        self.sig = None                                 # what the open band's answers depend on (``_open_band``)

    def value(self, now: float) -> float:
        return self.acc + (now - self.since) if self.mode == _IN else self.acc


class _Group:
    """Waiting jobs with the same GPUs per stage and eligible regions, bucketed by stage count."""

    __slots__ = ("key", "g", "regions", "buckets", "keys", "T", "slots", "hol_T", "hol_sure", "hol_limit", "hol_v",
                 "smin")

    def __init__(self, key: tuple, g: int, regions: Sequence[str], smin: float = 1.0):
        self.key = key
        self.g = g
        self.regions = tuple(regions)
        self.smin = smin                     # the slowest speed of the regions (b_min is b_j at it; ``_Stream``)
        self.buckets: dict[int, _Bucket] = {}
        self.keys: list[int] = []            # sorted stage counts with a bucket
        self.T = self.slots = 0
        self.hol_T = self.hol_sure = self.hol_limit = 0   # T and hol_bounds at the last hol_update
        self.hol_v = -1                                     # the version they were measured at

    def add(self, job: Job) -> _Bucket:
        b = self.buckets.get(job.stages)
        if b is None:
            b = self.buckets[job.stages] = _Bucket()
            insort(self.keys, job.stages)
        b.jobs[job.name] = job
        return b

    def remove(self, job: Job) -> _Bucket:
        b = self.buckets[job.stages]
        b.jobs.pop(job.name, None)
        return b

    def measure(self, state: ClusterState) -> tuple[int, int]:
        g, free = self.g, state._free
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
    an interval, see ``baselines._Replay``).  The closed form ``replay.limit()`` places e, which is kept only when
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


class QueueSession:
    """Incremental ``decide`` for an ``OrderedPolicy`` in queue mode (see module doc)."""

    def __init__(self, policy, inst: Instance):
        self.pol = policy
        self.inst = inst
        self.skip = policy.hol == "skip"
        self.by_priority = policy.order == "priority"
        self.single_places = bool(getattr(policy, "single_region_places", False))
        self.single_only = bool(getattr(policy, "single_region_only", False))
        self.bw_filter = bool(getattr(policy, "bandwidth_checked", False))
        self.fits_first = bool(getattr(policy, "fits_first", True))
        # a chain rule that may fail for a job one region can hold (the price chain starts at the cheapest
        # region): once a placement failed at a version, ``fits`` is asked before ``place`` for every job, not
        # only for S > T (``_run``)
        self.rule_after_fail = self.fits_first and not self.single_places and not self.single_only
        self.waiting: dict[str, Job] = {}
        self.groups: dict[tuple, _Group] = {}
        self.group_of: dict[str, _Group] = {}
        self.version = 0
        self.dirty = False
        self.none_at: dict[str, int] = {}     # place(job) gave None at this version
        self.fits_at: dict[str, int] = {}     # place(job) gave a plan at this version
        self.place_calls = 0
        self._c, self._d = _MinMax(), _MinMax()
        self._prof: dict[str, tuple[float, float, float]] = {}   # compute, demand, b_min
        self._curves = [c for c in F.price_curves(inst).values() if c.values is not None and len(c.values) > 1]
        self._price_key: tuple | None = None
        self._idx = inst.job_index
        self._speed = inst.speed
        self._clock = _PriceClock(self._curves)
        self._never: dict[str, tuple] = {}     # job -> (price key, never_fits)
        self._empty: tuple | None = None       # (price key, the empty cluster at those prices)
        # head-of-line blocked set and time (see module doc)
        self.ind_since: dict[str, float] = {}  # job of a mixed bucket -> time since when it is in the set
        self.hol_off: dict[str, float] = {}    # job -> its bucket's clock value when it joined the bucket
        self.hol_s: dict[str, float] = {}      # job -> head-of-line-blocked time settled so far
        self._pending: set[str] = set()       # arrived since the last hol_update
        # a demand rule (CR-LCF, CR-LDF, the price-chain ablation): mixed buckets are clocked by demand bands
        rule = getattr(policy, "demand_rule", None)
        if rule is None and getattr(policy, "pathfinder", None) == "price":
            from .baselines import greedy_demand_rule

            def rule(job, S, state, pol=policy):
                return greedy_demand_rule(job, S, state, False, pol.via, pol._state_cache(state))
        self._rule = rule
        self._fail_v = -1                      # a direct ``place`` failed at this version (``_run``)
        self._rules_v, self._rules = -1, {}    # the demand rule per (group, S) at version _rules_v (_rule_fits)
        self._universe: dict[tuple, list[Job]] | None = None
        # skipping policies: the version at which every candidate is known to fail (the last decision started
        # nothing), and the jobs that arrived since the last decision (see ``_decide_skip``)
        self._quiet_v = -1
        self._arrived: list[str] = []
        # how often each shortcut decided something (tests show every one is exercised)
        self.stats = dict.fromkeys(("quiet_skips", "quiet_runs", "pruned_buckets", "popped", "band_kept",
                                    "limit_hits", "parked"), 0)

    # ------------------------------------------------------------------ the queue
    def add(self, job: Job, now: float = 0.0) -> None:
        from .bace_pipe import job_profile
        self.waiting[job.name] = job
        elig = _eligible(self.inst, job)
        key = (job.gpus_per_stage, elig)
        grp = self.groups.get(key)
        if grp is None:
            regions = [r for r in self.inst.region_index if r in elig]
            grp = self.groups[key] = _Group(key, job.gpus_per_stage, regions,
                                            min((self._speed[r] for r in regions), default=1.0))
        b = grp.add(job)
        for band in b.bands.values():
            band.waiting[band.pos[job.name]] = True
        self.hol_off[job.name] = self._hol_value(b, job.name, now) if self._rule else b.value(now)
        self.group_of[job.name] = grp
        c, d, _ = job_profile(self.inst, job)
        slow = max((job.stage_time_s / self._speed[r] for r in grp.regions), default=job.stage_time_s)
        self._prof[job.name] = (c, d, F.demand_gbps(job, slow))
        if self.bw_filter:
            insort(b.by_bmin, (self._prof[job.name][2], job.name))
        if self.skip:
            b.table.add(job.name, (c, d, self._prof[job.name][2], job.arrival_s, self._idx[job.name]))
            self._arrived.append(job.name)
        self._c.add(c)
        self._d.add(d)
        self._pending.add(job.name)

    def remove(self, name: str, now: float = 0.0) -> None:
        """``name`` leaves the queue at ``now`` (started); its head-of-line time is settled."""
        job = self.waiting.pop(name)
        b = self.group_of.pop(name).remove(job)
        c, d, bmin = self._prof.pop(name)
        if self.bw_filter:
            lst = b.by_bmin
            del lst[bisect_left(lst, (bmin, name))]
        b.ind.discard(name)
        if self.skip:
            b.table.remove(name)
        h = 0.0
        for band in b.bands.values():
            p = band.pos[name]
            band.waiting[p] = False
            h += band.take(p, now)
        self._c.remove(c)
        self._d.remove(d)
        self.none_at.pop(name, None)
        self.fits_at.pop(name, None)
        self._never.pop(name, None)
        self._pending.discard(name)
        h += (self._hol_value(b, name, now) if self._rule else b.value(now)) - self.hol_off.pop(name)
        t0 = self.ind_since.pop(name, None)
        if t0 is not None:
            h += now - t0
        if h:
            self.hol_s[name] = self.hol_s.get(name, 0.0) + h

    def finish(self, now: float) -> None:
        """Settle the head-of-line time of the jobs still waiting at the last event ``now``."""
        for name in list(self.waiting):
            self.remove(name, now)

    def released(self) -> None:
        """Resources were freed (a job finished)."""
        self.dirty = True

    def _sync(self, now: float) -> None:
        if self._curves:
            pk = self._clock.key(now)
            if pk != self._price_key:
                self._price_key = pk
                self.dirty = True
        if self.dirty:
            self.version += 1
            self.dirty = False

    # ------------------------------------------------------------------ placement with memo
    def _place(self, job: Job, state: ClusterState) -> JobPlan | None:
        v = self.version
        if self.none_at.get(job.name) == v:
            return None
        self.place_calls += 1
        plan = self.pol.place(job, state)
        if plan is None:
            self.none_at[job.name] = v
        else:
            self.fits_at[job.name] = v
        return plan

    def _fits(self, job: Job, state: ClusterState) -> bool:
        v = self.version
        if self.none_at.get(job.name) == v:
            return False
        if self.fits_at.get(job.name) == v:
            return True
        self.place_calls += 1
        ok = self.pol.fits(job, state)
        (self.fits_at if ok else self.none_at)[job.name] = v
        return ok

    def _rule_fits(self, job: Job, state: ClusterState) -> bool:
        """``_fits`` through the demand rule (``baselines.greedy_demand_rule``: fits == the replay passes b_j at
        the bucket's chain speed), asked once per version, group and stage count instead of once per job."""
        v = self.version
        name = job.name
        if self.none_at.get(name) == v:
            return False
        if self.fits_at.get(name) == v:
            return True
        if self._rules_v != v:
            self._rules_v, self._rules = v, {}
        key = (id(self.group_of[name]), job.stages)
        r = self._rules.get(key, self)
        if r is self:
            r = self._rules[key] = self._rule(job, job.stages, state)
        ok = r is not None and (r[1] is None or r[1].passes(F.demand_gbps(job, job.stage_time_s / r[0])))
        (self.fits_at if ok else self.none_at)[name] = v
        return ok

    def _never_fits(self, job: Job, state: ClusterState) -> bool:
        """``policy.never_fits``: not ``fits`` on the empty cluster at ``now``'s prices, asked again only when the
        price vector changed (its only time dependence); one empty state per price vector, so that a policy's
        per-state caches (the greedy chains' shared growth) serve every job."""
        v = self._never.get(job.name)
        if v is None or v[0] != self._price_key:
            if self._empty is None or self._empty[0] != self._price_key:
                self._empty = (self._price_key, ClusterState.empty(self.inst, state.now))
            v = self._never[job.name] = (self._price_key, not self.pol.fits(job, self._empty[1]))
        return v[1]

    def _may_fit(self, job: Job, grp: _Group, maxbw: float) -> bool:
        """Exact necessary condition for ``place`` on a job with T < S <= slots (see module doc)."""
        if self.single_only:
            return False
        if self.bw_filter:
            return maxbw >= self._prof[job.name][2] * (1.0 - 1e-9)
        return True

    # ------------------------------------------------------------------ decide
    def decide(self, now: float, state: ClusterState) -> list[JobPlan]:
        self._sync(now)
        if not self.waiting:
            return []
        if self.skip:
            return self._decide_skip(state)
        return self._decide_block(state)

    def _component_steps(self, grp: _Group, state: ClusterState) -> tuple[list[int], list[float]]:
        """A necessary condition of every bandwidth-checked chain, for the whole group at once: its regions lie
        in one component of the links whose residual is >= the job's smallest demand b_min, and that component
        holds S stages (``bace_pipe._one_component_holds``).  Adding the links in descending residual (Kruskal)
        gives (M, x): with the links of residual >= x[k], some component holds M[k] stages (M increasing)."""
        inst, free, bw, g = state.inst, state._free, state._bw, grp.g
        ri = inst.region_index
        tot = {ri[r]: free[r] // g for r in grp.regions if free[r] >= g}
        M = max(tot.values(), default=0)
        Ms, xs = [M], [math.inf]
        # the callers ask stage counts of the group's buckets only: once a component holds the largest (or
        # every slot), later links change no answer
        enough = min(grp.keys[-1] if grp.keys else 0, sum(tot.values()))
        if M >= enough:
            return Ms, xs
        parent = list(range(len(ri)))
        ab = inst.link_ends
        for k in sorted(range(len(bw)), key=bw.__getitem__, reverse=True):
            if bw[k] <= 0.0:
                break
            a, c = ab[k]
            while parent[a] != a:
                a = parent[a]
            while parent[c] != c:
                c = parent[c]
            if a != c:
                parent[a] = c
                n = tot[c] = tot.get(c, 0) + tot.pop(a, 0)
                if n > M:
                    M = n
                    Ms.append(M)
                    xs.append(bw[k])
                    if M >= enough:
                        break
        return Ms, xs

    def _bmin_prefix(self, b: _Bucket, S: int, steps) -> list[str]:
        """The jobs of bucket b (S stages) that may pass the component condition: b_min no more than the
        residual at which a component first holds S stages (with a relative slack of 1e-8: a filter, so it
        may only let more through)."""
        Ms, xs = steps
        k = bisect_left(Ms, S)
        if k == len(Ms):
            return []
        lim = xs[k] * (1.0 + 1e-8)
        lst = b.by_bmin
        return [n for _, n in lst[:bisect_right(lst, (lim, "\U0010ffff"))]]

    def _v0_limits(self, state: ClusterState) -> dict[int, dict[int, float | None]]:
        """The candidate rule at the start of a decision, per group and stage count: ``None`` when every job
        of the bucket is a candidate, a float when only the jobs with b_min at most it are (the component
        bound of a bandwidth-checked pathfinder, a bucket one region cannot hold), absent when none is.  A
        candidate is a job whose ``place`` may succeed on ``state`` as far as the group bounds and the policy's
        monotone filters tell (S <= slots; S <= T, or a multi-region chain allowed and, with a bandwidth check,
        b_min within the component bound).  Sets each group's T and slots for ``_run``."""
        out: dict[int, dict[int, float | None]] = {}
        for grp in self.groups.values():
            T, slots = grp.measure(state)
            grp.T, grp.slots = T, slots
            if slots <= 0:
                continue
            lims: dict[int, float | None] = {}
            steps = None
            for S in grp.keys:
                if S > slots:
                    break
                b = grp.buckets[S]
                if not b.jobs:
                    continue
                if S <= T:
                    lims[S] = None
                elif self.single_only:
                    continue
                elif self.bw_filter:
                    if steps is None:
                        steps = self._component_steps(grp, state)
                    Ms, xs = steps
                    k = bisect_left(Ms, S)
                    if k < len(Ms) and b.by_bmin[0][0] <= xs[k] * (1.0 + 1e-8):
                        lims[S] = xs[k] * (1.0 + 1e-8)
                else:
                    lims[S] = None
            if lims:
                out[id(grp)] = lims
        return out

    def _decide_skip(self, state: ClusterState) -> list[JobPlan]:
        """A skipping policy's decision: the candidates (``_v0_limits``) in priority (or FIFO) order, each
        asked ``place`` on what the jobs before it left, exactly as ``OrderedPolicy.decide`` on the whole queue
        (module doc, "Order").  The order is produced lazily (``_Stream`` per bucket, merged by a heap), and a
        bucket leaves the merge as soon as the bounds on what the decision's commits left rule it out, so a
        decision costs what it starts and asks, not the length of the queue.  When the previous decision
        started nothing at this very version, every old candidate is known to fail before a commit, so only the
        jobs that arrived since are asked until one starts; then the merge goes on behind it."""
        lims = self._v0_limits(state)
        arrived, self._arrived = self._arrived, []
        if not lims:
            self._quiet_v = self.version
            return []
        if self.by_priority and len(self.waiting) >= 2:
            key = _Key(state.alpha(), self._c.min(), self._c.max(), self._d.min(), self._d.max())
        else:
            key = _Key()        # arrival order: FIFO, or a single waiting job
        quiet = self.version == self._quiet_v
        v0 = self.version
        first: list = []
        if quiet:
            # every candidate but those that arrived since was asked at this version and failed
            prof, idx, waiting = self._prof, self._idx, self.waiting
            for name in arrived:
                job = waiting.get(name)
                if job is None:
                    continue
                lim = lims.get(id(self.group_of[name]), {})
                if job.stages not in lim:
                    continue
                cap = lim[job.stages]
                if cap is not None and prof[name][2] > cap:
                    continue
                first.append(((key(prof[name][0], prof[name][1]), job.arrival_s, idx[name]), job))
            if not first:
                self.stats["quiet_skips"] += 1
                return []
            first.sort(key=lambda e: e[0])
            self.stats["quiet_runs"] += 1

        def order(res: ClusterState, bounds: dict):
            after = None
            for k, job in first:
                yield job
                if self.version != v0:
                    after = k
                    break
            else:
                if quiet:
                    return      # none of the new jobs started: the old ones fail as before
            yield from self._merged(lims, key, res, bounds, v0, after)

        out = self._run(order, state, block=False)
        if not out:
            self._quiet_v = self.version
        return out

    def _merged(self, lims: dict, key: "_Key", res: ClusterState, bounds: dict, v0: int, after):
        """The candidates in decision order (key, arrival, instance index), merged from one ``_Stream`` per
        bucket; only those after ``after`` when given.  After a commit, a bucket whose stage count the group's
        bounds on ``res`` rule out (``_still_may_fit``'s conditions, monotone: commits only take) is dropped with
        all its jobs.  Under a demand rule, a bucket the rule rules out at this version is parked (below)."""
        waiting = self.waiting
        heap: list = []     # (key, arrival, index, seq, stream, name): each stream's next job
        seq = 0

        def streams(lims, after):
            nonlocal seq
            for grp in self.groups.values():
                lim = lims.get(id(grp))
                if lim is None:
                    continue
                for S, cap in lim.items():
                    st = _Stream(grp, grp.buckets[S], S, cap, key, after)
                    nxt = st.pop()
                    if nxt is not None:
                        heap.append(nxt[:3] + (seq, st, nxt[3]))
                        seq += 1

        streams(lims, after)
        heapq.heapify(heap)
        stats = self.stats
        # a bucket whose demand rule says no job of it fits at this version (``_rule_fits``: the shared growth
        # is stuck before S) is parked with its stream until the next commit, then resumes behind that job
        park = self._rule is not None
        parked: list = []
        while heap:
            e = heapq.heappop(heap)
            st = e[4]
            if self.version != v0 and not self._bucket_may_fit(st, res, bounds):
                stats["pruned_buckets"] += 1
                continue
            if park and self._rules_v == self.version and self._rules.get((id(st.grp), st.S), 0) is None:
                parked.append(st)
                stats["parked"] += 1
                continue
            stats["popped"] += 1
            v = self.version
            yield waiting[e[5]]
            if self.version != v:
                if parked:
                    for p in parked:
                        st2 = _Stream(p.grp, p.b, p.S, p.cap, key, e[:3])
                        nxt = st2.pop()
                        if nxt is not None:
                            heapq.heappush(heap, nxt[:3] + (seq, st2, nxt[3]))
                            seq += 1
                    parked = []
            nxt = st.pop()
            if nxt is not None:
                heapq.heappush(heap, nxt[:3] + (seq, st, nxt[3]))
                seq += 1

    def _bucket_may_fit(self, st: "_Stream", res: ClusterState, bounds: dict) -> bool:
        """``_still_may_fit`` for every job of a bucket at once (False: none of them may; the smallest b_min of
        the bucket stands for its jobs)."""
        b = st.b
        return self._may_fit_now(st.grp, st.S, b.by_bmin[0][0] if b.by_bmin else 0.0, res, bounds)

    def _decide_block(self, state: ClusterState) -> list[JobPlan]:
        return self._run(self.waiting.values(), state, block=True)

    def _run(self, jobs, state: ClusterState, block: bool) -> list[JobPlan]:
        free_total = state.total_free_gpus()
        res = state.copy()
        snap, snap_v = state, self.version        # an unchanging copy of res at its version, for fits()
        out = []
        v0 = self.version
        bounds: dict[int, tuple] = {}
        if callable(jobs):          # the order, produced lazily on the decision's residual (``_decide_skip``)
            jobs = jobs(res, bounds)
        for job in jobs:
            need = job.gpus
            if need > free_total:
                plan = None
            elif self.version != v0 and not self._still_may_fit(job, res, bounds):
                plan = None     # after a commit: the group's bounds on what is left rule it out
            else:
                # a skipping policy asks fits() (== place() is not None, cheaper where it fails: no pricing,
                # shared growths) first for a job one region cannot hold, the kind that often does not fit, where
                # the policy's fits() is cheaper than place() (``fits_first``); a blocking policy for the head of
                # the queue (usually the job that blocks it)
                # (``rule_after_fail``: a job one region can hold goes to ``place`` directly until a placement failed
                # at this version, then through the demand rule, which answers a whole bucket at once)
                ask = (not out) if block else (self.fits_first and (job.stages > self.group_of[job.name].T or (
                    self.rule_after_fail and self._fail_v == self.version)))
                if ask and snap_v != self.version:
                    snap, snap_v = res.freeze(), self.version
                if not ask:
                    plan = self._place(job, res)
                    if plan is None:
                        self._fail_v = self.version
                elif block or self._rule is None:
                    plan = self._place(job, res) if self._fits(job, snap) else None
                else:
                    plan = self._place(job, res) if self._rule_fits(job, snap) else None
            if plan is None:
                if block and not self._never_fits(job, state):
                    break
                continue
            res.commit(job, plan)
            self.version += 1
            free_total -= need
            out.append(plan)
        return out

    def _still_may_fit(self, job: Job, res: ClusterState, bounds: dict) -> bool:
        """The monotone necessary conditions of the candidates (``_v0_limits``) on ``res`` (the decision's
        residual after some commits): S <= slots, and with a bandwidth-checked pathfinder S <= T or the
        component bound."""
        return self._may_fit_now(self.group_of[job.name], job.stages, self._prof[job.name][2], res, bounds)

    def _may_fit_now(self, grp: _Group, S: int, bmin: float, res: ClusterState, bounds: dict) -> bool:
        """``_still_may_fit`` for stage count S and smallest demand ``bmin`` in group ``grp``; the group's
        bounds are measured once per version (``bounds``)."""
        c = bounds.get(id(grp))
        if c is None or c[0] != self.version:
            T, slots = grp.measure(res)
            c = bounds[id(grp)] = (self.version, T, slots, None)
        if S > c[2]:
            return False
        if S <= c[1] or not self.bw_filter:
            return True
        if c[3] is None:
            c = bounds[id(grp)] = c[:3] + (self._component_steps(grp, res),)
        Ms, xs = c[3]
        k = bisect_left(Ms, S)
        return k < len(Ms) and bmin <= xs[k] * (1.0 + 1e-8)

    # ------------------------------------------------------------------ head-of-line blocked set
    def hol_bounds(self, grp: _Group, state: ClusterState) -> tuple[int, int]:
        """(sure, limit): in this group a job with S <= sure is placed by ``place`` on ``state``, one with
        S > limit is not; in between ``fits`` is asked.  From the policy's ``group_bounds`` where it has one."""
        T, slots = grp.measure(state)
        grp.hol_T = T
        f = getattr(self.pol, "group_bounds", None)
        if f is not None:
            job = grp.any_job()
            if job is not None:
                sure, limit = f(job, state)
                return min(sure, slots), min(limit, slots)
        if self.single_only:
            return T, T
        if self.single_places:
            return T, slots
        return 0, slots

    def hol_update(self, state: ClusterState, now: float = 0.0) -> None:
        """Bring the head-of-line set up to ``state`` (the resources left after the decision at ``now``, at the
        version the decision ended with): the waiting jobs whose ``place`` succeeds on it.  Whole buckets are in
        or out by the group's bounds; only the jobs of mixed buckets are asked (module doc)."""
        maxbw = max(state._bw, default=0.0)
        done: set[int] = set()
        rule = self._rule
        for grp in self.groups.values():
            # bounds of a group are measured again when the state changed or the group is new
            fresh = grp.hol_v != self.version
            if fresh:
                grp.hol_sure, grp.hol_limit = self.hol_bounds(grp, state)
                grp.hol_v = self.version
            sure, limit = grp.hol_sure, grp.hol_limit
            for S in grp.keys:
                b = grp.buckets[S]
                mode = _IN if S <= sure else (_OUT if S > limit else _MIX)
                if rule is not None:
                    if b.mode == _IN and mode != _IN:
                        b.acc += now - b.since
                    elif mode == _IN and b.mode != _IN:
                        b.since = now
                    if mode == _MIX and b.jobs:
                        if fresh or b.mode != _MIX or b.active is None:
                            if self._open_band(grp, b, S, state, now):
                                done.add(id(b))
                    elif b.active is not None:
                        self._close_band(b, now)
                    b.mode = mode
                    continue
                if mode != b.mode:
                    self._set_mode(grp, b, mode, state, now, maxbw)
                    done.add(id(b))
                elif mode == _MIX and fresh:
                    self._recheck_bucket(grp, b, state, now, maxbw)
                    done.add(id(b))
        for name in self._pending:
            grp = self.group_of[name]
            job = self.waiting[name]
            b = grp.buckets[job.stages]
            if b.mode != _MIX or id(b) in done:
                continue
            if rule is None:
                self._recheck(grp, (job,), state, now, maxbw)
            elif b.active is not None and b.replay is not None and b.active.pos[name] >= b.active.hi:
                p = b.active.pos[name]
                if b.replay.passes(b.active.bs[p]):
                    b.active.join(np.array([p], dtype=np.intp), now)
        self._pending.clear()

    def _hol_value(self, b: _Bucket, name: str, now: float) -> float:
        """The time job ``name`` of bucket b would have spent in the head-of-line set had it waited there from
        the start (differences of it are what count)."""
        v = b.value(now)
        for band in b.bands.values():
            v += band.point(band.pos[name])
        a = b.active
        if a is not None and a.lo <= a.pos[name] < a.hi:
            v += now - a.since
        return v

    def _open_band(self, grp: _Group, b: _Bucket, S: int, state: ClusterState, now: float) -> bool:
        """Close the mixed bucket's open interval and open the one of ``state``: the jobs whose demand is in the
        rule's uncapped interval (a contiguous range of the band's sorted demands, found by binary search) are in
        the set through the band's clock; the waiting jobs above it are replayed one by one (the band's members).

        Every answer depends only on the chain speed, the replay's links and their residual values (the
        signature): when these are those of the open band, the interval and the members stay as they are (the
        band stays open: the same clock as closing and reopening it) and False is returned, so that jobs that
        joined the bucket since are asked on their own (``hol_update``'s pending jobs)."""
        r = self._rule(next(iter(b.jobs.values())), S, state)
        sig = None
        if r is not None:
            sig = (r[0], None) if r[1] is None else (r[0],) + r[1].signature()
            if b.active is not None and sig == b.sig:
                b.replay = r[1]
                self.stats["band_kept"] += 1
                return False
        if b.active is not None:
            b.active.close(now)
            b.active.settle(now)
            b.active = None
        b.replay = None
        b.sig = sig
        if r is not None:
            speed, replay = r
            band = b.bands.get(speed)
            if band is None:
                if self._universe is None:
                    self._universe = {}
                    for j in self.inst.jobs:
                        key = (j.gpus_per_stage, _eligible(self.inst, j), j.stages)
                        self._universe.setdefault(key, []).append(j)
                band = b.bands[speed] = _Band(self._universe[grp.key + (S,)], speed, b.jobs)
            bs = band.bs
            lo, hi = 0, len(bs)
            if replay is not None:
                # the uncapped interval by binary search; above it, each waiting job's replay on its own
                lo = bisect_right(bs, MIN_GBPS)
                hi, hit = uncapped_end(replay, bs, lo, hi)
                self.stats["limit_hits"] += hit
                ps = np.flatnonzero(band.waiting[hi:]) + hi
                if len(ps):
                    band.join(ps[replay.passes_array(band.bs_np[ps])], now)
                b.replay = replay
            band.lo, band.hi, band.since = lo, hi, now
            b.active = band
        return True

    def _close_band(self, b: _Bucket, now: float) -> None:
        """The bucket leaves the mixed mode: close its band and settle its individual members."""
        if b.active is not None:
            b.active.close(now)
            b.active.settle(now)
            b.active = None
        b.replay = None

    def _set_mode(self, grp: _Group, b: _Bucket, mode: int, state: ClusterState, now: float, maxbw: float) -> None:
        if b.mode == _IN:
            b.acc += now - b.since
        elif b.mode == _MIX:
            ind, hol = self.ind_since, self.hol_s
            for name in b.ind:
                t0 = ind.pop(name, None)
                if t0 is not None:
                    hol[name] = hol.get(name, 0.0) + (now - t0)
            b.ind.clear()
        b.mode = mode
        if mode == _IN:
            b.since = now
        elif mode == _MIX:
            self._recheck_bucket(grp, b, state, now, maxbw)

    def _recheck_bucket(self, grp: _Group, b: _Bucket, state: ClusterState, now: float, maxbw: float) -> None:
        """Individual membership of every job of a mixed bucket.  With a bandwidth-checked pathfinder only the
        jobs that pass the component condition and the present members are asked (the others are out)."""
        if not self.bw_filter or not b.jobs:
            self._recheck(grp, b.jobs.values(), state, now, maxbw)
            return
        S = next(iter(b.jobs.values())).stages
        names = self._bmin_prefix(b, S, self._component_steps(grp, state)) if S > grp.hol_T else list(b.jobs)
        ask = dict.fromkeys(names)
        ask.update(dict.fromkeys(b.ind))
        self._recheck(grp, [b.jobs[n] for n in ask], state, now, maxbw)

    def _recheck(self, grp: _Group, jobs, state: ClusterState, now: float, maxbw: float) -> None:
        """Individual membership of jobs of a mixed bucket."""
        ind, hol = self.ind_since, self.hol_s
        T = grp.hol_T
        for job in jobs:
            name = job.name
            if job.stages > T and not self._may_fit(job, grp, maxbw):
                m = False       # (the bandwidth condition is for multi-region chains only)
            else:
                m = self._fits(job, state)
            b = grp.buckets[job.stages]
            if m:
                if name not in ind:
                    ind[name] = now
                    b.ind.add(name)
            else:
                t0 = ind.pop(name, None)
                if t0 is not None:
                    b.ind.discard(name)
                    hol[name] = hol.get(name, 0.0) + (now - t0)


class _PriceClock:
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
