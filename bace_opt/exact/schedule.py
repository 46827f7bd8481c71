"""P2, the offline schedule, solved exactly: entry points ``solve_schedule`` and ``pareto_front``.

The model is models/schedule.md.  Both back ends solve the *same* discretized problem (its types in
``p2.data``), built here once (``build_problem``):

    time unit Delta (s): CP-SAT's ``time_resolution_s`` or the MILP's ``slot_s``;
    start of job j: s_j = Delta * t, t integer, t >= lo_j = ceil(a_j / Delta)                   (P2.3)
    placement: exactly one candidate c of j (bace_opt.exact.p2.candidates)                        (P2.2)
    it holds its resources on [t, t + d_jc) with d_jc = ceil(R_jc / Delta)                      (P2.4, P2.5)
    objective: sum_j [ (Delta t - a_j + R_jc) / n + mu * cost_jc(Delta t) ]                      (P2.1)

The objective counts the *true* run time R_jc and the exact electricity integral at the start Delta*t
(``formulas.electricity_usd`` semantics), so the evaluator's re-pricing of the solution equals the solver's
objective; discretization only restricts starts to the grid and holds resources until the end of the last
time unit (the schedule stays feasible in continuous time).  ``cpsat`` is CP-SAT with optional interval
variables and cumulative constraints (bace_opt/exact/p2/cpsat.py); ``highs`` is the time-indexed MILP
solved by HiGHS (bace_opt/exact/p2/milp.py).

Reservations are no-stall (w = b_j of the chosen placement) as in P1: every candidate reserves b_j on
every hop (our reading; models/schedule.md section 1).
"""
from __future__ import annotations

import logging
import math
import time
from typing import Any, Sequence

import numpy as np

from .. import clock, formulas as F
from ..errors import InputError
from ..evaluate import MONEY_KEYS, make_schedule, objective_cost_usd
from ..instance import Instance
from ..schedule import Schedule, SolverInfo
from ..solvers.base import SolveOptions, relative_gap
from .p2.candidates import (BW_REL_TOL, CandidateSet, candidate_ladder, enumerate_candidates, limits_label, pareto_keep,
                         plan_key)
from .p2.data import (JobData, RawResult, Resource, SlottedProblem, cost_lower_envelope, integral_vec,
                            posed_status, slotted_label, used_label)

log = logging.getLogger(__name__)

SOLVERS = ("cpsat", "highs")
METHOD = {"cpsat": "exact-schedule-cpsat", "highs": "exact-schedule-highs"}
#: "nice" default time units (s); the default resolution is the smallest one giving at most ``target`` units
#: at most this many time units in the horizon (a larger grid could not be built in memory anyway)
MAX_UNITS = 10_000_000
_NICE_S = (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 14400, 21600, 43200,
           86400)


# ---------------------------------------------------------------------- building the discretized problem

def _ceil_units(x: float, delta: float) -> int:
    """Smallest integer k with k * delta >= x (exact in floating point).  The corrections are bounded: where
    k * delta no longer resolves one unit (k beyond 2**52), the first estimate stands (harden, issue 10: an
    unbounded loop here hung on an arrival of 1e300 s)."""
    q = x / delta
    if not math.isfinite(q) or abs(q) > MAX_UNITS * 1e3:
        raise InputError(f"time unit {delta:g} s is too small for {x:g} s (more than {MAX_UNITS} units); use a "
                         f"larger time unit (--time-unit)")
    k = math.ceil(q)
    for _ in range(4):
        if k * delta < x:
            k += 1
    for _ in range(4):
        if k > 0 and (k - 1) * delta >= x:
            k -= 1
    return int(k)


def _floor_units(x: float, delta: float) -> int:
    """Largest integer k with k * delta <= x (exact in floating point)."""
    k = math.floor(x / delta)
    while k * delta > x:
        k -= 1
    while (k + 1) * delta <= x:
        k += 1
    return int(k)


