"""The evaluator: the one piece of code that checks and prices every schedule.

``evaluate(inst, schedule)`` checks the feasibility rules of docs/system-model.md over time and
recomputes every figure; ``make_schedule(inst, plans, method)`` turns a method's decisions (``JobPlan``s)
into a priced ``Schedule``.  Both use ``price_plan``; no method computes its own metrics.

Rules checked (numbers as in the spec):
  1  s_j >= a_j; every block's region exists and can host the job; sum n_i = S_j; consecutive blocks in
     different regions; one hop per pair of consecutive blocks; each hop's route is a simple path of
     existing links from block i's region to block i+1's; reserved bandwidth > 0.
  2  at every instant and every region: GPUs in use <= G_r   (intervals [start, finish) are half-open)
  3  at every instant and every link direction: reserved Gbit/s <= B_e (a hop reserves w_i both ways)
  4  reported start/finish, iteration time, energy and costs equal the formulas (relative 1e-6), and the
     reported metrics equal the recomputed ones.
  0  schedule-level: the schedule names this instance's jobs, each exactly once, with a consistent status.

This module holds the checks and ``make_schedule``; a job's figures are priced in ``figures.py``, the metrics
block is computed in ``metrics.py``, the ``Report`` the evaluator returns is in ``report.py``, and what users read
from a run (JCT percentiles, slowdown and JCT by size class, utilisation and cost over time) in ``workload.py``.  Every
public name of those is importable from here (``bace_opt.evaluate``).
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Mapping

from ..instance import Instance
from ..schedule import JobEntry, JobPlan, Schedule, SolverInfo
from .figures import ITERATION_MODELS, JobFigures, iteration_time_s, price_plan
from .metrics import COST_READINGS, MONEY_KEYS, compute_metrics, link_metrics, objective_cost_usd
from .report import MAX_LINK_LINES, Report, Violation, format_metrics
from .workload import compute_workload, format_workload

__all__ = ["ABS_TOL", "BW_TOL", "COST_READINGS", "ITERATION_MODELS", "JobFigures", "MAX_LINK_LINES", "MONEY_KEYS",
           "REL_TOL", "Report", "Violation", "check_plan", "check_reported_metrics", "compute_metrics", "evaluate",
           "format_metrics", "format_workload", "workload_report", "iteration_time_s", "link_metrics", "make_schedule", "objective_cost_usd", "price_plan"]

REL_TOL = 1e-6
ABS_TOL = 1e-9
BW_TOL = 1e-9  # relative slack on link capacity (floating point sums of reservations)


def check_plan(inst: Instance, plan: JobPlan) -> list[Violation]:
    """Rule 1 (static part) for one job plan."""
    out: list[Violation] = []
    name = plan.name

    def bad(msg):
        out.append(Violation(1, f"job {name!r}: {msg}", job=name))

    if name not in inst.job_index:
        out.append(Violation(0, f"job {name!r} is not in instance {inst.name!r}", job=name))
        return out
    job = inst.job(name)
    if plan.status != "done":
        if plan.blocks or plan.hops or plan.start_s is not None:
            bad(f"status {plan.status!r} but it has a start time or a placement")
        return out
    if plan.start_s is None or not math.isfinite(plan.start_s):
        bad("status 'done' needs a finite start_s")
    elif plan.start_s < job.arrival_s - ABS_TOL:
        bad(f"starts at {plan.start_s:g} s, before its arrival at {job.arrival_s:g} s")
    if not plan.blocks:
        bad("status 'done' needs at least one block")
        return out
    eligible = set(inst.eligible_regions(job))
    for i, b in enumerate(plan.blocks):
        if b.region not in inst.region_index:
            bad(f"blocks[{i}].region {b.region!r} is not a region of the instance")
        elif b.region not in eligible:
            bad(f"blocks[{i}].region {b.region!r} cannot host a stage of this job (GPUs or GPU memory)")
        if b.stages < 1:
            bad(f"blocks[{i}].stages must be >= 1, got {b.stages}")
        if i and b.region == plan.blocks[i - 1].region:
            bad(f"blocks[{i - 1}] and blocks[{i}] are both in {b.region!r}: merge consecutive blocks")
    n = sum(b.stages for b in plan.blocks)
    if n != job.stages:
        bad(f"blocks hold {n} stages, the job has {job.stages}")
    if len(plan.hops) != len(plan.blocks) - 1:
        bad(f"{len(plan.blocks)} blocks need {len(plan.blocks) - 1} hops, got {len(plan.hops)}")
        return out
    for i, h in enumerate(plan.hops):
        src, dst = plan.blocks[i].region, plan.blocks[i + 1].region
        r = h.route
        if len(r) < 2 or r[0] != src or r[-1] != dst:
            bad(f"hops[{i}].route must run from {src!r} to {dst!r}, got {list(r)}")
            continue
        if len(set(r)) != len(r):
            bad(f"hops[{i}].route {list(r)} visits a region twice: not a simple path")
        for u, v in zip(r, r[1:]):
            if (u, v) not in inst.link_index:
                bad(f"hops[{i}].route {list(r)} uses {u!r}-{v!r}, which is not a link")
        if not (h.reserved_gbps > 0 and math.isfinite(h.reserved_gbps)):
            bad(f"hops[{i}].reserved_gbps must be > 0, got {h.reserved_gbps}")
    return out


def _close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), ABS_TOL)


def make_schedule(inst: Instance, plans: Iterable[JobPlan], method: str, solver: SolverInfo | None = None,
                  meta: dict | None = None, check: bool = True, iteration_model: str = "analytic") -> Schedule:
    """Price a method's plans into a Schedule (jobs in instance order).  Jobs the plans omit are listed
    as ``unscheduled``.  With ``check`` (default), a plan that breaks rule 1 raises ValueError: a method
    must never emit one."""
    by_name = {p.name: p for p in plans}
    unknown = set(by_name) - set(inst.job_index)
    if unknown:
        raise ValueError(f"plans name jobs not in the instance: {sorted(unknown)}")
    entries, figs, statuses = [], {}, {}
    for job in inst.jobs:
        p = by_name.get(job.name) or JobPlan(job.name, "unscheduled")
        statuses[job.name] = p.status
        if p.status != "done":
            entries.append(JobEntry(name=p.name, status=p.status))
            continue
        v = check_plan(inst, p)
        if v:
            if check:
                raise ValueError(f"method {method!r} produced an invalid plan: " + "; ".join(map(str, v)))
            # kept unpriced so that the evaluator can report it
            entries.append(JobEntry(name=p.name, status="done", start_s=p.start_s, blocks=p.blocks, hops=p.hops))
            continue
        f = price_plan(inst, p, iteration_model)
        figs[job.name] = f
        entries.append(JobEntry(name=p.name, status="done", start_s=f.start_s, blocks=p.blocks, hops=p.hops,
                                finish_s=f.finish_s, iteration_s=f.iteration_s, energy_kwh=f.energy_kwh,
                                electricity_usd=f.electricity_usd, egress_usd=f.egress_usd))
    meta = dict(meta or {})
    if iteration_model != "analytic":
        meta["iteration_model"] = iteration_model
    return Schedule(instance=inst.name, method=method, jobs=tuple(entries),
                    metrics=compute_metrics(inst, statuses, figs, {n: by_name[n] for n in figs}),
                    solver=solver, meta=meta)


# ---------------------------------------------------------------------- the evaluator

def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def evaluate(inst: Instance, schedule: Schedule, check_reported: bool = True,
             iteration_model: str | None = None) -> Report:
    """Check ``schedule`` against ``inst`` (rules 0-4) and recompute all figures and metrics.

    ``iteration_model``: how T_iter is computed (``analytic`` or a pipeline schedule kind); default: the one
    the schedule's ``meta.iteration_model`` states, else ``analytic``."""
    if iteration_model is None:
        iteration_model = str(schedule.meta.get("iteration_model", "analytic"))
    viol: list[Violation] = []
    if schedule.instance and schedule.instance != inst.name:
        viol.append(Violation(0, f"schedule is for instance {schedule.instance!r}, not {inst.name!r}"))
    seen: dict[str, int] = defaultdict(int)
    statuses: dict[str, str] = {}
    figures: dict[str, JobFigures] = {}
    plans: dict[str, JobPlan] = {}
    for e in schedule.jobs:
        seen[e.name] += 1
        if seen[e.name] == 2:
            viol.append(Violation(0, f"job {e.name!r} appears more than once", job=e.name))
        if seen[e.name] > 1:
            continue
        v = check_plan(inst, e.plan)
        viol += v
        if e.name not in inst.job_index:
            continue
        statuses[e.name] = e.status
        if e.status == "done" and not v:
            figures[e.name] = f = price_plan(inst, e.plan, iteration_model)
            plans[e.name] = e.plan
            if check_reported:
                for attr in ("finish_s", "iteration_s", "energy_kwh", "electricity_usd", "egress_usd"):
                    rep, true = getattr(e, attr), getattr(f, attr)
                    if rep is not None and not _close(rep, true):   # absent figures are computed, not missing
                        viol.append(Violation(4, f"job {e.name!r}: reported {attr} = {_fmt(rep)}, "
                                                 f"the model gives {true:.9g}", job=e.name))
    for job in inst.jobs:
        if job.name not in seen:
            viol.append(Violation(0, f"job {job.name!r} of the instance is missing from the schedule", job=job.name))
    viol += _check_capacity(inst, schedule, figures)
    metrics = compute_metrics(inst, statuses, figures, plans)
    if check_reported and schedule.metrics:
        viol += check_reported_metrics(schedule.metrics, metrics)
    return Report(feasible=not viol, violations=viol, figures=figures, metrics=metrics, statuses=statuses,
                  arrival_s={n: inst.job(n).arrival_s for n in statuses})


