"""The stage relaxation of P1's level 2 (models/placement.md section 12, issue 44): an early certified bound and a
better start, before the walk MILP's own search.

The walk model (``p1.walk``) at level 2 with its trail rows (balance, connectivity, pair cut-sets, start / end,
orientation) and its arc rows (cost products, hop counts, bandwidth) switched off: what is left are the stage,
speed-class, GPU-capacity, class-capacity, region-cover, whole-job, count and symmetry rows over x, u, n, s, y.
Every row kept is a row of the walk model, so its feasible set contains the walk model's (projected) and the
dropped cost terms (latency times q, egress times F) are >= 0 with prices >= 0: its optimum is a lower bound of
level 2.  It is 30-100x smaller (fleet20: ~2,000 integer columns against 72,000 columns and 148,000 rows) and
loses little (measured in docs/research/p1-bound/log.md: LP 33.200 against the walk LP 33.289 on a fresh fleet20;
its MIP 135.14 in 10 s where the walk MILP's root bound was 132.45 after 190 s).

``stage_bound``: the LP (simplex; its bound from the row duals, ``p1.lpbound.safe_dual_bound``), then the MIP
(HiGHS's dual bound) in a share of the time, and the MIP's placement of stages (x, n).  With ``floors`` (level 2
at fleet scale, models/placement.md section 13): the latency floors of ``p1.latency`` on, the MIP without them
first, then with them in rounds of separated P1.62 rows (``_mip_rounds``), each round's placement made whole and
the cheapest kept (``StageResult.made_whole``).  ``repair``: that
placement made whole (each job's blocks chained over direct links in the order of least latency, capacities
checked): a start for the full search when it is cheaper than the one at hand.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ...solvers.base import SolveOptions
from ...solvers.highs import set_threads
from .latency import ACTIVE_IN_SEARCH, add_latency_floors, extend_latency_floors, set_floors_active, violated_sets
from .lpbound import relaxation_bound

log = logging.getLogger(__name__)

#: the walk model's rows switched off in the stage relaxation (the trail's, then the arcs')
TRAIL_ROWS = ("con_balance", "con_connect", "con_connect_arc", "con_pair_cut", "con_start_one", "con_end_one",
              "con_start_used", "con_end_used", "con_entered", "con_supply_at_start", "con_supply_total",
              "con_open_trail", "con_orient_end", "con_orient_start", "con_sym_reverse")
ARC_ROWS = ("con_cost_product", "con_cost_product_min", "con_arcs_min", "con_arc_started", "con_whole_split",
            "con_bandwidth", "con_reserve_class")
#: the stage MIP gets this share of the solve's limit, at most ``STAGE_MIP_MAX_S`` (the bound is due by
#: min(60 s, a quarter of the limit))
STAGE_MIP_SHARE = 0.15
STAGE_MIP_MAX_S = 45.0
#: level 2's stage relaxation carries the latency floors (``p1.latency``, P1.61-P1.62), and its MIP, in rounds
#: of P1.62 rows, gets this share of the limit, at most ``FLOOR_MIP_MAX_S``, and at most ``FLOOR_ROUNDS`` rounds
FLOORS = True
FLOOR_MIP_SHARE = 0.3
FLOOR_MIP_MAX_S = 120.0
FLOOR_ROUNDS = 12
#: with the floors, the stage MIP without them runs first (its share of the limit as before the floors)
PLAIN_FIRST = True
#: P1.61 only for the jobs a round's solution splits (added round by round), not for every job from the start
LAZY_PAIRS = True
#: the floors' MIP stops at this relative gap (its dual bound is what is taken: at most this much below its optimum)
FLOOR_MIP_GAP = 1e-4
#: ... and no more rounds once a round's placement made whole is within this (relative) of the bound: the search
#: closes such a gap sooner (realistic 8 x 16: 0.01 % after 4 rounds, which cost 14 s)
FLOOR_STOP_GAP = 5e-4
#: the repair runs only where the start is more than this (relative) above the relaxation's bound: a start that
#: close is kept (realistic 8 x 16 seed 1: select-pack's 62.93 against the bound 62.10; the made-whole 62.38 as
#: the start took HiGHS's level 2 from 25 s to 41-49 s)
REPAIR_MIN_GAP = 0.02


@dataclass
class StageResult:
    """The stage relaxation's figures: bounds (None: none), the MIP's stages {(j, r, c): n} and started jobs."""
    lp_bound: float | None = None
    mip_bound: float | None = None
    mip_status: str = "not run"
    mip_objective: float | None = None
    stages: dict = field(default_factory=dict)
    started: list = field(default_factory=list)
    seconds: float = 0.0
    rounds: int = 0
    made_whole: object = None           # with floors: the cheapest round's placement made whole (a Solution)
    made_whole_usd: float | None = None

    @property
    def bound(self) -> float | None:
        got = [b for b in (self.lp_bound, self.mip_bound) if b is not None and math.isfinite(b)]
        return max(got) if got else None


def budget(options: SolveOptions, share: float, cap: float, t_start: float) -> float | None:
    """Seconds for a phase: ``share`` of the limit, at most ``cap``, never past what is left (None: no limit)."""
    if options.time_limit_s is None:
        return cap
    left = options.time_limit_s - (time.perf_counter() - t_start)
    return max(min(share * options.time_limit_s, cap, left), 0.0)


def stage_bound(m, options: SolveOptions, t_start: float, on_bound=None, floors: bool = False,
                on_made_whole=None) -> StageResult:
    """The stage relaxation of the walk model ``m`` (level 2 prepared: cost objective active, count fixed):
    LP then MIP on HiGHS (module doc).  ``floors`` (level 2): with the latency floors (``p1.latency``, P1.61 every
    pair) and rounds of P1.62 rows on the region sets the MIP's solution breaks, while its time lasts.
    ``on_bound(bound, is_mip)`` is told each bound as it arrives; ``on_made_whole(solution, usd)`` (with floors)
    the first round's placement made whole as soon as it is made (once: checking it against the walk rows takes
    seconds at fleet scale), while the model's rows are those of the search (the walk rows on, the floors as
    ``latency.ACTIVE_IN_SEARCH``): a long solve's time line has it then, not only after the floors' rounds.  The model's rows are restored before returning (the floors stay,
    deactivated unless ``latency.ACTIVE_IN_SEARCH``)."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    t = time.perf_counter()
    out = StageResult()
    off = [getattr(m, n) for n in TRAIL_ROWS + ARC_ROWS if hasattr(m, n) and getattr(m, n).active]
    for c in off:
        c.deactivate()
    if floors and FLOORS:
        add_latency_floors(m, active=True, jobs=set() if LAZY_PAIRS else None)
    try:
        opt = Highs()
        opt.highs_options.update({"random_seed": int(options.seed), "output_flag": False,
                                  "mip_rel_gap": max(options.rel_gap, FLOOR_MIP_GAP if floors and FLOORS else 1e-6)})
        opt.set_instance(m)
        h = opt._solver_model
        h.setOptionValue("output_flag", False)
        # HiGHS sizes one task scheduler per calling thread, by its first solve: the same count as every other solve
        # of this P1 (solvers.highs.solve_pyomo), or a later solve run in this same thread (a Dask or race worker
        # thread) ends "unknown"
        set_threads(h, options.threads)
        lp = relaxation_bound(h, "simplex", budget(options, 1.0, 60.0, t_start))
        out.lp_bound = lp.bound
        if on_bound is not None and lp.bound is not None:
            on_bound(lp.bound, False)
        share, cap = (FLOOR_MIP_SHARE, FLOOR_MIP_MAX_S) if floors and FLOORS else (STAGE_MIP_SHARE, STAGE_MIP_MAX_S)
        tl = budget(options, share, cap, t_start)
        if tl is None or tl > 0.5:
            offer = None
            if on_made_whole is not None:
                def offer(sol, usd):
                    with _search_rows(m, off):
                        on_made_whole(sol, usd)
            _mip_rounds(opt, m, out, tl, on_bound, floors and FLOORS, offer)
    except Exception as e:      # a help, not a need: the search goes on without it
        log.warning("P1: the stage relaxation failed: %s: %s", type(e).__name__, e)
    finally:
        for c in off:
            c.activate()
        set_floors_active(m, ACTIVE_IN_SEARCH)
    out.seconds = time.perf_counter() - t
    log.info("P1: stage relaxation LP %s, MIP %s (%s; %d round(s)) in %.2f s", out.lp_bound, out.mip_bound,
             out.mip_status, out.rounds, out.seconds)
    return out


