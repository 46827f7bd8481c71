"""P1 solved exactly by branch-and-price (issue 37): the sequential levels (P1.17-P1.19) on the Dantzig-Wolfe
master, with the contract of ``p1.milp.solve_levels_milp``.

Level 1 (max jobs started) is proven at once when a start reaches the GPU-count bound
(``p1.data.count_upper_bound``), as in the walk engine; otherwise by branch-and-price on the level-1
master.  Level 2 (min cost at t0, count >= z1) and level 3 (min total run time, count >= z1, cost <= z2 (1 +
LEVEL_TOL)) by branch-and-price (``bnp``).  Each level starts from the placement sets at hand: the caller's warm
start, the price-pack and greedy starts, and the previous level's solution.  The time limit (``options.
time_limit_s``, from ``t_start``) bounds the whole call; a level stopped by it reports its incumbent and its
certified bound (status "feasible"), and the next levels keep that solution.

Prices < 0 at t0: the one-job walk MILP (the exact pricer) assumes prices >= 0 (models/placement.md section 9),
so the call is handed to ``solve_levels_milp`` (whose position formulation is exact there).
"""
from __future__ import annotations

import logging
import math
import time

from .... import clock
from ....solvers.base import relative_gap, available_cores
from ..data import PlacementData, count_upper_bound, has_negative_prices
from ..levels import LEVEL_NAMES, LEVEL_TOL
from ..solution import greedy_start, plans_from_solution, price_pack_start, solution_from_plans
from .bnp import PROOF_REL, LevelOutcome, branch_and_price, feasible, value
from .columns import columns_from_plans
from .engine import Pricers
from .master import Master

log = logging.getLogger(__name__)


def start_sets(data: PlacementData, warm_start) -> list[tuple[str, list]]:
    """(source, columns) of the usable starts: the caller's warm start, the price-pack and the greedy start,
    each re-encoded (``solution_from_plans``: chains oriented, proportional jobs reordered for P1.42/P1.43)."""
    out = []
    for src, get in (("start:warm", lambda: list(warm_start) if warm_start else None),
                     ("start:price-pack", lambda: price_pack_start(data)), ("start:greedy", lambda: greedy_start(data))):
        plans = get()
        sol = solution_from_plans(data, plans) if plans else None
        if sol is not None:
            out.append((src, columns_from_plans(data, plans_from_solution(data, sol)[0])))
    return out


def _fitting(data, level, z1, z2, sets, t_cut=None):
    """The sets that are placement sets of the level (checked against its master's rows), best first."""
    M = Master(data, level, z1, z2, t_cut=t_cut)
    ok = [(s, c) for s, c in sets if c is not None and feasible(M, c)]
    return sorted(ok, key=lambda sc: (value(level, sc[1]), value(2, sc[1])))


def record(level: int, out: LevelOutcome, build_s: float) -> dict:
    """The level record of ``p1.levels.level_record`` plus the engine's figures (level 1 as the count)."""
    obj, bnd = out.objective, out.bound
    if level == 1:
        obj = None if obj is None else -obj
        bnd = None if bnd is None else float(math.floor(-bnd + 1e-6))
    return {"level": level, "name": LEVEL_NAMES[level], "sense": "max" if level == 1 else "min",
            "status": out.status, "objective": obj, "bound": bnd, "gap": relative_gap(obj, bnd),
            "build_s": build_s, "solve_s": out.solve_s, "nodes": out.nodes, "message": out.message,
            "engine": "cg", "columns": out.columns, "iterations": out.iterations, "exact_rounds": out.exact_rounds,
            "bnp_nodes": out.nodes, "lagrangian_bound": bnd, "incumbent_source": out.source}


#: at most this many improving solutions of the level-3 proof by cost before the direct level-3 search takes over
LEVEL3_ROUNDS = 5


def level3_by_cost(data, z1, z2, cols, starts, pool, pricers, deadline, threads, rel_gap) -> LevelOutcome:
    """Level 3 (P1.19) as the walk engine proves it (P1.45): with T_inc the run time of the incumbent (level 2's
    solution), search the level-2 master (min cost, count >= z1) cut by sum run <= T_inc (1 - tol3) for a
    solution of cost <= z2 (the level-2 limit).  None (every node's bound clears z2) proves T_inc optimal within
    tol3 = max(rel_gap, bnp.PROOF_REL); one found is the next incumbent.  After ``LEVEL3_ROUNDS`` of them the
    direct search (min run time with the cost row) takes over for the time left."""
    tol3 = max(rel_gap, PROOF_REL)
    t_inc, src = value(3, cols), "level2"
    stats = dict(columns=0, iterations=0, exact_rounds=0, nodes=0)
    t0 = time.perf_counter()
    for _ in range(LEVEL3_ROUNDS):
        cut = t_inc - tol3 * max(abs(t_inc), 1e-9)
        left = None if deadline is None else deadline - time.perf_counter()
        sets = _fitting(data, 2, z1, None, starts, t_cut=cut)
        out = branch_and_price(data, 2, z1, pricers=pricers, starts=sets, deadline=deadline, threads=threads,
                               rel_gap=rel_gap, level_s=max(left or 600.0, 1.0), t_cut=cut, limit=z2, seeds=pool)
        for k in stats:
            stats[k] += getattr(out, k)
        if out.status == "infeasible":
            return LevelOutcome(3, "optimal", t_inc, cut, cols, src, solve_s=time.perf_counter() - t0,
                                message=f"proven by cost minimization under a shorter run-time cut ({out.message})",
                                **stats)
        if out.cols is None:
            return LevelOutcome(3, "feasible", t_inc, None, cols, src, solve_s=time.perf_counter() - t0,
                                message=f"level 3 not proven ({out.message})", **stats)
        cols, t_inc, src, pool = out.cols, value(3, out.cols), f"level3-cut:{out.source}", out.pool
        log.info("P1 CG level 3: a solution under the run-time cut, %.9g s", t_inc)
    left = None if deadline is None else deadline - time.perf_counter()
    out = branch_and_price(data, 3, z1, z2, pricers=pricers, starts=[(src, cols)], deadline=deadline,
                           threads=threads, rel_gap=rel_gap, level_s=max(left or 600.0, 1.0), seeds=pool)
    for k in stats:
        setattr(out, k, getattr(out, k) + stats[k])
    return out


