"""bace_opt: optimization models for scheduling LLM training jobs across geo-distributed cloud regions.

    import bace_opt as bo
    inst = bo.load_instance("instances/paper-6r-8j-seed1.json")
    sched = bo.simulate(inst, policy="bace-pipe")
    exact = bo.solve(inst, problem="placement", solver="highs", time_limit=60)
    report = bo.evaluate(inst, exact)
    print(bo.gap(inst, "bace-pipe").summary())    # how far is BACE-Pipe from the proven optimum?
    week = bo.trace_instance()                     # a week of a real GPU-cluster trace on fleet20
    w = bo.workload_report(week, bo.simulate(week))  # JCT p50/p90/p99, slowdown by size, cost per day, ...
"""
from __future__ import annotations

from . import installed
installed.guard()       # before networkx is imported: a damaged entry_points.txt of another package is one warning

from .errors import BaceOptError, InfeasibleError, InputError, SolverUnavailableError  # noqa: E402
from .evaluate import Report, Violation, evaluate, make_schedule, price_plan, workload_report  # noqa: E402
from .instance import GpuType, Instance, Job, Link, Objective, PriceSeries, Region, Route, load_instance  # noqa: E402
from .schedule import Block, Hop, JobEntry, JobPlan, Schedule, SolverInfo, load_schedule  # noqa: E402

__version__ = "0.1.0"


def simulate(inst, policy="bace-pipe", **kwargs):
    """Run the online simulator with a policy; returns a priced Schedule (see bace_opt.sim)."""
    from .sim import simulate as _simulate
    return _simulate(inst, policy=policy, **kwargs)


def solve(inst, problem="placement", solver="highs", **kwargs):
    """Solve P1 (placement) or P2 (schedule) exactly; returns a priced Schedule (see bace_opt.exact).  Its
    options are checked against ``bace_opt.options.SOLVE_OPTIONS`` (the same check as ``bace-opt solve``)."""
    from .options import check_solve_options
    kwargs.update(check_solve_options(kwargs))     # a SolveOptions given whole is checked by exact.solve
    from .exact import solve as _solve
    return _solve(inst, problem=problem, solver=solver, **kwargs)


def trace_instance(trace=None, **kwargs):
    """An instance from a GPU-cluster trace: the composed real week (``trace=None``, shipped tables) or your
    own trace CSV (docs/formats.md, "Trace CSV"), on fleet20 by default (see bace_opt.builders.trace)."""
    from .builders.trace import trace_instance as _trace_instance
    return _trace_instance(trace, **kwargs)


def gap(inst, policy="bace-pipe", **kwargs):
    """How far each policy (a name, ``package.module:Class``, a policy object, or a list) is from optimal on
    ``inst``, against proven figures only; returns a ``GapReport`` (see bace_opt.gaps).  Its limits are checked
    against ``bace_opt.options.SOLVE_OPTIONS``, ``policy_options`` against what each policy declares."""
    from .options import check_solve_options
    kwargs.update(check_solve_options(kwargs))
    from .gaps import gap as _gap
    return _gap(inst, policy, **kwargs)


__all__ = [
    "BaceOptError", "InfeasibleError", "InputError", "SolverUnavailableError",
    "Report", "Violation", "evaluate", "make_schedule", "price_plan", "workload_report",
    "GpuType", "Instance", "Job", "Link", "Objective", "PriceSeries", "Region", "Route", "load_instance",
    "Block", "Hop", "JobEntry", "JobPlan", "Schedule", "SolverInfo", "load_schedule",
    "simulate", "solve", "gap", "trace_instance", "__version__",
]
