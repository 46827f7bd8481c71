"""Incremental queue-mode decisions for the ordered policies (issue 15): each event's work follows what changed,
not the length of the queue, and every decision is the one ``OrderedPolicy.decide`` makes on the whole queue.

``OrderedPolicy.queue_session(inst)`` returns a ``QueueSession`` (or None for an option mix it does not cover,
e.g. priority order with head-of-line blocking; the simulator then offers every waiting job, as before).  The
simulator tells the session which jobs wait (``add`` / ``remove``) and when resources were released
(``released``); the session answers ``decide(now, state)`` and ``hol_update(state_after)``.

The session is built in three layers, one job each: ``queue_state`` (the waiting jobs in groups and buckets,
versions of the residual state, memoized placement answers), ``queue_hol`` (the head-of-line blocked set and
times) and this module (the decisions); the data structures are in ``queue_data``.  Why the decisions are the
same (each rule is exact, none is a heuristic; the groups, component bound and versions: ``queue_state``):

* Order.  Skipping policies (``hol="skip"``) start, in priority (or FIFO) order, exactly the jobs whose
  ``place`` succeeds on what the jobs before them left.  The candidates are the jobs the group bounds let
  through on the state at the start (whole buckets, or with a bandwidth-checked pathfinder the jobs of a
  bucket whose b_min is within the component bound); jobs already known to fail on that state are among
  them (the greedy rules are not monotone in the free resources, so such a job may start after the
  decision's first commit).  The priority of a job uses the min and max of compute time and demand over
  *all* waiting jobs, kept in heaps with lazy deletion, with the same float expressions as
  ``priority.priorities``.  The order is produced lazily: each bucket keeps its jobs as numpy columns
  (``queue_data.Table``), a ``Stream`` per candidate bucket yields them in (key, arrival, index) order (vectorized
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
"""
from __future__ import annotations

import heapq
from bisect import bisect_left

from ..instance import Job
from ..schedule import JobPlan
from .base import ClusterState
from .queue_data import Group, Key, Stream
from .queue_hol import HolSession


class QueueSession(HolSession):
    """Incremental ``decide`` for an ``OrderedPolicy`` in queue mode (see module doc)."""

    # ------------------------------------------------------------------ decide
    def decide(self, now: float, state: ClusterState) -> list[JobPlan]:
        self._sync(now)
        if not self.waiting:
            return []
        if self.skip:
            return self._decide_skip(state)
        return self._decide_block(state)

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
        (module doc, "Order").  The order is produced lazily (``Stream`` per bucket, merged by a heap), and a
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
            key = Key(state.alpha(), self._c.min(), self._c.max(), self._d.min(), self._d.max())
        else:
            key = Key()        # arrival order: FIFO, or a single waiting job
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

    def _merged(self, lims: dict, key: "Key", res: ClusterState, bounds: dict, v0: int, after):
        """The candidates in decision order (key, arrival, instance index), merged from one ``Stream`` per
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
                    st = Stream(grp, grp.buckets[S], S, cap, key, after)
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
                        st2 = Stream(p.grp, p.b, p.S, p.cap, key, e[:3])
                        nxt = st2.pop()
                        if nxt is not None:
                            heapq.heappush(heap, nxt[:3] + (seq, st2, nxt[3]))
                            seq += 1
                    parked = []
            nxt = st.pop()
            if nxt is not None:
                heapq.heappush(heap, nxt[:3] + (seq, st, nxt[3]))
                seq += 1

    def _bucket_may_fit(self, st: "Stream", res: ClusterState, bounds: dict) -> bool:
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
            elif (block or self.version != v0) and not self._still_may_fit(job, res, bounds):
                # after a commit (a skipping policy's candidates passed them at the start), or in FIFO order with
                # head-of-line blocking at any point: the group's bounds on what is left rule it out (a job larger
                # than any region under a single-region rule costs a lookup, not a ``fits``, at every event)
                plan = None
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
        residual after some commits): S <= slots; S <= T under a single-region rule; and with a bandwidth-checked
        pathfinder S <= T or the component bound."""
        return self._may_fit_now(self.group_of[job.name], job.stages, self._prof[job.name][2], res, bounds)

    def _may_fit_now(self, grp: Group, S: int, bmin: float, res: ClusterState, bounds: dict) -> bool:
        """``_still_may_fit`` for stage count S and smallest demand ``bmin`` in group ``grp``; the group's
        bounds are measured once per version (``bounds``)."""
        c = bounds.get(id(grp))
        if c is None or c[0] != self.version:
            T, slots = grp.measure(res)
            c = bounds[id(grp)] = (self.version, T, slots, None)
        if S > c[2]:
            return False
        if S <= c[1]:
            return True
        if self.single_only:     # only a job one region holds is placed (the policy's traits)
            return False
        if not self.bw_filter:
            return True
        if c[3] is None:
            c = bounds[id(grp)] = c[:3] + (self._component_steps(grp, res),)
        Ms, xs = c[3]
        k = bisect_left(Ms, S)
        return k < len(Ms) and bmin <= xs[k] * (1.0 + 1e-8)

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