def solve_levels_cg(data: PlacementData, options, warm_start, levels: int, t_start: float):
    """P1's levels by branch-and-price: (solution, per-level records, build seconds), as
    ``p1.milp.solve_levels_milp``.  ``options.threads``: threads for the exact pricing;
    ``options.rel_gap``: the relative gap that counts as optimal (with a floor of ``bnp.PROOF_REL``)."""
    if has_negative_prices(data):
        log.info("P1 CG: a price at t0 is negative; the walk pricer assumes prices >= 0: solved by the MILP engine")
        from ..milp import solve_levels_milp
        return solve_levels_milp(data, "highs", options, warm_start, levels, t_start)
    tb = time.perf_counter()
    try:
        with clock.raise_at_deadline("the column-generation engine's setup"):
            pricers = Pricers(data)
            starts = start_sets(data, warm_start)
    except clock.DeadlineReached as e:      # the command's deadline (bace_opt.clock): the start stands
        from ..solution import out_of_time_start
        return out_of_time_start(data, warm_start, str(e), time.perf_counter() - tb)
    build_s = time.perf_counter() - tb
    # None: every core available to the process, as the walk engine's HiGHS
    threads = available_cores() if options.threads is None else max(1, int(options.threads))
    deadline = None if options.time_limit_s is None else t_start + options.time_limit_s
    lv: list[dict] = []
    cols, z1, z2, pool = None, None, None, []
    for level in range(1, levels + 1):
        tl = time.perf_counter()
        b0 = pricers.build_s
        level_s = max(1.0, deadline - tl) if deadline is not None else 600.0
        if level > 1 and deadline is not None and tl >= deadline:     # no time left: keep the solution at hand
            out = LevelOutcome(level, "feasible", value(level, cols), None, cols,
                               lv[-1]["incumbent_source"] if level == 2 else "level2",
                               message="time limit reached before this level")
        elif level == 1:
            sets = _fitting(data, 1, None, None, starts)
            ub1 = count_upper_bound(data)
            if sets and len(sets[0][1]) >= ub1:
                src, c = sets[0]
                out = LevelOutcome(1, "optimal", -float(len(c)), -float(ub1), c, src, solve_s=0.0,
                                   message="proven by the GPU-count bound (the start reaches it)")
            else:
                out = branch_and_price(data, 1, pricers=pricers, starts=sets, deadline=deadline, threads=threads,
                                       rel_gap=options.rel_gap, level_s=level_s)
        elif level == 2:
            sets = _fitting(data, 2, z1, None, [("level1", cols)] + starts)
            out = branch_and_price(data, 2, z1, pricers=pricers, starts=sets, deadline=deadline, threads=threads,
                                   rel_gap=options.rel_gap, level_s=level_s)
            pool = out.pool
        else:
            out = level3_by_cost(data, z1, z2, cols, starts, pool, pricers, deadline, threads, options.rel_gap)
        nb = pricers.build_s - b0
        out.solve_s = max(time.perf_counter() - tl - nb, 0.0)
        lv.append(record(level, out, (build_s if level == 1 else 0.0) + nb))
        if out.cols is None:
            if cols is None:
                return None, lv, build_s
            break      # keep the previous level's solution
        cols = out.cols
        if level == 1:
            z1 = len(cols)
        elif level == 2:
            c2 = value(2, cols)
            z2 = c2 + LEVEL_TOL * max(abs(c2), 1e-9)
    if len(lv) == 3 and lv[1]["objective"] is not None:
        c = value(2, cols)            # the level-3 solution may be cheaper than level 2's unproven incumbent
        if c < lv[1]["objective"]:
            lv[1]["objective"] = c
            lv[1]["gap"] = relative_gap(c, lv[1]["bound"])
    sol = solution_from_plans(data, [c.plan(data) for c in cols])
    if sol is None:       # never seen: every column is a placement of the model
        lv[-1].update(status="error", message="the incumbent does not encode as a P1 solution")
        return None, lv, build_s
    # the encoding reorders proportional jobs (P1.42/P1.43), which never makes cost or run time grow: report the
    # figures of what is returned
    back = columns_from_plans(data, plans_from_solution(data, sol)[0])
    for k, lvl in ((1, 2), (2, 3)):
        if len(lv) > k and lv[k]["objective"] is not None and value(lvl, back) < lv[k]["objective"]:
            lv[k]["objective"] = value(lvl, back)
            lv[k]["gap"] = relative_gap(lv[k]["objective"], lv[k]["bound"])
    return sol, lv, build_s
