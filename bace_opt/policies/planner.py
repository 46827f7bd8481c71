"""plan-jct: an online policy that plans (issue 43 item 2).  At every event it re-plans the start order of the
waiting jobs over the horizon for the least mean JCT (``mu`` = 0) or mean JCT + mu x cost, and commits only the
jobs the plan starts now; the others wait, possibly held back so that a better packing starts later.

One decision (``PlanJct.plan``):

1. **What it knows.**  The waiting jobs it is handed (never ``state.inst.jobs``: only jobs that have arrived),
   the free resources of ``state``, and, in its queue session (the simulator's path), the jobs it started
   itself with their known ends (``evaluate.price_plan`` of the plan it returned; a job's end is known when it
   starts).  A call of ``decide`` outside a session (``gap``'s decision epoch, blocking mode) does not know
   when the busy GPUs come back: it assumes they come back after the longest waiting job's run time, and
   starts every job that still fits after the plan's (work-conserving, as blocking mode needs).
2. **The plan.**  The pooled list scheduler of ``policies.planner_core``: every waiting job holds its GPUs
   W_j for its run time D_j (the run time of its cheapest placement on the empty cluster, the
   ``price-pack`` chain search), on one pool of GPUs that the running jobs give back at their ends.  Its
   order is searched (starting orders: the previous decision's, shortest first, least area first, arrival
   order, fewest GPUs first; then an iterated local search: seeded insert/swap moves, first improvement, random
   kicks when it stalls) within ``max_work`` job placements scheduled: a deterministic budget.
   ``time_cap_s`` is a wall-clock safety cap only (far inside the gate's 300 s limit); on the paper
   instances it is never reached.
2b. **Sampled futures** (``futures`` > 0, default 8; ``policies.planner_future``).  Whether one of the largest
   jobs the plan starts now should wait for the short jobs likely to arrive while it runs: scenarios of a stream
   of unknown length drawn from the arrived jobs only (rate, job mix; about ``future_horizon`` x jobs seen more),
   each ordered by the same pooled search (``future_work`` placements); a job is held when that lowers the
   expected sum of JCTs.  Never with nothing running or no arrival expected (batch arrivals).
3. **Commit.**  The jobs the best plan starts now are placed on the real regions and links, on a private copy
   of the state: together by price-pack's packing (long jobs into the cheap GPUs) when it places them all, else
   one by one in plan order: price-pack's cheapest chain (``cheapest_placement``), else BACE-Pipe's
   bandwidth-aware pathfinder.  A job the pool holds but the regions and links cannot (fragmentation,
   measured bandwidth) is deferred to the next release and the rest is re-scheduled (same order, the placed
   jobs now running), until the plan's now-jobs all place.

``mu`` > 0 adds mu x n x (a job's estimated electricity at its planned start: its cheapest placement alone,
priced over its run) per job to the value of an order (n: the waiting jobs; mean JCT + mu x cost).  With prices
constant in time every order pays the same, so ``mu`` changes no decision there (the placement is the cheapest
chain already); with prices that vary in time it moves the dear jobs toward the cheap hours, within the list
scheduler's earliest starts (it does not delay a job for a cheaper hour on its own).

Deterministic: the search's moves are drawn from ``random.Random(seed)`` (the simulator's seed, default 0),
ties are broken by the instance's job order.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Sequence

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import JobPlan
from ..evaluate import price_plan
from .bace_pipe import BacePipe
from .base import ClusterState, Residual
from .contract import PolicyBase, WaitingQueue
from .plans import plan_cost
from .planner_core import NOW_EPS_S, PJob, Planner, Profile, starting_orders
from .planner_future import choose_holds
from .price_pack import PricePack, cheapest_placement


class PlanJct(PolicyBase):
    """See the module doc.  ``mu``: weight of cost (USD) against mean JCT (s); ``max_work``: job placements the
    order search may evaluate per decision; ``time_cap_s``: wall-clock safety cap of one decision's search (and of
    its sampled futures); ``futures``: scenarios per decision (0: never hold); ``future_horizon``: more jobs the
    stream is assumed to bring, x jobs seen; ``future_work``: placements of each scenario's search."""

    def __init__(self, name: str = "plan-jct", mu: float = 0.0, max_work: int = 40_000, time_cap_s: float = 5.0,
                 max_regions: int = 4, via: str = "auto", k_routes: int = 4, seed: int = 0, futures: int = 8,
                 future_horizon: float = 0.75, future_work: int = 1_500, hold_wake: float = 0.0):
        if not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu >= 0):
            raise ValueError(f"mu must be a number >= 0, got {mu!r}")
        if not (isinstance(max_work, int) and max_work >= 0):
            raise ValueError(f"max_work must be an integer >= 0, got {max_work!r}")
        if not (isinstance(time_cap_s, (int, float)) and time_cap_s > 0):
            raise ValueError(f"time_cap_s must be a number > 0, got {time_cap_s!r}")
        if not (isinstance(futures, int) and not isinstance(futures, bool) and 0 <= futures <= 1000):
            raise ValueError(f"futures must be an integer in [0, 1000], got {futures!r}")
        if not (isinstance(future_horizon, (int, float)) and math.isfinite(future_horizon) and future_horizon > 0):
            raise ValueError(f"future_horizon must be a number > 0, got {future_horizon!r}")
        if not (isinstance(future_work, int) and not isinstance(future_work, bool) and future_work >= 0):
            raise ValueError(f"future_work must be an integer >= 0, got {future_work!r}")
        if not (isinstance(hold_wake, (int, float)) and math.isfinite(hold_wake) and hold_wake >= 0):
            raise ValueError(f"hold_wake must be a number >= 0, got {hold_wake!r}")
        self.name = name
        self.mu, self.max_work, self.time_cap_s = float(mu), max_work, float(time_cap_s)
        self.max_regions, self.via, self.k_routes, self.seed = max_regions, via, k_routes, int(seed)
        self.futures, self.future_horizon, self.future_work = futures, float(future_horizon), future_work
        self.hold_wake = float(hold_wake)
        self.wake_s: float | None = None        # the last decision's wake-up for the job it held (queue session)
        self.options = {"mu": self.mu, "max_work": max_work, "time_cap_s": self.time_cap_s,
                        "max_regions": max_regions, "via": via, "k_routes": k_routes, "futures": futures,
                        "future_horizon": self.future_horizon, "future_work": future_work,
                        "hold_wake": self.hold_wake}
        self.bace = BacePipe(via=via, k_routes=k_routes)
        self.packer = PricePack(max_regions=max_regions, via=via, k_routes=k_routes)
        self.stats = {"decisions": 0, "evals": 0, "work": 0, "deferred": 0, "capped": 0, "held": 0,
                      "future_work": 0}

    # ------------------------------------------------------------------ the contract
    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """The cheapest chain of ``job`` alone (price-pack's), else BACE-Pipe's placement."""
        plan = cheapest_placement(job, state, self.max_regions, self.via, self.k_routes)
        return plan if plan is not None else self.bace.place(job, state)

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        """Outside a session (module doc, 1): busy GPUs assumed back after the longest waiting run; then every
        job that still fits, in plan order."""
        if not queue:
            return []
        durs = [self.duration(state.inst, j) for j in queue]
        busy = self.pool(state.inst) - state.total_free_gpus()
        releases = [(now + max(durs), busy)] if busy > 0 else []
        plans, order, res = self.plan(now, queue, state, releases)
        started = {p.name for p in plans}
        jobs = {j.name: j for j in queue}
        for name in order:
            if name not in started:
                p = self.place(jobs[name], res)
                if p is not None:
                    res.commit(jobs[name], p)
                    plans.append(p)
        return plans

    def queue_session(self, inst: Instance) -> "PlanSession":
        return PlanSession(self, inst)

    def extra_meta(self) -> dict:
        return dict(self.stats)

    # ------------------------------------------------------------------ the plan
    @staticmethod
    def pool(inst: Instance) -> int:
        return sum(r.gpus for r in inst.regions)

    def duration(self, inst: Instance, job: Job) -> float:
        """D_j: the run time of the job's cheapest placement on the empty cluster, or its compute time
        N (m + S - 1) t_j when it has none."""
        return self.alone(inst, job)[0]

    def alone(self, inst: Instance, job: Job) -> tuple[float, tuple]:
        """(run time, blocks) of the job's cheapest placement on the empty cluster at its arrival (cached per
        instance; no blocks when it has none)."""
        cache = inst.__dict__.setdefault("_planner_alone", {})
        key = (job.name, self.max_regions, self.via, self.k_routes)
        v = cache.get(key)
        if v is None:
            empty = ClusterState.empty(inst, job.arrival_s)
            p = cheapest_placement(job, empty, self.max_regions, self.via, self.k_routes)
            if p is None:
                v = (job.iterations * (job.microbatches + job.stages - 1) * job.stage_time_s, ())
            else:
                v = (plan_cost(inst, job, p)[1], tuple((b.region, b.stages) for b in p.blocks))
            cache[key] = v
        return v

    def cost_at(self, inst: Instance, jobs: dict) -> Callable[[str, float], float]:
        """A job's estimated electricity when it starts at a time: its cheapest placement alone, priced over
        its run from that start (prices that vary in time make it differ between plans)."""
        def cost(name: str, start: float) -> float:
            job = jobs[name]
            run, blocks = self.alone(inst, job)
            return F.electricity_usd(inst, job, blocks, start, run)
        return cost

    def pack_set(self, jobs: list, res: ClusterState) -> dict:
        """Price-pack's packing of the jobs that start now, by name, when it places them all (else empty)."""
        plans = self.packer.decide(res.now, jobs, res)
        return {p.name: p for p in plans} if len(plans) == len(jobs) else {}

    def plan(self, now: float, queue: Sequence[Job], state: ClusterState, releases: list[tuple[float, int]],
             previous: Sequence[str] = ()) -> tuple[list, tuple, Residual]:
        """(the plans that start now, the best order found, the state they leave) (module doc, 2 and 3)."""
        inst = state.inst
        idx = inst.job_index
        jobs = {j.name: j for j in queue}
        pj = [PJob(j.name, j.gpus, self.duration(inst, j), j.arrival_s, now) for j in queue]
        cap = self.pool(inst)
        cost_at = self.cost_at(inst, jobs) if self.mu > 0 else None
        base = Profile.build(now, state.total_free_gpus(), releases, cap)
        planner = Planner(pj, base, self.mu * len(pj), cost_at)
        deadline = time.perf_counter() + self.time_cap_s
        orders = starting_orders(pj, previous, lambda n: idx.get(n, 0))
        order, _ = planner.search(orders, self.max_work, self.seed, deadline)
        if time.perf_counter() >= deadline:
            self.stats["capped"] += 1
        self.stats["decisions"] += 1
        self.stats["evals"] += planner.evals
        self.stats["work"] += planner.work
        self.wake_s = None
        held = self.holds(now, pj, base, order, inst) if self.futures else frozenset()
        res = state.copy()
        out: list[JobPlan] = []
        releases = list(releases)
        rest = {p.name: p if p.name not in held else PJob(p.name, p.width, p.dur, p.arrival, math.inf, p.cost)
                for p in pj}
        for _ in range(len(pj) + 1):
            sub = Planner(list(rest.values()), Profile.build(now, res.total_free_gpus(), releases, cap),
                          self.mu * len(pj), cost_at)
            _, starts, _ = sub.schedule(tuple(n for n in order if n in rest))
            now_jobs = [n for n in order if n in rest and starts[n] <= now + NOW_EPS_S]
            if not now_jobs:
                break
            later = min([t for t, _ in releases if t > now + NOW_EPS_S], default=None)
            packed = self.pack_set([jobs[n] for n in now_jobs], res) if len(now_jobs) > 1 else {}
            for n in now_jobs:
                p = packed.get(n) or self.place(jobs[n], res)
                if p is None:       # the pool holds it, the regions and links do not: defer to the next release
                    self.stats["deferred"] += 1
                    j = rest[n]
                    rest[n] = PJob(j.name, j.width, j.dur, j.arrival, later if later is not None else math.inf,
                                   j.cost)
                    continue
                res.commit(jobs[n], p)
                out.append(p)
                releases.append((price_plan(inst, p).finish_s, jobs[n].gpus))
                del rest[n]
            if all(math.isinf(j.ready) for j in rest.values()):
                break
        return out, order, res

    def holds(self, now: float, pj: list, base: Profile, order: tuple, inst: Instance) -> frozenset:
        """The now-jobs to hold back for the short jobs likely to arrive (``futures`` > 0; ``planner_future``):
        only the arrived jobs' arrival times, GPUs and run times are read."""
        arrived = [(j.arrival_s, j.gpus, self.duration(inst, j)) for j in inst.jobs if j.arrival_s <= now]
        held, info = choose_holds(pj, base, order, now, arrived, self.futures, self.future_horizon,
                                  self.future_work, self.seed, time.perf_counter() + self.time_cap_s,
                                  self.hold_wake)
        self.wake_s = info["wake_s"] if held else None
        self.stats["held"] += len(held)
        self.stats["future_work"] += info["work"]
        self.stats["capped"] += info["capped"]
        return held


