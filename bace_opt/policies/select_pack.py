"""Select-pack: price-pack with a selection step.  First *which* jobs start (the most jobs, then the cheapest
set of that many), then *where* (price-pack's packing: long jobs first into the cheap GPUs).

Why (docs/research/price-pack/): price-pack's P1 gap is ~0 except where the GPUs bind the *number* of jobs:
on the measured paper instance with 24 jobs it starts as many jobs as the optimum but pays 60.5 % more, all
selection.  Its starting orders pick the set of the most jobs by GPUs ascending, then by cost weight, so a set
of seven 40-stage jobs (one of them the dearest job of the queue) beats the optimum's six 40-stage jobs and
one cheap 48-stage job, which fill the GPUs exactly.  The packing-order search of price-pack moves one job at
a time through an order and cannot trade one job of the set for another.  Select-pack searches over *sets*:

1. **Starting sets.**  price-pack's starting orders (``PricePack.starting_best``), and the set a knapsack
   gives: with each job's stand-alone cost c_j (its cheapest placement on the decision state,
   ``cheapest_placement``) and GPUs d_j = S_j g_j, the least sum of c_j over sets of exactly K jobs whose d_j
   sum to at most the free GPUs (dynamic programming over (jobs, GPUs); K the most jobs any starting order
   started, and K + 1 when the GPUs allow it).  The knapsack ignores which regions hold the GPUs, the links,
   and that the jobs compete for the cheap GPUs; it only proposes a set, which is then packed.
2. **Packing a set** (``set_order``): its jobs in descending run time N (m + S - 1) t_j (the cost per GPU:
   the cheap GPUs go to the jobs that pay most for each of them; with one GPU per stage it is price-pack's
   cost order), then every other job that has a placement, smallest first (a set never packs fewer jobs than its
   GPUs leave room for).  If a member of the set does not fit, the set is packed again with its jobs by GPUs
   descending (first-fit decreasing) and the better packing kept.  Scored (jobs started, then cost) by
   price-pack's packer, whose prefix cache makes sets that share their dearest jobs cheap to pack.
3. **Swap search.**  First improvement over moves of the current set: add one job (when the free GPUs allow),
   then swap one job of the set for one outside it whose GPUs fit in what the swapped job and the unused GPUs
   leave, the moves in ascending order of their estimated change of cost (c_in - c_out), at most
   ``sel_evals`` packings (a deterministic budget, not a clock).  It stops early when no more jobs fit in the
   free GPUs and the set costs the knapsack's bound (``Selection.settled``).
   The search starts from price-pack's own decision (its starting orders and its search over the packing
   order), so it never returns a worse one.
4. price-pack's search over the packing order of the best set found (another ``max_evals`` packings), and
   BACE-Pipe's decision as a floor (never fewer jobs, nor a dearer decision).

Costs compared here are estimates at the prices of ``now`` (P1's reading); every figure reported is priced by
the evaluator.  Deterministic: no randomness, ties broken by the instance's job order.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..instance import Job
from ..schedule import JobPlan
from .base import ClusterState
from .plans import plan_cost
from .price_pack import Packer, PricePack, better, cost_weight


class SelectPack(PricePack):
    """See the module doc.  ``sel_evals``: packings for the swap search (0: starting sets only)."""

    def __init__(self, name: str = "select-pack", sel_evals: int = 30, knapsack: bool = True, **kw):
        if not (isinstance(sel_evals, int) and sel_evals >= 0):
            raise ValueError(f"sel_evals must be an integer >= 0, got {sel_evals!r}")
        super().__init__(name=name, **kw)
        self.sel_evals, self.knapsack = sel_evals, bool(knapsack)
        self.options = {**self.options, "sel_evals": sel_evals, "knapsack": self.knapsack}

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        if not queue:
            return []
        base = self.bace.decide(now, queue, state)
        packer = Packer(self, state, queue)
        best = self.starting_best(packer, queue, state, base)
        if self.search:
            best = packer.improve(best)                 # price-pack's decision
        sel = Selection(self, packer, queue, state).search(best)
        if sel is not best and self.search:
            sel = packer.improve(sel, until=packer.evals + self.max_evals)
        return self.floor(packer, sel, base, state)


class Selection:
    """The set search of one decision (module doc, steps 1-3)."""

    def __init__(self, pol: SelectPack, packer: Packer, queue: Sequence[Job], state: ClusterState):
        self.pol, self.packer, self.state = pol, packer, state
        inst = state.inst
        idx = inst.job_index
        self.jobs = {j.name: j for j in queue}
        fit = [j for j in queue if packer.first_plan(j.name) is not None]
        self.fit = sorted(fit, key=lambda j: idx[j.name])
        self.c = {j.name: plan_cost(inst, j, packer.first_plan(j.name))[0] for j in fit}
        self.d = {j.name: j.gpus for j in fit}
        self.cap = sum(state.free_gpus.values())
        self.w = {j.name: cost_weight(j) / j.gpus_per_stage for j in fit}     # run time: cost per GPU
        self.idx = idx
        # the jobs outside a set, packed after it: smallest first, then cheapest
        self.tail = tuple(j.name for j in sorted(fit, key=lambda j: (self.d[j.name], self.c[j.name], idx[j.name])))
        self.evals = 0

    # ------------------------------------------------------------------ packing a set
    def set_order(self, members: frozenset, big_first: bool = False) -> tuple:
        if big_first:
            key = lambda n: (-self.d[n], -self.w[n], self.idx[n])
        else:
            key = lambda n: (-self.w[n], self.idx[n])
        return tuple(sorted(members, key=key)) + tuple(n for n in self.tail if n not in members)

    def pack(self, members: frozenset):
        """((-jobs, cost), order, started set) of the better of the set's packings."""
        self.evals += 1
        order = self.set_order(members)
        sc = self.packer.score(order)
        started = self.started(order)
        if not members <= started:
            self.evals += 1
            alt = self.set_order(members, big_first=True)
            sc2 = self.packer.score(alt)
            if better(sc2, sc):
                sc, order, started = sc2, alt, self.started(alt)
        return sc, order, started

    def started(self, order: tuple) -> frozenset:
        return frozenset(p.name for p in self.packer.plans(order))

    # ------------------------------------------------------------------ the search
    def search(self, best):
        """Best ((-jobs, cost), order) over the starting sets and the swap search from the best of them."""
        if not self.fit:
            return best
        sc, names = best
        cur = (sc, names, self.started(names))
        lb = {}                                    # jobs -> least sum of stand-alone costs (None: too many)
        if self.pol.knapsack:
            for kk in (-sc[0], -sc[0] + 1):
                s = self.knapsack_set(kk)
                lb[kk] = None if s is None else sum(self.c[n] for n in s)
                if s:
                    cand = self.pack(s)
                    if better(cand[0], cur[0]):
                        cur = cand
        improved = True
        while improved and self.evals < self.pol.sel_evals and not self.settled(cur[0], lb):
            improved = False
            for members in self.moves(cur[2]):
                if self.evals >= self.pol.sel_evals:
                    break
                cand = self.pack(members)
                if better(cand[0], cur[0]):
                    cur, improved = cand, True
                    break
        sc, names, _ = cur
        return (sc, names) if better(sc, best[0]) else best

    @staticmethod
    def settled(sc: tuple[int, float], lb: dict) -> bool:
        """No set of the search beats ``sc``: no k + 1 jobs fit in the free GPUs, and the cost is the knapsack's
        least sum of stand-alone costs of k jobs (a job packed on a residual costs at least its stand-alone
        cost: ``cheapest_placement`` there searches a subset of the decision state's chains, up to the first-fit
        route exception ``Packer._place`` notes)."""
        k = -sc[0]
        return k + 1 in lb and lb[k + 1] is None and lb.get(k) is not None and sc[1] <= lb[k] * (1 + 1e-9)

    def moves(self, cur: frozenset):
        """Sets one move from ``cur``: adds (cheapest first), then swaps by ascending estimated change."""
        left = self.cap - sum(self.d[n] for n in cur)
        out_ = [j.name for j in self.fit if j.name not in cur]
        for b in sorted((b for b in out_ if self.d[b] <= left), key=lambda b: (self.c[b], self.idx[b])):
            yield cur | {b}
        swaps = [(self.c[b] - self.c[a], self.idx[a], self.idx[b], a, b)
                 for a in cur for b in out_ if self.d[b] <= self.d[a] + left]
        swaps.sort()
        for _, _, _, a, b in swaps:
            yield (cur - {a}) | {b}

    def knapsack_set(self, k: int) -> frozenset | None:
        """The least sum of stand-alone costs over sets of exactly ``k`` jobs within the free GPUs (None if no
        such set)."""
        names = [j.name for j in self.fit]
        if k <= 0 or k > len(names):
            return None
        d = [self.d[n] for n in names]
        cap = min(self.cap, sum(sorted(d)[-k:]))
        if sum(sorted(d)[:k]) > cap:
            return None
        inf = np.inf
        dp = np.full((k + 1, cap + 1), inf)          # dp[m, g]: least cost of m jobs using exactly g GPUs
        dp[0, 0] = 0.0
        take = np.zeros((len(names), k + 1, cap + 1), dtype=bool)
        for i, n in enumerate(names):
            di, ci = d[i], self.c[n]
            if di > cap:
                continue
            for m in range(min(i + 1, k), 0, -1):
                cand = dp[m - 1, :cap + 1 - di] + ci
                cur = dp[m, di:]
                better_ = cand < cur
                if better_.any():
                    cur[better_] = cand[better_]
                    take[i, m, di:] = better_
        g = int(np.argmin(dp[k]))
        if not np.isfinite(dp[k, g]):
            return None
        chosen, m = [], k
        for i in range(len(names) - 1, -1, -1):
            if m > 0 and take[i, m, g]:
                chosen.append(names[i])
                g -= d[i]
                m -= 1
        return frozenset(chosen)
