"""Price-pack: price-aware chain enumeration, long jobs packed first into cheap GPUs, local search over the
packing order.  A heuristic for P1's objective (most jobs started, then least cost) with BACE-Pipe's
interface and online use (``decide(now, queue, state)``, ``place(job, state)``).

Why (benchmarks/README.md, "Where BACE-Pipe fails"): BACE-Pipe's gap to the proven P1 optimum is almost all
*placement* (its selection gap is ~0): its shortest-first order hands the cheapest GPUs to the shortest jobs,
while a stage's cost is price x run time, so the cheap GPUs are worth most to the *longest* jobs; and its chain
grows toward bandwidth, not price.  Three parts, each an option (the ablation switches one off):

``chains="enum"`` (off: ``"bace"``, BACE-Pipe's own pathfinder + cost-min allocator)
    The cheapest placement of one job on the residual resources, searched over region sets.  For a fixed set
    of regions the run time R = N ((m + S - 1) tau + 2 sum_i L_i / 1000) does not depend on the stage split
    (each hop reserves b_j, so c_i = tau), so the cost sum_r n_r rho_r R (rho_r: USD per stage-second at the
    price at ``now``) is least with one stage per region and the rest cheapest-first (exact for the set).
    Sets of up to ``max_regions`` hosting regions with room for S_j stages are taken in ascending order of
    the zero-latency lower bound sum_r n_r rho_r N (m + S - 1) tau; for each, every chain order (up to
    reversal) whose hops carry b_j (a direct link, or with ``via="routes"`` the lowest-latency of
    ``k_routes`` routes with room) is tried, the one with least latency kept; the search stops when the
    next lower bound is no better than the best cost found (so it is exact over sets of <= max_regions
    regions).  Egress is added where the instance's objective counts it.
``order="cost"`` (off: ``"priority"``, BACE-Pipe's priority order)
    Jobs are packed in descending order of their cost weight N (m + S - 1) t_j g_j (the price-free run cost
    of one stage): the jobs that pay most per GPU-second get the cheapest GPUs first.
``search=True`` (off: ``False``)
    Local search over the packing order: an order is evaluated by packing its jobs one by one (a job that
    does not fit is skipped), scored lexicographically (jobs started, then cost); starting orders are the
    cost order, BACE-Pipe's priority order, BACE-Pipe's own started set first (cost order inside),
    smallest-and-cheapest first (most jobs, cheapest set: ascending GPUs, then cost weight), and that order's
    started set re-packed in cost order (select, then pack); then first-improvement over pair swaps and
    moves-to-front, at most ``max_evals`` packings (a deterministic budget, not a clock; the starting orders
    count).  Prefixes are cached, so a move re-packs only the jobs after it.

Whatever it finds, the decision never starts fewer jobs than BACE-Pipe's on the same state: BACE-Pipe's own
decision is a candidate and wins when the search starts fewer.  Costs compared here are estimates at the
prices of ``now`` (P1's reading); every figure reported is priced by the evaluator.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Sequence

from .. import formulas as F
from ..instance import Job
from ..schedule import Block, Hop, JobPlan
from .bace_pipe import BacePipe
from .base import BW_TOL, ClusterState, Residual
from .ordered import OrderedPolicy
from .pathfinder import host_stages, resolve_via
from .plans import plan_cost, route_latency_ms

CHAINS = ("enum", "bace")
ORDERS = ("cost", "priority")


class PricePack(OrderedPolicy):
    """See the module doc for every option."""

    def __init__(self, name: str = "price-pack", chains: str = "enum", order: str = "cost", search: bool = True,
                 max_regions: int = 4, max_evals: int = 20, via: str = "auto", k_routes: int = 4, seed: int = 0):
        """``seed`` is accepted for the simulator's uniform call and unused: every choice is deterministic."""
        if chains not in CHAINS:
            raise ValueError(f"chains must be one of {CHAINS}, got {chains!r}")
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        if not (isinstance(max_regions, int) and max_regions >= 1):
            raise ValueError(f"max_regions must be an integer >= 1, got {max_regions!r}")
        if not (isinstance(max_evals, int) and max_evals >= 0):
            raise ValueError(f"max_evals must be an integer >= 0, got {max_evals!r}")
        super().__init__(name, order="priority", hol="skip")
        self.options = {"chains": chains, "order": order, "search": bool(search), "max_regions": max_regions,
                        "max_evals": max_evals, "via": via, "k_routes": k_routes}
        self.chains, self.pack_order, self.search = chains, order, bool(search)
        self.max_regions, self.max_evals, self.via, self.k_routes = max_regions, max_evals, via, k_routes
        self._bace = BacePipe(via=via, k_routes=k_routes)

    @property
    def bace(self) -> BacePipe:
        """BACE-Pipe on the same routes: its order is a starting order, its decision the floor."""
        return self._bace

    # ------------------------------------------------------------------ one job
    def place(self, job: Job, state: ClusterState, rates: dict[str, float] | None = None) -> JobPlan | None:
        if self.chains == "bace":
            return self._bace.place(job, state)
        return cheapest_placement(job, state, self.max_regions, self.via, self.k_routes, rates)

    # ------------------------------------------------------------------ one decision
    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        if not queue:
            return []
        base = self._bace.decide(now, queue, state)
        packer = Packer(self, state, queue)
        best = self.starting_best(packer, queue, state, base)
        if self.search:
            best = packer.improve(best)
        return self.floor(packer, best, base, state)

    def starting_best(self, packer: "Packer", queue: Sequence[Job], state: ClusterState,
                      base: list[JobPlan]) -> tuple[tuple[int, float], tuple]:
        """The best of the starting orders (module doc): ((-jobs, cost), order of job names)."""
        inst = state.inst
        starts = [self.initial_order(queue, state)]
        if self.search:
            starts += [self._bace.ordered(queue, state), set_first(queue, {p.name for p in base}, state)]
            # select, then pack: the set the smallest-and-cheapest-first packing starts, re-packed long jobs
            # first (the selection of the most jobs at least cost, then the cheap GPUs to the long jobs)
            small = sorted(queue, key=lambda j: (j.stages * j.gpus_per_stage, cost_weight(j), inst.job_index[j.name]))
            chosen = {p.name for p in packer.plans(tuple(j.name for j in small))}
            starts += [small, set_first(queue, chosen, state)]
        best = None
        for order in starts:
            names = tuple(j.name for j in order)
            sc = packer.score(names)
            if best is None or better(sc, best[0]):
                best = (sc, names)
        return best

    @staticmethod
    def floor(packer: "Packer", best, base: list[JobPlan], state: ClusterState) -> list[JobPlan]:
        """The plans of ``best``, or BACE-Pipe's decision ``base`` if it starts more jobs or costs less."""
        inst = state.inst
        (neg_n, cost), names = best
        plans = packer.plans(names)
        base_cost = sum(plan_cost(inst, inst.job(p.name), p)[0] for p in base)
        if better((-len(base), base_cost), (-len(plans), cost)):
            return list(base)          # never fewer jobs (nor a dearer decision) than BACE-Pipe's
        return plans

    def initial_order(self, queue: Sequence[Job], state: ClusterState) -> list[Job]:
        if self.pack_order == "priority":
            return self._bace.ordered(queue, state)
        idx = state.inst.job_index
        return sorted(queue, key=lambda j: (-cost_weight(j), idx[j.name]))