#: the older names (tests use them)
_integral_vec, _cost_lower_envelope = integral_vec, cost_lower_envelope


def series_end_s(inst: Instance) -> float:
    """Time after which every region's price is constant (0 when all prices are constant)."""
    ends = [r.price_series.start_s + r.price_series.step_s * len(r.price_series.usd_per_kwh)
            for r in inst.regions if r.price_series is not None and len(set(r.price_series.usd_per_kwh)) > 1]
    return max(ends, default=0.0)


def grid_origin(inst: Instance) -> float:
    """The first arrival: the grid starts at the last grid point k0 Delta <= it (``origin_units``), so start index
    t is the time Delta (k0 + t), and the default unit and the horizon are counted from it (issue 38: counted
    from 0, jobs that arrive at 1e9 s got an 86 400 s unit and waited most of a day).  The grid points are the
    multiples of Delta as before: with the same unit, the problem is the same."""
    return min((j.arrival_s for j in inst.jobs), default=0.0)


def origin_units(inst: Instance, delta_s: float) -> int:
    """k0 = floor(first arrival / Delta): the grid's origin in units (O = Delta k0)."""
    return _floor_units(grid_origin(inst), delta_s)


def default_delta(inst: Instance, cs: CandidateSet, time_dependent: bool, target: int) -> float:
    """Smallest nice time unit giving a horizon of at most ``target`` units (1 s if that already holds).  The
    horizon is counted from the grid's origin, the first arrival (``grid_origin``)."""
    t0 = max(j.arrival_s for j in inst.jobs)
    if time_dependent:
        t0 = max(t0, series_end_s(inst))
    span = (t0 - grid_origin(inst)) + sum(max(c.run_s for c in cs.by_job[j.name]) for j in inst.jobs
                                          if cs.by_job[j.name])
    for d in _NICE_S:
        if span / d <= target:
            return float(d)
    return float(_NICE_S[-1])


#: the older names (benchmarks/bench_schedule.py imports them)
_series_end_s, _default_delta = series_end_s, default_delta