def _mip_rounds(opt, m, out: StageResult, tl: float | None, on_bound, floors: bool, offer=None) -> None:
    """The stage MIP within ``tl`` seconds (None: no limit), then, with ``floors``, again after each round of
    P1.62 rows (``latency.violated_sets`` of its solution) while time is left and the rounds find some: the best
    bound (each round's is valid: rows are only added), the last solution's stages and started jobs in ``out``;
    ``offer(solution, usd)`` told the first placement made whole."""
    h = opt._solver_model
    end = None if tl is None else time.perf_counter() + tl
    sets: dict = {}
    paired: set = set()
    plain = floors and PLAIN_FIRST
    while True:
        left = None if end is None else end - time.perf_counter()
        if plain:       # the MIP without the floors first: its bound as early as before them (fleet20: 15-25 s)
            cap = STAGE_MIP_MAX_S if tl is None else min(STAGE_MIP_MAX_S, tl * STAGE_MIP_SHARE / FLOOR_MIP_SHARE)
            with _rows_off(opt, list(m.con_lat_link.values()) + list(m.con_lat_floor.values())):
                mip = relaxation_bound(h, "mip", cap if left is None else min(cap, left), keep_values=True)
        else:
            mip = relaxation_bound(h, "mip", left, keep_values=True)
        out.rounds += 1
        if mip.bound is not None and (out.mip_bound is None or mip.bound > out.mip_bound):
            out.mip_bound = mip.bound
            if on_bound is not None:
                on_bound(mip.bound, True)
        out.mip_status = mip.status
        if mip.values is None:
            break
        col = opt._pyomo_var_to_solver_var_map
        out.mip_objective = mip.lp_objective
        out.stages = {k: int(round(mip.values[col[id(v)]])) for k, v in m.n.items() if id(v) in col}
        out.started = [j for j, v in m.x.items() if id(v) in col and mip.values[col[id(v)]] > 0.5]
        if floors and _keep_made_whole(m.data, out) and offer is not None:
            offer(out.made_whole, out.made_whole_usd)
            offer = None
        if plain:
            plain = False
            continue
        if not floors or out.rounds > FLOOR_ROUNDS or mip.status != "Optimal" or \
                (end is not None and end - time.perf_counter() < 0.5) or \
                (out.made_whole_usd is not None and out.mip_bound is not None and
                 out.made_whole_usd <= out.mip_bound * (1 + FLOOR_STOP_GAP) + 1e-12):
            break
        new = violated_sets(m.data, out.stages, sets)
        split = split_jobs(out.stages) - paired if LAZY_PAIRS else set()
        if not new and not split:
            break
        for j, ts in new.items():
            sets.setdefault(j, []).extend(ts)
        paired |= split
        opt.add_constraints(extend_latency_floors(m, new, split))


