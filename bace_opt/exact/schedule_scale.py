"""P2 brackets at scale (24-72 jobs; models/schedule.md section 8.3-8.4): the best feasible schedule the list
scheduler's search finds (for mean JCT the pooled CP-SAT search of ``schedule_search``), started from given
schedules' job orders (policies' runs) and simple orders.

``best_list_schedule`` is what ``gaps.report.p2_figures``, ``schedule_bound.solve_bracket`` (and
``benchmarks.bench_schedule --brackets``) use for the upper end of a bracket; the lower end is
``schedule_lower.recipe_lower_bound`` (mean JCT) and ``schedule_relax.job_modes``' cost lower bound (cost).

``choose_problem`` picks, for ``schedule.solve_schedule``, the largest candidate set (``candidates.LADDER``) whose
exact model the back end can hold; ``too_large_schedule`` is the exact P2's answer when none fits (then
``solve_schedule`` returns ``schedule_bound.solve_bracket``'s bracket instead).
"""
from __future__ import annotations

import math
import time
from typing import Any, Sequence

from ..evaluate import make_schedule
from ..instance import Instance
from ..schedule import Schedule, SolverInfo
from ..solvers.base import SolveOptions
from .candidates import candidate_ladder, enumerate_candidates, limits_label
from .schedule import METHOD, build_problem, default_delta, series_end_s
from .schedule_data import SlottedProblem
from .schedule_list import ListScheduler, improve
from .schedule_search import pooled_search

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
                       search: str = "pooled", workers: int = 2) -> dict[str, Any]:
    """The list scheduler's local search (``schedule_list.improve``) within ``budget_s`` seconds for ``goal``
    ("jct": mean JCT; "cost": total cost; "sum": mean JCT + mu cost); for "jct" with ``search="pooled"`` the
    pooled CP-SAT search (``schedule_search.pooled_search``, ``workers`` CP-SAT threads) around it,
    ``search="local"`` the local search alone.  Returns schedule (evaluator-priced, or None when a job fits
    nowhere), value, evaluations, wall_s, the candidate limits used and ``search`` (what ran)."""
    t0 = time.perf_counter()
    cs = enumerate_candidates(inst, max_blocks=MAX_BLOCKS, routes_k=ROUTES_K)
    ls = ListScheduler(inst, cs)
    starts = start_orders(inst, ls, warm, orders)
    left = max(budget_s - (time.perf_counter() - t0), 0.0)
    if search not in ("pooled", "local"):
        raise ValueError(f"search must be 'pooled' or 'local', not {search!r}")
    info: dict[str, Any] = {"search": "local search"}
    if goal == "jct" and search == "pooled":
        v, order, sol, evals, info = pooled_search(ls, starts, left, seed, stop, workers)
        info["search"] = "pooled CP-SAT + local search" if "pooled_status" in info else "local search"
    else:
        v, order, sol, evals = improve(ls, starts, left, goal, mu, seed, stop)
    sched = ls.schedule_of(sol) if math.isfinite(v) else None
    return {"schedule": sched, "value": v, "evaluations": evals, "wall_s": time.perf_counter() - t0,
            "candidates": f"<= {MAX_BLOCKS} regions per job, {ROUTES_K} route per hop", **info}


#: CP-SAT: the most candidates (all jobs, after D4) and start-dependent table entries a model may hold
CPSAT_MAX_CANDIDATES = 5_000
CPSAT_MAX_TABLE = 2_000_000


def choose_problem(inst: Instance, solver: str, options: SolveOptions, delta: float | None, mu: float,
                   cost_cap_usd: float | None, max_blocks: int | None, routes_k: int | None,
                   horizon_s: float | None) -> tuple[SlottedProblem | None, list[dict[str, Any]]]:
    """The slotted problem over the first candidate set of ``candidates.candidate_ladder`` whose model the back
    end can hold (HiGHS: ``schedule_milp.size_error``; CP-SAT: ``CPSAT_MAX_CANDIDATES`` candidates and
    ``CPSAT_MAX_TABLE`` table entries), and every step tried (max_blocks, routes_k, candidates, why not).
    None when no step fits."""
    from .schedule_milp import size_error
    steps: list[dict[str, Any]] = []
    for mb, rk, cs, why in candidate_ladder(inst, max_blocks, routes_k):
        step = {"max_blocks": mb, "routes_k": rk, "candidates": limits_label(mb, rk)}
        steps.append(step)
        if cs is None:
            step["not_used"] = why
            continue
        if solver == "cpsat" and delta is None:
            priced_time = (cost_cap_usd is not None or mu > 0) and series_end_s(inst) > 0
            d = default_delta(inst, cs, True, 2000) if priced_time else 1.0
        else:
            d = delta
        prob = build_problem(inst, d, mu, cost_cap_usd, default_units=200 if solver == "highs" else 2000, cands=cs,
                             horizon_s=horizon_s)
        step["candidates_kept"] = sum(len(jd.cands) for jd in prob.jobs)
        if solver == "highs":
            err = size_error(prob, options.backend_options)
            why = err[0] if err else None
        else:
            table = sum(len(jd.cands) * (prob.H - jd.lo + 1) for jd in prob.jobs if jd.varies)
            why = (f"CP-SAT model too large: {step['candidates_kept']:,} candidates (limit {CPSAT_MAX_CANDIDATES:,})"
                   if step["candidates_kept"] > CPSAT_MAX_CANDIDATES else
                   f"CP-SAT model too large: {table:,} start-cost table entries (limit {CPSAT_MAX_TABLE:,})"
                   if table > CPSAT_MAX_TABLE else None)
        if why is None:
            step["used"] = True
            return prob, steps
        step["not_used"] = why
    return None, steps


def too_large_schedule(inst: Instance, solver: str, steps: list[dict[str, Any]], build0: float,
                       wall0: float) -> Schedule:
    """The exact P2's answer when no candidate set fits its model: no job scheduled, status "error", the steps
    tried in ``extra["candidate_steps"]`` and ``extra["too_large"]``."""
    last = next((s for s in reversed(steps) if not str(s.get("not_used", "")).startswith("the same")),
                steps[-1] if steps else {})
    msg = (f"exact P2 too large for {solver} with every candidate set tried ({len(steps)}, down to "
           f"{last.get('candidates')}: {last.get('not_used')}; the steps in candidate_steps)")
    sched = make_schedule(inst, [], METHOD[solver], solver=None, meta={"problem": "schedule"})
    info = SolverInfo(name=solver, status="error", wall_s=time.perf_counter() - wall0, build_s=build0, message=msg,
                      extra={"problem": "schedule", "too_large": True, "candidate_steps": steps,
                             "status_for_posed_problem": "error: too large for the exact P2",
                             "bound_is_for": None})
    return sched.replace(solver=info)
