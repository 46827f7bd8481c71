"""P1 solutions in back-end-neutral form (``Solution``: the values of x, a, n, f) and their conversion to and
from ``JobPlan``s: the decoder (routes followed from the hop flows, cycles dropped; models/placement.md
section 6), the encoder of a warm start (chains reversed for P1.20, proportional jobs reordered for
P1.21/P1.42/P1.43), the greedy
start, the price-pack start and the choice of MIP start (models/placement.md section 9d).
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from ... import formulas as F
from ...errors import BaceOptError
from ...schedule import Block, Hop, JobPlan
from .data import JobData, PlacementData, proportional_groups

log = logging.getLogger(__name__)


@dataclass
class Solution:
    """Solver-neutral values of the decision variables that define plans."""
    x: dict[int, float]
    a: dict[tuple, float]
    n: dict[tuple, float]                 # (j, r) -> stages
    f: dict[tuple, float]                 # (j, k, e, d)


def plans_from_solution(data: PlacementData, sol: Solution) -> tuple[list[JobPlan], list[str]]:
    """Decode started jobs into JobPlans (start t0, reservation b_j of the decoded placement)."""
    inst = data.inst
    plans, blocked = [], []
    for d in data.jobs:
        if sol.x.get(d.j, 0.0) < 0.5:
            blocked.append(d.job.name)
            continue
        chain = []
        for k in range(1, d.K + 1):
            rs = [r for r in d.regions if sol.a.get((d.j, k, r), 0.0) > 0.5]
            if not rs:
                break
            chain.append(rs[0])
        blocks = [Block(inst.regions[r].name, int(round(sol.n[(d.j, r)]))) for r in chain]
        names = [b.region for b in blocks]
        tau = F.tau_s(inst, d.job, names)
        b = F.demand_gbps(d.job, tau)
        hops = []
        for k in range(1, len(chain)):
            route = _follow(data, d, sol, k, chain[k - 1], chain[k])
            hops.append(Hop(tuple(inst.regions[v].name for v in route), b))
        plans.append(JobPlan(d.job.name, "done", data.t0, tuple(blocks), tuple(hops)))
    blocked += list(data.never)
    return plans, blocked


def _follow(data: PlacementData, d: JobData, sol: Solution, k: int, src: int, dst: int) -> list[int]:
    """The simple path of hop k's flow from src to dst (cycles in the flow's support are dropped)."""
    inst = data.inst
    nxt = defaultdict(list)
    for e in d.links:
        l = inst.links[e]
        a, b = inst.region_index[l.a], inst.region_index[l.b]
        if sol.f.get((d.j, k, e, 0), 0.0) > 0.5:
            nxt[a].append(b)
        if sol.f.get((d.j, k, e, 1), 0.0) > 0.5:
            nxt[b].append(a)
    path, seen, v = [src], {src}, src
    while v != dst:
        cand = [w for w in nxt[v] if w not in seen]
        if not cand:
            raise BaceOptError(f"P1 decoder: hop {k} of job {d.job.name!r} has no connected route "
                               f"{inst.regions[src].name} -> {inst.regions[dst].name} in the solver's flow")
        v = cand[0]
        seen.add(v)
        path.append(v)
    return path


def solution_from_plans(data: PlacementData, plans: Sequence[JobPlan]) -> Solution | None:
    """Encode a given placement (a warm start) in the model's variables; None if it does not fit the model
    (a region twice, an ineligible region, an unusable link...).  Chains are reversed if needed (P1.20)."""
    inst = data.inst
    by = {p.name: p for p in plans if p.status == "done" and p.blocks}
    x, a, n, f = {}, {}, {}, {}
    for d in data.jobs:
        p = by.get(d.job.name)
        x[d.j] = 0.0
        if p is None:
            continue
        try:
            chain = [inst.region_index[b.region] for b in p.blocks]
            stages = [b.stages for b in p.blocks]
            routes = [[inst.region_index[v] for v in h.route] for h in p.hops]
        except KeyError:
            return None
        if len(set(chain)) != len(chain) or any(r not in d.cap for r in chain) or len(chain) > d.K:
            return None
        if chain[0] > chain[-1]:
            chain, stages = chain[::-1], stages[::-1]
            routes = [rt[::-1] for rt in routes[::-1]]
        x[d.j] = 1.0
        for k, (r, s) in enumerate(zip(chain, stages), start=1):
            a[(d.j, k, r)] = 1.0
            n[(d.j, r)] = float(s)
        for k, rt in enumerate(routes, start=1):
            for u, v in zip(rt, rt[1:]):
                e = inst.link_index.get((inst.regions[u].name, inst.regions[v].name))
                if e is None or e not in d.links:
                    return None
                dd = 0 if inst.region_index[inst.links[e].a] == u else 1
                f[(d.j, k, e, dd)] = 1.0
    _order_proportional(data, x, a, n, f)
    return Solution(x, a, n, f)


def unit_cost(data: PlacementData, d: JobData, n: dict, f: dict) -> float:
    """Cost per iteration of job ``d``'s placement (stages ``n``, hop arcs ``f``, keyed by d.j) at t0 prices:
    the model's cost of d (P1.18) divided by N_j, the same function for every job of a proportional group."""
    inst = data.inst
    used = [r for r in d.regions if n.get((d.j, r), 0) > 0.5]
    if not used:
        return 0.0
    c = min(d.cls_of[r] for r in used)
    rate = sum(d.pi[r] * round(n[(d.j, r)]) for r in used)
    arcs = [key for key, v in f.items() if key[0] == d.j and v > 0.5]
    lat = sum(inst.links[key[2]].latency_ms for key in arcs)
    eg = sum(inst.links[key[2]].egress_usd_per_gb for key in arcs) if data.egress else 0.0
    return (rate * (d.base_s[c] + d.lat_coef * lat) + d.egress_coef * eg) / d.job.iterations