def build_problem(inst: Instance, delta_s: float | None = None, mu: float = 0.0, cost_cap_usd: float | None = None,
                  *, default_units: int = 2000, cands: CandidateSet | None = None, max_blocks: int | None = None,
                  routes_k: int | None = None, horizon_s: float | None = None, relax: bool = False) -> SlottedProblem:
    """Build the discretized P2 (models/schedule.md section 2) shared by both back ends.

    ``relax=True`` builds the lower-bound relaxation instead (models/schedule.md section 8, P2.20-P2.23): a
    job starting at s in continuous time is mapped to t = ceil(s / Delta); it holds its resources on the
    d'_jc = max(floor(R_jc / Delta) - 1, 0) slots it surely covers entirely, its start counts as
    Delta (t - 1) <= s (offset - Delta), and its cost is the minimum of cost_jc(s) over s in (Delta (t-1), Delta t].
    Every continuous-time schedule maps to a feasible relaxed solution of no larger objective, so the relaxed
    optimum (and any proven bound of it) is a lower bound of the continuous P2 optimum over the candidates.

    ``mu`` weights cost in the objective (P2.1); with ``cost_cap_usd`` the objective is mean JCT alone and
    total cost <= cap (P2.8, epsilon-constraint).  Candidates are enumerated (D1-D3) and pruned by whole-
    candidate dominance on the grid (D4).  ``horizon_s`` caps start times below the proven horizon (P2.6); then
    the result is optimal only within that horizon (recorded).
    """
    if not inst.jobs:
        raise InputError(f"instance {inst.name!r} has no jobs: nothing to schedule")
    if mu < 0 or not math.isfinite(mu):
        raise InputError(f"mu must be a finite number >= 0 (s/USD), got {mu}")
    if cost_cap_usd is not None and not (cost_cap_usd >= 0 and math.isfinite(cost_cap_usd)):
        raise InputError(f"cost cap (epsilon) must be a finite number >= 0 USD, got {cost_cap_usd}")
    t_build = time.perf_counter()
    cs = cands or enumerate_candidates(inst, max_blocks=max_blocks, routes_k=routes_k)
    n = len(inst.jobs)
    eps_mode = cost_cap_usd is not None
    priced_time = (eps_mode or mu > 0) and series_end_s(inst) > 0
    if delta_s is None:
        delta_s = default_delta(inst, cs, priced_time, default_units)
    if not (delta_s > 0 and math.isfinite(delta_s)):
        raise InputError(f"time resolution / slot length must be > 0 s, got {delta_s}")

    # horizon (P2.6): after T0 prices are constant and every job has arrived; an optimal schedule leaves no idle
    # time between T0 and its last start, so t <= ceil(T0/Delta) + sum_j max_c d_jc.
    t0 = max(j.arrival_s for j in inst.jobs)
    if priced_time:
        t0 = max(t0, series_end_s(inst))
    k0 = origin_units(inst, delta_s)
    dmax = []
    for job in inst.jobs:
        cl = cs.by_job[job.name]
        dmax.append(max((_ceil_units(c.run_s, delta_s) for c in cl), default=0))
    H = _ceil_units(t0, delta_s) - k0 + sum(dmax)
    if H > MAX_UNITS:   # harden, issue 10: a tiny time unit or a huge horizon would allocate without end
        raise InputError(f"time unit {delta_s:g} s gives a horizon of {H} units (at most {MAX_UNITS}); use a "
                         f"larger time unit (--time-unit)")
    horizon_proven = True
    if horizon_s is not None:
        Hc = int(math.floor(horizon_s / delta_s)) - k0
        if Hc < H:
            H, horizon_proven = Hc, False

    curves = F.price_curves(inst)
    jobs: list[JobData] = []
    for ji, job in enumerate(inst.jobs):
        cl = cs.by_job[job.name]
        lo = _ceil_units(job.arrival_s, delta_s) - k0
        T = max(H - lo + 1, 0)
        if not cl or T == 0:
            jobs.append(JobData(ji, job.name, job.arrival_s, lo, [], np.zeros(0, int), np.zeros(0),
                                np.zeros((0, 1)), np.zeros((0, 1)), False))
            continue
        starts = delta_s * np.arange(lo + k0, H + k0 + 1, dtype=float)
        if not (mu > 0 or eps_mode):    # cost is not in the objective: only the first start's is kept (below)
            starts, T = starts[:1], 1
        run = np.array([c.run_s for c in cl])
        if relax:
            d = np.array([max(_floor_units(r, delta_s) - 1, 0) for r in run], dtype=np.int64)
        else:
            d = np.array([_ceil_units(r, delta_s) for r in run], dtype=np.int64)
        # electricity per start (exact integral, formulas.electricity_usd arithmetic), cached per (region, R)
        memo: dict[tuple[str, float], np.ndarray] = {}
        cost = np.zeros((len(cl), T))
        for ci, c in enumerate(cl):
            tot = np.zeros(T)
            for r, nst in c.blocks:
                key = (r, c.run_s)
                if key not in memo:
                    memo[key] = integral_vec(curves[r], starts, starts + c.run_s)
                reg = inst.region(r)
                kw = job.gpus_per_stage * nst * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
                tot = tot + kw * memo[key] / 3600.0
            if inst.objective.egress:
                tot = tot + c.egress_usd
            cost[ci] = tot
            if relax and (mu > 0 or eps_mode):
                cost[ci] = cost_lower_envelope(inst, curves, job, c, lo + k0, H + k0, delta_s, tot)
        varies = bool(np.any(np.ptp(cost, axis=1) > 0)) and (mu > 0 or eps_mode)
        if not varies:
            cost = cost[:, :1]
        val = run[:, None] / n + (0.0 if eps_mode else mu) * cost
        jobs.append(JobData(ji, job.name, job.arrival_s, lo, cl, d, run, val, cost, varies))

    resources = _resources(inst, cs, jobs)
    # D4: whole-candidate dominance on the grid (Lemma 4)
    before = {jd.name: len(jd.cands) for jd in jobs}
    for jd in jobs:
        if len(jd.cands) > 1:
            cols = [np.array([res.uses.get((jd.index, ci), 0.0) for ci in range(len(jd.cands))])
                    for res in resources]
            rmat = np.column_stack(cols + [jd.d.astype(float)])
            vmat = jd.val if not eps_mode else np.hstack([jd.val, jd.cost])
            keep = pareto_keep(rmat, vmat)
            _restrict(jd, np.flatnonzero(keep))
    resources = _resources(inst, cs, jobs)

    # identical jobs (same data and arrival, hence the same candidates): t_a <= t_b breaks the symmetry
    sig: dict[tuple, list[int]] = {}
    for jd, job in zip(jobs, inst.jobs):
        k = (job.arrival_s, job.stages, job.microbatches, job.iterations, job.stage_time_s, job.activation_mb,
             job.gpus_per_stage, job.memory_gb)
        sig.setdefault(k, []).append(jd.index)
    symmetric = [(g[i], g[i + 1]) for g in sig.values() for i in range(len(g) - 1)]

    O = delta_s * k0
    offset = -math.fsum(j.arrival_s - O for j in inst.jobs) / n - (float(delta_s) if relax else 0.0)
    prob = SlottedProblem(inst, float(delta_s), float(mu), cost_cap_usd, jobs, H, horizon_proven, resources,
                          offset, symmetric, cs, origin_units=k0)
    prob.stats = {"relaxed": relax, "candidates_enumerated": dict(cs.enumerated), "candidates_after_D3": before,
                  "candidates_per_job": {jd.name: len(jd.cands) for jd in jobs},
                  "binding_resources": [r.name for r in resources], "build_problem_s": time.perf_counter() - t_build}
    return prob


