"""The head-of-line accounting of the incremental queue (``policies.queue``): which waiting jobs the policy's own
``place`` would start alone on the resources a decision left, and for how long each of them was so blocked
(sim.py, "Head-of-line blocked time").

* Head-of-line blocked set (``hol_update``): the waiting jobs whose ``place`` succeeds on the state after the
  decision (the decision's own state object when it started nothing, so per-state caches are shared).  A
  group's bounds (sure, limit) put a whole bucket in (S <= sure), out (S > limit) or mixed.  A bucket in
  the set keeps one clock for all its jobs (the time it spent wholly in the set); a job's blocked time is
  its bucket's clock at leaving minus at joining, so a bucket that crosses a bound costs O(1), not a step
  per job.  In a mixed bucket the jobs are asked one by one (``fits``) and tracked individually, except
  under a demand rule (CR-LCF, CR-LDF, the price-chain ablation): there every job of the bucket gets the
  same chain prefix, and the reservation replay decides by the job's demand b alone.  While no hop is capped
  at its residual the replay passes, and that holds on an interval (MIN_GBPS, b*] (a smaller b leaves every
  link at least as much); the bucket's jobs sorted by b (a ``Band`` per chain speed, over the jobs waiting in
  the bucket when it is built: the session sees no job before it arrives) are in the set on a range of
  positions found by binary search, and the time each position spends in the set is kept in a Fenwick tree
  (range add, point query).  A job arriving in a bucket that has bands settles their time into its jobs'
  offsets and drops them (``_drop_bands``); they are built again, with it, when next needed.  Above
  b* a hop is capped, a smaller b can take more of a later shared link than a larger one, so the jobs there
  are replayed one by one (vectorized) and tracked individually (numpy arrays per band, settled at once).
  What a band's answers read is its signature (chain speed, the replay's links and their residuals); while
  it is unchanged the band stays open.
  The interval's end b* is placed by its closed form (``greedy_chains._Replay.limit``) and confirmed by the
  replay on both sides (``uncapped_end``), else found by bisection.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from ..instance import Job
from .base import MIN_GBPS, ClusterState
from .queue_data import IN, MIX, OUT, Band, Bucket, Group, uncapped_end
from .queue_state import QueueState


class HolSession(QueueState):
    """A ``QueueState`` with its head-of-line blocked set and times (see module doc)."""

    def __init__(self, policy, inst):
        super().__init__(policy, inst)
        # head-of-line blocked set and time (see module doc)
        self.ind_since: dict[str, float] = {}  # job of a mixed bucket -> time since when it is in the set
        self.hol_off: dict[str, float] = {}    # job -> its bucket's clock value when it joined the bucket
        self.hol_s: dict[str, float] = {}      # job -> head-of-line-blocked time settled so far
        self._pending: set[str] = set()       # arrived since the last hol_update

    # ------------------------------------------------------------------ the queue
    def add(self, job: Job, now: float = 0.0) -> None:
        """``job`` starts waiting at ``now``."""
        b = self._enqueue(job)
        if b.bands:
            self._drop_bands(b, job.name, now)
        self.hol_off[job.name] = self._hol_value(b, job.name, now) if self._rule else b.value(now)
        self._pending.add(job.name)

    def remove(self, name: str, now: float = 0.0) -> None:
        """``name`` leaves the queue at ``now`` (started); its head-of-line time is settled."""
        b = self._dequeue(name)
        b.ind.discard(name)
        h = 0.0
        for band in b.bands.values():
            p = band.pos[name]
            band.waiting[p] = False
            h += band.take(p, now)
        self._pending.discard(name)
        h += (self._hol_value(b, name, now) if self._rule else b.value(now)) - self.hol_off.pop(name)
        t0 = self.ind_since.pop(name, None)
        if t0 is not None:
            h += now - t0
        if h:
            self.hol_s[name] = self.hol_s.get(name, 0.0) + h

    def _drop_bands(self, b: Bucket, new: str, now: float) -> None:
        """Job ``new`` joined bucket b, whose bands do not hold it: every other waiting job's band time up to ``now``
        is settled (its members' time into ``hol_s``, its Fenwick time into its offset ``hol_off``, since the
        bands' clocks restart at 0) and the bands are dropped, to be built again with every waiting job."""
        a = b.active
        if a is not None:
            a.close(now)
            b.active = None
        b.replay = b.sig = None
        bands = b.bands.values()
        for name in b.jobs:
            if name == new:
                continue
            h = pt = 0.0
            for band in bands:
                p = band.pos[name]
                h += band.take(p, now)
                pt += band.point(p)
            if h:
                self.hol_s[name] = self.hol_s.get(name, 0.0) + h
            self.hol_off[name] -= pt
        b.bands = {}

    def finish(self, now: float) -> None:
        """Settle the head-of-line time of the jobs still waiting at the last event ``now``."""
        for name in list(self.waiting):
            self.remove(name, now)

    def _may_fit(self, job: Job, grp: Group, maxbw: float) -> bool:
        """Exact necessary condition for ``place`` on a job with T < S <= slots (see ``queue_state``)."""
        if self.single_only:
            return False
        if self.bw_filter:
            return maxbw >= self._prof[job.name][2] * (1.0 - 1e-9)
        return True

    def _bmin_prefix(self, b: Bucket, S: int, steps) -> list[str]:
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

    # ------------------------------------------------------------------ head-of-line blocked set
    def hol_bounds(self, grp: Group, state: ClusterState) -> tuple[int, int]:
        """(sure, limit): in this group a job with S <= sure is placed by ``place`` on ``state``, one with
        S > limit is not; in between ``fits`` is asked.  From the policy's ``group_bounds`` (its ``QueueTraits``)
        where it has one."""
        T, slots = grp.measure(state)
        grp.hol_T = T
        f = self._group_bounds
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
        maxbw = max(state.free_link_gbps, default=0.0)
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
                mode = IN if S <= sure else (OUT if S > limit else MIX)
                if rule is not None:
                    if b.mode == IN and mode != IN:
                        b.acc += now - b.since
                    elif mode == IN and b.mode != IN:
                        b.since = now
                    if mode == MIX and b.jobs:
                        if fresh or b.mode != MIX or b.active is None:
                            if self._open_band(grp, b, S, state, now):
                                done.add(id(b))
                    elif b.active is not None:
                        self._close_band(b, now)
                    b.mode = mode
                    continue
                if mode != b.mode:
                    self._set_mode(grp, b, mode, state, now, maxbw)
                    done.add(id(b))
                elif mode == MIX and fresh:
                    self._recheck_bucket(grp, b, state, now, maxbw)
                    done.add(id(b))
        for name in self._pending:
            grp = self.group_of[name]
            job = self.waiting[name]
            b = grp.buckets[job.stages]
            if b.mode != MIX or id(b) in done:
                continue
            if rule is None:
                self._recheck(grp, (job,), state, now, maxbw)
            elif b.active is not None and b.replay is not None and b.active.pos[name] >= b.active.hi:
                p = b.active.pos[name]
                if b.replay.passes(b.active.bs[p]):
                    b.active.join(np.array([p], dtype=np.intp), now)
        self._pending.clear()

    def _hol_value(self, b: Bucket, name: str, now: float) -> float:
        """The time job ``name`` of bucket b would have spent in the head-of-line set had it waited there from
        the start (differences of it are what count)."""
        v = b.value(now)
        for band in b.bands.values():
            v += band.point(band.pos[name])
        a = b.active
        if a is not None and a.lo <= a.pos[name] < a.hi:
            v += now - a.since
        return v

    def _open_band(self, grp: Group, b: Bucket, S: int, state: ClusterState, now: float) -> bool:
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
                band = b.bands[speed] = Band(list(b.jobs.values()), speed, b.jobs)
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

    def _close_band(self, b: Bucket, now: float) -> None:
        """The bucket leaves the mixed mode: close its band and settle its individual members."""
        if b.active is not None:
            b.active.close(now)
            b.active.settle(now)
            b.active = None
        b.replay = None

    def _set_mode(self, grp: Group, b: Bucket, mode: int, state: ClusterState, now: float, maxbw: float) -> None:
        if b.mode == IN:
            b.acc += now - b.since
        elif b.mode == MIX:
            ind, hol = self.ind_since, self.hol_s
            for name in b.ind:
                t0 = ind.pop(name, None)
                if t0 is not None:
                    hol[name] = hol.get(name, 0.0) + (now - t0)
            b.ind.clear()
        b.mode = mode
        if mode == IN:
            b.since = now
        elif mode == MIX:
            self._recheck_bucket(grp, b, state, now, maxbw)

    def _recheck_bucket(self, grp: Group, b: Bucket, state: ClusterState, now: float, maxbw: float) -> None:
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

    def _recheck(self, grp: Group, jobs, state: ClusterState, now: float, maxbw: float) -> None:
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
