"""The time-indexed relaxation of P2 by column generation, with the packing rows (models/schedule.md 8.6,
P2.41-P2.47): a lower bound of the mean JCT of the continuous-time problem over ALL placements, stalled or not.

Columns are (job, mode, start) with the start s on a finite set of breakpoints, and the GPUs of every region
are counted per unit of Delta seconds, as GPU-seconds (no rounding of starts or run times):

* modes (``cg_modes``, P2.41): "one region r" (n_r = S_j stages there, R = N (m + S - 1) t_j / f_r exactly,
  no hop, so no stall) or "several regions, slowest speed f" (stages n_r >= 0 on the eligible regions with
  f_r >= f, n_r <= floor(G_r / g_j), sum_r n_r = S_j; R >= N (m + S - 1) t_j / f + 2 N l_min / 1000 with
  l_min the least latency of ANY link, so that a hop reserving less than b_j, which only slows the pipe,
  is covered too).  The split n is chosen by the pricing, not enumerated;
* starts (``breakpoints``, P2.42): a_j, and every s > a_j below H Delta where s or s + R crosses a unit
  boundary.  Between two neighbouring breakpoints the time [s, s + R) spends in every unit is linear in s, and
  so is the objective: a start anywhere is a convex combination of its two neighbours;
* rows (P2.43-P2.45): per job sum x = 1; per region r and unit u < H: sum g n_r (time in u) x <= G_r Delta;
  and the packing rows of P2.37-P2.38 (per unit, the time of each maximal packing lambda_up, sum_p
  lambda_up <= Delta, per class k: sum_{j in k} (time in u) x <= sum_p n_pk lambda_up);
* a tail column per job (P2.46, as P2.34): a start at or after H Delta, no rows, completion H Delta + R_min;
* objective (s + R - a_j) / n: the exact mean JCT of the runs truncated to their mode's run time.

Link rows are left out: a schedule that stalls (cr-lcf, the no-pathfinder ablation reserve less than b_j)
could beat them, and on the paper family they never bind.

Every column's reduced cost is priced EXACTLY over the complete column set (every mode, every breakpoint, the
best split of the several-region modes by a greedy fill, which is exact for one equality and box bounds), so
``z_RMP + sum_j min rc_j`` (the Lagrangian value, P2.47) is a valid lower bound at every iteration: it is
computed here from the master's duals projected onto their sign, whatever the LP solver's tolerances (and
whatever the master holds: any v >= 0 gives a valid value, so the master may leave out tiny overlaps).

In the master the rows count time in units of Delta (mu_up = lambda_up / Delta), which keeps HiGHS well scaled;
it is re-solved by the primal simplex from the last basis.  Measured (docs/research/p2-scale/log.md round 9): on
the paper family (one GPU type) the bound is the packing LP's plus seconds (0.01-0.02 %), so it is not part of
``p2.lower.recipe_lower_bound``; it is strictly higher where GPU speeds differ.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...instance import Instance
from ...solvers.base import SolveOptions
from ...solvers.highs import direct_highs, run_highs
from .area import area_data, horizon_s
from .lower import size_classes

#: a column enters the master when its reduced cost is below -RC_TOL (s of mean JCT)
RC_TOL = 1e-6
#: the master leaves out overlaps below this fraction of a unit (a relaxation of it; the pricing keeps them)
MIN_COEF = 1e-7
#: units tried for the grid: the smallest that gives at most ``max_units`` units
UNITS_S = (300.0, 600.0, 900.0, 1200.0, 1800.0, 2700.0, 3600.0, 5400.0, 7200.0, 10800.0, 14400.0, 21600.0)
#: times count from the first arrival rounded down to a multiple of this (a multiple of every unit)
SHIFT_S = 43200.0


@dataclass
class Mode:
    """A mode of a job (P2.41): the regions it may use, the most stages each can hold, a run-time lower bound."""
    regions: np.ndarray          # region indices
    caps: np.ndarray             # max stages per region (same order)
    run_s: float
    single: bool


@dataclass
class CgJob:
    arrival_s: float
    g: int
    stages: int
    cls: int
    modes: list[Mode]
    starts: list[np.ndarray]     # breakpoints per mode (P2.42)
    run_min_s: float


@dataclass
class CgData:
    n: int
    D: float
    H: int
    G: np.ndarray                # GPUs per region
    jobs: list[CgJob]
    cls_w: list[int]
    pats: list[tuple]
    step: int
    stats: dict[str, Any] = field(default_factory=dict)


def cg_modes(inst: Instance, job, reg_index: dict[str, int]) -> list[Mode]:
    """The modes of P2.41 (empty when the job fits nowhere)."""
    speed = inst.speed
    g, S = job.gpus_per_stage, job.stages
    elig = [r for r in inst.eligible_regions(job) if inst.region(r).gpus >= g]
    cap = {r: min(S, inst.region(r).gpus // g) for r in elig}
    work = job.iterations * (job.microbatches + S - 1) * job.stage_time_s
    modes = [Mode(np.array([reg_index[r]]), np.array([S]), work / speed[r], True) for r in elig if cap[r] >= S]
    lmin = min((lk.latency_ms for lk in inst.links), default=0.0)
    for f in sorted({speed[r] for r in elig}):
        regs = [r for r in elig if speed[r] >= f]
        if len(regs) < 2 or sum(cap[r] for r in regs) < S:
            continue
        modes.append(Mode(np.array([reg_index[r] for r in regs]), np.array([cap[r] for r in regs]),
                          work / f + 2.0 * job.iterations * lmin / 1000.0, False))
    return modes


def breakpoints(a: float, R: float, D: float, H: int) -> np.ndarray:
    """a, and every start in (a, H D) where s or s + R is a multiple of D (P2.42), sorted."""
    rho = R - D * math.floor(R / D)
    t = np.arange(int(math.floor(a / D)), H + 1, dtype=float)
    s = np.concatenate([D * t, D * t + (D - rho), [a]])
    s = s[(s >= a) & (s < H * D)]
    return np.unique(s)


def pick_cg_unit(horizon: float, n: int, max_units: int) -> float:
    for D in UNITS_S:
        if horizon / D + n + 2 <= max_units:
            return D
    return UNITS_S[-1]


def cg_data(inst: Instance, time_unit_s: float | None = None, max_units: int = 400,
            fluid_factor: float = 1.0) -> CgData | None:
    """Modes, breakpoints, size classes and packings; None when a job fits nowhere.  Times count from the first
    arrival rounded down to a multiple of ``SHIFT_S`` (the mean JCT does not change).  The horizon H Delta is ``p2.area.horizon_s`` (any is valid:
    P2.46)."""
    ad = area_data(inst)
    if ad is None:
        return None
    # mean JCT does not change when every arrival moves by the same time: count time from the first arrival
    # rounded down to a multiple of SHIFT_S (every unit divides it, so the grid is the one from 0, shifted)
    a0 = min(a for a, _, _, _ in ad["jobs"])
    a0 = SHIFT_S * math.floor(a0 / SHIFT_S)
    ad = {"G": ad["G"], "jobs": [(a - a0, W, R, c) for a, W, R, c in ad["jobs"]]}
    hz = horizon_s(ad, fluid_factor)
    D = float(time_unit_s) if time_unit_s is not None else pick_cg_unit(hz, len(inst.jobs), max_units)
    H = int(math.ceil(hz / D)) + 1
    reg_index = {r.name: i for i, r in enumerate(inst.regions)}
    of_job, cls_w, pats, step = size_classes(ad)
    jobs = []
    for j, job in enumerate(inst.jobs):
        modes = cg_modes(inst, job, reg_index)
        if not modes:
            return None
        arr = job.arrival_s - a0
        jobs.append(CgJob(arr, job.gpus_per_stage, job.stages, of_job[j], modes,
                          [breakpoints(arr, m.run_s, D, H) for m in modes],
                          min(m.run_s for m in modes)))
    G = np.array([float(r.gpus) for r in inst.regions])
    return CgData(len(jobs), D, H, G, jobs, cls_w, pats, step)


def overlaps(s: float, R: float, D: float, H: int) -> tuple[np.ndarray, np.ndarray]:
    """(units u < H, seconds of [s, s + R) in each) with a positive overlap."""
    u0, u1 = int(math.floor(s / D)), min(int(math.floor((s + R) / D)), H - 1)
    if u0 >= H:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    u = np.arange(u0, u1 + 1)
    ov = np.minimum(s + R, D * (u + 1)) - np.maximum(s, D * u)
    keep = ov > 1e-9 * D
    return u[keep], ov[keep]


def integrals(rate: np.ndarray, D: float, x: np.ndarray) -> np.ndarray:
    """Integral from 0 to x of the piecewise-constant function equal to rate[..., u] on unit u (0 from unit H):
    rate has shape (..., H), x any shape; returns (..., *x.shape)."""
    H = rate.shape[-1]
    cum = np.concatenate([np.zeros(rate.shape[:-1] + (1,)), D * np.cumsum(rate, axis=-1)], axis=-1)
    u = np.clip(np.floor(x / D).astype(np.int64), 0, H)
    frac = np.where(u < H, x - D * u, 0.0)
    r_ext = np.concatenate([rate, np.zeros(rate.shape[:-1] + (1,))], axis=-1)
    return cum[..., u] + frac * r_ext[..., u]


@dataclass
class Duals:
    """The master's duals projected onto their sign: alpha per job (free), v >= 0 per <= row (minus HiGHS'
    dual) as arrays per region x unit, class x unit, unit."""
    alpha: np.ndarray
    reg: np.ndarray      # (regions, H)
    cls: np.ndarray      # (classes, H)
    sum: np.ndarray      # (H,)


def price_job(d: CgData, j: int, du: Duals, k_best: int = 5) -> tuple[float, list[tuple]]:
    """Exact pricing of job j (P2.47): the least value of objective + v . column over its complete column set
    (every mode, every breakpoint, the best split; and the tail column), and up to ``k_best`` columns
    (mode index, start, split) of least value, best first.  The reduced cost is that value minus alpha_j."""
    jb = d.jobs[j]
    best = (jb.arrival_s if jb.arrival_s > d.H * d.D else d.H * d.D) + jb.run_min_s - jb.arrival_s
    best /= d.n
    found: list[tuple] = []
    for mi, (m, s) in enumerate(zip(jb.modes, jb.starts)):
        if not len(s):
            continue
        e = s + m.run_s
        val = (e - jb.arrival_s) / d.n
        cls_rate = du.cls[jb.cls][None, :]
        val = val + (integrals(cls_rate, d.D, e) - integrals(cls_rate, d.D, s))[0]
        per = jb.g * (integrals(du.reg[m.regions], d.D, e) - integrals(du.reg[m.regions], d.D, s))  # (q, T)
        if m.single:
            val = val + jb.stages * per[0]
            splits = None
        else:
            order = np.argsort(per, axis=0, kind="stable")
            caps = m.caps[order]
            before = np.cumsum(caps, axis=0) - caps
            take = np.clip(jb.stages - before, 0, caps)
            val = val + np.sum(take * np.take_along_axis(per, order, axis=0), axis=0)
            splits = (order, take)
        idx = np.argsort(val, kind="stable")[:k_best]
        best = min(best, float(val[idx[0]]))
        for i in idx:
            if splits is None:
                n_r = (int(m.regions[0]),), (jb.stages,)
            else:
                o, tk = splits[0][:, i], splits[1][:, i]
                n_r = tuple(int(m.regions[o[q]]) for q in range(len(o)) if tk[q] > 0), \
                    tuple(int(tk[q]) for q in range(len(o)) if tk[q] > 0)
            found.append((float(val[i]), mi, float(s[i]), n_r))
    found.sort(key=lambda c: c[0])
    return best, found[:k_best]


class Master:
    """The restricted master LP of P2.43-P2.46 in highspy: every row, every packing column lambda_up and every
    tail column from the start; job columns added by ``add``."""

    def __init__(self, d: CgData, options: SolveOptions, lazy_packings: bool = False):
        import highspy
        self.d, self.h = d, direct_highs(options)
        h, n, H = self.h, d.n, d.H
        nr, nk = len(d.G), len(d.cls_w)
        self.reg0, self.cls0, self.sum0 = n, n + nr * H, n + (nr + nk) * H
        nrow = self.sum0 + H
        # rows in units of Delta (time in a unit as a fraction of it; mu_up = lambda_up / Delta): better scaled
        up = np.concatenate([np.ones(n), np.repeat(d.G, H), np.zeros(nk * H), np.ones(H)])
        lo = np.concatenate([np.ones(n), np.full(nrow - n, -highspy.kHighsInf)])
        h.addRows(nrow, lo, up, 0, np.zeros(nrow, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.b = up[n:]
        self.has_lambda = np.zeros((H, len(d.pats)), dtype=bool)
        self.n_lambda = 0
        if not lazy_packings:
            self.add_lambdas(np.ones_like(self.has_lambda))
        cols: list[tuple[float, list[int], list[float]]] = []
        for j, jb in enumerate(d.jobs):
            cols.append(((max(jb.arrival_s, H * d.D) + jb.run_min_s - jb.arrival_s) / n, [j], [1.0]))
        self.keys: set[tuple] = set()
        self.job_cols: list[tuple[int, int, float, tuple]] = []
        self._push(cols)

    def _push(self, cols: list[tuple[float, list[int], list[float]]]) -> None:
        starts = np.cumsum([0] + [len(c[1]) for c in cols[:-1]]).astype(np.int32)
        ix = np.array([i for c in cols for i in c[1]], dtype=np.int32)
        val = np.array([v for c in cols for v in c[2]], dtype=float)
        k = len(cols)
        self.h.addCols(k, np.array([c[0] for c in cols]), np.zeros(k), np.full(k, np.inf), len(ix), starts, ix, val)

    def add_lambdas(self, want: np.ndarray) -> int:
        """Add the packing columns lambda_up with want[u, p] true that are not in the master yet."""
        d, H, nk = self.d, self.d.H, len(self.d.cls_w)
        cols = []
        for u, p in zip(*np.nonzero(want & ~self.has_lambda)):
            pat = d.pats[p]
            ix = [self.sum0 + int(u)] + [self.cls0 + k * H + int(u) for k in range(nk) if pat[k]]
            cols.append((0.0, ix, [1.0] + [-float(pat[k]) for k in range(nk) if pat[k]]))
            self.has_lambda[u, p] = True
        if cols:
            self._push(cols)
        self.n_lambda += len(cols)
        return len(cols)

    def lambda_reduced_costs(self, du: Duals) -> np.ndarray:
        """(H, packings): v_u^sum - sum_k n_pk v_uk^cls, the reduced cost of mu_up = lambda_up / Delta."""
        return du.sum[:, None] - self.d.D * du.cls.T @ np.array(self.d.pats, dtype=float).T

    def add(self, new: list[tuple[int, tuple]]) -> int:
        """Add job columns (j, (value, mode, start, (regions, stages))); returns how many were new."""
        d, H = self.d, self.d.H
        cols = []
        for j, (_, mi, s, (regs, ns)) in new:
            key = (j, mi, s, regs, ns)
            if key in self.keys:
                continue
            self.keys.add(key)
            jb = d.jobs[j]
            R = jb.modes[mi].run_s
            u, ov = overlaps(s, R, d.D, H)
            keep = ov >= MIN_COEF * d.D         # dropping a tiny overlap from a <= row only relaxes the master
            u, ov = u[keep], ov[keep] / d.D
            ix, val = [j], [1.0]
            for r, c in zip(regs, ns):
                ix += list(self.reg0 + r * H + u)
                val += list(jb.g * c * ov)
            ix += list(self.cls0 + jb.cls * H + u)
            val += list(ov)
            cols.append(((s + R - jb.arrival_s) / d.n, ix, val))
            self.job_cols.append((j, mi, s, (regs, ns)))
        if cols:
            self._push(cols)
        return len(cols)

    def solve(self) -> bool:
        """Re-solve the master (primal simplex from the last basis); on a solver error once more from scratch
        with the dual simplex.  True when optimal."""
        import highspy
        h = self.h
        h.setOptionValue("simplex_strategy", 4)
        run_highs(h)
        if h.getModelStatus() not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
            h.clearSolver()
            h.setOptionValue("simplex_strategy", 1)
            run_highs(h)
        return h.getModelStatus() == highspy.HighsModelStatus.kOptimal

    def duals(self) -> Duals:
        """The duals as ``Duals``: alpha, and v >= 0 turned into prices per second of a region's GPU-stage or a
        class's run (the rows count time in units of Delta), and per sum row."""
        d, H = self.d, self.d.H
        y = np.asarray(self.h.getSolution().row_dual)
        v = np.maximum(-y[d.n:], 0.0)
        nr, nk = len(d.G), len(d.cls_w)
        return Duals(y[:d.n].copy(), v[:nr * H].reshape(nr, H) / d.D,
                     v[nr * H:(nr + nk) * H].reshape(nk, H) / d.D, v[(nr + nk) * H:])

    def lagrangian_rest(self, du: Duals) -> float:
        """-v . b plus the packing columns' part, min(0, their reduced cost) (mu_up <= 1 is implied by
        sum_p mu_up <= 1)."""
        d = self.d
        v = np.concatenate([d.D * du.reg.ravel(), d.D * du.cls.ravel(), du.sum])
        red = self.lambda_reduced_costs(du)
        return -math.fsum(v * self.b) + math.fsum(np.minimum(red, 0.0).ravel())


