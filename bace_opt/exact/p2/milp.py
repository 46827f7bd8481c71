"""P2 as a time-indexed MILP solved by HiGHS (highspy, built directly as a sparse matrix).

Model (models/schedule.md section 5; notation of bace_opt.exact.schedule), slot length Delta:

    x_jct in {0, 1}: job j starts candidate c at slot t (t = lo_j..H)                          (P2.10)
    sum_{c,t} x_jct = 1                                       for every job        con_assign      (P2.11)
    sum_{j,c,t: t <= tau < t + d_jc} u_jc,k x_jct <= cap_k     for every binding resource k and
                                                               slot tau            con_capacity    (P2.12)
    sum_{j,c,t} cost_jc(Delta t) x_jct / eps <= 1 + 5e-10      (epsilon form)      con_cost_cap    (P2.13)
    sum_{c,t} t x_act <= sum_{c,t} t x_bct                     identical jobs a<b  con_symmetry    (P2.14)
    min sum_{j,c,t} (Delta t / n + val_jc(t)) x_jct - sum_j a_j / n                                (P2.1)

Coefficients are the exact floats of the discretized problem (no rounding), so the MILP is exact for the
slotted problem up to HiGHS' tolerances (mip_feasibility_tolerance 1e-6; the bandwidth rows use the capacity
times 1 + 5e-10 as CP-SAT does; the cost-cap row is divided by the cap so the tolerance is relative, and
the decoded solution's true cost is checked against the cap: ``extra.cost_cap_violation_usd`` if it exceeds).  Built with highspy directly: the model has one column per (job, candidate, slot) and
Pyomo's per-variable overhead dominated the build at these sizes.
"""
from __future__ import annotations

import logging
import time

import numpy as np
import highspy

from ...solvers.base import SolveOptions
from ...solvers.highs import set_threads, run_highs
from ...solvers.output import highs_log_to_stderr
from .candidates import BW_REL_TOL
from .data import RawResult, SlottedProblem

log = logging.getLogger(__name__)


#: refuse to build a MILP with more constraint nonzeros than this (memory: ~50 bytes each while building);
#: override with SolveOptions.backend_options={"max_nonzeros": N}
MAX_NONZEROS = 5_000_000
#: and with more columns than this: HiGHS 1.12 grew past 17 GB of memory within two minutes on a 326,009-column
#: instance of this model (benchmarks/bench_schedule.py, rand-4r-6j-s2-hourly at 600 s slots; the process was
#: stopped).  Override with backend_options={"max_columns": N}
MAX_COLUMNS = 100_000


def estimate_nonzeros(prob: SlottedProblem) -> int:
    """Constraint nonzeros of the MILP before building it (assignment + capacity rows)."""
    nnz = 0
    for jd in prob.jobs:
        T = max(prob.H - jd.lo + 1, 0)
        nnz += T * len(jd.cands)
    for res in prob.resources:
        for (j, ci) in res.uses:
            jd = prob.jobs[j]
            nnz += max(prob.H - jd.lo + 1, 0) * int(jd.d[ci])
    return nnz


class _Cols:
    """Column layout: job j, candidate c, start t -> base[j][c] + (t - lo_j)."""

    def __init__(self, prob: SlottedProblem):
        self.base: dict[tuple[int, int], int] = {}
        k = 0
        for jd in prob.jobs:
            T = prob.H - jd.lo + 1
            for ci in range(len(jd.cands)):
                self.base[jd.index, ci] = k
                k += T
        self.n = k


