"""P2 with OR-Tools CP-SAT: optional interval variables, cumulative resources, integer time.

Model (models/schedule.md section 4; notation of bace_opt.exact.schedule):

    t_j in [lo_j, H]                       integer start in time units of Delta                    (P2.3, P2.6)
    x_jc in {0, 1}, sum_c x_jc = 1          one candidate per job                                   (P2.2)
    I_jc = optional interval [t_j, t_j + d_jc), present iff x_jc                                  (P2.4)
    cumulative(I, gpus_jc,r, G_r)           per binding region                                      (P2.5)
    cumulative(I, u_jc,e, cap_e)            per binding link (one per link: a hop reserves both ways) (P2.5)
    C_j = table_jc[t_j - lo_j] if x_jc      start-dependent objective part (element)                (P2.7)
    min  sum_j K t_j + C_j                  (P2.1 in integer units of q = Delta / (n K))

Integer scaling (stated in models/schedule.md section 4.2):
  * objective: q = Delta / (n K) seconds with K = ceil(Delta / (2e-9 LB)), LB = sum_j min_c R_jc / n (a lower
    bound on the objective), so the n per-job roundings to the nearest unit change it by at most
    n q / 2 <= 1e-9 LB.  The reported objective is recomputed exactly; the reported bound is CP-SAT's bound
    minus that rounding allowance, so it stays a valid bound of the exact objective.
  * GPUs: integers, exact.
  * bandwidth: per link, Q_e = 2 (n + 1) / (B_e 1e-9) units per Gbit/s; demand ceil(u Q_e), capacity
    floor(B_e (1 + 5e-10) Q_e).  Every set of hops with sum u <= B_e fits, and every set that fits has
    sum u <= B_e (1 + 5e-10), inside the evaluator's tolerance (1e-9 relative).
  * cost cap (epsilon form): cost in units qc = 5e-10 cap / (n + 1) USD, rounded up; cap floor(cap (1 + 5e-10) / qc):
    every solution with true cost <= cap is allowed, every allowed one has cost <= cap (1 + 5e-10).
"""
from __future__ import annotations

import logging
import math
import time

import numpy as np
from ortools.sat.python import cp_model

from ...solvers.base import SolveOptions
from .candidates import BW_REL_TOL
from .data import RawResult, SlottedProblem

log = logging.getLogger(__name__)

#: objective unit relative to the lower bound LB (section 4.2); rounding changes the objective by <= OBJ_REL_UNIT / 2 * LB
OBJ_REL_UNIT = 2e-9


def objective_unit(prob: SlottedProblem) -> tuple[int, float]:
    """(K, q): K integer, q = Delta / (n K) seconds of objective per integer unit (section 4.2)."""
    n = prob.n
    lb = sum(float(np.min(jd.run_s)) for jd in prob.jobs if len(jd.run_s)) / n
    lb = max(lb, prob.delta_s / n)
    K = max(1, math.ceil(prob.delta_s / (OBJ_REL_UNIT * lb)))
    return K, prob.delta_s / (n * K)


