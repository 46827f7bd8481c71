"""A pooled CP-SAT search for the upper end of a mean-JCT bracket (models/schedule.md section 8.4).

The list scheduler's local search (``p2.list_schedule.improve``) stalls in local optima at 72 jobs.  This module
solves a *pooled* model with CP-SAT: one cumulative resource of G GPUs (every region's GPUs together), one
interval per job holding its W_j GPUs for its shortest run time rounded up to ``unit_s`` seconds, starts at or
after the job's arrival (rounded up), minimise the sum of ends.  The pooled model is a heuristic here, never a
bound: its solution's *start order* is handed back to the list scheduler, which places every job on real
regions and links (its own candidates, backfilling) and whose schedules the evaluator checks.  On the paper
instances a job splits across regions at 1-GPU granularity, a multi-region run is seconds slower than a
single-region one and, at nominal bandwidth, links never bind, so the pooled schedule is nearly realisable and
the list scheduler loses little turning it into one (0.2 % on paper-6r-72j-seed3-poisson); where links bind
(measured bandwidth) the list scheduler delays what does not fit, and the search keeps the best order found.

``pooled_search`` = local search for a start (hint), CP-SAT on the pooled model hinted with its starts rounded
down to the unit (with durations rounded up this hint usually overlaps by a unit and is not a pooled solution;
measured on paper-6r-72j-seed3-poisson, 60 s, it leads CP-SAT to 80 000 s where a feasible hint, the pooled
serial schedule of the same order, stays at 83 400 s near its start and no hint gives 87 500 s), then local
search from the CP-SAT order and the previous best; it
returns the best of all, so never worse than its start orders.  CP-SAT runs with ``workers`` threads (2: with
one it has no neighbourhood search and is far weaker); with more than one worker and a wall-clock limit CP-SAT
is not deterministic, so neither is this search's result (the local search's moves are seeded).  A ``stop``
callback (polled every 0.1 s) and Ctrl-C end the CP-SAT solve within a second.
"""
from __future__ import annotations

import math
import threading
import time

from .list_schedule import ListScheduler, improve

#: pooled time unit, s (runs are 4 000-33 000 s on the paper instances: <= 0.25 % rounding per job)
UNIT_S = 10.0
#: shares of the budget: first local search (the hint), CP-SAT; the rest is the final local search
HINT_SHARE = 0.15
CPSAT_SHARE = 0.65
#: below this budget (s) the pooled CP-SAT is skipped (plain local search)
MIN_BUDGET_S = 4.0


def pooled_data(ls: ListScheduler, unit_s: float = UNIT_S):
    """(release, duration, GPUs) per job in pooled units, and the pool's GPUs: releases and shortest run times
    rounded up to ``unit_s``; a job without candidates gets None."""
    rel, dur, w = [], [], []
    for jc in ls.jobs:
        rel.append(int(math.ceil(jc.arrival / unit_s - 1e-9)))
        dur.append(int(math.ceil(float(jc.run.min()) / unit_s - 1e-9)) if len(jc.run) else None)
        w.append(int(jc.gpus))
    return rel, dur, w, int(round(ls.gcap))


