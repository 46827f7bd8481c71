"""Stages of the trace bracket (``gaps.online.trace_figures``) that look at the whole trace at once.

* ``whole_trace_bound``: the packing relaxation (``exact.p2.lower``, P2.35-P2.38, its LP) over ALL the trace's
  jobs on one time grid, each job's starts limited to a window after its arrival plus a late column that holds no
  capacity (``exact.p2.trace_area``: valid for any window; 10x smaller), coarse first (``FIRST_UNIT_S``), then the
  unit made finer while the time allows (``next_unit``: the finest unit predicted to finish in time).  Valid for
  the same reason as the windows' bound (models/schedule.md 8.3: any schedule of all jobs maps to a feasible point
  of the relaxation; every unit length is allowed), and unlike the windows it keeps the interaction between jobs
  that arrive far apart: the long jobs that still hold GPUs when a burst arrives.  Measured on the composed week at
  offered load 0.92 (fleet20 with 2 GPUs per region, 295 jobs; 2 shared cores, load 5-9): floor 12,317 s,
  windows 12,335 s (13-34 s), whole trace without start windows 13,782 s (unit 5,400 s, 38 s), 13,901 s (3,600 s,
  69-94 s), 1,800 s not finished in 300 s; with them 13,901 s (3,600 s, 5 s), 14,021 s (1,800 s, 16 s), 14,086 s
  (900 s, 41 s, window 6 h + 2 R_j) (docs/research/trace-bracket).
* ``planner_run``: the toolkit's planning policy (``plan-jct``) simulated on the trace, as one more feasible
  schedule for the bracket's upper end (on the week above 19,090 s against BACE-Pipe's 25,203 s; the list
  scheduler's search finds nothing there: its candidates span at most 2 regions and every job needs 3 or more),
  then ``offline_upper``: an OFFLINE schedule seeded by that run's start order (``gaps.trace_offline``: the pooled
  plan of every job known at t = 0, searched, then realised by a simulated policy object that knows the future and
  checked by the evaluator): 15,896 s on that week after restarts of the search.  The upper end may come from any schedule the evaluator
  accepts: it is the best schedule found, not a policy's figure.
* ``simulate_by_deadline``: a policy's whole run, stopped at the deadline in force (``bace_opt.clock``).
"""
from __future__ import annotations

import logging
import math
import time
from typing import Any

from .. import clock
from ..instance import Instance

log = logging.getLogger(__name__)

#: the first rung's unit (s)
FIRST_UNIT_S = 21600.0
#: each job's start window (``exact.p2.trace_area``): this long after its arrival's unit plus WINDOW_RUNS x its
#: shortest run; later starts take the late column (valid for any window).  On the week at load 0.92, unit
#: 5,400 s: windows of 24 h + 2 R_j and 12 h + 2 R_j give the LP without windows to 1e-10 (13,781.67 s) in
#: 3.5 s against 38 s; 48 h + 0 R_j loses 464 s, 6 h + 2 R_j at 1,800 s loses 13 s
WINDOW_S = 12 * 3600.0
WINDOW_RUNS = 2.0
#: a rung of unit v after one of unit u that took t s is predicted to take t (u / v) ** GROWTH_EXP s (measured on
#: the week at load 0.92 with windows: 3,600 -> 1,800 s x 3.6, 1,800 -> 900 s x 2.6 to 4); the
#: next rung is the finest unit whose prediction times MARGIN fits the time left (rungs are skipped: a rung's
#: bound is only as good as its unit, and each rung costs time)
GROWTH_EXP = 2.5
MARGIN = 1.2
#: the smallest unit tried (s)
MIN_UNIT_S = 600.0
#: the policy run as an upper-end candidate, and its share of the upper end's time (with the offline schedule
#: seeded by it; the list scheduler's search the rest: on the week at load 0.92 it placed no job, its candidates
#: span at most 2 regions and every job there needs 3, while the offline search still gained from more time; such
#: jobs now get a placement built over 3-4 regions (``p2.list_schedule``), the share not measured again since)
PLANNER = "plan-jct"
PLANNER_SHARE = 0.95
#: plan-jct's run gets at most this share of ``planner_run``'s time; the offline schedule seeded by it the rest
PLANNER_RUN_SHARE = 0.5
#: the offline schedule's order search: job placements of the pooled model (``planner_core.Planner.search``;
#: 4 M: 18 s, 16,733 s; 20 M: 53 s, 16,694 s; restarts of 10 M each with new seeds: 15,859 s after 65 M, on the
#: week at offered load 0.92, 2 shared cores); on that week the time, not this count, ends it ...
OFFLINE_WORK = 200_000_000
#: ... the share of its time kept for the simulation that realises it (1.6 s of 300 jobs), and the least time
#: worth starting it with
OFFLINE_REALISE_SHARE = 0.1
OFFLINE_MIN_S = 5.0
#: where ``whole_trace_bound`` leaves its finest LP's relaxed order (job names) for ``offline_upper`` (in the
#: instance's ``__dict__``, as plan-jct caches its per-instance tables)
RELAXED_ORDER = "trace_relaxed_order"
OFFLINE_FROM = "offline clairvoyant schedule (upper end only: knows the future)"