def _restrict(jd: JobData, idx: np.ndarray) -> None:
    jd.cands = [jd.cands[i] for i in idx]
    jd.d, jd.run_s, jd.val, jd.cost = jd.d[idx], jd.run_s[idx], jd.val[idx], jd.cost[idx]


def _resources(inst: Instance, cs: CandidateSet, jobs: list[JobData]) -> list[Resource]:
    """Non-slack regions and links, with every candidate's use; drops those that cannot bind (Lemma 2)."""
    out = []
    for r in inst.regions:
        if r.name in cs.slack_regions:
            continue
        uses = {(jd.index, ci): float(dict(c.gpus).get(r.name, 0)) for jd in jobs for ci, c in enumerate(jd.cands)}
        out.append(Resource(f"gpu:{r.name}", "gpu", float(r.gpus), {k: v for k, v in uses.items() if v > 0}))
    for li, l in enumerate(inst.links):
        if li in cs.slack_links:
            continue
        uses = {(jd.index, ci): dict(c.link_gbps).get(li, 0.0) for jd in jobs for ci, c in enumerate(jd.cands)}
        out.append(Resource(f"link:{l.a}-{l.b}", "link", l.bandwidth_gbps, {k: v for k, v in uses.items() if v > 0}))
    kept = []
    for res in out:
        worst = sum(max((v for (j, _), v in res.uses.items() if j == jd.index), default=0.0) for jd in jobs)
        tol = 0 if res.kind == "gpu" else BW_REL_TOL * res.capacity
        if worst > res.capacity + tol:
            kept.append(res)
    return kept


def warm_choice(prob: SlottedProblem, warm) -> dict[int, tuple[int | None, int]]:
    """Map a warm-start Schedule (or plans) onto the problem: job index -> (candidate index or None, start t)."""
    plans = warm.plans if hasattr(warm, "plans") else list(warm)
    by = {p.name: p for p in plans}
    out = {}
    for jd in prob.jobs:
        p = by.get(jd.name)
        if p is None or p.status != "done" or p.start_s is None or not jd.cands:
            continue
        t = min(max(_ceil_units(p.start_s, prob.delta_s) - prob.origin_units, jd.lo), prob.H)
        k = plan_key(prob.inst, p)
        ci = next((i for i, c in enumerate(jd.cands) if c.key() == k), None)
        out[jd.index] = (ci, t)
    return out


