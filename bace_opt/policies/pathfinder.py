"""BACE-Pipe's bandwidth-aware pathfinder, the readable reference (stage 2 of system-model.md, "BACE-Pipe (the
heuristic; our reading of its three stages)"), and what every chain rule shares: ``Chain``, the regions that can
host a job (``host_stages``) and the hop rule (``resolve_via``).

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

``BacePipe.place`` runs the same decisions through ``chain_search`` (integer tables, exact pruning); these
functions stay the readable reference (``BacePipe.reference_path``) that the tests compare it with.  The
greedy chains of the baselines and of the no-pathfinder ablation are in ``greedy_chains``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .. import formulas as F
from ..instance import Instance, Job
from .base import ClusterState, eligible_set

SEED_RULES = ("cheapest", "all")
VIA = ("auto", "links", "routes")
PREFER = ("bandwidth", "price")


@dataclass(frozen=True)
class Chain:
    """An ordered chain of regions and the route of each hop between consecutive regions."""
    regions: tuple[str, ...]
    routes: tuple[tuple[str, ...], ...]      # len(regions) - 1 routes, routes[i] from regions[i] to regions[i+1]
    tau_s: float                             # slowest stage time of the chain's regions
    demand_gbps: float                       # b_j for this chain
    reserve_gbps: tuple[float, ...] | None = None   # per-hop reservation when it is not b_j (ablations)


def check_pathfinder_options(seeds: str, via: str, prefer: str) -> None:
    """Raise ValueError naming an unknown pathfinder option."""
    for name, value, allowed in (("seeds", seeds, SEED_RULES), ("via", via, VIA), ("prefer", prefer, PREFER)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


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


def host_stages(job: Job, state: ClusterState) -> dict[str, int]:
    """Regions that can host at least one stage of ``job`` now -> how many stages fit (region order)."""
    g = job.gpus_per_stage
    free = state.free_gpus
    out = {}
    for r in eligible_in_order(state.inst, job):
        n = free[r] // g
        if n > 0:
            out[r] = n
    return out


def eligible_in_order(inst: Instance, job: Job) -> tuple[str, ...]:
    """The regions of ``eligible_set(inst, job)`` in ``region_index`` order, cached per eligible set."""
    cache = inst.__dict__.setdefault("_policy_eligible_order", {})
    elig = eligible_set(inst, job)
    v = cache.get(elig)
    if v is None:
        v = cache[elig] = tuple(r for r in inst.region_index if r in elig)
    return v


def find_chains(job: Job, state: ClusterState, seeds: str = "all", via: str = "auto",
                k_routes: int = 4, prefer: str = "bandwidth") -> list[Chain]:
    """Bandwidth-feasible chains for ``job`` on ``state`` (one per seed that yields one, seeds in ascending
    price; see module doc).  With ``seeds="all"`` every region holding the whole job alone gives its
    single-region chain."""
    check_pathfinder_options(seeds, via, prefer)
    via = resolve_via(state.inst, via)
    hosts = host_stages(job, state)
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
        hosts = host_stages(job, state)
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


def one_component_holds(job: Job, state: ClusterState, hosts: Mapping[str, int]) -> bool:
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
    bw = state.free_link_gbps
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
