"""Certified P2 brackets (models/schedule.md section 8): a lower bound valid for the continuous-time problem
beside the best feasible schedule.

The slotted problem that ``solve_schedule`` solves rounds run times UP and starts to the grid, so its optimum
is an upper bound of the continuous optimum (any of its solutions is a feasible continuous schedule).  The
relaxation built by ``build_problem(..., relax=True)`` rounds the other way (P2.20-P2.23); the proven bound
of that relaxation (its optimum when solved, else the back end's dual bound) is a lower bound.  Together:

    lower_bound <= continuous optimum <= upper_bound = objective of the returned (evaluator-priced) schedule

The slotted lower bound is certified only over a complete candidate set and the proven horizon (every no-stall
placement, models/schedule.md section 3); the pool relaxation (``p2.relax``) needs no candidates and is
always certified; the bracket uses the larger certified one.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

from ... import clock, progress
from ...instance import Instance
from ...schedule import Schedule, SolverInfo
from ...solvers.base import SolveOptions
from .candidates import enumerate_candidates
from ..schedule import solve_schedule, build_problem

log = logging.getLogger(__name__)


#: shares of the time limit: the exact P2 first, then the lower bounds, the list scheduler's search the rest
#: (time a step leaves unused flows to the next)
EXACT_SHARE, AREA_SHARE, POOL_SHARE, SLOTTED_SHARE = 0.4, 0.2, 0.1, 0.15
#: the pool relaxation (P2.29) up to this many jobs (above, the area relaxation is the stronger bound)
POOL_MAX_JOBS = 12
#: the list scheduler's search budget when the solve has no time limit
SEARCH_DEFAULT_S = 60.0
#: the time kept after the list scheduler's search, s: its schedule is priced and checked by the evaluator
LIST_RESERVE_S = 1.0


def solve_bracket(inst: Instance, solver: str = "cpsat", options: SolveOptions = SolveOptions(), mu: float = 0.0,
                  exact: Schedule | None = None, **kw) -> Schedule:
    """``solve_schedule`` (keyword arguments alike) with ``EXACT_SHARE`` of the time limit, then the lower
    bounds (``bracket_lower_bounds``: the area relaxations and, up to ``POOL_MAX_JOBS`` jobs, the pool
    relaxation, valid over all placements) and the slotted relaxation on the exact model's time unit and
    candidates (certified when the candidate set is complete).  Unless the exact P2 proved its optimum, the
    list scheduler's local search (``p2.scale.best_list_schedule``, warm-started from the exact schedule)
    gets the rest of the time, and its schedule is returned when the exact model found none or a worse one
    (also when the exact model is too large to build: the case at paper scale).  The bracket goes into
    ``solver.extra``: lower_bound (the larger certified one; its source in lower_bound_kind), upper_bound (the
    returned schedule's evaluator objective, mean JCT + mu cost), bracket_gap = (upper - lower) / upper,
    lower_bound_certified (and lower_bound_note: why not).  ``exact``: the exact P2's answer when the caller
    already has it (``solve_schedule``'s, when its model was too large), so it is not solved again.

    ``solver.bound`` and ``solver.gap`` are the bracket's (a lower bound of the continuous-time P2, or None);
    ``extra["status_for_posed_problem"]`` is "optimal" only when the bracket closes (within the relative gap
    asked, at least 1e-9)."""
    wall0 = time.perf_counter()
    sched = exact if exact is not None else solve_schedule(inst, solver, split_budget(options, EXACT_SHARE), mu=mu,
                                                           **kw)
    si = sched.solver
    mv = progress.Moving(progress.logger("p2"), "P2 bracket")
    posed = si.extra.get("status_for_posed_problem") or si.status      # the slotted model's status, read for P2
    mv.tell(f"exact P2 ({si.name}, slotted model): {posed}, objective {progress.value(si.objective)}; lower bounds "
            "next", force=True)
    cands = bracket_lower_bounds(inst, options, mu, wall0, kw.get("cost_cap_usd"))
    delta = si.extra.get("time_unit_s")
    slot: dict[str, Any] = {}
    if delta is not None and not (exact is not None and si.objective is None):
        # the exact model was built (and, when handed over, solved): its relaxation on the same grid
        used = next((s for s in si.extra.get("candidate_steps", []) if s.get("used")),
                    {"max_blocks": kw.get("max_blocks"), "routes_k": kw.get("routes_k")})
        cs = enumerate_candidates(inst, max_blocks=used["max_blocks"], routes_k=used["routes_k"])
        slot = lower_bound(inst, cs, delta, mu, kw.get("cost_cap_usd"), solver,
                           remaining(options, wall0, EXACT_SHARE + AREA_SHARE + POOL_SHARE + SLOTTED_SHARE),
                           kw.get("horizon_s"))
        slot["lower_bound_kind"] = "slotted relaxation (P2.20-P2.23)"
        cands.append(slot)
    cert = [c for c in cands if c.get("lower_bound_certified") and c.get("lower_bound") is not None]
    if not cert:                 # the relaxations found nothing in the time: the closed-form floor
        cert = [shortest_runs_bound(inst, mu)]
    best = max(cert, key=lambda c: c["lower_bound"]) if cert else (slot or {"lower_bound": None})
    if cert and slot and not slot.get("lower_bound_certified"):
        best = dict(best, lower_bound_note=slot.get("lower_bound_note"))
    best = dict(best, lower_bound_pool=next((c["lower_bound"] for c in cands if c.get("kind") == "pool"), None),
                lower_bound_area=next((c["lower_bound"] for c in cands if c.get("kind") == "area"), None),
                lower_bound_sum=next((c["lower_bound"] for c in cands if c.get("kind") == "sum"), None),
                lower_bound_slotted=slot.get("lower_bound"),
                lower_bound_slotted_certified=bool(slot.get("lower_bound_certified")))
    best.pop("kind", None)
    upper = si.extra.get("evaluator_objective") if si.objective is not None else None
    mv.tell(f"lower bound {progress.value(best.get('lower_bound'))} ({best.get('lower_bound_kind')}), upper "
            f"{progress.value(upper)}", force=True)
    if si.status != "optimal" or upper is None:
        sched, upper = list_upper(inst, sched, upper, options, mu, wall0, kw.get("cost_cap_usd"),
                                  best.get("lower_bound") if best.get("lower_bound_certified") else None)
        si = sched.solver
    extra = dict(si.extra, **bracket_fields(upper, best))
    honest_bracket(si, extra, options.rel_gap)
    mv.tell(f"[{progress.value(extra.get('lower_bound'))}, {progress.value(upper)}]"
            + ("" if extra.get("bracket_gap") is None else f", gap {100 * extra['bracket_gap']:.3g} %"), force=True)
    lb = extra["lower_bound"] if extra.get("lower_bound_certified") and extra["lower_bound"] != float("inf") else None
    si = replace(si, bound=lb, gap=extra["bracket_gap"] if lb is not None else None)
    meta = dict(sched.meta, problem="schedule", mu_s_per_usd=mu, candidates_used=extra.get("candidates_used"),
                candidate_steps=extra.get("candidate_steps", []), lower_bound=lb, bound_is_for=extra["bound_is_for"],
                status_for_posed_problem=extra["status_for_posed_problem"])
    return sched.replace(solver=replace(si, extra=extra, wall_s=time.perf_counter() - wall0), meta=meta)


def honest_bracket(si: SolverInfo, extra: dict[str, Any], rel_gap: float) -> None:
    """Label the bracket in ``extra``: the slotted model's own bound moves to ``slotted_bound`` (it bounds the
    slotted model, not the continuous-time P2); ``bound_is_for`` says what the lower bound bounds;
    ``status_for_posed_problem`` is "optimal" only when the certified bracket closes."""
    if si.name != "list-schedule" and si.bound is not None:
        extra["slotted_bound"] = si.bound
        extra["slotted_status"] = si.status
    cert = extra.get("lower_bound_certified") and extra.get("lower_bound") is not None
    kind = extra.get("lower_bound_kind") or ""
    extra["bound_is_for"] = (None if not cert else
                             "the continuous-time P2 over no-stall placements" if kind.startswith("slotted") else
                             "the continuous-time P2 over every placement, stall or not")
    g = extra.get("bracket_gap")
    if cert and g is not None and g <= max(rel_gap, 1e-9):
        extra["status_for_posed_problem"] = "optimal"
    elif extra.get("upper_bound") is not None:
        extra["status_for_posed_problem"] = ("feasible" + (f": at most {100 * g:.3g} % above the optimum (certified "
                                                           f"bracket)" if cert and g is not None else
                                                           " (no certified lower bound)"))
    else:
        extra["status_for_posed_problem"] = si.status


def needs_bracket(sched: Schedule) -> bool:
    """True when the exact P2 gave no schedule: its model was too large for every candidate set tried, or it
    found none within the time (status error or time_limit, no job started)."""
    si = sched.solver
    return si is not None and si.objective is None and si.status in ("error", "time_limit")


def solve_or_bracket(inst: Instance, solver: str = "cpsat", options: SolveOptions = SolveOptions(), mu: float = 0.0,
                     **kw) -> Schedule:
    """``solve_schedule``, and when it gives no schedule (``needs_bracket``) the bracket of ``solve_bracket`` in
    the time left (at least a tenth of the limit and 2 s, so a schedule comes back): never a schedule with no
    job for a problem too large for the exact P2."""
    wall0 = time.perf_counter()
    sched = solve_schedule(inst, solver, options, mu=mu, **kw)
    if not needs_bracket(sched):
        return sched
    return solve_bracket(inst, solver, time_left(options, wall0), mu, exact=sched,
                         **{k: v for k, v in kw.items() if k != "warm_start"})


def time_left(options: SolveOptions, wall0: float) -> SolveOptions:
    """``options`` with what is left of the time limit since ``wall0`` (at least a tenth of it and 2 s)."""
    if options.time_limit_s is None:
        return options
    left = options.time_limit_s - (time.perf_counter() - wall0)
    left = clock.budget(max(left, 0.1 * options.time_limit_s, 2.0))     # never past the deadline in force
    return replace(options, time_limit_s=max(left, 0.01))


def bracket_lower_bounds(inst: Instance, options: SolveOptions, mu: float, wall0: float,
                         cost_cap_usd: float | None = None) -> list[dict[str, Any]]:
    """The candidate-free lower bounds of ``solve_bracket``, until ``AREA_SHARE`` of the time limit after the
    exact P2's share: the recipe's mean-JCT bound (``p2.lower.recipe_lower_bound``, the packing
    relaxation, as ``gaps.report.p2_figures`` solves it; plus mu x the cheapest-rate cost bound: the separable
    bound); with mu > 0 (and no cost cap) the time is shared with the area relaxation with region energy and
    packings (P2.39, ``p2.area_sum``), its LP then its MIP (<= 30 jobs) or a fine LP, which prices the
    cost the separable bound cannot.  Then the pool relaxation up to ``POOL_MAX_JOBS`` jobs (``POOL_SHARE``)."""
    from .area_sum import sum_lower_bound
    from .lower import FLUID_FACTOR, MIP_MAX_JOBS, best_run, recipe_lower_bound, run_kind
    from .relax import pool_lower_bound
    joint = bool(mu) and cost_cap_usd is None
    end = EXACT_SHARE + AREA_SHARE
    left = remaining(options, wall0, EXACT_SHARE + (AREA_SHARE / 2 if joint else AREA_SHARE)).time_limit_s
    best = best_run(recipe_lower_bound(inst, SEARCH_DEFAULT_S if left is None else left, options.threads,
                                       options.seed))
    out = []
    if best.get("lower_bound_jct_s") is not None:
        lb = best["lower_bound_jct_s"] + mu * best["lower_bound_cost_usd"]
        out.append(dict(best, lower_bound=lb, lower_bound_certified=True, kind="area",
                        lower_bound_kind=run_kind(best) + (" + mu x the cheapest-rate cost" if mu else "")))
    if joint:
        second = (True, 400) if len(inst.jobs) <= MIP_MAX_JOBS else (False, 1400)
        out += area_bounds(inst, sum_lower_bound, "sum", "area relaxation with region energy and packings (P2.39)",
                           options, mu, wall0, end, [(False, 250), second], packing=True, fluid_factor=FLUID_FACTOR)
    if len(inst.jobs) <= POOL_MAX_JOBS:
        pool = pool_lower_bound(inst, remaining(options, wall0, end + POOL_SHARE), mu=mu)
        if pool.get("lower_bound") is not None:
            out.append(dict(pool, lower_bound_certified=True, lower_bound_kind="pool relaxation (P2.29)", kind="pool"))
    return out


def shortest_runs_bound(inst: Instance, mu: float) -> dict[str, Any]:
    """The bound that needs no solve: every job's JCT is at least its shortest run time over its modes (P2.24,
    ``p2.relax.job_modes``; stall or not), and it costs at least its cheapest-rate cost.  Certified, weak:
    the bracket's lower bound when no relaxation proves one in the time."""
    from .relax import job_modes
    jct, cost = 0.0, 0.0
    for job in inst.jobs:
        modes, c = job_modes(inst, job)
        jct += min((md[-1] for md in modes), default=float("inf"))
        cost += c
    lb = jct / len(inst.jobs) + (mu * cost if mu else 0.0)
    return {"lower_bound": lb, "lower_bound_certified": True, "kind": "runs", "lower_bound_status": "closed form",
            "lower_bound_kind": "shortest run times (P2.24: every JCT >= the job's shortest run)"
                                + (" + mu x the cheapest-rate cost" if mu else "")}


