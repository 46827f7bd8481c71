"""P2 brackets at scale (24-72 jobs; models/schedule.md section 8.3-8.4): the best feasible schedule the list
scheduler's search finds (for mean JCT the pooled CP-SAT search of ``p2.search``), started from given
schedules' job orders (policies' runs) and simple orders.

``best_list_schedule`` is what ``gaps.report.p2_figures``, ``p2.bound.solve_bracket`` (and
``benchmarks.bench_schedule --brackets``) use for the upper end of a bracket; the lower end is
``p2.lower.recipe_lower_bound`` (mean JCT) and ``p2.relax.job_modes``' cost lower bound (cost).
"""
from __future__ import annotations

import math
import time
from typing import Any, Sequence

from ... import progress
from ...instance import Instance
from ...schedule import Schedule
from .candidates import enumerate_candidates
from .list_schedule import ListScheduler, improve
from .search import pooled_search

#: the candidate set the list scheduler draws from (the restricted exact P2's: <= 2 regions, 1 route per hop)
MAX_BLOCKS = 2
ROUTES_K = 1


def start_orders(inst: Instance, ls: ListScheduler, warm: Sequence[Schedule],
                 orders: Sequence[Sequence[int]] = ()) -> list[list[int]]:
    """Job orders to start the search from: ``orders`` (e.g. the area relaxation's), every warm schedule's order
    of start times (unstarted jobs last), arrival then shortest run time, and arrival then least work (GPUs x
    shortest run time)."""
    n = len(inst.jobs)
    out = [list(o) for o in orders]
    for s in warm:
        st = {e.name: e.start_s for e in s.jobs if e.status == "done" and e.start_s is not None}
        out.append(sorted(range(n), key=lambda j: (st.get(inst.jobs[j].name, math.inf), j)))
    out.append(sorted(range(n), key=lambda j: (inst.jobs[j].arrival_s, _rmin(ls, j), j)))
    out.append(sorted(range(n), key=lambda j: (inst.jobs[j].arrival_s, _rmin(ls, j) * inst.jobs[j].gpus, j)))
    out.append(sorted(range(n), key=lambda j: (_rmin(ls, j) * inst.jobs[j].gpus, j)))
    return out


def _rmin(ls: ListScheduler, j: int) -> float:
    r = ls.jobs[j].run
    return float(r.min()) if len(r) else math.inf


def best_list_schedule(inst: Instance, budget_s: float, warm: Sequence[Schedule] = (), goal: str = "jct",
                       mu: float = 0.0, seed: int = 1, stop=None, orders: Sequence[Sequence[int]] = (),
                       search: str = "pooled", workers: int = 2, lower_bound: float | None = None) -> dict[str, Any]:
    """The list scheduler's local search (``p2.list_schedule.improve``) within ``budget_s`` seconds for ``goal``
    ("jct": mean JCT; "cost": total cost; "sum": mean JCT + mu cost); for "jct" with ``search="pooled"`` the
    pooled CP-SAT search (``p2.search.pooled_search``, ``workers`` CP-SAT threads) around it,
    ``search="local"`` the local search alone.  Returns schedule (evaluator-priced, or None when a job fits
    nowhere), value, evaluations, wall_s, the candidate limits used and ``search`` (what ran).
    Progress (``bace_opt.progress``, logger ``p2``): each stage, and the best value as it falls beside
    ``lower_bound`` (when the caller knows one)."""
    if search not in ("pooled", "local"):
        raise ValueError(f"search must be 'pooled' or 'local', not {search!r}")
    t0 = time.perf_counter()
    mv = progress.Moving(progress.logger("p2"), "P2 list scheduler")
    cs = enumerate_candidates(inst, max_blocks=MAX_BLOCKS, routes_k=ROUTES_K)
    mv.tell(f"{sum(map(len, cs.by_job.values())):,} candidates; pricing them", force=True)
    with progress.heartbeat(mv.log, "P2 list scheduler: the candidates' pricing"):
        ls = ListScheduler(inst, cs)
    starts = start_orders(inst, ls, warm, orders)
    left = max(budget_s - (time.perf_counter() - t0), 0.0)
    what = {"jct": "mean JCT", "cost": "total cost", "sum": "mean JCT + mu cost"}.get(goal, goal)
    mv.tell(f"searching job orders for the least {what} (up to {progress.value(left)})", force=True)

    def on_best(v, n, force=False):
        gap = (f", gap {100 * (v - lower_bound) / v:.3g} %" if lower_bound is not None and v and math.isfinite(v)
               else "")
        mv.tell(f"best {what} {progress.value(v, 'USD' if goal == 'cost' else 's')} after {n} orders"
                + ("" if lower_bound is None else f", lower bound {progress.value(lower_bound)}{gap}"), force)

    def on_stage(text):
        mv.flush()
        mv.tell(text, force=True)

    info: dict[str, Any] = {"search": "local search"}
    if goal == "jct" and search == "pooled":
        v, order, sol, evals, info = pooled_search(ls, starts, left, seed, stop, workers, on_best=on_best,
                                                   on_stage=on_stage)
        info["search"] = "pooled CP-SAT + local search" if "pooled_status" in info else "local search"
    else:
        v, order, sol, evals = improve(ls, starts, left, goal, mu, seed, stop, on_best=on_best)
    mv.pending = None
    on_best(v, evals, force=True)           # the search's result (a held-back line is superseded by it)
    sched = ls.schedule_of(sol) if math.isfinite(v) else None
    return {"schedule": sched, "value": v, "evaluations": evals, "wall_s": time.perf_counter() - t0,
            "candidates": f"<= {MAX_BLOCKS} regions per job, {ROUTES_K} route per hop", **info}
