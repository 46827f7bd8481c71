"""The level driver of P1's Pyomo MILPs (models/placement.md P1.17-P1.19, P1.45, P1.51): the sequential levels
on one model of a formulation (``p1.walk``, the default, or ``p1.position``), kept between levels
and solved by HiGHS natively or by SCIP / HiGHS through MathOpt.

Level 1 maximizes the jobs started (proven without a solve when the MIP start reaches the GPU-count bound),
level 2 minimizes the cost at t0 prices with the count fixed, level 3 the total run time with the cost fixed
within a relative ``LEVEL_TOL``; with the walk formulation level 3 is proved by cost minimization under a
shorter run-time cut (P1.45, ``_level3_by_cost``), with HiGHS on an objective cutoff (P1.51).  Levels another
race member proved are adopted (``p1.levels.solve_or_adopt``).

Public API: ``solve_levels_milp``, ``formulation_module``, ``build_level_model`` (one level's model),
``lp_relaxation_bound``, ``write_level_mps`` (the MPS export of models/README.md).
"""
from __future__ import annotations

import logging
import math
import time
from typing import Mapping

import pyomo.environ as pyo

from ... import clock, progress
from ...files import atomic_write_by_name
from ...instance import Instance
from ...solvers import registry
from ...solvers.base import SolveOptions, SolveResult, Termination, relative_gap
from . import position as placement_position, walk as placement_walk
from .data import PlacementData, count_upper_bound, has_negative_prices
from .certify import SOURCE_SEARCH, SOURCE_STAGE_LP, SOURCE_STAGE_MIP, Timeline
from .latency import floors_pay
from .levels import LEVEL_NAMES, LEVEL_TOL, clears_limit, level_record, remaining_s, solve_or_adopt
from .solution import Solution, out_of_time_start, start_candidates
from .stage import REPAIR_MIN_GAP, repair, stage_bound

log = logging.getLogger(__name__)


def _run_backend(m, solver: str, options: SolveOptions, warm: bool, tl, on_progress=None) -> SolveResult:
    if solver == "highs":
        from ...solvers.highs import solve_pyomo
        return solve_pyomo(m, options, warm_start=warm, time_limit_s=tl, on_progress=on_progress)
    from ...solvers.mathopt import solve_pyomo
    return solve_pyomo(m, options, backend=solver, warm_start=warm, time_limit_s=tl)


FORMULATIONS = ("walk", "position")


def formulation_module(formulation: str):
    """The module of a Pyomo formulation of P1: ``build_model``, ``solution_from_pyomo``,
    ``load_solution_into_pyomo`` (position: ``p1.position``; walk: ``p1.walk``)."""
    if formulation == "position":
        return placement_position
    if formulation == "walk":
        return placement_walk
    raise ValueError(f"formulation: must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")


#: level 2 of the walk formulation on HiGHS starts with the stage relaxation (``p1.stage``): an early bound, and
#: its placement repaired as a start (models/placement.md section 12); off only for measurement
STAGE_RELAXATION = True


