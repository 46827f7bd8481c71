"""Column generation for one level of P1's Dantzig-Wolfe master (issue 37, step 3: the root bound).

Loop: solve the restricted master (``master.Master``); price every job with the heuristics
(``pricing.HeuristicPricer``) and add the placements of negative reduced cost; when the heuristics find none (or
when ``bound_every`` x the time limit has passed since the last full round: a bound round), price every job exactly (``pricing_exact.ExactPricer``, the one-job walk MILP)
and take the Lagrangian bound

    LB = z_RMP + sum_j min(-y_conv_j, lb_j)      (lb_j <= the least reduced cost of job j's placements)

which is valid at every iteration (the master is a relaxation of P1 at the level, and its LP is >= LB).  The
loop stops when the exact round adds no column (then LB = z_RMP: the master's LP optimum is proven), when LB and
z_RMP meet within ``rel_tol``, or on the time limit (then LB is the certified bound).  Dual stabilisation
(``smooth``, Wentges): the pricing duals are alpha y_prev_center + (1 - alpha) y; a round that finds no column at
the smoothed duals is a mis-price and is repeated at the master's own duals (so the proof is unaffected).

Seeds: the price-pack and greedy starts of the compact model (``p1.solution``) as columns, and the
columns of an earlier level.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from ..data import PlacementData
from ..solution import greedy_start, plans_from_solution, price_pack_start, solution_from_plans
from .columns import columns_from_plans, make_column
from .master import JobDuals, Master
from .pricing import HeuristicPricer
from .pricing_exact import ExactPricer

log = logging.getLogger(__name__)

#: a bound round solves each job's MILP to this absolute gap x the dearest seed column's cost (its dual bound is
#: what the Lagrangian bound uses, so the gap only loosens the bound by at most jobs x this much)
BOUND_GAP = 1e-6


@dataclass
class CGResult:
    level: int
    bound: float                  # certified lower bound of the level's master LP (level 1: of -count)
    rmp: float                    # last restricted master value
    converged: bool               # the exact pricing proved no negative column: bound = the master's LP optimum
    iterations: int
    exact_rounds: int
    columns: int
    seconds: float
    artificial: float             # value of the artificial columns at the end (0: the level-1 row is covered)
    history: list = field(default_factory=list)    # (t, rmp, lb or None, columns)
    master: Master | None = None


@dataclass
class Pricers:
    """Per-job pricers of one instance, kept between levels (the exact models take time to build)."""
    data: PlacementData
    heur: dict = field(default_factory=dict)
    exact: dict = field(default_factory=dict)
    build_s: float = 0.0

    def heuristic(self, j: int) -> HeuristicPricer:
        if j not in self.heur:
            self.heur[j] = HeuristicPricer(self.data, self.data.jobs[j])
        return self.heur[j]

    def exact_pricer(self, j: int) -> ExactPricer:
        if j not in self.exact:
            t = time.perf_counter()
            self.exact[j] = ExactPricer(self.data, self.data.jobs[j])
            self.build_s += time.perf_counter() - t
        return self.exact[j]


def lp_support(M: Master) -> list:
    """(column, value) of the master's LP optimum, values > 1e-9."""
    _, _, lam = M.solve()
    return [(c, float(v)) for c, v in zip(M.columns, lam) if v > 1e-9]


def start_solutions(data: PlacementData) -> list[list]:
    """The price-pack and greedy starts of the compact model (``p1.solution``), each as its columns."""
    out = []
    for plans in (price_pack_start(data), greedy_start(data)):
        sol = solution_from_plans(data, plans) if plans else None
        if sol is not None:     # reordered to meet P1.42/P1.43 (the master has those rows), as the MIP starts are
            out.append(columns_from_plans(data, plans_from_solution(data, sol)[0]))
    return out