def workload_report(inst: Instance, schedule: Schedule, window_jobs: tuple[int, int] | None = None,
                    window_s: tuple[float, float] | None = None, bin_s: float = 3600.0,
                    report: Report | None = None) -> dict[str, Any]:
    """What users read from a run (``workload.py``): JCT, queueing delay and slowdown percentiles, by size class,
    cost, the JCT CDF, GPU utilisation and cost per day, a trace's states; from the evaluator's ``Report`` of the
    pair (``report``, else ``evaluate`` runs here).  ``window_jobs=(a, b)`` (arrival ranks) or ``window_s=(t0, t1)``:
    a steady-state window for the per-job figures."""
    rep = report if report is not None else evaluate(inst, schedule)
    return compute_workload(inst, schedule, rep, window_jobs=window_jobs, window_s=window_s, bin_s=bin_s)


def check_reported_metrics(reported: Mapping[str, Any], true: Mapping[str, Any]) -> list[Violation]:
    """Rule 4 for the metrics block: every reported key the evaluator knows must equal its recomputation
    (numbers to relative 1e-6, nested objects key by key).  Keys a schedule does not report are not checked,
    so a schedule written before a metric existed still evaluates.  Before ``not_started`` existed (no
    ``jobs_not_started`` reported), P1's not-started jobs were reported as blocked: ``jobs_blocked`` and
    ``blocking_probability`` are then checked under that older definition (blocked + not started)."""
    out: list[Violation] = []
    expected = dict(true)
    if "jobs_not_started" not in reported and true.get("jobs_not_started"):
        n_jobs = sum(true[k] for k in ("jobs_done", "jobs_blocked", "jobs_not_started", "jobs_unscheduled"))
        expected["jobs_blocked"] = true["jobs_blocked"] + true["jobs_not_started"]
        expected["blocking_probability"] = expected["jobs_blocked"] / n_jobs if n_jobs else 0.0
    for k, t in expected.items():
        if k in reported:
            out += [Violation(4, f"metrics.{where}: reported {a}, recomputed {b}")
                    for where, r, v in _differences(k, reported[k], t) for a, b in [_two(r, v)]]
    return out


