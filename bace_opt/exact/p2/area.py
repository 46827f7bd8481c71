"""The area relaxation of P2 (models/schedule.md section 8.3, P2.30-P2.34): a lower bound of the mean JCT that
needs no candidates and, unlike the pool relaxation (P2.29), loses nothing to the time grid in the objective.

All GPUs form one pool of G = sum_r G_r; job j holds W_j = g_j S_j of them for at least R_j = its shortest
mode's run time (``p2.relax.job_modes``, P2.24).  Time is cut into units of Delta.  A continuous start
s >= a_j is written s = Delta t + phi (t = floor(s / Delta), 0 <= phi < Delta); with R_j = Delta q + rho
(0 <= rho < Delta) the run [s, s + R_j) overlaps

    unit t:              Delta - phi
    units t+1..t+q-1:    Delta
    unit t+q:            rho + phi            (phi <= Delta - rho: piece 0)   or  Delta          (piece 1)
    unit t+q+1:          0                    (piece 0)                       or  phi + rho - Delta (piece 1)

(P2.30), each linear in phi on its piece.  Variables: x_jtk in {0, 1} (job j starts in unit t, piece k),
y_jtk = phi x_jtk with lo_k x <= y <= hi_k x (P2.31).  Per unit tau: sum of W_j x overlap <= G Delta, the
GPU-seconds the pool has in the unit (P2.32).  Objective: sum_j (Delta t x + y + R_j x - a_j x) / n, the exact
mean JCT of the truncated runs (P2.33).  A start at or after the horizon H Delta takes one extra column per job
that uses no capacity and completes at H Delta + R_j (P2.34): dropping capacity there only relaxes, so no
horizon needs proving, and H may be taken short (``horizon_s``: the last arrival plus twice the pool's fluid
makespan plus the longest run) to keep the model small.

Validity: take any continuous-time schedule (any placement, stall or not).  Job j runs [s_j, s_j + R'_j) with
R'_j >= R_j on W_j GPUs; truncate it to [s_j, s_j + R_j): the GPUs in use at any instant only drop, so every
unit's GPU-seconds stay <= G Delta; setting x, y from s_j as above satisfies P2.31-P2.32, and the objective
term s_j + R_j - a_j <= the job's JCT.  So the relaxation's optimum, and every dual bound HiGHS proves for it,
is <= the optimum of the continuous problem.  The mean-JCT bound is the solve's proven dual bound (its LP
relaxation's when the MIP is not run).
"""
from __future__ import annotations

import math
import time
from typing import Any

from ...instance import Instance
from ...solvers.base import SolveOptions, run_interruptible
from ...solvers.highs import direct_highs
from .relax import job_modes

#: time units tried, the smallest one whose model has at most ``max_units`` units is taken
UNITS_S = (600.0, 900.0, 1200.0, 1800.0, 2400.0, 3600.0, 5400.0, 7200.0, 10800.0, 14400.0, 21600.0, 43200.0)


def area_data(inst: Instance, relative: bool = False) -> dict[str, Any] | None:
    """Per job: arrival, GPUs W_j, shortest run time R_j and cost lower bound; None when a job cannot run.

    ``relative``: arrivals counted from ``offset_s``, the first arrival rounded down to a multiple of the largest
    unit (so every unit's grid is the grid from time 0, shifted): for the mean-JCT bounds only, which do not
    change when every arrival moves by the same time.  Without it, jobs arriving at 1e9 s would get a horizon of
    1e9 s and the coarsest unit (a valid but weak bound)."""
    G = sum(r.gpus for r in inst.regions)
    a0 = min((j.arrival_s for j in inst.jobs), default=0.0)
    off = UNITS_S[-1] * math.floor(a0 / UNITS_S[-1]) if relative and a0 > 0 else 0.0
    jobs = []
    for job in inst.jobs:
        modes, c = job_modes(inst, job)
        if not modes or job.gpus > G:
            return None
        jobs.append((job.arrival_s - off, job.gpus, min(mo[-1] for mo in modes), c))
    return {"G": G, "jobs": jobs, "offset_s": off}


