"""Branch-and-price of one level of P1 (issue 37): best-first search over ``branching.Node``s, each solved by
column generation (``nodecg.node_cg``) on one restricted master shared by the whole tree.

Bounds.  A node's bound is its proven LP optimum when exact pricing proved it, else its best Lagrangian bound
(both valid); a child starts with its parent's.  The level's bound is the least bound over the tree's leaves:
open nodes, nodes left open (``stuck``: an LP solution the rule cannot branch on, or a node whose pricing could
not be proven), and nodes closed or pruned.  A node is pruned when its bound is >= incumbent - eps with
eps = max(rel_gap |inc|, PROOF_REL max(1, |inc|)) at levels 2 and 3 (the one-job MILPs and the master LP are
solved to tolerances near 1e-9 x the largest column: PROOF_REL covers them), and when no count above the
incumbent's is left at level 1 (bound > inc - 1 + 1e-6, the count is an integer).  "optimal" means the tree
closed within that tolerance.

Incumbents (every one checked: distinct jobs, each placement one of P1's, the GPUs and links of the free
resources held, every master row at the level's bounds met): the starts (caller's warm start, price-pack,
greedy), the restricted master as a MIP (``rmp_mip``, at the root and every ``RMP_EVERY`` nodes, for at most
``RMP_SHARE`` of the time left), and integral node LPs.
"""
from __future__ import annotations

import heapq
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import highspy
import numpy as np

from ..data import PlacementData, count_upper_bound
from ..levels import clears_limit
from .branching import FRAC, Node, same_resources, split
from .columns import Column, fits_alone, make_column
from .master import JobDuals, Master
from .nodecg import Context, apply_node, node_cg
from ....solvers.highs import run_highs

log = logging.getLogger(__name__)

INF = highspy.kHighsInf
PROOF_REL = 1e-6
RMP_EVERY = 10
RMP_SHARE = 0.1
RMP_MAX_S = 30.0
ESCALATE = 4           # times the artificial penalty is raised at one node
ESCALATE_BY = 1000.0


@dataclass
class LevelOutcome:
    """One level's result, in model units (level 1: minus the count)."""
    level: int
    status: str                     # optimal / feasible / time_limit / infeasible
    objective: float | None
    bound: float | None
    cols: list | None               # the incumbent's columns
    source: str | None
    columns: int = 0
    iterations: int = 0
    exact_rounds: int = 0
    nodes: int = 0
    lagrangian_bound: float | None = None     # the best certified bound (the level's bound)
    solve_s: float = 0.0
    message: str = ""
    history: list = field(default_factory=list)
    pool: list = field(default_factory=list)    # every column the level generated (seeds for the next)


def value(level: int, cols: list) -> float:
    if level == 1:
        return -float(len(cols))
    return float(sum(c.cost for c in cols)) if level == 2 else float(sum(c.run_s for c in cols))


def feasible(M: Master, cols: list) -> bool:
    """``cols`` is a placement set of the level: distinct jobs, each one of P1's placements, together within
    the free GPUs and Gbit/s, and every row of the master (at the level's bounds, not a node's) met."""
    data = M.data
    if len({c.j for c in cols}) != len(cols):
        return False
    gpus: dict = {}
    gbps: dict = {}
    for c in cols:
        d = data.jobs[c.j]
        if not fits_alone(data, d, c.chain, c.stages, c.routes):
            return False
        for r, g in c.gpus.items():
            gpus[r] = gpus.get(r, 0) + g
        for e, k in c.links.items():
            gbps[e] = gbps.get(e, 0.0) + k * c.demand
    if any(g > data.free_gpus[data.region_names[r]] for r, g in gpus.items()):
        return False
    if any(b > data.free_gbps[e] * (1 + 1e-9) + 1e-9 for e, b in gbps.items()):
        return False
    act = np.zeros(len(M.rows))
    for c in cols:
        for i, a in M.coefficients(c).items():
            act[i] += a
    for i, k in enumerate(M.rows):
        tol = 1e-9 * max(1.0, abs(M.hi[i]) if M.hi[i] < INF else abs(M.lo[i]))
        if act[i] < M.lo[i] - tol or act[i] > M.hi[i] + tol:
            return False
    return True


