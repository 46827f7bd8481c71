"""BACE-Pipe's pathfinder, allocators and plan pricing on integer tables (issue 15): the same decisions as the
readable reference functions of ``bace_pipe`` with less work per call.

``place(job, state, ...)`` returns exactly ``BacePipe.place`` of the bandwidth pathfinder (``find_chains`` with
``grow_chain``, then ``allocate`` / ``allocate_even`` / ``allocate_fill``, ``make_plan`` and ``plan_cost``, the
cheapest chain kept), and ``fits`` exactly ``place(...) is not None``.  "Exactly" is literal: every comparison
is made on the same floats, computed by the same expressions in the same order (b_j = (8 A / 1000) / tau,
max of the same stage times, the same sums in the same order, the same price integrals), and ties are broken
by the same keys (a region name's tie-break by its rank in sorted name order).  ``tests/test_policies.py``
checks it against the reference on random residual states (hypothesis) and ``tests/test_sim_replay.py`` on
whole simulations.  Where the time went before (profile in ``benchmarks/README.md``, issue 15): every seed's
chain was turned into a ``Chain``, a ``JobPlan`` and priced through the model objects; every candidate hop
re-read ``inst.routes`` and each route's links through method calls.  Here:

* per instance and (via, k_routes) (``_Tables``, cached on the instance): regions as integers in
  ``region_index`` order, each name's rank, speed, power and PUE, price curves, and lazily for each ordered
  pair of regions the hop options the pathfinder reads: the direct link (``via="links"``) or the
  ``k_routes`` lowest-latency routes in the order ``inst.routes`` gives (``via="routes"``), each as (link
  indexes, region names, latency ms);
* per job (``_JobTables``, cached on the instance by name, checked by identity): eligible regions as
  integers, the stage time on each region (t_j / f_r) and b_j's numerator 8 A_j / 1000;
* per residual bandwidth vector (the exact values, as a tuple key; a few kept): each hop option's
  bottleneck residual, computed once and shared by every seed's growth and every job asked on the same
  residual bandwidth (the growth subtracts its own chain's use only where a route meets it);
* a growth works on integers and lists; only the winning chain becomes a ``Chain`` and a ``JobPlan``, the
  others are priced from numbers.
"""
from __future__ import annotations

import math
from bisect import bisect_right

from .. import formulas as F
from ..instance import Instance, Job, negative_price_regions
from ..schedule import JobPlan
from .base import ClusterState

#: residual-bandwidth vectors whose hop bottlenecks are kept at once (a decision alternates between the
#: live residual and a frozen snapshot; the head-of-line pass reads one more)
_CAP_CACHE_SIZE = 8