def horizon_s(data: dict[str, Any], fluid_factor: float = 2.0) -> float:
    """Where the capacitated columns end (P2.34 makes any end valid): the last arrival plus ``fluid_factor`` x
    the pool's fluid makespan (sum_j W_j R_j / G) plus the longest run; no schedule worth having starts a job
    later."""
    G, jobs = data["G"], data["jobs"]
    return (max(a for a, _, _, _ in jobs) + fluid_factor * sum(W * R for _, W, R, _ in jobs) / G
            + max(R for _, _, R, _ in jobs))


def pick_unit(data: dict[str, Any], max_units: int, fluid_factor: float = 2.0) -> float:
    for D in UNITS_S:
        if horizon_s(data, fluid_factor) / D + len(data["jobs"]) + 2 <= max_units:
            return D
    return UNITS_S[-1]


class Columns:
    """An area model's columns as they are made (``col(cost, lo, hi, integer, job)`` returns the new index)."""

    def __init__(self):
        self.cost, self.lo, self.hi, self.integ, self.col_job = [], [], [], [], []

    def __call__(self, c: float, lo_: float, hi_: float, is_int: bool, j: int) -> int:
        self.cost.append(c)
        self.lo.append(lo_)
        self.hi.append(hi_)
        self.integ.append(is_int)
        self.col_job.append(j)
        return len(self.cost) - 1

    def model(self) -> dict:
        """The keys ``area_highs`` reads: cost, lo, hi, integ, col_job."""
        return {"cost": self.cost, "lo": self.lo, "hi": self.hi, "integ": self.integ, "col_job": self.col_job}


def start_pieces(a: float, D: float, rho: float, t: int):
    """The pieces of a start in unit ``t`` of a job arriving at ``a`` with R = q D + rho: (k, phi lo, phi hi) for
    k = 0 (phi < D - rho) and 1 (phi >= D - rho), phi the offset in the unit, not before the arrival; empty ones
    left out."""
    pmin = max(a - D * t, 0.0)
    for k, (p_lo, p_hi) in enumerate(((0.0, D - rho), (D - rho, D))):
        p_lo = max(p_lo, pmin)
        if p_hi - p_lo > 1e-9 * D:
            yield k, p_lo, p_hi


def unit_overlaps(t: int, k: int, q: int, rho: float, D: float, compact: bool = True) -> dict[int, tuple]:
    """The capacity a start in unit ``t`` on piece ``k`` (0: phi < D - rho, 1: phi >= D - rho) of a run R = q D
    + rho takes in each unit: {unit: (coef of x, coef of y)} in GPU-seconds / W (P2.31-P2.33).  ``compact``: the
    full units t < u < t + q left out (written through z, ``build_area``)."""
    ov: dict[int, tuple] = {}
    if q == 0:         # the run lies in units t (and t+1 on piece 1)
        ov[t] = (rho, 0.0) if k == 0 else (D, -1.0)
        if k == 1:
            ov[t + 1] = (rho - D, 1.0)
        return ov
    ov[t] = (D, -1.0)
    for u in range(t + 1, t + q) if not compact else ():
        ov[u] = (D, 0.0)
    if k == 0:
        ov[t + q] = (rho, 1.0)
    else:
        ov[t + q] = (D, 0.0)
        ov[t + q + 1] = (rho - D, 1.0)
    return ov


def add_term(rows: dict, u: int, c: int, v: float) -> None:
    """rows[u][c] += v (nothing for v = 0)."""
    if v:
        r = rows.setdefault(u, {})
        r[c] = r.get(c, 0.0) + v


