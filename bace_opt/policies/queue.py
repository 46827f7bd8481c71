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
  fit stays out of sight until capacity that could make it fit is freed.  With a bandwidth-checked pathfinder
  a multi-region chain also needs one link whose residual carries the job's smallest demand b_min (b_j at
  the slowest eligible GPU): a job with S > T fails without it.  Policies whose rules always place a job one
  region can hold (``single_region_places``: BACE-Pipe with all seeds, LCF, LDF, CR-LDF) need no placement
  call to know that a job with S <= T fits; single-region policies (``single_region_only``: LCF, LDF) never
  place a job with S > T.
* Versions.  The residual state is numbered: every commit (a job started), every release (a job finished)
  and every change of the price vector gives a new version.  ``place`` is deterministic in (job, residual
  GPUs and bandwidth, prices), and whether it returns a plan does not depend on the time otherwise, so a
  job whose ``place`` returned None (or a plan) at version v gives the same answer at version v again.
* Order.  Skipping policies (``hol="skip"``) start, in priority (or FIFO) order, exactly the jobs whose
  ``place`` succeeds on what the jobs before them left; jobs filtered out above would get None and be skipped,
  so only the candidates are sorted.  The priority of a job uses the min and max of compute time and demand
  over *all* waiting jobs, kept in heaps with lazy deletion, with the same float expressions as
  ``bace_pipe.priorities``.  FIFO policies with head-of-line blocking walk the queue in arrival order and
  stop at the first job that does not fit (skipping jobs that never fit), as ``decide`` does.
* Head-of-line blocked set (``hol_update``): the waiting jobs whose ``place`` succeeds on the state after the
  decision.  It is maintained by difference: jobs whose bucket crossed a group's ``T`` or ``slots``, new
  arrivals, and, when the version changed, the jobs between ``T`` and ``slots`` (the only ones that need a
  placement call) are re-examined; the others keep their membership.
