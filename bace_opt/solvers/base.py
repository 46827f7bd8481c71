"""Solver-neutral options and results (after OR-Tools MathOpt's SolveParameters / Termination).

``SolveResult`` separates *why the solver stopped* (``termination``) from *whether there is a solution*
(``has_solution``), and always carries the proven bound and the relative gap.  Adapters fill it; the exact
models turn the solution into ``JobPlan``s and let the evaluator price them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping


@dataclass(frozen=True)
class SolveOptions:
    time_limit_s: float | None = 60.0
    rel_gap: float = 1e-9            # proven-optimal means gap <= rel_gap (default: to the solver's tolerance)
    threads: int | None = 1
    log: bool = False
    seed: int = 0
    backend_options: Mapping[str, Any] = field(default_factory=dict)  # passed through to the back end as-is


class Termination(str, Enum):
    OPTIMAL = "optimal"             # proven optimal (within rel_gap)
    FEASIBLE = "feasible"           # stopped with a solution, optimality not proven (limit or gap)
    INFEASIBLE = "infeasible"       # proven infeasible
    TIME_LIMIT = "time_limit"       # stopped at the limit without any solution
    ERROR = "error"                 # the back end failed; ``message`` says how


@dataclass
class SolveResult:
    solver: str
    termination: Termination
    objective: float | None = None        # incumbent objective (model units)
    bound: float | None = None            # proven dual bound (model units)
    values: Any = None                    # back-end specific: the variable values the model reads back
    build_s: float = 0.0
    solve_s: float = 0.0
    nodes: int | None = None
    message: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def has_solution(self) -> bool:
        return self.objective is not None and self.termination in (Termination.OPTIMAL, Termination.FEASIBLE)

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|objective - bound| / max(|objective|, 1e-10); None when either is missing (HiGHS' definition)."""
    if objective is None or bound is None or not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    return abs(objective - bound) / max(abs(objective), 1e-10)