def job_starts(col: Columns, rows: dict, links: list, j: int, a: float, W: float, R: float, n: int, D: float,
               t_lo: int, t_hi: int, compact: bool = True, u_end: int | None = None) -> dict[int, list[int]]:
    """Job ``j``'s start columns in the units [t_lo, t_hi) (x: a start on the unit's piece, y: its offset; P2.30-P2.33),
    their links appended to ``links`` and their capacity in ``rows`` (a unit >= ``u_end`` left out): {unit: x
    columns}."""
    q = int(math.floor(R / D))
    rho = R - D * q
    xs_at: dict[int, list[int]] = {}
    for t in range(t_lo, t_hi):
        for k, p_lo, p_hi in start_pieces(a, D, rho, t):
            xc = col((D * t + R - a) / n, 0.0, 1.0, True, j)
            yc = col(1.0 / n, 0.0, D, False, j)
            xs_at.setdefault(t, []).append(xc)
            links.append((xc, yc, p_lo, p_hi, t))
            for u, (cx, cy) in unit_overlaps(t, k, q, rho, D, compact).items():
                if u_end is None or u < u_end:
                    add_term(rows, u, xc, W * cx)
                    add_term(rows, u, yc, W * cy)
    return xs_at


def job_cumulative(col: Columns, rows: dict, eqs: list, xs_at: dict, j: int, W: float, D: float, q: int, t0: int,
                   z_end: int, u_end: int) -> None:
    """The compact full-unit overlaps of job ``j`` (``build_area``): z_v = sum_{t <= v} x_t for v in [t0, z_end)
    (rows of ``eqs``), and W D (z_{u-1} - z_{u-q}) in each unit u of (t0, u_end) (z past z_end - 1 is its last)."""
    z: dict[int, int] = {}
    for v in range(t0, z_end):
        z[v] = col(0.0, 0.0, 1.0, False, j)
        xs = xs_at.get(v, [])
        prev = [z[v - 1]] if v - 1 in z else []
        eqs.append(([z[v]] + prev + xs, [1.0] + [-1.0] * len(prev) + [-1.0] * len(xs)))
    for u in range(t0 + 1, u_end):
        add_term(rows, u, z[min(u - 1, z_end - 1)], W * D)
        if u - q in z:
            add_term(rows, u, z[u - q], -W * D)


def build_area(data: dict[str, Any], D: float, compact: bool = True, fluid_factor: float = 2.0):
    """Columns and rows of P2.30-P2.34: cost, lo, hi, integ (integer mask), rows {unit: {column: coef}},
    col_job, links [(x, y, phi lo, phi hi, t)], eqs [(columns, coefs)] (= 0), H, cap.  ``compact``: the
    full-unit overlaps of all starts t < u < t + q are written W Delta (z_{u-1} - z_{u-q}) with
    z_v = sum_{t <= v} x_jt (continuous, defined by the rows eqs): the same polytope with O(1) instead of O(q)
    entries per job and unit.  ``fluid_factor``: the horizon's (``horizon_s``; any value is valid, P2.34)."""
    G, jobs = data["G"], data["jobs"]
    n = len(jobs)
    amax = max(a for a, _, _, _ in jobs)
    H = min(int(math.floor(amax / D)) + sum(int(math.ceil(r / D)) for _, _, r, _ in jobs),
            int(math.ceil(horizon_s(data, fluid_factor) / D))) + 1
    col = Columns()
    rows: dict[int, dict[int, float]] = {}

    links = []        # (x col, y col, phi lo, phi hi, unit t)
    eqs = []
    for j, (a, W, R, _) in enumerate(jobs):
        q = int(math.floor(R / D))
        t0 = int(math.floor(a / D))
        xs_at = job_starts(col, rows, links, j, a, W, R, n, D, t0, H, compact, u_end=H)
        col((D * H + R - a) / n, 0.0, 1.0, True, j)        # P2.34: start at or after H Delta
        if compact and q >= 2:
            job_cumulative(col, rows, eqs, xs_at, j, W, D, q, t0, H - 1, H)
    return {**col.model(), "rows": rows,
            "links": links, "eqs": eqs, "H": H, "cap": G * D}


