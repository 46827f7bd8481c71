"""Column generation at one node of P1's branch-and-price (issue 37): the node's restrictions applied to the
restricted master (columns that break a branch get upper bound 0, conv rows of forced or forbidden jobs
fixed), heuristic pricing that respects them, and exact pricing (the one-job walk MILP with the branch's bounds)
of the jobs in parallel, with the node's Lagrangian bound

    LB = z_RMP + sum_j term_j,   term_j = min(-y_conv_j, lb_j)        free job
                                          min(lb_j, M - y_conv_j)     started job (conv_j = 1, its artificial at M)
                                          0                           job fixed not to start

(lb_j <= the least reduced cost of job j's placements that meet the node's branches; the artificial columns of
the >= rows are in the restricted master with reduced cost >= 0 at its optimum), valid at every iteration.
A node's LP optimum is proven when a full exact round (every job's MILP to optimality) adds no column.

Parallel pricing: the exact MILPs of a round run in chunks of ``CHUNK`` jobs on ``threads`` threads (highspy's
``run`` releases the GIL: measured, docs/research/p1-colgen/log.md round 2); the results are taken in job order
and a partial round stops only at a chunk's end, so the columns and bounds do not depend on the thread count.
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import highspy
import numpy as np

from ..data import PlacementData
from .branching import FREE, Node, restricted_job
from .columns import Column, make_column
from .master import Master
from .pricing import HeuristicPricer

log = logging.getLogger(__name__)

INF = highspy.kHighsInf
CHUNK = 4              # jobs per step of an exact round (fixed: the thread count changes nothing)
PARTIAL = 2            # a partial exact round stops after a chunk in which this many jobs gave a column
BOUND_GAP = 1e-6       # a full "bound" round solves the MILPs to this gap x the scale (their dual bound is used)
BOUND_EVERY = 0.15     # a full bound round at least every this share of the level's time (and <= 1/3 of it)


@dataclass
class NodeLP:
    """What column generation at a node ended with."""
    bound: float                   # proven lower bound of the node (-inf: none)
    converged: bool                # the node's master LP optimum is proven (bound ~ z)
    z: float | None                # last restricted master value
    support: list = field(default_factory=list)    # (column, value) of its last LP solution
    artificial: float = 0.0
    timed_out: bool = False
    iterations: int = 0
    exact_rounds: int = 0


@dataclass
class Context:
    """What every node of a level shares: the master (one HiGHS LP for the whole tree), the pricers, the
    tolerances, the deadline and the thread pool."""
    data: PlacementData
    M: Master
    pricers: object                # engine.Pricers
    deadline: float | None         # perf_counter() deadline
    threads: int = 1
    tol: float = 1e-9              # a column is added when its reduced cost < -tol
    level_s: float = 600.0
    heur: dict = field(default_factory=dict)
    iterations: int = 0
    exact_rounds: int = 0
    last_bound_t: float = field(default_factory=time.perf_counter)
    bound_round_s: float = 0.0
    pool: ThreadPoolExecutor | None = None

    def left(self) -> float:
        return INF if self.deadline is None else self.deadline - time.perf_counter()

    def heuristic(self, j: int, br) -> HeuristicPricer:
        key = (j, br.x, br.forbid, br.need, tuple(sorted(br.nmax.items())), tuple(sorted(br.nmin.items())))
        if key not in self.heur:
            self.heur[key] = HeuristicPricer(self.data, restricted_job(self.data.jobs[j], br), br.need,
                                             {r: k for r, k in br.nmin.items()})
        return self.heur[key]


def apply_node(M: Master, node: Node, allowed: list | None = None) -> None:
    """Column upper bounds (0 for a column that breaks a branch) and conv row bounds of ``node``."""
    h = M.h
    n = len(M.columns)
    if n:
        ok = allowed if allowed is not None else [node.job(c.j).allows(c) for c in M.columns]
        idx = np.arange(M.n_art, M.n_art + n, dtype=np.int32)
        h.changeColsBounds(n, idx, np.zeros(n), np.array([INF if a else 0.0 for a in ok]))
    for d in M.data.jobs:
        br = node.job(d.j)
        lo = 1.0 if br.started else -INF
        hi = 0.0 if br.x == 0 else 1.0
        h.changeRowBounds(M.index[("conv", d.j)], lo, hi)


def solve_master(ctx: Context) -> tuple[float, np.ndarray, np.ndarray] | None:
    """The restricted master LP within the time left (None on the time limit)."""
    left = ctx.left()
    if left <= 0:
        return None
    ctx.M.h.setOptionValue("time_limit", float(max(left, 0.01)) if left < INF else INF)
    try:
        return ctx.M.solve()
    except RuntimeError:
        return None
    finally:
        ctx.M.h.setOptionValue("time_limit", INF)


def heuristic_round(ctx: Context, node: Node, y: np.ndarray, scale: float) -> int:
    M, data, added = ctx.M, ctx.data, 0
    for d in data.jobs:
        br = node.job(d.j)
        if br.x == 0:
            continue
        if ctx.left() <= 0:          # a round over 50 jobs takes tens of seconds at fleet scale
            break
        du = M.job_duals(y, d.j)
        for rc, chain, st, routes in ctx.heuristic(d.j, br).price(du, ctx.tol * scale, most=3):
            col = make_column(data, d, chain, st, routes)
            if br.allows(col) and du.reduced_cost(col) < -ctx.tol * scale and M.add(col):
                added += 1
    return added


def _left(deadline: float | None) -> float:
    """Seconds for one MILP: the time left to ``deadline`` (computed when the MILP starts), at most 600 s."""
    return 600.0 if deadline is None else max(min(deadline - time.perf_counter(), 600.0), 0.05)


def _price_one(ep, du, br, deadline: float | None, whole: bool, tol: float, scale: float):
    """One job's exact pricing under its branch (run in a worker thread: the MILP objects are per job).  Each
    MILP gets the time left when it starts (the jobs of a chunk that wait for a thread, or run one after the
    other, must not each get the chunk's time)."""
    ep.restrict(br if br is not FREE else None)
    try:
        lb, col, status = ep.price(du, _left(deadline), abs_gap=max(tol, BOUND_GAP * scale) if whole else tol,
                                   cutoff=None if whole else -tol, first=not whole)
        if status == "Solution limit reached" and (col is None or du.reduced_cost(col) >= -tol):
            # HiGHS may stop on a solution above the cutoff (models/placement.md 9d (c)): solve it out
            lb, col, status = ep.price(du, _left(deadline), abs_gap=tol)
        return lb, col, status
    finally:
        ep.unrestrict()


def exact_round(ctx: Context, node: Node, y: np.ndarray, start: int, scale: float, whole: bool
                ) -> tuple[bool, float, bool, int, int]:
    """Exact pricing from job ``start`` on (the jobs not fixed to 0), chunk by chunk, until a chunk ends with
    ``PARTIAL`` jobs having given a column (unless ``whole``) or every job was priced.  Returns (every job
    priced, sum_j term_j of the Lagrangian bound, every job's lb >= -tol, columns added, next start)."""
    M, data = ctx.M, ctx.data
    jobs = [d.j for d in data.jobs if node.job(d.j).x != 0]
    if not jobs:
        return True, 0.0, True, 0, 0
    k0 = next((i for i, j in enumerate(jobs) if j >= start), 0)
    order = jobs[k0:] + jobs[:k0]
    tol = ctx.tol * scale
    total, proven, added, hits = 0.0, True, 0, 0
    for c0 in range(0, len(order), CHUNK):
        chunk = order[c0:c0 + CHUNK]
        eps = [ctx.pricers.exact_pricer(j) for j in chunk]      # built here, in this thread (Pyomo)
        dus = [M.job_duals(y, j) for j in chunk]
        left = ctx.left()
        if left <= 0:
            return False, total, False, added, chunk[0]
        args = [(ep, du, node.job(j), ctx.deadline, whole, tol, scale) for ep, du, j in zip(eps, dus, chunk)]
        if ctx.pool is not None and len(chunk) > 1:
            res = list(ctx.pool.map(lambda a: _price_one(*a), args))
        else:
            res = [_price_one(*a) for a in args]
        for j, du, (lb, col, status) in zip(chunk, dus, res):      # job order: deterministic
            br = node.job(j)
            if not lb >= -tol * (1 + 1e-9):
                proven = False
                log.debug("job %d: lb %.3g status %s col rc %s", j, lb, status, None if col is None else du.reduced_cost(col))
            if br.started:
                total += min(lb, M.big_m - du.conv)
            else:
                total += min(-du.conv, lb)
            if col is not None and br.allows(col) and du.reduced_cost(col) < -tol and M.add(col):
                added += 1
                hits += 1
        if not whole and hits >= PARTIAL and c0 + CHUNK < len(order):
            return False, total, proven, added, order[c0 + CHUNK]
    return True, total, proven, added, start


def node_cg(ctx: Context, node: Node, prune_at: float, scale: float) -> NodeLP:
    """Column generation at ``node`` until its LP optimum is proven, its bound reaches ``prune_at`` (it cannot
    hold a better solution), or the time is up."""
    M = ctx.M
    apply_node(M, node)
    best = node.bound
    start, it = 0, 0
    out = NodeLP(best, False, None)
    while True:
        if ctx.left() <= 0:
            out.timed_out = True
            break
        got = solve_master(ctx)
        if got is None:
            out.timed_out = True
            break
        it += 1
        ctx.iterations += 1
        z, y, lam = got
        out.z, out.artificial = z, M.artificial()
        out.support = [(c, float(v)) for c, v in zip(M.columns, lam) if v > 1e-9]
        now = time.perf_counter()
        bound_round = now - ctx.last_bound_t >= max(BOUND_EVERY * ctx.level_s, 2 * ctx.bound_round_s)
        n_new = 0 if bound_round else heuristic_round(ctx, node, y, scale)
        if n_new:
            continue
        ctx.exact_rounds += 1
        out.exact_rounds += 1
        tr = time.perf_counter()
        full, total, proven, n_new, start = exact_round(ctx, node, y, start, scale, whole=bound_round)
        if full:
            ctx.last_bound_t = time.perf_counter()
            if bound_round:
                ctx.bound_round_s = ctx.last_bound_t - tr
            best = max(best, z + total)
            out.bound = best
            if not n_new:
                out.converged = proven
                break
        if best >= prune_at:
            break
    out.iterations = it
    return out
