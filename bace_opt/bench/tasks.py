"""Execute one ``RunSpec``: build the instance, run the method, price and check with the evaluator, one row.

Methods (``RunSpec.method``), each priced by ``bace_opt.evaluate`` alone:
    sim:<policy>       the online simulator with that policy (method_args: mode, policy options)
    p1:<solver>        P1 placement solved exactly (highs, scip, mathopt-highs, cpsat)
    p1-nobw:<solver>   P1 on the same instance with every link's capacity x1e6 (bandwidth cannot bind), to
                       show whether the bandwidth constraints change the optimum
    p1-heur:<policy>   one decision epoch of a policy at P1's decision time, all resources free: the
                       heuristic counterpart of P1, for optimality gaps; also P1 solved over the jobs the
                       policy started (``p1_own_set_cost_usd``, ``p1_own_set_status``), which splits the gap
                       into selection and placement (``bace_opt.gaps.decompose``; method_args
                       ``own_set_time_limit``, default 60 s, 0 skips it) and the decision time ``decision_s``
    p2:<solver>        P2 offline schedule solved exactly (cpsat, highs)
Instance families (``RunSpec.family``): paper, random, file (instance_args: path), trace (instance_args: those of
``builders.trace.trace_instance``).  A trace run's row carries in ``extra`` what users read from the run
(``evaluate.workload_report``: JCT p50/p90/p99, mean wait and slowdown, GPU utilisation, offered load), over the
steady-state window ``method_args["window_jobs"] = [a, b]`` when given.
A failure of one run becomes a row with status ``error`` and the message; the batch goes on.
"""
from __future__ import annotations

import functools
import json
import resource
import subprocess
import time
from pathlib import Path

from .compare import per_job_figures
from .spec import TIME_LIMIT, RunSpec

ROOT = Path(__file__).resolve().parents[2]


def build_instance(spec: RunSpec):
    """The instance of a run.  ``bandwidth_scale`` of the random and file families multiplies every link's
    bandwidth after building (``builders.transforms.scale_bandwidth``); the paper family scales its own."""
    a = dict(spec.instance_args)
    scale = a.pop("bandwidth_scale", None) if spec.family in ("random", "file") else None
    inst = _build(spec.family, spec.seed, a)
    if scale is not None:
        from ..builders.transforms import scale_bandwidth
        inst = scale_bandwidth(inst, float(scale))
    return inst


def _build(family: str, seed: int, a: dict):
    if family == "paper":
        from ..builders.paper import paper_instance
        return paper_instance(seed=seed, **a)
    if family == "random":
        from ..builders.synthetic import random_instance
        return random_instance(seed=seed, **a)
    if family == "trace":
        from ..builders.trace import trace_instance
        return trace_instance(seed=seed, **a)
    if family == "file":
        from ..instance import load_instance
        p = Path(a["path"])
        return load_instance(p if p.is_absolute() else ROOT / p)
    raise ValueError(f"unknown instance family {family!r}")


def p1_heuristic(inst, policy: str, **options):
    """One decision of ``policy`` at P1's decision time t0 (the latest arrival), every resource free; the
    jobs it does not start are ``not_started``.  Returns a priced Schedule (``gaps.decompose.heuristic_epoch``)."""
    from ..gaps.decompose import heuristic_epoch
    return heuristic_epoch(inst, policy, **options)


#: the evaluator's metrics copied into a results row when the evaluator reports them
MECHANISM_METRICS = ("peak_link_utilisation", "mean_link_utilisation", "links_used", "total_stall_s",
                     "total_energy_kwh", "energy_weighted_price_usd_per_kwh", "idle_electricity_usd",
                     "total_electricity_incl_idle_usd", "jobs_not_started", "jobs_comm_bound")
#: a link whose peak reservation is within this fraction of its capacity counts as tight
TIGHT = 1e-6


def network_figures(rep) -> dict:
    """Where the network binds, from the evaluator's metrics: peak and time-weighted link utilisation,
    stall time, energy-weighted price, the idle-GPU cost reading; ``tight_links``: links whose peak
    reservation reaches their capacity (within 1e-6, i.e. a binding bandwidth constraint of P1), and
    ``links_over_90pct``: links whose peak reservation exceeds 90 % of it."""
    m = rep.metrics
    out = {k: m[k] for k in MECHANISM_METRICS if k in m}
    per = m.get("link_utilisation")
    if isinstance(per, dict):
        peaks = [v.get("peak") or 0.0 for v in per.values()]
        out["tight_links"] = sum(1 for u in peaks if u >= 1.0 - TIGHT)
        out["links_over_90pct"] = sum(1 for u in peaks if u > 0.9)
    return out


def run_method(inst, method: str, args: dict):
    kind, _, name = method.partition(":")
    args = dict(args)
    if kind == "sim":
        from ..sim import simulate
        return simulate(inst, policy=name, **args)
    if kind in ("p1", "p1-nobw"):
        from ..exact import solve
        return solve(inst, problem="placement", solver=name, **args)
    if kind == "p2":
        from ..exact import solve
        return solve(inst, problem="schedule", solver=name, **args)
    if kind == "p1-heur":
        return p1_heuristic(inst, name, **args)
    raise ValueError(f"unknown method {method!r} (kinds: sim, p1, p1-nobw, p1-heur, p2)")


#: link capacity factor of ``p1-nobw``: P1 with bandwidth constraints that cannot bind
NO_BANDWIDTH_SCALE = 1e6