SOURCE_WHOLE = "packing relaxation (P2.35-P2.38, LP) over the whole trace, with start windows"


def whole_trace_bound(inst: Instance, budget: float, threads=None, seed: int = 1, timeline=None) -> dict[str, Any]:
    """The packing relaxation's LP over the whole trace, with start windows (``exact.p2.trace_area``), within
    ``budget`` wall-clock seconds (module doc).  Returns lower_bound_jct_s (the best rung's, None when none
    finished), rungs (unit, bound, seconds), seconds."""
    from ..exact.p2.trace_area import window_packing_lp
    from ..solvers.base import SolveOptions
    t0 = time.perf_counter()
    rungs: list[dict] = []
    best, unit = None, FIRST_UNIT_S
    while unit is not None:
        left = budget - (time.perf_counter() - t0)
        if left < 1.0:
            break
        ts = time.perf_counter()
        try:
            with clock.scope(left), clock.raise_at_deadline("the whole trace's packing relaxation"):
                r = window_packing_lp(inst, unit, WINDOW_S, SolveOptions(time_limit_s=left, threads=threads,
                                                                         seed=seed), run_factor=WINDOW_RUNS)
        except clock.DeadlineReached:
            rungs.append({"unit_s": unit, "lower_bound_jct_s": None, "seconds": round(time.perf_counter() - ts, 2)})
            break
        last_s = time.perf_counter() - ts
        lb = r.get("lower_bound_jct_s")
        rungs.append({"unit_s": unit, "lower_bound_jct_s": lb, "seconds": round(last_s, 2)})
        if lb is None or not math.isfinite(lb):
            break
        if best is None or lb > best:
            best = lb
            if timeline is not None:
                timeline.add(lb, None, SOURCE_WHOLE)
        if r.get("relaxed_order"):          # the finest rung's, a seed of the offline upper end (offline_upper)
            inst.__dict__[RELAXED_ORDER] = tuple(inst.jobs[j].name for j in r["relaxed_order"])
        unit = next_unit(unit, last_s, budget - (time.perf_counter() - t0))
    return {"lower_bound_jct_s": best, "rungs": rungs, "seconds": round(time.perf_counter() - t0, 2)}


def next_unit(unit: float | None, last_s: float, left: float) -> float | None:
    """The next rung's unit: the finest of ``exact.p2.area.UNITS_S`` below ``unit`` (and >= ``MIN_UNIT_S``) whose
    LP is predicted to finish in ``left`` s with a margin (``last_s`` x (unit / next) ** ``GROWTH_EXP`` x
    ``MARGIN``); None when none is."""
    from ..exact.p2.area import UNITS_S
    if unit is None:
        return None
    fits = [v for v in UNITS_S if MIN_UNIT_S <= v < unit and MARGIN * last_s * (unit / v) ** GROWTH_EXP <= left]
    return min(fits) if fits else None


