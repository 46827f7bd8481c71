"""Placement columns of P1's Dantzig-Wolfe master (issue 37): one placement of one job.

A column is a chain of regions with their stage counts, one simple route per hop, the speed class the chain
implies (the slowest region used), and the placement's exact cost and run time at t0.  The cost and the run time
are the evaluator's (``placement.cost_at_t0_usd`` and ``evaluate.price_plan`` on the column's ``JobPlan``), never a
formula of this package; ``model_cost`` (the walk model's coefficients, P1.39) is what the pricing heuristics rank
with, and the two agree to rounding (tested).

Resource use of a column: g_j n_r GPUs in every region of its chain, and b_jc Gbit/s on every link once per hop
whose route crosses it (a link crossed by two hops of one job reserves 2 b_jc, as in P1.14).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ....evaluate import price_plan
from ....schedule import Block, Hop, JobPlan
from ..data import cost_at_t0_usd
from ..data import JobData, PlacementData


@dataclass(frozen=True)
class Column:
    """One placement of job ``j`` (index in ``PlacementData.jobs``)."""
    j: int
    chain: tuple[int, ...]               # region indexes, in chain order
    stages: tuple[int, ...]              # stages per chain region
    routes: tuple[tuple[int, ...], ...]  # one node sequence per hop (chain[k] -> chain[k+1])
    cls: int                             # speed class index (the slowest chain region)
    demand: float                        # b_jc: Gbit/s reserved on every hop
    cost: float                          # evaluator's cost at t0 (electricity, + egress when in the objective)
    run_s: float                         # evaluator's run time
    gpus: dict = field(hash=False, compare=False, default_factory=dict)    # region -> GPUs
    links: dict = field(hash=False, compare=False, default_factory=dict)   # link -> hops crossing it

    @property
    def key(self) -> tuple:
        """Identity of the placement (a chain and its reverse are the same placement)."""
        fwd = (self.chain, self.stages, self.routes)
        rev = (self.chain[::-1], self.stages[::-1], tuple(r[::-1] for r in self.routes[::-1]))
        return (self.j,) + min(fwd, rev)

    @property
    def phi(self) -> int:
        """Phi_j = sum_r (r + 1) n_r (P1.43)."""
        return sum((r + 1) * n for r, n in zip(self.chain, self.stages))

    def plan(self, data: PlacementData) -> JobPlan:
        return job_plan(data, data.jobs[self.j], self.chain, self.stages, self.routes)


def job_plan(data: PlacementData, d: JobData, chain: Sequence[int], stages: Sequence[int],
             routes: Sequence[Sequence[int]]) -> JobPlan:
    """The JobPlan of a placement (start t0, every hop reserving the no-stall demand b_jc)."""
    inst = data.inst
    cls = min(d.cls_of[r] for r in chain)
    b = d.demand[cls]
    return JobPlan(d.job.name, "done", data.t0, tuple(Block(inst.regions[r].name, int(n)) for r, n in zip(chain, stages)),
                   tuple(Hop(tuple(inst.regions[v].name for v in rt), b) for rt in routes))


def route_links(data: PlacementData, route: Sequence[int]) -> list[int]:
    """Link indexes along a node sequence (KeyError if two consecutive nodes are not linked)."""
    inst = data.inst
    names = [inst.regions[v].name for v in route]
    return [inst.link_index[(a, b)] for a, b in zip(names, names[1:])]


def link_use(data: PlacementData, routes: Sequence[Sequence[int]]) -> dict[int, int]:
    use: dict[int, int] = {}
    for rt in routes:
        for e in route_links(data, rt):
            use[e] = use.get(e, 0) + 1
    return use


def fits_alone(data: PlacementData, d: JobData, chain, stages, routes) -> bool:
    """The placement is one of P1's for job ``d`` alone on the free resources: distinct eligible regions, at
    least one and at most cap_jr stages each, S_j in all, simple routes from each region to the next over links
    j may use, and every link's free bandwidth holds its hops' reservations."""
    if len(set(chain)) != len(chain) or any(r not in d.cap for r in chain) or len(routes) != len(chain) - 1:
        return False
    if sum(stages) != d.S or any(not 1 <= n <= d.cap[r] for r, n in zip(chain, stages)):
        return False
    cls = min(d.cls_of[r] for r in chain)
    for k, rt in enumerate(routes):
        if rt[0] != chain[k] or rt[-1] != chain[k + 1] or len(set(rt)) != len(rt):
            return False
    try:
        use = link_use(data, routes)
    except KeyError:
        return False
    links = set(d.links)
    return all(e in links and n * d.demand[cls] <= data.free_gbps[e] * (1 + 1e-12) for e, n in use.items())


def model_cost(data: PlacementData, d: JobData, chain, stages, routes) -> float:
    """The walk model's cost of the placement (P1.39 with exact products): Pi_j (base_jc + lat_j L_j) + egress."""
    inst = data.inst
    cls = min(d.cls_of[r] for r in chain)
    rate = sum(d.pi[r] * n for r, n in zip(chain, stages))
    lat, eg = 0.0, 0.0
    for rt in routes:
        for e in route_links(data, rt):
            lat += inst.links[e].latency_ms
            eg += inst.links[e].egress_usd_per_gb
    return rate * (d.base_s[cls] + d.lat_coef * lat) + (d.egress_coef * eg if data.egress else 0.0)


def make_column(data: PlacementData, d: JobData, chain, stages, routes) -> Column:
    """A column from a placement of job ``d`` (the caller checks ``fits_alone``); chain oriented so that its first
    region index is <= its last (P1.38), cost and run time from the evaluator."""
    chain, stages = tuple(int(r) for r in chain), tuple(int(n) for n in stages)
    routes = tuple(tuple(int(v) for v in rt) for rt in routes)
    if chain[0] > chain[-1]:
        chain, stages, routes = chain[::-1], stages[::-1], tuple(rt[::-1] for rt in routes[::-1])
    plan = job_plan(data, d, chain, stages, routes)
    cost = cost_at_t0_usd(data.inst, [plan], data.t0)
    run = price_plan(data.inst, plan).run_s
    cls = min(d.cls_of[r] for r in chain)
    return Column(d.j, chain, stages, routes, cls, d.demand[cls], cost, run,
                  {r: d.job.gpus_per_stage * n for r, n in zip(chain, stages)}, link_use(data, routes))


def columns_from_plans(data: PlacementData, plans: Sequence[JobPlan]) -> list[Column]:
    """Columns of the started plans that are placements of the model (others, e.g. a region twice, are skipped)."""
    inst = data.inst
    by = {d.job.name: d for d in data.jobs}
    out = []
    for p in plans:
        d = by.get(p.name)
        if d is None or p.status != "done" or not p.blocks:
            continue
        try:
            chain = [inst.region_index[b.region] for b in p.blocks]
            routes = [[inst.region_index[v] for v in h.route] for h in p.hops]
        except KeyError:
            continue
        stages = [b.stages for b in p.blocks]
        if fits_alone(data, d, chain, stages, routes):
            out.append(make_column(data, d, chain, stages, routes))
    return out
