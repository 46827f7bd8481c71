"""The state of the incremental queue (``policies.queue``): the waiting jobs grouped and bucketed, the numbered
versions of the residual state, and the memoized answers of the policy's ``place`` and ``fits`` per version.
``queue_hol`` adds the head-of-line accounting, ``queue`` the decisions.

Why the answers the session takes from this state are those of the policy itself (each rule is exact):

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
  The price vector is recomputed only near a step of a curve (``PriceClock``); ``never_fits`` is ``not
  fits`` on one empty cluster per price vector.

The facts about a policy's rule come from its ``QueueTraits`` (``contract``), declared once.
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import JobPlan
from .base import ClusterState, eligible_set
from .priority import job_profile
from .queue_data import Bucket, Group, MinMax, PriceClock


class QueueState:
    """Waiting jobs, their groups, versions and placement memos of one queue-mode run (see module doc)."""

    def __init__(self, policy, inst: Instance):
        """``policy``: an ordered policy (``place``, ``fits``, ``queue_traits()``; ``ordered.OrderedPolicy``)."""
        self.pol = policy
        self.inst = inst
        traits = policy.queue_traits()
        self.skip = traits.hol == "skip"
        self.by_priority = traits.order == "priority"
        self.single_places = traits.single_region_places
        self.single_only = traits.single_region_only
        self.bw_filter = traits.bandwidth_checked
        self.fits_first = traits.fits_first
        self._group_bounds = traits.group_bounds
        # a chain rule that may fail for a job one region can hold (the price chain starts at the cheapest
        # region): once a placement failed at a version, ``fits`` is asked before ``place`` for every job, not
        # only for S > T (``_run``)
        self.rule_after_fail = self.fits_first and not self.single_places and not self.single_only
        self.waiting: dict[str, Job] = {}
        self.groups: dict[tuple, Group] = {}
        self.group_of: dict[str, Group] = {}
        self.version = 0
        self.dirty = False
        self.none_at: dict[str, int] = {}     # place(job) gave None at this version
        self.fits_at: dict[str, int] = {}     # place(job) gave a plan at this version
        self.place_calls = 0
        self._c, self._d = MinMax(), MinMax()
        self._prof: dict[str, tuple[float, float, float]] = {}   # compute, demand, b_min
        self._curves = [c for c in F.price_curves(inst).values() if c.values is not None and len(c.values) > 1]
        self._price_key: tuple | None = None
        self._idx = inst.job_index
        self._speed = inst.speed
        self._clock = PriceClock(self._curves)
        self._never: dict[str, tuple] = {}     # job -> (price key, never_fits)
        self._empty: tuple | None = None       # (price key, the empty cluster at those prices)
        # a demand rule (CR-LCF, CR-LDF, the price-chain ablation): its ``fits`` is the rule (``_rule_fits``), and
        # mixed buckets are clocked by demand bands (``queue_hol``)
        self._rule = traits.demand_rule
        self._fail_v = -1                      # a direct ``place`` failed at this version (``_run``)
        self._rules_v, self._rules = -1, {}    # the demand rule per (group, S) at version _rules_v (_rule_fits)
        # skipping policies: the version at which every candidate is known to fail (the last decision started
        # nothing), and the jobs that arrived since the last decision (see ``_decide_skip``)
        self._quiet_v = -1
        self._arrived: list[str] = []
        # how often each shortcut decided something (tests show every one is exercised)
        self.stats = dict.fromkeys(("quiet_skips", "quiet_runs", "pruned_buckets", "popped", "band_kept",
                                    "limit_hits", "parked"), 0)

    # ------------------------------------------------------------------ the queue
    def _enqueue(self, job: Job) -> Bucket:
        """``job`` joins its group and bucket (and the decision order's table); returns the bucket."""
        self.waiting[job.name] = job
        elig = eligible_set(self.inst, job)
        key = (job.gpus_per_stage, elig)
        grp = self.groups.get(key)
        if grp is None:
            regions = [r for r in self.inst.region_index if r in elig]
            grp = self.groups[key] = Group(key, job.gpus_per_stage, regions,
                                           min((self._speed[r] for r in regions), default=1.0))
        b = grp.add(job)
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
        return b

    def _dequeue(self, name: str) -> Bucket:
        """``name`` leaves the queue: out of its bucket, the normalization and the memos; returns the bucket."""
        job = self.waiting.pop(name)
        b = self.group_of.pop(name).remove(job)
        c, d, bmin = self._prof.pop(name)
        if self.bw_filter:
            lst = b.by_bmin
            del lst[bisect_left(lst, (bmin, name))]
        if self.skip:
            b.table.remove(name)
        self._c.remove(c)
        self._d.remove(d)
        self.none_at.pop(name, None)
        self.fits_at.pop(name, None)
        self._never.pop(name, None)
        return b

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
        """``_fits`` through the demand rule (``greedy_chains.greedy_demand_rule``: fits == the replay passes b_j at
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

    def _component_steps(self, grp: Group, state: ClusterState) -> tuple[list[int], list[float]]:
        """A necessary condition of every bandwidth-checked chain, for the whole group at once: its regions lie
        in one component of the links whose residual is >= the job's smallest demand b_min, and that component
        holds S stages (``pathfinder.one_component_holds``).  Adding the links in descending residual (Kruskal)
        gives (M, x): with the links of residual >= x[k], some component holds M[k] stages (M increasing)."""
        inst, free, bw, g = state.inst, state.free_gpus, state.free_link_gbps, grp.g
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
