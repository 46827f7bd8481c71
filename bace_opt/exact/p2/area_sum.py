"""Lower bounds of the weighted sum, mean JCT + mu x cost, and of the cost at a given mean JCT, that price the
area relaxation's GPU-seconds region by region (models/schedule.md section 8.5, P2.39-P2.40).

The separable bound (the area relaxation's mean JCT bound plus mu x every job at its cheapest rate) is valid but
loose when the cheap regions cannot hold every job at once: the jobs that finish early pay more.  Here the
GPU-seconds the pool holds in unit tau (the left side of P2.32) are split among the regions, e_r,tau >= 0,
at most G_r Delta each, and priced at the region's lowest rate in the unit kappa_r,tau (GPU power x PUE x
lowest price in [Delta tau, Delta (tau + 1)), per GPU-second); the mean JCT and the cost then share one optimum:

    (P2.39)  sum_j W_j overlap_j(tau) - sum_r e_r,tau <= 0,   0 <= e_r,tau <= G_r Delta   (every unit tau < H)
             min  sum_j JCT_j / n + mu (sum_r,tau kappa_r,tau e_r,tau + sum_j tail_j)

tail_j: the part of a run past the last capacitated unit H, at the lowest rate of any region, written on the
starts whose whole run-range lies past H (elsewhere 0, which only lowers the bound); a start at or after H (P2.34)
pays the job's cheapest-rate cost bound.

With a cap X on the mean JCT instead of the weight mu:

    (P2.40)  P2.39's rows, sum_j JCT_j / n <= X,   min  sum_r,tau kappa_r,tau e_r,tau + sum_j tail_j

bounds the cost of every schedule whose mean JCT is at most X: a point under the JCT-cost Pareto front.  A
policy's cost is then measured against the least cost any schedule as fast as it could have (X = its own mean
JCT), not against every job at its cheapest rate (which only a schedule that waits for the cheap GPUs attains).

Validity: take any schedule and truncate every run to R_j as in P2.30-P2.34.  The truncated runs' GPU-seconds
in unit tau are a split over the regions that hold them, at most G_r Delta in region r; set e_r,tau to that
split.  The cost of a run's GPU-seconds in region r and unit tau is at least kappa_r,tau times them (the true
run is at least as long, the price at least the unit's lowest, egress >= 0, and eligibility restrictions only
remove splits), so the objective is at most the schedule's mean JCT + mu cost (P2.40: the truncated mean JCT
is at most the true one, so a schedule within the cap maps into the cap).  The bound is HiGHS' proven one (the MIP's dual bound,
the LP's optimum).
"""
from __future__ import annotations

import math
import time
from typing import Any

from ... import formulas as F
from ...instance import Instance
from ...solvers.base import SolveOptions, run_interruptible
from .area import area_data, area_highs, build_area, pick_unit
from .lower import add_packing_rows, size_classes
from .relax import lowest_price


def region_rates(inst: Instance, t0: float | None = None, t1: float | None = None) -> list[float]:
    """kappa_r: USD per GPU-second (GPU power x PUE x price) at each region's lowest price, over all time or
    over [t0, t1)."""
    out = []
    curves = F.price_curves(inst)
    for r in inst.regions:
        if t0 is None:
            p = lowest_price(inst, r.name)
        else:
            c = curves[r.name]
            p = min([c.at(t0)] + [c.at(t) for t in c.change_times(t0, t1)])
        out.append(inst.gpu_types[r.gpu_type].power_w * r.pue / 1000.0 * p / 3600.0)
    return out


