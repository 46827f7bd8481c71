"""Figures of one placed job (system-model.md): iteration time, run time, energy, electricity, egress, stall.

``price_plan(inst, plan)`` is the one place a job's figures are computed; the evaluator (``evaluate``) and
``make_schedule`` both call it.  ``iteration_model`` chooses T_iter: the analytic formula, or the makespan of an
explicit micro-batch schedule of the pipeline layer (gpipe, 1f1b, greedy).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from ..errors import InputError
from ..instance import Instance
from ..pipeline import pipeline_iteration_s
from ..schedule import ITERATION_MODELS, Hop, JobPlan


@dataclass(frozen=True)
class JobFigures:
    """Everything the model says about one placed job."""
    name: str
    arrival_s: float
    start_s: float
    tau_s: float
    demand_gbps: float
    iteration_s: float
    run_s: float
    finish_s: float
    power_kw: float
    energy_kwh: float
    electricity_usd: float
    egress_usd: float
    comm_bound: bool          # some hop reserves less than the no-stall demand
    stall_s: float = 0.0      # run_s minus the run time with every hop at >= b_j (0 unless comm_bound)

    @property
    def cost_usd(self) -> float:
        """Total cost of the job: electricity + egress (USD)."""
        return self.electricity_usd + self.egress_usd

    @property
    def jct_s(self) -> float:
        return self.finish_s - self.arrival_s

    @property
    def wait_s(self) -> float:
        return self.start_s - self.arrival_s




def iteration_time_s(inst: Instance, plan: JobPlan, iteration_model: str = "analytic") -> float:
    """T_iter of a placed job: the analytic formula (system-model.md), or the makespan of an explicit
    micro-batch schedule of the pipeline layer (``bace_opt.pipeline``: gpipe, 1f1b, greedy)."""
    job = inst.job(plan.name)
    if iteration_model == "analytic":
        tau = F.tau_s(inst, job, [b.region for b in plan.blocks])
        return F.iteration_s(job, tau, [h.reserved_gbps for h in plan.hops],
                             [inst.route(h.route).latency_ms for h in plan.hops])
    if iteration_model not in ITERATION_MODELS:
        raise InputError(f"iteration model must be one of {', '.join(ITERATION_MODELS)}, got {iteration_model!r}")
    return pipeline_iteration_s(inst, job, plan.blocks, plan.hops, kind=iteration_model).iteration_s


def price_plan(inst: Instance, plan: JobPlan, iteration_model: str = "analytic") -> JobFigures:
    """Figures of a placed job (status done).  Assumes the plan's names exist (see ``check_plan``)."""
    job = inst.job(plan.name)
    regions = [b.region for b in plan.blocks]
    tau = F.tau_s(inst, job, regions)
    routes = [inst.route(h.route) for h in plan.hops]
    ws = [h.reserved_gbps for h in plan.hops]
    it = iteration_time_s(inst, plan, iteration_model)
    run = job.iterations * it
    start = float(plan.start_s)
    blocks = [(b.region, b.stages) for b in plan.blocks]
    kw = F.power_kw(inst, job, blocks)
    demand = F.demand_gbps(job, tau)
    comm_bound = any(F.transfer_s(job, w) > tau * (1 + 1e-12) for w in ws)
    stall = 0.0
    if comm_bound:   # run time minus the run time of the same placement with every hop at >= b_j
        if iteration_model == "analytic":
            it0 = F.no_stall_iteration_s(job, tau, ws, [r.latency_ms for r in routes])
        else:
            fast = JobPlan(plan.name, plan.status, plan.start_s, plan.blocks,
                           tuple(Hop(h.route, max(h.reserved_gbps, demand)) for h in plan.hops))
            it0 = iteration_time_s(inst, fast, iteration_model)
        stall = max(0.0, run - job.iterations * it0)
    return JobFigures(
        name=job.name, arrival_s=job.arrival_s, start_s=start, tau_s=tau, demand_gbps=demand, iteration_s=it,
        run_s=run, finish_s=start + run, power_kw=kw, energy_kwh=kw * run / 3600.0,
        electricity_usd=F.electricity_usd(inst, job, blocks, start, run),
        egress_usd=F.egress_usd(job, [r.egress_usd_per_gb for r in routes]),
        comm_bound=comm_bound, stall_s=stall,
    )