def _two(rep: Any, true: Any) -> tuple[str, str]:
    """A reported and a recomputed value as a message shows them: never the same text for two values that
    differ (before: "reported 8, recomputed 8" for the text "8", and 6 significant digits cannot show a
    difference of 1e-6).  Six significant digits where they differ, else every digit; text reported where a
    number is expected is quoted and called text."""
    a, b = _fmt(rep), _fmt(true)
    if isinstance(rep, str):
        a = f"{rep!r} (text, not a number)" if isinstance(true, (int, float)) else repr(rep)
    elif a == b:
        a, b = (repr(v) if isinstance(v, (int, float)) else a for v, a in ((rep, a), (true, b)))
        if a == b:       # e.g. 8 and 8.0: equal numbers of two types (a count reported as a float)
            a, b = f"{a} ({type(rep).__name__})", f"{b} ({type(true).__name__})"
    return a, b


def _differences(where: str, rep: Any, true: Any) -> list[tuple[str, Any, Any]]:
    if isinstance(true, Mapping):
        if not isinstance(rep, Mapping):
            return [(where, rep, "an object")]
        out = []
        for k in sorted(set(rep) | set(true)):
            if k not in true:
                out.append((f"{where}.{k}", rep[k], None))
            elif k not in rep:
                out.append((f"{where}.{k}", None, true[k]))
            else:
                out += _differences(f"{where}.{k}", rep[k], true[k])
        return out
    if rep is None and true is None:
        return []
    if true is not None and isinstance(rep, (int, float)) and not isinstance(rep, bool) \
            and _close(float(rep), float(true)):
        return []
    return [(where, rep, true)]


