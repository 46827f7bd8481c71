"""The optimal pipeline schedule of one placement by CP-SAT (models/pipeline.md, equations (P1)-(P11)).

Notation (models/pipeline.md):
    K = 0..S-1 stages, I = 0..m-1 micro-batches, Q = kinds (F, B) or (F, D, W)
    s_{q,k,i}   start of compute block q of micro-batch i on stage k       (integer time units)
    x^f_{k,i}   start of the activation transfer over cross-region boundary k (stage k -> k+1)
    x^b_{k,i}   start of the gradient transfer over boundary k (stage k+1 -> k)
    C_max       makespan
Durations are rounded UP to whole multiples of the time unit ``resolution_s`` (default max_k T_F(k) / 1000),
so every grid schedule is feasible in real time.  The solver's per-stage block orders are then re-timed
exactly (as soon as possible, schedules.simulate_orders) in real durations: that re-timed schedule is the one
returned, and its makespan is <= objective (in seconds).  ``objective_s`` and ``bound_s`` are the grid model's;
when every duration lies on the grid (``exact_grid``), they are the real problem's.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from .. import clock
from ..errors import InputError, SolverUnavailableError
from ..solvers.base import relative_gap
from ..solvers.cpsat import solve_interruptible
from .model import PipelineModel
from .schedules import Op, greedy, makespan, onefoneb, orders_of, simulate_orders

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OptimalResult:
    ops: tuple[Op, ...]           # the returned schedule, re-timed in real durations
    iteration_s: float            # its makespan
    status: str                   # optimal | feasible | infeasible | time_limit | error (SolverInfo statuses)
    objective_s: float | None     # CP-SAT incumbent x resolution (grid model)
    bound_s: float | None         # CP-SAT proven lower bound x resolution (grid model)
    gap: float | None             # relative gap objective vs bound
    resolution_s: float
    exact_grid: bool              # every duration is a whole number of time units (no rounding happened)
    wall_s: float
    source: str                   # "cp-sat", or the heuristic kept when CP-SAT returned nothing better


def default_resolution(model: PipelineModel) -> float:
    return max(model.t_f) / 1000.0


def _units(x: float, r: float) -> tuple[int, bool]:
    """x seconds in whole units of r, rounded UP; and whether x was already on the grid."""
    q = x / r
    n = math.ceil(q - 1e-9)
    return n, abs(q - round(q)) <= 1e-9 * max(1.0, abs(q))


def solve_optimal(model: PipelineModel, time_limit_s: float = 60.0, threads: int = 1, seed: int = 0,
                  resolution_s: float | None = None, hint: bool = True) -> OptimalResult:
    """Minimum-makespan schedule of ``model`` under its memory limit (CP-SAT, equations (P1)-(P11))."""
    try:
        from ortools.sat.python import cp_model
    except ImportError as e:  # pragma: no cover - ortools is a dependency
        raise SolverUnavailableError(f"the optimal pipeline schedule needs OR-Tools CP-SAT: {e}") from e
    t_wall = time.perf_counter()
    r = resolution_s or default_resolution(model)
    dur, bnd, exact = _grid_durations(model, r)
    best_grid_ms, best_ops = _best_heuristic(model, r)
    g = _Grid(cp_model.CpModel(), model, dur, bnd, int(round(best_grid_ms / r)) + 1)
    g.add_blocks()
    g.add_dependencies()
    g.add_memory()
    g.add_makespan()
    if hint:
        g.add_hint(best_ops, best_grid_ms, r)
    status, obj, bound, real_cands = _solve(g, cp_model, time_limit_s, threads, seed, r)
    # the heuristics, re-timed in real durations, are valid schedules too: never return worse than them
    for name, fn in (("1f1b", onefoneb), ("greedy", greedy)):
        ops = fn(model)
        real_cands.append((makespan(ops), name, ops))
    real_cands.sort(key=lambda c: (c[0], c[1] != "cp-sat"))
    ms, source, ops = real_cands[0]
    wall = time.perf_counter() - t_wall
    log.info("pipeline CP-SAT S=%d m=%d: %s obj=%s bound=%s (%.2fs)", model.stages, model.microbatches, status, obj,
             bound, wall)
    return OptimalResult(ops=tuple(ops), iteration_s=ms, status=status, objective_s=obj, bound_s=bound,
                         gap=relative_gap(obj, bound), resolution_s=r, exact_grid=exact, wall_s=wall,
                         source=source)


def _grid_durations(model: PipelineModel, r: float) -> tuple[dict, dict, bool]:
    """Block durations {(kind, stage): units} and boundaries {stage k: (latency, transfer) units}, rounded UP to
    the grid of ``r`` seconds, and whether every one was on the grid already."""
    exact = True

    def U(x):
        nonlocal exact
        n, on = _units(x, r)
        exact &= on
        return n

    dur = {(q, k): U(model.duration(q, k)) for q in model.kinds for k in range(model.stages)}
    bnd = {}
    for b in model.boundaries:
        if b.ready_s > 0:
            raise InputError("the optimal pipeline schedule does not model a boundary's ready_s (links set up late)")
        bnd[b.stage] = (U(b.latency_s), U(b.transfer_s))
    return dur, bnd, exact


def _best_heuristic(model: PipelineModel, r: float) -> tuple[float, list[Op]]:
    """The shorter of the 1F1B and greedy schedules on the grid model (makespan, ops): the horizon and the hint."""
    grid = model.scaled(r)
    cands = []
    for name, fn in (("1f1b", onefoneb), ("greedy", greedy)):
        ops = fn(grid)
        cands.append((makespan(ops), name, ops))
    cands.sort(key=lambda c: c[0])
    best_grid_ms, _, best_ops = cands[0]
    return best_grid_ms, best_ops


class _Grid:
    """The CP-SAT model on the grid, built family by family (in this order: the model is the same as one built
    in a single pass, so the solver's search is too)."""

    def __init__(self, cm, model: PipelineModel, dur: dict, bnd: dict, H: int):
        self.cm, self.model, self.dur, self.bnd, self.H = cm, model, dur, bnd, H
        self.S, self.m = model.stages, model.microbatches
        self.bk, self.lk = model.back_kind, model.last_kind
        self.start, self.xstart = {}, {}
        self.cmax = None

    def end(self, q, k, i):
        return self.start[(q, k, i)] + self.dur[(q, k)]

    def add_blocks(self) -> None:
        """Start and interval of every compute block; (P1) the first forward block starts the iteration; (P2) one
        block at a time per stage."""
        cm, S, m, H = self.cm, self.S, self.m, self.H
        stage_itv = [[] for _ in range(S)]
        for k in range(S):
            for q in self.model.kinds:
                d = self.dur[(q, k)]
                for i in range(m):
                    s = cm.NewIntVar(0, H - d, f"s_{q}_{k}_{i}")
                    self.start[(q, k, i)] = s
                    stage_itv[k].append(cm.NewFixedSizeIntervalVar(s, d, f"I_{q}_{k}_{i}"))
        cm.Add(self.start[("F", 0, 0)] == 0)
        for k in range(S):
            cm.AddNoOverlap(stage_itv[k])

    def add_dependencies(self) -> None:
        """(P3)-(P5) data dependencies, with transfers over cross-region boundaries; (P6) one message at a time per
        link direction, (P8) in micro-batch order."""
        cm, S, m, H, bk, start, end = self.cm, self.S, self.m, self.H, self.bk, self.start, self.end
        xstart = self.xstart
        for k in range(S - 1):
            b = self.bnd.get(k)
            link_itv = {"fwd": [], "bwd": []}
            for i in range(m):
                if b is None:   # same region: zero cost
                    cm.Add(start[("F", k + 1, i)] >= end("F", k, i))
                    cm.Add(start[(bk, k, i)] >= end(bk, k + 1, i))
                    continue
                lat, c = b
                if c == 0:
                    cm.Add(start[("F", k + 1, i)] >= end("F", k, i) + lat)
                    cm.Add(start[(bk, k, i)] >= end(bk, k + 1, i) + lat)
                    continue
                xf = cm.NewIntVar(0, H, f"xf_{k}_{i}")
                xb = cm.NewIntVar(0, H, f"xb_{k}_{i}")
                xstart[("XF", k, i)] = xf
                xstart[("XB", k + 1, i)] = xb
                link_itv["fwd"].append(cm.NewFixedSizeIntervalVar(xf, c, f"XF_{k}_{i}"))
                link_itv["bwd"].append(cm.NewFixedSizeIntervalVar(xb, c, f"XB_{k}_{i}"))
                cm.Add(xf >= end("F", k, i))
                cm.Add(start[("F", k + 1, i)] >= xf + c + lat)
                cm.Add(xb >= end(bk, k + 1, i))
                cm.Add(start[(bk, k, i)] >= xb + c + lat)
                if i:   # (P8) transfers in micro-batch order on each link direction
                    cm.Add(xf >= xstart[("XF", k, i - 1)] + c)
                    cm.Add(xb >= xstart[("XB", k + 1, i - 1)] + c)
            # (P6) one message at a time per link direction
            for lst in link_itv.values():
                if lst:
                    cm.AddNoOverlap(lst)
        for k in range(S):
            for i in range(m):
                cm.Add(start[(bk, k, i)] >= end("F", k, i))          # (P4) backward after own forward
                if self.model.split:
                    cm.Add(start[("W", k, i)] >= end("D", k, i))     # (P5) W after D

    def _delays(self) -> tuple[list[int], list[int], list[int]]:
        """Minimum delays along the pipeline (grid units): head[k] earliest start of F(k, .), trip[k] from the end
        of F(k, i) to the earliest start of B/D(k, i) (the round trip through the later stages), back[k] from the
        end of Q_b(k, i) to the end of the Q_b(0, i) chain."""
        S, dur, bk = self.S, self.dur, self.bk
        delay = [0] * S                                        # delay[k]: boundary k's latency + transfer
        for k, (lat, c) in self.bnd.items():
            delay[k] = lat + c
        head = [0] * S
        for k in range(1, S):
            head[k] = head[k - 1] + dur[("F", k - 1)] + delay[k - 1]
        trip = [0] * S
        for k in range(S - 2, -1, -1):
            trip[k] = delay[k] + dur[("F", k + 1)] + trip[k + 1] + dur[(bk, k + 1)] + delay[k]
        back = [0] * S
        for k in range(1, S):
            back[k] = back[k - 1] + delay[k - 1] + dur[(bk, k - 1)]
        return head, trip, back

    def add_memory(self) -> None:
        """(P7) memory: in-flight micro-batches per stage, with (P10) a micro-batch's residence bounded below."""
        cm, m, H, lk, start, end = self.cm, self.m, self.H, self.lk, self.start, self.end
        _, trip, _ = self._delays()
        for k in range(self.S):
            lim = self.model.memory_limit[k]
            if lim >= m:
                continue
            mem = []
            min_res = self.dur[("F", k)] + trip[k] + sum(self.dur[(q, k)] for q in self.model.kinds if q != "F")
            for i in range(m):
                sz = cm.NewIntVar(min_res, H, f"mem_{k}_{i}")   # (P10) redundant: a micro-batch's residence
                cm.Add(sz == end(lk, k, i) - start[("F", k, i)])
                mem.append(cm.NewIntervalVar(start[("F", k, i)], sz, end(lk, k, i), f"M_{k}_{i}"))
            cm.AddCumulative(mem, [1] * m, lim)

    def add_makespan(self) -> None:
        """(P8) micro-batch order within (stage, kind): symmetry breaking; (P9) the makespan C_max, minimized;
        (P11) redundant lower bounds on it."""
        cm, S, m, start, end = self.cm, self.S, self.m, self.start, self.end
        head, _, back = self._delays()
        for k in range(S):
            for q in self.model.kinds:
                for i in range(1, m):
                    cm.Add(start[(q, k, i)] >= end(q, k, i - 1))
        cmax = self.cmax = cm.NewIntVar(0, self.H, "C_max")
        for k in range(S):
            cm.Add(cmax >= end(self.lk, k, m - 1))
            # (P11) redundant: stage k is busy m * (sum of its blocks) after its first forward, and its last
            # backward block still has to reach stage 0
            work = m * sum(self.dur[(q, k)] for q in self.model.kinds)
            cm.Add(cmax >= start[("F", k, 0)] + work + (back[k] if not self.model.split else 0))
            cm.Add(start[("F", k, 0)] >= head[k])
        cm.Minimize(cmax)

    def add_hint(self, best_ops: list[Op], best_grid_ms: float, r: float) -> None:
        """The best heuristic schedule (on the grid) as CP-SAT's hint."""
        for o in best_ops:
            key = (o.kind, o.stage, o.mb)
            var = self.xstart.get(key) if o.is_transfer else self.start.get(key)
            if var is not None:
                self.cm.AddHint(var, int(round(o.start_s / r)))
        self.cm.AddHint(self.cmax, int(round(best_grid_ms / r)))


def _solve(g: _Grid, cp_model, time_limit_s: float | None, threads: int, seed: int, r: float):
    """Solve the grid model; (status, objective s, bound s, [(makespan, "cp-sat", ops)] with the solver's block
    orders re-timed in real durations, when it found a schedule)."""
    solver = cp_model.CpSolver()
    p = solver.parameters
    if time_limit_s is not None:
        p.max_time_in_seconds = float(max(clock.budget(time_limit_s), 0.01))     # never past the deadline
    p.num_workers = int(threads or 1)
    p.random_seed = int(seed)
    st = solve_interruptible(solver, g.cm)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.INFEASIBLE: "infeasible",
              cp_model.UNKNOWN: "time_limit", cp_model.MODEL_INVALID: "error"}.get(st, "error")
    obj = bound = None
    real_cands = []
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        obj = solver.ObjectiveValue() * r
        bound = solver.BestObjectiveBound() * r
        grid_ops = []
        for (q, k, i), s in g.start.items():
            t = solver.Value(s) * r
            grid_ops.append(Op(q, k, i, t, t + g.dur[(q, k)] * r, t + g.dur[(q, k)] * r))
        ops = simulate_orders(g.model, orders_of(grid_ops, g.S))
        real_cands.append((makespan(ops), "cp-sat", ops))
    return status, obj, bound, real_cands