def solve_levels_milp(data, solver, options, warm_start, levels, t_start, formulation: str = "walk", share=None,
                      timeline: Timeline | None = None):
    """The sequential levels (P1.17-P1.19) on one Pyomo model of ``formulation``, kept between levels.
    ``share`` (a ``p1.levels.LevelShare``): levels another race member proved are adopted, not solved.
    ``timeline``: level 2's bound and incumbent are put on it as they move."""
    timeline = timeline if timeline is not None else Timeline()
    if formulation == "walk" and has_negative_prices(data):
        # a trail may pick up cycles that earn money under a negative price (models/placement.md section 9):
        # the position formulation with P1.12b is exact there
        log.info("P1: a price at t0 is negative; using the position formulation (walk assumes prices >= 0)")
        formulation = "position"
    fm = formulation_module(formulation)
    tb = time.perf_counter()
    try:
        with clock.raise_at_deadline("the P1 model's build"), \
                progress.heartbeat(progress.logger("p1"), f"P1: the {formulation} model's build"):
            m = fm.build_model(data)
            build_s = time.perf_counter() - tb
            tb = time.perf_counter()
            cands = start_candidates(data, warm_start)
    except clock.DeadlineReached as e:       # the command's deadline (bace_opt.clock): the start stands
        return out_of_time_start(data, warm_start, str(e), time.perf_counter() - tb)
    ws, warm = None, False
    start_s = time.perf_counter() - tb
    build_s += start_s              # the level-1 record's build time includes the search for a start
    log.info("P1: model built in %.2f s; MIP starts searched in %.2f s", build_s - start_s, start_s)
    for cand in cands:     # best first; the walk model refuses a start whose
        if fm.load_solution_into_pyomo(m, cand) is not False:    # routes cross a link twice one way (P1.33)
            ws, warm = cand, registry_warm(solver)
            break
    if ws is None:
        fm.load_solution_into_pyomo(m, Solution({}, {}, {}, {}))    # all zero, as before a refused start
    lv: list[dict] = []
    sol = None
    stage_box: dict = {"model_s": build_s - start_s}
    objs = {1: m.obj_count, 2: m.obj_cost, 3: m.obj_run}
    ub1 = count_upper_bound(data)
    z1 = None
    for level in range(1, levels + 1):
        staged = level == 2 and STAGE_RELAXATION and fm is placement_walk and solver == "highs" and sol is not None
        if level > 1 and out_of_time(options, t_start) and not (staged and left_s(options, t_start) >= STAGE_MIN_S):
            lv.append(skipped_record(level, m, fm, sol, objs[level]))
            break
        left = remaining_s(options, t_start)
        log.info("P1 level %d (%s): walk engine, %s", level, LEVEL_NAMES[level],
                 "no time limit" if left is None else f"{left:.1f} s left")
        for o in objs.values():
            o.deactivate()
        objs[level].activate()
        tp = time.perf_counter()
        if hasattr(fm, "prepare_level"):      # the walk formulation's level-dependent family (P1.41)
            fm.prepare_level(m, level, z1)
        prep_s = time.perf_counter() - tp
        if level == 1 and ws is not None and sum(1 for v in ws.x.values() if v > 0.5) >= ub1:
            # the MIP start already starts count_upper_bound jobs: level 1 is proven without a solve
            res = SolveResult(solver, Termination.OPTIMAL, objective=-float(ub1), bound=-float(ub1),
                              message="proven by the GPU-count bound (the start reaches it)")
            pyo_count = ub1
            adopted = None
        elif level == 1 and ws is not None and STAGE_RELAXATION and fm is placement_walk and solver == "highs" \
                and (res := _count_by_stage(m, ws, solver, options, t_start)) is not None:
            pyo_count = int(round(-res.objective))      # the start's count, proven by the relaxation
            adopted = None
        elif staged:
            res, adopted = solve_or_adopt(share, level, lambda: _level2_staged(m, fm, sol, solver, options, warm,
                                                                               t_start, timeline, stage_box), solver)
            pyo_count = None
        elif level == 3 and getattr(fm, "LEVEL3_BY_COST", False) and sol is not None:
            box = {}

            def run(box=box, sol=sol):
                r, box["sol"] = _level3_by_cost(m, fm, sol, solver, options, t_start)
                return r
            res, adopted = solve_or_adopt(share, level, run, solver)
            pyo_count = None
        else:
            res, adopted = solve_or_adopt(
                share, level, lambda: _run_backend(m, solver, options, warm, remaining_s(options, t_start)), solver)
            pyo_count = None
        rec = level_record(level, res, (build_s if level == 1 else 0.0) + prep_s)
        if level == 2 and stage_box.get("stage") is not None:
            st = stage_box["stage"]
            rec["relaxation_bound"] = st.bound
            rec["relaxation_source"] = SOURCE_STAGE_MIP if st.bound == st.mip_bound else SOURCE_STAGE_LP
            rec["stage_relaxation"] = {"lp_bound": st.lp_bound, "mip_bound": st.mip_bound,
                                       "mip_status": st.mip_status, "seconds": round(st.seconds, 3),
                                       "repaired_usd": stage_box.get("repaired")}
            if stage_box.get("proved"):
                rec["bound_source"] = rec["relaxation_source"]
        lv.append(rec)
        if not res.has_solution:
            if sol is None:
                return None, lv, build_s
            break   # keep the previous level's solution
        if adopted is not None:
            sol = adopted.solution
            fm.load_solution_into_pyomo(m, sol)     # the next level's start (and the cost it fixes, below)
        else:
            if level == 3 and getattr(fm, "LEVEL3_BY_COST", False):
                sol = box["sol"]                        # decoded already (P1.45)
            else:
                sol = ws if pyo_count is not None else fm.solution_from_pyomo(m)
            if share is not None and res.termination == Termination.OPTIMAL:
                share.publish(level, res.objective, sol)
        if level == 3 and getattr(fm, "LEVEL3_BY_COST", False):
            continue
        if adopted is None and pyo_count is None and fm is not placement_position and \
                res.termination != Termination.OPTIMAL:
            # an unproven walk incumbent may carry arcs the decoder drops (loops, closed walks): report the
            # decoded placement's own value, which is what the schedule will cost (never worse than the incumbent)
            _report_decoded(m, fm, sol, level, rec, objs[level])
        warm = registry_warm(solver)
        if level == 1:
            z1 = int(round(-res.objective))
            m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
        elif level == 2:
            z2 = max(pyo.value(m.obj_cost.expr), res.objective)
            m.level2_limit = z2 + LEVEL_TOL * max(abs(z2), 1e-9)
            m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    if len(lv) == 3 and lv[1]["objective"] is not None and fm.load_solution_into_pyomo(m, sol) is not False:
        # level 3 may end on a cheaper solution than level 2's (unproven) incumbent: the reported cost is the
        # cost of the solution returned
        c = pyo.value(m.obj_cost.expr)
        if c < lv[1]["objective"]:
            lv[1]["objective"] = c
            lv[1]["gap"] = relative_gap(c, lv[1]["bound"])
    return sol, lv, build_s