def simulate_by_deadline(inst: Instance, pol: Any, simulate) -> tuple[Any, int]:
    """(schedule, jobs settled) of ``pol``'s whole run, or (None, jobs settled so far) when the deadline in force
    (``bace_opt.clock``) passed during it: the simulator's progress callback (every ``sim.PROGRESS_EVERY_S`` of
    wall time, between events) raises ``clock.DeadlineReached`` there, so the run stops within about that, plus
    one event's handling, of the deadline.  ``pol``: a policy object or a registered name."""
    seen = [0]
    name = pol if isinstance(pol, str) else getattr(pol, "name", str(pol))

    def progress(done: int, total: int, t: float) -> None:
        seen[0] = done
        d = clock.current()
        if d is not None:
            d.check(f"the simulation of {name}")

    d = clock.current()
    if d is not None and d.expired():
        return None, 0
    try:
        return simulate(inst, pol, progress=progress), len(inst.jobs)
    except clock.DeadlineReached:
        return None, seen[0]


def planner_run(inst: Instance, budget: float, notes: list) -> tuple | None:
    """(mean JCT, from, schedule) of the best of ``PLANNER``'s whole run on ``inst`` and the offline schedule
    seeded by it (``offline_upper``), within ``budget`` s, each checked by the evaluator; None (with a note) when
    neither finished or was accepted."""
    from ..evaluate import evaluate
    from ..sim import simulate
    t0 = time.perf_counter()
    found = []
    with clock.scope(budget * PLANNER_RUN_SHARE):
        sched, settled = simulate_by_deadline(inst, PLANNER, simulate)
    if sched is None:
        notes.append(f"the {PLANNER} run for the upper end was stopped at its share of the limit "
                     f"({settled} of {len(inst.jobs)} jobs settled): not used")
    else:
        rep = evaluate(inst, sched)
        if not rep.feasible or rep.metrics.get("jobs_done") != len(inst.jobs):
            notes.append(f"the {PLANNER} run for the upper end did not finish every job: not used")
        else:
            found.append((rep.metrics["avg_jct_s"], f"{PLANNER} run (upper end only)", sched))
    off = offline_upper(inst, budget - (time.perf_counter() - t0), [f[2] for f in found], notes)
    if off is not None:
        found.append(off)
    return min(found, key=lambda f: f[0]) if found else None


def offline_upper(inst: Instance, budget: float, warm: list, notes: list) -> tuple | None:
    """(mean JCT, from, schedule) of the OFFLINE clairvoyant schedule (``gaps.trace_offline``: the pooled plan
    of every job known at t = 0, its order searched from the relaxed order ``whole_trace_bound`` left, and from
    ``warm``'s start orders, within ``OFFLINE_WORK``
    placements, then realised by a simulated ``OrderFollower``), checked by the evaluator, within ``budget`` s;
    None (with a note) when there was no time or the schedule was refused.  An upper end only: it knows the
    future, so it is never presented as a policy."""
    from ..evaluate import evaluate
    from ..sim import simulate
    from .trace_offline import OrderFollower, clairvoyant_order
    t0 = time.perf_counter()
    if budget < OFFLINE_MIN_S:
        notes.append("no time left for the offline (clairvoyant) schedule of the upper end")
        return None
    search_s = budget * (1.0 - OFFLINE_REALISE_SHARE)
    seeds = [inst.__dict__[RELAXED_ORDER]] if RELAXED_ORDER in inst.__dict__ else []
    order, pooled = clairvoyant_order(inst, OFFLINE_WORK, 1, warm, time.perf_counter() + search_s, seeds=seeds)
    with clock.scope(budget - (time.perf_counter() - t0)):
        sched, settled = simulate_by_deadline(inst, OrderFollower(inst, order),
                                              lambda i, pol, progress: simulate(i, pol, track_hol=False,
                                                                                progress=progress))
    if sched is None:
        notes.append(f"the offline schedule's simulation was stopped at the limit ({settled} of "
                     f"{len(inst.jobs)} jobs settled): not used")
        return None
    rep = evaluate(inst, sched)
    if not rep.feasible or rep.metrics.get("jobs_done") != len(inst.jobs):
        notes.append("the offline schedule did not pass the evaluator or finish every job (a bug): not used")
        return None
    log.info("gap: offline clairvoyant schedule %.6g s mean JCT (pooled plan %.6g s), %.1f s",
             rep.metrics["avg_jct_s"], pooled, time.perf_counter() - t0)
    return rep.metrics["avg_jct_s"], OFFLINE_FROM, sched