@functools.lru_cache(maxsize=1)
def versions() -> str:
    import importlib.metadata as md
    out = {}
    for pkg in ("bace-opt", "highspy", "ortools", "pyomo", "networkx", "numpy", "pandas"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return json.dumps(out, sort_keys=True)


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    try:
        r = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                           timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (r.stdout.strip() + ("+dirty" if dirty else "")) if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def timed_out(e: BaseException) -> bool:
    """Whether a run's exception is a time limit's: a ``TimeoutError``, or a policy's call stopped by the gate's
    limit (its rule ``time limit``: ``policies.gate.violation``)."""
    from ..policies import PolicyError
    if isinstance(e, TimeoutError):
        return True
    return isinstance(e, PolicyError) and (": time limit: " in str(e)
                                           or type(e.__context__).__name__ == "PolicyTimeout")


def trace_figures(inst, sched, rep, window=None) -> dict:
    """The compact figures of a trace run for its row's ``extra`` (``evaluate.workload_report``)."""
    from ..evaluate import workload_report
    w = workload_report(inst, sched, report=rep, window_jobs=tuple(window) if window else None)
    sd = w["slowdown"]
    out = {"offered_load": inst.meta["trace"]["offered_load"], "window_jobs": w["jobs"],
           "p50_jct_s": w["jct_s"]["p50"], "p90_jct_s": w["jct_s"]["p90"], "p99_jct_s": w["jct_s"]["p99"],
           "mean_jct_s": w["jct_s"]["mean"], "mean_wait_s": w["wait_s"]["mean"], "p99_wait_s": w["wait_s"]["p99"],
           "mean_slowdown": sd["mean"], "p99_slowdown": sd["p99"], "gpu_utilisation": w["gpu_utilisation"]["mean"],
           "cost_usd": w["cost"]["total_usd"]}
    return {k: v for k, v in out.items() if v is not None}


class _Done(Exception):
    """The optical rows are complete without the evaluator (they carry no job schedule)."""


def execute(spec: RunSpec) -> dict:
    """Run one spec; never raises (a failure becomes a row with status 'error')."""
    from ..evaluate import evaluate
    t_start = time.perf_counter()
    row = {"run_id": spec.run_id, "suite": spec.suite, "family": spec.family, "size": spec.size,
           "seed": spec.seed, "method": spec.method,
           "options": json.dumps({"instance": dict(spec.instance_args), "method": dict(spec.method_args)},
                                 sort_keys=True)}
    try:
        if spec.family == "optical":   # the optical layer and CBA: rows from bench.optical
            from .optical import execute_optical
            row.update(execute_optical(spec))
            raise _Done
        inst = build_instance(spec)
        if spec.method.startswith("p1-nobw:"):
            # P1 with link capacities lifted: does bandwidth change the optimum?  (evaluated on that instance)
            from ..builders.transforms import scale_bandwidth
            inst = scale_bandwidth(inst, NO_BANDWIDTH_SCALE)
        row["instance"] = inst.name
        row["jobs"] = len(inst.jobs)
        margs = dict(spec.method_args)
        own_tl = margs.pop("own_set_time_limit", 60) if spec.method.startswith("p1-heur:") else 0
        window = margs.pop("window_jobs", None)
        sched = run_method(inst, spec.method, margs)
        rep = evaluate(inst, sched)
        if spec.family == "trace":
            row["extra"] = trace_figures(inst, sched, rep, window)
        m = rep.metrics
        row.update(feasible=rep.feasible, jobs_done=m["jobs_done"], jobs_blocked=m["jobs_blocked"],
                   avg_jct_s=m["avg_jct_s"], total_electricity_usd=m["total_electricity_usd"],
                   total_egress_usd=m["total_egress_usd"], total_cost_usd=m["total_cost_usd"],
                   total_run_s=m["total_run_s"], makespan_s=m["makespan_s"])
        row.update(network_figures(rep))
        row["per_job"] = per_job_figures(rep.figures)
        if spec.method.startswith(("p1:", "p1-nobw:", "p1-heur:")):
            # P1's own level-2 objective (prices at t0, egress only if the instance's objective counts it),
            # recomputed from the evaluator's run times for the exact and the heuristic schedules alike
            from ..exact.placement import cost_at_t0_usd
            t0 = sched.meta.get("t0", sched.meta.get("t0_s"))
            row["p1_cost_usd"] = cost_at_t0_usd(inst, [p for p in sched.plans if p.status == "done"], t0)
            if spec.method.startswith("p1-heur:"):
                row["decision_s"] = sched.meta.get("decision_s")
                if own_tl:
                    # the P1 optimum over the heuristic's own started jobs: the selection/placement split
                    from ..gaps.decompose import own_set_optimum
                    own = own_set_optimum(inst, sched, t0, time_limit_s=float(own_tl))
                    if own is not None:
                        row.update(p1_own_set_cost_usd=own.cost_usd, p1_own_set_status=own.status)
        s = sched.solver
        if s is not None:
            row.update(status=s.status, objective=s.objective, bound=s.bound, gap=s.gap, nodes=s.nodes,
                       build_s=s.build_s, solve_s=s.solve_s)
            if s.extra:
                row["extra"] = {k: v for k, v in s.extra.items() if isinstance(v, (int, float, str, bool))}
        else:
            row["status"] = "done" if rep.feasible else "infeasible-schedule"
        if not rep.feasible:
            row["error"] = "; ".join(str(v) for v in rep.violations[:3])
    except _Done:
        pass
    except Exception as e:  # one failed run must not stop the batch: record it
        row["status"] = TIME_LIMIT if timed_out(e) else "error"
        row["error"] = f"{type(e).__name__}: {e}"[:500]
    row["wall_s"] = time.perf_counter() - t_start
    row["peak_mem_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    row["versions"] = versions()
    row["git_commit"] = git_commit()
    return row