def cg_lower_bound(inst: Instance, options: SolveOptions = SolveOptions(), time_unit_s: float | None = None,
                   max_units: int = 400, k_best: int = 5, fluid_factor: float = 1.0, rel_gap: float = 1e-7,
                   max_iter: int | None = None, lazy_packings: bool = False,
                   keep_master: bool = False) -> dict[str, Any]:
    """Column generation on the relaxation of the module doc (HiGHS simplex, warm-started after each round of
    columns) within ``options.time_limit_s``.  Returns lower_bound_jct_s (the best Lagrangian value, P2.47:
    valid whenever it is set, converged or not), lower_bound_status ("optimal" when the master's value and
    the bound agree within ``rel_gap``, else "time_limit"), the master's value, the unit, iterations, columns
    and the history [(seconds, master value, Lagrangian value)]; with ``keep_master`` the ``Master`` too."""
    t0 = time.perf_counter()
    if not inst.jobs:
        return {"lower_bound_jct_s": 0.0, "lower_bound_status": "optimal", "iterations": 0, "history": []}
    d = cg_data(inst, time_unit_s, max_units, fluid_factor)
    if d is None:
        return {"lower_bound_jct_s": None, "lower_bound_status": "infeasible",
                "lower_bound_note": "a job fits no region set"}
    limit = math.inf if options.time_limit_s is None else float(options.time_limit_s)
    m = Master(d, options, lazy_packings)
    m.h.setOptionValue("solver", "simplex")           # primal (``Master.solve``): the basis stays primal feasible
    build_s = time.perf_counter() - t0
    best, z, status, it, hist, lp_s, note, spx = -math.inf, None, "time_limit", 0, [], 0.0, None, []
    while max_iter is None or it < max_iter:
        left = limit - (time.perf_counter() - t0)
        if left <= 0.05:
            break
        m.h.setOptionValue("time_limit", m.h.getRunTime() + left)     # HiGHS counts its run time over all runs
        t1 = time.perf_counter()
        ok = m.solve()
        lp_s += time.perf_counter() - t1
        if not ok:
            note = str(m.h.getModelStatus())
            break
        it += 1
        z = float(m.h.getInfo().objective_function_value)
        spx.append((int(m.h.getInfo().simplex_iteration_count), time.perf_counter() - t1))
        du = m.duals()
        lag, new = m.lagrangian_rest(du), []
        for j in range(d.n):
            val, cols = price_job(d, j, du, k_best)
            lag += val
            new += [(j, c) for c in cols if c[0] - du.alpha[j] < -RC_TOL]
        best = max(best, lag)
        hist.append((time.perf_counter() - t0, z, lag))
        n_lam = m.add_lambdas(m.lambda_reduced_costs(du) < -RC_TOL)
        if (not new and not n_lam) or z - best <= rel_gap * abs(z):
            status = "optimal"
            break
        if not m.add(new) and not n_lam:
            status = "stalled"             # every improving column is in the master already: tolerances
            break
    out = {"lower_bound_jct_s": best if math.isfinite(best) else None, "lower_bound_status": status,
            "master_value_s": z, "lower_bound_time_unit_s": d.D, "horizon_units": d.H, "iterations": it,
            "job_columns": len(m.job_cols), "packing_columns": m.n_lambda, "packings": len(d.pats),
            "size_classes": d.cls_w, "lower_bound_build_s": build_s, "lp_s": lp_s,
            "lower_bound_solve_s": time.perf_counter() - t0 - build_s, "history": hist, "master_note": note,
            "simplex": spx}
    if keep_master:
        out["master"] = m
    return out