#: a level is not started with less than this many seconds of the budget left: one HiGHS call on a fleet-scale
#: model takes 10-15 s before it first looks at its clock (measured on realistic 20 x 50, 2 cores), so a level
#: started in the last seconds overran the wall-clock limit by that much
MIN_LEVEL_S = 5.0


#: the stage relaxation of level 2 (its LP: 0.1-2 s at fleet scale) is run with this much time left, even where a
#: level would not be started (``out_of_time``): a bound before the limit rather than the cost floor
STAGE_MIN_S = 2.0


def left_s(options: SolveOptions, t_start: float) -> float:
    """Seconds left of the limit (inf without one)."""
    if options.time_limit_s is None:
        return math.inf
    return options.time_limit_s - (time.perf_counter() - t_start)


def out_of_time(options: SolveOptions, t_start: float) -> bool:
    """The budget is spent: less than ``MIN_LEVEL_S`` (or a quarter of the limit, the smaller) is left (a level
    that ended on the time limit leaves nothing)."""
    if options.time_limit_s is None:
        return False
    left = options.time_limit_s - (time.perf_counter() - t_start)
    return left < min(MIN_LEVEL_S, 0.25 * options.time_limit_s)


def _count_by_stage(m, ws, solver: str, options: SolveOptions, t_start: float) -> SolveResult | None:
    """Level 1's fallback when the start does not reach the GPU-count bound: the stage relaxation's count
    (``p1.stage``, with the count objective) is an upper bound of the jobs started; when it equals the start's
    count the level is proven (a SolveResult), else None (the MILP's search proves it)."""
    have = sum(1 for v in ws.x.values() if v > 0.5)
    st = stage_bound(m, options, t_start)
    if st.bound is None or math.floor(-st.bound + 1e-6) > have:
        log.info("P1 level 1: the stage relaxation allows %s jobs, the start has %d: the MILP's search decides",
                 None if st.bound is None else math.floor(-st.bound + 1e-6), have)
        return None
    return SolveResult(solver, Termination.OPTIMAL, objective=-float(have), bound=-float(have),
                       message=f"proven by the stage relaxation's count bound ({have} jobs; the GPU-count bound "
                               "is not reached)")


