"""BACE-Pipe's pathfinder, allocators and plan pricing on integer tables (issue 15): the same decisions as the
readable reference functions (``pathfinder``, ``allocators``, ``plans``) with less work per call.

``place(job, state, ...)`` returns exactly ``BacePipe.place`` of the bandwidth pathfinder (``find_chains`` with
``grow_chain``, then ``allocate`` / ``allocate_even`` / ``allocate_fill``, ``make_plan`` and ``plan_cost``, the
cheapest chain kept), and ``fits`` exactly ``place(...) is not None``.  "Exactly" is literal: every comparison
is made on the same floats, computed by the same expressions in the same order (b_j = (8 A / 1000) / tau,
max of the same stage times, the same sums in the same order, the same price integrals), and ties are broken
by the same keys (a region name's tie-break by its rank in sorted name order).  ``tests/test_policies.py``
checks it against the reference on random residual states (hypothesis) and ``tests/test_sim_replay.py`` on
whole simulations.  Where the time went before (profile in ``benchmarks/README.md``, issue 15): every seed's
chain was turned into a ``Chain``, a ``JobPlan`` and priced through the model objects; every candidate hop
re-read ``inst.routes`` and each route's links through method calls.  Here the tables of ``chain_tables`` are
read (per instance, per job, per residual bandwidth vector: each hop option's bottleneck residual is computed
once and shared by every seed's growth and every job asked on the same residual bandwidth; the growth
subtracts its own chain's use only where a route meets it); a growth works on integers and lists; only the
winning chain becomes a ``Chain`` and a ``JobPlan``, the others are priced from numbers.
"""
from __future__ import annotations

from typing import Sequence

from .. import formulas as F
from ..instance import Job
from ..schedule import JobPlan
from .allocators import ALLOCATE_COUNTS
from .base import ClusterState
from .chain_tables import JobTables, ResidualCaps, Tables, hop_caps, hosts_of, job_tables, tables
from .pathfinder import Chain
from .plans import make_plan

def grow(T: Tables, J: JobTables, seed: int, hosts: dict, price: list, caps: dict, bw: Sequence[float],
         by_bandwidth: bool):
    """``pathfinder.grow_chain`` on integers: (chain regions, hop options, tau) or None."""
    S = J.S
    slots = hosts[seed]
    ts = J.ts
    tau = ts[seed]
    if slots >= S:
        return [seed], [], tau
    c, rank, n_reg = J.c, T.rank, T.n
    chain = [seed]
    inch = {seed}
    opts_taken = []
    used: dict[int, float] = {}
    used_keys = used.keys()
    tail = seed
    while True:
        best_r = -1
        bbw = bp = bt = bb = 0.0
        bopt = None
        brank = 0
        base = tail * n_reg
        for r in hosts:
            if r in inch:
                continue
            t2 = ts[r]
            if t2 < tau:
                t2 = tau
            b2 = c / t2
            hc = caps.get(base + r)
            if hc is None:
                hc = hop_caps(T, caps, bw, tail, r)
            opt = None
            if used:
                # the chain's own use only lowers a bottleneck (bw - u <= bw in IEEE arithmetic for u >= 0), so
                # an option whose bottleneck is below b2 fails either way
                for cap, links, o in hc:
                    if cap < b2:
                        continue
                    if not used_keys.isdisjoint(links):
                        cap = min([bw[k] - used.get(k, 0.0) for k in links])
                        if cap < b2:
                            continue
                    opt = o
                    break
            else:
                for cap, links, o in hc:
                    if cap >= b2:
                        opt = o
                        break
            if opt is None:
                continue
            p = price[r]
            if best_r < 0:
                pass
            elif by_bandwidth:     # key (-bw, price, name)
                if not (cap > bbw or (cap == bbw and (p < bp or (p == bp and rank[r] < brank)))):
                    continue
            else:                  # key (price, -bw, name)
                if not (p < bp or (p == bp and (cap > bbw or (cap == bbw and rank[r] < brank)))):
                    continue
            best_r, bbw, bp, brank, bopt, bt, bb = r, cap, p, rank[r], opt, t2, b2
        if best_r < 0:
            return None
        chain.append(best_r)
        inch.add(best_r)
        opts_taken.append(bopt)
        for k in bopt[0]:
            used[k] = used.get(k, 0.0) + bb
        tau = bt
        slots += hosts[best_r]
        if slots >= S:
            return chain, opts_taken, tau
        tail = best_r