class PlanSession(WaitingQueue):
    """plan-jct's queue session: the waiting jobs, and the jobs it started with their known ends (module doc,
    1); the previous decision's order is a starting order of the next."""

    def __init__(self, pol: PlanJct, inst: Instance):
        super().__init__()
        self.pol = pol          # ``inst``: the view at t = 0; each decision reads its own (``state.inst``)
        self.running: dict[str, tuple[float, int]] = {}     # job -> (known end, GPUs)
        self.order: tuple = ()

    def decide(self, now: float, state: ClusterState) -> list[JobPlan]:
        self.running = {n: v for n, v in self.running.items() if v[0] > now + NOW_EPS_S}
        if not self.waiting:
            return []
        queue = list(self.waiting.values())
        plans, self.order, _ = self.pol.plan(now, queue, state, list(self.running.values()), self.order)
        if not plans and not self.running:      # nothing runs: a job held now would wait for an event that never
            res = state.copy()                  # comes; start the first ones of the plan that place
            for n in self.order:
                p = self.pol.place(self.waiting[n], res)
                if p is not None:
                    res.commit(self.waiting[n], p)
                    plans.append(p)
        for p in plans:
            # the instance view of this decision (it holds the jobs arrived by now), not the session's first one
            self.running[p.name] = (price_plan(state.inst, p).finish_s, self.waiting[p.name].gpus)
        return plans

    def wake_at(self, now: float) -> float | None:
        """The decision's wake-up for a job it held (``hold_wake`` > 0), else None (the simulator's contract)."""
        w = self.pol.wake_s
        return w if w is not None and w > now else None

    def hol_update(self, state: ClusterState, now: float = 0.0) -> None:
        tot = state.total_free_gpus()
        for n, job in self.waiting.items():
            m = False
            if job.gpus <= tot:
                self.place_calls += 1
                m = self.pol.place(job, state) is not None
            self._mark(n, m, now)