#: the level-2 MILP's search is not started with less time left than this many times the model's build time
#: (loading it into HiGHS and HiGHS's presolve take about as long again before HiGHS first reads its clock: a
#: fleet20 solve started with 10 s left overran a 60 s limit by 23 s)
MIP_LOAD_FACTOR = 2.0


def _level2_staged(m, fm, sol, solver: str, options: SolveOptions, warm: bool, t_start: float,
                   timeline: Timeline, box: dict) -> SolveResult:
    """Level 2 of the walk formulation: the stage relaxation first (its bound, and its placement repaired into a
    start where that is cheaper: ``p1.stage``), then the MILP's search from the best start for the time left,
    unless the relaxation already proves the start (within ``options.rel_gap``) or no time is left.  The
    relaxation's figures go in ``box`` ("stage", "repaired", "proved")."""
    fm.load_solution_into_pyomo(m, sol)
    inc = float(pyo.value(m.obj_cost.expr))
    timeline.add(None, inc)
    checked = []            # the stage's first placement made whole, on the time line once it checks out

    def offer(cand, usd):
        if usd < inc and fm.load_solution_into_pyomo(m, cand) is not False and not violated_rows(m):
            checked.append(cand)
            timeline.add(None, float(pyo.value(m.obj_cost.expr)))

    st = stage_bound(m, options, t_start, floors=floors_pay(m.data), on_bound=lambda b, is_mip: timeline.add(
        b, None, SOURCE_STAGE_MIP if is_mip else SOURCE_STAGE_LP), on_made_whole=offer)
    box["stage"] = st
    best, kept = sol, None
    if (st.bound is not None and inc > st.bound * (1 + options.rel_gap) + 1e-12) or checked:
        # (one on the time line is always taken: what the time line says is what the solve has)
        cand = st.made_whole if st.made_whole is not None else repair(m.data, st)
        if cand is not None and fm.load_solution_into_pyomo(m, cand) is not False:
            c = float(pyo.value(m.obj_cost.expr))
            box["repaired"] = c
            log.info("P1 level 2: the stage relaxation's placement made whole: %.9g USD (start %.9g)", c, inc)
            if c < inc and (any(cand is x for x in checked) or not violated_rows(m)):     # checked once is enough
                # the search starts from it only where the start is well above the bound (REPAIR_MIN_GAP); else
                # it is kept aside and returned if the search ends above it
                if st.bound is not None and inc > st.bound * (1 + REPAIR_MIN_GAP) + 1e-12:
                    best = cand
                else:
                    kept = (cand, c)
                inc = c
    fm.load_solution_into_pyomo(m, best)        # the search's start (and what is reported when it stops)
    if best is not sol or kept is not None:
        timeline.add(None, inc)
    if kept is not None:
        best = kept[0]
    if st.bound is not None and relative_gap(inc, st.bound) <= options.rel_gap:
        fm.load_solution_into_pyomo(m, best)
        box["proved"] = True
        return SolveResult(solver, Termination.OPTIMAL, objective=inc, bound=min(st.bound, inc),
                           message="proven by the stage relaxation (its bound meets the start)")
    left = remaining_s(options, t_start)
    if out_of_time(options, t_start) or (left is not None and left < MIP_LOAD_FACTOR * box.get("model_s", 0.0)):
        fm.load_solution_into_pyomo(m, best)
        return SolveResult(solver, Termination.FEASIBLE, objective=inc, bound=None,
                           message="the MILP's search not started: too little time left to load it "
                                   f"({left:.1f} s left, the model took {box.get('model_s', 0.0):.1f} s to build)")
    res = _run_backend(m, solver, options, True, remaining_s(options, t_start),
                       on_progress=lambda b, i: timeline.add(b, i, SOURCE_SEARCH))
    if not res.has_solution or res.objective > inc * (1 + 1e-7) + 1e-9:
        fm.load_solution_into_pyomo(m, best)    # no solution, or the search did not take the start: it stands
        res = SolveResult(solver, Termination.FEASIBLE, objective=inc, bound=res.bound, solve_s=res.solve_s,
                          nodes=res.nodes, message=res.message)
    return res


