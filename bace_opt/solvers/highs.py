"""HiGHS through Pyomo (``pyomo.contrib.appsi.solvers.highs``: the in-process highspy interface that
supports warm starts).

``solve_pyomo(model, options)`` solves a Pyomo model in place: on success the variable values are loaded
into the model, and the result carries termination, incumbent objective, proven bound, node count and the
solve time (the model build time is the caller's to measure).
"""
from __future__ import annotations

import logging
import math
import threading
import time
from typing import TYPE_CHECKING

from .base import SolveOptions, SolveResult, Termination, available_cores, run_interruptible
from .output import highs_log_to_stderr, stderr_logger

if TYPE_CHECKING:      # Pyomo is loaded by the models that use it, not by importing this module
    import pyomo.environ as pyo

log = logging.getLogger(__name__)

NAME = "highs"


def available() -> bool:
    try:
        import highspy  # noqa: F401
        from pyomo.contrib.appsi.solvers.highs import Highs
        return bool(Highs().available())
    except Exception:  # any import problem means "not available"
        return False


#: per calling thread, the thread count its HiGHS task scheduler was last sized for by ``set_threads``
_THREAD = threading.local()


def set_threads(h, threads: int | None) -> int:
    """Set a highspy object's ``threads`` (None: every core available) for a solve run in the calling thread;
    returns the count.  HiGHS keeps one task scheduler per calling thread, sized by that thread's first solve, and
    a later solve in the same thread that asks for another count fails (HiGHS 1.16: status kNotset, "global
    scheduler has already been initialized").  So the thread's scheduler is reset the first time and whenever the
    count changes; the adapter above runs each solve in a thread of its own and needs none of this."""
    import highspy
    n = int(threads) if threads is not None else available_cores()
    if getattr(_THREAD, "threads", None) != n:
        highspy.Highs.resetGlobalScheduler(True)
        _THREAD.threads = n
    h.setOptionValue("threads", n)
    return n


def direct_highs(options: SolveOptions, rel_gap: float = 1e-6):
    """A highspy object for a direct solve (a relaxation built as a matrix, not through Pyomo): the solver's log,
    ``rel_gap``, random seed, time limit and threads (``set_threads``) taken from ``options``; the log, when
    asked, on standard error (``output``)."""
    import highspy
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(options.log))
    if options.log:
        highs_log_to_stderr(h)
    h.setOptionValue("mip_rel_gap", rel_gap)
    h.setOptionValue("random_seed", int(options.seed))
    from .. import clock
    tl = clock.budget(options.time_limit_s)
    if tl is not None:
        h.setOptionValue("time_limit", float(max(tl, 0.01)))
    set_threads(h, options.threads)
    return h


def run_highs(h) -> None:
    """``h.run()`` on a highspy object, stopped (``cancelSolve``) when the deadline in force passes
    (``bace_opt.clock``): its time limit is cut to what is left first, and HiGHS then returns what it has."""
    from .. import clock
    left = clock.budget(None)
    if left is not None:
        cur = h.getOptionValue("time_limit")
        cur = cur[-1] if isinstance(cur, tuple) else cur        # highspy 1.16: (status, value)
        h.setOptionValue("time_limit", float(max(min(cur, left), 0.01)))
    h.HandleUserInterrupt = True
    with clock.cancel_at_deadline(h.cancelSolve):
        h.run()


def _cancel(opt) -> None:
    """HiGHS' own cancel on the highspy object the appsi interface owns (set once the solve started)."""
    h = getattr(opt, "_solver_model", None)
    if h is not None:
        h.cancelSolve()     # honoured because HandleUserInterrupt was set before the solve


progress_log = logging.getLogger("bace_opt.solvers.highs.progress")


def watch_progress(h) -> None:
    """Log (INFO, ``-v``) the MIP's incumbent, bound and gap whenever they move: on each improving solution and on
    HiGHS's own log lines (every few seconds), never more than once a second for the bound alone.  A highspy
    without these callbacks logs nothing."""
    if not progress_log.isEnabledFor(logging.INFO):
        return
    last = {"inc": None, "bnd": None, "t": -1.0}

    def report(e, why: str) -> None:
        d = e.data_out
        inc, bnd, t = d.mip_primal_bound, d.mip_dual_bound, d.running_time
        moved_inc = inc != last["inc"]
        if not moved_inc and (bnd == last["bnd"] or t - last["t"] < 1.0):
            return
        last.update(inc=inc, bnd=bnd, t=t)
        gap = abs(inc - bnd) / max(abs(inc), 1e-10) if math.isfinite(inc) and math.isfinite(bnd) else None
        progress_log.info("MIP search %.1f s: incumbent %s, bound %s, gap %s, nodes %d (%s)", t,
                          f"{inc:.9g}" if math.isfinite(inc) else "none", f"{bnd:.9g}" if math.isfinite(bnd)
                          else "none", f"{100 * gap:.4g} %" if gap is not None else "-", d.mip_node_count, why)
    try:
        h.cbMipImprovingSolution.subscribe(lambda e: report(e, "new incumbent"))
        h.cbMipLogging.subscribe(lambda e: report(e, "progress"))
    except AttributeError:
        pass


