"""OR-Tools MathOpt (SCIP or HiGHS) on a Pyomo model, through an MPS file.

The Pyomo model is written to free MPS with symbolic labels (``m.write(path, format='mps',
io_options={'symbolic_solver_labels': True})``), read by ``ortools.math_opt.io.python.mps_converter``
into a ``ModelProto``, turned into a ``mathopt.Model`` and solved with the chosen ``SolverType``.  The
solution comes back by variable name and is loaded into the Pyomo variables, so the caller reads it exactly
as after a native HiGHS solve.  The MPS write + read time counts as build time.  MathOpt's error messages
often hide in ``e.__context__``; the adapter puts both in ``message``.
"""
from __future__ import annotations

import datetime
import logging
import os
import tempfile
import time

import pyomo.environ as pyo

from .base import SolveOptions, SolveResult, Termination, available_cores, run_interruptible
from .output import to_stderr

log = logging.getLogger(__name__)

BACKENDS = {"scip": "GSCIP", "mathopt-highs": "HIGHS"}


def available(name: str = "scip") -> bool:
    try:
        from ortools.math_opt.io.python import mps_converter  # noqa: F401
        from ortools.math_opt.python import mathopt
        return hasattr(mathopt.SolverType, BACKENDS[name])
    except Exception:
        return False


def write_mps(model: pyo.ConcreteModel, path: str) -> dict[str, object]:
    """Write ``model`` to free MPS with symbolic labels; returns label -> Pyomo variable."""
    _, smap_id = model.write(path, format="mps", io_options={"symbolic_solver_labels": True})
    smap = model.solutions.symbol_map[smap_id]
    out = {}
    for v in model.component_data_objects(pyo.Var, active=True, descend_into=True):
        lab = smap.byObject.get(id(v))
        if lab is not None:
            out[lab] = v
    return out


def _log_lines(lines) -> None:
    """MathOpt's message callback: the solver's log lines on standard error (``output``), not standard output."""
    for line in lines:
        to_stderr(line)


def _error_text(e: BaseException) -> str:
    parts = [f"{type(e).__name__}: {e}"]
    ctx = e.__context__ or e.__cause__
    if ctx is not None:
        parts.append(f"caused by {type(ctx).__name__}: {ctx}")
    return "; ".join(parts)