def violated_rows(m, tol: float = 1e-6) -> list[str]:
    """The active rows of ``m`` its current values break (beyond ``tol``, relative): the names, [] when none."""
    bad = []
    for c in m.component_data_objects(pyo.Constraint, active=True):
        v = pyo.value(c.body, exception=False)
        if v is None:
            bad.append(c.name)
            continue
        lo, up = c.lb, c.ub
        if (lo is not None and v < lo - tol * max(1.0, abs(lo))) or (up is not None and v > up + tol * max(1.0, abs(up))):
            bad.append(c.name)
            if len(bad) >= 5:
                break
    return bad


def skipped_record(level: int, m, fm, sol, obj) -> dict:
    """The record of a level not solved for want of time: the solution of the level before stands, with its
    value at this level where the model can read it, unproven (no bound)."""
    val = None
    if sol is not None and fm.load_solution_into_pyomo(m, sol) is not False:
        val = float(pyo.value(obj.expr))
        val = -val if level == 1 else val
    return {"level": level, "name": LEVEL_NAMES[level], "sense": "max" if level == 1 else "min",
            "status": "time_limit", "objective": val, "bound": None, "gap": None, "build_s": 0.0, "solve_s": 0.0,
            "nodes": 0, "message": f"level {level} not started: the time limit was reached at level {level - 1}"}


#: at most this many improving solutions are taken by the cost-minimization proof of level 3 before the
#: plain level-3 solve takes over (each one strictly lowers the run time; in practice level 2's solution is
#: already level-3 optimal and one proof suffices)
LEVEL3_ROUNDS = 5

#: the level-3 proof with HiGHS uses the level-2 limit as an objective cutoff instead of a row (P1.51)
LEVEL3_CUTOFF = True
#: the cutoff is the level-2 limit z2 (1 + LEVEL_TOL) times (1 + this); anything >= 0 is exact (a larger cutoff
#: only admits more solutions, which the check below refuses); a negative value is wrong (tests plant it)
LEVEL3_CUTOFF_SLACK = LEVEL_TOL
#: a solution found under the cutoff but above the level-2 limit is refused (the row is restored); off only in
#: the test that shows the check is needed
LEVEL3_CUTOFF_CHECK = True

#: HiGHS options of the level-3 proof by cost minimization (P1.45): the usual outcome is infeasibility, which
#: primal heuristics cannot help to prove, so they are off (the tree still finds an improving solution when
#: one exists: every integral node LP is one)
LEVEL3_PROOF_HIGHS: dict = {"mip_heuristic_effort": 0.0, "mip_heuristic_run_rins": False,
                            "mip_heuristic_run_rens": False, "mip_heuristic_run_feasibility_jump": False,
                            "mip_heuristic_run_root_reduced_cost": False}