def _check_capacity(inst: Instance, schedule: Schedule, figures: dict[str, JobFigures]) -> list[Violation]:
    """Rules 2 and 3: sweep job starts and finishes; report each maximal interval over capacity."""
    # resource keys: ("gpu", region) and ("bw", link index, direction 0: a->b, 1: b->a)
    usage: dict[str, list] = {}
    events: list[tuple[float, int, str]] = []   # (time, +1 start / -1 finish, job)
    for e in schedule.jobs:
        f = figures.get(e.name)
        if f is None or e.status != "done":
            continue
        job = inst.job(e.name)
        res: dict[tuple, float] = defaultdict(float)
        for b in e.blocks:
            res[("gpu", b.region)] += job.gpus_per_stage * b.stages
        for h in e.hops:
            for u, v in zip(h.route, h.route[1:]):
                li = inst.link_index[(u, v)]
                res[("bw", li, 0)] += h.reserved_gbps
                res[("bw", li, 1)] += h.reserved_gbps
        usage[e.name] = list(res.items())
        if f.finish_s > f.start_s:
            events.append((f.start_s, 1, e.name))
            events.append((f.finish_s, -1, e.name))
    events.sort(key=lambda x: (x[0], x[1]))
    cap: dict[tuple, float] = {}
    for r in inst.regions:
        cap[("gpu", r.name)] = r.gpus
    for i, l in enumerate(inst.links):
        cap[("bw", i, 0)] = l.bandwidth_gbps
        cap[("bw", i, 1)] = l.bandwidth_gbps
    load: dict[tuple, float] = defaultdict(float)
    running: dict[tuple, set] = defaultdict(set)
    open_v: dict[tuple, tuple[float, float, set]] = {}  # resource -> (t0, peak, jobs)
    out: list[Violation] = []

    def over(key) -> bool:
        c = cap[key]
        return load[key] > c + (0 if key[0] == "gpu" else BW_TOL * max(1.0, c))

    def close(key, t1):
        t0, peak, jobs = open_v.pop(key)
        out.append(_cap_violation(inst, key, t0, t1, peak, jobs))

    i, n = 0, len(events)
    while i < n:
        t = events[i][0]
        touched = set()
        while i < n and events[i][0] == t:
            _, kind, name = events[i]
            for key, amt in usage[name]:
                load[key] += kind * amt
                if kind > 0:
                    running[key].add(name)
                else:
                    running[key].discard(name)
                touched.add(key)
            i += 1
        for key in touched:
            if over(key):
                if key in open_v:
                    t0, peak, jobs = open_v[key]
                    open_v[key] = (t0, max(peak, load[key]), jobs | running[key])
                else:
                    open_v[key] = (t, load[key], set(running[key]))
            elif key in open_v:
                close(key, t)
    for key in list(open_v):
        close(key, math.inf)
    out.sort(key=lambda v: (v.t0, v.resource))
    return out


def _cap_violation(inst: Instance, key, t0, t1, peak, jobs) -> Violation:
    who = ", ".join(sorted(jobs))
    if key[0] == "gpu":
        res = f"region {key[1]}"
        msg = (f"region {key[1]!r}: {peak:g} GPUs in use > {inst.region(key[1]).gpus} available "
               f"from t={t0:g} s to t={t1:g} s (jobs: {who})")
        rule = 2
    else:
        l = inst.links[key[1]]
        a, b = (l.a, l.b) if key[2] == 0 else (l.b, l.a)
        res = f"link {a}->{b}"
        msg = (f"link {a}->{b}: {peak:.6g} Gbit/s reserved > {l.bandwidth_gbps:g} available "
               f"from t={t0:g} s to t={t1:g} s (jobs: {who})")
        rule = 3
    return Violation(rule, msg, resource=res, t0=t0, t1=t1)
