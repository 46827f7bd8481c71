"""Reference implementation for the replay test of issue 15: the simulator and the policies' decision path
as they were before the incremental simulator (commit 3cec76e, after issue 9 item 3), kept verbatim so that
``tests/test_sim_replay.py`` can check that the fast simulator makes identical decisions.

Copied: ``bace_opt.sim.run_simulation`` (here ``reference_run_simulation``), ``OrderedPolicy.decide`` /
``ordered`` / ``never_fits`` (here ``reference_decide``), BACE-Pipe's ``prioritize`` and the FIFO order.  The
placement rules themselves (each policy's ``place``) are shared with the library: the fast path changes
which jobs are offered to ``place`` and when, never ``place`` itself.  Not for use outside the tests.
"""
from __future__ import annotations

import heapq
import math
import time
from typing import Any

from bace_opt import formulas as F
from bace_opt.errors import InputError
from bace_opt.evaluate import ITERATION_MODELS, check_plan, make_schedule, price_plan
from bace_opt.formulas import price_curves
from bace_opt.instance import Instance, Job
from bace_opt.policies import make_policy
from bace_opt.policies.base import ClusterState, PolicyError
from bace_opt.policies.contract import Policy
from bace_opt.policies.ordered import OrderedPolicy
from bace_opt.policies.priority import job_profile
from bace_opt.schedule import JobPlan
from bace_opt.sim import MODES, SimStats, _next_price_change, log

_DONE, _ARRIVE, _PRICE = 0, 1, 2


def _minmax(xs):
    lo, hi = min(xs), max(xs)
    if hi - lo <= 1e-12 * max(abs(hi), 1.0):
        return [0.0] * len(xs)
    return [(x - lo) / (hi - lo) for x in xs]


def _prioritize(queue, state):
    idx = state.inst.job_index
    if len(queue) < 2:
        return list(queue)
    alpha = state.alpha()
    prof = [job_profile(state.inst, j) for j in queue]
    norm_c, norm_d = _minmax([p[0] for p in prof]), _minmax([p[1] for p in prof])
    pr = {j.name: (1.0 - alpha) * (1.0 - i) + alpha * (1.0 - d) for j, i, d in zip(queue, norm_c, norm_d)}
    return sorted(queue, key=lambda j: (-pr[j.name], j.arrival_s, idx[j.name]))


def _fifo(queue, inst):
    idx = inst.job_index
    return sorted(queue, key=lambda j: (j.arrival_s, idx[j.name]))


def _never_fits(pol, job, state):
    inst = state.inst
    cache = pol.__dict__.setdefault("_reference_never", {})
    key = (id(inst), job.name, tuple(F.price_at(inst, r.name, state.now) for r in inst.regions))
    v = cache.get(key)
    if v is None:
        v = cache[key] = pol.place(job, ClusterState.empty(inst, state.now)) is None
    return v


def reference_decide(pol, now, queue, state):
    """``OrderedPolicy.decide`` as it was; other policies' own ``decide``."""
    if not isinstance(pol, OrderedPolicy) or type(pol).decide is not OrderedPolicy.decide:
        return pol.decide(now, queue, state)
    if not queue:
        return []
    inst = state.inst
    free_total = state.total_free_gpus()
    if free_total < min(job_profile(inst, j)[2] for j in queue):
        return []
    res = state.copy()
    out = []
    ordered = _prioritize(queue, state) if pol.order == "priority" else _fifo(queue, inst)
    for job in ordered:
        need = job_profile(inst, job)[2]
        plan = None if need > free_total else pol.place(job, res)
        if plan is None:
            if pol.hol == "block" and not _never_fits(pol, job, state):
                break
            continue
        res.commit(job, plan)
        free_total -= need
        out.append(plan)
    return out


def reference_run_simulation(inst: Instance, policy: Any = "bace-pipe", mode: str = "queue", seed: int = 0,
                   track_hol: bool = True, iteration_model: str = "analytic",
                   **policy_options) -> tuple[Schedule, SimStats]:
    """The simulator as it was before issue 15 (every decision re-examines every waiting job)."""
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
            out = reference_decide(pol, t, queue, state)
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