def _cost(T: Tables, J: JobTables, job: Job, chain: list, opts: list, n: list, start: float):
    """``plans.plan_cost(make_plan(...))`` for blocks ``n`` on a prefix of ``chain``: (cost, run s)."""
    q = len(n)
    ts = J.ts
    g = J.g
    pp, curves = T.power_pue, T.curves
    if q == 1:
        # one block, no hop: slot = tau, and 2.0 * sum([]) / 1000.0 adds 0.0 (exact)
        r = chain[0]
        run = job.iterations * ((job.microbatches + job.stages - 1) * ts[r] + 0.0)
        P, pue = pp[r]
        return g * n[0] * P * pue / 1000.0 * curves[r].integral(start, start + run) / 3600.0 + 0.0, run
    tau = max([ts[r] for r in chain[:q]])
    slot = tau
    lat = []
    c = J.c
    b = c / tau
    for i in range(q - 1):
        slot = max(slot, c / b)
        lat.append(opts[i][2])
    run = job.iterations * ((job.microbatches + job.stages - 1) * slot + 2.0 * sum(lat) / 1000.0)
    end = start + run
    tot = 0.0
    for r, k in zip(chain, n):
        P, pue = pp[r]
        kw = g * k * P * pue / 1000.0
        tot += kw * curves[r].integral(start, end) / 3600.0
    if T.egress_on:
        tot += F.egress_usd(job, [opts[i][3] for i in range(q - 1)])
    return tot, run


def _prices(T: Tables, state: ClusterState, hosts: dict) -> list:
    """Prices at ``state.now`` (== ``state.price``) of the host regions, in a list by region; also fills
    ``T.f0``, each region's price integral from its series start to ``now`` (``formulas.PriceCurve._F(now)``, the
    subtrahend of every integral from ``now``).  Both kept per ``now``: functions of the instance and the time
    only."""
    now = state.now
    if T.price_now != now:
        T.price_now = now
        T.price = [None] * T.n
        T.f0 = [None] * T.n
    price, f0 = T.price, T.f0
    curves = T.curves
    for r in hosts:
        if price[r] is None:
            cv = curves[r]
            price[r] = cv.at(now)
            if cv.constant is None:
                f0[r] = cv.integral_to(now)
    return price


def place(job: Job, state: ClusterState, via: str, k_routes: int, seeds: str, prefer: str,
          allocator: str) -> JobPlan | None:
    """``BacePipe.place`` with the bandwidth pathfinder (``via`` resolved), see module doc."""
    T = tables(state.inst, via, k_routes)
    J = job_tables(T, job)
    hosts = hosts_of(T, J, state)
    S = J.S
    if sum(hosts.values()) < S:
        return None
    price = _prices(T, state, hosts)
    rank = T.rank
    order = sorted(hosts, key=lambda r: (price[r], rank[r]))
    if seeds == "cheapest":
        order = order[:1]
    bw = state.free_link_gbps
    res = T.residual(bw)
    caps = res.caps
    alloc = ALLOCATE_COUNTS[allocator]
    by_bw = prefer == "bandwidth"
    start = float(state.now)
    # the cheapest chain by (cost, run, i), i its rank among the chains found in seed order; ranking by the
    # seed's position instead is the same order among the chains found, so seeds can be taken out of order:
    # the one-region seeds first (priced exactly at once), then the others, each skipped when a lower bound on
    # any chain it could grow costs more than the best so far (``_LowerBound``; never on a tie)
    best = None
    multi = []
    single_cost = {}
    # one region, no hop: run = N ((m + S - 1) tau + 2.0 * sum([]) / 1000.0), and the cost is
    # 0.0 + kW * integral / 3600 (+ egress of no hop, 0.0): the expressions of ``_cost`` / ``plan_cost``
    its, mS1, gS = job.iterations, job.microbatches + job.stages - 1, J.g * S
    ts, pp, curves, f0 = J.ts, T.power_pue, T.curves, T.f0
    for pos, seed in enumerate(order):
        if hosts[seed] >= S:
            run = its * (mS1 * ts[seed] + 0.0)
            end = start + run
            cv = curves[seed]
            P, pue = pp[seed]
            if cv.constant is not None:
                cost = gS * P * pue / 1000.0 * (cv.constant * (end - start)) / 3600.0 + 0.0
            else:
                cost = gS * P * pue / 1000.0 * (cv.integral_to(end) - f0[seed]) / 3600.0 + 0.0
            single_cost[seed] = cost
            key = (cost, run, pos)
            if best is None or key < best[0]:
                best = (key, ([seed], [], J.ts[seed]), [S])
        else:
            multi.append((pos, seed))
    if multi and best is not None and T.prunable and seeds == "all":
        lb = _LowerBound(T, J, job, hosts, start, single_cost, multi)
        multi = [(pos, seed) for pos, seed in multi if not lb.exceeds(seed, best[0][0])]
    if multi:
        lab, tot = _component_stages(T, J, hosts, bw, res)
        multi = [(pos, seed) for pos, seed in multi if tot[lab[seed]] >= S]
    for pos, seed in multi:
        g = grow(T, J, seed, hosts, price, caps, bw, by_bw)
        if g is None:
            continue
        chain, opts, tau = g
        n = alloc(S, chain, hosts, price)
        if n is None:
            continue
        cost, run = _cost(T, J, job, chain, opts, n, start)
        key = (cost, run, pos)
        if best is None or key < best[0]:
            best = (key, g, n)
    if best is None:
        return None
    _, (chain, opts, tau), n = best
    names = T.names
    ch = Chain(tuple(names[r] for r in chain), tuple(o[1] for o in opts), tau, J.c / tau)
    return make_plan(state.inst, job, ch, [(names[r], k) for r, k in zip(chain, n)], state.now)


