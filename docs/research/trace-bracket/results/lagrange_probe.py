# A probe (not shipped): see ../README.md, "What failed". Run: PYTHONPATH=<repo> python lagrange_probe.py tr2.json 21600 60 16436
"""A Lagrangian lower bound of the mean JCT at trace scale: the packing relaxation (``exact.p2.lower``,
P2.35-P2.38) with its capacity rows priced instead of enforced, on a time grid that needs no LP and so can be
fine (and non-uniform: fine only where the multipliers are positive, i.e. where the pool is congested).

**The bound.**  Grid g_0 < g_1 < ... < g_U (any points; unit u = [g_u, g_{u+1}), length D_u; no capacity is
enforced outside [g_0, g_U), which only relaxes).  Job j: arrival a_j, GPUs W_j, shortest run R_j (every placement,
``exact.p2.area.area_data``), size class k(j) (``exact.p2.lower.size_classes``: sizes rounded down, maximal
packings p with n_pk jobs of class k).  For multipliers pi_u >= 0 (per GPU-second in unit u) and mu_uk >= 0 (per
second that a class-k job runs in u):

    L(pi, mu) = sum_j min_{s >= a_j} [ (s + R_j - a_j) / n + sum_u (W_j pi_u + mu_{u,k(j)}) ov_j(s, u) ]
                - sum_u pi_u G D_u - sum_u D_u max_p sum_k n_pk mu_uk

with ov_j(s, u) the overlap of [s, s + R_j) with unit u.  Validity (weak duality): take any schedule, truncate
each run to [s_j, s_j + R_j) (models/schedule.md 8.3, as ``exact.p2.area``): per unit, sum_j W_j ov_j(u) <= G D_u
and, with the packings' lambda of ``exact.p2.lower``'s proof, sum_{j in k} ov_j(u) <= sum_p n_pk lambda_up with
sum_p lambda_up <= D_u; so each priced term is <= 0 and L <= (1/n) sum_j (s_j + R_j - a_j) <= the schedule's mean
JCT, for EVERY pi, mu >= 0 (no solve needs to converge: each iterate is a bound).  The inner minimum is exact: the
bracket is piecewise linear in s with breaks where s or s + R_j meets a grid point, so it is taken over s = a_j and
those points (and s = max(a_j, g_U), beyond which it only grows).

**The search** (``lagrangian_bound``): projected subgradient steps (Polyak's step toward a target above the best
L, the step factor halved after ``PATIENCE`` steps without a better L) on a coarse uniform grid, then the grid
refined: every unit with a positive multiplier split in two (the others kept), the multipliers copied to both
halves, which leaves L unchanged (the same prices over the same time), then more steps; until the time is spent or
the finest unit is ``MIN_UNIT_S``.  The best L over all iterates is the bound.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from bace_opt.instance import Instance

#: the first grid's unit (s), and the finest unit a refinement makes
FIRST_UNIT_S = 21600.0
MIN_UNIT_S = 150.0
#: subgradient steps: initial step factor, steps without a better L before it is halved, the factor's floor
#: (then the grid is refined), and the most steps on one grid
THETA0 = 1.0
PATIENCE = 8
THETA_MIN = 0.02
MAX_STEPS = 400
#: Polyak's target: the best L plus this share of the way to the best schedule's mean JCT
TARGET_FRAC = 0.2
#: the volume algorithm's weight of the newest subgradient in the running average
ALPHA = 0.1


def lagrange_data(inst: Instance) -> dict[str, Any] | None:
    """Arrays of the bound (module doc): a, W, R, cls (per job), n_pk (packings x classes), G; None when a job
    fits nowhere."""
    from bace_opt.exact.p2.area import area_data
    from bace_opt.exact.p2.lower import size_classes
    data = area_data(inst, relative=True)
    if data is None:
        return None
    of_job, cls_w, pats, _ = size_classes(data)
    jobs = data["jobs"]
    return {"a": np.array([j[0] for j in jobs], float), "W": np.array([j[1] for j in jobs], float),
            "R": np.array([j[2] for j in jobs], float), "cls": np.array(of_job, int),
            "pats": np.array(pats, float).reshape(len(pats), len(cls_w)), "G": float(data["G"]),
            "K": len(cls_w)}


def dual_value(d: dict, grid: np.ndarray, pi: np.ndarray, mu: np.ndarray):
    """(L, starts, subgradient of pi, subgradient of mu) at the multipliers (module doc)."""
    a, W, R, cls = d["a"], d["W"], d["R"], d["cls"]
    n = len(a)
    D = np.diff(grid)
    # cumulative price of one second of job class k with W GPUs: W * P(t) + Mk(t), at the grid points
    P = np.concatenate(([0.0], np.cumsum(pi * D)))
    Mk = np.concatenate((np.zeros((1, d["K"])), np.cumsum(mu * D[:, None], axis=0)))
    starts = np.empty(n)
    val = 0.0
    gU = grid[-1]
    for j in range(n):
        aj, rj = a[j], R[j]
        cum = W[j] * P + Mk[:, cls[j]]
        s = np.concatenate(([aj, max(aj, gU)], grid[grid > aj], grid[grid - rj > aj] - rj))
        f = (s - aj) / n + np.interp(s + rj, grid, cum) - np.interp(s, grid, cum)
        i = int(np.argmin(f))
        starts[j] = s[i]
        val += f[i] + rj / n
    pk = d["pats"] @ mu.T                           # (P, U): each packing's price per second
    best_p = np.argmax(pk, axis=0)
    val -= float(np.sum(pi * d["G"] * D)) + float(np.sum(D * np.maximum(pk[best_p, np.arange(len(D))], 0.0)))
    g_pi, g_mu = subgradient(d, grid, starts, np.arange(n), np.ones(n), best_p)
    return val, starts, g_pi, g_mu


def subgradient(d: dict, grid, starts, job, weight, best_p, share=None):
    """The subgradient of L at runs of ``job[i]`` from ``starts[i]`` counted ``weight[i]`` times (a convex
    combination of each job's starts: an LP solution), the packing ``best_p[u]`` in each unit, or (``share``:
    units x packings, each row summing to 1) a combination of the packings (the LP's lambda / Delta)."""
    R, W, cls = d["R"][job], d["W"][job], d["cls"][job]
    D = np.diff(grid)
    ov = np.clip(grid[None, :] - starts[:, None], 0.0, R[:, None])     # seconds of each run before each point
    ovu = np.diff(ov, axis=1) * weight[:, None]                          # ... in each unit
    g_pi = (W @ ovu) - d["G"] * D
    g_mu = np.zeros((len(D), d["K"]))
    for k in range(d["K"]):
        g_mu[:, k] = ovu[cls == k].sum(axis=0)
    g_mu -= D[:, None] * (d["pats"][best_p] if share is None else share @ d["pats"])
    return g_pi, g_mu


def ascend(d: dict, grid, pi, mu, best: float, target: float, t_end: float, steps: int = MAX_STEPS,
           primal=None):
    """The volume algorithm (Barahona and Anbil, 2000): steps from the best multipliers found along a running
    average of the subgradients (``ALPHA`` of the newest; the average approximates the relaxation's fractional
    solution, where one subgradient at a degenerate point is a poor direction), a step kept only when L rises,
    the step factor halved after ``PATIENCE`` steps without a better L; until ``t_end``, ``steps`` or the factor's
    floor.  ``primal``: the LP solution the multipliers came from (``packing_lp``), whose subgradient starts the
    average.  Returns (best L, its pi, its mu, steps)."""
    theta, since, k = THETA0, 0, 0
    v, _, gp, gm = dual_value(d, grid, pi, mu)
    k += 1
    if v > best:
        best = v
    bpi, bmu = pi.copy(), mu.copy()
    ap, am = gp, gm
    if primal is not None:              # the LP's solution: (starts, job, weight, share) -> its subgradient
        ap, am = subgradient(d, grid, *primal[:3], None, primal[3])
    while k < steps and time.perf_counter() < t_end:
        dp = np.where((bpi <= 0) & (ap < 0), 0.0, ap)      # projected: a multiplier at 0 cannot fall
        dm = np.where((bmu <= 0) & (am < 0), 0.0, am)
        norm = float(np.sum(dp * dp) + np.sum(dm * dm))
        if norm <= 0:
            break
        step = theta * max(target - best, 1e-9 * abs(target)) / norm
        pi = np.maximum(bpi + step * dp, 0.0)
        mu = np.maximum(bmu + step * dm, 0.0)
        v, _, gp, gm = dual_value(d, grid, pi, mu)
        k += 1
        ap, am = ALPHA * gp + (1 - ALPHA) * ap, ALPHA * gm + (1 - ALPHA) * am
        if v > best + 1e-9 * abs(best):
            best, bpi, bmu, since = v, pi, mu, 0
        else:
            since += 1
            if since >= PATIENCE:
                theta, since = theta / 2.0, 0
                if theta < THETA_MIN:
                    break
    return best, bpi, bmu, k


def refine(grid, pi, mu, min_unit: float, parents: bool = False):
    """Every unit with a positive multiplier (and longer than 2 ``min_unit``) split in two halves with its
    multipliers (L unchanged, module doc)."""
    D = np.diff(grid)
    split = ((pi > 0) | (mu > 0).any(axis=1)) & (D >= 2 * min_unit)
    if not split.any():
        return None
    mids = (grid[:-1] + grid[1:])[split] / 2.0
    g2 = np.sort(np.concatenate((grid, mids)))
    idx = np.searchsorted(grid, g2[:-1], side="right") - 1          # each new unit's parent
    return (g2, pi[idx], mu[idx], idx) if parents else (g2, pi[idx], mu[idx])


def packing_lp(inst: Instance, options, time_unit_s: float | None = None, max_units: int = 100,
               fluid_factor: float = 2.0) -> dict[str, Any]:
    """The packing relaxation's LP (``exact.p2.lower.packing_lower_bound`` with ``mip=False``: the same model,
    built by the same functions) and, when it is solved, its optimal multipliers for ``dual_value``: the grid of
    its units and pi, mu from the row duals of P2.32 and P2.38 (minus the HiGHS duals of <= rows, clipped at 0).
    Returns lower_bound_jct_s (None unless optimal), lower_bound_time_unit_s and, when solved, multipliers
    (grid, pi, mu)."""
    import highspy
    from bace_opt.exact.p2.area import area_data, area_highs, build_area, pick_unit
    from bace_opt.exact.p2.lower import add_packing_rows, size_classes
    from bace_opt.solvers.base import run_interruptible
    data = area_data(inst, relative=True)
    if data is None:
        return {"lower_bound_jct_s": None}
    D = float(time_unit_s) if time_unit_s is not None else pick_unit(data, max_units, fluid_factor)
    of_job, cls_w, pats, _ = size_classes(data)
    m = build_area(data, D, True, fluid_factor)
    h = area_highs(m, options, False)
    nrow0, ncol0 = h.getNumRow(), h.getNumCol()
    add_packing_rows(h, m, data, D, of_job, len(cls_w), pats)
    run_interruptible(h.run, h.cancelSolve)
    out: dict[str, Any] = {"lower_bound_jct_s": None, "lower_bound_time_unit_s": D}
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return out
    out["lower_bound_jct_s"] = float(h.getInfo().objective_function_value)
    dual = np.array(h.getSolution().row_dual)
    units = sorted(m["rows"])
    K = len(cls_w)
    area_rows = dual[nrow0 - len(units):nrow0]
    pack = dual[nrow0:].reshape(len(units), K + 1)[:, 1:]
    u0, u1 = units[0], units[-1]
    pi = np.zeros(u1 - u0 + 1)
    mu = np.zeros((u1 - u0 + 1, K))
    pi[np.array(units) - u0] = np.maximum(-area_rows, 0.0)
    mu[np.array(units) - u0] = np.maximum(-pack, 0.0)
    out["multipliers"] = (D * np.arange(u0, u1 + 2), pi, mu)
    xv = np.array(h.getSolution().col_value)
    lk = np.array([(xc, yc, t) for xc, yc, _, _, t in m["links"]], dtype=np.int64).reshape(-1, 3)
    x = xv[lk[:, 0]]
    keep = x > 1e-9
    lk, x = lk[keep], x[keep]
    starts = D * lk[:, 2] + xv[lk[:, 1]] / x           # y = phi x
    lam = np.zeros((u1 - u0 + 1, len(pats)))
    lam[np.array(units) - u0] = xv[ncol0:ncol0 + len(units) * len(pats)].reshape(len(units), len(pats))
    out["primal"] = (starts, np.array([m["col_job"][c] for c in lk[:, 0]], dtype=np.int64), x, lam / D)
    return out


def lagrangian_bound(inst: Instance, budget: float, target: float | None = None, start=None,
                     primal=None) -> dict[str, Any]:
    """The bound of the module doc within ``budget`` s.  ``target``: a mean JCT above the bound (the best
    schedule's, when known) for the step length; default 1.3 x the floor.  Returns lower_bound_jct_s (None when
    a job fits nowhere), levels [(units, finest unit s, L, steps, s)], seconds."""
    t0 = time.perf_counter()
    d = lagrange_data(inst)
    if d is None:
        return {"lower_bound_jct_s": None, "levels": [], "seconds": 0.0}
    n = len(d["a"])
    floor = float(np.sum(d["R"])) / n
    end = float(np.max(d["a"] + d["R"])) + float(np.sum(d["W"] * d["R"])) / d["G"]
    if start is not None:
        grid, pi, mu = start
        if primal is not None:      # the LP's own grid is solved: refine it first, the LP's solution the direction
            g2, pi, mu, idx = refine(grid, pi, mu, MIN_UNIT_S, True)
            primal = primal[:3] + (primal[3][idx],)
            grid = g2
    else:
        u = FIRST_UNIT_S
        g0 = math.floor(float(np.min(d["a"])) / u) * u
        grid = g0 + u * np.arange(int(math.ceil((end - g0) / u)) + 1)
        pi = np.zeros(len(grid) - 1)
        mu = np.zeros((len(grid) - 1, d["K"]))
    best, levels = floor, []
    while True:
        tl = time.perf_counter()
        ub = target if target is not None and target > best else 1.3 * max(best, floor)
        tgt = best + TARGET_FRAC * (ub - best)
        best, pi, mu, k = ascend(d, grid, pi, mu, best, tgt, t0 + budget, primal=primal)
        primal = None
        levels.append({"units": len(grid) - 1, "finest_unit_s": float(np.min(np.diff(grid))),
                       "lower_bound_jct_s": best, "steps": k, "seconds": round(time.perf_counter() - tl, 2)})
        if time.perf_counter() >= t0 + budget:
            break
        r = refine(grid, pi, mu, MIN_UNIT_S)
        if r is None:
            break
        grid, pi, mu = r
    return {"lower_bound_jct_s": best, "levels": levels, "seconds": round(time.perf_counter() - t0, 2)}


if __name__ == "__main__":      # python lagrange_probe.py tr2.json 21600 60 16436: the LP's duals, then refinement
    import sys

    import bace_opt as bo
    from bace_opt.solvers.base import SolveOptions
    inst = bo.load_instance(sys.argv[1])
    lp = packing_lp(inst, SolveOptions(time_limit_s=300), float(sys.argv[2]))
    print("LP", lp["lower_bound_jct_s"], "L at its duals", dual_value(lagrange_data(inst), *lp["multipliers"])[0])
    res = lagrangian_bound(inst, float(sys.argv[3]), float(sys.argv[4]), start=lp["multipliers"],
                           primal=lp["primal"])
    for lv in res["levels"]:
        print(lv)
