"""A certified lower bound of an LP from ANY dual point (models/placement.md section 12; issue 44).

Weak duality with box bounds (Neumaier and Shcherbina, "Safe bounds in linear and mixed-integer programming",
Math. Program. 99, 2004): for min c'x + c0 s.t. rl <= Ax <= ru, l <= x <= u and any row multipliers y,

    c'x = y'Ax + d'x  with  d = c - A'y,
    y'Ax >= sum_i (y_i rl_i if y_i > 0 else y_i ru_i),   d'x >= sum_j min(d_j l_j, d_j u_j),

so their sum plus c0 is a lower bound of every feasible x, whatever y is (optimal, early-stopped, dual
infeasible).  A multiplier whose sign would need an infinite row side is set to 0 first; a reduced cost whose
sign needs an infinite column bound gives no bound (None).  Computed safely: the rounding error of each
d_j in floating point is bounded a priori (|fl(d_j) - d_j| <= gamma_{k+2} (|c_j| + sum_i |a_ij y_i|), gamma_k =
k u / (1 - k u), u = 2^-53, k the column's nonzeros), d_j is taken as the interval it lies in, each term is the
least over that interval (the term is concave in d_j, so at an end), the sums are exact-rounded (``math.fsum``)
and a margin covers the products' rounding.  The value is therefore a bound of the LP as HiGHS holds it (the
model's own coefficients), hence of the MILP whose relaxation it is.

``lp_arrays`` reads a highspy ``HighsLp`` into numpy arrays; ``safe_dual_bound`` computes the bound;
``relaxation_bound`` runs one LP method (interior point without crossover, PDLP, or simplex) on a highspy
object that holds the MILP, reads the bound, and restores the integrality.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...solvers.base import run_interruptible

U = 2.0 ** -53
INF = 1e30      # HiGHS's infinity (kHighsInf is inf; values beyond this are taken as infinite)


@dataclass
class LpArrays:
    """An LP min c'x + offset, rl <= Ax <= ru, l <= x <= u, A as coordinates (row, col, value)."""
    c: np.ndarray
    offset: float
    l: np.ndarray
    u: np.ndarray
    rl: np.ndarray
    ru: np.ndarray
    row: np.ndarray
    col: np.ndarray
    value: np.ndarray
    sense: int = 1          # 1 minimize, -1 maximize (the bound is then an upper bound: not used here)


def lp_arrays(lp) -> LpArrays:
    """A highspy ``HighsLp`` (its matrix column-wise or row-wise) as ``LpArrays``."""
    import highspy
    a = lp.a_matrix_
    start = np.asarray(a.start_, np.int64)
    index = np.asarray(a.index_, np.int64)
    major = np.repeat(np.arange(len(start) - 1), np.diff(start))
    if a.format_ == highspy.MatrixFormat.kColwise:
        row, col = index, major
    elif a.format_ == highspy.MatrixFormat.kRowwise:
        row, col = major, index
    else:
        raise ValueError("lp_arrays: a column-wise or row-wise matrix is expected")
    sense = 1 if lp.sense_ == highspy.ObjSense.kMinimize else -1
    return LpArrays(np.asarray(lp.col_cost_, float), float(lp.offset_), np.asarray(lp.col_lower_, float),
                    np.asarray(lp.col_upper_, float), np.asarray(lp.row_lower_, float),
                    np.asarray(lp.row_upper_, float), row, col, np.asarray(a.value_, float), sense)


def _gamma(k: np.ndarray) -> np.ndarray:
    return (k * U) / (1.0 - k * U)