def build_milp(prob: SlottedProblem):
    """Return (Highs, cols) with the model loaded (not solved)."""
    cols = _Cols(prob)
    n = prob.n
    cost = np.zeros(cols.n)
    rows_lo, rows_hi, r_idx, c_idx, vals = [], [], [], [], []
    row = 0

    def add_row(cidx, v, lo, hi):
        nonlocal row
        r_idx.append(np.full(len(cidx), row, dtype=np.int64))
        c_idx.append(np.asarray(cidx, dtype=np.int64))
        vals.append(np.asarray(v, dtype=float))
        rows_lo.append(lo)
        rows_hi.append(hi)
        row += 1

    for jd in prob.jobs:                                                      # objective (P2.1)
        T = prob.H - jd.lo + 1
        tt = np.arange(jd.lo, prob.H + 1)
        for ci in range(len(jd.cands)):
            b = cols.base[jd.index, ci]
            v = jd.val[ci] if jd.varies else np.full(T, jd.val[ci, 0])
            cost[b:b + T] = prob.delta_s * tt / n + v
    for jd in prob.jobs:                                                      # con_assign (P2.11)
        T = prob.H - jd.lo + 1
        idx = np.concatenate([np.arange(cols.base[jd.index, ci], cols.base[jd.index, ci] + T)
                              for ci in range(len(jd.cands))])
        add_row(idx, np.ones(len(idx)), 1.0, 1.0)
    tau_max = prob.H + max((int(jd.d.max()) for jd in prob.jobs if len(jd.d)), default=1)
    for res in prob.resources:                                                # con_capacity (P2.12)
        rr, cc, vv = [], [], []
        for (j, ci), u in res.uses.items():
            jd = prob.jobs[j]
            T = prob.H - jd.lo + 1
            b = cols.base[j, ci]
            for o in range(int(jd.d[ci])):
                rr.append(jd.lo + np.arange(T) + o)       # slot tau = t + o
                cc.append(b + np.arange(T))
                vv.append(np.full(T, u))
        if not rr:
            continue
        rr, cc, vv = np.concatenate(rr), np.concatenate(cc), np.concatenate(vv)
        cap = res.capacity * (1 + BW_REL_TOL) if res.kind == "link" else res.capacity
        order = np.argsort(rr, kind="stable")
        rr, cc, vv = rr[order], cc[order], vv[order]
        taus, starts = np.unique(rr, return_index=True)
        ends = list(starts[1:]) + [len(rr)]
        for tau, s, e in zip(taus, starts, ends):
            if vv[s:e].sum() <= cap:   # cannot bind in this slot
                continue
            add_row(cc[s:e], vv[s:e], -highspy.kHighsInf, cap)
    if prob.cost_cap_usd is not None:                                         # con_cost_cap (P2.13)
        idx, v = [], []
        for jd in prob.jobs:
            T = prob.H - jd.lo + 1
            for ci in range(len(jd.cands)):
                b = cols.base[jd.index, ci]
                idx.append(np.arange(b, b + T))
                v.append(jd.cost[ci] if jd.varies else np.full(T, jd.cost[ci, 0]))
        # scaled by 1/cap so HiGHS' absolute row tolerance acts relative to the cap
        scale = 1.0 / prob.cost_cap_usd if prob.cost_cap_usd > 0 else 1.0
        add_row(np.concatenate(idx), scale * np.concatenate(v), -highspy.kHighsInf,
                scale * prob.cost_cap_usd * (1 + BW_REL_TOL))
    for a, b in prob.symmetric:                                               # con_symmetry (P2.14)
        idx, v = [], []
        for jd, sgn in ((prob.jobs[a], 1.0), (prob.jobs[b], -1.0)):
            T = prob.H - jd.lo + 1
            for ci in range(len(jd.cands)):
                base = cols.base[jd.index, ci]
                idx.append(np.arange(base, base + T))
                v.append(sgn * np.arange(jd.lo, prob.H + 1, dtype=float))
        add_row(np.concatenate(idx), np.concatenate(v), -highspy.kHighsInf, 0.0)

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(cols.n, np.zeros(cols.n), np.ones(cols.n))
    h.changeColsCost(cols.n, np.arange(cols.n, dtype=np.int32), cost)
    h.changeColsIntegrality(cols.n, np.arange(cols.n, dtype=np.int32),
                            np.full(cols.n, highspy.HighsVarType.kInteger))
    if row:
        r_all = np.concatenate(r_idx)
        c_all = np.concatenate(c_idx)
        v_all = np.concatenate(vals)
        order = np.argsort(r_all, kind="stable")
        c_all, v_all, r_all = c_all[order], v_all[order], r_all[order]
        starts = np.searchsorted(r_all, np.arange(row)).astype(np.int32)
        h.addRows(row, np.array(rows_lo), np.array(rows_hi), len(c_all), starts, c_all.astype(np.int32), v_all)
    h.changeObjectiveOffset(prob.offset)
    return h, cols, {"columns": cols.n, "rows": row, "nonzeros": int(sum(len(v) for v in vals)),
                     "slots": tau_max}


def size_error(prob: SlottedProblem, backend_options=None) -> tuple[str, dict] | None:
    """Why the MILP of ``prob`` is not built (over ``MAX_COLUMNS`` columns or ``MAX_NONZEROS`` nonzeros, or the
    limits given in ``backend_options``): (message, figures), or None when it fits."""
    backend = dict(backend_options or {})
    limit = int(backend.get("max_nonzeros", MAX_NONZEROS))
    col_limit = int(backend.get("max_columns", MAX_COLUMNS))
    ncols = sum(max(prob.H - jd.lo + 1, 0) * len(jd.cands) for jd in prob.jobs)
    if ncols > col_limit:
        return (f"time-indexed MILP too large: {ncols:,} columns "
                f"({sum(len(j.cands) for j in prob.jobs)} candidates x up to {prob.H + 1} slots of "
                f"{prob.delta_s:g} s) > limit {col_limit:,}; use a larger slot_s, max_blocks, or "
                f"backend_options={{'max_columns': N}}"), {"milp_columns": ncols}
    est = estimate_nonzeros(prob)
    if est > limit:
        return (f"time-indexed MILP too large: about {est:,} nonzeros "
                f"({sum(len(j.cands) for j in prob.jobs)} candidates x {prob.H + 1} slots of "
                f"{prob.delta_s:g} s) > limit {limit:,}; use a larger slot_s, max_blocks, or "
                f"backend_options={{'max_nonzeros': N}}"), {"milp_nonzeros_estimate": est}
    return None