def sum_model(inst: Instance, data: dict[str, Any], D: float, fluid_factor: float = 2.0) -> dict[str, Any]:
    """The area relaxation's columns and rows (``build_area``) with the region columns e_r,tau of P2.39:
    jct (each column's mean-JCT coefficient, P2.33), usd (its cost coefficient), lo, hi, integ, col_job (-1
    for e), rows {unit: {column: coef}} (each <= cap = 0), eqs (= 0), links, area (``build_area``'s model,
    whose columns keep their indices here)."""
    m = build_area(data, D, True, fluid_factor)
    jobs, H = data["jobs"], m["H"]
    jct, lo, hi, integ = list(m["cost"]), list(m["lo"]), list(m["hi"]), list(m["integ"])
    col_job = list(m["col_job"])
    usd = [0.0] * len(jct)
    kmin = min(region_rates(inst))
    linked = set()
    for xc, yc, _, _, t in m["links"]:        # tail past H at the cheapest rate, where the whole range is past
        linked.add(xc)
        _, W, R, _ = jobs[m["col_job"][xc]]
        if D * t + R >= D * H:
            usd[xc] += kmin * W * (D * t + R - D * H)
            usd[yc] += kmin * W
    for c, j in enumerate(m["col_job"]):      # P2.34's start at or after H: the job's cheapest-rate bound
        if integ[c] and c not in linked:
            usd[c] += jobs[j][3]
    rows = {}
    for u, row in m["rows"].items():
        kappa = region_rates(inst, D * u, D * (u + 1))
        row = dict(row)
        for r, reg in enumerate(inst.regions):
            jct.append(0.0)
            usd.append(kappa[r])
            lo.append(0.0)
            hi.append(reg.gpus * D)
            integ.append(False)
            col_job.append(-1)
            row[len(jct) - 1] = -1.0
        rows[u] = row
    return {"jct": jct, "usd": usd, "lo": lo, "hi": hi, "integ": integ, "col_job": col_job, "rows": rows,
            "eqs": m["eqs"], "links": m["links"], "H": H, "cap": 0.0, "area": m}


def sum_lower_bound(inst: Instance, options: SolveOptions = SolveOptions(), mu: float = 0.0,
                    time_unit_s: float | None = None, max_units: int = 400, mip: bool = False,
                    jct_cap_s: float | None = None, packing: bool = False,
                    fluid_factor: float = 2.0) -> dict[str, Any]:
    """Solve P2.39 (module doc) with HiGHS; returns lower_bound (of mean JCT + mu x cost, s), its status, the
    time unit and the times.  ``mip``: the starts integral (its dual bound), else the LP (its optimum).

    ``jct_cap_s`` (P2.40): minimise the cost alone subject to the relaxation's mean JCT <= ``jct_cap_s``;
    lower_bound is then a cost (USD) below that of every schedule whose mean JCT is at most ``jct_cap_s``
    (a point under the JCT-cost Pareto front), and status "infeasible" means no schedule is that fast.

    ``packing``: add the packing relaxation's rows (``p2.lower``, P2.35-P2.38: each unit's time shared
    among packings of whole jobs); both hold for the same mapped schedule, so together they are valid.
    ``fluid_factor``: the horizon's (``p2.area.horizon_s``; any is valid)."""
    import highspy
    import numpy as np
    t0 = time.perf_counter()
    data = area_data(inst)
    if data is None:
        return {"lower_bound": None, "lower_bound_status": "infeasible",
                "lower_bound_note": "a job fits no region set"}
    D = float(time_unit_s) if time_unit_s is not None else pick_unit(data, max_units, fluid_factor)
    m = sum_model(inst, data, D, fluid_factor)
    jct, usd = np.array(m["jct"]), np.array(m["usd"])
    h = area_highs(dict(m, cost=usd if jct_cap_s is not None else jct + mu * usd), options, mip)
    if jct_cap_s is not None:                 # P2.40: the cost alone, the mean JCT capped
        nz = np.flatnonzero(jct).astype(np.int32)
        h.addRow(-highspy.kHighsInf, float(jct_cap_s), len(nz), nz, jct[nz])
        if not mip:                           # with the dense cap row, interior point (and crossover): ~10x
            h.setOptionValue("solver", "ipm")  # faster than simplex on the paper instances at 8-24 jobs
    if packing:
        of_job, cls_w, pats, _ = size_classes(data)
        add_packing_rows(h, m["area"], data, D, of_job, len(cls_w), pats)
    build_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    run_interruptible(h.run, h.cancelSolve)
    st, info = h.getModelStatus(), h.getInfo()
    S = highspy.HighsModelStatus
    if mip:
        bound = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else None
    else:
        bound = float(info.objective_function_value) if st == S.kOptimal else None
    status = ("optimal" if st == S.kOptimal else "infeasible" if st == S.kInfeasible
              else "feasible" if info.primal_solution_status == 2 else "time_limit")
    if status == "infeasible":
        bound = math.inf
    return {"lower_bound": bound, "lower_bound_status": status, "lower_bound_time_unit_s": D,
            "lower_bound_build_s": build_s, "lower_bound_solve_s": time.perf_counter() - t1,
            "lower_bound_columns": h.getNumCol()}
