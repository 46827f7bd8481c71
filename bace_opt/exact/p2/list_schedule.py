"""Feasible P2 schedules for the upper end of a bracket: a serial list scheduler over placement candidates and a
seeded local search over its job order (models/schedule.md section 8.4).

``list_schedule(order)`` places the jobs one by one in ``order``: each at the earliest time >= its arrival at
which one of its candidates (``p2.candidates.enumerate_candidates``) fits every region's free GPUs and every
link's free bandwidth for the candidate's whole run, given the jobs placed before it (a later job may start
before an earlier one if it fits in a gap: backfilling); among the candidates fitting at that time, the one
that ends first (``goal="jct"``); with ``goal="cost"`` the cheapest candidate at its earliest start (the job
waits for it), with ``goal="sum"`` the start and candidate of least end + mu n cost (costs are taken at the
job's arrival: exact for prices constant in time; the evaluator re-prices every returned schedule).  Every schedule it returns satisfies the
capacities by construction and is checked again by the evaluator (``schedule_of``).

``improve(...)`` searches job orders (swap and insert moves, seeded, first improvement) for the lowest mean
JCT (or cost, or JCT + mu cost) of the list schedule within a time budget.
"""
from __future__ import annotations

import bisect
import itertools
import math
import random
import time
from dataclasses import dataclass, field

import numpy as np

from ... import formulas as F
from ...evaluate import make_schedule
from ...instance import Instance
from ...schedule import Schedule, SolverInfo
from .candidates import CandidateSet

#: relative tolerance on capacities (half of the evaluator's, as the exact models use)
TOL = 5e-10
#: a job holds its resources this much past its end in the profile: the evaluator recomputes the end from the
#: start, and a job started exactly at another's end in our arithmetic may overlap it by one rounding error
END_PAD_S = 1e-6


@dataclass
class JobCands:
    arrival: float
    cands: list            # Candidate objects (deduplicated by resource use, run time and cost)
    use: np.ndarray        # (C, K) use of every resource
    run: np.ndarray        # (C,) run time, s
    cost: np.ndarray       # (C,) electricity (+ priced egress) started at the job's arrival, USD
    gpus: int = 0          # GPUs every placement holds (g_j S_j)
    built: dict = field(default_factory=dict)   # placements built by ListScheduler._construct -> index


def price_candidates(inst: Instance, job, cands, rix: dict, K: int) -> JobCands:
    """One job's candidates, deduplicated by resource use, run time and cost (the first of equals kept), with
    their use of every resource (``rix``: region -> column; link li -> column len(rix) + li; K columns), run
    time and cost at the job's arrival: the figures ``evaluate.price_plan`` gives each, computed for all
    candidates at once (numpy; the same arithmetic, element-wise)."""
    a = float(job.arrival_s)
    if not cands:
        return JobCands(a, [], np.zeros((0, K)), np.zeros(0), np.zeros(0), job.gpus)
    nreg = len(rix)
    run_s = np.array([c.run_s for c in cands])
    curves = F.price_curves(inst)
    elec = np.zeros(len(cands))
    for pos in range(max(len(c.blocks) for c in cands)):        # block by block, as F.electricity_usd adds them
        by_region: dict[str, tuple[list, list]] = {}
        for i, c in enumerate(cands):
            if pos < len(c.blocks):
                r, n = c.blocks[pos]
                rows, ns = by_region.setdefault(r, ([], []))
                rows.append(i)
                ns.append(n)
        for r, (rows, ns) in by_region.items():
            reg = inst.region(r)
            kw = job.gpus_per_stage * np.array(ns) * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
            elec[rows] += kw * curves[r].integral_many(a, a + run_s[rows]) / 3600.0
    cost = elec + np.array([c.egress_usd for c in cands]) if inst.objective.egress else elec
    # equal use = the same GPUs per region (one block per region: D1) and the same link reservations
    seen, kept, cells, vals = set(), [], [], []
    for i, (c, rr, cc) in enumerate(zip(cands, run_s.tolist(), cost.tolist())):
        key = (tuple(sorted(c.gpus)), c.link_gbps, round(rr, 9), round(cc, 12))
        if key in seen:
            continue
        seen.add(key)
        row = len(kept) * K
        kept.append(i)
        for r, n in c.gpus:
            cells.append(row + rix[r])
            vals.append(n)
        for li, w in c.link_gbps:
            cells.append(row + nreg + li)
            vals.append(w)
    use = np.bincount(np.array(cells, dtype=np.int64), weights=np.array(vals, dtype=float),
                      minlength=len(kept) * K).reshape(len(kept), K)
    ix = np.array(kept)
    return JobCands(a, [cands[i] for i in kept], use, (a + run_s[ix]) - a, cost[ix], job.gpus)