"""
from __future__ import annotations

import heapq
from bisect import insort
from typing import Sequence

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import JobPlan
from .base import ClusterState, _eligible


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


class _Group:
    """Waiting jobs with the same GPUs per stage and eligible regions, bucketed by stage count."""

    __slots__ = ("g", "regions", "buckets", "keys", "T", "slots", "hol_T", "hol_slots")

    def __init__(self, g: int, regions: Sequence[str]):
        self.g = g
        self.regions = tuple(regions)
        self.buckets: dict[int, dict[str, Job]] = {}
        self.keys: list[int] = []            # sorted stage counts with a bucket
        self.T = self.slots = 0
        self.hol_T = self.hol_slots = 0      # T and slots at the last hol_update

    def add(self, job: Job) -> None:
        b = self.buckets.get(job.stages)
        if b is None:
            b = self.buckets[job.stages] = {}
            insort(self.keys, job.stages)
        b[job.name] = job

    def remove(self, job: Job) -> None:
        self.buckets[job.stages].pop(job.name, None)

    def measure(self, state: ClusterState) -> tuple[int, int]:
        g, free = self.g, state._free
        T = slots = 0
        for r in self.regions:
            n = free[r] // g
            slots += n
            if n > T:
                T = n
        return T, slots

    def jobs_between(self, lo: int, hi: int):
        """Jobs with lo < S <= hi."""
        for s in self.keys:
            if s > hi:
                break
            if s > lo:
                yield from self.buckets[s].values()


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
        # head-of-line blocked set
        self.members: set[str] = set()
        self._pending: set[str] = set()       # arrived since the last hol_update
        self._hol_version = -1

    # ------------------------------------------------------------------ the queue
    def add(self, job: Job) -> None:
        from .bace_pipe import job_profile
        self.waiting[job.name] = job
        elig = _eligible(self.inst, job)
        key = (job.gpus_per_stage, elig)
        grp = self.groups.get(key)
        if grp is None:
            regions = [r for r in self.inst.region_index if r in elig]
            grp = self.groups[key] = _Group(job.gpus_per_stage, regions)
        grp.add(job)
        self.group_of[job.name] = grp
        c, d, _ = job_profile(self.inst, job)
        slow = max((job.stage_time_s / self._speed[r] for r in grp.regions), default=job.stage_time_s)
        self._prof[job.name] = (c, d, F.demand_gbps(job, slow))
        self._c.add(c)
        self._d.add(d)
        self._pending.add(job.name)

    def remove(self, name: str) -> None:
        job = self.waiting.pop(name)
        self.group_of.pop(name).remove(job)
        c, d, _ = self._prof.pop(name)
        self._c.remove(c)
        self._d.remove(d)
        self.none_at.pop(name, None)
        self.fits_at.pop(name, None)
        self.members.discard(name)
        self._pending.discard(name)

    def released(self) -> None:
        """Resources were freed (a job finished)."""
        self.dirty = True

    def _sync(self, now: float) -> None:
        if self._curves:
            pk = tuple(c.at(now) for c in self._curves)
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
        return self._place(job, state) is not None

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

    def _candidates(self, state: ClusterState) -> list[Job]:
        maxbw = max(state._bw, default=0.0)
        out = []
        v = self.version
        for grp in self.groups.values():
            T, slots = grp.measure(state)
            grp.T, grp.slots = T, slots
            if slots <= 0:
                continue
            for job in grp.jobs_between(0, slots):
                if job.stages <= T:
                    out.append(job)
                elif self.none_at.get(job.name) != v and self._may_fit(job, grp, maxbw):
                    out.append(job)
        return out

    def _decide_skip(self, state: ClusterState) -> list[JobPlan]:
        cands = self._candidates(state)
        if not cands:
            return []
        idx = self._idx
        if self.by_priority and len(self.waiting) >= 2:
            alpha = state.alpha()
            clo, chi, dlo, dhi = self._c.min(), self._c.max(), self._d.min(), self._d.max()
            cflat = chi - clo <= 1e-12 * max(abs(chi), 1.0)
            dflat = dhi - dlo <= 1e-12 * max(abs(dhi), 1.0)
            prof = self._prof

            def key(j):
                c, d, _ = prof[j.name]
                i = 0.0 if cflat else (c - clo) / (chi - clo)
                dd = 0.0 if dflat else (d - dlo) / (dhi - dlo)
                return (-((1.0 - alpha) * (1.0 - i) + alpha * (1.0 - dd)), j.arrival_s, idx[j.name])
            cands.sort(key=key)
        else:
            cands.sort(key=lambda j: (j.arrival_s, idx[j.name]))
        return self._run(cands, state, block=False)

    def _decide_block(self, state: ClusterState) -> list[JobPlan]:
        return self._run(self.waiting.values(), state, block=True)

    def _run(self, jobs, state: ClusterState, block: bool) -> list[JobPlan]:
        free_total = state.total_free_gpus()
        res = state.copy()
        out = []
        for job in jobs:
            need = job.gpus
            plan = None if need > free_total else self._place(job, res)
            if plan is None:
                if block and not self.pol.never_fits(job, state):
                    break
                continue
            res.commit(job, plan)
            self.version += 1
            free_total -= need
            out.append(plan)
        return out

    # ------------------------------------------------------------------ head-of-line blocked set
    def hol_update(self, state: ClusterState) -> tuple[list[str], list[str]]:
        """(entered, left): changes of the set of waiting jobs whose ``place`` succeeds on ``state`` (the
        resources left after the decision, at the version the decision ended with)."""
        changed = self.version != self._hol_version
        self._hol_version = self.version
        maxbw = max(state._bw, default=0.0)
        recheck: dict[str, Job] = {n: self.waiting[n] for n in self._pending}
        self._pending.clear()
        for grp in self.groups.values():
            T, slots = grp.measure(state)
            oT, oslots = grp.hol_T, grp.hol_slots
            grp.hol_T, grp.hol_slots = T, slots
            if self.single_places:
                # jobs with S <= T fit without a call: only buckets that crossed T change membership
                lo, hi = min(T, oT), max(T, oT)
                for j in grp.jobs_between(lo, hi):
                    recheck[j.name] = j
                if changed or T != oT or slots != oslots:
                    for j in grp.jobs_between(min(T, oT), max(slots, oslots)):
                        recheck[j.name] = j
            elif self.single_only:
                lo, hi = min(T, oT), max(T, oT)
                for j in grp.jobs_between(lo, hi):
                    recheck[j.name] = j
            else:
                if changed or T != oT or slots != oslots:
                    for j in grp.jobs_between(0, max(slots, oslots)):
                        recheck[j.name] = j
        entered, left = [], []
        members = self.members
        for name, job in recheck.items():
            grp = self.group_of[name]
            s = job.stages
            if s > grp.hol_slots:
                m = False
            elif s <= grp.hol_T and (self.single_places or self.single_only):
                m = True
            elif s > grp.hol_T and not self._may_fit(job, grp, maxbw):
                m = False
            else:
                m = self._fits(job, state)
            if m and name not in members:
                members.add(name)
                entered.append(name)
            elif not m and name in members:
                members.discard(name)
                left.append(name)
        return entered, left
