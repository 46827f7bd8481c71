"""The online bracket at trace scale (issue 45, item 3): a week of arrivals, hundreds of jobs.

``gap(..., online=True)`` on a trace instance (``is_trace``: ``inst.meta`` holds the record that
``builders.trace.trace_instance`` writes) or with ``p1=False`` skips the one-epoch P1 part and measures each
policy's whole run against ``trace_figures``, which scale to the trace:

* mean JCT lower bound, certified, in two stages that each only raise it (``timeline``):

  1. the closed-form floor: every job at its shortest run time after its arrival (``exact.p2.relax.job_modes``:
     the fastest mode over every placement, stall or not), so JCT_j >= R_j for any schedule and the mean JCT is
     at least mean_j R_j;
  2. the packing relaxation over the WHOLE trace (with start windows, ``exact.p2.trace_area``), coarse first,
     then each rung on the finest unit predicted to finish in the time left (``trace_bound.whole_trace_bound``;
     ``WHOLE_SHARE`` of the lower bound's time): it keeps what the windows lose, the long jobs still holding GPUs
     when a later burst arrives;
  3. the packing relaxation (``exact.p2.lower.packing_lower_bound``, P2.35-P2.38, its LP) by WINDOWS of
     consecutive arrivals (``WINDOW_JOBS`` jobs each, on the whole fleet).  Valid: restrict any schedule of all
     jobs to one window's jobs; it is a feasible schedule of that window alone (the others only used capacity),
     so the window's total JCT in it is at least the window's optimum, hence at least the window's relaxation
     (and its floor).  Summed over the windows (a partition of the jobs), sum_w n_w max(LB_w, floor_w) is at most
     the optimum's total JCT.  A window whose LP does not finish in time counts at its floor, so the bound after
     each window is already certified.  Windows lose the interaction between windows (jobs of one window still
     running when the next arrives), so at high load the bound is weaker than one relaxation over all jobs would
     be, but each window's LP is small, on a fine time unit, and the sum scales linearly with the trace.

* best mean JCT found: the policies' complete runs (the evaluator accepted them), the planning policy's run
  (``trace_bound.planner_run``: plan-jct, unless it is one of the policies) and the OFFLINE clairvoyant schedule
  seeded by it (``trace_bound.offline_upper``, ``gaps.trace_offline``: it knows the future, an upper end only),
  together up to ``PLANNER_SHARE`` of the upper end's time, and, with the time left, the list scheduler's local
  search (``exact.p2.scale.best_list_schedule``) started from their job orders; its set-up is stopped at the deadline (``clock.raise_at_deadline``), so the
  bracket arrives within the limit.  A bound above the best schedule (beyond rounding) is a bug: it is dropped to
  the floor with a note and ``bound_conflict``, never capped;
* mean WAITING time (JCT minus the job's shortest run time R_j, which long runs do not dilute): mean wait = mean
  JCT - mean_j R_j, the same constant subtracted from every schedule's mean JCT, so the JCT bracket gives the
  wait bracket: lower bound max(JCT bound - mean R, 0), best found JCT best - mean R.  (Not the queueing delay
  ``avg_wait_s`` of the metrics, start minus arrival: this one also counts a run slower than the fastest.)
* cost lower bound: the larger of every job at its cheapest rate for its shortest run time (``job_modes``, as
  ``p2_figures``; 0 where a region's price touches 0, as the shipped European series do) and, where no price is
  negative, every job for its shortest run time in its cheapest price window after arrival
  (``windowed_cost_bounds``).

``Timeline`` records the bound and the incumbent as the stages move (``{t_s, bound, incumbent, bound_source}``,
the field names of the P1 solve's ``timeline``).
"""
from __future__ import annotations

import dataclasses
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ..exact.p1.certify import Timeline as SolveTimeline
from ..instance import Instance
from .trace_bound import PLANNER, PLANNER_SHARE, SOURCE_WHOLE, offline_upper, planner_run, whole_trace_bound

log = logging.getLogger(__name__)

#: jobs per window of the windowed packing relaxation (its LP: about 1-3 s a window at fleet20 on 2 shared cores)
WINDOW_JOBS = 30
#: time units per window's relaxation (``packing_lower_bound``'s ``max_units``)
WINDOW_UNITS = 400
#: trace_figures' share of its time for the windowed relaxation (the list scheduler's search gets the rest)
WINDOWS_SHARE = 0.5
#: the share of the list scheduler's time kept for what follows its search (its last list schedule, building
#: and pricing the schedule: seconds at 300 jobs), so that its result arrives before the deadline
LIST_RESERVE = 0.15
#: a stage that would get less time than this is skipped, with a note
MIN_STAGE_S = 1.0

