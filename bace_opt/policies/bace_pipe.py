"""BACE-Pipe: dynamic prioritization, bandwidth-aware pathfinder, cost-minimizing allocator.

The three stages of system-model.md, "BACE-Pipe (the heuristic; our reading of its three stages)", each a
function usable on its own (so the exact models can be compared stage by stage):

``prioritize(queue, state)``
    Priority_j = (1 - alpha) (1 - I_j) + alpha (1 - D_j), highest first.  I_j = N_j (m_j + S_j - 1) t_j
    (``formulas.compute_s``), D_j = b_j at the reference GPU (``formulas.demand_gbps(job, t_j)``), both
    min-max normalized over the jobs of ``queue`` (our reading: all equal -> 0).  alpha =
    ``state.alpha()``, the mean utilization of the links with any reservation (0 when none).  Ties: earlier
    arrival, then instance order.

``find_chains(job, state, seeds=..., via=...)``
    Prim-like growth of a chain of regions, following the paper: every region that can host a stage now
    seeds a growth (``seeds="all"``, the default), and the cheapest feasible chain found wins (``place``).
    A seed region whose free GPUs hold all S_j stages is a valid chain on its own, with no hops (the growth
    stops at once), so a job that fits one free region is always placed.  ``seeds="cheapest"`` is the rule of
    earlier releases (only the cheapest region that can host a stage seeds; no single-region fallback when it
    cannot grow), kept so old results can be reproduced (``--option seeds=cheapest``).  From a seed
    repeatedly append to the chain's tail the
    unvisited region that can host a stage and is reachable over a link (``via="links"``) or a
    route of up to ``k_routes`` lowest-latency paths (``via="routes"``; default ``auto``: links on a full mesh
    of the GPU regions, routes otherwise, see ``resolve_via``) whose residual bandwidth is >= b_j of
    the chain grown so far (tau, hence b_j, is recomputed as regions join: b_j only falls, so earlier hops
    stay feasible), preferring the highest residual bandwidth (then lower price, then name; ``prefer="price"``
    is our option to prefer the cheapest instead), until the chain holds S_j stages (g_j GPUs each).  A seed
    from which no such chain exists yields nothing: a chain with a hop that cannot carry b_j is never
    returned.

``allocate(job, chain, state)``
    One stage per chain region, then the remaining stages to the chain's regions in ascending price (at
    ``state.now``; ties by chain position), each up to its free GPUs.  Blocks follow the chain order, so the
    hops are the chain's hops; every hop reserves w = b_j of the final placement (no stall).

``place(job, state)`` runs pathfinder and allocator on every chain found and keeps the cheapest (estimated
electricity cost ``formulas.electricity_usd`` over the run time ``N * formulas.iteration_s``, plus egress when
the instance's objective counts it; ties: shorter run, then chain order).

``BacePipe.place`` and ``fits`` run these stages through ``policies.chain_search`` (the same decisions, every
float equal, on precomputed integer tables, with exact pruning: issue 15); the functions above stay the
readable reference, used with ``BacePipe.reference_path = True`` and by the tests that compare the two.

Ablations are options of the same class: ``order="fifo"`` (no priority), ``pathfinder="price"`` (chain of
regions in ascending price, bandwidth unchecked; each hop reserves min(b_j, residual), so it may stall;
a region whose connecting hop has no residual bandwidth at all is skipped), ``allocator="even"`` (no
cost-min: stages spread evenly over the chain, leftovers to the regions with the most free GPUs).  Each
ablation removes one stage and keeps the others: ``order="fifo"`` and ``allocator="even"`` keep the
all-seeds pathfinder; ``pathfinder="price"`` replaces the whole pathfinder (seeding, growth, bandwidth check)
by the one price-ordered chain, so it has no single-region fallback beyond "the cheapest host region holds
the job alone".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import Block, Hop, JobPlan
from . import chain_search
from .base import MIN_GBPS, ClusterState, _eligible, fifo_order

SEED_RULES = ("cheapest", "all")
VIA = ("auto", "links", "routes")
PATHFINDERS = ("bandwidth", "price")
ALLOCATORS = ("costmin", "even", "fill")
ORDERS = ("priority", "fifo")
HOL = ("skip", "block")
PREFER = ("bandwidth", "price")


@dataclass(frozen=True)
class Chain:
    """An ordered chain of regions and the route of each hop between consecutive regions."""
    regions: tuple[str, ...]
    routes: tuple[tuple[str, ...], ...]      # len(regions) - 1 routes, routes[i] from regions[i] to regions[i+1]
    tau_s: float                             # slowest stage time of the chain's regions
    demand_gbps: float                       # b_j for this chain
    reserve_gbps: tuple[float, ...] | None = None   # per-hop reservation when it is not b_j (ablations)


# ---------------------------------------------------------------------- stage 1: prioritization

def reference_demand_gbps(job: Job) -> float:
    """D_j before normalization: b_j on the reference GPU."""
    return F.demand_gbps(job, job.stage_time_s)


def job_profile(inst: Instance, job: Job) -> tuple[float, float, int]:
    """(compute_s, reference demand Gbit/s, GPUs) of a job, cached per instance."""
    cache = inst.__dict__.setdefault("_policy_profiles", {})
    v = cache.get(job.name)
    if v is None:
        v = cache[job.name] = (F.compute_s(job), reference_demand_gbps(job), job.gpus)
    return v


def priorities(queue: Sequence[Job], state: ClusterState, alpha: float | None = None) -> dict[str, float]:
    """Priority_j = (1 - alpha)(1 - I_j) + alpha(1 - D_j) of each job of ``queue`` (see module doc)."""
    if alpha is None:
        alpha = state.alpha()
    if not queue:
        return {}
    prof = [job_profile(state.inst, j) for j in queue]
    norm_c, norm_d = _minmax([p[0] for p in prof]), _minmax([p[1] for p in prof])
    return {j.name: (1.0 - alpha) * (1.0 - i) + alpha * (1.0 - d) for j, i, d in zip(queue, norm_c, norm_d)}


def prioritize(queue: Sequence[Job], state: ClusterState, alpha: float | None = None) -> list[Job]:
    """The jobs of ``queue`` in descending priority (ties: arrival, then instance order)."""
    idx = state.inst.job_index
    if len(queue) < 2:
        return list(queue)
    pr = priorities(queue, state, alpha)
    return sorted(queue, key=lambda j: (-pr[j.name], j.arrival_s, idx[j.name]))


def _minmax(xs: Sequence[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    if hi - lo <= 1e-12 * max(abs(hi), 1.0):
        return [0.0] * len(xs)
    return [(x - lo) / (hi - lo) for x in xs]


# ---------------------------------------------------------------------- stage 2: pathfinder

def check_pathfinder_options(seeds: str, via: str, prefer: str) -> None:
    """Raise ValueError naming an unknown pathfinder option."""
    for name, value, allowed in (("seeds", seeds, SEED_RULES), ("via", via, VIA), ("prefer", prefer, PREFER)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def find_chains(job: Job, state: ClusterState, seeds: str = "all", via: str = "auto",
                k_routes: int = 4, prefer: str = "bandwidth") -> list[Chain]:
    """Bandwidth-feasible chains for ``job`` on ``state`` (one per seed that yields one, seeds in ascending
    price; see module doc).  With ``seeds="all"`` every region holding the whole job alone gives its
    single-region chain."""
    check_pathfinder_options(seeds, via, prefer)
    via = resolve_via(state.inst, via)
    hosts = _hosts(job, state)
    if sum(hosts.values()) < job.stages:
        return []
    order = sorted(hosts, key=lambda r: (state.price(r), r))
    if seeds == "cheapest":
        order = order[:1]
    out = []
    for seed in order:
        c = grow_chain(job, state, seed, via=via, k_routes=k_routes, hosts=hosts, prefer=prefer)
        if c is not None:
            out.append(c)
    return out


def grow_chain(job: Job, state: ClusterState, seed: str, via: str = "auto", k_routes: int = 4,
               hosts: Mapping[str, int] | None = None, prefer: str = "bandwidth") -> Chain | None:
    """Prim-like growth of one chain from ``seed``; None if it cannot reach S_j stages over hops that carry
    b_j.  Among the regions whose hop carries b_j, ``prefer="bandwidth"`` (default, the paper's rule) takes
    the highest residual bandwidth (then lower price, then name); ``prefer="price"`` (an option of ours, not
    the paper's) takes the cheapest (then higher bandwidth, then name)."""
    via = resolve_via(state.inst, via)
    inst = state.inst
    if hosts is None:
        hosts = _hosts(job, state)
    if seed not in hosts:
        return None
    speed = inst.speed
    chain = [seed]
    routes: list[tuple[str, ...]] = []
    slots = hosts[seed]
    tau = job.stage_time_s / speed[seed]
    used: dict[int, float] = {}          # bandwidth this chain already takes on a link (at the current b_j)
    li = inst.link_index
    while slots < job.stages:
        tail = chain[-1]
        best = None
        for r, n in hosts.items():
            if r in chain:
                continue
            t2 = max(tau, job.stage_time_s / speed[r])
            b2 = F.demand_gbps(job, t2)
            if via == "links":
                k = li.get((tail, r))
                if k is None:
                    continue
                bw = state.free_gbps(k) - used.get(k, 0.0)
                if bw < b2:
                    continue
                route = (tail, r)
            else:
                route, bw = None, -1.0
                for rt in inst.routes(tail, r, k_routes):
                    cap = min(state.free_gbps(k) - used.get(k, 0.0) for k in rt.links)
                    if cap >= b2:
                        route, bw = rt.regions, cap
                        break
                if route is None:
                    continue
            key = (-bw, state.price(r), r) if prefer == "bandwidth" else (state.price(r), -bw, r)
            if best is None or key < best[0]:
                best = (key, r, route, t2, b2)
        if best is None:
            return None
        _, r, route, tau, b = best
        chain.append(r)
        routes.append(route)
        for u, v in zip(route, route[1:]):
            k = li[(u, v)]
            used[k] = used.get(k, 0.0) + b
        slots += hosts[r]
    return Chain(tuple(chain), tuple(routes), tau, F.demand_gbps(job, tau))


def price_chain(job: Job, state: ClusterState, via: str = "auto") -> Chain | None:
    """The no-pathfinder / CR-LCF chain: hosting regions in ascending price until S_j stages fit, bandwidth
    unchecked.  Each hop uses the direct link (``via="links"``; a region without a link from the tail is
    skipped) or the lowest-latency route (``via="routes"``) and reserves min(b_j, residual); a region whose
    hop would have no residual bandwidth is skipped (our reading: a reservation must be > 0)."""
    hosts = _hosts(job, state)
    order = sorted(hosts, key=lambda r: (state.price(r), r))
    return _greedy_chain(job, state, order, via, by_capacity=False, hosts=hosts)


def capacity_chain(job: Job, state: ClusterState, via: str = "auto") -> Chain | None:
    """The CR-LDF chain: seed = hosting region with the most free GPUs, then repeatedly the hosting region
    with the most free GPUs, ties broken by more residual bandwidth on the hop from the tail (then price,
    name); bandwidth unchecked, reserve min(b_j, residual), regions with no residual on the hop skipped."""
    hosts = _hosts(job, state)
    order = sorted(hosts, key=lambda r: (-state.free(r), state.price(r), r))
    return _greedy_chain(job, state, order, via, by_capacity=True, hosts=hosts)


def resolve_via(inst: Instance, via: str) -> str:
    """``auto`` (the default) means direct links when every two regions with GPUs are linked (cloud full
    meshes, the paper setup) and routes otherwise (WAN topologies, where GPU sites connect only through
    transit nodes and a direct-links-only chain could not grow; our reading of "a link (or route)")."""
    if via != "auto":
        return via
    key = "_bace_pipe_via"
    if key not in inst.__dict__:
        sites = inst.compute_regions
        full = all((a, b) in inst.link_index for i, a in enumerate(sites) for b in sites[i + 1:])
        inst.__dict__[key] = "links" if full else "routes"
    return inst.__dict__[key]


def _greedy_chain(job: Job, state: ClusterState, order: Sequence[str], via: str, by_capacity: bool,
                  hosts: Mapping[str, int] | None = None) -> Chain | None:
    """Chain from ``order[0]``; next region: the first of ``order`` reachable from the tail with residual
    bandwidth > 0 (``by_capacity``: the one with the most free GPUs, then the most residual bandwidth).  Each
    hop's route is the direct link or the lowest-latency route (``_hop_route``), read from ``chain_search``'s
    tables with its bottleneck residual (the chain's own earlier hops are not subtracted here: the
    reservations below take them in turn)."""
    via = resolve_via(state.inst, via)
    inst = state.inst
    if hosts is None:
        hosts = _hosts(job, state)
    if sum(hosts.values()) < job.stages or not order:
        return None
    T = chain_search.tables(inst, via, 1)
    ri = inst.region_index
    bw = state._bw
    caps = T.residual(bw).caps
    free = state._free
    chain = [order[0]]
    slots = hosts[order[0]]
    opts: list = []
    rest = list(order[1:])
    while slots < job.stages:
        ti = ri[chain[-1]]
        best = None
        for pos, r in enumerate(rest):
            hc = chain_search.hop_caps(T, caps, bw, ti, ri[r])
            if not hc:
                continue
            cap, _, opt = hc[0]
            if cap <= MIN_GBPS:
                continue
            if not by_capacity:
                best = (pos, r, opt)
                break                    # the first of ``order`` that is reachable
            key = (-free[r], -cap, pos)
            if best is None or key < best[0]:
                best = (key, r, opt)
        if best is None:
            return None
        _, r, opt = best
        rest.remove(r)
        chain.append(r)
        opts.append(opt)
        slots += hosts[r]
    tau = F.tau_s(inst, job, chain)
    b = F.demand_gbps(job, tau)
    # reservations: min(b, residual), with hops sharing a link (routes) taking it in turn
    left: dict[int, float] = {}
    res = []
    for opt in opts:
        ks = opt[0]
        cap = min(left.get(k, bw[k]) for k in ks)
        w = min(b, cap)
        if w <= MIN_GBPS:
            return None
        for k in ks:
            left[k] = left.get(k, bw[k]) - w
        res.append(w)
    return Chain(tuple(chain), tuple(o[1] for o in opts), tau, b, tuple(res))


def greedy_chain_fits(job: Job, state: ClusterState, by_capacity: bool, via: str, cache: dict) -> bool:
    """Whether ``price_chain`` (``by_capacity=False``) or ``capacity_chain`` returns a chain for ``job``,
    answered from one growth shared by all jobs of the same GPUs per stage and eligible regions (grown only
    as far as a job needs): the greedy order and each step do not depend on the job, only where the growth
    stops (S_j stages) and the per-hop reservations min(b_j, residual), checked for the job only where two
    hops share a link.  ``cache`` must be private to ``state`` (the caller keeps one per residual state)."""
    inst = state.inst
    g = _greedy_growth(job, state, by_capacity, via, cache)
    S = job.stages
    g.grow_to(S)
    chain, routes, cum, shared = g.chain, g.routes, g.cum, g.shared
    if not chain or cum[-1] < S:
        return False
    i = next(i for i, c in enumerate(cum) if c >= S)
    if not shared[i]:
        return True
    # hops share a link: replay _greedy_chain's reservation step for this job's demand
    li = inst.link_index
    b = F.demand_gbps(job, F.tau_s(inst, job, chain[:i + 1]))
    left: dict[int, float] = {}
    for route in routes[:i]:
        ks = [li[(u, v)] for u, v in zip(route, route[1:])]
        cap = min(left.get(k, state.free_gbps(k)) for k in ks)
        w = min(b, cap)
        if w <= MIN_GBPS:
            return False
        for k in ks:
            left[k] = left.get(k, state.free_gbps(k)) - w
    return True


def greedy_chain_bounds(job: Job, state: ClusterState, by_capacity: bool, via: str, cache: dict) -> tuple[int, int]:
    """For every job of ``job``'s group (GPUs per stage, eligible regions): S <= sure always gets a chain
    (no two hops of the prefix share a link), S > limit never does (the growth gets stuck)."""
    g = _greedy_growth(job, state, by_capacity, via, cache)
    g.grow_to(1 << 30)
    if not g.chain:
        return 0, 0
    return max(c for c, sh in zip(g.cum, g.shared) if not sh), g.cum[-1]


def _greedy_growth(job: Job, state: ClusterState, by_capacity: bool, via: str, cache: dict) -> "_GreedyGrowth":
    key = (job.gpus_per_stage, _eligible(state.inst, job), by_capacity, via)
    g = cache.get(key)
    if g is None:
        g = cache[key] = _GreedyGrowth(job, state, by_capacity, resolve_via(state.inst, via))
    return g


class _GreedyGrowth:
    """``_greedy_chain``'s growth, shared by a job group and extended on demand: chain, routes, cumulative
    stages, and whether the routes of the first i hops share a link, for each prefix."""

    def __init__(self, job: Job, state: ClusterState, by_capacity: bool, via: str):
        self.state, self.by_capacity, self.via = state, by_capacity, via
        hosts = self.hosts = _hosts(job, state)
        if by_capacity:
            order = sorted(hosts, key=lambda r: (-state.free(r), state.price(r), r))
        else:
            order = sorted(hosts, key=lambda r: (state.price(r), r))
        self.chain = order[:1]
        self.cum = [hosts[order[0]]] if order else []
        self.routes: list[tuple[str, ...]] = []
        self.shared = [False] if order else []
        self.seen: set[int] = set()
        self.rest = list(order[1:])
        self.stuck = not order

    def grow_to(self, S: int) -> None:
        state, inst = self.state, self.state.inst
        T = chain_search.tables(inst, self.via, 1)
        ri = inst.region_index
        bw = state._bw
        caps = T.residual(bw).caps
        free = state._free
        while not self.stuck and self.cum[-1] < S:
            if not self.rest:
                self.stuck = True
                break
            ti = ri[self.chain[-1]]
            best = None
            for pos, r in enumerate(self.rest):
                hc = chain_search.hop_caps(T, caps, bw, ti, ri[r])
                if not hc:
                    continue
                cap, _, opt = hc[0]
                if cap <= MIN_GBPS:
                    continue
                if not self.by_capacity:
                    best = (pos, r, opt)
                    break
                key = (-free[r], -cap, pos)
                if best is None or key < best[0]:
                    best = (key, r, opt)
            if best is None:
                self.stuck = True
                break
            _, r, opt = best
            ks = opt[0]
            self.rest.remove(r)
            self.chain.append(r)
            self.routes.append(opt[1])
            self.cum.append(self.cum[-1] + self.hosts[r])
            self.shared.append(self.shared[-1] or any(k in self.seen for k in ks))
            self.seen.update(ks)


def _hop_route(inst: Instance, u: str, v: str, via: str) -> tuple[str, ...] | None:
    if via == "links":
        return (u, v) if (u, v) in inst.link_index else None
    rs = inst.routes(u, v, 1)
    return rs[0].regions if rs else None


def _hosts(job: Job, state: ClusterState) -> dict[str, int]:
    """Regions that can host at least one stage of ``job`` now -> how many stages fit (region order)."""
    g = job.gpus_per_stage
    free = state._free
    out = {}
    for r in _eligible_in_order(state.inst, job):
        n = free[r] // g
        if n > 0:
            out[r] = n
    return out


def _eligible_in_order(inst: Instance, job: Job) -> tuple[str, ...]:
    """The regions of ``_eligible(inst, job)`` in ``region_index`` order, cached per eligible set."""
    cache = inst.__dict__.setdefault("_policy_eligible_order", {})
    elig = _eligible(inst, job)
    v = cache.get(elig)
    if v is None:
        v = cache[elig] = tuple(r for r in inst.region_index if r in elig)
    return v


# ---------------------------------------------------------------------- stage 3: allocator

def allocate(job: Job, chain: Chain, state: ClusterState) -> list[tuple[str, int]] | None:
    """Cost-min allocation: one stage per chain region, the rest in ascending price up to free GPUs.
    Returns blocks (region, stages) in chain order, or None if the chain cannot hold S_j stages."""
    k = len(chain.regions)
    if k > job.stages:
        return None
    cap = [state.free_stages(job, r) for r in chain.regions]
    if any(c < 1 for c in cap) or sum(cap) < job.stages:
        return None
    n = [1] * k
    left = job.stages - k
    for i in sorted(range(k), key=lambda i: (state.price(chain.regions[i]), i)):
        if left == 0:
            break
        add = min(cap[i] - 1, left)
        n[i] += add
        left -= add
    return list(zip(chain.regions, n))


def allocate_even(job: Job, chain: Chain, state: ClusterState) -> list[tuple[str, int]] | None:
    """No-cost-min ablation: S_j / k stages per chain region (capped by free GPUs), leftovers one at a time to
    the regions with the most free stage slots left (ties: chain position)."""
    k = len(chain.regions)
    if k > job.stages:
        return None
    cap = [state.free_stages(job, r) for r in chain.regions]
    if any(c < 1 for c in cap) or sum(cap) < job.stages:
        return None
    n = [min(c, job.stages // k) for c in cap]
    left = job.stages - sum(n)
    while left > 0:
        i = max(range(k), key=lambda i: (cap[i] - n[i], -i))
        n[i] += 1
        left -= 1
    return list(zip(chain.regions, n))


def allocate_fill(job: Job, chain: Chain, state: ClusterState) -> list[tuple[str, int]] | None:
    """Baselines' allocation: fill the chain's regions in chain order, each up to its free GPUs.  Regions the
    job no longer needs are dropped from the end."""
    left = job.stages
    out = []
    for r in chain.regions:
        if left == 0:
            break
        n = min(state.free_stages(job, r), left)
        if n < 1:
            return None
        out.append((r, n))
        left -= n
    return out if left == 0 else None


ALLOCATE = {"costmin": allocate, "even": allocate_even, "fill": allocate_fill}


# ---------------------------------------------------------------------- plans and their estimated cost

def plan_cost(inst: Instance, job: Job, plan: JobPlan) -> tuple[float, float]:
    """(estimated cost USD, run time s) of a plan, from the model's formulas: electricity over the run
    (price curve integrated from the start), plus egress when the instance's objective counts it."""
    regions = [b.region for b in plan.blocks]
    tau = F.tau_s(inst, job, regions)
    lat = [_route_latency_ms(inst, h.route) for h in plan.hops]
    run = job.iterations * F.iteration_s(job, tau, [h.reserved_gbps for h in plan.hops], lat)
    blocks = [(b.region, b.stages) for b in plan.blocks]
    cost = F.electricity_usd(inst, job, blocks, plan.start_s, run)
    if inst.objective.egress:
        cost += F.egress_usd(job, [inst.route(h.route).egress_usd_per_gb for h in plan.hops])
    return cost, run


# ---------------------------------------------------------------------- the policy

def _route_latency_ms(inst: Instance, route: tuple[str, ...]) -> float:
    cache = inst.__dict__.setdefault("_policy_route_lat", {})
    v = cache.get(route)
    if v is None:
        v = cache[route] = inst.route(route).latency_ms
    return v


class OrderedPolicy:
    """A policy that orders the jobs it may start and places them one by one with its placement rule.

    ``hol="skip"``: a job that does not fit is skipped and later jobs are still tried (BACE-Pipe).
    ``hol="block"``: strict head-of-line blocking, the first job that does not fit stops the round
    (the baselines' FIFO, our reading) -- except a job that would not fit even on the empty cluster under
    the policy's rules, which can never start and is skipped rather than blocking the queue forever.
    """

    def __init__(self, name: str, order: str = "priority", hol: str = "skip", **options):
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        if hol not in HOL:
            raise ValueError(f"hol must be one of {HOL}, got {hol!r}")
        self.name = name
        self.order = order
        self.hol = hol
        self.options = {"order": order, "hol": hol, **options}
        self._never: dict = {}

    # subclasses implement place()
    def place(self, job: Job, state: ClusterState) -> JobPlan | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def ordered(self, queue: Sequence[Job], state: ClusterState) -> list[Job]:
        if self.order == "priority":
            return prioritize(queue, state)
        return fifo_order(queue, state.inst)

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        if not queue:
            return []
        inst = state.inst
        free_total = state.total_free_gpus()
        if free_total < min(job_profile(inst, j)[2] for j in queue):
            return []          # nothing fits by GPU count alone, whatever the order
        res = state.copy()
        out = []
        for job in self.ordered(queue, state):
            need = job_profile(inst, job)[2]
            plan = None if need > free_total else self.place(job, res)
            if plan is None:
                if self.hol == "block" and not self.never_fits(job, state):
                    break
                continue
            res.commit(job, plan)
            free_total -= need
            out.append(plan)
        return out

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place(job, state)`` returns a plan (subclasses answer faster where they can)."""
        return self.place(job, state) is not None

    def _state_cache(self, state: ClusterState) -> dict:
        """A dict private to ``state`` (the object itself is kept, so a later state cannot reuse its id)."""
        c = self.__dict__.get("_fits_cache")
        if c is None or c[0] is not state:
            c = self.__dict__["_fits_cache"] = (state, {})
        return c[1]

    #: facts about ``place`` that let ``policies.queue.QueueSession`` skip placement calls (see its doc):
    #: a job one free region can hold is always placed / only such jobs are ever placed / a multi-region
    #: chain needs a link with residual >= the job's smallest demand
    single_region_places = False
    single_region_only = False
    bandwidth_checked = False
    #: the queue asks ``fits`` before ``place`` for a job one region cannot hold (``fits`` much cheaper when it fails)
    fits_first = True

    def queue_session(self, inst: Instance):
        """An incremental queue-mode decider making the same decisions as ``decide`` on the whole queue
        (``policies.queue``); None for priority order with head-of-line blocking, which it does not cover."""
        if self.order == "priority" and self.hol == "block":
            return None
        if type(self).decide is not OrderedPolicy.decide:
            return None        # a subclass with its own decide (e.g. price-pack): the simulator's generic path
        from .queue import QueueSession
        return QueueSession(self, inst)

    def never_fits(self, job: Job, state: ClusterState) -> bool:
        """True if the policy's rules place ``job`` nowhere even with every resource free (prices at now)."""
        inst = state.inst
        key = (id(inst), job.name, tuple(F.price_at(inst, r.name, state.now) for r in inst.regions))
        v = self._never.get(key)
        if v is None:
            v = self._never[key] = self.place(job, ClusterState.empty(inst, state.now)) is None
        return v


class BacePipe(OrderedPolicy):
    """BACE-Pipe and its ablations (see module doc for every option)."""

    def __init__(self, name: str = "bace-pipe", order: str = "priority", hol: str = "skip",
                 pathfinder: str = "bandwidth", allocator: str = "costmin", seeds: str = "all",
                 via: str = "auto", k_routes: int = 4, prefer: str = "bandwidth", seed: int = 0):
        if pathfinder not in PATHFINDERS:
            raise ValueError(f"pathfinder must be one of {PATHFINDERS}, got {pathfinder!r}")
        if allocator not in ALLOCATORS:
            raise ValueError(f"allocator must be one of {ALLOCATORS}, got {allocator!r}")
        check_pathfinder_options(seeds, via, prefer)
        super().__init__(name, order=order, hol=hol, pathfinder=pathfinder, allocator=allocator, seeds=seeds,
                         via=via, k_routes=k_routes, prefer=prefer)
        self.pathfinder, self.allocator, self.seeds, self.via, self.k_routes, self.prefer = \
            pathfinder, allocator, seeds, via, k_routes, prefer
        # every seed grows, and a seed holding the whole job is a one-region chain; the price chain and the
        # cheapest-seed rule have no such fallback
        self.single_region_places = pathfinder == "bandwidth" and seeds == "all"
        self.bandwidth_checked = pathfinder == "bandwidth"
        # the queue asks fits() before place() where fits() is much cheaper when it fails; the bandwidth
        # pathfinder's fits() grows the same seeds place() grows (place() only prices them too), so asking
        # both costs twice when the job fits (``policies.queue``)
        self.fits_first = pathfinder != "bandwidth"

    def chains(self, job: Job, state: ClusterState) -> list[Chain]:
        if self.pathfinder == "bandwidth":
            return find_chains(job, state, seeds=self.seeds, via=self.via, k_routes=self.k_routes,
                               prefer=self.prefer)
        c = price_chain(job, state, via=self.via)
        return [] if c is None else [c]

    #: True: ``place`` and ``fits`` run the readable reference functions (``find_chains``, ``allocate``,
    #: ``make_plan``, ``plan_cost``) instead of ``chain_search``'s tables (same decisions; benchmarks and tests
    #: compare the two)
    reference_path = False

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place`` returns a plan, without pricing: some seed's growth succeeds (every allocator
        fills a grown chain: it has at most S_j regions, each with a free stage, holding S_j together)."""
        if self.pathfinder != "bandwidth":
            return greedy_chain_fits(job, state, False, self.via, self._state_cache(state))
        if not self.reference_path:
            return chain_search.fits(job, state, resolve_via(state.inst, self.via), self.k_routes, self.seeds,
                                     self.prefer)
        hosts = _hosts(job, state)
        if sum(hosts.values()) < job.stages:
            return False
        if self.seeds == "all" and max(hosts.values()) >= job.stages:
            return True
        if not _one_component_holds(job, state, hosts):
            return False
        order = sorted(hosts, key=lambda r: (state.price(r), r))
        if self.seeds == "cheapest":
            order = order[:1]
        via = resolve_via(state.inst, self.via)
        return any(grow_chain(job, state, seed, via=via, k_routes=self.k_routes, hosts=hosts, prefer=self.prefer)
                   is not None for seed in order)

    def group_bounds(self, job: Job, state: ClusterState) -> tuple[int, int]:
        """See ``policies.queue.QueueSession.hol_bounds``."""
        if self.pathfinder != "bandwidth":
            return greedy_chain_bounds(job, state, False, self.via, self._state_cache(state))
        T = max((state.free(r) // job.gpus_per_stage for r in _eligible(state.inst, job)), default=0)
        return (T if self.seeds == "all" else 0), 1 << 30

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        if self.pathfinder == "bandwidth" and not self.reference_path:
            return chain_search.place(job, state, resolve_via(state.inst, self.via), self.k_routes, self.seeds,
                                      self.prefer, self.allocator)
        return self.reference_place(job, state)

    def reference_place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """``place`` through the readable reference functions (every chain priced as a ``JobPlan``)."""
        inst = state.inst
        alloc = ALLOCATE[self.allocator]
        best = None
        for i, chain in enumerate(self.chains(job, state)):
            blocks = alloc(job, chain, state)
            if blocks is None:
                continue
            plan = make_plan(inst, job, chain, blocks, state.now)
            cost, run = plan_cost(inst, job, plan)
            key = (cost, run, i)
            if best is None or key < best[0]:
                best = (key, plan)
        return None if best is None else best[1]


def _one_component_holds(job: Job, state: ClusterState, hosts: Mapping[str, int]) -> bool:
    """Necessary for a bandwidth-checked chain: every link of every hop's route has residual >= b_j of the
    chain >= b_min (b_j at the slowest hosting GPU), so the chain lies in one connected component of the links
    with residual >= b_min, and that component's hosts must hold S_j stages."""
    inst = state.inst
    speed = inst.speed
    b_min = F.demand_gbps(job, max(job.stage_time_s / speed[r] for r in hosts)) * (1.0 - 1e-9)
    parent: dict[str, str] = {}

    def find(x):
        while x in parent:
            x = parent[x]
        return x
    bw = state._bw
    for k, l in enumerate(inst.links):
        if bw[k] >= b_min:
            a, b = find(l.a), find(l.b)
            if a != b:
                parent[a] = b
    tot: dict[str, int] = {}
    for r, n in hosts.items():
        c = find(r)
        tot[c] = tot.get(c, 0) + n
        if tot[c] >= job.stages:
            return True
    return False


def make_plan(inst: Instance, job: Job, chain: Chain, blocks: Sequence[tuple[str, int]], now: float) -> JobPlan:
    """JobPlan for ``blocks`` (a prefix of ``chain`` in chain order).  Hop i takes route i of the chain and
    reserves the chain's own per-hop reservation (ablations/baselines) or b_j of the regions used."""
    q = len(blocks)
    assert tuple(r for r, _ in blocks) == chain.regions[:q], "blocks must follow the chain"
    if chain.reserve_gbps is not None:
        ws = list(chain.reserve_gbps[:q - 1])
    else:
        b = F.demand_gbps(job, F.tau_s(inst, job, [r for r, _ in blocks]))
        ws = [b] * (q - 1)
    hops = tuple(Hop(chain.routes[i], ws[i]) for i in range(q - 1))
    return JobPlan(job.name, "done", float(now), tuple(Block(r, n) for r, n in blocks), hops)
