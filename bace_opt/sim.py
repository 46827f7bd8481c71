"""The online multi-tenant simulator (system-model.md, "Online").

``simulate(inst, policy="bace-pipe", mode="queue", seed=0, **policy_options) -> Schedule``

A discrete-event simulation.  Events: job arrivals, job completions and, while jobs wait in queue mode and a
region's price is an hourly (any step) series, the next price change.  All events at one time are applied
together (completions first, releasing their GPUs and bandwidth; then arrivals), then the policy is called
once with the jobs it may start:

* ``mode="queue"``: every waiting job; a job the policy does not start keeps waiting.
* ``mode="blocking"``: only the jobs arriving now; a job the policy does not start is rejected on the spot
  (status ``blocked``; the evaluator's ``blocking_probability`` = blocked / jobs).

The policy sees a read-only ``ClusterState`` (free GPUs per region, free Gbit/s per link -- equal in both
directions since every hop reserves its bandwidth both ways -- and prices at ``now``) and returns the plans
to start now.  The simulator checks every plan (rule 1 of the evaluator, start time, the job is one it may
start, GPUs and the summed bandwidth of all its hops fit the residual) and raises ``PolicyError`` otherwise:
a policy that over-commits is a bug.  A started job finishes at start + run time as
``bace_opt.evaluate.price_plan`` computes it, so the simulation agrees with the evaluator exactly.  Link
reservations are kept per running job and each link's free bandwidth is recomputed with ``math.fsum``, so no
rounding drifts accumulate.  Jobs still waiting when no event is left (no placement exists for them under the
policy's rules) are ``unscheduled``.

The output is ``bace_opt.evaluate.make_schedule(inst, plans, method=policy.name, meta=...)`` with meta:
``mode``, ``policy``, ``policy_options``, ``seed``, ``events`` (events processed), ``decisions`` (policy
calls), ``end_s`` (time of the last event), ``jobs[name] = {"wait_s", "hol_blocked_s", "run_s"}`` and the totals ``total_hol_blocked_s``.

Head-of-line blocked time (our reading, precise): after each decision at time t, a job still waiting is
*HoL-blocked* over [t, t') (t' the next event) if the policy's own placement rule (``policy.place``) finds a
placement for it alone on the resources left free by that decision; it could have started, but the order
the policy processes jobs in held it back behind a job ahead of it.  ``hol_blocked_s`` sums those
intervals; it is part of ``wait_s``.  (For BACE-Pipe, which skips jobs that do not fit, it is zero except
where its greedy rules are not monotone in the free resources.)  Disable with ``track_hol=False`` (it costs
one placement call per waiting job per event).

Deterministic: no randomness besides what a policy does with ``seed`` (the shipped ones are deterministic).
"""
from __future__ import annotations

import heapq
import logging
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError
from .evaluate import ITERATION_MODELS, check_plan, make_schedule, price_plan
from .formulas import price_curves
from .instance import Instance, Job
from .policies import make_policy
from .policies.base import ClusterState, Policy, PolicyError
from .schedule import JobPlan, Schedule

log = logging.getLogger(__name__)

MODES = ("queue", "blocking")

# event kinds, in the order they are applied at one time
_DONE, _ARRIVE, _PRICE = 0, 1, 2


@dataclass
class SimStats:
    """Run statistics that are not part of the (deterministic) schedule: wall-clock timings."""
    events: int = 0
    decisions: int = 0
    wall_s: float = 0.0
    decide_s: list[float] = field(default_factory=list)    # wall time of each policy call
    decide_cpu_s: list[float] = field(default_factory=list)  # CPU time of this thread in each policy call
    cpu_s: float = 0.0                                       # CPU time of this process over the run
    place_calls: int = 0

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else math.inf

    @property
    def median_decide_s(self) -> float | None:
        return statistics.median(self.decide_s) if self.decide_s else None

    @property
    def median_decide_cpu_s(self) -> float | None:
        return statistics.median(self.decide_cpu_s) if self.decide_cpu_s else None


def simulate(inst: Instance, policy: Any = "bace-pipe", mode: str = "queue", seed: int = 0,
             track_hol: bool = True, iteration_model: str = "analytic", **policy_options) -> Schedule:
    """Simulate ``policy`` (a registered name or a ``Policy`` object) on ``inst``; return the priced
    Schedule (see module doc).  ``iteration_model``: ``analytic`` (default) or a pipeline schedule kind
    (gpipe, 1f1b, greedy) that sets every job's iteration time, hence its finish time."""
    return run_simulation(inst, policy, mode=mode, seed=seed, track_hol=track_hol, iteration_model=iteration_model,
                          **policy_options)[0]


