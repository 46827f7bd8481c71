"""Exact models: P1 placement (``placement``: the entry point; its two engines, the Pyomo MILPs, the CP-SAT model,
column generation and the race of back ends in the package ``p1``) and P2 schedule (``schedule``: the entry point;
the exact models and the certified bracket in the package ``p2``).
``solve`` returns a ``Schedule`` priced by the evaluator; ``ExactP1`` (``online``) is the online policy that
solves P1 at every event.

    bace_opt.exact.solve(inst, problem="placement", solver="highs", time_limit=60)
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from .. import clock
from ..errors import InputError, SolverUnavailableError
from ..evaluate import make_schedule, objective_cost_usd
from ..instance import Instance
from ..options import check_solve_options
from ..schedule import JobPlan
from ..solvers.base import SolveOptions
from .online import ExactP1, ExactQueue  # noqa: F401  (the exact-P1 online policy: make_policy("exact-p1"))

log = logging.getLogger(__name__)

PROBLEMS = ("placement", "schedule")


def _options(options: SolveOptions | None, time_limit, gap, threads, log_output) -> SolveOptions:
    """The solve's options: the keywords and a ``SolveOptions`` given whole both checked against
    ``bace_opt.options.SOLVE_OPTIONS`` (the one check of ``bace-opt solve``, ``bo.solve`` and ``bo.gap``)."""
    given = check_solve_options({"time_limit": time_limit, "gap": gap, "threads": threads,
                                 "log_output": log_output})
    if options is not None:
        check_solve_options({"time_limit": options.time_limit_s, "gap": options.rel_gap, "threads": options.threads},
                            names={"time_limit": "options.time_limit_s", "gap": "options.rel_gap",
                                   "threads": "options.threads"})
    o = options or SolveOptions()
    kw = {}
    if given["time_limit"] is not None:
        kw["time_limit_s"] = float(given["time_limit"])
    if given["gap"] is not None:
        kw["rel_gap"] = float(given["gap"])
    if given["threads"] is not None:
        kw["threads"] = given["threads"]
    elif options is None:
        kw["threads"] = None        # the solver's threads default to every core available
    if given["log_output"] is not None:
        kw["log"] = bool(given["log_output"])
    if kw:
        from dataclasses import replace
        o = replace(o, **kw)
    return o


def solve(inst: Instance, problem: str = "placement", solver: str = "highs", time_limit: float | None = None,
          mu: float = 0.0, *, options: SolveOptions | None = None, gap: float | None = None,
          threads: int | None = None, log_output: bool | None = None,
          warm_start: Sequence[JobPlan] | Any | None = None, **kw: Any):
    """Solve P1 or P2 exactly and return a ``Schedule`` built by ``evaluate.make_schedule``.

    P1 (``problem="placement"``): keyword arguments of ``placement.solve_placement`` (jobs, t0, free_gpus,
    free_gbps, levels) pass through; ``warm_start`` is a Schedule or a list of JobPlans.  Jobs not started are ``not_started``; jobs arriving after t0 are
    ``unscheduled``.  ``meta`` holds t0, the cost at t0 prices that the MILP optimized
    (``cost_at_t0_usd``), the same cost recomputed from the evaluator's figures
    (``evaluated_cost_at_t0_usd``) and the evaluator's true cost (``evaluated_cost_usd``; differs from the
    t0 figure only under hourly prices).
    ``threads``: solver threads; by default (no ``threads``, no ``options``) every core available to the process
    (HiGHS 1.16 searches the branch-and-bound tree in parallel; a race shares them out among its members).
    P2 (``problem="schedule"``): ``bace_opt.exact.schedule.solve_schedule(inst, solver=, options=, mu=, **kw)``.
    """
    if problem not in PROBLEMS:
        raise InputError(f"problem: must be one of {', '.join(PROBLEMS)}, got {problem!r}")
    opts = _options(options, time_limit, gap, threads, log_output)
    # the limit is this call's wall clock (bace_opt.clock): every stage below takes what is left of one deadline,
    # less the time kept to price the result (make_schedule's evaluation)
    with clock.scope(opts.time_limit_s, reserve=evaluation_reserve_s(inst)):
        if opts.time_limit_s is not None:
            from dataclasses import replace
            opts = replace(opts, time_limit_s=clock.budget(opts.time_limit_s))
        return _solve(inst, problem, solver, opts, mu, warm_start, kw)


def evaluation_reserve_s(inst: Instance) -> float:
    """Seconds kept at the end of a limited solve for the evaluator to price its schedule (measured: ~2 ms a job
    on fleet20 on 2 loaded cores; three times that, and 0.2 s for the rest)."""
    return 0.2 + 0.006 * len(inst.jobs)


def _solve(inst: Instance, problem: str, solver: str, opts: SolveOptions, mu, warm_start, kw: dict):
    if warm_start is not None:       # an infeasible one: one warning naming what is infeasible, then ignored
        from .warm import checked_warm_start
        warm_start = checked_warm_start(inst, warm_start, problem, kw)
    if solver == "race" and problem != "placement":
        raise InputError("solver 'race' (racing portfolio) applies to problem 'placement' (P1) only")
    if problem == "schedule":
        try:
            from .schedule import solve_schedule
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith("bace_opt.exact.schedule"):
                raise SolverUnavailableError("problem 'schedule' (P2) is not available in this version: "
                                             "bace_opt.exact.schedule is missing") from None
            raise
        if warm_start is not None:
            kw["warm_start"] = warm_start     # P2 takes a Schedule (its plans are hints)
        if kw.pop("bracket", False):          # certified bracket: lower bound beside the schedule
            from .p2.bound import solve_bracket
            return solve_bracket(inst, solver=solver, options=opts, mu=mu, **kw)
        from .p2.bound import solve_or_bracket       # too large for the exact P2: the bracket
        return solve_or_bracket(inst, solver=solver, options=opts, mu=mu, **kw)
    if mu not in (0, 0.0, None):
        log.info("mu=%g is ignored by P1 (its objective is lexicographic)", mu)
    from .placement import cost_at_t0_usd, solve_placement
    if warm_start is not None and hasattr(warm_start, "plans"):   # a Schedule: its started jobs
        warm_start = [p for p in warm_start.plans if p.status == "done"]
    start_by = "caller" if warm_start is not None else None
    if warm_start is None and kw.pop("heuristic_start", True) and _plain_epoch(inst, kw):
        opts, warm_start, start_by = _heuristic_start(inst, opts)
    kw.pop("heuristic_start", None)
    res = solve_placement(inst, solver=solver, options=opts, warm_start=warm_start, **kw)
    started = {p.name for p in res.plans}
    waiting = set(res.blocked) | started
    plans = list(res.plans) + [JobPlan(n, "not_started") for n in res.blocked]
    for j in inst.jobs:
        if j.name not in waiting:
            plans.append(JobPlan(j.name, "unscheduled"))
    info = res.solver_info
    extra = dict(info.extra)
    meta = {"problem": "placement", "t0": res.t0, "engine": extra.get("engine"), "start": start_by,
            "lexicographic": "sequential: max jobs started, then min cost "
            "at t0 prices, then min total run time (models/placement.md P1.17-P1.19)"}
    sched = make_schedule(inst, plans, method=f"exact-placement-{solver}", solver=info, meta=meta)
    if res.plans:
        eval_t0 = cost_at_t0_usd(inst, res.plans, res.t0)
        m = sched.metrics
        true_cost = objective_cost_usd(inst, m)
        milp_cost = extra.get("cost_usd")
        meta.update(cost_at_t0_usd=milp_cost, evaluated_cost_at_t0_usd=eval_t0, evaluated_cost_usd=true_cost)
        if milp_cost is not None:
            dev = abs(milp_cost - eval_t0) / max(abs(eval_t0), 1e-9)
            meta["objective_check_rel_diff"] = dev
            if dev > 1e-6:
                log.warning("P1 %s: solver cost %.9g differs from the evaluator's recomputation %.9g (rel %.2g)",
                            solver, milp_cost, eval_t0, dev)
    else:
        meta.update(cost_at_t0_usd=extra.get("cost_usd", 0.0), evaluated_cost_at_t0_usd=0.0, evaluated_cost_usd=0.0)
    return sched.replace(meta=meta)


def _plain_epoch(inst: Instance, kw: dict) -> bool:
    """P1 at the latest arrival on the whole cluster (no job subset, no free resources given): the epoch at
    which a shipped heuristic's decision is a placement of the same problem."""
    if any(kw.get(k) is not None for k in ("jobs", "free_gpus", "free_gbps")):
        return False
    t0 = kw.get("t0")
    return t0 is None or t0 == max((j.arrival_s for j in inst.jobs), default=0.0)


def _heuristic_start(inst: Instance, opts: SolveOptions):
    """(options with the start's time taken off the limit, the best heuristic placement or None, its name):
    the engines start from it, so a solve stopped by its limit returns at least that placement
    (``p1.certify``)."""
    import time
    from dataclasses import replace
    from .p1.certify import heuristic_starts
    t = time.perf_counter()
    t0 = max((j.arrival_s for j in inst.jobs), default=0.0)
    starts = heuristic_starts(inst, t0, [j.name for j in inst.jobs], opts.time_limit_s)
    used = time.perf_counter() - t
    if opts.time_limit_s is not None:
        opts = replace(opts, time_limit_s=max(opts.time_limit_s - used, 0.01))
    if not starts:
        return opts, None, None
    from .placement import cost_at_t0_usd
    name, plans = min(starts, key=lambda s: (-len(s[1]), cost_at_t0_usd(inst, s[1], t0)))
    return opts, plans, f"heuristic:{name}"