class _Tables:
    """Per-instance constants of the pathfinder and pricing (see module doc)."""

    __slots__ = ("inst", "via", "k_routes", "names", "n", "rank", "speed", "power_pue", "curves", "links_ab",
                 "_hops", "_caps", "egress_on", "price_now", "prunable", "f0",
                 "elig_ints",
                 "price")

    def __init__(self, inst: Instance, via: str, k_routes: int):
        self.inst, self.via, self.k_routes = inst, via, k_routes
        names = self.names = tuple(inst.region_index)
        self.n = len(names)
        rank = [0] * self.n
        for pos, i in enumerate(sorted(range(self.n), key=lambda i: names[i])):
            rank[i] = pos
        self.rank = rank
        self.speed = [inst.speed[r] for r in names]
        regs = [inst.region(r) for r in names]
        self.power_pue = [(inst.gpu_types[reg.gpu_type].power_w, reg.pue) for reg in regs]
        curves = F.price_curves(inst)
        self.curves = [_Curve(curves[r]) for r in names]
        self.links_ab = inst.link_ends
        self._hops: dict[int, tuple] = {}
        self._caps: dict[tuple, dict] = {}
        self.egress_on = bool(inst.objective.egress)
        self.price_now: float | None = None
        self.prunable = (not negative_price_regions(inst) and all(l.latency_ms >= 0 for l in inst.links)
                         and all(p >= 0 and e >= 0 for p, e in self.power_pue)
                         and not (self.egress_on and any(l.egress_usd_per_gb < 0 for l in inst.links)))
        self.price: list = []
        self.f0: list = []
        self.elig_ints: dict = {}       # eligible set (frozenset of names) -> region ints in order

    def hop_options(self, a: int, b: int) -> tuple:
        """((link indexes, region names, latency ms, egress USD/GB), ...) of the hop a -> b, in the order the
        pathfinder tries them."""
        key = a * self.n + b
        v = self._hops.get(key)
        if v is None:
            from .bace_pipe import _route_latency_ms
            inst = self.inst
            u, w = self.names[a], self.names[b]
            if self.via == "links":
                k = inst.link_index.get((u, w))
                rts = [] if k is None else [(u, w)]
            else:
                rts = [rt.regions for rt in inst.routes(u, w, self.k_routes)]
            li = inst.link_index
            v = self._hops[key] = tuple(
                (tuple(li[(x, y)] for x, y in zip(rt, rt[1:])), tuple(rt), _route_latency_ms(inst, tuple(rt)),
                 inst.route(rt).egress_usd_per_gb) for rt in rts)
        return v

    def residual(self, bw: list) -> "_Residual":
        """The ``_Residual`` of residual bandwidth ``bw`` (the exact values are the key; a few are kept)."""
        key = tuple(bw)
        d = self._caps.get(key)
        if d is None:
            if len(self._caps) >= _CAP_CACHE_SIZE:
                self._caps.clear()
            d = self._caps[key] = _Residual()
        return d


class _Residual:
    """What the pathfinder reads of one residual-bandwidth vector, each part computed once when first asked:
    ``caps``, (a * n + b) -> ((bottleneck Gbit/s, link indexes, hop option), ...) of the hop a -> b
    (``_hop_caps``); ``labels(...)``, the connected components of the links whose residual is >= a threshold,
    for every threshold (Kruskal order: the links sorted by residual, descending, merged one at a time)."""

    __slots__ = ("caps", "_neg", "_labels", "_asked")

    def __init__(self):
        self.caps: dict = {}
        self._asked = False
        self._neg = None
        self._labels: list = []

    def labels(self, T: "_Tables", bw: list, b_min: float) -> tuple:
        """Component label of every region in the graph of the links with residual >= ``b_min`` (the first
        question on a residual is answered by one union-find pass; the table for every threshold is built at
        the second, when the residual is asked again)."""
        if self._neg is None and not self._asked:
            self._asked = True
            parent = list(range(T.n))
            for k, (a, b) in enumerate(T.links_ab):
                if bw[k] >= b_min:
                    while parent[a] != a:
                        a = parent[a]
                    while parent[b] != b:
                        b = parent[b]
                    if a != b:
                        parent[a] = b
            out = []
            for x in range(T.n):
                while parent[x] != x:
                    x = parent[x]
                out.append(x)
            return out
        if self._neg is None:
            order = sorted(range(len(bw)), key=lambda k: -bw[k])
            self._neg = [-bw[k] for k in order]
            label = list(range(T.n))
            members = {i: [i] for i in range(T.n)}
            labels = [tuple(label)]
            for k in order:
                a, b = T.links_ab[k]
                la, lb = label[a], label[b]
                if la != lb:
                    if len(members[la]) < len(members[lb]):
                        la, lb = lb, la
                    for x in members[lb]:
                        label[x] = la
                    members[la] += members.pop(lb)
                labels.append(tuple(label))
            self._labels = labels
        return self._labels[bisect_right(self._neg, -b_min)]


def tables(inst: Instance, via: str, k_routes: int) -> _Tables:
    """The instance's ``_Tables`` for a resolved ``via`` ("links" or "routes") and ``k_routes``."""
    cache = inst.__dict__.setdefault("_bace_chain_tables", {})
    t = cache.get((via, k_routes))
    if t is None:
        t = cache[(via, k_routes)] = _Tables(inst, via, k_routes)
    return t


