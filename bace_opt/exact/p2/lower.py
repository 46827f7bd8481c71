"""The packing relaxation of P2 (models/schedule.md section 8.3, P2.35-P2.38): the area relaxation
(``p2.area``, P2.30-P2.34) with, in every time unit, the GPUs of the pool shared out among FEASIBLE
PACKINGS of whole jobs instead of as a fluid.

The area relaxation lets the pool run 100 % full: per unit, sum_j W_j x (time j runs in the unit) <= G Delta.
Rigid jobs cannot: at any instant the jobs running form a packing (a multiset of job sizes of total <= G), and
when the sizes do not add up to G some GPUs stand idle (paper seed 3: 27 jobs of 80 GPUs on a pool of 288; at
most 3 of them run together, 48 GPUs idle unless a 48-GPU job runs beside them).  Here:

* size classes: the distinct W_j, each rounded DOWN to a multiple of ``step`` (1 when the packings are few;
  doubled until there are at most ``max_patterns``); class k has size w_k and N_k jobs;             (P2.35)
* packings: the maximal multisets n (n_k <= N_k jobs of class k, sum_k w_k n_k <= G);               (P2.36)
* per unit u and packing p: lambda_up >= 0, the time of the unit during which the running jobs form a
  sub-multiset of p; sum_p lambda_up <= Delta;                                                          (P2.37)
* per unit u and class k: sum_{j in k} (time j runs in u, the linear overlap of P2.30) <= sum_p n_pk lambda_up.
                                                                                                        (P2.38)

Validity: take any continuous-time schedule, truncated to [s_j, s_j + R_j) as in the area relaxation's proof
(the running sets only shrink).  At each instant the running jobs hold sum W_j <= G GPUs; their class counts
c(t) satisfy c_k(t) <= N_k and sum_k w_k c_k(t) <= sum_j W_j <= G (sizes rounded down), so c(t) lies below some
maximal packing p(t).  Let lambda_up be the measure of the instants t in unit u with p(t) = p (ties broken by a
fixed order): sum_p lambda_up = Delta, and sum_p n_pk lambda_up >= integral over u of c_k(t) = sum_{j in k} (time
j runs in u), which is the overlap of P2.30 set from s_j.  So the mapped point of the area relaxation extends to
a feasible point of P2.35-P2.38 with the same objective: the optimum of this LP, and every dual bound of its MIP,
is <= the continuous P2 optimum.  The area rows (P2.32) are implied (sum_k w_k n_pk <= G), so this bound is
>= the area relaxation's on the same unit and horizon.
"""
from __future__ import annotations

import math
import time
from typing import Any

from ...instance import Instance
from ...solvers.base import SolveOptions, run_interruptible
from .area import area_data, area_highs, build_area, pick_unit

#: at most this many maximal packings per unit (sizes are rounded down to coarser classes above it)
MAX_PATTERNS = 400