def solve_pyomo(model: pyo.ConcreteModel, options: SolveOptions, backend: str = "scip", warm_start: bool = False,
                time_limit_s: float | None = None) -> SolveResult:
    """Solve ``model`` with MathOpt's ``backend`` ("scip" or "mathopt-highs") from its MPS export.

    ``warm_start``: the Pyomo variables' current values become a MathOpt solution hint (SCIP uses it;
    HiGHS through MathOpt ignores hints)."""
    from ortools.math_opt.io.python import mps_converter
    from ortools.math_opt.python import mathopt

    name = backend
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="bace_opt_mps_") as d:
            path = os.path.join(d, "model.mps")
            by_label = write_mps(model, path)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        proto = mps_converter.mps_to_model_proto(text)
        mo = mathopt.Model.from_model_proto(proto)
    except Exception as e:
        return SolveResult(name, Termination.ERROR, message="MPS export/import failed: " + _error_text(e),
                           build_s=time.perf_counter() - t0)
    build_s = time.perf_counter() - t0
    mvars = {v.name: v for v in mo.variables()}
    tl = options.time_limit_s if time_limit_s is None else time_limit_s
    params = mathopt.SolveParameters(
        time_limit=None if tl is None else datetime.timedelta(seconds=max(float(tl), 0.01)),
        relative_gap_tolerance=options.rel_gap, absolute_gap_tolerance=1e-9,
        enable_output=False, random_seed=int(options.seed))     # the log, when asked: msg_cb, below
    stype = getattr(mathopt.SolverType, BACKENDS[backend])
    if backend == "scip":       # MathOpt's HiGHS accepts only the default thread count
        params.threads = int(options.threads) if options.threads is not None else available_cores()
    if backend == "scip":
        params.gscip.real_params["numerics/feastol"] = 1e-9
        # SCIP must not catch SIGINT itself: a Ctrl-C that lands as its search ends is swallowed (SCIP's handler
        # replaces Python's for the solve and the solve returns OPTIMAL), so the command went on and wrote its
        # output (seen once in CI).  Python's handler always sees it; run_interruptible then abandons the SCIP
        # thread after its grace period (OR-Tools 9.15's interrupter breaks gSCIP, so SCIP cannot be cancelled)
        params.gscip.bool_params["misc/catchctrlc"] = False
    else:   # the same tolerances as the native HiGHS adapter
        params.highs.double_options["mip_feasibility_tolerance"] = 1e-9
        params.highs.double_options["primal_feasibility_tolerance"] = 1e-9
    for k, v in dict(options.backend_options).items():
        setattr(params, k, v)
    model_params = None
    if warm_start:
        hint = {}
        for lab, pv in by_label.items():
            if pv.value is not None and lab in mvars:
                hint[mvars[lab]] = float(pv.value)
        if hint:
            model_params = mathopt.ModelSolveParameters(solution_hints=[mathopt.SolutionHint(variable_values=hint)])
    t = time.perf_counter()
    try:
        # Ctrl-C: HiGHS through MathOpt takes MathOpt's SolveInterrupter; SCIP has no cancel here (the interrupter
        # breaks gSCIP's event handler in OR-Tools 9.15, and its own catchctrlc can swallow the signal, above)
        stopper = None
        if backend != "scip":
            from ortools.util.python.solve_interrupter import SolveInterrupter
            stopper = SolveInterrupter()
        res = run_interruptible(
            lambda: mathopt.solve(mo, stype, params=params, model_params=model_params, interrupter=stopper,
                                  msg_cb=_log_lines if options.log else None),
            stopper.interrupt if stopper is not None else (lambda: None))
    except Exception as e:
        return SolveResult(name, Termination.ERROR, message="MathOpt solve failed: " + _error_text(e),
                           build_s=build_s, solve_s=time.perf_counter() - t)
    solve_s = time.perf_counter() - t
    if getattr(res.termination, "limit", None) == mathopt.Limit.INTERRUPTED:
        raise KeyboardInterrupt   # a back end that stopped on an interrupt: abort, like the others
    R = mathopt.TerminationReason
    reason = res.termination.reason
    has_sol = res.has_primal_feasible_solution()
    obj = res.objective_value() if has_sol else None
    bnd = res.termination.objective_bounds.dual_bound
    import math
    bound = bnd if math.isfinite(bnd) else None
    if has_sol:
        vals = res.variable_values()
        for lab, pv in by_label.items():
            mv = mvars.get(lab)
            if mv is not None:
                pv.set_value(float(vals[mv]), skip_validation=True)
    if reason == R.OPTIMAL:
        term = Termination.OPTIMAL
        if bound is None:
            bound = obj
    elif reason in (R.INFEASIBLE, R.INFEASIBLE_OR_UNBOUNDED):
        term = Termination.INFEASIBLE
    elif reason == R.FEASIBLE:
        term = Termination.FEASIBLE
    elif reason == R.NO_SOLUTION_FOUND:
        term = Termination.TIME_LIMIT
    else:
        term = Termination.FEASIBLE if has_sol else Termination.ERROR
    msg = None
    if term not in (Termination.OPTIMAL, Termination.FEASIBLE):
        msg = f"MathOpt {backend}: {reason.name} ({res.termination.detail})"
    nodes = getattr(res.solve_stats, "node_count", None)
    return SolveResult(name, term, objective=obj, bound=bound, build_s=build_s, solve_s=solve_s,
                       nodes=int(nodes) if nodes is not None else None, message=msg)