def cost_weight(job: Job) -> float:
    """N (m + S - 1) t_j g_j: seconds of one stage's GPUs over the run on the reference GPU (price-free)."""
    return job.iterations * (job.microbatches + job.stages - 1) * job.stage_time_s * job.gpus_per_stage


def set_first(queue, names, state):
    idx = state.inst.job_index
    return sorted(queue, key=lambda j: (j.name not in names, -cost_weight(j), idx[j.name]))


#: placements a policy remembers across decisions (``Packer._remembered``), cleared when full
FIRST_MEMO_SIZE = 8192


class Packer:
    """Packs orders of jobs on copies of one state; caches every prefix's residual, plans and cost.

    A job with no placement on the decision state has none on any residual of it (``_place``), so it is
    skipped by every packing: an order packs as its subsequence of jobs that have one, and the prefix cache is
    keyed by that subsequence (under contention most waiting jobs fit nowhere, so orders that differ only in
    them share their packings; issue 15)."""

    def __init__(self, pol: PricePack, state: ClusterState, queue: Sequence[Job]):
        self.pol, self.state = pol, state
        self.jobs = {j.name: j for j in queue}
        self.cache: dict[tuple, tuple] = {(): (state.copy(), (), 0.0)}
        self.rates: dict[int, dict] = {}
        self.first: dict[str, JobPlan | None] = {}
        self.evals = 0
        self.memo: dict[tuple, JobPlan | None] = {}
        self.misses = 0
        self.free_total = state.total_free_gpus()
        self.placed: frozenset | None = None     # the jobs with a placement on the decision state

    def _rates(self, job: Job) -> dict:
        """``stage_rates``: the job enters it only through its GPUs per stage (the same float expression)."""
        g = job.gpus_per_stage
        r = self.rates.get(g)
        if r is None:
            r = self.rates[g] = stage_rates(job, self.state)
        return r

    def first_plan(self, name: str) -> JobPlan | None:
        """The job's placement on the decision state."""
        first = self.first.get(name, False)
        if first is False:
            job = self.jobs[name]
            # more GPUs than are free: no placement (every region hosts at most free // g_j stages), no search
            first = self.first[name] = None if job.gpus > self.free_total else self._remembered(job)
        return first

    def _remembered(self, job: Job) -> JobPlan | None:
        """``place`` on the decision state, remembered across decisions (issue 45: under contention a waiting job
        is asked again at every event).  ``cheapest_placement`` reads a state only through the job's hosting
        regions' free stages (each capped at S_j), the links' residuals and the hosting regions' prices at now,
        which is the plan's start: equal in those, the same plan, started now."""
        pol, st = self.pol, self.state
        if pol.chains != "enum" or type(pol).place is not PricePack.place:
            return pol.place(job, st, self._rates(job))
        memo = pol.__dict__.get("_first_memo")
        if memo is None or memo[0] is not st.inst:
            memo = pol.__dict__["_first_memo"] = (st.inst, {})
        S = job.stages
        hosts = host_stages(job, st)
        key = (job.name, tuple((r, n if n < S else S) for r, n in hosts.items()), st.free_link_gbps,
               tuple(st.price(r) for r in hosts))
        hit = memo[1].get(key, False)
        if hit is False:
            if len(memo[1]) >= FIRST_MEMO_SIZE:
                memo[1].clear()
            hit = memo[1][key] = pol.place(job, st, self._rates(job))
            return hit
        return None if hit is None else dataclasses.replace(hit, start_s=float(st.now))

    def _prefix(self, names: tuple) -> tuple[Residual, tuple, float]:
        placed = self.placed
        if placed is None:     # every order holds every waiting job: each job's first plan, once per decision
            placed = self.placed = frozenset(n for n in self.jobs if self.first_plan(n) is not None)
        return self._packed(tuple(n for n in names if n in placed))

    def _packed(self, names: tuple) -> tuple[Residual, tuple, float]:
        """Pack ``names`` (jobs with a placement on the decision state) in order, from the longest cached
        prefix."""
        cache = self.cache
        hit = cache.get(names)
        if hit is not None:
            return hit
        k = len(names) - 1
        while names[:k] not in cache:
            k -= 1
        res, plans, cost = cache[names[:k]]
        free = sum(res.free_gpus.values())     # a job needing more GPUs than are free has no placement
        for i in range(k, len(names)):
            job = self.jobs[names[i]]
            plan = self._place(job, res) if job.gpus <= free else None
            if plan is not None:
                free -= job.gpus
                res = res.copy()
                res.commit(job, plan)
                plans = plans + (plan,)
                cost = cost + plan_cost(self.state.inst, job, plan)[0]
            cache[names[:i + 1]] = (res, plans, cost)
        return cache[names]

    def _place(self, job: Job, res: Residual) -> JobPlan | None:
        """The job's placement on ``res``.  Every residual here has at most the decision state's free GPUs
        and bandwidth, and a plan's cost does not depend on the state, so the job's best plan on the decision
        state is still best on ``res`` whenever it fits there (and a job with no plan there has none here):
        only when it does not fit is the search run again.  (With ``via="routes"`` a chain's hops take their
        routes first-fit, so in rare cases a residual admits a chain the decision state's first fit missed;
        the packing skips such a job all the same: that is this heuristic's rule, not an exact property.)"""
        first = self.first_plan(job.name)
        if first is None:
            return None
        if res.fits(job, first) is None:
            return first
        if self.pol.chains != "enum":
            return self.pol.place(job, res, self._rates(job))
        # ``cheapest_placement`` reads a residual only through the job's hosting regions' free stages (each
        # capped at S_j) and the links' residual bandwidth: residuals equal in those give the same plan
        S = job.stages
        key = (job.name, tuple((r, n if n < S else S) for r, n in host_stages(job, res).items()),
               res.free_link_gbps)
        hit = self.memo.get(key, False)
        if hit is False:
            self.misses += 1
            hit = self.memo[key] = self.pol.place(job, res, self._rates(job))
        return hit

    def score(self, names: tuple) -> tuple[int, float]:
        self.evals += 1
        _, plans, cost = self._prefix(names)
        return (-len(plans), cost)

    def plans(self, names: tuple) -> list[JobPlan]:
        return list(self._prefix(names)[1])

    def improve(self, best, until: int | None = None):
        """First-improvement over pair swaps and moves-to-front, until ``until`` packings in all (default
        ``max_evals``)."""
        sc, names = best
        n = len(names)
        until = self.pol.max_evals if until is None else until
        improved = True
        while improved and self.evals < until:
            improved = False
            for i, k in itertools.combinations(range(n), 2):
                if self.evals >= until:
                    break
                for cand in (_swap(names, i, k), names[:i] + (names[k],) + names[i:k] + names[k + 1:]):
                    c = self.score(cand)
                    if better(c, sc):
                        sc, names, improved = c, cand, True
                        break
                if improved:
                    break
        return sc, names


