"""P1 solved by one back end (models/placement.md): the work of ``placement.solve_placement`` for every solver
but the race.

``prepare`` checks the inputs and builds the problem data (``p1.data``), and answers at once when there
is nothing to solve (no waiting job fits) or the model would be too large; ``solve_one`` then runs the back
end's level scheme (P1.17-P1.19: ``p1.milp`` for HiGHS / SCIP / MathOpt-HiGHS, ``p1.cpsat`` for
CP-SAT) and packs a ``PlacementResult``.  The race (``race``) runs ``solve_one`` in each of its members.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ... import clock
from ...errors import InputError
from ...instance import Instance
from ...schedule import JobPlan, SolverInfo
from ...solvers import registry
from ...solvers.base import SolveOptions
from .data import PlacementData, model_size
from .certify import Timeline, certify_levels, p1_progress
from .solution import out_of_time_start, plans_from_solution


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


def prepare(inst: Instance, jobs: Sequence[str] | None, t0: float | None, free_gpus: Mapping[str, int] | None,
            free_gbps: Mapping[int, float] | None, solver: str, levels: int, max_binaries: int | None,
            formulation: str) -> tuple[PlacementData, float, PlacementResult | None]:
    """Check the inputs (unknown or unavailable solver, levels, formulation; ``PlacementData`` checks the rest)
    and build the problem data.  Returns (data, start time, result): the result is None when there is a model
    to solve, else the answer already (status "optimal" when no waiting job fits the free resources, "error"
    when the model would have more than ``max_binaries`` binary variables)."""
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
        return data, t_start, PlacementResult(plans, blocked, info, [], data.t0)
    if max_binaries is not None and model_size(data) > max_binaries:
        return data, t_start, too_large(data, solver, t_start, max_binaries)
    return data, t_start, None


def too_large(data: PlacementData, solver: str, t_start: float, max_binaries: int) -> PlacementResult:
    """The answer when the walk model would have more than ``max_binaries`` binary variables: status "error"."""
    size = model_size(data)
    info = SolverInfo(name=solver, status="error", wall_s=time.perf_counter() - t_start, build_s=0.0,
                      solve_s=0.0, message=f"P1 model too large: {size} binary variables > max_binaries="
                                           f"{max_binaries} ({len(data.jobs)} jobs); not built (the cg engine "
                                           "has no such limit: --engine cg)",
                      extra={"binaries": size})
    return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, [], data.t0)


#: the P1 engines: "walk" (the compact MILP of ``formulation``, or CP-SAT's model, on the back end ``solver``),
#: "cg" (column generation and branch-and-price on HiGHS, ``p1.cg``), "auto" (``choose_engine``)
ENGINES = ("auto", "walk", "cg")


def choose_engine(data: PlacementData | None, solver: str, engine: str,
                  max_binaries: int | None = None) -> tuple[str, str]:
    """(engine, why) for ``engine`` ("auto", "walk" or "cg") on the back end ``solver``.  The rule of "auto"
    (models/placement.md section 11, from the measurements there): the walk engine, which proved every family
    measured faster than column generation (paper 6 x 8: 1-2 s against 4-54 s; realistic 8 x 16: 21-101 s against
    not closed in 240 s) and gave the tighter certified gaps at 20 x 50 (0.47 / 6.8 / 0.94 % against 0.79 % / none
    / none in 300 s); column generation only where the walk model would exceed ``max_binaries`` and is not built.
    The cg engine runs on HiGHS only, so any other back end gets the walk engine."""
    if engine not in ENGINES:
        raise InputError(f"engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "cg" and solver != "highs":
        raise InputError(f"engine 'cg' runs on HiGHS: --solver {solver} applies to the walk engine "
                         "(use --engine walk, or --solver highs)")
    if engine != "auto":
        return engine, "named by the caller"
    if solver != "highs":
        return "walk", f"solver {solver!r} (the cg engine runs on HiGHS only)"
    size = model_size(data)
    if max_binaries is not None and size > max_binaries:
        return "cg", f"the walk model would have {size} binaries > max_binaries={max_binaries}"
    return "walk", f"the faster engine on every family measured; {size} binaries in the walk model"


def solve_one(inst: Instance, *, jobs: Sequence[str] | None = None, t0: float | None = None,
              free_gpus: Mapping[str, int] | None = None, free_gbps: Mapping[int, float] | None = None,
              solver: str = "highs", options: SolveOptions = SolveOptions(),
              warm_start: Sequence[JobPlan] | None = None, levels: int = 3, max_binaries: int = 2_000_000,
              formulation: str = "walk", share=None, engine: str = "walk") -> PlacementResult:
    """P1 on the back end ``solver`` (arguments as ``placement.solve_placement``; a race is not a back end).
    ``share`` (set by a race's members): a ``p1.levels.LevelShare`` through which levels proven by other
    members are adopted.  ``engine``: see ``ENGINES`` and ``choose_engine``."""
    if registry.BACKENDS.get(solver) is not None and registry.BACKENDS[solver].kind == "race":
        raise InputError(f"solver {solver!r} is a race of back ends, not one: use placement.solve_placement")
    if engine not in ENGINES:
        raise InputError(f"engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "cg":
        choose_engine(None, solver, engine)         # the back end's check before any work
    data, t_start, done = prepare(inst, jobs, t0, free_gpus, free_gbps, solver, levels,
                                  max_binaries if engine == "walk" else None, formulation)
    if done is not None:
        return done
    engine, why = choose_engine(data, solver, engine, max_binaries)
    timeline = Timeline(on_point=p1_progress(f"P1 ({engine})"))   # t_s from the command's start; progress lines
    more = {"engine": engine, "engine_rule": why, "timeline": timeline}
    if clock.left() <= 0.0:          # the deadline passed in the set-up: no engine is loaded (bace_opt.clock)
        sol, lv, build_s = out_of_time_start(data, warm_start, "the time limit was reached before the solve "
                                             "started", time.perf_counter() - t_start)
        return _finish(data, solver, sol, lv, build_s, t_start, more)
    from ... import progress
    progress.logger("p1").info("P1 (%s): %d jobs; building the model, then each level %s", engine,
                               len(data.jobs), progress.when())
    if engine == "cg":
        from .cg import solve_levels_cg
        sol, lv, build_s = solve_levels_cg(data, options, warm_start, levels, t_start)
        return _finish(data, solver, sol, certify_levels(data, lv, timeline), build_s, t_start, more)
    if max_binaries is not None and model_size(data) > max_binaries:
        return too_large(data, solver, t_start, max_binaries)
    if registry.BACKENDS[solver].kind == "cp":
        from .cpsat import solve_levels_cpsat
        sol, lv, build_s = solve_levels_cpsat(data, options, warm_start, levels, t_start, share=share)
    else:
        from .milp import solve_levels_milp
        sol, lv, build_s = solve_levels_milp(data, solver, options, warm_start, levels, t_start, formulation,
                                             share=share, timeline=timeline)
    return _finish(data, solver, sol, certify_levels(data, lv, timeline), build_s, t_start, more)


def _finish(data, solver, sol, lv, build_s, t_start, more: dict | None = None) -> PlacementResult:
    wall = time.perf_counter() - t_start
    if more and "timeline" in more:      # the time line as plain points (``p1.certify.Timeline``)
        getattr(more["timeline"].on_point, "flush", lambda: None)()
        more = {**more, "timeline": more["timeline"].as_list()}
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