#: a chain is skipped only if its lower bound exceeds the best cost by this relative margin (the bound and the
#: costs are computed in different orders: their rounding errors, ~1e-13 relative, stay far below it)
PRUNE_MARGIN = 1e-6


class _LowerBound:
    """Lower bounds on the estimated cost of any plan grown from a seed that cannot hold the job alone (valid
    when no price is negative and every egress price, latency, power and PUE is >= 0: ``Tables.prunable``).

    Notation: R_r = N (m + S - 1) t_j / f_r, the run of the job on region r's GPUs alone; x_r(R) = g P_r PUE_r
    / 1000 * integral_start^{start+R} p_r / 3600, the cost of one stage in r over a run R, nondecreasing in R
    (prices >= 0).  A chain containing r has tau >= t_j / f_r, hence a run R >= R_r, so each of its stages in
    r costs >= x_r := x_r(R_r); egress >= 0.  The seed s is in the chain with >= 1 stage and every region r
    holds <= hosts_r stages, so the cost is >= the fractional minimum: one stage at x_s, then the other
    S - 1 stages on the cheapest x_r up to hosts_r each (hosts_s - 1 for the seed).  x_r of a one-region
    seed is its exact cost / S (already computed); the others take one integral each."""

    __slots__ = ("x", "by_x", "hosts", "S")

    def __init__(self, T: Tables, J: JobTables, job: Job, hosts: dict, start: float, single_cost: dict,
                 multi: list):
        S = self.S = J.S
        x = {r: c / S for r, c in single_cost.items()}
        base = job.iterations * (job.microbatches + job.stages - 1)
        g, ts, pp, curves = J.g, J.ts, T.power_pue, T.curves
        for _, r in multi:
            P, pue = pp[r]
            x[r] = g * P * pue / 1000.0 * curves[r].integral(start, start + base * ts[r]) / 3600.0
        self.x, self.hosts = x, hosts
        self.by_x = sorted(x, key=x.__getitem__)

    def exceeds(self, seed: int, best_cost: float) -> bool:
        """Whether every chain grown from ``seed`` costs more than ``best_cost`` (with ``PRUNE_MARGIN``)."""
        x, hosts = self.x, self.hosts
        lb = x[seed]
        need = self.S - 1
        for r in self.by_x:
            take = hosts[r] - 1 if r == seed else hosts[r]
            if take >= need:
                lb += need * x[r]
                break
            lb += take * x[r]
            need -= take
        return lb * (1.0 - PRUNE_MARGIN) > best_cost


def fits(job: Job, state: ClusterState, via: str, k_routes: int, seeds: str, prefer: str) -> bool:
    """``place(...) is not None`` without pricing: some seed's growth succeeds (every allocator fills a grown
    chain: at most S_j regions, each with a free stage, S_j together)."""
    T = tables(state.inst, via, k_routes)
    J = job_tables(T, job)
    hosts = hosts_of(T, J, state)
    S = J.S
    if not hosts or sum(hosts.values()) < S:
        return False
    if seeds == "all" and max(hosts.values()) >= S:
        return True
    bw = state.free_link_gbps
    res = T.residual(bw)
    lab, tot = _component_stages(T, J, hosts, bw, res)
    if max(tot.values()) < S:
        return False
    price = _prices(T, state, hosts)
    if seeds == "cheapest":
        rank = T.rank
        order = [min(hosts, key=lambda r: (price[r], rank[r]))]
    else:
        order = hosts          # any seed: the order does not matter
    caps = res.caps
    by_bw = prefer == "bandwidth"
    for seed in order:
        if tot[lab[seed]] >= S and grow(T, J, seed, hosts, price, caps, bw, by_bw) is not None:
            return True
    return False


def _component_stages(T: Tables, J: JobTables, hosts: dict, bw: Sequence[float],
                      res: ResidualCaps) -> tuple[tuple, dict]:
    """(labels, stages per component) in the graph of the links with residual >= b_min, b_j at the slowest
    hosting GPU (``pathfinder.one_component_holds``'s b_min): every link of every hop of a bandwidth-checked
    chain has residual >= b_j of the chain >= b_min, so a chain lies in one such component, and a seed whose
    component's hosts hold fewer than S_j stages grows nothing."""
    ts = J.ts
    b_min = J.c / max([ts[r] for r in hosts]) * (1.0 - 1e-9)
    lab = res.labels(T, bw, b_min)
    tot: dict[int, int] = {}
    for r, n in hosts.items():
        c = lab[r]
        tot[c] = tot.get(c, 0) + n
    return lab, tot