def rmp_mip(ctx: Context, time_limit: float) -> list | None:
    """The restricted master as a MIP over every column at hand (the root's restrictions, no artificial
    column): an incumbent's columns or None."""
    M, h = ctx.M, ctx.M.h
    n, na = len(M.columns), M.n_art
    if not n or time_limit <= 0.05:
        return None
    apply_node(M, Node({}, -INF))
    art = np.arange(na, dtype=np.int32)
    if na:
        h.changeColsBounds(na, art, np.zeros(na), np.zeros(na))
    idx = np.arange(na, na + n, dtype=np.int32)
    h.changeColsIntegrality(n, idx, np.array([highspy.HighsVarType.kInteger] * n))
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 1e-6)
    try:
        run_highs(h)
        if h.getInfo().primal_solution_status != 2:
            return None
        vals = np.array(h.getSolution().col_value)[na:]
        return [c for c, v in zip(M.columns, vals) if v > 0.5]
    finally:
        h.setOptionValue("time_limit", INF)
        h.changeColsIntegrality(n, idx, np.array([highspy.HighsVarType.kContinuous] * n))
        if na:
            h.changeColsBounds(na, art, np.zeros(na), np.full(na, INF))
        h.clearSolver()


def rounded(support: list) -> list | None:
    """The columns of an integral LP solution (every value within FRAC of 0 or 1), else None."""
    if any(FRAC < v < 1 - FRAC for _, v in support):
        return None
    return [c for c, v in support if v > 0.5]