def column_generation(data: PlacementData, level: int, z1: int | None = None, *, seeds=(), support=(), starts=(),
                      pricers=None,
                      time_limit: float = 600.0, bound_every: float = 0.2, smooth: float = 0.0, tol: float = 1e-9,
                      rel_tol: float = 1e-9, exact_time: float = 120.0, most: int = 3, pack: bool = False,
                      partial: int = 2) -> CGResult:
    """Column generation of level ``level`` (1: min -count; 2: min cost with count >= ``z1``).  ``partial``: an
    exact round stops once that many jobs gave a column (the next one starts after the last job priced); only a
    round over every job gives a Lagrangian bound.  ``support`` (with ``pack``): (column, value) pairs of an LP
    solution of the plain master, added as columns and packed into first configurations (``Master.seed_configs``);
    ``starts`` (with ``pack``): integral solutions (lists of columns) whose region patterns are first configurations
    (``Master.solution_configs``), so that the master holds them from the start."""
    t0 = time.perf_counter()
    pricers = pricers or Pricers(data)
    M = Master(data, level, z1, pack=pack)
    for c in seeds:
        M.add(c)
    if pack:
        for sol in starts:
            M.solution_configs(sol)
    if pack and support:
        for c, _ in support:
            M.add(c)
        M.seed_configs(support)
    for d in data.jobs:        # every job priced once at zero duals' heuristics is cheap and helps phase 1
        hp = pricers.heuristic(d.j)
        du = JobDuals(level, 0.0, {r: 0.0 for r in d.regions}, {}, [0.0] * len(d.classes), 0.0)
        for rc, chain, st, routes in hp.price(du, -float("inf"), most=2):
            M.add(make_column(data, d, chain, st, routes))
    best_lb, hist = -float("inf"), []
    it = exact_rounds = 0
    converged = False
    center = None
    start = 0
    last_bound = bound_s = 0.0
    rmp = float("nan")
    scale = max([1.0] + [c.cost for c in M.columns]) if level == 2 else 1.0
    while True:
        it += 1
        rmp, y, _ = M.solve()
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            break
        yp = y if center is None or not smooth else smooth * center + (1 - smooth) * y
        cfg_term, added = M.price_configs(y, tol * scale)
        now = time.perf_counter() - t0
        bound_round = bound_every and now - last_bound >= max(bound_every * time_limit, 2 * bound_s)
        if not bound_round:
            for d in data.jobs:
                du = M.job_duals(yp, d.j)
                for rc, chain, st, routes in pricers.heuristic(d.j).price(du, tol * scale, most=most):
                    col = make_column(data, d, chain, st, routes)
                    if M.job_duals(y, d.j).reduced_cost(col) < -tol * scale and M.add(col):
                        added += 1
        if added and not bound_round:
            center = y if center is None else center
            hist.append((time.perf_counter() - t0, rmp, None, len(M.columns)))
            continue
        if smooth and not bound_round and center is not None and not np.allclose(yp, y):
            center = y            # mis-price at the smoothed duals: move the centre, try again
            continue
        exact_rounds += 1
        tr = time.perf_counter()
        full, lb_sum, proven, n_add, start = _exact_round(M, data, pricers, y, start, t0, time_limit, exact_time,
                                                         tol * scale, 0 if bound_round else partial,
                                                         whole=bool(bound_round), scale=scale)
        if full:
            last_bound = time.perf_counter() - t0
            if bound_round:
                bound_s = time.perf_counter() - tr
        added += n_add
        if not full:
            hist.append((time.perf_counter() - t0, rmp, None, len(M.columns)))
            continue
        lb = rmp + lb_sum + cfg_term
        best_lb = max(best_lb, lb)
        hist.append((time.perf_counter() - t0, rmp, lb, len(M.columns)))
        log.info("CG level %d it %d: rmp %.9g lb %.9g cols %d", level, it, rmp, lb, len(M.columns))
        if not added:
            converged = proven
            if proven:
                best_lb = max(best_lb, rmp)
            break
        if abs(rmp - best_lb) <= rel_tol * max(1.0, abs(rmp)):
            break
        center = y
    return CGResult(level, best_lb, rmp, converged, it, exact_rounds, len(M.columns) + len(M.configs),
                    time.perf_counter() - t0,
                    M.artificial(), hist, M)


def _exact_round(M, data, pricers, y, start, t0, time_limit, exact_time, tol, partial, whole=False, scale=1.0):
    """Exact pricing from job ``start`` on, until ``partial`` jobs gave a column or every job was priced.
    Each MILP looks only for reduced costs below -tol and stops at the first (``ExactPricer.price``); if HiGHS
    stops on a solution that is not below -tol, the MILP is solved out without the cutoff (with it, HiGHS may end
    "optimal" with a dual bound below the cutoff: measured -8.5e-6 against a cutoff of -1.2e-7 on paper seed 2).  ``whole``: every MILP solved to its
    optimum (to ``BOUND_GAP`` x ``scale``), no cutoff (a bound round: the Lagrangian bound of the moment).  Bound
    rounds come every ``bound_every`` x the time limit, and at most a third of the time.
    Returns (every job priced, sum_j min(-y_conv_j, lb_j), every lb_j >= -tol, columns added, next start)."""
    J = len(data.jobs)
    lb_sum, proven, added, hits = 0.0, True, 0, 0
    for k in range(J):
        d = data.jobs[(start + k) % J]
        left = time_limit - (time.perf_counter() - t0)
        du = M.job_duals(y, d.j)
        ep = pricers.exact_pricer(d.j)
        lb, col, status = ep.price(du, min(exact_time, max(left, 0.05)), abs_gap=max(tol, BOUND_GAP * scale) if whole
                                   else tol, cutoff=None if whole else -tol, first=not whole)
        if status == "Solution limit reached" and (col is None or du.reduced_cost(col) >= -tol):
            # HiGHS may stop on a solution above the cutoff (models/placement.md 9d (c)): solve it out
            left = time_limit - (time.perf_counter() - t0)
            lb, col, status = ep.price(du, min(exact_time, max(left, 0.05)), abs_gap=tol)
        if not lb >= -tol * (1 + 1e-9):     # this job's least reduced cost is not proven >= -tol
            proven = False
        lb_sum += min(-du.conv, lb)
        if col is not None and du.reduced_cost(col) < -tol and M.add(col):
            added += 1
            hits += 1
            if partial and hits >= partial and k < J - 1:
                return False, lb_sum, proven, added, (start + k + 1) % J
    return True, lb_sum, proven, added, start
