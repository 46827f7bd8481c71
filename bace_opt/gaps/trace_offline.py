"""An OFFLINE schedule for the upper end of the trace bracket (``gaps.online.trace_figures``): the whole future is
known, so it is never an online policy and is never run by the online gate; its only use is as one more feasible
schedule, checked and priced by the evaluator, whose mean JCT the bracket's upper end may take.

1. **The clairvoyant plan** (``clairvoyant_order``): plan-jct's pooled model (``policies.planner_core``: one pool
   of GPUs, every job holds W_j GPUs for D_j, its cheapest placement's run time alone) told every job at t = 0
   (ready at its arrival), its order searched by the same iterated local search from plan-jct's realised start
   order (the run's) and the simple orders, within a budget counted in job placements (deterministic; a
   wall-clock cap only as a safety net).
2. **Its realisation** (``OrderFollower``): a policy object simulated by ``sim.simulate`` as any other (the
   simulator checks every plan against the free resources; the evaluator checks the schedule), that at every
   event list-schedules ALL the jobs not started yet (the arrived ones and the future ones, which it reads from
   the full instance it was built with: clairvoyant) in the plan's fixed order on the pool as it really is now
   (free GPUs, the known ends of the jobs it started), and starts the arrived jobs this places now, on the real
   regions and links by plan-jct's placement rules (``PlanJct.pack_set`` / ``PlanJct.place``).  A job the pool
   holds but the regions or links do not is deferred to the next release, as plan-jct does.  The run times,
   ends and prices are the simulator's and the evaluator's, not the pooled model's.

On the composed week at offered load 0.92 (docs/research/trace-bracket): plan-jct's run 19,090 s; the pooled
plan's value from its start order 18,726 s; after one search 16,733 s (4 M placements, 18 s) / 16,694 s (20 M);
restarts with new seeds from the best order found 16,694 s four times, then 15,859 s (the search's landscape is
rugged: its local search converges, a restart with another seed sometimes escapes).  From the packing LP's
relaxed order (unit 1,800 s; 29,462 s as it is) 15,879 s in 10 M placements (40 s), 15,856 s after 20 M: the
relaxation's order is the better seed.
"""
from __future__ import annotations

import math
import time
from typing import Sequence

from ..instance import Instance, Job
from ..policies.base import ClusterState
from ..policies.contract import PolicyBase, WaitingQueue
from ..policies.planner import PlanJct
from ..policies.planner_core import NOW_EPS_S, PJob, Planner, Profile, starting_orders
from ..schedule import JobPlan

#: the placements of one restart of the order search (``clairvoyant_order``)
RESTART_WORK = 10_000_000
#: the name the offline schedule carries (its ``method``): never a registered policy's
NAME = "offline-clairvoyant-order"


def pooled_jobs(inst: Instance, pol: PlanJct) -> list[PJob]:
    """Every job of ``inst`` as the pooled model sees it, ready at its arrival (the whole future)."""
    return [PJob(j.name, j.gpus, pol.duration(inst, j), j.arrival_s, j.arrival_s) for j in inst.jobs]


def start_order(inst: Instance, sched) -> tuple:
    """The job names of ``inst`` by their start in ``sched`` (unstarted jobs last, instance order on ties)."""
    st = {e.name: e.start_s for e in sched.jobs if e.start_s is not None}
    idx = {j.name: i for i, j in enumerate(inst.jobs)}
    return tuple(sorted(idx, key=lambda n: (st.get(n, math.inf), idx[n])))


def clairvoyant_order(inst: Instance, max_work: int, seed: int = 1, warm: Sequence = (),
                      deadline: float | None = None, restart_work: int = RESTART_WORK,
                      seeds: Sequence[Sequence[str]] = ()) -> tuple[tuple, float]:
    """(order of job names, the pooled plan's mean JCT) of the clairvoyant pooled search (module doc, 1):
    restarts of ``Planner.search`` within ``restart_work`` placements each, with seeds ``seed``, ``seed`` + 1,
    ...: one from each order of ``seeds`` (e.g. the relaxation's order, ``trace_bound.whole_trace_bound``),
    one from the best of ``warm``'s start orders and plan-jct's simple orders, then each from the best order so
    far; until ``max_work`` placements in all or ``deadline`` (``time.perf_counter``)."""
    pol = PlanJct()
    jobs = pooled_jobs(inst, pol)
    G = pol.pool(inst)
    idx = {j.name: i for i, j in enumerate(inst.jobs)}
    starts = [[tuple(o)] for o in seeds if sorted(o) == sorted(idx)]
    starts.append([start_order(inst, s) for s in warm] + starting_orders(jobs, (), lambda n: idx[n]))
    best, best_v, work = None, math.inf, 0
    while work < max_work and (deadline is None or time.perf_counter() < deadline):
        planner = Planner(jobs, Profile.build(0.0, G, [], G))
        order, v = planner.search(starts.pop(0) if starts else [best], min(restart_work, max_work - work), seed,
                                  deadline)
        work += max(planner.work, 1)
        if v < best_v:
            best, best_v = order, v
        seed += 1
    return best, best_v / max(len(jobs), 1)