def split_jobs(stages: dict) -> set:
    """The jobs that the stage solution ``stages`` ({(j, r, c): n}) holds in two regions or more."""
    regs: dict = {}
    for (j, r, _c), k in stages.items():
        if k > 0:
            regs.setdefault(j, set()).add(r)
    return {j for j, rs in regs.items() if len(rs) > 1}


@contextlib.contextmanager
def _rows_off(opt, rows):
    """The rows ``rows`` (ConstraintData loaded in the appsi HiGHS ``opt``) free (-inf, inf) in HiGHS for the
    block, their sides restored after it."""
    import highspy
    h = opt._solver_model
    idx = np.array([opt._pyomo_con_to_solver_con_map[c] for c in rows], dtype=np.int32)
    lp = h.getLp()
    lo, up = np.asarray(lp.row_lower_)[idx], np.asarray(lp.row_upper_)[idx]
    inf = np.full(len(idx), highspy.kHighsInf)
    h.changeRowsBounds(len(idx), idx, -inf, inf)
    try:
        yield
    finally:
        h.changeRowsBounds(len(idx), idx, lo, up)


def _keep_made_whole(data, out: StageResult) -> bool:
    """The placement of ``out``'s last MIP solution made whole (``repair``) kept in ``out`` where it is the
    cheapest of the rounds so far: True when it was."""
    from .solution import solution_cost
    cand = repair(data, out)
    if cand is None:
        return False
    c = solution_cost(data, cand)
    if out.made_whole_usd is None or c < out.made_whole_usd:
        out.made_whole, out.made_whole_usd = cand, c
        return True
    return False


@contextlib.contextmanager
def _search_rows(m, off: list):
    """The block with the rows of the search active on ``m`` (``off``, the walk rows the stage relaxation drops,
    on; the floors as ``latency.ACTIVE_IN_SEARCH``), the stage's rows (``off`` off, the floors on) after it.  Pyomo
    activation only: the HiGHS instance of the rounds is not touched."""
    for c in off:
        c.activate()
    set_floors_active(m, ACTIVE_IN_SEARCH)
    try:
        yield
    finally:
        for c in off:
            c.deactivate()
        set_floors_active(m, True)