def better(a: tuple[int, float], b: tuple[int, float]) -> bool:
    """(-jobs, cost) ``a`` strictly better than ``b`` (cost beyond a relative 1e-12)."""
    return a[0] < b[0] or (a[0] == b[0] and a[1] < b[1] - 1e-12 * max(1.0, abs(b[1])))


def _swap(t: tuple, i: int, k: int) -> tuple:
    lst = list(t)
    lst[i], lst[k] = lst[k], lst[i]
    return tuple(lst)


# ---------------------------------------------------------------------- cheapest placement of one job

def cheapest_placement(job: Job, state: ClusterState, max_regions: int = 4, via: str = "auto",
                       k_routes: int = 4, rates: dict[str, float] | None = None) -> JobPlan | None:
    """The least-cost placement of ``job`` on ``state`` over chains of <= ``max_regions`` regions whose hops
    carry b_j (see the module doc; prices at ``state.now``).  None if there is none.  ``rates``: the job's
    ``stage_rates`` at ``state.now`` when the caller has them."""
    inst = state.inst
    via = resolve_via(inst, via)
    hosts = host_stages(job, state)
    S = job.stages
    if sum(hosts.values()) < S:
        return None
    speed = inst.speed
    if not _may_chain(job, state, hosts, via, k_routes):
        return None
    rate = rates if rates is not None else stage_rates(job, state)
    N, span = job.iterations, job.microbatches + job.stages - 1
    names = sorted(hosts, key=lambda r: (rate[r], r))
    caps = [min(hosts[r], S) for r in names]
    rts = [rate[r] for r in names]
    taus = [job.stage_time_s / speed[r] for r in names]
    scale = N * span
    tau_lo = min(taus)
    kmax = min(max_regions, S, len(names))
    egress = inst.objective.egress
    best = None          # ((cost, run, k, regions), order, routes, alloc, b)

    def bound() -> float:
        return best[0][0] - 1e-12 * max(1.0, best[0][0]) if best is not None else math.inf

    def evaluate(sub: tuple[int, ...]):
        nonlocal best
        k = len(sub)
        left = S - k
        per_s = 0.0
        n = []
        for i in sub:                                  # one stage each, the rest cheapest-first
            add = caps[i] - 1 if caps[i] - 1 < left else left
            left -= add
            n.append(1 + add)
            per_s += (1 + add) * rts[i]
        tau = max(taus[i] for i in sub)
        if per_s * scale * tau >= bound():
            return
        regs = tuple(names[i] for i in sub)
        b = F.demand_gbps(job, tau)
        chain = _best_order(inst, state, regs, b, via, k_routes)
        if chain is None:
            return
        order, routes, lat = chain
        run = N * (span * tau + 2.0 * lat / 1000.0)
        cost = per_s * run
        if egress:
            cost += F.egress_usd(job, [inst.route(r).egress_usd_per_gb for r in routes])
        key = (cost, run, k, regs)
        if best is None or key < best[0]:
            best = (key, order, routes, dict(zip(regs, n)), b)

    def grow(chosen: tuple[int, ...], filled: int, fill_cost: float):
        """Extend ``chosen`` (indexes in ascending rate) by more expensive regions.  Bound for ``chosen + (i,)``
        and every extension: the cheapest-first fill of S stages over chosen's and i's capacity, the rest at
        rate i (every later region is dearer), at the fastest stage time; it grows with i, so the first i
        whose bound reaches the best cost ends the loop."""
        for i in range(chosen[-1] + 1 if chosen else 0, len(names)):
            take = min(caps[i], S - filled)
            lb = (fill_cost + take * rts[i] + (S - filled - take) * rts[i]) * scale * tau_lo
            if lb >= bound():
                break
            sub = chosen + (i,)
            if filled + take >= S:
                evaluate(sub)
            if len(sub) < kmax:
                grow(sub, filled + take, fill_cost + take * rts[i])

    grow((), 0, 0.0)
    if best is None:
        return None
    _, order, routes, alloc, b = best
    return JobPlan(job.name, "done", float(state.now), tuple(Block(r, alloc[r]) for r in order),
                   tuple(Hop(rt, b) for rt in routes))