class OrderFollower(PolicyBase):
    """The offline realisation of a pooled order (module doc, 2).  ``inst``: the FULL instance (the future
    included); ``order``: every job's name."""

    def __init__(self, inst: Instance, order: Sequence[str]):
        self.name = NAME
        self.options = {"offline": True, "jobs": len(order)}
        self.full = inst
        self.order = tuple(order)
        self.pol = PlanJct()
        self.jobs = {p.name: p for p in pooled_jobs(inst, self.pol)}
        self.stats = {"decisions": 0, "deferred": 0}

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        return self.pol.place(job, state)

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        """Outside a session: every job of ``queue`` that places, in the plan's order."""
        pos = {n: i for i, n in enumerate(self.order)}
        res = state.copy()
        out = []
        for job in sorted(queue, key=lambda j: pos.get(j.name, math.inf)):
            p = self.pol.place(job, res)
            if p is not None:
                res.commit(job, p)
                out.append(p)
        return out

    def queue_session(self, inst: Instance) -> "FollowSession":
        return FollowSession(self)

    def extra_meta(self) -> dict:
        return dict(self.stats)


class FollowSession(WaitingQueue):
    """``OrderFollower``'s queue session: the jobs it started with their known ends, and the plan's order."""

    def __init__(self, pol: OrderFollower):
        super().__init__()
        self.pol = pol
        self.started: set[str] = set()
        self.running: dict[str, tuple[float, int]] = {}

    def decide(self, now: float, state: ClusterState) -> list[JobPlan]:
        from ..evaluate import price_plan
        pol = self.pol
        pol.stats["decisions"] += 1
        self.running = {n: v for n, v in self.running.items() if v[0] > now + NOW_EPS_S}
        if not self.waiting:
            return []
        cap = pol.pol.pool(pol.full)
        rest = {n: PJob(p.name, p.width, p.dur, p.arrival, max(p.ready, now)) for n, p in pol.jobs.items()
                if n not in self.started}
        releases = list(self.running.values())
        res = state.copy()
        out: list[JobPlan] = []
        for _ in range(len(self.waiting) + 1):
            sub = Planner(list(rest.values()), Profile.build(now, res.total_free_gpus(), releases, cap))
            _, starts, _ = sub.schedule(tuple(n for n in pol.order if n in rest))
            now_jobs = [n for n in pol.order if n in self.waiting and n in rest and starts[n] <= now + NOW_EPS_S]
            if not now_jobs:
                break
            later = min([t for t, _ in releases if t > now + NOW_EPS_S], default=None)
            jobs = [self.waiting[n] for n in now_jobs]
            packed = pol.pol.pack_set(jobs, res) if len(jobs) > 1 else {}
            for job in jobs:
                p = packed.get(job.name) or pol.pol.place(job, res)
                if p is None:        # the pool holds it, the regions and links do not: the next release
                    pol.stats["deferred"] += 1
                    j = rest[job.name]
                    rest[job.name] = PJob(j.name, j.width, j.dur, j.arrival,
                                          later if later is not None else math.inf)
                    continue
                res.commit(job, p)
                out.append(p)
                end = price_plan(state.inst, p).finish_s
                releases.append((end, job.gpus))
                self.running[job.name] = (end, job.gpus)
                self.started.add(job.name)
                del rest[job.name]
            if all(math.isinf(rest[n].ready) for n in self.waiting if n in rest):
                break
        if not out and not self.running:      # nothing runs: start the first waiting jobs of the order that place
            for n in pol.order:
                if n in self.waiting and n not in self.started:
                    p = pol.pol.place(self.waiting[n], res)
                    if p is not None:
                        res.commit(self.waiting[n], p)
                        out.append(p)
                        end = price_plan(state.inst, p).finish_s
                        self.running[n] = (end, self.waiting[n].gpus)
                        self.started.add(n)
        return out

    def hol_update(self, state: ClusterState, now: float = 0.0) -> None:
        pass

