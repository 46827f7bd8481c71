"""The area relaxation (``p2.area``, P2.30-P2.34) with a START WINDOW per job, for traces: job j may start in
the units [t0_j, t0_j + w) of its arrival's unit t0_j, or take one late column, "start at or after
Delta (t0_j + w)", that costs Delta (t0_j + w) + R_j - a_j and holds no capacity.

Validity: the late column is P2.34 per job (``p2.area``'s proof): a schedule whose job j starts at
s_j >= Delta (t0_j + w) maps to it with an objective term <= s_j + R_j - a_j and less capacity used (none), and
dropping capacity only relaxes; a start inside the window maps as in ``p2.area``.  So the optimum of this model
(its LP, and the packing rows of ``p2.lower`` added to it) is <= the continuous P2 optimum, and <= the same model
without windows on the same unit (it is a relaxation of it).

Why: on a trace the global horizon of ``p2.area`` (the last arrival plus twice the fluid makespan plus the longest
run: about 3.5 weeks for a week's trace) gives every job a start column in every unit to the horizon's end;
jobs that wait at most a few days in any schedule worth having need columns only for those days.  The LP shrinks
by about the horizon over the window, so a finer unit solves in the same time.
"""
from __future__ import annotations

import math
from typing import Any

from .area import Columns, horizon_s, job_cumulative, job_starts


def build_window_area(data: dict[str, Any], D: float, window_s: float, fluid_factor: float = 2.0,
                      run_factor: float = 0.0) -> dict:
    """``p2.area.build_area``'s model (``compact``) with each job's start columns limited to the ``window_s`` after
    its arrival's unit (and ``run_factor`` x its run time R_j more) and a late column (module doc); the same keys, read by ``p2.area.area_highs`` and
    ``p2.lower.add_packing_rows``."""
    G, jobs = data["G"], data["jobs"]
    n = len(jobs)
    H = int(math.ceil(horizon_s(data, fluid_factor) / D)) + 1
    w = max(int(math.ceil(window_s / D)), 1)
    col = Columns()
    rows: dict[int, dict[int, float]] = {}

    links, eqs, late = [], [], {}
    for j, (a, W, R, _) in enumerate(jobs):
        q = int(math.floor(R / D))
        t0 = int(math.floor(a / D))
        T = min(t0 + w + int(math.ceil(run_factor * R / D)), H)       # the late column: start at or after D T
        xs_at = job_starts(col, rows, links, j, a, W, R, n, D, t0, T)
        late[col((D * T + R - a) / n, 0.0, 1.0, True, j)] = D * T        # late: no capacity
        if q >= 2:       # full units t < u < t + q: W D (z_{u-1} - z_{u-q}), z_v = sum_{t <= v} x_t (p2.area)
            job_cumulative(col, rows, eqs, xs_at, j, W, D, q, t0, T, T - 1 + q)
    return {**col.model(), "rows": rows,
            "links": links, "eqs": eqs, "H": H, "cap": G * D, "late": late}


def window_packing_lp(inst, D: float, window_s: float, options, fluid_factor: float = 2.0,
                      run_factor: float = 0.0) -> dict[str, Any]:
    """The packing relaxation's LP (``p2.lower``, P2.35-P2.38) on the windowed area model (module doc), unit
    ``D``: lower_bound_jct_s (the LP optimum; None unless optimal), build and solve seconds, columns."""
    import time

    import highspy

    from ...solvers.base import run_interruptible
    from .area import area_data, area_highs
    from .lower import add_packing_rows, size_classes
    t0 = time.perf_counter()
    data = area_data(inst, relative=True)
    if data is None:
        return {"lower_bound_jct_s": None, "lower_bound_status": "infeasible"}
    of_job, cls_w, pats, _ = size_classes(data)
    m = build_window_area(data, D, window_s, fluid_factor, run_factor)
    h = area_highs(m, options, False)
    add_packing_rows(h, m, data, D, of_job, len(cls_w), pats)
    build_s = time.perf_counter() - t0
    run_interruptible(h.run, h.cancelSolve)
    ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    order = None
    if ok:            # the jobs by their mean relaxed start (a late column counts at its start): a list order
        xv = h.getSolution().col_value
        st = [0.0] * len(data["jobs"])
        for xc, yc, _, _, t in m["links"]:
            st[m["col_job"][xc]] += D * t * xv[xc] + xv[yc]
        for c in m["late"]:
            st[m["col_job"][c]] += m["late"][c] * xv[c]
        order = sorted(range(len(st)), key=lambda j: (st[j], j))
    return {"relaxed_order": order, "lower_bound_jct_s": float(h.getInfo().objective_function_value) if ok else None,
            "lower_bound_status": "optimal" if ok else "time_limit", "lower_bound_time_unit_s": D,
            "window_s": window_s, "build_s": build_s, "solve_s": time.perf_counter() - t0 - build_s,
            "columns": h.getNumCol()}