class ListScheduler:
    """The serial list scheduler of the module doc over a candidate set."""

    def __init__(self, inst: Instance, cs: CandidateSet, max_regions: int = 4):
        self.inst = inst
        self.n = len(inst.jobs)
        regions = [r.name for r in inst.regions]
        self.rix = {r: k for k, r in enumerate(regions)}
        self.cap = np.array([float(r.gpus) for r in inst.regions] + [l.bandwidth_gbps for l in inst.links])
        self.nreg = len(regions)
        # every job's candidates priced at once (``price_candidates``: 1.7 s for 205,772 candidates on 2 loaded
        # cores).  No deadline check here: callers ask for a schedule even with no time left (the gap's bracket
        # with a budget of 0); the P2 bracket stops it at its deadline from outside (``p2.bound.list_upper``)
        self.jobs = [price_candidates(inst, job, cs.by_job.get(job.name, []), self.rix, len(self.cap))
                     for job in inst.jobs]
        self.lim = self.cap * (1 + TOL) + 1e-9
        self.gcap = float(sum(r.gpus for r in inst.regions))
        self.max_regions = max_regions

    def run(self, order, goal: str = "jct", mu: float = 0.0):
        """List-schedule the jobs in ``order`` (job indices); returns [(candidate index, start s)] per job index
        (None for a job that fits nowhere, not even alone)."""
        return self.run_from(order, goal, mu)[0]

    def run_from(self, order, goal: str = "jct", mu: float = 0.0, pos: int = 0, prev=None):
        """``run`` that reuses the placements of ``order[:pos]`` from ``prev`` = (out, states) of an order with
        the same prefix; returns (out, states), states[i] = the usage profile before order[i] is placed."""
        K = len(self.cap)
        if prev is None or pos == 0:
            pos, out, states = 0, [None] * self.n, []
            times = [0.0]                # breakpoints of the usage profile; level[i] holds on [times[i], times[i+1])
            level = [np.zeros(K)]
        else:
            pout, pstates = prev
            states = pstates[:pos]
            out = [None] * self.n
            for j in order[:pos]:
                out[j] = pout[j]
            times, level = list(pstates[pos][0]), list(pstates[pos][1])
        for j in order[pos:]:
            states.append((list(times), list(level)))
            jc = self.jobs[j]
            if not len(jc.cands):       # no candidate of <= 2 regions (every region too small): build one of 3+
                if goal == "jct" and self.max_regions > 2:
                    self._place_built(j, out, times, level)
                continue
            starts = sorted({jc.arrival} | {t for t in times if t > jc.arrival})
            T = np.array(times + [math.inf])
            L = np.array(level)
            gpus = L[:, :self.nreg].sum(axis=1).tolist()        # GPUs in use per interval (the pool test)
            rmin = float(jc.run.min())
            best = None                      # (key, candidate, start)
            cmin = float(jc.cost.min())
            for s in starts:
                i = bisect.bisect_right(times, s) - 1
                e0 = bisect.bisect_left(times, s + rmin)
                if max(gpus[i:max(e0, i + 1)]) + jc.gpus > self.gcap:
                    continue                 # not even the pool has the job's GPUs free throughout
                e = np.searchsorted(T, s + jc.run, side="left")        # intervals i .. e-1 overlap [s, s + R)
                M = np.maximum.accumulate(L[i:], axis=0)              # max level over i..k
                peak = M[np.clip(e - 1 - i, 0, len(M) - 1)]
                ok = np.all(peak + jc.use <= self.lim, axis=1)
                if not ok.any() and goal == "jct" and self.max_regions > 2:
                    ew = bisect.bisect_left(times, s + 1.01 * float(jc.run.max()))
                    c = self._construct(j, M, times, i, s, M[min(max(ew - 1 - i, 0), len(M) - 1)])
                    if c is not None:
                        ok = np.zeros(len(jc.cands), dtype=bool)
                        ok[c] = True
                if not ok.any():
                    continue
                idx = np.flatnonzero(ok)
                if goal == "jct":
                    key = s + jc.run[idx] + 1e-9 * jc.cost[idx]
                elif goal == "cost":      # wait for the cheapest placement: the earliest start of the cheapest
                    key = jc.cost[idx] + 1e-15 * (s + jc.run[idx])
                else:
                    key = s + jc.run[idx] + mu * self.n * jc.cost[idx]
                k = int(np.argmin(key))
                if best is None or key[k] < best[0]:
                    best = (float(key[k]), int(idx[k]), s)
                if goal == "jct" or (goal == "cost" and jc.cost[idx[k]] <= cmin * (1 + 1e-12)):
                    break
            if best is not None:
                _, c, s = best
                out[j] = (c, s)
                self._add(times, level, s, s + jc.run[c] + END_PAD_S, jc.use[c])
        return out, states

    def _place_built(self, j: int, out: list, times: list, level: list) -> None:
        """A job with no candidate at all: at the earliest start (its arrival, then each profile breakpoint) where
        a placement over 3 to ``max_regions`` regions can be built (``_construct``, regions chosen by what is free
        at the start, checked over the whole run), placed there (``out``, the profile)."""
        jc = self.jobs[j]
        L = np.array(level)
        for s in sorted({jc.arrival} | {t for t in times if t > jc.arrival}):
            i = bisect.bisect_right(times, s) - 1
            M = np.maximum.accumulate(L[i:], axis=0)
            c = self._construct(j, M, times, i, s, M[0])
            if c is not None:
                out[j] = (c, s)
                self._add(times, level, s, s + jc.run[c] + END_PAD_S, jc.use[c])
                return

    def _construct(self, j: int, M, times, i: int, s: float, peak) -> int | None:
        """A placement over 3 to ``max_regions`` regions built for start ``s`` when no candidate fits: the
        regions with the most free GPUs over the window (largest first, each filled), the chain order of least
        latency over 1-route hops whose links have the bandwidth free; appended to the job's candidates.  None if
        nothing fits for the placement's whole run."""
        from ... import formulas as F
        from ...evaluate import price_plan
        from .candidates import Candidate
        inst, jc = self.inst, self.jobs[j]
        job = inst.jobs[j]
        g = job.gpus_per_stage
        free = {r: int((self.cap[self.rix[r]] - peak[self.rix[r]]) // g) for r in inst.eligible_regions(job)}
        U, left = [], job.stages
        for r in sorted(free, key=lambda r: (-free[r], r)):
            if left <= 0 or free[r] <= 0:
                break
            U.append((r, min(free[r], left)))
            left -= U[-1][1]
        if left > 0 or not 3 <= len(U) <= self.max_regions:
            return None
        stages = dict(U)
        tau = F.tau_s(inst, job, stages)
        w = F.demand_gbps(job, tau)
        nreg = self.nreg
        best = None
        for order in itertools.permutations(stages):
            if order[0] > order[-1]:
                continue
            rts = [inst.routes(a, b, 1)[0] for a, b in zip(order, order[1:])]
            lu: dict[int, float] = {}
            for rt in rts:
                for li in rt.links:
                    lu[li] = lu.get(li, 0.0) + w
            if any(peak[nreg + li] + v > self.lim[nreg + li] for li, v in lu.items()):
                continue
            lat = sum(rt.latency_ms for rt in rts)
            if best is None or lat < best[0]:
                best = (lat, order, rts, lu)
        if best is None:
            return None
        _, order, rts, lu = best
        it = F.iteration_s(job, tau, [w] * len(rts), [rt.latency_ms for rt in rts])
        cand = Candidate(job.name, tuple((r, stages[r]) for r in order), tuple(rts), w, tau, job.iterations * it,
                         tuple((r, g * stages[r]) for r in order), tuple(sorted(lu.items())),
                         F.egress_usd(job, [rt.egress_usd_per_gb for rt in rts]))
        key = (cand.blocks, tuple(rt.regions for rt in rts))
        if key in jc.built:
            c = jc.built[key]
        else:
            f = price_plan(inst, cand.plan(jc.arrival))
            u = np.zeros(len(self.cap))
            for r, n in cand.gpus:
                u[self.rix[r]] += n
            for li, v in cand.link_gbps:
                u[nreg + li] += v
            jc.cands.append(cand)
            jc.use = np.vstack([jc.use, u])
            jc.run = np.append(jc.run, f.finish_s - f.start_s)
            jc.cost = np.append(jc.cost, f.electricity_usd + (f.egress_usd if inst.objective.egress else 0.0))
            c = jc.built[key] = len(jc.cands) - 1
        e = bisect.bisect_left(times, s + jc.run[c])
        if np.any(M[min(max(e - 1 - i, 0), len(M) - 1)] + jc.use[c] > self.lim):
            return None
        return c

    @staticmethod
    def _add(times, level, s, f, u):
        for t in (s, f):
            i = int(np.searchsorted(times, t, side="right")) - 1
            if times[i] != t:
                times.insert(i + 1, t)
                level.insert(i + 1, level[i].copy())
        i0 = int(np.searchsorted(times, s, side="left"))
        i1 = int(np.searchsorted(times, f, side="left"))
        for i in range(i0, i1):
            level[i] = level[i] + u

    def value(self, sol, goal: str = "jct", mu: float = 0.0) -> float:
        """Mean JCT, total cost or mean JCT + mu cost of ``sol`` (inf if a job is unplaced)."""
        if any(x is None for x in sol):
            return math.inf
        jct = math.fsum(s + self.jobs[j].run[c] - self.jobs[j].arrival for j, (c, s) in enumerate(sol)) / self.n
        cost = math.fsum(self.jobs[j].cost[c] for j, (c, _) in enumerate(sol))
        return jct if goal == "jct" else cost if goal == "cost" else jct + mu * cost

    def schedule_of(self, sol, method: str = "list-schedule") -> Schedule:
        plans = [self.jobs[j].cands[c].plan(s) for j, (c, s) in enumerate(sol)]
        return make_schedule(self.inst, plans, method, solver=SolverInfo(method, "feasible"))


def improve(ls: ListScheduler, orders, budget_s: float, goal: str = "jct", mu: float = 0.0, seed: int = 1,
            stop=None, max_evals: int | None = None, on_best=None):
    """Seeded local search over job orders from each of ``orders`` (the best start kept): random swap and
    insert moves, a move kept when it does not worsen the list schedule's value; at most ``max_evals`` list
    schedules (the result is then the same for a seed whenever the budget is not what ends it).  Returns
    (value, order, sol, evaluations).  ``on_best(value, evaluations)``: told each time the best improves."""
    rng = random.Random(seed)
    t_end = time.perf_counter() + budget_s
    best = None
    evals = 0
    full_s = 0.0            # the longest run of a whole order: the search keeps time for its closing run and a move
    for o in orders:
        t = time.perf_counter()
        sol, states = ls.run_from(o, goal, mu)
        full_s = max(full_s, time.perf_counter() - t)
        v = ls.value(sol, goal, mu)
        evals += 1
        if best is None or v < best[0]:
            best = (v, list(o), (sol, states))
            if on_best is not None:
                on_best(v, evals)
    v, order, (sol, states) = best
    start = (v, order, sol)
    n = len(order)
    while n > 1 and time.perf_counter() + 2 * full_s < t_end and not (stop and stop()) and \
            (max_evals is None or evals < max_evals):
        cand = list(order)
        a, b = rng.sample(range(n), 2)
        if rng.random() < 0.5:          # a local move: within 3 positions
            b = min(max(a + rng.choice((-3, -2, -1, 1, 2, 3)), 0), n - 1)
            if b == a:
                continue
        if rng.random() < 0.5:
            cand[a], cand[b] = cand[b], cand[a]
        else:
            cand.insert(b, cand.pop(a))
        s2, st2 = ls.run_from(cand, goal, mu, min(a, b), (sol, states))
        v2 = ls.value(s2, goal, mu)
        evals += 1
        if v2 <= v:
            if v2 < v and on_best is not None:
                on_best(v2, evals)
            v, order, sol, states = v2, cand, s2, st2
    if order is not start[1]:
        # the moves were evaluated incrementally (``run_from`` reusing the prefix's placements), which can drift
        # from a run of the whole order: report what the order itself gives, so that it reproduces the schedule
        # (never worse than the best start, which was run whole)
        full, _ = ls.run_from(order, goal, mu)          # a check, not a search step: not counted in evals
        vf = ls.value(full, goal, mu)
        if vf > start[0]:
            return start[0], start[1], start[2], evals
        v, sol = vf, full
    return v, order, sol, evals
