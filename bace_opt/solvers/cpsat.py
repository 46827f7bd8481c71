"""OR-Tools CP-SAT adapter: solves a ``cp_model.CpModel`` and reports in solver-neutral terms.

CP-SAT works on integers: the caller builds an integer model (``bace_opt.exact.p1.cpsat`` states its
scaling and the error bound that makes the reported bound a proven one).  ``solve_cp(model, options)``
returns the ``SolveResult`` and the ``CpSolver`` (to read values from), objective and bound in the
model's own (scaled integer) units.
"""
from __future__ import annotations

import logging
import time

from .base import SolveOptions, SolveResult, Termination, available_cores, run_interruptible
from .output import to_stderr

log = logging.getLogger(__name__)

NAME = "cpsat"


def available() -> bool:
    try:
        from ortools.sat.python import cp_model  # noqa: F401
        return True
    except Exception:
        return False


def solve_interruptible(solver, model, callback=None):
    """``solver.Solve(model)`` with Ctrl-C as an abort (``solvers.base.run_interruptible``): CP-SAT's own
    SIGINT catching (which stops the search and returns a weaker result as if nothing happened) is turned
    off, and ``StopSearch`` is the cancel.  Its log (``log_search_progress``) goes to standard error, not to
    standard output (``output``)."""
    solver.parameters.catch_sigint_signal = False
    if solver.parameters.log_search_progress:
        solver.parameters.log_to_stdout = False
        solver.log_callback = to_stderr
    if callback is not None:         # a ``CpSolverSolutionCallback``: told each solution (progress)
        return run_interruptible(lambda: solver.Solve(model, callback), solver.StopSearch)
    return run_interruptible(lambda: solver.Solve(model), solver.StopSearch)


def solve_cp(model, options: SolveOptions, time_limit_s: float | None = None):
    """Solve a CP-SAT model; returns (SolveResult, CpSolver)."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    p = solver.parameters
    from .. import clock
    tl = clock.budget(options.time_limit_s if time_limit_s is None else time_limit_s)
    if tl is not None:
        p.max_time_in_seconds = max(float(tl), 0.01)
    p.relative_gap_limit = float(options.rel_gap)
    p.num_workers = int(options.threads) if options.threads is not None else available_cores()
    p.random_seed = int(options.seed)
    p.log_search_progress = bool(options.log)
    for k, v in dict(options.backend_options).items():
        setattr(p, k, v)
    t = time.perf_counter()
    try:
        st = solve_interruptible(solver, model)
    except Exception as e:
        return SolveResult(NAME, Termination.ERROR, message=f"CP-SAT failed: {type(e).__name__}: {e}",
                           solve_s=time.perf_counter() - t), solver
    solve_s = time.perf_counter() - t
    has_obj = model.HasObjective()
    obj = bound = None
    if st == cp_model.OPTIMAL:
        term = Termination.OPTIMAL
    elif st == cp_model.FEASIBLE:
        term = Termination.FEASIBLE
    elif st == cp_model.INFEASIBLE:
        term = Termination.INFEASIBLE
    elif st == cp_model.MODEL_INVALID:
        return SolveResult(NAME, Termination.ERROR, message="CP-SAT: invalid model: " + model.Validate(),
                           solve_s=solve_s), solver
    else:
        term = Termination.TIME_LIMIT
    if term in (Termination.OPTIMAL, Termination.FEASIBLE):
        obj = solver.ObjectiveValue() if has_obj else 0.0
        bound = solver.BestObjectiveBound() if has_obj else 0.0
    msg = None if term in (Termination.OPTIMAL, Termination.FEASIBLE) else f"CP-SAT: {solver.StatusName(st)}"
    return SolveResult(NAME, term, objective=obj, bound=bound, solve_s=solve_s,
                       nodes=int(solver.NumBranches()), message=msg), solver
