"""Heuristic pricing of one job (issue 37): placements of negative reduced cost, found fast, proven nothing.

For a speed class c and a set of regions, the routes are shortest paths on dual-weighted links (latency priced at
lat_j Pi_j, the link's bandwidth dual times b_jc, egress), the order of the regions is the cheapest Hamiltonian
path over those distances (exact by a subset DP up to ``DP_MAX`` regions, nearest neighbour above), and the
stage split is a greedy fill (one stage in every region, the rest cheapest per stage first, P1's fractional
knapsack with unit weights).  The split changes Pi_j, which changes the link weights: the two are alternated
``ROUNDS`` times.  Region sets: every region that holds the job alone, and covers built greedily from the
cheapest regions per stage, each region in turn forced first.  Every placement returned fits the free resources
of the job alone (``columns.fits_alone``); its reduced cost is recomputed from the model's coefficients.

The proof that no placement is missed is ``pricing_exact``'s (the one-job walk MILP).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..data import JobData, PlacementData
from .columns import fits_alone, route_links
from .master import JobDuals

DP_MAX = 9
ROUNDS = 3
SEEDS = 6
LOCAL_SEARCH = 4
LOCAL_EVALS = 60


def _apsp(n: int, edges: list[tuple[int, int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Floyd-Warshall: distances and next-hop matrix over an undirected graph on nodes 0..n-1."""
    D = np.full((n, n), math.inf)
    nxt = np.full((n, n), -1, dtype=int)
    for v in range(n):
        D[v, v] = 0.0
        nxt[v, v] = v
    for a, b, w in edges:
        if w < D[a, b]:
            D[a, b] = D[b, a] = w
            nxt[a, b], nxt[b, a] = b, a
    for k in range(n):
        via = D[:, k, None] + D[None, k, :]
        better = via < D - 1e-15
        if better.any():
            D = np.where(better, via, D)
            nxt = np.where(better, np.broadcast_to(nxt[:, k, None], (n, n)), nxt)
    return D, nxt


def _path(nxt: np.ndarray, a: int, b: int) -> list[int]:
    p = [a]
    while p[-1] != b:
        v = int(nxt[p[-1], b])
        if v < 0 or v in p:
            return []
        p.append(v)
    return p


def _order(regions: list[int], D: np.ndarray) -> list[int]:
    """The Hamiltonian path through ``regions`` of least total distance D (subset DP, or nearest neighbour)."""
    k = len(regions)
    if k <= 2:
        return list(regions)
    if k > DP_MAX:
        best, best_len = None, math.inf
        for s in regions:
            path, left, tot = [s], set(regions) - {s}, 0.0
            while left:
                v = min(left, key=lambda u: D[path[-1], u])
                tot += D[path[-1], v]
                path.append(v)
                left.remove(v)
            if tot < best_len:
                best, best_len = path, tot
        return best
    idx = {i: r for i, r in enumerate(regions)}
    full = (1 << k) - 1
    dp = {(1 << i, i): (0.0, None) for i in range(k)}
    for mask in range(1, full + 1):
        for last in range(k):
            cur = dp.get((mask, last))
            if cur is None:
                continue
            for nx in range(k):
                if mask & (1 << nx):
                    continue
                val = cur[0] + D[idx[last], idx[nx]]
                key = (mask | (1 << nx), nx)
                if key not in dp or val < dp[key][0]:
                    dp[key] = (val, last)
    last = min(range(k), key=lambda i: dp.get((full, i), (math.inf,))[0])
    if dp.get((full, last), (math.inf,))[0] == math.inf:
        return []
    order, mask = [], full
    while last is not None:
        order.append(idx[last])
        prev = dp[(mask, last)][1]
        mask &= ~(1 << last)
        last = prev
    return order[::-1]


def _split(d: JobData, chain: list[int], coef: dict, lo: dict | None = None) -> list[int] | None:
    """Greedy fill: one stage per chain region (``lo[r]`` where given), the rest to the cheapest coef first (up
    to cap)."""
    st = {r: max(1, (lo or {}).get(r, 1)) for r in chain}
    left = d.S - sum(st.values())
    if left < 0 or any(st[r] > d.cap[r] for r in chain):
        return None
    for r in sorted(chain, key=lambda r: (coef[r], r)):
        k = min(left, d.cap[r] - st[r])
        st[r] += k
        left -= k
    return None if left else [st[r] for r in chain]