def _order_proportional(data: PlacementData, x: dict, a: dict, n: dict, f: dict) -> None:
    """Reorder a start in place so that it meets P1.21/P1.42/P1.43: in every proportional group the started
    placements go to the jobs with the fewest iterations (the dearest placement per iteration to the job with
    the fewest), and among jobs with equal iterations in order of Phi = sum_r (r + 1) n_r.  Each move gives a
    placement to a job with the same resources and no more iterations, so the start stays feasible and its
    cost and run time do not grow."""
    for g in proportional_groups(data):
        started = [j for j in g if x.get(j, 0) > 0.5]
        slices = []
        for j in started:
            sl = tuple({k[1:]: dct.pop(k) for k in [k for k in dct if k[0] == j]} for dct in (a, n, f))
            slices.append(sl)
            x[j] = 0.0
        d0 = data.jobs[g[0]]
        costs = [unit_cost(data, d0, {(d0.j,) + k: v for k, v in sl[1].items()},
                           {(d0.j,) + k: v for k, v in sl[2].items()}) for sl in slices]
        order = sorted(range(len(slices)), key=lambda i: -costs[i])
        iters = [data.jobs[j].job.iterations for j in g[:len(slices)]]
        k = 0
        while k < len(order):      # equal iterations: identical jobs, ordered by Phi (P1.43)
            e = k
            while e + 1 < len(order) and iters[e + 1] == iters[k]:
                e += 1
            order[k:e + 1] = sorted(order[k:e + 1], key=lambda i: sum((r + 1) * v for (r,), v in slices[i][1].items()))
            k = e + 1
        for j, i in zip(g, order):
            x[j] = 1.0
            for dct, part in zip((a, n, f), slices[i]):
                for k2, v in part.items():
                    dct[(j,) + k2] = v