def _direct(data, d, a: int, b: int) -> int | None:
    """The link between regions a and b when job ``d`` may use it, else None."""
    inst = data.inst
    e = inst.link_index.get((inst.regions[a].name, inst.regions[b].name))
    return e if e is not None and e in d.links else None


def hop_route(data, d, a: int, c: int, need: float, free: dict, taken: set) -> tuple[list[int], float] | None:
    """The route of a hop a -> c with the least latency over the direct link or one region between, on links
    with ``need`` Gbit/s free (``free``) not yet used by this job (``taken``): (regions, latency) or None."""
    inst = data.inst
    best = None
    for w in [None] + [r for r in range(len(inst.regions)) if r not in (a, c)]:
        path = [a, c] if w is None else [a, w, c]
        links = [_direct(data, d, u, v) for u, v in zip(path, path[1:])]
        if any(e is None or e in taken or free.get(e, 0.0) < need for e in links):
            continue
        lat = sum(inst.links[e].latency_ms for e in links)
        if best is None or lat < best[1]:
            best = (path, lat)
        if w is None:
            break              # the direct link, when it fits, is taken (a detour only when it does not)
    return best


def chain_routes(data, d, regions: list[int], need: float, free: dict) -> list[list[int]] | None:
    """The order of ``regions`` (a job's blocks) and a route per hop (``hop_route``) with the least latency in
    total (every order up to 6 regions, else each region first with the nearest next); None when none fits."""
    if len(regions) == 1:
        return [list(regions)]
    orders = itertools.permutations(regions) if len(regions) <= 6 else \
        [tuple([s0] + sorted(set(regions) - {s0})) for s0 in regions]
    best, best_lat = None, math.inf
    for o in orders:
        routes, taken, lat = [], set(), 0.0
        for a, c in zip(o, o[1:]):
            got = hop_route(data, d, a, c, need, free, taken)
            if got is None:
                break
            routes.append(got[0])
            taken.update(_direct(data, d, u, v) for u, v in zip(got[0], got[0][1:]))
            lat += got[1]
        else:
            if lat < best_lat:
                best, best_lat = routes, lat
    return best


def stage_plans(data, stage: StageResult) -> list | None:
    """The relaxation's placement as plans: each started job's blocks with its stages, chained and routed
    (``chain_routes``) on the bandwidth the jobs before it left (dearest jobs first); None when a job cannot be
    routed or a region's free GPUs would be exceeded (the walk model's P1.13 and P1.36 rows hold by
    construction)."""
    from ... import formulas as F
    from ...schedule import Block, Hop, JobPlan
    inst = data.inst
    by_job: dict = {}
    for (j, r, _c), k in stage.stages.items():
        if k > 0:
            by_job.setdefault(j, {}).setdefault(r, 0)
            by_job[j][r] += k
    started = set(stage.started)
    free = dict(data.free_gbps)
    gpus: dict = {}
    plans = []
    for d in sorted((d for d in data.jobs if d.j in started), key=lambda d: -d.job.gpus):
        placed = by_job.get(d.j, {})
        if sum(placed.values()) != d.S:
            return None
        names = [inst.regions[r].name for r in sorted(placed)]
        b = F.demand_gbps(d.job, F.tau_s(inst, d.job, names))
        routes = chain_routes(data, d, sorted(placed), b, free)
        if routes is None:
            return None
        order = [rt[0] for rt in routes] + ([routes[-1][-1]] if len(placed) > 1 else [])
        hops = []
        for rt in (routes if len(placed) > 1 else []):
            for u, v in zip(rt, rt[1:]):
                free[_direct(data, d, u, v)] -= b
            hops.append(Hop(tuple(inst.regions[v].name for v in rt), b))
        for r in order:
            gpus[r] = gpus.get(r, 0) + placed[r] * d.job.gpus_per_stage
        plans.append(JobPlan(d.job.name, "done", data.t0, tuple(Block(inst.regions[r].name, placed[r])
                                                                    for r in order), tuple(hops)))
    if any(v > data.free_gpus[data.region_names[r]] for r, v in gpus.items()):
        return None
    return plans


def repair(data, stage: StageResult):
    """The stage relaxation's placement made whole (``stage_plans``) and encoded for the walk model
    (``p1.solution.solution_from_plans``), or None."""
    from .solution import solution_from_plans
    try:
        plans = stage_plans(data, stage)
        return solution_from_plans(data, plans) if plans else None
    except Exception as e:      # a start is a help: never let it break the solve
        log.warning("P1: the stage relaxation's placement was not made whole: %s: %s", type(e).__name__, e)
        return None
