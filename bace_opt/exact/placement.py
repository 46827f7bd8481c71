"""P1, placement at one decision epoch, solved exactly: the entry point ``solve_placement`` (models/placement.md).

Which waiting jobs start at t0, where, and over which routes; lexicographic (1) max jobs started, (2) min cost
at t0 prices, (3) min total run time.  The shape follows P2: shared problem data (``placement_data``), one
module per back-end formulation (``placement_milp``: the Pyomo MILP for HiGHS / SCIP / MathOpt-HiGHS;
``placement_cpsat``: the CP-SAT model), solutions and starts (``placement_solution``), the level scheme
(``placement_levels``), and this module, which checks the inputs, dispatches to a back end and packs the
result.  Names other modules used from here before the split are re-exported.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .. import formulas as F
from ..errors import InputError
from ..instance import Instance
from ..schedule import JobPlan, SolverInfo
from ..solvers.base import SolveOptions
from .placement_data import (JobData, PlacementData, has_negative_prices, identical_pairs, job_arcs,  # noqa: F401
                             model_size)
from .placement_levels import LEVEL_NAMES, LEVEL_TOL  # noqa: F401
from .placement_solution import (Solution, greedy_start, plans_from_solution, solution_from_plans,  # noqa: F401
                                 start_solution)

log = logging.getLogger(__name__)


@dataclass
class PlacementResult:
    plans: list[JobPlan]
    blocked: list[str]
    solver_info: SolverInfo
    levels: list[dict] = field(default_factory=list)
    t0: float = 0.0

    @property
    def started(self) -> list[str]:
        return [p.name for p in self.plans]


def solve_placement(inst: Instance, *, jobs: Sequence[str] | None = None, t0: float | None = None,
                    free_gpus: Mapping[str, int] | None = None, free_gbps: Mapping[int, float] | None = None,
                    solver: str = "highs", options: SolveOptions = SolveOptions(),
                    warm_start: Sequence[JobPlan] | None = None, levels: int = 3,
                    max_binaries: int = 2_000_000, formulation: str = "walk",
                    race_members: Sequence[str] = ("highs", "cpsat"), share=None) -> PlacementResult:
    """Solve P1 exactly (models/placement.md): lexicographic (1) max jobs started, (2) min cost at t0 prices,
    (3) min total run time, by sequential solves (P1.17-P1.19).

    ``solver``: "highs" (Pyomo, native), "scip" / "mathopt-highs" (the same Pyomo model via MPS and
    OR-Tools MathOpt), "cpsat" (its own integer model, ``placement_cpsat``).  ``levels`` (1-3) stops early.
    ``solver_info.objective``/``bound``/``gap`` are those of the last level solved (the cost, level 2, by
    default reported as ``extra['cost_usd']``); ``levels`` lists every level's figures.
    A model over ``max_binaries`` binary variables is not built: status "error" with the reason.
    ``formulation`` (MILP back ends): "walk" (default, ``placement_walk``) or "position" (``placement_milp``);
    both have the same optimum (models/placement.md section 9).  CP-SAT has its own model.
    ``solver="race"``: ``race_members`` race in parallel processes (bace_opt.solvers.race); the first proof wins
    and ``solver_info.extra["proved_by"]`` names it.  ``share`` (internal, set by the race's members): a
    ``placement_levels.LevelShare`` through which levels proven by other members are adopted.
    """
    from ..solvers import registry
    registry.require(solver)
    if levels not in (1, 2, 3):
        raise InputError(f"levels: must be 1, 2 or 3, got {levels!r}")
    if formulation not in ("walk", "position"):
        raise InputError(f"formulation: must be 'walk' or 'position', got {formulation!r}")
    t_start = time.perf_counter()
    data = PlacementData(inst, jobs, t0, free_gpus, free_gbps)
    if not data.jobs:
        plans, blocked = [], list(data.never)
        info = SolverInfo(name=solver, status="optimal", objective=0.0, bound=0.0, gap=0.0,
                          wall_s=time.perf_counter() - t_start, build_s=0.0, solve_s=0.0, nodes=0,
                          message="no waiting job fits the free resources" if blocked else "no waiting job",
                          extra={"jobs_started": 0, "cost_usd": 0.0, "run_s": 0.0})
        return PlacementResult(plans, blocked, info, [], data.t0)
    size = model_size(data)
    if size > max_binaries:
        info = SolverInfo(name=solver, status="error", wall_s=time.perf_counter() - t_start, build_s=0.0,
                          solve_s=0.0, message=f"P1 model too large: {size} binary variables > max_binaries="
                                               f"{max_binaries} ({len(data.jobs)} jobs); not built",
                          extra={"binaries": size})
        return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, [], data.t0)
    if solver == "race":
        from ..solvers.race import race_placement
        return race_placement(inst, members=race_members, options=options, jobs=jobs, t0=t0, free_gpus=free_gpus,
                              free_gbps=free_gbps, warm_start=warm_start, levels=levels, max_binaries=max_binaries,
                              formulation=formulation)
    if registry.BACKENDS[solver].kind == "cp":
        from .placement_cpsat import solve_levels_cpsat
        sol, lv, build_s = solve_levels_cpsat(data, options, warm_start, levels, t_start, share=share)
    else:
        from .placement_milp import solve_levels_milp
        sol, lv, build_s = solve_levels_milp(data, solver, options, warm_start, levels, t_start, formulation,
                                             share=share)
    return _finish(data, solver, sol, lv, build_s, t_start)


def _finish(data, solver, sol, lv, build_s, t_start, more: dict | None = None) -> PlacementResult:
    wall = time.perf_counter() - t_start
    solve_s = sum(r["solve_s"] or 0.0 for r in lv)
    build_total = build_s + sum((r["build_s"] or 0.0) for r in lv[1:])
    nodes = sum(r["nodes"] or 0 for r in lv if r["nodes"] is not None) if lv else None
    if sol is None:
        last = lv[-1] if lv else {"status": "error", "message": "no level solved"}
        status = last["status"] if last["status"] in ("infeasible", "time_limit", "error") else "error"
        info = SolverInfo(name=solver, status=status, wall_s=wall, build_s=build_total, solve_s=solve_s,
                          nodes=nodes, message=last.get("message") or f"level {len(lv)} ended {status}",
                          extra={"levels": lv})
        return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, lv, data.t0)
    plans, blocked = plans_from_solution(data, sol)
    all_opt = all(r["status"] == "optimal" for r in lv)
    last = lv[-1]
    by_level = {r["level"]: r for r in lv}
    cost = by_level.get(2, {}).get("objective")
    status = "optimal" if all_opt else "feasible"
    msg = None
    if not all_opt:
        bad = [r for r in lv if r["status"] != "optimal"]
        msg = "; ".join(f"level {r['level']} ({r['name']}) {r['status']}" + (f": {r['message']}" if r['message'] else "")
                        for r in bad)
    extra = {"levels": lv, "jobs_started": len(plans), "t0": data.t0, **(more or {})}
    if cost is not None:
        extra["cost_usd"] = cost
    if 3 in by_level:
        extra["run_s"] = by_level[3]["objective"]
    # report the cost level (the solver's "objective" of P1 as the problem statement prices it)
    rep = by_level.get(2, last)
    info = SolverInfo(name=solver, status=status, objective=rep["objective"], bound=rep["bound"], gap=rep["gap"],
                      wall_s=wall, build_s=build_total, solve_s=solve_s, nodes=nodes, message=msg, extra=extra)
    return PlacementResult(plans, blocked, info, lv, data.t0)


def cost_at_t0_usd(inst: Instance, plans: Sequence[JobPlan], t0: float, egress: bool | None = None) -> float:
    """The P1 cost of ``plans`` recomputed with the model's formulas: electricity at each region's price at
    t0 (constant over the run) plus egress if the instance's objective includes it.  Used to check the
    solver's objective against the evaluator's figures (equal when prices are constant)."""
    from ..evaluate import price_plan
    egress = inst.objective.egress if egress is None else egress
    tot = 0.0
    for p in plans:
        fig = price_plan(inst, p)
        job = inst.job(p.name)
        for b in p.blocks:
            kw = F.power_kw(inst, job, [(b.region, b.stages)])
            tot += kw * F.price_at(inst, b.region, t0) * fig.run_s / 3600.0
        if egress:
            tot += fig.egress_usd
    return tot


def __getattr__(name):
    """Pyomo-model names (build_model, lp_relaxation_bound, write_level_mps, ...) load ``placement_milp`` on
    first use, so importing this module does not import Pyomo."""
    from . import placement_milp
    try:
        return getattr(placement_milp, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