def pooled_cpsat(ls: ListScheduler, hint_sol, budget_s: float, seed: int = 1, workers: int = 2, stop=None,
                 unit_s: float = UNIT_S) -> dict:
    """CP-SAT on the pooled model (module doc), hinted with the list schedule ``hint_sol``'s starts rounded
    down (see the module doc: usually not a pooled solution, and better so).
    Returns status, order (job indices by pooled start; None without a solution), the pooled mean JCT (s,
    rounded durations) and the wall time."""
    from ortools.sat.python import cp_model

    from ...solvers.cpsat import solve_interruptible
    t0 = time.perf_counter()
    rel, dur, w, cap = pooled_data(ls, unit_s)
    jobs = [j for j in range(ls.n) if dur[j] is not None]
    # every job after the last release, one after the other, is a pooled schedule: no optimum ends later
    horizon = max(rel) + sum(dur[j] for j in jobs) if jobs else 0
    m = cp_model.CpModel()
    S = {j: m.new_int_var(rel[j], max(horizon - dur[j], rel[j]), f"s{j}") for j in jobs}
    m.add_cumulative([m.new_fixed_size_interval_var(S[j], dur[j], f"i{j}") for j in jobs],
                     [w[j] for j in jobs], cap)
    m.minimize(sum(S[j] for j in jobs))
    for j in jobs:
        if hint_sol[j] is not None:
            m.add_hint(S[j], min(max(rel[j], int(math.floor(hint_sol[j][1] / unit_s))), horizon - dur[j]))
    s = cp_model.CpSolver()
    p = s.parameters
    p.max_time_in_seconds = max(budget_s - (time.perf_counter() - t0), 0.01)
    p.num_workers = workers
    p.random_seed = seed
    done = threading.Event()

    def watch():
        while not done.wait(0.1):
            if stop():
                s.stop_search()
                return

    watcher = threading.Thread(target=watch, daemon=True) if stop is not None else None
    if watcher:
        watcher.start()
    try:
        st = solve_interruptible(s, m)
    finally:
        done.set()
        if watcher:
            watcher.join()
    out = {"status": s.status_name(st), "order": None, "pooled_jct_s": None, "wall_s": 0.0}
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        start = {j: s.value(S[j]) for j in jobs}
        out["order"] = sorted(range(ls.n), key=lambda j: (start.get(j, math.inf), j))
        out["pooled_jct_s"] = unit_s * sum(start[j] + dur[j] - ls.jobs[j].arrival / unit_s for j in jobs) / ls.n
    out["wall_s"] = time.perf_counter() - t0
    return out


def pooled_search(ls: ListScheduler, orders, budget_s: float, seed: int = 1, stop=None, workers: int = 2,
                  unit_s: float = UNIT_S, max_evals: int | None = None, on_best=None, on_stage=None):
    """Local search (``HINT_SHARE`` of the budget), CP-SAT on the pooled model hinted with its best schedule
    (``CPSAT_SHARE``), local search from the CP-SAT order and the best so far (the rest), for mean JCT; each
    local search evaluates at most ``max_evals`` orders.  Returns (value, order, sol, evaluations, info): the
    best of all, never worse than ``orders``' best.  ``on_best(value, evaluations)``: told as each local search's
    best improves; ``on_stage(text)``: a line as each stage starts or ends (progress)."""
    stage = on_stage or (lambda text: None)
    t_end = time.perf_counter() + budget_s
    if budget_s < MIN_BUDGET_S:
        v, order, sol, ev = improve(ls, orders, budget_s, "jct", 0.0, seed, stop, max_evals, on_best)
        return v, order, sol, ev, {"pooled": "skipped (budget below %g s)" % MIN_BUDGET_S}
    v, order, sol, ev = improve(ls, orders, budget_s * HINT_SHARE, "jct", 0.0, seed, stop, max_evals, on_best)
    info = {"hint_jct_s": v}
    if stop and stop():
        return v, order, sol, ev, info
    stage(f"pooled CP-SAT from the best order (up to {budget_s * CPSAT_SHARE:.3g} s)")
    cp = pooled_cpsat(ls, sol, budget_s * CPSAT_SHARE, seed, workers, stop, unit_s)
    stage(f"pooled CP-SAT {cp['status']}" + ("" if cp["pooled_jct_s"] is None else
                                             f", pooled mean JCT {cp['pooled_jct_s']:.6g} s")
          + "; local search from its order")
    info.update(pooled_status=cp["status"], pooled_jct_s=cp["pooled_jct_s"], pooled_wall_s=cp["wall_s"])
    starts = [order] + ([cp["order"]] if cp["order"] is not None else [])
    if cp["order"] is not None:          # before the search's time is measured: it counts against the budget
        info["cpsat_order_jct_s"] = ls.value(ls.run(cp["order"]))
    left = max(t_end - time.perf_counter(), 0.0)
    v2, order2, sol2, ev2 = improve(ls, starts, left, "jct", 0.0, seed + 1, stop, max_evals,
                                    None if on_best is None else lambda val, n: val < v and on_best(val, ev + n))
    if v2 <= v:
        v, order, sol = v2, order2, sol2
    return v, order, sol, ev + ev2, info