def feed_progress(h, on_progress) -> None:
    """Tell ``on_progress(dual bound, incumbent)`` (None where HiGHS has none) on each improving solution and
    each of HiGHS's log lines of the MIP search (a highspy without these callbacks tells nothing)."""
    def tell(e) -> None:
        d = e.data_out
        on_progress(d.mip_dual_bound if math.isfinite(d.mip_dual_bound) else None,
                    d.mip_primal_bound if math.isfinite(d.mip_primal_bound) else None)
    try:
        h.cbMipImprovingSolution.subscribe(tell)
        h.cbMipLogging.subscribe(tell)
    except AttributeError:
        pass


def solve_pyomo(model: "pyo.ConcreteModel", options: SolveOptions, warm_start: bool = False,
                time_limit_s: float | None = None, on_progress=None) -> SolveResult:
    """Solve ``model`` with HiGHS.  ``warm_start``: pass the variables' current values as a start
    (HiGHS checks it and uses it as the first incumbent when feasible).  ``time_limit_s`` overrides
    ``options.time_limit_s`` (the lexicographic driver passes what is left of the budget).  The limit is a
    wall-clock limit on this call: loading the model into HiGHS counts, and HiGHS gets what is left of it.
    ``on_progress(dual bound, incumbent)``: told as the MIP search moves (``feed_progress``)."""
    from pyomo.contrib.appsi.base import TerminationCondition as TC
    from pyomo.contrib.appsi.solvers.highs import Highs

    from .. import clock
    opt = Highs()
    cfg = opt.config
    tl = clock.budget(options.time_limit_s if time_limit_s is None else time_limit_s)
    if tl is not None and tl <= 0.0:
        return SolveResult(NAME, Termination.TIME_LIMIT, message="HiGHS: not started, the time limit was reached")
    if tl is not None:
        cfg.time_limit = max(float(tl), 0.01)
    cfg.mip_gap = options.rel_gap
    # the interface streams its log to sys.stdout when asked: never (stdout is the command's); it always logs it
    # to a logger at INFO (shown with -vv), and with ``options.log`` to one that writes standard error
    cfg.stream_solver = False
    if options.log:
        cfg.solver_output_logger = stderr_logger()
        cfg.log_level = logging.INFO
    cfg.load_solution = False
    cfg.warmstart = bool(warm_start)
    hopts = opt.highs_options
    hopts["mip_feasibility_tolerance"] = 1e-9
    hopts["mip_abs_gap"] = 1e-9
    hopts["random_seed"] = int(options.seed)
    # None: every core (HiGHS's own default, 0, would take half of them); HiGHS 1.16 searches the MIP tree in
    # parallel on these threads
    hopts["threads"] = int(options.threads) if options.threads is not None else available_cores()
    for k, v in dict(options.backend_options).items():
        hopts[k] = v
    t = time.perf_counter()
    try:
        with clock.raise_at_deadline("the model's transfer to HiGHS"):
            opt.set_instance(model)        # creates the highspy object, so that its cancel can be armed
        if tl is not None:                 # (tens of seconds on a large model)
            cfg.time_limit = max(float(tl) - (time.perf_counter() - t), 0.01)
        opt._solver_model.HandleUserInterrupt = True
        watch_progress(opt._solver_model)
        if on_progress is not None:
            feed_progress(opt._solver_model, on_progress)
        uc = opt.update_config             # the model was loaded just above: solve() need not rescan it
        for flag in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                     "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
                     "update_vars", "update_params", "update_named_expressions", "update_objective"):
            if hasattr(uc, flag):
                setattr(uc, flag, False)
        res = run_interruptible(lambda: opt.solve(model), lambda: _cancel(opt))
    except clock.DeadlineReached as e:
        return SolveResult(NAME, Termination.TIME_LIMIT, message=f"HiGHS: not started: {e}",
                           solve_s=time.perf_counter() - t)
    except Exception as e:  # the back end failed: report, do not crash the caller
        return SolveResult(NAME, Termination.ERROR, message=f"HiGHS failed: {type(e).__name__}: {e}",
                           solve_s=time.perf_counter() - t)
    solve_s = time.perf_counter() - t
    tc = res.termination_condition
    obj = res.best_feasible_objective
    bound = res.best_objective_bound
    nodes = None
    try:
        info = opt._solver_model.getInfo()  # highspy object owned by the interface
        nodes = int(info.mip_node_count) if info.mip_node_count >= 0 else None
    except Exception:
        pass
    has_sol = obj is not None
    if has_sol:
        res.solution_loader.load_vars()
    if tc == TC.optimal:
        term = Termination.OPTIMAL
        if bound is None:
            bound = obj
    elif tc == TC.infeasible:
        term = Termination.INFEASIBLE
    elif tc in (TC.maxTimeLimit, TC.maxIterations, TC.interrupted, TC.objectiveLimit):
        term = Termination.FEASIBLE if has_sol else Termination.TIME_LIMIT
    elif tc == TC.infeasibleOrUnbounded or tc == TC.unbounded:
        term = Termination.INFEASIBLE
    else:
        term = Termination.FEASIBLE if has_sol else Termination.ERROR
    msg = None if term in (Termination.OPTIMAL, Termination.FEASIBLE) else f"HiGHS: {tc.name}"
    if term == Termination.FEASIBLE and tc == TC.maxTimeLimit:
        msg = "HiGHS: time limit"
    if bound is not None and not math.isfinite(bound):
        bound = None            # HiGHS reports -inf when no node LP finished: no bound, not a bound of -inf
    return SolveResult(NAME, term, objective=obj, bound=bound, solve_s=solve_s, nodes=nodes, message=msg)