class Search:
    """The tree of one level (see the module docstring)."""

    def __init__(self, data: PlacementData, level: int, z1, z2, pricers, starts, deadline, threads: int,
                 rel_gap: float, level_s: float, t_cut=None, limit=None, seeds=()):
        self.data, self.level, self.t0 = data, level, time.perf_counter()
        self.rel_gap = max(rel_gap, 0.0)
        self.limit = limit
        self.M = Master(data, level, z1, z2, conv_art=True, t_cut=t_cut)
        for c in seeds:
            self.M.add(c)
        self.pool = ThreadPoolExecutor(threads) if threads > 1 else None
        self.ctx = Context(data, self.M, pricers, deadline, threads, level_s=level_s, pool=self.pool)
        self.inc, self.inc_val, self.inc_src = None, math.inf, None
        for src, cols in starts:
            for c in cols:
                self.M.add(c)
            self.offer(cols, src)
        for d in ([] if seeds else data.jobs):   # each job's heuristic placements at zero duals: a first set
            if deadline is not None and time.perf_counter() >= deadline:
                break
            du = JobDuals(level, 0.0, {r: 0.0 for r in d.regions}, {}, [0.0] * len(d.classes), 0.0,
                          mu=1.0 if level == 2 else 0.0, rho=1.0 if level == 3 else 0.0)
            for _, chain, st, routes in pricers.heuristic(d.j).price(du, -math.inf, most=2):
                self.M.add(make_column(data, d, chain, st, routes))
        self.open: list = []
        self.stuck: list = []
        self.closed_min = math.inf
        self.seq = 0
        self.nodes = 0
        self.shown = (None, None)
        self.history: list = []
        self.root_lb = None

    def scale(self) -> float:
        if self.level == 1:
            return 1.0
        vals = [c.cost if self.level == 2 else c.run_s for c in self.M.columns]
        return max([1.0] + vals)

    def eps(self) -> float:
        if self.level == 1:
            return 1.0 - 1e-6
        return max(self.rel_gap * abs(self.inc_val), PROOF_REL * max(1.0, abs(self.inc_val)))

    def prunable(self, bound: float) -> bool:
        if self.limit is not None:      # a search for a solution of value <= limit: a node is out when its bound
            return clears_limit(bound, self.limit, max(self.rel_gap, 1e-9))      # clears the limit
        return self.inc is not None and bound >= self.inc_val - self.eps()

    def offer(self, cols: list, source: str) -> bool:
        if cols is None:
            return False
        v = value(self.level, cols)
        if self.limit is not None and v > self.limit:
            return False
        if v < self.inc_val - 1e-12 * max(1.0, abs(v)) and feasible(self.M, cols):
            self.inc, self.inc_val, self.inc_src = list(cols), v, source
            return True
        return False

    def bound(self, current: float | None = None) -> float:
        b = [self.closed_min] + [n.bound for _, _, n in self.open] + [n.bound for n in self.stuck]
        if current is not None:
            b.append(current)
        lb = min(b)
        if self.level == 1:
            lb = max(lb, -float(count_upper_bound(self.data)))
        return min(lb, self.inc_val) if self.inc is not None else lb

    def progress(self, current: float | None = None) -> None:
        b, inc = self.bound(current), (self.inc_val if self.inc is not None else None)
        if (b, inc) == self.shown:
            return
        self.shown = (b, inc)
        t = time.perf_counter() - self.t0
        self.history.append((round(t, 3), b, inc))
        sgn = -1.0 if self.level == 1 else 1.0
        gap = None if inc is None or not math.isfinite(b) else abs(inc - b) / max(abs(inc), 1e-10) * 100
        log.info("P1 CG level %d: %.1f s bound %s incumbent %s gap %s open %d columns %d", self.level, t,
                 f"{sgn * b:.9g}" if math.isfinite(b) else "none", "none" if inc is None else f"{sgn * inc:.9g}",
                 "-" if gap is None else f"{gap:.4f} %", len(self.open) + len(self.stuck), len(self.M.columns))

    def escalate(self) -> None:
        """Multiply the artificial columns' cost by ``ESCALATE_BY``."""
        M = self.M
        M.big_m *= ESCALATE_BY
        if M.n_art:
            h = M.h
            h.changeColsCost(M.n_art, np.arange(M.n_art, dtype=np.int32), np.full(M.n_art, M.big_m))

    def push(self, node: Node) -> None:
        heapq.heappush(self.open, (node.bound, node.seq, node))

    def run(self) -> LevelOutcome:
        try:
            return self._run()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)

    def _run(self) -> LevelOutcome:
        ctx = self.ctx
        self.push(Node({}, -math.inf))
        timed_out = False
        self.progress()
        while self.open:
            if ctx.left() <= 0:
                timed_out = True
                break
            if self.limit is not None and self.inc is not None:
                break                       # a solution within the limit: what the search was for
            _, _, node = heapq.heappop(self.open)
            if self.prunable(node.bound):
                self.closed_min = min(self.closed_min, node.bound)
                continue
            self.nodes += 1
            prune_at = self.inc_val - self.eps() if self.inc is not None else math.inf
            if self.limit is not None:
                prune_at = self.limit + 2 * max(max(self.rel_gap, 1e-9) * abs(self.limit), 1e-9) + 1e-12
            deadline = ctx.deadline
            if self.nodes == 1 and deadline is not None:     # time kept for the master MIP after the root
                ctx.deadline = deadline - min(RMP_MAX_S, RMP_SHARE * ctx.left())
            try:
                res = node_cg(ctx, node, prune_at, self.scale())
            finally:
                ctx.deadline = deadline
            for _ in range(ESCALATE):
                # an LP optimum that keeps some artificial column: the penalty may be too small for this node
                # (any penalty gives a valid bound); raise it until the node is pruned or the artificials leave
                if not res.converged or res.artificial < 1e-9 or self.prunable(max(node.bound, res.bound)):
                    break
                node.bound = max(node.bound, res.bound)
                self.escalate()
                res = node_cg(ctx, node, prune_at, self.scale())
            node.bound = max(node.bound, res.bound)
            if self.nodes == 1:
                self.root_lb = node.bound
            if res.timed_out:
                self.push(node)
                timed_out = True
                if self.nodes == 1:
                    self.offer(rmp_mip(ctx, min(RMP_MAX_S, ctx.left())), "rmp-mip")
                break
            self.progress(node.bound)
            if self.nodes == 1 or self.nodes % RMP_EVERY == 0:
                t = min(RMP_MAX_S, RMP_SHARE * ctx.left()) if ctx.deadline is not None else RMP_MAX_S
                if self.offer(rmp_mip(ctx, t), "rmp-mip"):
                    self.progress(node.bound)
            self.settle(node, res)
        if timed_out:
            self.progress()
        return self.outcome(timed_out)

    def settle(self, node: Node, res) -> None:
        """Close, branch or keep open a node whose column generation ended (not on the time limit)."""
        if self.prunable(node.bound):
            self.closed_min = min(self.closed_min, node.bound)
            return
        cols = rounded(res.support)
        if cols is not None:
            if res.artificial < 1e-9:
                self.offer(cols, "node-lp-integral")
            if res.converged:      # the node's optimum is this integral solution (or it is infeasible)
                self.closed_min = min(self.closed_min, node.bound)
                self.progress()
                return
            self.stuck.append(node)
            return
        sp = split(node, res.support)
        if sp is None:
            if same_resources(res.support) and res.artificial < 1e-9:
                pick: dict = {}
                for c, v in res.support:
                    if v > pick.get(c.j, (None, 0.0))[1]:
                        pick[c.j] = (c, v)
                if self.offer([c for c, _ in pick.values()], "node-lp-integral") and res.converged:
                    self.closed_min = min(self.closed_min, node.bound)
                    return
            self.stuck.append(node)
            return
        for j, br, label in sp[1]:
            self.seq += 1
            self.push(node.child(j, br, self.seq, label))

    def outcome(self, timed_out: bool) -> LevelOutcome:
        M, ctx = self.M, self.ctx
        b = self.bound()
        closed = not self.open and not self.stuck
        bnd = b if math.isfinite(b) else None
        if self.limit is not None:
            status = "feasible" if self.inc is not None else ("infeasible" if closed else "time_limit")
        elif self.inc is None:
            status = "infeasible" if closed and not timed_out else "time_limit"
        elif closed or (bnd is not None and self.prunable(bnd)):
            status = "optimal"
        else:
            status = "feasible"
        msg = f"branch-and-price: {self.nodes} nodes" + (f", {len(self.stuck)} left open (not branchable)"
                                                         if self.stuck else "") + (", time limit" if timed_out else "")
        return LevelOutcome(self.level, status, self.inc_val if self.inc is not None else None, bnd, self.inc,
                            self.inc_src, len(M.columns), ctx.iterations, ctx.exact_rounds, self.nodes, bnd,
                            time.perf_counter() - self.t0, msg, self.history, list(M.columns))


def branch_and_price(data: PlacementData, level: int, z1=None, z2=None, *, pricers, starts=(), deadline=None,
                     threads: int = 1, rel_gap: float = 1e-9, level_s: float = 600.0, t_cut=None, limit=None,
                     seeds=()) -> LevelOutcome:
    """Branch-and-price of ``level`` (1: min -count; 2: min cost, count >= z1; 3: min run time, count >= z1,
    cost <= z2).  ``starts``: (source, columns) of placement sets offered as incumbents (and their columns);
    ``seeds``: more columns.  ``t_cut`` (level 2): the run-time row sum run <= t_cut; ``limit``: search only for a
    solution of value <= limit, stop at the first (status "feasible"), or prove there is none ("infeasible":
    every node's bound clears the limit, ``p1.levels.clears_limit``)."""
    return Search(data, level, z1, z2, pricers, starts, deadline, threads, rel_gap, level_s, t_cut, limit,
                  seeds).run()