def area_highs(m: dict[str, Any], options: SolveOptions, mip: bool):
    """A highspy object holding the model ``m`` of ``build_area`` (its MIP, or its LP relaxation)."""
    import highspy
    import numpy as np
    h = direct_highs(options)
    nc = len(m["cost"])
    h.addVars(nc, np.array(m["lo"]), np.array(m["hi"]))
    idx = np.arange(nc, dtype=np.int32)
    h.changeColsCost(nc, idx, np.array(m["cost"]))
    if mip:
        ints = np.array([i for i, b in enumerate(m["integ"]) if b], dtype=np.int32)
        h.changeColsIntegrality(len(ints), ints, np.ones(len(ints), dtype=np.uint8))
    by_job: dict[int, list[int]] = {}
    for c, j in enumerate(m["col_job"]):
        if m["integ"][c]:
            by_job.setdefault(j, []).append(c)
    for j, ks in by_job.items():
        h.addRow(1.0, 1.0, len(ks), np.array(ks, dtype=np.int32), np.ones(len(ks)))
    for xc, yc, p_lo, p_hi, _ in m["links"]:     # p_lo x <= y <= p_hi x
        h.addRow(-highspy.kHighsInf, 0.0, 2, np.array([xc, yc], dtype=np.int32), np.array([p_lo, -1.0]))
        h.addRow(-highspy.kHighsInf, 0.0, 2, np.array([yc, xc], dtype=np.int32), np.array([1.0, -p_hi]))
    for cols_, coefs in m["eqs"]:
        h.addRow(0.0, 0.0, len(cols_), np.array(cols_, dtype=np.int32), np.array(coefs))
    for u in sorted(m["rows"]):
        r = m["rows"][u]
        h.addRow(-highspy.kHighsInf, float(m["cap"]), len(r), np.array(list(r), dtype=np.int32),
                 np.array(list(r.values())))
    return h


def area_lower_bound(inst: Instance, options: SolveOptions = SolveOptions(), mu: float = 0.0,
                     time_unit_s: float | None = None, max_units: int = 400, mip: bool = True,
                     compact: bool = True) -> dict[str, Any]:
    """Solve the area relaxation (module doc) with HiGHS; returns lower_bound (mean JCT + mu x the cost lower
    bound, s), lower_bound_jct_s, lower_bound_cost_usd, status, unit, times.  ``mip=False`` solves only the LP
    relaxation (its optimum is a valid, weaker bound)."""
    import highspy
    t_build = time.perf_counter()
    data = area_data(inst, relative=True)     # the mean-JCT bound: arrivals from the first one's unit
    if data is None:
        return {"lower_bound": None, "lower_bound_status": "infeasible",
                "lower_bound_note": "a job fits no region set"}
    D = float(time_unit_s) if time_unit_s is not None else pick_unit(data, max_units)
    m = build_area(data, D, compact)
    h = area_highs(m, options, mip)
    build_s = time.perf_counter() - t_build
    t0 = time.perf_counter()
    run_interruptible(h.run, h.cancelSolve)
    solve_s = time.perf_counter() - t0
    st = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    if mip:
        bound = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else None
    else:
        bound = float(info.objective_function_value) if st == S.kOptimal else None
    if st == S.kOptimal:
        status = "optimal"
    elif st == S.kInfeasible:
        status, bound = "infeasible", math.inf
    else:
        status = "feasible" if info.primal_solution_status == 2 else "time_limit"
    cost_lb = math.fsum(c for _, _, _, c in data["jobs"])
    order = None
    if status in ("optimal", "feasible"):         # the jobs by their (mean) relaxed start: a list order to try
        xv = h.getSolution().col_value
        st = [0.0] * len(data["jobs"])
        for xc, yc, _, _, t in m["links"]:
            st[m["col_job"][xc]] += D * t * xv[xc] + xv[yc]
        order = sorted(range(len(st)), key=lambda j: (st[j], j))
    return {"lower_bound": None if bound is None else bound + mu * cost_lb, "lower_bound_jct_s": bound,
            "lower_bound_cost_usd": cost_lb, "lower_bound_time_unit_s": D, "lower_bound_status": status,
            "lower_bound_build_s": build_s, "lower_bound_solve_s": solve_s,
            "lower_bound_nodes": int(info.mip_node_count) if mip else 0, "lower_bound_columns": len(m["cost"]),
            "relaxed_order": order,
            "lower_bound_objective_s": float(info.objective_function_value)
            if status in ("optimal", "feasible") else None}
