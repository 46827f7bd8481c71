"""Certified P2 brackets (models/schedule.md section 8): a lower bound valid for the continuous-time problem
beside the best feasible schedule.

The slotted problem that ``solve_schedule`` solves rounds run times UP and starts to the grid, so its optimum
is an upper bound of the continuous optimum (any of its solutions is a feasible continuous schedule).  The
relaxation built by ``build_problem(..., relax=True)`` rounds the other way (P2.20-P2.23); the proven bound
of that relaxation (its optimum when solved, else the back end's dual bound) is a lower bound.  Together:

    lower_bound <= continuous optimum <= upper_bound = objective of the returned (evaluator-priced) schedule

The slotted lower bound is certified only over a complete candidate set and the proven horizon (every no-stall
placement, models/schedule.md section 3); the pool relaxation (``schedule_relax``) needs no candidates and is
always certified; the bracket uses the larger certified one.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

from ..instance import Instance
from ..schedule import Schedule
from ..solvers.base import SolveOptions
from .candidates import enumerate_candidates
from .schedule import solve_schedule, build_problem

log = logging.getLogger(__name__)


def solve_bracket(inst: Instance, solver: str = "cpsat", options: SolveOptions = SolveOptions(), mu: float = 0.0,
                  **kw) -> Schedule:
    """``solve_schedule`` (keyword arguments alike) with half of the time limit, then the lower bounds with the
    rest: the pool relaxation (``schedule_relax.pool_lower_bound``, valid over all placements, a quarter) and
    the slotted relaxation on the same time unit and candidates (certified when the candidate set is
    complete).  The bracket goes into ``solver.extra``: lower_bound (the larger certified one; its source in
    lower_bound_kind), upper_bound (the returned schedule's evaluator objective), bracket_gap =
    (upper - lower) / upper, lower_bound_certified (and lower_bound_note: why not)."""
    from .schedule_relax import pool_lower_bound
    wall0 = time.perf_counter()
    sched = solve_schedule(inst, solver, split_budget(options, 0.5), mu=mu, **kw)
    si = sched.solver
    delta = si.extra.get("time_unit_s")
    if delta is None:                       # nothing was built (e.g. a job without candidates)
        return sched
    pool = pool_lower_bound(inst, split_budget(options, 0.25), mu=mu)
    cands = []
    if pool.get("lower_bound") is not None:
        cands.append(dict(pool, lower_bound_certified=True, lower_bound_kind="pool relaxation (P2.29)"))
    cs = enumerate_candidates(inst, max_blocks=kw.get("max_blocks"), routes_k=kw.get("routes_k"))
    left = None if options.time_limit_s is None else max(options.time_limit_s - (time.perf_counter() - wall0), 0.01)
    opts = options if left is None else replace(options, time_limit_s=left)
    slot = lower_bound(inst, cs, delta, mu, kw.get("cost_cap_usd"), solver, opts, kw.get("horizon_s"))
    slot["lower_bound_kind"] = "slotted relaxation (P2.20-P2.23)"
    cands.append(slot)
    cert = [c for c in cands if c.get("lower_bound_certified") and c.get("lower_bound") is not None]
    best = max(cert, key=lambda c: c["lower_bound"]) if cert else slot
    if cert and not slot.get("lower_bound_certified"):
        best = dict(best, lower_bound_note=slot.get("lower_bound_note"))
    best = dict(best, lower_bound_pool=pool.get("lower_bound"), lower_bound_slotted=slot.get("lower_bound"),
                lower_bound_slotted_certified=bool(slot.get("lower_bound_certified")))
    upper = si.extra.get("evaluator_objective") if si.objective is not None else None
    extra = dict(si.extra, **bracket_fields(upper, best))
    return sched.replace(solver=replace(si, extra=extra, wall_s=time.perf_counter() - wall0))


def lower_bound(inst: Instance, cands, delta_s: float, mu: float, cost_cap_usd: float | None, solver: str,
                options: SolveOptions, horizon_s: float | None = None) -> dict[str, Any]:
    """Solve the relaxation (P2.20-P2.23) on time unit ``delta_s`` over the candidate set ``cands`` and return
    its figures: lower_bound (None if the back end proved nothing), status, times, certified and why not."""
    t = time.perf_counter()
    prob = build_problem(inst, delta_s, mu, cost_cap_usd, cands=cands, relax=True, horizon_s=horizon_s)
    relaxed = prob
    build_s = time.perf_counter() - t
    if solver == "cpsat":
        from .schedule_cpsat import solve_cpsat
        raw = solve_cpsat(relaxed, options, None)
    else:
        from .schedule_milp import solve_milp
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
