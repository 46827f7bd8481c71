"""A lower bound of P2 that needs no candidate enumeration: the resource-time (cumulative) relaxation of
models/schedule.md section 8.2 (P2.24-P2.28), solved by CP-SAT.

The slotted relaxation of ``p2.bound`` is certified only over a complete candidate set, which paper-size
instances (40-64 stages, six fully meshed regions) do not have.  This relaxation keeps what drives the mean JCT,
the GPUs of each region over time, and relaxes the rest:

* mode of job j: "one region r" (eligible, cap_jr >= S_j; run time R = N (m + S - 1) t_j / f_r exactly, no hop) or
  "several regions, slowest class c" (stages n_jr >= 0 on eligible regions with f_r >= f_c, sum S_j; run time
  >= N (m + S - 1) t_j / f_c + lat_j * l_min_j, one hop at least over the shortest usable link);       (P2.24)
* bandwidth, routes and the exact chain latency are dropped (only relaxes);                            (P2.25)
* time unit Delta (``time_unit_s``): a continuous start s maps to t = ceil(s / Delta) >= ceil(a_j / Delta);
  the job holds its GPUs on the d = max(floor(R_lb / Delta) - 1, 0) units [t, t + d) that the continuous run
  covers entirely (so capacities hold per unit), and its completion counts as
  Delta (t - 1) + floor(R_lb) <= s + R (s > Delta (t - 1));                                             (P2.26)
* per region r and unit: sum of GPUs held <= G_r (AddCumulative; also one over all regions);          (P2.27)
* objective: min sum_j (Delta (t_j - 1) + floor(R_lb,mode) - a_j) / n, also >= a_j + R_lb... per job
  (+ mu x the cost lower bound, a constant).                                                            (P2.28)

Every continuous-time no-stall schedule maps to a feasible solution of no larger objective, so CP-SAT's
proven bound (its optimum when it proves one) is a lower bound of the continuous P2 optimum over ALL
placements.  The cost lower bound: each job pays at least Pi_min_j x R_lb_j at the lowest price its regions
ever have (constant prices: exact fill of the cheapest regions), plus no egress.
"""
from __future__ import annotations

import logging
import math
import time
from typing import Any

from ...instance import Instance
from ...solvers.base import SolveOptions
from ...solvers.highs import direct_highs, run_highs

log = logging.getLogger(__name__)


def lowest_price(inst: Instance, region: str) -> float:
    """The region's lowest electricity price, USD per kWh (its constant price or its series' minimum)."""
    r = inst.region(region)
    if r.price_series is None:
        return r.price_usd_per_kwh
    return min(r.price_series.usd_per_kwh)


