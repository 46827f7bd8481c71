"""The lexicographic scheme of P1 shared by every back end (models/placement.md section 5, P1.17-P1.19):
level names, the relative tolerance a level's optimum is fixed with, the time left of the budget, and the
per-level record (``solver.extra.levels``)."""
from __future__ import annotations

import time

from ..solvers.base import SolveOptions, SolveResult, relative_gap

LEVEL_TOL = 1e-9   # relative slack when a level's optimum is fixed for the next level (P1.18, P1.19)
LEVEL_NAMES = {1: "jobs_started", 2: "cost_usd", 3: "run_s"}


def remaining_s(options: SolveOptions, t_start: float) -> float | None:
    """Seconds left of ``options.time_limit_s`` counted from ``t_start`` (None: no limit)."""
    if options.time_limit_s is None:
        return None
    return max(options.time_limit_s - (time.perf_counter() - t_start), 0.01)


def level_record(level: int, res: SolveResult, build_s: float) -> dict:
    """One level's figures; level 1 is reported as the count it maximizes (the models minimize -count)."""
    obj, bnd = res.objective, res.bound
    if level == 1:
        obj = None if obj is None else -obj
        bnd = None if bnd is None else -bnd
    return {"level": level, "name": LEVEL_NAMES[level], "sense": "max" if level == 1 else "min",
            "status": res.termination.value, "objective": obj, "bound": bnd, "gap": relative_gap(obj, bnd),
            "build_s": build_s + res.build_s, "solve_s": res.solve_s, "nodes": res.nodes, "message": res.message}