# ---------------------------------------------------------------------- entry points

def solve_schedule(inst: Instance, solver: str = "cpsat", options: SolveOptions = SolveOptions(), mu: float = 0.0,
                   time_resolution_s: float | None = None, slot_s: float | None = None, warm_start=None, *,
                   cost_cap_usd: float | None = None, max_blocks: int | None = None, routes_k: int | None = None,
                   horizon_s: float | None = None) -> Schedule:
    """Solve P2 exactly (models/schedule.md) and return the evaluator-priced Schedule.

    ``solver``: "cpsat" (time unit ``time_resolution_s``; default 1 s, or coarser when prices vary over time
    and cost is weighted, to keep the start-time cost tables small) or "highs" (slot length ``slot_s``; default
    the smallest nice length giving at most 200 slots).  Pass the same value to both to solve the same slotted
    problem.  ``mu`` (s/USD) weights total cost; ``cost_cap_usd`` switches to the epsilon-constraint form
    (minimize mean JCT subject to total cost <= cap).  ``warm_start``: a Schedule whose plans are used as hints.
    ``max_blocks``/``routes_k`` shrink the candidate set (result then "optimal over the candidate set");
    ``horizon_s`` caps start times (result then optimal within that horizon).  Without ``max_blocks`` and
    ``routes_k`` the candidate set is chosen inside (``choose_problem``: every placement, else the first step of
    ``p2.candidates.LADDER`` whose model fits); the choice is in ``solver.extra["candidates_used"]``.  When no
    step fits (or the caller's restriction does not), the result has status "error", no job scheduled and
    ``extra["too_large"]``: ``p2.bound.solve_or_bracket`` (what ``bace-opt solve`` does) then gives the
    certified bracket (lower bound + the best schedule found) instead.

    The status, bound and gap are those of the slotted model (starts on the grid from the first arrival, run
    times rounded up; over the candidate set used): ``extra["status_for_posed_problem"]`` says what the status
    means for the continuous-time P2, and ``extra["bound_is_for"]`` which problem the bound bounds.
    """
    wall0 = time.perf_counter()
    if solver not in SOLVERS:
        raise InputError(f"unknown P2 solver {solver!r} (choose from {', '.join(SOLVERS)})")
    if time_resolution_s is not None and slot_s is not None and time_resolution_s != slot_s:
        raise InputError(f"time_resolution_s={time_resolution_s} and slot_s={slot_s} disagree: give one time unit")
    delta = time_resolution_s if time_resolution_s is not None else slot_s
    from .. import progress
    plog = progress.logger("p2")
    plog.info("P2 exact (%s): %d jobs; candidates and the slotted model %s", solver, len(inst.jobs), progress.when())
    try:           # the candidate build is Python: stopped at its share of the deadline (bace_opt.clock)
        with clock.scope(None if options.time_limit_s is None else BUILD_SHARE * options.time_limit_s), \
                clock.raise_at_deadline("the exact P2's candidate build"), \
                progress.heartbeat(plog, "P2 exact: the candidates and the model's build"):
            prob, steps = choose_problem(inst, solver, options, delta, mu, cost_cap_usd, max_blocks, routes_k,
                                         horizon_s)
    except clock.DeadlineReached as e:
        prob, steps = None, [{"max_blocks": max_blocks, "routes_k": routes_k,
                              "candidates": limits_label(max_blocks, routes_k), "not_used": str(e)}]
    build0 = time.perf_counter() - wall0
    if prob is None:
        return too_large_schedule(inst, solver, steps, build0, wall0)
    empty = [jd.name for jd in prob.jobs if not jd.cands]
    if empty:
        raw = RawResult("infeasible", None, message=_no_candidate_message(inst, prob, empty))
    else:
        opts = options
        if options.time_limit_s is not None:
            opts = _replace(options, time_limit_s=max(0.0, options.time_limit_s - build0))
        warm = warm_choice(prob, warm_start) if warm_start is not None else None
        plog.info("P2 exact (%s): %d candidates; solving %s", solver, sum(len(jd.cands) for jd in prob.jobs),
                  progress.when())
        if solver == "cpsat":
            from .p2.cpsat import solve_cpsat
            raw = solve_cpsat(prob, opts, warm)
        else:
            from .p2.milp import solve_milp
            raw = solve_milp(prob, opts, warm)
    prob.stats["candidate_steps"] = steps
    plog.info("P2 exact (%s): %s, objective %s, bound %s %s", solver, raw.status, progress.value(raw.objective),
              progress.value(raw.bound), progress.when())
    return _to_schedule(inst, prob, solver, raw, build0, wall0)