def maximal_packings(sizes: list[int], counts: list[int], G: int, limit: int | None = None) -> list[tuple] | None:
    """Every maximal multiset (n_k <= counts[k], sum sizes[k] n_k <= G; no further job of any class fits) as a
    tuple of counts per class; None when there are more than ``limit``."""
    K = len(sizes)
    out: list[tuple] = []
    cur = [0] * K

    def rec(k: int, left: int) -> bool:
        if k == K:
            if all(cur[i] >= counts[i] or sizes[i] > left for i in range(K)):
                out.append(tuple(cur))
                if limit is not None and len(out) > limit:
                    return False
            return True
        for c in range(min(counts[k], left // sizes[k]), -1, -1):
            cur[k] = c
            if not rec(k + 1, left - c * sizes[k]):
                return False
        cur[k] = 0
        return True

    return out if rec(0, G) else None


def size_classes(data: dict[str, Any], max_patterns: int = MAX_PATTERNS):
    """(class of each job, class sizes, maximal packings, step) of P2.35-P2.36."""
    G = data["G"]
    Ws = [W for _, W, _, _ in data["jobs"]]
    step = 1
    while True:
        cls_w = sorted({max(W // step * step, 1) for W in Ws}, reverse=True)
        pos = {w: k for k, w in enumerate(cls_w)}
        of_job = [pos[max(W // step * step, 1)] for W in Ws]
        counts = [of_job.count(k) for k in range(len(cls_w))]
        pats = maximal_packings(cls_w, counts, G, max_patterns)
        if pats is not None:
            return of_job, cls_w, pats, step
        step *= 2


def add_packing_rows(h, m: dict[str, Any], data: dict[str, Any], D: float, of_job: list[int], n_cls: int,
                     pats: list[tuple]) -> int:
    """Add P2.37-P2.38 to ``h`` (holding the area model ``m``); returns the number of lambda columns."""
    import highspy
    import numpy as np
    W = [w for _, w, _, _ in data["jobs"]]
    units = sorted(m["rows"])
    npat = len(pats)
    base = h.getNumCol()
    nl = len(units) * npat
    h.addVars(nl, np.zeros(nl), np.full(nl, D))
    for i, u in enumerate(units):
        lam = np.arange(base + i * npat, base + (i + 1) * npat, dtype=np.int32)
        h.addRow(-highspy.kHighsInf, D, npat, lam, np.ones(npat))                     # P2.37
        per_cls: list[dict[int, float]] = [{} for _ in range(n_cls)]
        for c, v in m["rows"][u].items():
            j = m["col_job"][c]
            per_cls[of_job[j]][c] = v / W[j]             # the area row's GPU-seconds / W_j = seconds
        for k in range(n_cls):
            cols = list(per_cls[k]) + [int(x) for x in lam]
            vals = list(per_cls[k].values()) + [-float(p[k]) for p in pats]
            h.addRow(-highspy.kHighsInf, 0.0, len(cols), np.array(cols, dtype=np.int32), np.array(vals))  # P2.38
    return nl


def packing_lower_bound(inst: Instance, options: SolveOptions = SolveOptions(), time_unit_s: float | None = None,
                        max_units: int = 400, mip: bool = False, max_patterns: int = MAX_PATTERNS,
                        fluid_factor: float = 2.0, lp_first: bool = True) -> dict[str, Any]:
    """Solve the packing relaxation (module doc) with HiGHS: its LP (``mip=False``) or MIP.  Returns
    lower_bound_jct_s (None unless proven: the LP optimum, or the MIP's dual bound), status, unit, the size
    classes and packings, times.  A MIP (with ``lp_first``) first solves its LP relaxation in up to
    ``LP_FIRST_SHARE`` of the time, and its bound is the larger of that LP's certified value (from its row duals,
    ``p1.lpbound``) and the MIP's dual bound: a MIP stopped before its root has the LP's bound, not 0."""
    import highspy
    t_build = time.perf_counter()
    data = area_data(inst, relative=True)     # mean JCT only: arrivals from the first one's unit
    if data is None:
        return {"lower_bound_jct_s": None, "lower_bound_status": "infeasible",
                "lower_bound_note": "a job fits no region set"}
    D = float(time_unit_s) if time_unit_s is not None else pick_unit(data, max_units, fluid_factor)
    of_job, cls_w, pats, step = size_classes(data, max_patterns)
    m = build_area(data, D, True, fluid_factor)
    h = area_highs(m, options, mip)
    nl = add_packing_rows(h, m, data, D, of_job, len(cls_w), pats)
    build_s = time.perf_counter() - t_build
    t0 = time.perf_counter()
    lp_bound = None
    if mip and lp_first:
        from ..p1.lpbound import relaxation_bound
        tl = None if options.time_limit_s is None else LP_FIRST_SHARE * options.time_limit_s
        lp_bound = relaxation_bound(h, "simplex", tl).bound
    run_interruptible(h.run, h.cancelSolve)
    solve_s = time.perf_counter() - t0
    st = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    if mip:
        bound = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else None
        if lp_bound is not None and (bound is None or lp_bound > bound):
            bound = lp_bound
    else:
        bound = float(info.objective_function_value) if st == S.kOptimal else None
    if st == S.kOptimal:
        status = "optimal"
    elif mip and lp_bound is not None and bound == lp_bound and info.primal_solution_status != 2:
        status = "LP bound (MIP stopped)"
    elif st == S.kInfeasible:
        status, bound = "infeasible", math.inf
    else:
        status = "feasible" if mip and info.primal_solution_status == 2 else "time_limit"
    order = None
    if status in ("optimal", "feasible"):         # the jobs by their (mean) relaxed start: a list order to try
        xv = h.getSolution().col_value
        st_ = [0.0] * len(data["jobs"])
        for xc, yc, _, _, t in m["links"]:
            st_[m["col_job"][xc]] += D * t * xv[xc] + xv[yc]
        order = sorted(range(len(st_)), key=lambda j: (st_[j], j))
    return {"lower_bound_jct_s": bound, "lower_bound_status": status, "lower_bound_time_unit_s": D,
            "lower_bound_cost_usd": math.fsum(c for _, _, _, c in data["jobs"]), "relaxed_order": order,
            "lower_bound_build_s": build_s, "lower_bound_solve_s": solve_s,
            "lower_bound_columns": len(m["cost"]) + nl, "size_classes": cls_w, "size_step": step,
            "packings": len(pats), "lower_bound_nodes": int(info.mip_node_count) if mip else 0,
            "lower_bound_lp_first": lp_bound}


#: a MIP run solves its LP relaxation first in up to this share of its time (``packing_lower_bound``)
LP_FIRST_SHARE = 0.5
#: the recipe (``recipe_lower_bound``): first the packing LP on a grid of this many units (fast: a bound early) ...
FIRST_UNITS = 100
FIRST_SHARE = 0.1
#: ... then, up to this many jobs, the packing LP then its MIP on one grid ...
MIP_MAX_JOBS = 30
#: ... above it LPs on a coarse grid (fast), then a fine one (``max_units``)
COARSE_UNITS = 250
FINE_UNITS = 400
#: the relaxations' horizon: last arrival + FLUID_FACTOR x the fluid makespan + the longest run (any is valid)
FLUID_FACTOR = 1.0


def recipe_lower_bound(inst: Instance, time_limit_s: float, threads=None, seed: int = 0) -> list[dict[str, Any]]:
    """The one recipe's mean-JCT lower bound (``gaps.report.p2_figures`` and ``p2.bound.solve_bracket``
    use it) within ``time_limit_s`` seconds: the packing relaxation's LP on a coarse grid of ``FIRST_UNITS``
    (10 % of the time: a valid bound early), then up to ``MIP_MAX_JOBS`` jobs its LP (30 % of the time) then its
    MIP on one grid (the MIP's LP first when that grid's LP found none), above it LPs on a coarse then a fine
    grid (a grid equal to one already solved is skipped).  Returns every run (each with ``form``: "LP" or
    "MIP"); the bound is the largest proven ``lower_bound_jct_s`` among them."""
    t0 = time.perf_counter()
    runs: list[dict[str, Any]] = []
    data = area_data(inst, relative=True)     # mean JCT only: arrivals from the first one's unit
    steps = ((FIRST_SHARE, FIRST_UNITS, False),) + (((0.3, 400, False), (1.0, 400, True))
                                                    if len(inst.jobs) <= MIP_MAX_JOBS
                                                    else ((0.3, COARSE_UNITS, False), (1.0, FINE_UNITS, False)))
    for share, units, as_mip in steps:
        left = time_limit_s * share - (time.perf_counter() - t0)
        same = (data is not None and not as_mip and any(
            r.get("lower_bound_time_unit_s") == pick_unit(data, units, FLUID_FACTOR) for r in runs))
        if left > 1.0 and not same:
            solved = data is not None and any(r.get("lower_bound_jct_s") is not None and r.get("form") == "LP" and
                                              r.get("lower_bound_time_unit_s") == pick_unit(data, units, FLUID_FACTOR)
                                              for r in runs)
            r = packing_lower_bound(inst, SolveOptions(time_limit_s=left, threads=threads, seed=seed),
                                    max_units=units, mip=as_mip, fluid_factor=FLUID_FACTOR, lp_first=not solved)
            r["form"] = "MIP" if as_mip else "LP"
            runs.append(r)
    return runs


def best_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of ``recipe_lower_bound`` with the largest proven bound (else the last, or {})."""
    good = [r for r in runs if r.get("lower_bound_jct_s") is not None]
    return max(good, key=lambda r: r["lower_bound_jct_s"]) if good else (runs or [{}])[-1]


def run_kind(r: dict[str, Any]) -> str:
    """How a run of ``recipe_lower_bound`` is named in reports."""
    unit = r.get("lower_bound_time_unit_s")
    return (f"packing relaxation (P2.35-P2.38 on the area relaxation P2.30-P2.34), {r.get('form')} "
            f"{r.get('lower_bound_status')}" + ("" if unit is None else f", unit {unit:g} s"))