#: residual-bandwidth vectors whose pair bottlenecks ``_may_chain`` keeps (per instance, via and k_routes)
_PAIR_CACHE_SIZE = 8


def _may_chain(job: Job, state: ClusterState, hosts: dict, via: str, k_routes: int) -> bool:
    """False only if ``cheapest_placement`` surely finds nothing (issue 15: under contention most waiting jobs
    fit nowhere, and the search for those tried every region set).  A region that holds all S_j stages is a
    placement.  Otherwise every hop of a chain joins two hosting regions by a hop option (the direct link, or
    one of the ``k_routes`` routes) whose links all have residual >= b (1 - BW_TOL) (``_best_order``: the
    chain's own use only lowers a residual), with b = b_j at the chain's slowest stage time >= b_min, b_j at
    the slowest hosting region (``F.demand_gbps`` falls as the stage time grows, and so do its IEEE values);
    so the chain lies in one component of the hosting regions joined by options with bottleneck >= b_min (1 -
    BW_TOL), whose regions must hold S_j stages together."""
    S = job.stages
    caps = {r: (n if n < S else S) for r, n in hosts.items()}
    if max(caps.values()) >= S:
        return True
    inst = state.inst
    thr = F.demand_gbps(job, max(job.stage_time_s / inst.speed[r] for r in hosts)) * (1 - BW_TOL)
    best = _pair_bottlenecks(inst, state, via, k_routes)
    names = list(hosts)
    parent = {r: r for r in names}
    tot = dict(caps)
    for i, u in enumerate(names):
        for v in names[i + 1:]:
            key = (u, v) if u < v else (v, u)
            bn = best.get(key)
            if bn is None:
                bn = best[key] = _option_bottleneck(inst, state, u, v, via, k_routes)
            if bn < thr:
                continue
            a, b = u, v
            while parent[a] != a:
                a = parent[a]
            while parent[b] != b:
                b = parent[b]
            if a != b:
                parent[a] = b
                tot[b] += tot.pop(a)
                if tot[b] >= S:
                    return True
    return False