#: the share of a limited solve that the exact P2's candidate build may take before it is stopped (the rest is
#: the model's solve, or the bracket's when no model fits)
BUILD_SHARE = 0.3

#: CP-SAT: the most candidates (all jobs, after D4) and start-dependent table entries a model may hold
CPSAT_MAX_CANDIDATES = 2_000
CPSAT_MAX_TABLE = 2_000_000


def choose_problem(inst: Instance, solver: str, options: SolveOptions, delta: float | None, mu: float,
                   cost_cap_usd: float | None, max_blocks: int | None, routes_k: int | None,
                   horizon_s: float | None) -> tuple[SlottedProblem | None, list[dict[str, Any]]]:
    """The slotted problem over the first candidate set of ``p2.candidates.candidate_ladder`` whose model the back
    end can hold (HiGHS: ``p2.milp.size_error``; CP-SAT, when the candidates are chosen here:
    ``CPSAT_MAX_CANDIDATES`` candidates and ``CPSAT_MAX_TABLE`` table entries; a chosen set whose start tables
    would exceed ``table_cells`` limits is not built), and every step tried (max_blocks, routes_k, candidates,
    why not).  None when no step fits."""
    from .p2.milp import MAX_COLUMNS, size_error
    steps: list[dict[str, Any]] = []
    for mb, rk, cs, why in candidate_ladder(inst, max_blocks, routes_k):
        step = {"max_blocks": mb, "routes_k": rk, "candidates": limits_label(mb, rk)}
        steps.append(step)
        if cs is None:
            step["not_used"] = why
            continue
        priced_time = (cost_cap_usd is not None or mu > 0) and series_end_s(inst) > 0
        if solver == "cpsat" and delta is None:
            d = default_delta(inst, cs, True, 2000) if priced_time else 1.0
        else:
            d = delta
        if max_blocks is None and routes_k is None:     # chosen here: do not build what cannot be held
            cells = table_cells(inst, cs, d if d is not None else default_delta(inst, cs, priced_time, 200),
                                priced_time)
            cap = (MAX_CELLS if solver == "cpsat" else
                   HIGHS_CELLS_FACTOR * int(dict(options.backend_options).get("max_columns", MAX_COLUMNS)))
            if cells > cap:
                step["not_used"] = f"{cells:,} (candidate, start) pairs before D4 > {cap:,}: not built"
                continue
        prob = build_problem(inst, d, mu, cost_cap_usd, default_units=200 if solver == "highs" else 2000, cands=cs,
                             horizon_s=horizon_s)
        step["candidates_kept"] = sum(len(jd.cands) for jd in prob.jobs)
        if solver == "highs":
            err = size_error(prob, options.backend_options)
            why = err[0] if err else None
        elif max_blocks is not None or routes_k is not None:
            why = None             # the caller's own candidate set: CP-SAT builds it whatever its size
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


