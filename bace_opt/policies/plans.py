"""Plan building: a ``JobPlan`` from a chain and its blocks (``make_plan``), and the estimated cost and run time a
policy compares plans by (``plan_cost``: electricity over the run, ``formulas.electricity_usd`` over
``N * formulas.iteration_s``, plus egress when the instance's objective counts it).  Every figure reported is the
evaluator's; these estimates only rank plans.
"""
from __future__ import annotations

from typing import Sequence

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import Block, Hop, JobPlan
from .pathfinder import Chain


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


def plan_cost(inst: Instance, job: Job, plan: JobPlan) -> tuple[float, float]:
    """(estimated cost USD, run time s) of a plan, from the model's formulas: electricity over the run
    (price curve integrated from the start), plus egress when the instance's objective counts it."""
    regions = [b.region for b in plan.blocks]
    tau = F.tau_s(inst, job, regions)
    lat = [route_latency_ms(inst, h.route) for h in plan.hops]
    run = job.iterations * F.iteration_s(job, tau, [h.reserved_gbps for h in plan.hops], lat)
    blocks = [(b.region, b.stages) for b in plan.blocks]
    cost = F.electricity_usd(inst, job, blocks, plan.start_s, run)
    if inst.objective.egress:
        cost += F.egress_usd(job, [inst.route(h.route).egress_usd_per_gb for h in plan.hops])
    return cost, run


def route_latency_ms(inst: Instance, route: tuple[str, ...]) -> float:
    """The latency (ms) of a route of regions, cached per instance."""
    cache = inst.__dict__.setdefault("_policy_route_lat", {})
    v = cache.get(route)
    if v is None:
        v = cache[route] = inst.route(route).latency_ms
    return v