def run_simulation(inst: Instance, policy: Any = "bace-pipe", mode: str = "queue", seed: int = 0,
                   track_hol: bool = True, iteration_model: str = "analytic",
                   **policy_options) -> tuple[Schedule, SimStats]:
    """``simulate`` plus the run's wall-clock statistics."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if iteration_model not in ITERATION_MODELS:
        raise InputError(f"iteration model must be one of {', '.join(ITERATION_MODELS)}, got {iteration_model!r}")
    if isinstance(policy, str):
        pol = make_policy(policy, seed=seed, **policy_options)
    else:
        if policy_options:
            raise InputError(f"policy options {sorted(policy_options)} given with a policy object; "
                             "configure the object instead")
        pol = policy
        if not isinstance(pol, Policy):
            raise InputError(f"policy must be a registered name or an object with name, options, decide(now, "
                             f"queue, state) and place(job, state); got {type(pol).__name__}")
    name = pol.name
    stats = SimStats()
    t_wall = time.perf_counter()
    t_cpu = time.process_time()

    jobs = {j.name: j for j in inst.jobs}
    links = inst.links
    li = inst.link_index
    free_gpus = {r.name: r.gpus for r in inst.regions}
    link_res: list[dict[str, float]] = [dict() for _ in links]   # link -> {job: reserved Gbit/s}
    free_bw = [l.bandwidth_gbps for l in links]
    curves = [c for c in price_curves(inst).values() if c.values is not None and len(c.values) > 1]

    heap: list[tuple] = []
    seq = 0
    for j in sorted(inst.jobs, key=lambda j: (j.arrival_s, inst.job_index[j.name])):
        heap.append((j.arrival_s, _ARRIVE, seq, j.name))
        seq += 1
    heapq.heapify(heap)

    waiting: list[str] = []                      # queue mode, arrival order
    plans: dict[str, JobPlan] = {}
    status: dict[str, str] = {}
    run_s: dict[str, float] = {}
    hol_s: dict[str, float] = {j.name: 0.0 for j in inst.jobs}
    hol_now: list[str] = []
    price_pushed: set[float] = set()
    in_use: set[int] = set()                     # links with a reservation
    next_change = [-math.inf, None]              # [valid until t <, next price change time]
    last_t = None

    def release(jname: str) -> None:
        job = jobs[jname]
        p = plans[jname]
        for b in p.blocks:
            free_gpus[b.region] += job.gpus_per_stage * b.stages
        touched = set()
        for h in p.hops:
            for u, v in zip(h.route, h.route[1:]):
                k = li[(u, v)]
                link_res[k].pop(jname, None)
                touched.add(k)
        for k in touched:
            free_bw[k] = links[k].bandwidth_gbps - math.fsum(link_res[k].values())
            if not link_res[k]:
                free_bw[k] = links[k].bandwidth_gbps
                in_use.discard(k)

    def apply(job: Job, p: JobPlan, now: float, allowed: set[str], state: ClusterState) -> None:
        if p.name not in allowed:
            raise PolicyError(f"policy {name!r} started job {p.name!r}, which is not waiting at t={now:g} s")
        if p.status != "done" or p.start_s is None or p.start_s != now:
            raise PolicyError(f"policy {name!r}: plan for job {p.name!r} must have status 'done' and "
                              f"start_s == {now!r}, got {p.status!r} / {p.start_s!r}")
        v = check_plan(inst, p)
        if v:
            raise PolicyError(f"policy {name!r}: invalid plan for job {p.name!r}: " + "; ".join(map(str, v)))
        cur = ClusterState(inst, now, free_gpus, free_bw)
        why = cur.fits(job, p)
        if why is not None:
            raise PolicyError(f"policy {name!r} over-commits at t={now:g} s with job {p.name!r}: {why}")
        allowed.discard(p.name)
        for b in p.blocks:
            free_gpus[b.region] -= job.gpus_per_stage * b.stages
        touched = set()
        for h in p.hops:
            for u, v in zip(h.route, h.route[1:]):
                k = li[(u, v)]
                link_res[k][p.name] = link_res[k].get(p.name, 0.0) + h.reserved_gbps
                touched.add(k)
        for k in touched:
            free_bw[k] = links[k].bandwidth_gbps - math.fsum(link_res[k].values())
            in_use.add(k)
        f = price_plan(inst, p, iteration_model)
        plans[p.name] = p
        status[p.name] = "done"
        run_s[p.name] = f.run_s
        nonlocal seq
        heapq.heappush(heap, (f.finish_s, _DONE, seq, p.name))
        seq += 1

    while heap:
        t = heap[0][0]
        if last_t is not None and hol_now:
            for jn in hol_now:
                hol_s[jn] += t - last_t
        hol_now = []
        new: list[str] = []
        while heap and heap[0][0] == t:
            _, kind, _, payload = heapq.heappop(heap)
            stats.events += 1
            if kind == _DONE:
                release(payload)
            elif kind == _ARRIVE:
                new.append(payload)
            else:
                price_pushed.discard(t)
        last_t = t
        if mode == "queue":
            waiting.extend(new)
            cands = waiting
        else:
            cands = new
        if cands:
            state = ClusterState(inst, t, free_gpus, free_bw, links_in_use=in_use)
            queue = [jobs[n] for n in cands]
            c0 = time.thread_time()
            t0 = time.perf_counter()
            out = pol.decide(t, queue, state)
            stats.decide_s.append(time.perf_counter() - t0)
            stats.decide_cpu_s.append(time.thread_time() - c0)
            stats.decisions += 1
            allowed = set(cands)
            for p in out or []:
                apply(jobs.get(p.name) or _unknown(name, p), p, t, allowed, state)
            if mode == "queue":
                waiting = [n for n in waiting if n not in status]
            else:
                for n in new:
                    if n not in status:
                        status[n] = "blocked"
        if mode == "queue" and waiting:
            if track_hol:
                after = ClusterState(inst, t, free_gpus, free_bw)
                tot = after.total_free_gpus()
                for n in waiting:
                    job = jobs[n]
                    if job.gpus <= tot:
                        stats.place_calls += 1
                        if pol.place(job, after) is not None:
                            hol_now.append(n)
            if curves:
                if not t < next_change[0]:
                    nxt = _next_price_change(curves, t)
                    next_change[:] = [math.inf if nxt is None else nxt, nxt]
                nxt = next_change[1]
                if nxt is not None and nxt not in price_pushed:
                    price_pushed.add(nxt)
                    heapq.heappush(heap, (nxt, _PRICE, seq, None))
                    seq += 1

    for n in waiting:
        status.setdefault(n, "unscheduled")

    out_plans = []
    per_job: dict[str, dict] = {}
    for j in inst.jobs:
        st = status.get(j.name, "unscheduled")
        if st == "done":
            p = plans[j.name]
            out_plans.append(p)
            per_job[j.name] = {"wait_s": p.start_s - j.arrival_s, "hol_blocked_s": hol_s[j.name],
                               "run_s": run_s[j.name]}
        else:
            out_plans.append(JobPlan(j.name, st))
            per_job[j.name] = {"wait_s": 0.0 if st == "blocked" else None,
                               "hol_blocked_s": hol_s[j.name], "run_s": None}
    opts = dict(getattr(pol, "options", {}) or {})
    meta: dict[str, Any] = {"mode": mode, "policy": name, "policy_options": opts, "seed": seed,
                            "events": stats.events, "decisions": stats.decisions, "end_s": last_t, "track_hol": track_hol,
                            "total_hol_blocked_s": math.fsum(hol_s.values()), "jobs": per_job}
    extra = getattr(pol, "extra_meta", None)
    if callable(extra):
        meta["policy_stats"] = extra()
    sched = make_schedule(inst, out_plans, method=name, meta=meta, iteration_model=iteration_model)
    stats.wall_s = time.perf_counter() - t_wall
    stats.cpu_s = time.process_time() - t_cpu
    log.info("simulated %s (%s mode) on %s: %d events, %d decisions, %.3f s", name, mode, inst.name,
             stats.events, stats.decisions, stats.wall_s)
    return sched, stats


def _unknown(policy_name: str, p: JobPlan):
    raise PolicyError(f"policy {policy_name!r} returned a plan for unknown job {p.name!r}")


def _next_price_change(curves, t: float) -> float | None:
    """The earliest time > t at which some region's price steps."""
    best = None
    for c in curves:
        n = len(c.values)
        k = max(1, math.floor((t - c.start) / c.step) + 1)
        if k <= n - 1:
            tc = c.start + k * c.step
            if tc <= t:       # floating point guard
                k += 1
                if k > n - 1:
                    continue
                tc = c.start + k * c.step
            if best is None or tc < best:
                best = tc
    return best