class _JobTables:
    __slots__ = ("job", "elig", "ts", "c", "g", "S")

    def __init__(self, T: _Tables, job: Job):
        from .base import _eligible
        elig = _eligible(T.inst, job)
        self.job = job
        self.elig = T.elig_ints.get(elig)
        if self.elig is None:
            self.elig = T.elig_ints[elig] = tuple(i for i, r in enumerate(T.names) if r in elig)
        st = job.stage_time_s
        self.ts = [st / f for f in T.speed]              # == formulas.tau_s's terms t_j / f_r
        self.c = 8.0 * job.activation_mb / 1000.0         # demand_gbps(job, tau) == c / tau
        self.g = job.gpus_per_stage
        self.S = job.stages


#: ``_JobTables`` kept per instance (then the cache starts again: a job placed once, as nearly all are when
#: nobody waits, gains nothing from it, and 100,000 of them would hold ~80 MB)
_JOB_CACHE_SIZE = 16384


def job_tables(T: _Tables, job: Job) -> _JobTables:
    cache = T.inst.__dict__.setdefault("_bace_chain_jobs", {})
    jt = cache.get(job.name)
    if jt is None or jt.job is not job:
        if len(cache) >= _JOB_CACHE_SIZE:
            cache.clear()
        jt = cache[job.name] = _JobTables(T, job)
    return jt


def hosts_of(T: _Tables, J: _JobTables, state: ClusterState) -> dict[int, int]:
    """Region (int) -> stages of the job its free GPUs hold, for eligible regions holding >= 1 (region order)."""
    free, names, g = state._free, T.names, J.g
    out = {}
    for i in J.elig:
        n = free[names[i]] // g
        if n > 0:
            out[i] = n
    return out


def hop_caps(T: _Tables, caps: dict, bw: list, a: int, b: int) -> tuple:
    """((bottleneck residual, link indexes, hop option), ...) of the hop a -> b on ``bw`` (``caps``: its
    ``_Residual.caps``)."""
    key = a * T.n + b
    v = caps.get(key)
    if v is None:
        get = bw.__getitem__
        v = caps[key] = tuple([(min(map(get, opt[0])), opt[0], opt) for opt in T.hop_options(a, b)])
    return v


def grow(T: _Tables, J: _JobTables, seed: int, hosts: dict, price: list, caps: dict, bw: list,
         by_bandwidth: bool):
    """``bace_pipe.grow_chain`` on integers: (chain regions, hop options, tau) or None."""
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


def _capacities(S: int, chain: list, hosts: dict):
    """Stages each chain region can host, or None when the chain cannot take S stages (one per region at least,
    at most what each hosts)."""
    if len(chain) > S:
        return None
    cap = [hosts[r] for r in chain]
    return cap if sum(cap) >= S else None


def _allocate_costmin(S: int, chain: list, hosts: dict, price: list):
    cap = _capacities(S, chain, hosts)
    if cap is None:
        return None
    k = len(chain)
    n = [1] * k
    left = S - k
    for i in sorted(range(k), key=lambda i: (price[chain[i]], i)):
        if left == 0:
            break
        add = min(cap[i] - 1, left)
        n[i] += add
        left -= add
    return n