def _level3_by_cost(m, fm, sol, solver: str, options: SolveOptions, t_start: float):
    """Level 3 (P1.19) proved by cost minimization (P1.45, models/placement.md section 9): with T_inc the run
    time of the incumbent (level 2's decoded solution), minimize the cost C over the level-3 feasible set
    (count and cost fixed, con_level1/con_level2) cut by T <= T_inc (1 - rel_gap).  Infeasible proves that
    no solution of level 3 runs shorter than T_inc (1 - rel_gap): T_inc is optimal within rel_gap.  A solution
    found instead is a better level-3 incumbent (taken after decoding, and the cut tightened); after
    LEVEL3_ROUNDS of them the plain level-3 solve (min T) takes over for the time left.  With HiGHS the level-2
    row is replaced by an objective cutoff (P1.51, section 9d; ``LEVEL3_CUTOFF``): a solution found above the
    row's limit is refused (the row comes back), or, if the search ended on it, read as the proof.
    Returns (SolveResult of level 3 with objective T and bound, decoded solution)."""
    tol = max(options.rel_gap, LEVEL_TOL)
    if fm.load_solution_into_pyomo(m, sol) is False:
        res = _run_backend(m, solver, options, False, remaining_s(options, t_start))
        return res, (fm.solution_from_pyomo(m) if res.has_solution else sol)
    t_inc = pyo.value(m.obj_run.expr)
    solve_s, nodes = 0.0, 0
    hopts = dict(options.backend_options)
    if solver == "highs":
        hopts.setdefault("mip_max_improving_sols", 1)    # any solution under the cut is enough to move on
        for k, v in LEVEL3_PROOF_HIGHS.items():
            hopts.setdefault(k, v)
    flip_opts = SolveOptions(time_limit_s=options.time_limit_s, rel_gap=options.rel_gap, threads=options.threads,
                             log=options.log, seed=options.seed, backend_options=hopts)
    m.obj_run.deactivate()
    m.obj_cost.activate()
    res = None
    # P1.51: with HiGHS the cost row of level 2 is replaced by the objective cutoff z2 (1 + 2 LEVEL_TOL) (HiGHS
    # prunes nodes whose bound exceeds it and fixes columns by reduced cost against it, which a row does not
    # give); a solution found above the row's limit is not taken: the row comes back and the round is repeated
    cutoff = LEVEL3_CUTOFF and solver == "highs" and hasattr(m, "con_level2") and hasattr(m, "level2_limit")
    improved, refused = 0, 0
    while improved < LEVEL3_ROUNDS:
        m.con_level3_cut = pyo.Constraint(expr=m.obj_run.expr <= t_inc - tol * max(abs(t_inc), 1e-9))
        run_opts = flip_opts
        if cutoff:
            m.con_level2.deactivate()
            run_opts = SolveOptions(time_limit_s=options.time_limit_s, rel_gap=options.rel_gap,
                                    threads=options.threads, log=options.log, seed=options.seed,
                                    backend_options={**hopts, "objective_bound": m.level2_limit
                                                     + LEVEL3_CUTOFF_SLACK * max(abs(m.level2_limit), 1e-9)})
        res = _run_backend(m, solver, run_opts, False, remaining_s(options, t_start))
        if hasattr(m, "con_level2"):
            m.con_level2.activate()
        solve_s += res.solve_s
        nodes += res.nodes or 0
        m.del_component(m.con_level3_cut)
        if cutoff and LEVEL3_CUTOFF_CHECK and res.has_solution and \
                pyo.value(m.obj_cost.expr) > m.level2_limit + 1e-12 * max(abs(m.level2_limit), 1.0):
            v = pyo.value(m.obj_cost.expr)
            if res.termination == Termination.OPTIMAL and \
                    clears_limit(v, m.level2_limit, options.rel_gap):
                # HiGHS keeps a solution above its objective bound as incumbent; the search ended with it, so every
                # node was fathomed or pruned against min(cutoff, v - gap) > Z: no solution has C <= Z (P1.51 (c))
                res = SolveResult(solver, Termination.INFEASIBLE, solve_s=res.solve_s, nodes=res.nodes,
                                  message="proof ended on a solution above the level-2 limit")
            else:
                log.info("P1 level 3: a solution above the level-2 row under the cutoff; the row is restored")
                refused += 1
                cutoff = False
                continue
        if res.termination == Termination.INFEASIBLE:
            log.info("P1 level 3: proven by cost minimization (no solution runs shorter than %.9g s)", t_inc)
            fm.load_solution_into_pyomo(m, sol)
            return SolveResult(solver, Termination.OPTIMAL, objective=t_inc, bound=t_inc * (1 - tol),
                               solve_s=solve_s, nodes=nodes,
                               message="proven by cost minimization under a shorter run-time cut"
                               + (f" (rounds: {improved} improving, {refused} refused above the level-2 limit;"
                                  f" {res.message or 'infeasible'})" if LEVEL3_CUTOFF and solver == "highs" else "")
                               ), sol
        if not res.has_solution:       # time limit or error: the incumbent stands, unproven
            fm.load_solution_into_pyomo(m, sol)
            return SolveResult(solver, Termination.FEASIBLE, objective=t_inc, bound=None, solve_s=solve_s,
                               nodes=nodes, message=f"level 3 not proven ({res.message or res.termination.value})"
                               ), sol
        better = fm.solution_from_pyomo(m)
        if fm.load_solution_into_pyomo(m, better) is False:
            break
        sol, t_inc = better, pyo.value(m.obj_run.expr)
        improved += 1
    # several improvements in a row: minimize T directly from the best solution found
    m.obj_cost.deactivate()
    m.obj_run.activate()
    res = _run_backend(m, solver, options, registry_warm(solver), remaining_s(options, t_start))
    res.solve_s += solve_s
    res.nodes = (res.nodes or 0) + nodes
    if res.has_solution:
        sol = fm.solution_from_pyomo(m)
    else:
        fm.load_solution_into_pyomo(m, sol)
        res = SolveResult(solver, Termination.FEASIBLE, objective=t_inc, bound=res.bound, solve_s=res.solve_s,
                          nodes=res.nodes, message=res.message)
    return res, sol