def area_bounds(inst: Instance, solve_fn, kind: str, label: str, options: SolveOptions, mu: float, wall0: float,
                upto: float, steps, **kw) -> list[dict[str, Any]]:
    """``solve_fn``'s (an area relaxation's) bound at each of ``steps`` ((MIP?, max units): the LP on a coarse
    grid first, as the MIP's proven bound is worth nothing until its root LP ends) until ``upto`` x the time
    limit; the larger proven one."""
    found = []
    for is_mip, units in steps:
        b = solve_fn(inst, remaining(options, wall0, upto), mu=mu, mip=is_mip, max_units=units, **kw)
        if b.get("lower_bound") is not None:
            found.append(dict(b, lower_bound_certified=True, kind=kind, lower_bound_kind=(
                f"{label}, {'MIP' if is_mip else 'LP'} {b['lower_bound_status']}, unit "
                f"{b['lower_bound_time_unit_s']:g} s")))
    return [max(found, key=lambda b: b["lower_bound"])] if found else []


def list_upper(inst: Instance, sched: Schedule, upper: float | None, options: SolveOptions, mu: float,
               wall0: float, cost_cap_usd: float | None, lower: float | None = None) -> tuple[Schedule, float | None]:
    """The list scheduler's local search (mean JCT, or mean JCT + mu cost) within the time left, warm-started
    from ``sched`` when it has started jobs; returns the better of the two schedules and its evaluator
    objective.  A list schedule over ``cost_cap_usd`` or failing the evaluator's check is not used.  ``lower``: the
    bracket's lower bound, shown beside the search's best as it moves (progress)."""
    from ...evaluate import evaluate
    from ...evaluate.metrics import objective_cost_usd
    from .scale import best_list_schedule
    left = SEARCH_DEFAULT_S if options.time_limit_s is None else max(
        options.time_limit_s - (time.perf_counter() - wall0), 0.5)
    left = clock.budget(left, reserve=LIST_RESERVE_S)
    warm = [sched] if any(e.status == "done" for e in sched.jobs) else []
    try:            # its candidate pricing is Python: stopped at the deadline in force (bace_opt.clock)
        with clock.raise_at_deadline("the list scheduler's candidate pricing"):
            ls = best_list_schedule(inst, left, warm=warm, mu=mu, seed=options.seed,
                                    goal="jct" if not mu or cost_cap_usd is not None else "sum", lower_bound=lower)
    except clock.DeadlineReached as e:
        log.warning("P2 bracket: no list schedule: %s", e)
        si = sched.solver
        if si is not None and si.objective is None:      # nothing found: the limit, not an error, ended it
            why = f"{si.message}; " if si.message else ""
            sched = sched.replace(solver=replace(si, status="time_limit", message=f"{why}no schedule: {e}"))
        return sched, upper
    cand = ls["schedule"]
    if cand is None or not evaluate(inst, cand).feasible:
        return sched, upper
    cost = objective_cost_usd(inst, cand.metrics)
    if cost_cap_usd is not None and cost > cost_cap_usd * (1 + 1e-9):
        return sched, upper
    ev = cand.metrics["avg_jct_s"] + (0.0 if cost_cap_usd is not None else mu * cost)
    if upper is not None and ev >= upper:
        return sched, upper
    why = sched.solver.message or sched.solver.status
    info = SolverInfo(name="list-schedule", status="feasible", objective=ev, wall_s=ls["wall_s"],
                      message=f"exact P2 ({sched.solver.name}): {why}; the schedule is the list scheduler's "
                              f"({ls['evaluations']} orders, {ls['candidates']})",
                      extra={"evaluator_objective": ev, "evaluator_objective_cost_usd": cost,
                             "exact_status": sched.solver.status, "list_orders": ls["evaluations"],
                             "exact_too_large": bool(sched.solver.extra.get("too_large")),
                             "candidates_used": ls["candidates"] + " (3-4 region placements built when none fits)",
                             "candidate_steps": sched.solver.extra.get("candidate_steps", []),
                             "model": "list schedule in continuous time (an upper bound)"})
    return cand.replace(solver=info, method="list-schedule"), ev