class HeuristicPricer:
    """Heuristic pricing of one job on the master's data."""

    def __init__(self, data: PlacementData, d: JobData, need=(), lo: dict | None = None):
        """``d`` may be a restricted copy of the job (``branching.restricted_job``: regions forbidden, caps
        lowered); ``need``: regions every placement found uses, ``lo``: least stages per region (a node's
        branches)."""
        self.data, self.d = data, d
        self.need, self.lo = sorted(need), dict(lo or {})
        inst = data.inst
        self.n = len(inst.regions)
        self.ends = {e: (inst.region_index[inst.links[e].a], inst.region_index[inst.links[e].b]) for e in d.links}

    def reduced_cost(self, du: JobDuals, chain, stages, routes) -> float:
        """rc of a placement from the model's coefficients (P1.39) and the duals."""
        d, inst = self.d, self.data.inst
        c = min(d.cls_of[r] for r in chain)
        lat, eg, bw = 0.0, 0.0, 0.0
        for rt in routes:
            for e in route_links(self.data, rt):
                lat += inst.links[e].latency_ms
                eg += inst.links[e].egress_usd_per_gb
                bw += du.omega.get(e, 0.0)
        rate = sum(d.pi[r] * n for r, n in zip(chain, stages))
        if du.level == 1:
            cost = -1.0
        else:
            cost = du.mu * (rate * (d.base_s[c] + d.lat_coef * lat) + (d.egress_coef * eg if self.data.egress else 0.0)) \
                + du.rho * (d.base_s[c] + d.lat_coef * lat)
        return (cost + du.const + sum(du.w[r] * n + du.fix.get(r, 0.0) for r, n in zip(chain, stages))
                + d.demand[c] * bw
                + du.cls_term[c])

    def _candidate(self, du: JobDuals, c: int, regions: list[int]):
        """(rc, chain, stages, routes) of the best placement found on ``regions`` in class c, or None."""
        d, inst, data = self.d, self.data.inst, self.data
        b = d.demand[c]
        cw = du.mu if du.level != 1 else 0.0
        rw = du.rho if du.level != 1 else 0.0
        stage_coef = {r: cw * d.pi[r] * d.base_s[c] + du.w[r] for r in regions}
        if len(regions) == 1:
            st = [d.S] if d.cap[regions[0]] >= d.S and self.lo.get(regions[0], 1) <= d.S else None
            if st is None:
                return None
            return self.reduced_cost(du, regions, st, []), list(regions), st, []
        links = [e for e in d.links if data.free_gbps[e] >= b * (1 - 1e-12)]
        chain = sorted(regions)
        st = _split(d, chain, stage_coef, self.lo)
        if st is None:
            return None
        best = None
        for _ in range(ROUNDS):
            Pi = sum(d.pi[r] * n for r, n in zip(chain, st))
            edges = []
            for e in links:
                l = inst.links[e]
                w = cw * (d.lat_coef * Pi * l.latency_ms + (d.egress_coef * l.egress_usd_per_gb if data.egress else 0.0)) \
                    + rw * d.lat_coef * l.latency_ms + b * du.omega.get(e, 0.0)
                a_, b_ = self.ends[e]
                edges.append((a_, b_, w + 1e-12))
            D, nxt = _apsp(self.n, edges)
            chain = _order(regions, D)
            if not chain:
                return best
            routes = [_path(nxt, u, v) for u, v in zip(chain, chain[1:])]
            if any(not rt for rt in routes):
                return best
            lat = sum(inst.links[e].latency_ms for rt in routes for e in route_links(data, rt))
            coef = {r: stage_coef[r] + cw * d.pi[r] * d.lat_coef * lat for r in regions}
            st2 = _split(d, chain, coef, self.lo)
            if st2 is None:
                return best
            if fits_alone(data, d, chain, st2, routes):
                rc = self.reduced_cost(du, chain, st2, routes)
                if best is None or rc < best[0]:
                    best = (rc, list(chain), st2, routes)
            if st2 == st:
                break
            st = st2
        return best

    def region_sets(self, du: JobDuals, c: int) -> list[list[int]]:
        """Candidate region sets for class c: single regions that hold the job, and greedy covers."""
        d = self.d
        allowed = [r for r in d.regions if d.classes[d.cls_of[r]] >= d.classes[c]]
        if not any(d.cls_of[r] == c for r in allowed):
            return []
        cw = du.mu if du.level != 1 else 0.0
        per = {r: cw * d.pi[r] * d.base_s[c] + du.w[r] + du.fix.get(r, 0.0) / min(d.cap[r], d.S)
               for r in allowed}
        order = sorted(allowed, key=lambda r: (per[r], r))
        sets = [[r] for r in order if d.cap[r] >= d.S]
        seen = set()

        def cover(first: list[int]) -> list[int] | None:
            chosen, tot = list(first), sum(d.cap[r] for r in first)
            for r in order:
                if tot >= d.S:
                    break
                if r not in chosen:
                    chosen.append(r)
                    tot += d.cap[r]
            return chosen if tot >= d.S else None
        firsts = [[]] + [[r] for r in order[:SEEDS]] + [list(p) for p in itertools.combinations(order[:4], 2)]
        for f in firsts:
            s = cover(f)
            if s and len(s) > 1:
                for cand in (s, s + [r for r in order if r not in s][:1]):
                    key = frozenset(cand)
                    if key not in seen and len(cand) <= d.K:
                        seen.add(key)
                        sets.append(cand)
        if self.need:      # a node's branches: every set holds the regions the job must use
            sets = [list(s) + [r for r in self.need if r not in s] for s in sets + [cover(list(self.need))]
                    if s is not None]
            sets = [s for s in sets if len(s) <= d.K and all(r in allowed for r in s)]
        # a set must contain a region of exactly class c (else it is priced in a faster class)
        return [s for s in sets if any(d.cls_of[r] == c for r in s)]

    def price(self, du: JobDuals, tol: float, most: int = 3, search: int = LOCAL_SEARCH) -> list[tuple]:
        """Up to ``most`` distinct placements with rc < -tol, most negative first: (rc, chain, stages, routes).
        ``search``: passes of a local search (add, drop or swap one region) from the best region set of each
        class, run only when the region sets gave no placement below -tol in that class."""
        d = self.d
        found = {}

        def keep(cand):
            if cand is not None and cand[0] < -tol:
                found[(tuple(cand[1]), tuple(cand[2]), tuple(map(tuple, cand[3])))] = cand
        for c in range(len(d.classes)):
            best = None
            for regs in self.region_sets(du, c):
                cand = self._candidate(du, c, regs)
                keep(cand)
                if cand is not None and (best is None or cand[0] < best[0]):
                    best = cand
            if best is not None and search and best[0] >= -tol:     # only where the sets found nothing
                for cand in self._local(du, c, best, search):
                    keep(cand)
        return sorted(found.values(), key=lambda t: t[0])[:most]

    def _local(self, du: JobDuals, c: int, best: tuple, passes: int) -> list[tuple]:
        """First-improvement local search over region sets (add, drop, swap one region) from ``best``."""
        d = self.d
        allowed = [r for r in d.regions if d.classes[d.cls_of[r]] >= d.classes[c]]
        cur, seen, out, budget = best, {frozenset(best[1])}, [], LOCAL_EVALS
        for _ in range(passes):
            s = set(cur[1])
            moves = [s | {r} for r in allowed if r not in s] + [s - {r} for r in s if len(s) > 1] \
                + [(s - {a}) | {b} for a in s for b in allowed if b not in s]
            improved = False
            for m in moves:
                key = frozenset(m)
                if key in seen or len(m) > d.K or sum(d.cap[r] for r in m) < d.S \
                        or not any(d.cls_of[r] == c for r in m):
                    continue
                seen.add(key)
                budget -= 1
                if budget < 0:
                    return out
                cand = self._candidate(du, c, sorted(m))
                if cand is not None and cand[0] < cur[0] - 1e-12:
                    cur, improved = cand, True
                    out.append(cand)
                    break
            if not improved:
                break
        return out
