"""Side-by-side views of schedules of one P1 epoch (heuristic vs optimum): which jobs, regions, routes, and
where the cost goes.  Every figure comes from the evaluator (``evaluate.price_plan``) and the P1 cost rule
(electricity at t0 prices, plus egress where the instance's objective counts it); nothing is recomputed here
beyond splitting a job's P1 cost over its regions in proportion to their power draw."""
from __future__ import annotations

from typing import Mapping

from .. import formulas as F
from ..instance import Instance
from ..schedule import Schedule


def placements(inst: Instance, schedules: Mapping[str, Schedule], t0: float):
    """One row per (method, job): started or not, blocks, routes, run time, P1 cost (USD at t0 prices)."""
    import pandas as pd
    from ..evaluate import price_plan
    rows = []
    for method, sched in schedules.items():
        for j in sched.jobs:
            row = {"method": method, "job": j.name, "status": j.status,
                   "regions": " > ".join(f"{b.region}:{b.stages}" for b in j.blocks),
                   "routes": " | ".join("-".join(h.route) for h in j.hops), "run_s": None, "p1_cost_usd": 0.0}
            if j.status == "done":
                fig = price_plan(inst, j.plan)
                row["run_s"] = fig.run_s
                row["p1_cost_usd"] = sum(cost_by_region(inst, sched, t0, job=j.name).values())
            rows.append(row)
    return pd.DataFrame(rows)


def cost_by_region(inst: Instance, sched: Schedule, t0: float, job: str | None = None) -> dict[str, float]:
    """P1 cost (USD) of the schedule's started jobs (or of ``job``) per region; egress (where counted) under
    the key ``"egress"``."""
    from ..evaluate import price_plan
    out: dict[str, float] = {}
    for j in sched.jobs:
        if j.status != "done" or (job is not None and j.name != job):
            continue
        fig = price_plan(inst, j.plan)
        spec = inst.job(j.name)
        for b in j.blocks:
            kw = F.power_kw(inst, spec, [(b.region, b.stages)])
            out[b.region] = out.get(b.region, 0.0) + kw * F.price_at(inst, b.region, t0) * fig.run_s / 3600.0
        if inst.objective.egress and fig.egress_usd:
            out["egress"] = out.get("egress", 0.0) + fig.egress_usd
    return out


def region_table(inst: Instance, t0: float):
    """Regions with GPUs, price at t0 (USD/kWh, with PUE) sorted cheapest first."""
    import pandas as pd
    rows = [{"region": r.name, "gpus": r.gpus, "price_usd_per_kwh": F.price_at(inst, r.name, t0),
             "pue": r.pue, "effective_usd_per_kwh": F.price_at(inst, r.name, t0) * r.pue}
            for r in inst.regions if r.gpus > 0]
    return pd.DataFrame(rows).sort_values("effective_usd_per_kwh").set_index("region")


def job_table(inst: Instance):
    """Jobs with their size and cost weight N (m + S - 1) t_j g_j (GPU-seconds of one stage's run)."""
    import pandas as pd
    rows = [{"job": j.name, "stages": j.stages, "gpus": j.stages * j.gpus_per_stage,
             "compute_s": F.compute_s(j), "demand_gbps": F.demand_gbps(j, j.stage_time_s),
             "cost_weight_s": j.iterations * (j.microbatches + j.stages - 1) * j.stage_time_s * j.gpus_per_stage}
            for j in inst.jobs]
    return pd.DataFrame(rows).set_index("job")