def _allocate_even(S: int, chain: list, hosts: dict, price: list):
    cap = _capacities(S, chain, hosts)
    if cap is None:
        return None
    k = len(chain)
    n = [min(c, S // k) for c in cap]
    left = S - sum(n)
    while left > 0:
        i = max(range(k), key=lambda i: (cap[i] - n[i], -i))
        n[i] += 1
        left -= 1
    return n


def _allocate_fill(S: int, chain: list, hosts: dict, price: list):
    left = S
    out = []
    for r in chain:
        if left == 0:
            break
        n = min(hosts[r], left)
        out.append(n)
        left -= n
    return out if left == 0 else None


ALLOCATE = {"costmin": _allocate_costmin, "even": _allocate_even, "fill": _allocate_fill}


class _Curve:
    """``formulas.PriceCurve.integral`` on Python lists (the same floats: ``float()`` of a float64 is exact,
    and the arithmetic is the same IEEE double arithmetic in the same order)."""

    __slots__ = ("constant", "start", "step", "values", "cum", "n", "last", "first")

    def __init__(self, pc: F.PriceCurve):
        self.constant = pc.constant
        if pc.values is not None:
            self.start, self.step = pc.start, pc.step
            self.values = [float(v) for v in pc.values]
            self.cum = [float(v) for v in pc.cum]
            self.n = len(self.values)
            self.first, self.last = self.values[0], self.values[-1]

    def at(self, t: float) -> float:
        """``formulas.PriceCurve.at``."""
        if self.constant is not None:
            return self.constant
        k = math.floor((t - self.start) / self.step)
        k = min(max(k, 0), self.n - 1)
        return self.values[k]

    def _F(self, t: float) -> float:
        x = t - self.start
        if x <= 0:
            return x * self.first
        step, n = self.step, self.n
        k = int(x // step)
        if k >= n:
            return self.cum[n] + (x - n * step) * self.last
        return self.cum[k] + (x - k * step) * self.values[k]

    def integral(self, t0: float, t1: float) -> float:
        if self.constant is not None:
            return self.constant * (t1 - t0)
        return self._F(t1) - self._F(t0)


def _cost(T: _Tables, J: _JobTables, job: Job, chain: list, opts: list, n: list, start: float):
    """``bace_pipe.plan_cost(make_plan(...))`` for blocks ``n`` on a prefix of ``chain``: (cost, run s)."""
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


def _prices(T: _Tables, state: ClusterState, hosts: dict) -> list:
    """Prices at ``state.now`` (== ``state.price``) of the host regions, in a list by region; also fills
    ``T.f0``, each region's price integral from its series start to ``now`` (``PriceCurve._F(now)``, the
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
                f0[r] = cv._F(now)
    return price


def place(job: Job, state: ClusterState, via: str, k_routes: int, seeds: str, prefer: str,
          allocator: str) -> JobPlan | None:
    """``BacePipe.place`` with the bandwidth pathfinder (``via`` resolved), see module doc."""
    from .bace_pipe import Chain, make_plan
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
    bw = state._bw
    res = T.residual(bw)
    caps = res.caps
    alloc = ALLOCATE[allocator]
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
                cost = gS * P * pue / 1000.0 * (cv._F(end) - f0[seed]) / 3600.0 + 0.0
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
    when no price is negative and every egress price, latency, power and PUE is >= 0: ``_Tables.prunable``).

    Notation: R_r = N (m + S - 1) t_j / f_r, the run of the job on region r's GPUs alone; x_r(R) = g P_r PUE_r
    / 1000 * integral_start^{start+R} p_r / 3600, the cost of one stage in r over a run R, nondecreasing in R
    (prices >= 0).  A chain containing r has tau >= t_j / f_r, hence a run R >= R_r, so each of its stages in
    r costs >= x_r := x_r(R_r); egress >= 0.  The seed s is in the chain with >= 1 stage and every region r
    holds <= hosts_r stages, so the cost is >= the fractional minimum: one stage at x_s, then the other
    S - 1 stages on the cheapest x_r up to hosts_r each (hosts_s - 1 for the seed).  x_r of a one-region
    seed is its exact cost / S (already computed); the others take one integral each."""

    __slots__ = ("x", "by_x", "hosts", "S")

    def __init__(self, T: _Tables, J: _JobTables, job: Job, hosts: dict, start: float, single_cost: dict,
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
    bw = state._bw
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


def _component_stages(T: _Tables, J: _JobTables, hosts: dict, bw: list, res: _Residual) -> tuple[tuple, dict]:
    """(labels, stages per component) in the graph of the links with residual >= b_min, b_j at the slowest
    hosting GPU (``bace_pipe._one_component_holds``'s b_min): every link of every hop of a bandwidth-checked
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