def build_cpsat(prob: SlottedProblem, warm=None):
    """Build the CP-SAT model; returns (model, t vars, x vars, scaling info)."""
    m = cp_model.CpModel()
    K, q = objective_unit(prob)
    eps_mode = prob.cost_cap_usd is not None
    tv, xv, iv = {}, {}, {}
    obj_terms = []
    cost_terms = []
    if eps_mode:
        qc = max(BW_REL_TOL * prob.cost_cap_usd / (prob.n + 1), 1e-15)
    for jd in prob.jobs:
        j = jd.index
        tv[j] = m.new_int_var(jd.lo, prob.H, f"t[{jd.name}]")
        xs = []
        for ci in range(len(jd.cands)):
            x = m.new_bool_var(f"x[{jd.name},{ci}]")
            xv[j, ci] = x
            iv[j, ci] = m.new_optional_fixed_size_interval_var(tv[j], int(jd.d[ci]), x, f"I[{jd.name},{ci}]")
            xs.append(x)
        m.add_exactly_one(xs)                                                          # P2.2
        obj_terms.append(K * tv[j])
        vint = np.rint(jd.val / q).astype(np.int64)
        obj_terms.append(_choice_term(m, jd, tv[j], xv, vint, f"C[{jd.name}]"))         # P2.7
        if eps_mode:
            cint = np.ceil(jd.cost / qc).astype(np.int64)
            cost_terms.append(_choice_term(m, jd, tv[j], xv, cint, f"E[{jd.name}]"))
    # redundant (P2.15): every placement of j holds g_j S_j GPUs in all, so the job-level interval
    # [t_j, t_j + sum_c d_jc x_jc) with that demand fits the cluster's total GPUs; gives CP-SAT an aggregated
    # energetic relaxation that the per-region cumulatives lack.
    if any(r.kind == "gpu" for r in prob.resources):
        jobs_iv, dem = [], []
        for jd in prob.jobs:
            j = jd.index
            size = m.new_int_var(int(jd.d.min()), int(jd.d.max()), f"d[{jd.name}]")
            m.add(size == sum(int(jd.d[ci]) * xv[j, ci] for ci in range(len(jd.cands))))
            end = m.new_int_var(jd.lo + int(jd.d.min()), prob.H + int(jd.d.max()), f"end[{jd.name}]")
            jobs_iv.append(m.new_interval_var(tv[j], size, end, f"J[{jd.name}]"))
            dem.append(prob.inst.job(jd.name).gpus)
        m.add_cumulative(jobs_iv, dem, prob.inst.total_gpus).with_name("con_total_gpus")
    n_links = 0
    for res in prob.resources:                                                         # P2.5
        ivs, dem = [], []
        if res.kind == "gpu":
            cap = int(round(res.capacity))
            for (j, ci), u in res.uses.items():
                ivs.append(iv[j, ci]); dem.append(int(round(u)))
        else:
            n_links += 1
            Q = 2.0 * (prob.n + 1) / (res.capacity * 1e-9)
            cap = int(math.floor(res.capacity * (1 + BW_REL_TOL) * Q))
            for (j, ci), u in res.uses.items():
                ivs.append(iv[j, ci]); dem.append(int(math.ceil(u * Q)))
        m.add_cumulative(ivs, dem, cap).with_name(f"con_capacity[{res.name}]")
    if eps_mode:                                                                       # P2.8
        cap = int(math.floor(prob.cost_cap_usd * (1 + BW_REL_TOL) / qc))
        m.add(sum(cost_terms) <= cap).with_name("con_cost_cap")
    for a, b in prob.symmetric:                                                        # P2.9
        m.add(tv[a] <= tv[b]).with_name(f"con_symmetry[{a},{b}]")
    m.minimize(sum(obj_terms))
    if warm:
        for j, (ci, t) in warm.items():
            m.add_hint(tv[j], t)
            if ci is not None:
                for cj in range(len(prob.jobs[j].cands)):
                    m.add_hint(xv[j, cj], cj == ci)
    return m, tv, xv, {"K": K, "q": q, "links_scaled": n_links}


def _choice_term(m, jd, t, xv, table: np.ndarray, name: str):
    """Integer expression equal to table[c, t - lo] of the chosen candidate c (a constant per c if no t-dependence)."""
    j = jd.index
    if not jd.varies:
        return sum(int(table[ci, 0]) * xv[j, ci] for ci in range(len(jd.cands)))
    lo_v, hi_v = int(table.min()), int(table.max())
    C = m.new_int_var(lo_v, hi_v, name)
    idx = m.new_int_var(0, table.shape[1] - 1, f"idx{name}")
    m.add(idx == t - jd.lo)
    for ci in range(len(jd.cands)):
        row = table[ci]
        e = m.new_int_var(int(row.min()), int(row.max()), f"{name}{ci}")
        m.add_element(idx, [int(v) for v in row], e)
        m.add(C == e).only_enforce_if(xv[j, ci])
    # redundant lower bounds (P2.16): the chosen candidate's cheapest start, and the cheapest candidate at t_j
    m.add(C >= sum(int(table[ci].min()) * xv[j, ci] for ci in range(len(jd.cands))))
    low = table.min(axis=0)
    lowv = m.new_int_var(int(low.min()), int(low.max()), f"low{name}")
    m.add_element(idx, [int(v) for v in low], lowv)
    m.add(C >= lowv)
    return C