def _pair_bottlenecks(inst, state: ClusterState, via: str, k_routes: int) -> dict:
    """{(u, v), u < v: the largest bottleneck residual of u-v's hop options} on ``state``'s residual bandwidth,
    filled lazily, kept for the last few bandwidth vectors (the same for every job asked on one state)."""
    caches = inst.__dict__.setdefault("_price_pack_pairs", {})
    lru = caches.setdefault((via, k_routes), {})
    key = state.free_link_gbps              # (the residual vector itself, as chain_tables keys it)
    d = lru.pop(key, None)
    if d is None:
        d = {}
        if len(lru) >= _PAIR_CACHE_SIZE:
            del lru[next(iter(lru))]
    lru[key] = d
    return d


def _option_bottleneck(inst, state: ClusterState, u: str, v: str, via: str, k_routes: int) -> float:
    if via == "links":
        k = inst.link_index.get((u, v))
        return -math.inf if k is None else state.free_gbps(k)
    # both directions: a chain may take the hop either way, and ``inst.routes`` lists each direction's own
    return max((min(state.free_gbps(e) for e in rt.links)
                for a, b in ((u, v), (v, u)) for rt in inst.routes(a, b, k_routes)), default=-math.inf)


def stage_rates(job: Job, state: ClusterState) -> dict[str, float]:
    """USD per second of run time of one stage of ``job`` in each region, at the prices at ``state.now``."""
    inst = state.inst
    return {reg.name: job.gpus_per_stage * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
            * state.price(reg.name) / 3600.0 for reg in inst.regions}