#: the most (candidate, start) pairs the ladder builds a problem for: CP-SAT (the start tables are that large
#: while they are built), and HiGHS as a multiple of its column limit (D4 seldom removes more)
MAX_CELLS = 10_000_000
HIGHS_CELLS_FACTOR = 10


def table_cells(inst: Instance, cs: CandidateSet, delta: float, priced_time: bool) -> int:
    """(candidate, start index) pairs of the slotted problem over ``cs`` on unit ``delta`` before D4 (its start
    tables while they are built): sum_j |C_j| (H - lo_j + 1), with H of P2.6."""
    O = delta * origin_units(inst, delta)
    t0 = max(j.arrival_s for j in inst.jobs)
    if priced_time:
        t0 = max(t0, series_end_s(inst))
    H = math.ceil((t0 - O) / delta) + sum(max((math.ceil(c.run_s / delta) for c in cs.by_job[j.name]), default=0)
                                          for j in inst.jobs)
    return sum(len(cs.by_job[j.name]) * max(H - math.ceil((j.arrival_s - O) / delta) + 1, 0) for j in inst.jobs)


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


def _replace(o: SolveOptions, **kw) -> SolveOptions:
    from dataclasses import replace
    return replace(o, **kw)


def _no_candidate_message(inst, prob, names) -> str:
    parts = []
    for nm in names:
        job = inst.job(nm)
        jd = next(j for j in prob.jobs if j.name == nm)
        if jd.lo > prob.H:
            parts.append(f"job {nm!r}: arrives after the horizon cap ({prob.start_of(prob.H):g} s)")
        else:
            parts.append(f"job {nm!r}: no placement fits ({job.stages} stages x {job.gpus_per_stage} GPUs; every "
                         f"multi-region placement needs a route whose links carry its no-stall demand b_j)")
    return "infeasible: " + "; ".join(parts)


def _to_schedule(inst: Instance, prob: SlottedProblem, solver: str, raw: RawResult, build0: float,
                 wall0: float) -> Schedule:
    plans = []
    if raw.choice is not None:
        for j, (c, t) in raw.choice.items():
            plans.append(prob.jobs[j].cands[c].plan(prob.start_of(t)))
    cs = prob.candset
    extra: dict[str, Any] = {
        "problem": "schedule",
        "time_unit_s": prob.delta_s,
        ("time_resolution_s" if solver == "cpsat" else "slot_s"): prob.delta_s,
        "mu_s_per_usd": prob.mu,
        "reservation": "no-stall: w = b_j on every hop",
        "horizon_units": prob.H,
        "horizon_proven": prob.horizon_proven,
        "candidates_per_job": prob.stats["candidates_per_job"],
        "candidates_enumerated": prob.stats["candidates_enumerated"],
        "candidate_set_complete": cs.complete,
        "optimality_scope": ("all no-stall placements" if cs.complete and prob.horizon_proven
                             else "over the candidate set" + ("" if prob.horizon_proven else " within horizon_s")),
        "binding_resources": prob.stats["binding_resources"],
        "grid_origin_s": prob.origin_s,
        "candidates_used": used_label(prob),
        "candidate_steps": prob.stats.get("candidate_steps", []),
        "model": slotted_label(prob),
        "status_for_posed_problem": posed_status(raw.status, prob),
        "bound_is_for": slotted_label(prob) + (", not a lower bound of the continuous-time P2" if
                                               raw.bound is not None else ""),
    }
    if cs.incomplete_reasons:
        extra["incomplete_reasons"] = list(cs.incomplete_reasons)
    if prob.cost_cap_usd is not None:
        extra["cost_cap_usd"] = prob.cost_cap_usd
    extra.update(raw.extra)
    sched = make_schedule(inst, plans, METHOD[solver], solver=None,
                          meta={"problem": "schedule", "mu_s_per_usd": prob.mu,
                                "candidates_used": extra["candidates_used"], "model": extra["model"],
                                "status_for_posed_problem": extra["status_for_posed_problem"]})
    status = raw.status
    if raw.choice is not None:
        m = sched.metrics
        cost = objective_cost_usd(inst, m)
        ev = m["avg_jct_s"] + (0.0 if prob.cost_cap_usd is not None else prob.mu * cost)
        extra["evaluator_objective"] = ev
        extra["evaluator_objective_cost_usd"] = cost   # electricity (+ egress if objective.egress)
        extra["objective_difference"] = (raw.objective - ev) if raw.objective is not None else None
        extra["rounding_slack_s"] = math.fsum(prob.delta_s * int(prob.jobs[j].d[c]) - float(prob.jobs[j].run_s[c])
                                              for j, (c, t) in raw.choice.items())
    gap = relative_gap(raw.objective, raw.bound)
    info = SolverInfo(name=solver, status=status, objective=raw.objective, bound=raw.bound, gap=gap,
                      wall_s=time.perf_counter() - wall0, build_s=build0 + raw.build_s, solve_s=raw.solve_s,
                      nodes=raw.nodes, message=raw.message, extra=extra)
    return sched.replace(solver=info)