def greedy_start(data: PlacementData) -> list[JobPlan]:
    """A quick feasible placement to start the solvers (never reported as a result): jobs by GPU count
    ascending; each in the cheapest single region that holds it, else filled across regions by ascending
    price; each hop on the lowest-latency path whose links all have the residual bandwidth."""
    import networkx as nx
    inst = data.inst
    gpus = {r: data.free_gpus[inst.regions[r].name] for r in range(len(inst.regions))}
    bw = dict(data.free_gbps)
    plans = []
    for d in sorted(data.jobs, key=lambda d: (d.job.gpus, d.j)):
        g, S = d.job.gpus_per_stage, d.S
        cap = {r: min(S, gpus[r] // g) for r in d.regions}
        order = sorted((r for r in d.regions if cap[r] > 0), key=lambda r: (d.pi[r], r))
        single = [r for r in order if cap[r] >= S]
        if single:
            chain = [(single[0], S)]
        else:
            chain, left = [], S
            for r in order:
                if left == 0 or len(chain) == d.K:
                    break
                k = min(left, cap[r])
                chain.append((r, k))
                left -= k
            if left:
                continue
        names = [inst.regions[r].name for r, _ in chain]
        b = F.demand_gbps(d.job, F.tau_s(inst, d.job, names))
        use: dict[int, float] = defaultdict(float)
        routes, ok = [], True
        for (u, _), (v, _) in zip(chain, chain[1:]):
            G = nx.Graph()
            for e in d.links:
                if bw[e] - use[e] >= b * (1 - 1e-12):
                    l = inst.links[e]
                    G.add_edge(l.a, l.b, w=l.latency_ms + 1e-9)
            try:
                path = nx.shortest_path(G, inst.regions[u].name, inst.regions[v].name, weight="w")
            except (nx.NetworkXNoPath, nx.NodeNotFound):
                ok = False
                break
            for a_, b_ in zip(path, path[1:]):
                use[inst.link_index[(a_, b_)]] += b
            routes.append(tuple(path))
        if not ok:
            continue
        for r, k in chain:
            gpus[r] -= g * k
        for e, w in use.items():
            bw[e] -= w
        plans.append(JobPlan(d.job.name, "done", data.t0,
                             tuple(Block(inst.regions[r].name, k) for r, k in chain),
                             tuple(Hop(rt, b) for rt in routes)))
    return plans


#: the cost-aware start (``price_pack_start``) is offered beside the greedy one (a switch for measurement)
COST_START = True
#: its deterministic search budget (packings evaluated by PricePack's local search) at the size of the realistic
#: family, ``COST_START_REF_SIZE`` = 16 jobs x 8 regions; larger instances get fewer packings, in proportion to
#: the square of jobs x regions (``start_evals``): one packing places every job over every region set, and a pass
#: of the local search tries every pair of jobs.  On the 20-region fleet 2000 packings took 168-456 s of a 600 s
#: budget, 256 (linear scaling) still 71-134 s (docs/research/highs-1.16/log.md)
COST_START_EVALS = 2000
COST_START_REF_SIZE = 16 * 8
#: above this size (jobs x regions) the price-pack start is not searched when the caller gives a warm start (the
#: select-pack start at the plain epoch): on the 20-region fleet its 32 packings took 4-21 s of a 60 s limit at
#: load 6-8 and cost 60.7 / 109.6 / 102.0 USD on seeds 1-3 where select-pack's placement costs 45.8 / 50.8 / 30.9
COST_START_MAX_WITH_WARM = 4 * COST_START_REF_SIZE
#: ... and the most regions it searches per job (PricePack.max_regions)
COST_START_REGIONS = 5


def start_evals(data: PlacementData) -> int:
    """The packings the price-pack start may evaluate: ``COST_START_EVALS`` up to ``COST_START_REF_SIZE`` jobs x
    regions, then scaled down by the square of the ratio (at least 20).  A count, not a clock: the start is
    deterministic."""
    size = len(data.jobs) * len(data.inst.regions)
    if size <= COST_START_REF_SIZE:
        return COST_START_EVALS
    return max(20, COST_START_EVALS * COST_START_REF_SIZE ** 2 // size ** 2)


def price_pack_start(data: PlacementData) -> list[JobPlan] | None:
    """A cost-aware start (never reported as a result): the price-pack heuristic (``bace_opt.policies.price_pack``,
    cheapest placement per job over region sets, long jobs packed first into cheap GPUs, local search over the
    packing order) run on the free resources at t0.  On the realistic instances it lands within 0.04-1.2 % of
    the level-2 optimum where the greedy start is 2-4x dearer (benchmarks/README.md, issue 11 fourth round).
    None when the heuristic fails (it is only a start)."""
    try:
        from ...policies.base import ClusterState
        from ...policies.price_pack import PricePack
        inst = data.inst
        state = ClusterState(inst, data.t0, dict(data.free_gpus),
                             [data.free_gbps[e] for e in range(len(inst.links))])
        pack = PricePack(max_regions=COST_START_REGIONS, max_evals=start_evals(data))
        return pack.decide(data.t0, [d.job for d in data.jobs], state)
    except Exception as e:      # a start is optional: never let the heuristic break an exact solve
        log.warning("P1: the price-pack start failed (%s: %s); greedy start only", type(e).__name__, e)
        return None


def solution_cost(data: PlacementData, sol: Solution) -> float:
    """The level-2 cost (P1.18) of ``sol``: sum over started jobs of N_j x its cost per iteration."""
    return sum(unit_cost(data, d, sol.n, sol.f) * d.job.iterations for d in data.jobs if sol.x.get(d.j, 0) > 0.5)


def start_candidates(data: PlacementData, warm_start: Sequence[JobPlan] | None) -> list[Solution]:
    """Every usable MIP start, best first (most jobs started, then least cost at t0, then the caller's warm
    start before the price-pack start before the greedy one): the caller's warm start if it fits the model,
    the price-pack start (``COST_START``) and the greedy start."""
    cands = []
    if warm_start:
        ws = solution_from_plans(data, warm_start)
        if ws is None:
            log.warning("warm start does not fit the P1 model (region twice, ineligible region or unusable "
                        "link); ignored")
        else:
            cands.append(ws)
    if COST_START and not (cands and len(data.jobs) * len(data.inst.regions) > COST_START_MAX_WITH_WARM):
        pp = price_pack_start(data)
        ps = solution_from_plans(data, pp) if pp else None
        if ps is not None:
            cands.append(ps)
    gs = solution_from_plans(data, greedy_start(data))
    if gs is not None:
        cands.append(gs)
    keyed = [(-sum(1 for v in s.x.values() if v > 0.5), solution_cost(data, s), i, s) for i, s in enumerate(cands)]
    return [k[-1] for k in sorted(keyed, key=lambda k: k[:3])]


def start_solution(data: PlacementData, warm_start: Sequence[JobPlan] | None) -> Solution | None:
    """The MIP start: the best of ``start_candidates`` (most jobs, then least cost)."""
    cands = start_candidates(data, warm_start)
    return cands[0] if cands else None


def out_of_time_start(data, warm_start, why: str, build_s: float):
    """(solution, level records, build time) of a walk engine stopped by the deadline before its first solve: the
    caller's start (the heuristic placement) where it fits the model, unproven; else no solution."""
    sol = solution_from_plans(data, warm_start) if warm_start else None
    count = None if sol is None else float(sum(1 for v in sol.x.values() if v > 0.5))
    rec = {"level": 1, "name": "jobs_started", "sense": "max", "status": "time_limit", "objective": count,
           "bound": None, "gap": None, "build_s": build_s, "solve_s": 0.0, "nodes": 0,
           "message": f"{why}; " + ("the start placement is returned, unproven" if sol is not None else
                                     "no placement found")}
    return sol, [rec], build_s