def solve_cpsat(prob: SlottedProblem, options: SolveOptions, warm=None) -> RawResult:
    t0 = time.perf_counter()
    m, tv, xv, sc = build_cpsat(prob, warm)
    build_s = time.perf_counter() - t0
    s = cp_model.CpSolver()
    p = s.parameters
    if options.time_limit_s is not None:
        p.max_time_in_seconds = max(options.time_limit_s - build_s, 0.01)   # wall-clock: the build counts
    p.num_workers = max(1, options.threads or 1)
    p.random_seed = options.seed
    p.log_search_progress = bool(options.log)
    p.relative_gap_limit = options.rel_gap
    for k, v in dict(options.backend_options).items():
        setattr(p, k, v)
    t1 = time.perf_counter()
    from ...solvers.cpsat import solve_interruptible
    st = solve_interruptible(s, m, _progress(prob, sc))     # Ctrl-C aborts (harden, issue 10)
    solve_s = time.perf_counter() - t1
    name = s.status_name(st)
    extra = {"objective_unit_s": sc["q"], "objective_K": sc["K"],
             "bandwidth_scaling": "Q_e = 2(n+1)/(B_e*1e-9) per Gbit/s; demand ceil, capacity floor(B_e(1+5e-10)Q_e)",
             "cpsat_status": name}
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        choice = {}
        for jd in prob.jobs:
            j = jd.index
            ci = next(c for c in range(len(jd.cands)) if s.boolean_value(xv[j, c]))
            choice[j] = (ci, int(s.value(tv[j])))
        obj = prob.objective_of(choice)
        q = sc["q"]
        bound = s.best_objective_bound * q + prob.offset - prob.n * q / 2
        extra["objective_integer_model_s"] = s.objective_value * q + prob.offset
        status = "optimal" if st == cp_model.OPTIMAL else "feasible"
        if status == "optimal":
            bound = min(bound, obj)
        return RawResult(status, choice, obj, bound, int(s.num_branches), build_s, solve_s, extra=extra)
    if st == cp_model.INFEASIBLE:
        return RawResult("infeasible", None, None, None, int(s.num_branches), build_s, solve_s,
                         message="CP-SAT proved the slotted problem infeasible (no candidate fits the horizon or "
                                 "the cost cap)", extra=extra)
    if st == cp_model.UNKNOWN:
        return RawResult("time_limit", None, None, None, int(s.num_branches), build_s, solve_s,
                         message="no solution found within the time limit", extra=extra)
    return RawResult("error", None, message=f"CP-SAT returned {name}", build_s=build_s, solve_s=solve_s, extra=extra)


def _progress(prob: SlottedProblem, sc: dict):
    """A solution callback telling each incumbent and the proven bound of the slotted model (in s, as
    ``solve_cpsat`` reports them) as progress lines (``bace_opt.progress``, logger ``p2``); None when they are
    not shown (no callback: the search runs as before)."""
    from ... import progress
    log = progress.logger("p2")
    if not log.isEnabledFor(logging.INFO):
        return None
    mv = progress.Moving(log, "P2 exact (cpsat)")
    q = sc["q"]

    class Tell(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            mv.tell(f"incumbent {progress.value(self.objective_value * q + prob.offset)} (slotted model), bound "
                    f"{progress.value(self.best_objective_bound * q + prob.offset - prob.n * q / 2)}")

    return Tell()