def _report_decoded(m, fm, sol, level: int, rec: dict, obj) -> None:
    """Load the decoded ``sol`` into ``m`` and put its objective value in the level record ``rec``."""
    if fm.load_solution_into_pyomo(m, sol) is False:
        return
    val = pyo.value(obj.expr)
    if level == 1:
        val = -val
    if rec["objective"] is None or (val < rec["objective"] if level > 1 else val >= rec["objective"]):
        rec["objective"] = val
        rec["gap"] = relative_gap(val, rec["bound"])


def registry_warm(solver: str) -> bool:
    return registry.BACKENDS[solver].warm_start


def build_level_model(data: PlacementData, level: int, fix: Mapping[int, float] | None = None,
                      formulation: str = "position"):
    """The P1 model with only level ``level``'s objective active (P1.17-P1.19) and the earlier levels fixed
    at ``fix`` ({1: jobs started, 2: cost}, the cost with the LEVEL_TOL slack of the sequential scheme)."""
    fm = formulation_module(formulation)
    m = fm.build_model(data)
    objs = {1: m.obj_count, 2: m.obj_cost, 3: m.obj_run}
    for o in objs.values():
        o.deactivate()
    objs[level].activate()
    fix = dict(fix or {})
    if hasattr(fm, "prepare_level"):
        fm.prepare_level(m, level, int(fix[1]) if 1 in fix else None)
    if level > 1 and 1 in fix:
        m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= fix[1])
    if level > 2 and 2 in fix:
        m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= fix[2] * (1 + LEVEL_TOL))
    return m


def lp_relaxation_bound(data: PlacementData, level: int = 2, fix: Mapping[int, float] | None = None,
                        formulation: str = "position") -> float | None:
    """LP relaxation (root) bound of a level's model with the earlier levels fixed at ``fix`` values
    ({1: jobs started, 2: cost}); used by the benchmark for the root gap."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    m = build_level_model(data, level, fix, formulation)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    opt = Highs()
    opt.config.load_solution = False
    res = opt.solve(m)
    return res.best_objective_bound if res.best_objective_bound is not None else res.best_feasible_objective


def write_level_mps(inst: Instance, path, level: int = 2, fix: Mapping[int, float] | None = None, **kw) -> dict:
    """Write the P1 model of ``inst`` at ``level`` (earlier levels fixed at ``fix``: {1: jobs started,
    2: cost}) as free MPS with symbolic labels, for outside solvers (models/README.md).  ``kw`` as
    ``PlacementData`` (jobs, t0, free_gpus, free_gbps).  Returns {"variables", "constraints"} counts."""
    data = PlacementData(inst, **kw)
    m = build_level_model(data, level, fix)
    atomic_write_by_name(path, lambda tmp: m.write(tmp, format="mps", io_options={"symbolic_solver_labels": True}))
    return {"variables": sum(1 for _ in m.component_data_objects(pyo.Var)),
            "constraints": sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))}