def _best_order(inst, state, sub, b, via, k_routes):
    """The least-latency order of the regions ``sub`` whose hops carry ``b`` (up to reversal): (order,
    routes, latency_ms), or None.  Egress, where counted, is added to the cost of the order found."""
    if len(sub) == 1:
        return (sub, (), 0.0)
    li = inst.link_index
    best = None
    for perm in itertools.permutations(sub):
        if perm[0] > perm[-1]:
            continue                       # a chain and its reverse cost the same
        used: dict[int, float] = {}
        routes, lat, ok = [], 0.0, True
        for u, v in zip(perm, perm[1:]):
            if via == "links":
                kk = li.get((u, v))
                if kk is None or state.free_gbps(kk) < b * (1 - BW_TOL):
                    ok = False
                    break
                routes.append((u, v))
                lat += route_latency_ms(inst, (u, v))
            else:
                found = None
                for rt in inst.routes(u, v, k_routes):
                    if min(state.free_gbps(e) - used.get(e, 0.0) for e in rt.links) >= b * (1 - BW_TOL):
                        found = rt
                        break
                if found is None:
                    ok = False
                    break
                for e in found.links:
                    used[e] = used.get(e, 0.0) + b
                routes.append(found.regions)
                lat += found.latency_ms
            if best is not None and lat >= best[2]:
                ok = False
                break
        if ok and (best is None or lat < best[2]):
            best = (perm, tuple(routes), lat)
    return best