#: where a bound of the trace bracket comes from (``Timeline.bound_source``)
SOURCE_NONE = "none"
SOURCE_FLOOR = "floor: every job at its shortest run time after arrival"
SOURCE_WINDOWS = "packing relaxation (P2.35-P2.38, LP) by windows of arrivals, floor elsewhere"
TRACE_SOURCES = (SOURCE_FLOOR, SOURCE_WINDOWS, SOURCE_WHOLE, SOURCE_NONE)
#: the share of the lower bound's time for the whole trace's relaxation (``trace_bound``); the windows get the rest
WHOLE_SHARE = 0.5
#: a bound may exceed a schedule's mean JCT by this much (relative; rounding) and still prove it
CONFLICT_TOL = 1e-6
#: a schedule within this much of the bound (relative) closes the bracket: the upper end's search is skipped
CLOSED_TOL = 1e-6


@dataclass
class Timeline(SolveTimeline):
    """The trace bracket's time line: the P1 solve's (``exact.p1.certify.Timeline``, one schema), with the trace
    bracket's bound sources."""
    sources: tuple = TRACE_SOURCES


def is_trace(inst: Instance) -> bool:
    """True for an instance built from a trace (``builders.trace``: ``meta["trace"]``)."""
    return isinstance((inst.meta or {}).get("trace"), dict)


def shortest_runs(inst: Instance) -> tuple[list[float], list[float]] | None:
    """Per job (instance order): its shortest run time R_j over every placement (s) and its cheapest-rate cost
    lower bound (USD), ``exact.p2.relax.job_modes``; None when some job fits nowhere."""
    from ..exact.p2.relax import job_modes
    runs, costs = [], []
    for job in inst.jobs:
        modes, c = job_modes(inst, job)
        if not modes:
            return None
        runs.append(min(m[-1] for m in modes))
        costs.append(c)
    return runs, costs


def min_window_integral(curve, length: float, after: float) -> float:
    """min over starts s >= ``after`` of the integral of the price over [s, s + length) (USD/kWh x s), exact for a
    step price (``formulas.PriceCurve``: the first value before its start, the last after its end): the integral
    is piecewise linear in s, so its minimum lies where s or s + length meets a step, or at s = ``after``."""
    import numpy as np
    if curve.values is None:
        return curve.constant * length
    edges = curve.start + curve.step * np.arange(len(curve.values) + 1)
    s = np.concatenate(([after], edges, edges - length))
    s = s[s >= after]
    return float(np.min(_cum_price(curve, edges, s + length) - _cum_price(curve, edges, s)))


def _cum_price(curve, edges, t):
    """The price's integral from the curve's start to each t (vectorised ``PriceCurve.integral``)."""
    import numpy as np
    v = curve.values
    out = np.interp(t, edges, curve.cum)
    out = np.where(t < edges[0], (t - edges[0]) * v[0], out)
    return np.where(t > edges[-1], curve.cum[-1] + (t - edges[-1]) * v[-1], out)