def remaining(options: SolveOptions, wall0: float, upto: float) -> SolveOptions:
    """``options`` with the time limit cut to end at ``upto`` x the limit after ``wall0`` (at least 0.5 s)."""
    if options.time_limit_s is None:
        return options
    end = options.time_limit_s * upto - (time.perf_counter() - wall0)
    return replace(options, time_limit_s=max(end, 0.5))


def lower_bound(inst: Instance, cands, delta_s: float, mu: float, cost_cap_usd: float | None, solver: str,
                options: SolveOptions, horizon_s: float | None = None) -> dict[str, Any]:
    """Solve the relaxation (P2.20-P2.23) on time unit ``delta_s`` over the candidate set ``cands`` and return
    its figures: lower_bound (None if the back end proved nothing), status, times, certified and why not."""
    t = time.perf_counter()
    prob = build_problem(inst, delta_s, mu, cost_cap_usd, cands=cands, relax=True, horizon_s=horizon_s)
    relaxed = prob
    build_s = time.perf_counter() - t
    if solver == "cpsat":
        from .cpsat import solve_cpsat
        raw = solve_cpsat(relaxed, options, None)
    else:
        from .milp import solve_milp
        raw = solve_milp(relaxed, options, None)
    why = []
    if not prob.candset.complete:
        why.append("candidate set incomplete: " + "; ".join(prob.candset.incomplete_reasons or ["limits set"]))
    if not prob.horizon_proven:
        why.append("start times capped below the proven horizon")
    lb = raw.bound if raw.status in ("optimal", "feasible") or raw.bound is not None else None
    if raw.status == "infeasible":
        lb = float("inf")          # the relaxation is infeasible, so is the continuous problem
    return {"lower_bound": lb, "lower_bound_status": raw.status, "lower_bound_build_s": build_s + raw.build_s,
            "lower_bound_solve_s": raw.solve_s, "lower_bound_certified": not why and lb is not None,
            "lower_bound_note": "; ".join(why) or None}


def bracket_fields(upper: float | None, lb: dict[str, Any]) -> dict[str, Any]:
    """The bracket [lower_bound, upper_bound] and its relative width (upper - lower) / upper."""
    out = dict(lb)
    out["upper_bound"] = upper
    lo = lb.get("lower_bound")
    if upper is not None and lo is not None and upper > 0 and lo != float("inf"):
        out["bracket_gap"] = max(upper - lo, 0.0) / upper
    else:
        out["bracket_gap"] = None
    return out


def split_budget(options: SolveOptions, share: float) -> SolveOptions:
    if options.time_limit_s is None:
        return options
    return replace(options, time_limit_s=max(options.time_limit_s * share, 0.01))