def job_modes(inst: Instance, job) -> tuple[list[tuple], float]:
    """The modes of ``job`` (P2.24): ("single", region, duration_lb_s) and ("multi", class speed, regions,
    duration_lb_s); and the job's cost lower bound (USD)."""
    speed = inst.speed
    elig = [r for r in inst.eligible_regions(job) if inst.region(r).gpus >= job.gpus_per_stage]
    cap = {r: min(job.stages, inst.region(r).gpus // job.gpus_per_stage) for r in elig}
    N, m, S = job.iterations, job.microbatches, job.stages
    base = {r: N * (m + S - 1) * job.stage_time_s / speed[r] for r in elig}
    modes = [("single", r, base[r]) for r in elig if cap[r] >= S]
    lat_coef = 2.0 * N / 1000.0
    for f in sorted({speed[r] for r in elig}):
        regs = [r for r in elig if speed[r] >= f]
        if len(regs) < 2 or sum(cap[r] for r in regs) < S:
            continue
        tau = job.stage_time_s / f
        # every link, not only those that carry b_j: a hop reserving less than b_j stalls (each slot c_i > tau)
        # but its latency counts the same, so a stalled run over a thinner, nearer link is still at least this
        # long (a bound that held only for unstalled runs would be beaten by cr-lcf's schedules)
        lats = [l.latency_ms for l in inst.links]
        if not lats:
            continue
        modes.append(("multi", f, regs, N * (m + S - 1) * tau + lat_coef * min(lats)))
    # cost: GPUs x power x PUE x price at its lowest, cheapest regions first, for the shortest run time
    if not modes:
        return [], math.inf
    rlb = min(md[-1] for md in modes)
    rate = sorted((job.gpus_per_stage * inst.gpu_types[inst.region(r).gpu_type].power_w * inst.region(r).pue
                   / 1000.0 * lowest_price(inst, r) / 3600.0, r) for r in elig)
    left, usd_per_s = S, 0.0
    for pr, r in rate:
        k = min(left, cap[r])
        usd_per_s += k * pr
        left -= k
        if not left:
            break
    return modes, usd_per_s * rlb


def cumulative_lower_bound(inst: Instance, options: SolveOptions = SolveOptions(), mu: float = 0.0,
                           time_unit_s: float = 60.0) -> dict[str, Any]:
    """Solve the relaxation (P2.24-P2.28) with CP-SAT; returns lower_bound (of mean JCT + mu x cost, s),
    lower_bound_jct_s, lower_bound_cost_usd, status, solve time, nodes."""
    from ortools.sat.python import cp_model
    from ...solvers.cpsat import solve_cp
    t_build = time.perf_counter()
    md = cp_model.CpModel()
    n = len(inst.jobs)
    ends, arrivals, cost_lb = [], [], 0.0
    per_region: dict[str, tuple[list, list]] = {r.name: ([], []) for r in inst.regions}
    all_iv, all_dem = [], []
    D = float(time_unit_s)
    if not (D > 0 and math.isfinite(D)):
        from ...errors import InputError
        raise InputError(f"time_unit_s: must be > 0, got {time_unit_s!r}")
    horizon = int(math.ceil(max((j.arrival_s for j in inst.jobs), default=0.0) / D)) + 2
    job_modes_ = []
    for job in inst.jobs:
        modes, c = job_modes(inst, job)
        if not modes:
            return {"lower_bound": None, "lower_bound_status": "infeasible",
                    "lower_bound_note": f"job {job.name!r} fits no region set"}
        cost_lb += c
        job_modes_.append(modes)
        horizon += max(max(int(math.floor(mo[-1] / D)) - 1, 0) for mo in modes)
    for job, modes in zip(inst.jobs, job_modes_):
        lo = int(math.ceil(job.arrival_s / D - 1e-12))
        start = md.NewIntVar(lo, horizon, f"start[{job.name}]")
        g = job.gpus_per_stage
        pres, durs, runs = [], [], []
        for k, mo in enumerate(modes):
            d = max(int(math.floor(mo[-1] / D)) - 1, 0)
            p = md.NewBoolVar(f"mode[{job.name},{k}]")
            pres.append(p)
            durs.append(d)
            runs.append(int(math.floor(mo[-1])))
            iv = md.NewOptionalFixedSizeIntervalVar(start, d, p, f"iv[{job.name},{k}]")
            if mo[0] == "single":
                per_region[mo[1]][0].append(iv)
                per_region[mo[1]][1].append(g * job.stages)
                all_iv.append(iv)
                all_dem.append(g * job.stages)
            else:
                regs = mo[2]
                ns = []
                for r in regs:
                    cap = min(job.stages, inst.region(r).gpus // g)
                    nr = md.NewIntVar(0, cap, f"n[{job.name},{k},{r}]")
                    md.Add(nr == 0).OnlyEnforceIf(p.Not())
                    ns.append(nr)
                    per_region[r][0].append(iv)
                    per_region[r][1].append(g * nr)
                md.Add(sum(ns) == job.stages).OnlyEnforceIf(p)
                all_iv.append(iv)
                all_dem.append(g * job.stages)
        md.AddExactlyOne(pres)
        # completion lower bound in s: max(Delta (t - 1), a_j) + floor(R_lb) of the mode (P2.26, P2.28)
        a_int = int(math.floor(job.arrival_s))
        big = int(D * (horizon + 1)) + max(runs) + a_int + 1
        end = md.NewIntVar(a_int + min(runs), big, f"end[{job.name}]")
        md.Add(end >= int(D) * start - int(D) + sum(r * p for r, p in zip(runs, pres))) if D == int(D) else \
            md.Add(end >= start * int(math.floor(D)) - int(math.ceil(D)) + sum(r * p for r, p in zip(runs, pres)))
        md.Add(end >= a_int + sum(r * p for r, p in zip(runs, pres)))
        ends.append(end)
        arrivals.append(job.arrival_s)
    for r in inst.regions:
        ivs, dem = per_region[r.name]
        if ivs:
            md.AddCumulative(ivs, dem, r.gpus)
    md.AddCumulative(all_iv, all_dem, sum(r.gpus for r in inst.regions))       # redundant, helps propagation
    md.Minimize(sum(ends))
    build_s = time.perf_counter() - t_build
    res, solver = solve_cp(md, options)
    jct_lb = None
    if res.bound is not None:
        jct_lb = (math.floor(res.bound + 1e-6) - math.fsum(arrivals)) / n     # integer model: bound is exact
    elif res.termination.value == "infeasible":
        jct_lb = math.inf
    lb = None if jct_lb is None else jct_lb + mu * cost_lb
    return {"lower_bound": lb, "lower_bound_jct_s": jct_lb, "lower_bound_time_unit_s": D, "lower_bound_cost_usd": cost_lb,
            "lower_bound_status": res.termination.value, "lower_bound_build_s": build_s,
            "lower_bound_solve_s": res.solve_s, "lower_bound_nodes": res.nodes,
            "lower_bound_objective_s": None if res.objective is None else
            (res.objective - math.fsum(arrivals)) / n}


def pool_lower_bound(inst: Instance, options: SolveOptions = SolveOptions(), mu: float = 0.0,
                     time_unit_s: float | None = None, max_units: int = 800) -> dict[str, Any]:
    """The pool relaxation (P2.29), a coarser relaxation of P2.24-P2.28 that a time-indexed MILP proves well:
    all GPUs form one pool of G = sum_r G_r, job j holds W_j = g_j S_j of them for
    d_j = max(floor(R_j / Delta) - 1, 0) units, R_j = the shortest run time of any of its modes (P2.24), and
    completes at max(a_j, Delta (t - 1)) + floor(R_j) when it starts in unit t (P2.26).  x_jt in {0, 1}:
    sum_t x_jt = 1; per unit tau: sum_j W_j sum_{tau - d_j < t <= tau} x_jt <= G; min sum_jt c_jt x_jt / n.
    HiGHS's proven dual bound is the lower bound (time-indexed LPs bound sum-of-completion objectives well).
    Delta: ``time_unit_s``, default the smallest of 60, 120, 300, 600, 900, 1800, 3600 s giving at most
    ``max_units`` units."""
    import highspy
    import numpy as np
    t_build = time.perf_counter()
    n = len(inst.jobs)
    G = sum(r.gpus for r in inst.regions)
    R, W, cost_lb = [], [], 0.0
    for job in inst.jobs:
        modes, c = job_modes(inst, job)
        if not modes or job.gpus > G:
            return {"lower_bound": None, "lower_bound_status": "infeasible",
                    "lower_bound_note": f"job {job.name!r} fits no region set"}
        R.append(min(mo[-1] for mo in modes))
        W.append(job.gpus)
        cost_lb += c
    amax = max(j.arrival_s for j in inst.jobs)
    if time_unit_s is None:
        for D in (60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 86400.0):
            if (amax + sum(R)) / D + n + 2 <= max_units:
                break
    else:
        D = float(time_unit_s)
    d = [max(int(math.floor(r / D)) - 1, 0) for r in R]
    H = int(math.ceil(amax / D)) + sum(d) + 1
    h = direct_highs(options)
    cols = []            # (job, t)
    costs = []
    for j, job in enumerate(inst.jobs):
        lo = int(math.ceil(job.arrival_s / D - 1e-12))
        for t in range(lo, H + 1):
            cols.append((j, t))
            costs.append((max(job.arrival_s, D * (t - 1)) + math.floor(R[j]) - job.arrival_s) / n)
    nc = len(cols)
    h.addVars(nc, np.zeros(nc), np.ones(nc))
    h.changeColsIntegrality(nc, np.arange(nc, dtype=np.int32), np.ones(nc, dtype=np.uint8))
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), np.array(costs))
    by_job: dict[int, list[int]] = {}
    for k, (j, t) in enumerate(cols):
        by_job.setdefault(j, []).append(k)
    for j, ks in by_job.items():
        h.addRow(1.0, 1.0, len(ks), np.array(ks, dtype=np.int32), np.ones(len(ks)))
    # capacity per unit tau: columns (j, t) with t <= tau < t + d_j
    rows: dict[int, tuple[list[int], list[float]]] = {}
    for k, (j, t) in enumerate(cols):
        for tau in range(t, min(t + d[j], H + 1)):
            ix, val = rows.setdefault(tau, ([], []))
            ix.append(k)
            val.append(float(W[j]))
    for tau in sorted(rows):
        ix, val = rows[tau]
        if sum(sorted(val, reverse=True)[:n]) > G:       # a row that can bind
            h.addRow(-highspy.kHighsInf, float(G), len(ix), np.array(ix, dtype=np.int32), np.array(val))
    build_s = time.perf_counter() - t_build
    t0 = time.perf_counter()
    run_highs(h)
    solve_s = time.perf_counter() - t0
    st = h.getModelStatus()
    info = h.getInfo()
    ok = st in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit,
                highspy.HighsModelStatus.kInterrupt, highspy.HighsModelStatus.kSolutionLimit)
    bound = float(info.mip_dual_bound) if ok and math.isfinite(info.mip_dual_bound) else None
    if st == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif st == highspy.HighsModelStatus.kInfeasible:
        status, bound = "infeasible", math.inf
    else:
        status = "feasible" if info.primal_solution_status == 2 else "time_limit"
    lb = None if bound is None else bound + mu * cost_lb
    return {"lower_bound": lb, "lower_bound_jct_s": bound, "lower_bound_cost_usd": cost_lb,
            "lower_bound_time_unit_s": D, "lower_bound_status": status, "lower_bound_build_s": build_s,
            "lower_bound_solve_s": solve_s, "lower_bound_nodes": int(info.mip_node_count),
            "lower_bound_objective_s": float(info.objective_function_value) if status in ("optimal", "feasible")
            else None}
