"""P1, placement at one decision epoch, solved exactly: the entry point ``solve_placement`` (models/placement.md).

Which waiting jobs start at t0, where, and over which routes; lexicographic (1) max jobs started, (2) min cost
at t0 prices, (3) min total run time.  The modules are in the package ``p1``: shared problem data (``p1.data``), one
module per back-end formulation (``p1.walk`` and ``p1.position``: the Pyomo MILPs, solved level by
level by ``p1.milp`` with HiGHS / SCIP / MathOpt-HiGHS; ``p1.cpsat``: the CP-SAT model), solutions
and starts (``p1.solution``), the level scheme (``p1.levels``), one back end's solve
(``p1.backend``), the race of several back ends (``race``), and this module, which dispatches a solver
name to one back end or to the race.  ``PlacementResult`` and ``PlacementData`` are re-exported (the result
type, and the input of ``write_level_mps`` / ``lp_relaxation_bound``, which load Pyomo on first use).
"""
from __future__ import annotations

import logging
from typing import Mapping, Sequence

from ..errors import InputError
from ..instance import Instance
from ..schedule import JobPlan
from ..solvers import registry
from ..solvers.base import SolveOptions
from .p1.backend import PlacementResult, prepare, solve_one
from .p1.data import PlacementData, cost_at_t0_usd  # noqa: F401  (re-exported, module docstring)
from .p1.race import DEFAULT_MEMBERS, race_placement

log = logging.getLogger(__name__)


def solve_placement(inst: Instance, *, jobs: Sequence[str] | None = None, t0: float | None = None,
                    free_gpus: Mapping[str, int] | None = None, free_gbps: Mapping[int, float] | None = None,
                    solver: str = "highs", options: SolveOptions = SolveOptions(),
                    warm_start: Sequence[JobPlan] | None = None, levels: int = 3,
                    max_binaries: int = 2_000_000, formulation: str = "walk",
                    race_members: Sequence[str] = DEFAULT_MEMBERS, share=None, engine: str = "auto") -> PlacementResult:
    """Solve P1 exactly (models/placement.md): lexicographic (1) max jobs started, (2) min cost at t0 prices,
    (3) min total run time, by sequential solves (P1.17-P1.19).

    ``solver``: "highs" (Pyomo, native), "scip" / "mathopt-highs" (the same Pyomo model via MPS and
    OR-Tools MathOpt), "cpsat" (its own integer model, ``p1.cpsat``).  ``levels`` (1-3) stops early.
    ``solver_info.objective``/``bound``/``gap`` are those of the last level solved (the cost, level 2, by
    default reported as ``extra['cost_usd']``); ``levels`` lists every level's figures.
    A model over ``max_binaries`` binary variables is not built: status "error" with the reason.
    ``formulation`` (MILP back ends): "walk" (default, ``p1.walk``) or "position" (``p1.position``);
    both have the same optimum (models/placement.md section 9).  CP-SAT has its own model.
    ``solver="race"``: ``race_members`` race in parallel processes (bace_opt.exact.p1.race); the first proof wins
    and ``solver_info.extra["proved_by"]`` names it.  ``share`` (internal, set by the race's members): a
    ``p1.levels.LevelShare`` through which levels proven by other members are adopted.
    """
    spec = registry.BACKENDS.get(solver)
    if spec is None or spec.kind != "race":          # one back end (an unknown name is refused there)
        return solve_one(inst, jobs=jobs, t0=t0, free_gpus=free_gpus, free_gbps=free_gbps, solver=solver,
                         options=options, warm_start=warm_start, levels=levels, max_binaries=max_binaries,
                         formulation=formulation, share=share, engine=engine)
    if engine == "cg":
        raise InputError("engine 'cg' is not a member of a race: use --solver highs with --engine cg")
    _, _, done = prepare(inst, jobs, t0, free_gpus, free_gbps, solver, levels, max_binaries, formulation)
    if done is not None:
        return done
    return race_placement(inst, members=race_members, options=options, jobs=jobs, t0=t0, free_gpus=free_gpus,
                          free_gbps=free_gbps, warm_start=warm_start, levels=levels, max_binaries=max_binaries,
                          formulation=formulation)



def __getattr__(name):
    """The level models' names of ``p1.milp`` (build_level_model, lp_relaxation_bound, write_level_mps)
    load it on first use, so importing this module does not import Pyomo (nor does ``from .placement import
    x``, which asks for ``__path__``: a dunder is never one of them)."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .p1 import milp as placement_milp
    try:
        return getattr(placement_milp, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