def pareto_front(inst: Instance, solver: str = "cpsat", mus: Sequence[float] | None = None,
                 epsilons: Sequence[float] | None = None, options: SolveOptions = SolveOptions(), **kw):
    """The JCT-cost Pareto front of P2: one exact solve per mu (weighted sum) or per epsilon (cost cap).

    Returns a pandas DataFrame with one row per point: mu_s_per_usd or epsilon_usd, avg_jct_s,
    objective_cost_usd (the cost the front trades: electricity, plus egress when the instance's objective counts
    it), the three money figures total_electricity_usd, total_egress_usd, total_cost_usd (electricity + egress),
    status, gap, objective, and ``nondominated`` (no other row is at least as good in JCT and objective cost
    and better in one).  Every figure is the evaluator's.  Default
    mus: 0 and m * (0.01, 0.1, 1, 10, 100, 1000) with m = (mean JCT / cost) of the mu = 0 optimum.
    """
    import pandas as pd
    if mus is not None and epsilons is not None:
        raise InputError("give either mus (weighted sum) or epsilons (cost caps), not both")
    rows = []

    def point(sched, **key):
        m, s = sched.metrics, sched.solver
        ok = m.get("avg_jct_s") is not None
        money = {k: (m[k] if ok else None) for k in MONEY_KEYS}
        rows.append({**key, "avg_jct_s": m.get("avg_jct_s"),
                     "objective_cost_usd": objective_cost_usd(inst, m) if ok else None, **money,
                     "status": s.status, "gap": s.gap, "objective": s.objective, "wall_s": s.wall_s})

    if epsilons is not None:
        for e in epsilons:
            point(solve_schedule(inst, solver, options, cost_cap_usd=float(e), **kw), epsilon_usd=float(e))
    else:
        if mus is None:
            s0 = solve_schedule(inst, solver, options, mu=0.0, **kw)
            point(s0, mu_s_per_usd=0.0)
            m0 = s0.metrics
            c0 = (m0["total_electricity_usd"] + (m0["total_egress_usd"] if inst.objective.egress else 0.0)
                  if m0.get("avg_jct_s") is not None else 0.0)
            scale = m0["avg_jct_s"] / c0 if c0 > 0 else 1.0
            mus = [scale * f for f in (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)]
        for mu in mus:
            point(solve_schedule(inst, solver, options, mu=float(mu), **kw), mu_s_per_usd=float(mu))
    df = pd.DataFrame(rows)
    ok = df["avg_jct_s"].notna()
    nd = []
    for i, r in df.iterrows():
        if not ok[i]:
            nd.append(False)
            continue
        c = "objective_cost_usd"
        dom = ((df["avg_jct_s"] <= r["avg_jct_s"]) & (df[c] <= r[c])
               & ((df["avg_jct_s"] < r["avg_jct_s"]) | (df[c] < r[c])) & ok)
        nd.append(not bool(dom.any()))
    df["nondominated"] = nd
    return df