def _least(d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min over x in [lo, hi] of d x, elementwise (-inf where an infinite bound is needed)."""
    with np.errstate(invalid="ignore"):
        out = np.where(d > 0, d * lo, np.where(d < 0, d * hi, 0.0))
    return np.where(np.isnan(out), -np.inf, out)


def safe_dual_bound(lp: LpArrays, row_dual) -> float | None:
    """The certified lower bound of the minimization ``lp`` from the row multipliers ``row_dual`` (module doc);
    None where a reduced cost needs an infinite column bound or the figures are not finite."""
    if lp.sense != 1:
        return None
    y = np.asarray(row_dual, float).copy()
    if y.shape != lp.rl.shape or not np.all(np.isfinite(y)):
        return None
    rl = np.where(lp.rl <= -INF, -np.inf, lp.rl)
    ru = np.where(lp.ru >= INF, np.inf, lp.ru)
    y[(y > 0) & ~np.isfinite(rl)] = 0.0
    y[(y < 0) & ~np.isfinite(ru)] = 0.0
    n = len(lp.c)
    prod = lp.value * y[lp.row]
    aty = np.bincount(lp.col, weights=prod, minlength=n)
    absy = np.bincount(lp.col, weights=np.abs(prod), minlength=n)
    d = lp.c - aty
    k = np.bincount(lp.col, minlength=n).astype(float) + 2.0
    err = 2.0 * _gamma(k) * (np.abs(lp.c) + absy) * (1.0 + 8 * U) + 1e-300
    lo = np.where(lp.l <= -INF, -np.inf, lp.l)
    hi = np.where(lp.u >= INF, np.inf, lp.u)
    col_terms = np.minimum(_least(d - err, lo, hi), _least(d + err, lo, hi))
    with np.errstate(invalid="ignore"):
        row_terms = np.where(y > 0, y * rl, np.where(y < 0, y * ru, 0.0))
    if not (np.all(np.isfinite(col_terms)) and np.all(np.isfinite(row_terms))):
        return None
    terms = np.concatenate([col_terms, row_terms, [lp.offset]])
    total = math.fsum(terms.tolist())
    margin = 4.0 * U * math.fsum(np.abs(terms).tolist()) + 1e-300
    out = total - margin
    return out if math.isfinite(out) else None


#: LP methods of ``relaxation_bound``: HiGHS option values
LP_METHODS = {"ipm": {"solver": "ipm", "run_crossover": "off"},
              "pdlp": {"solver": "pdlp"},
              "simplex": {"solver": "simplex"},
              "mip": {"solver": "choose"}}


@dataclass
class RelaxationRun:
    """One LP relaxation run: the certified bound (None: none), HiGHS's own LP objective, status, seconds."""
    method: str
    bound: float | None
    lp_objective: float | None
    status: str
    seconds: float
    values: list | None = None


def relaxation_bound(h, method: str, time_limit_s: float | None, keep_values: bool = False) -> RelaxationRun:
    """Solve the LP relaxation of the MILP held by the highspy object ``h`` with ``method`` (``LP_METHODS``)
    within ``time_limit_s``, and read the certified bound from its row duals (``safe_dual_bound``); method
    "mip" solves the MILP itself and reads HiGHS's dual bound (``keep_values``: its solution's column values too).
    The integrality and the options changed are restored, and the solver's state cleared, before returning."""
    import highspy
    t = time.perf_counter()
    lp = h.getLp()
    arrays = lp_arrays(lp)
    integ = list(lp.integrality_)
    n = lp.num_col_
    values = None
    saved = {k: h.getOptionValue(k)[1] for k in ("solver", "run_crossover", "time_limit")}
    try:
        if integ and method != "mip":
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                    np.array([highspy.HighsVarType.kContinuous] * n))
        for k, v in LP_METHODS[method].items():
            h.setOptionValue(k, v)
        if time_limit_s is not None:     # HiGHS counts its limit over the object's runs: run time so far + the rest
            h.setOptionValue("time_limit", float(h.getRunTime() + max(time_limit_s - (time.perf_counter() - t),
                                                                       0.01)))
        run_interruptible(h.run, h.cancelSolve)      # Ctrl-C aborts, as every solve (solvers.base)
        st = h.getModelStatus()
        sol = h.getSolution()
        info = h.getInfo()
        if method == "mip":
            bound = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else None
            obj = float(info.objective_function_value) if sol.value_valid and \
                math.isfinite(info.objective_function_value) else None
            values = list(sol.col_value) if keep_values and obj is not None else None
        else:
            bound = safe_dual_bound(arrays, sol.row_dual) if sol.dual_valid else None
            obj = info.objective_function_value if st == highspy.HighsModelStatus.kOptimal else None
        status = h.modelStatusToString(st)
    finally:
        if integ:
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array(integ))
        for k, v in saved.items():
            h.setOptionValue(k, v)
        h.clearSolver()
    return RelaxationRun(method, bound, obj, status, time.perf_counter() - t, values)