def solve_milp(prob: SlottedProblem, options: SolveOptions, warm=None) -> RawResult:
    t0 = time.perf_counter()
    backend = dict(options.backend_options)
    backend.pop("max_nonzeros", None)
    backend.pop("max_columns", None)
    too_large = size_error(prob, options.backend_options)
    if too_large is not None:
        return RawResult("error", None, build_s=time.perf_counter() - t0, message=too_large[0],
                         extra=dict(too_large[1], too_large=True))
    h, cols, size = build_milp(prob)
    build_s = time.perf_counter() - t0
    h.setOptionValue("output_flag", bool(options.log))
    if options.log:
        highs_log_to_stderr(h)          # never on standard output (--json keeps it for the JSON alone)
    if options.time_limit_s is not None:
        h.setOptionValue("time_limit", float(max(options.time_limit_s, 0.01)))
    h.setOptionValue("mip_rel_gap", float(options.rel_gap))
    h.setOptionValue("mip_abs_gap", 1e-9)
    h.setOptionValue("random_seed", int(options.seed))
    # HiGHS presolve spent most of the solve time on these overlapping window rows of the test instances during
    # development (one-off observation, about ten times slower); off unless backend_options={"presolve": "on"}
    h.setOptionValue("presolve", "off")
    set_threads(h, options.threads)
    for k, v in backend.items():
        h.setOptionValue(k, v)
    if warm and all(ci is not None for ci, _ in warm.values()) and len(warm) == prob.n:
        x0 = np.zeros(cols.n)
        for j, (ci, t) in warm.items():
            x0[cols.base[j, ci] + t - prob.jobs[j].lo] = 1.0
        sol = highspy.HighsSolution()
        sol.col_value = list(x0)
        sol.value_valid = True
        h.setSolution(sol)
    t1 = time.perf_counter()
    run_highs(h)
    solve_s = time.perf_counter() - t1
    ms = h.getModelStatus()
    info = h.getInfo()
    nodes = int(info.mip_node_count) if info.mip_node_count >= 0 else None
    extra = {"milp_size": size, "highs_status": h.modelStatusToString(ms)}
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    if has_sol and ms in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit,
                          highspy.HighsModelStatus.kInterrupt, highspy.HighsModelStatus.kSolutionLimit,
                          highspy.HighsModelStatus.kIterationLimit, highspy.HighsModelStatus.kObjectiveBound,
                          highspy.HighsModelStatus.kObjectiveTarget, highspy.HighsModelStatus.kMemoryLimit):
        x = np.asarray(h.getSolution().col_value)
        choice = {}
        for jd in prob.jobs:
            T = prob.H - jd.lo + 1
            best, arg = -1.0, None
            for ci in range(len(jd.cands)):
                b = cols.base[jd.index, ci]
                k = int(np.argmax(x[b:b + T]))
                if x[b + k] > best:
                    best, arg = x[b + k], (ci, jd.lo + k)
            choice[jd.index] = arg
        obj = prob.objective_of(choice)
        bound = float(info.mip_dual_bound)
        if prob.cost_cap_usd is not None:
            over = prob.cost_of(choice) - prob.cost_cap_usd * (1 + 1e-9)
            if over > 0:
                extra["cost_cap_violation_usd"] = over
                log.warning("HiGHS solution exceeds the cost cap by %.3g USD (within its tolerances)", over)
        extra["objective_highs_s"] = float(info.objective_function_value)
        status = "optimal" if ms == highspy.HighsModelStatus.kOptimal else "feasible"
        return RawResult(status, choice, obj, bound, nodes, build_s, solve_s, extra=extra)
    if ms == highspy.HighsModelStatus.kInfeasible:
        return RawResult("infeasible", None, nodes=nodes, build_s=build_s, solve_s=solve_s,
                         message="HiGHS proved the slotted problem infeasible (horizon or cost cap)", extra=extra)
    if ms in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt,
              highspy.HighsModelStatus.kIterationLimit):
        return RawResult("time_limit", None, nodes=nodes, build_s=build_s, solve_s=solve_s,
                         message="no solution found within the time limit", extra=extra)
    return RawResult("error", None, nodes=nodes, build_s=build_s, solve_s=solve_s,
                     message=f"HiGHS ended with {h.modelStatusToString(ms)}", extra=extra)