def windowed_cost_bounds(inst: Instance, runs: Sequence[float]) -> list[float] | None:
    """Per job, a lower bound on its electricity (USD) that sees the price over time: its stages on the regions
    whose cheapest window of its shortest run time R_j (from its arrival on) costs least, cheapest first within
    each region's capacity.  Valid when no price is negative: any run lasts at least R_j on the same GPUs, and
    cutting it to its first R_j s (at prices >= 0) only lowers its cost, which is then at least the cheapest
    window's.  None when some price is negative (then only ``job_modes``' bound holds)."""
    from ..formulas import price_curves
    curves = price_curves(inst)
    if any(min(c.values) < 0 if c.values is not None else c.constant < 0 for c in curves.values()):
        return None
    out = []
    for job, rj in zip(inst.jobs, runs):
        elig = [r for r in inst.eligible_regions(job) if inst.region(r).gpus >= job.gpus_per_stage]
        per_stage = []
        for r in elig:
            reg = inst.region(r)
            kw = job.gpus_per_stage * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
            per_stage.append((kw * min_window_integral(curves[r], rj, job.arrival_s) / 3600.0,
                              min(job.stages, reg.gpus // job.gpus_per_stage)))
        left, usd = job.stages, 0.0
        for c, cap in sorted(per_stage):
            k = min(left, cap)
            usd += k * c
            left -= k
            if not left:
                break
        out.append(usd)
    return out


def mean_shortest_run_s(inst: Instance) -> float | None:
    """mean_j R_j: the floor of the mean JCT, and what a JCT figure loses to become a waiting-time figure."""
    sr = shortest_runs(inst)
    return None if sr is None or not sr[0] else math.fsum(sr[0]) / len(sr[0])


def windowed_bound(inst: Instance, runs: Sequence[float], time_limit: float, threads=None, seed: int = 1,
                   timeline: Timeline | None = None) -> dict[str, Any]:
    """The packing relaxation by windows of ``WINDOW_JOBS`` consecutive arrivals (module doc), within
    ``time_limit`` wall-clock seconds (a window left less than ``MIN_STAGE_S`` counts at its floor).  Returns
    lower_bound_jct_s (certified: the windows' bounds and the others' floors, over all jobs), windows,
    windows_solved, window_jobs."""
    from ..exact.p2.lower import packing_lower_bound
    from ..solvers.base import SolveOptions
    t0 = time.perf_counter()
    n = len(inst.jobs)
    order = sorted(range(n), key=lambda j: (inst.jobs[j].arrival_s, j))
    wins = [order[i:i + WINDOW_JOBS] for i in range(0, n, WINDOW_JOBS)]
    total = [math.fsum(runs[j] for j in w) for w in wins]       # each window's total JCT, at its floor so far
    solved = 0
    for k, w in enumerate(wins):
        left = time_limit - (time.perf_counter() - t0)
        if left < MIN_STAGE_S:
            break
        sub = dataclasses.replace(inst, jobs=tuple(inst.jobs[j] for j in w))
        r = packing_lower_bound(sub, SolveOptions(time_limit_s=left, threads=threads, seed=seed),
                                max_units=WINDOW_UNITS)
        lb = r.get("lower_bound_jct_s")
        if lb is None or not math.isfinite(lb):
            continue
        solved += 1
        if lb * len(w) > total[k]:
            total[k] = lb * len(w)
            if timeline is not None:
                timeline.add(math.fsum(total) / n, None, SOURCE_WINDOWS)
    return {"lower_bound_jct_s": math.fsum(total) / n, "windows": len(wins), "windows_solved": solved,
            "window_jobs": WINDOW_JOBS, "windows_s": time.perf_counter() - t0}


def trace_figures(inst: Instance, time_limit: float, threads=None, runs: Sequence[tuple] = (),
                  seed: int = 1) -> dict:
    """The certified bracket at trace scale (module doc) within ``time_limit`` wall-clock seconds; the keys of
    ``report.p2_figures`` plus mean_shortest_run_s, wait_lower_bound_s, wait_best_s, windows and ``timeline``.
    ``runs``: the policies' (name, schedule, complete)."""
    from ..evaluate.metrics import objective_cost_usd
    t0 = time.perf_counter()
    tl = Timeline()             # t_s from the command's start (clock.command_start), as the P1 solve's
    out: dict[str, Any] = {"notes": [], "bracket_kind": "trace"}
    sr = shortest_runs(inst)
    if sr is None:
        out["notes"].append("a job fits no region: no lower bound")
        out.update(jct_lower_bound_s=None, jct_lower_bound_kind="none", cost_lower_bound_usd=None)
        rmean = None
    else:
        rs, cs = sr
        rmean = math.fsum(rs) / len(rs)
        tl.add(rmean, None, SOURCE_FLOOR)
        wc = windowed_cost_bounds(inst, rs)
        out.update(cost_lower_bound_usd=math.fsum(cs),
                   cost_lower_bound_kind="each job at its cheapest rate for its shortest run time")
        if wc is not None and math.fsum(wc) > math.fsum(cs):
            out.update(cost_lower_bound_usd=math.fsum(wc),
                       cost_lower_bound_kind="each job for its shortest run time in the cheapest price window "
                                             "after its arrival, cheapest regions first")
    ok = [(name, sched) for name, sched, good in runs if good]
    best = [(sched.metrics["avg_jct_s"], name, sched) for name, sched in ok]
    for v, _, _ in best:
        tl.add(None, v)
    if sr is not None:
        share = time_limit * WINDOWS_SHARE - (time.perf_counter() - t0)
        if share >= MIN_STAGE_S:
            whole = whole_trace_bound(inst, share * WHOLE_SHARE, threads, seed, tl)
            out["whole_trace"] = whole
            share = time_limit * WINDOWS_SHARE - (time.perf_counter() - t0)
        if share >= MIN_STAGE_S:
            w = windowed_bound(inst, sr[0], share, threads, seed, tl)
            out["windows"] = w
            if w["windows_solved"] < w["windows"]:
                out["notes"].append(f"the packing relaxation solved {w['windows_solved']} of {w['windows']} "
                                    "windows in its time; the others count at their floor")
        else:
            out["notes"].append("no time left for the windowed packing relaxation: the bound is the floor")
        out.update(jct_lower_bound_s=tl.bound, jct_lower_bound_kind=tl.source)
    out["lower_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    left = time_limit - (t1 - t0)
    warm = [sc for _, sc in ok]
    lo = out.get("jct_lower_bound_s")
    if best and lo is not None and min(b[0] for b in best) <= lo * (1 + CLOSED_TOL):
        out["notes"].append("the bracket is closed by a policy's run (its mean JCT is at the bound): no search for "
                            "a better schedule")
        left = 0.0
    if left >= MIN_STAGE_S:
        # plan-jct's run (unless it is one of the policies: then its run seeds the offline schedule as it is)
        given = [sc for name, sc in ok if name == PLANNER]
        pr = (offline_upper(inst, left * PLANNER_SHARE, given, out["notes"]) if given else
              planner_run(inst, left * PLANNER_SHARE, out["notes"]))
        if pr is not None:
            best.append(pr)
            tl.add(None, pr[0])
            warm.append(pr[2])
        left = time_limit - (time.perf_counter() - t0)
    if left >= MIN_STAGE_S:
        ls = _list_search(inst, left, warm, seed, out["notes"])
        if ls is not None:
            best.append(ls)
            tl.add(None, ls[0])
    elif left > 0:
        out["notes"].append("no time left for the list scheduler's search: the best schedule is a policy's run")
    out["upper_s"] = time.perf_counter() - t1
    b = min(best, key=lambda x: x[0]) if best else (None, None, None)
    out.update(jct_best_s=b[0], jct_best_from=b[1])
    lo = out.get("jct_lower_bound_s")
    if lo is not None and b[0] is not None and lo > b[0]:
        if lo > b[0] * (1 + CONFLICT_TOL):           # a schedule refutes the bound: a bug, never hidden by a cap
            log.error("gap: the trace bound %.6g s (%s) lies above a schedule's mean JCT %.6g s (%s): the bound "
                      "is dropped to the floor", lo, out.get("jct_lower_bound_kind"), b[0], b[1])
            out["notes"].append(f"the bound {lo:.6g} s lay above a schedule's mean JCT ({b[0]:.6g} s, {b[1]}): "
                                "a bug; the bound is the floor")
            out["bound_conflict"] = {"bound": lo, "kind": out.get("jct_lower_bound_kind"), "schedule": b[0]}
            out.update(jct_lower_bound_s=min(rmean, b[0]), jct_lower_bound_kind=SOURCE_FLOOR)
        else:                                         # rounding: a bound at a schedule proves it
            out["jct_lower_bound_s"] = b[0]
    costs = [(objective_cost_usd(inst, sched.metrics), name) for name, sched in ok]
    out["cost_best_usd"], out["cost_best_from"] = min(costs) if costs else (None, None)
    out["mean_shortest_run_s"] = rmean
    lo = out.get("jct_lower_bound_s")
    out["wait_lower_bound_s"] = None if lo is None or rmean is None else max(lo - rmean, 0.0)
    out["wait_best_s"] = None if b[0] is None or rmean is None else max(b[0] - rmean, 0.0)
    out["timeline"] = tl.as_list()
    return out


def _list_search(inst: Instance, budget: float, warm: Sequence, seed: int, notes: list) -> tuple | None:
    """The list scheduler's local search within ``budget`` s, its set-up stopped at the deadline: (mean JCT,
    from, schedule) of an evaluator-accepted schedule, or None (with a note)."""
    from .. import clock
    from ..evaluate import evaluate
    from ..exact.p2.scale import best_list_schedule
    try:
        with clock.scope(budget), clock.raise_at_deadline("the list scheduler's search"):
            ls = best_list_schedule(inst, max(clock.left(budget) * (1.0 - LIST_RESERVE) - 2.0, 0.0), warm=warm,
                                    seed=seed, search="local")
    except clock.DeadlineReached as e:
        notes.append(f"the list scheduler's search did not finish ({e}): the best schedule is a policy's run")
        log.info("gap: %s", notes[-1])
        return None
    s = ls["schedule"]
    if s is None:
        return None
    if not evaluate(inst, s).feasible:
        notes.append("the list schedule failed the evaluator's check (a bug): not used")
        return None
    return (s.metrics["avg_jct_s"], f"list schedule, local search ({ls['evaluations']} orders)", s)
