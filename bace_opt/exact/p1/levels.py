"""The lexicographic scheme of P1 shared by every back end (models/placement.md section 5, P1.17-P1.19):
level names, the relative tolerance a level's optimum is fixed with, the time left of the budget, and the
per-level record (``solver.extra.levels``)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ...solvers.base import SolveOptions, SolveResult, Termination, relative_gap

LEVEL_TOL = 1e-9   # relative slack when a level's optimum is fixed for the next level (P1.18, P1.19)
LEVEL_NAMES = {1: "jobs_started", 2: "cost_usd", 3: "run_s"}


def remaining_s(options: SolveOptions, t_start: float) -> float | None:
    """Seconds left of ``options.time_limit_s`` counted from ``t_start`` (None: no limit)."""
    if options.time_limit_s is None:
        return None
    return max(options.time_limit_s - (time.perf_counter() - t_start), 0.01)


def clears_limit(bound: float, limit: float, tol: float) -> bool:
    """A proven lower bound ``bound`` (of a search that prunes within the relative tolerance ``tol``) shows that
    nothing costs <= ``limit``: it exceeds the limit by more than twice the pruning tolerance (models/placement.md
    P1.51 (c), and the exclusions of section 9g)."""
    return bound - 2 * max(tol * abs(bound), 1e-9) > limit


def level_record(level: int, res: SolveResult, build_s: float) -> dict:
    """One level's figures; level 1 is reported as the count it maximizes (the models minimize -count)."""
    obj, bnd = res.objective, res.bound
    if level == 1:
        obj = None if obj is None else -obj
        bnd = None if bnd is None else -bnd
    return {"level": level, "name": LEVEL_NAMES[level], "sense": "max" if level == 1 else "min",
            "status": res.termination.value, "objective": obj, "bound": bnd, "gap": relative_gap(obj, bnd),
            "build_s": build_s + res.build_s, "solve_s": res.solve_s, "nodes": res.nodes, "message": res.message}


# ---------------------------------------------------------------------- sharing levels in a race

@dataclass(frozen=True)
class SharedLevel:
    """A level optimum proven by one race member, offered to the others (bace_opt.exact.p1.race).
    ``objective`` is in model units (level 1: minus the jobs started; level 2: cost in USD; level 3: run time in
    s) and ``solution`` a complete position-form solution that attains it (the next level's start)."""
    level: int
    objective: float
    solution: Any
    by: str


class LevelShare:
    """How a level loop takes part in a race.  Before solving a level the loop asks ``take(level)``: a level
    another member already proved is adopted instead of solved (its optimum is fixed for the next levels as
    if proven here, its solution is the next start).  While the loop solves a level, the member's share may
    stop the solve (``solvers.base.set_external_stop``) when the level is proven elsewhere; the loop then asks
    again.  A level proven here is ``publish``-ed.  This base class shares nothing (a solve alone)."""

    def take(self, level: int) -> SharedLevel | None:
        return None

    def publish(self, level: int, objective: float, solution) -> None:
        return None


def solve_or_adopt(share: LevelShare | None, level: int, solve: Callable[[], SolveResult],
                   solver: str) -> tuple[SolveResult, SharedLevel | None]:
    """Solve ``level`` with ``solve()`` unless the race already proved it; returns the level's result and the
    adopted level (None when solved here).  A level proven elsewhere reads as optimal, its message names
    the member that proved it."""
    got = share.take(level) if share is not None else None
    if got is None:
        res = solve()
        if share is None or res.termination == Termination.OPTIMAL:
            return res, None
        got = share.take(level)       # stopped because another member proved it (or proven meanwhile)
        if got is None:
            return res, None
    res = SolveResult(solver, Termination.OPTIMAL, objective=got.objective, bound=got.objective,
                      message=f"proven by {got.by} (race)")
    return res, got
