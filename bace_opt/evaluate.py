"""The evaluator: the one piece of code that checks and prices every schedule.

``evaluate(inst, schedule)`` checks the feasibility rules of ../shared/spec/system-model.md over time and
recomputes every figure; ``make_schedule(inst, plans, method)`` turns a method's decisions (``JobPlan``s)
into a priced ``Schedule``.  Both use ``price_plan``; no method computes its own metrics.

Rules checked (numbers as in the spec):
  1  s_j >= a_j; every block's region exists and can host the job; sum n_i = S_j; consecutive blocks in
     different regions; one hop per pair of consecutive blocks; each hop's route is a simple path of
     existing links from block i's region to block i+1's; reserved bandwidth > 0.
  2  at every instant and every region: GPUs in use <= G_r   (intervals [start, finish) are half-open)
  3  at every instant and every link direction: reserved Gbit/s <= B_e (a hop reserves w_i both ways)
  4  reported start/finish, iteration time, energy and costs equal the formulas (relative 1e-6), and the
     reported metrics equal the recomputed ones.
  0  schedule-level: the schedule names this instance's jobs, each exactly once, with a consistent status.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from . import formulas as F
from ._format import short, unit_of
from .errors import InputError
from .instance import Instance
from .schedule import Block, Hop, JobEntry, JobPlan, Schedule, SolverInfo

REL_TOL = 1e-6
ABS_TOL = 1e-9
BW_TOL = 1e-9  # relative slack on link capacity (floating point sums of reservations)


@dataclass(frozen=True)
class Violation:
    rule: int
    message: str
    job: str | None = None
    resource: str | None = None
    t0: float | None = None
    t1: float | None = None

    def __str__(self) -> str:
        return f"[rule {self.rule}] {self.message}"


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


ITERATION_MODELS = ("analytic", "gpipe", "1f1b", "greedy")


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
    from .pipeline import pipeline_iteration_s
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


def check_plan(inst: Instance, plan: JobPlan) -> list[Violation]:
    """Rule 1 (static part) for one job plan."""
    out: list[Violation] = []
    name = plan.name

    def bad(msg):
        out.append(Violation(1, f"job {name!r}: {msg}", job=name))

    if name not in inst.job_index:
        out.append(Violation(0, f"job {name!r} is not in instance {inst.name!r}", job=name))
        return out
    job = inst.job(name)
    if plan.status != "done":
        if plan.blocks or plan.hops or plan.start_s is not None:
            bad(f"status {plan.status!r} but it has a start time or a placement")
        return out
    if plan.start_s is None or not math.isfinite(plan.start_s):
        bad("status 'done' needs a finite start_s")
    elif plan.start_s < job.arrival_s - ABS_TOL:
        bad(f"starts at {plan.start_s:g} s, before its arrival at {job.arrival_s:g} s")
    if not plan.blocks:
        bad("status 'done' needs at least one block")
        return out
    eligible = set(inst.eligible_regions(job))
    for i, b in enumerate(plan.blocks):
        if b.region not in inst.region_index:
            bad(f"blocks[{i}].region {b.region!r} is not a region of the instance")
        elif b.region not in eligible:
            bad(f"blocks[{i}].region {b.region!r} cannot host a stage of this job (GPUs or GPU memory)")
        if b.stages < 1:
            bad(f"blocks[{i}].stages must be >= 1, got {b.stages}")
        if i and b.region == plan.blocks[i - 1].region:
            bad(f"blocks[{i - 1}] and blocks[{i}] are both in {b.region!r}: merge consecutive blocks")
    n = sum(b.stages for b in plan.blocks)
    if n != job.stages:
        bad(f"blocks hold {n} stages, the job has {job.stages}")
    if len(plan.hops) != len(plan.blocks) - 1:
        bad(f"{len(plan.blocks)} blocks need {len(plan.blocks) - 1} hops, got {len(plan.hops)}")
        return out
    for i, h in enumerate(plan.hops):
        src, dst = plan.blocks[i].region, plan.blocks[i + 1].region
        r = h.route
        if len(r) < 2 or r[0] != src or r[-1] != dst:
            bad(f"hops[{i}].route must run from {src!r} to {dst!r}, got {list(r)}")
            continue
        if len(set(r)) != len(r):
            bad(f"hops[{i}].route {list(r)} visits a region twice: not a simple path")
        for u, v in zip(r, r[1:]):
            if (u, v) not in inst.link_index:
                bad(f"hops[{i}].route {list(r)} uses {u!r}-{v!r}, which is not a link")
        if not (h.reserved_gbps > 0 and math.isfinite(h.reserved_gbps)):
            bad(f"hops[{i}].reserved_gbps must be > 0, got {h.reserved_gbps}")
    return out


def _close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), ABS_TOL)


#: The three money figures of every schedule, under one name each wherever they appear (metrics, bench rows,
#: CLI output): electricity, egress, and their total.  ``total_cost_usd`` is always electricity + egress.
MONEY_KEYS = ("total_electricity_usd", "total_egress_usd", "total_cost_usd")

#: Cost readings (docs/decisions.md "Cost readings"), each a metrics key: (a) active GPUs only, (b) active plus
#: idle GPUs of every region over the makespan window, (c) active GPUs plus egress.
COST_READINGS = {
    "a": ("total_electricity_usd", "electricity of active GPUs only (the paper's metric)"),
    "b": ("total_electricity_incl_idle_usd", "electricity of active GPUs + idle GPUs of every region over the makespan"),
    "c": ("total_cost_usd", "electricity of active GPUs + egress"),
}


def objective_cost_usd(inst: Instance, metrics: Mapping[str, Any]) -> float:
    """The cost that the optimizers minimize (P1 level 2, P2's mu term), from evaluated metrics: electricity,
    plus egress only where the instance's ``objective.egress`` is on.  Equal to ``total_electricity_usd`` or to
    ``total_cost_usd``; a report that uses it says which."""
    return metrics["total_electricity_usd"] + (metrics["total_egress_usd"] if inst.objective.egress else 0.0)


def compute_metrics(inst: Instance, statuses: dict[str, str], figures: dict[str, JobFigures],
                    plans: Mapping[str, JobPlan]) -> dict[str, Any]:
    """The metrics block, from per-job figures (and the done jobs' plans, for link use).

    Jobs and time: avg_jct_s and avg_wait_s are over done jobs; makespan_s is the last finish minus the first
    arrival of the done jobs (the *makespan window* [first arrival, last finish]); blocking_probability =
    blocked (rejected in blocking mode) / jobs; P1's ``not_started`` jobs are not rejections.
    Money (USD): total_electricity_usd (active GPUs), total_egress_usd, total_cost_usd = electricity + egress;
    idle_electricity_usd: every region's idle GPUs over the makespan window at idle power, and
    total_electricity_incl_idle_usd = active + idle (cost reading b).  energy_weighted_price_usd_per_kwh =
    total_electricity_usd / total_energy_kwh (active GPUs).
    Network: see ``link_metrics``.  Stall: total_stall_s sums each job's run time minus its run time with every
    hop at >= b_j; jobs_comm_bound counts the jobs with a communication-bound hop.
    """
    done = [figures[n] for n, s in statuses.items() if s == "done" and n in figures]
    n_blocked = sum(1 for s in statuses.values() if s == "blocked")
    elec = math.fsum(f.electricity_usd for f in done)
    egr = math.fsum(f.egress_usd for f in done)
    energy = math.fsum(f.energy_kwh for f in done)
    window = (min(f.arrival_s for f in done), max(f.finish_s for f in done)) if done else None
    idle_kwh, idle_usd = _idle_figures(inst, done, plans, window)
    out = {
        "avg_jct_s": math.fsum(f.jct_s for f in done) / len(done) if done else None,
        "makespan_s": (window[1] - window[0]) if done else None,
        "total_electricity_usd": elec,
        "total_egress_usd": egr,
        "total_cost_usd": elec + egr,
        "total_energy_kwh": energy,
        "idle_energy_kwh": idle_kwh,
        "idle_electricity_usd": idle_usd,
        "total_electricity_incl_idle_usd": elec + idle_usd,
        "energy_weighted_price_usd_per_kwh": elec / energy if energy > 0 else None,
        "avg_wait_s": math.fsum(f.wait_s for f in done) / len(done) if done else None,
        "total_run_s": math.fsum(f.run_s for f in done),
        "total_stall_s": math.fsum(f.stall_s for f in done),
        "jobs_comm_bound": sum(1 for f in done if f.comm_bound),
        "jobs_done": len(done),
        "jobs_blocked": n_blocked,
        "jobs_not_started": sum(1 for s in statuses.values() if s == "not_started"),
        "jobs_unscheduled": sum(1 for s in statuses.values() if s == "unscheduled"),
        "blocking_probability": n_blocked / len(statuses) if statuses else 0.0,
    }
    out.update(link_metrics(inst, done, plans, window))
    return out


def _idle_figures(inst: Instance, done: Sequence[JobFigures], plans: Mapping[str, JobPlan],
                  window: tuple[float, float] | None) -> tuple[float, float]:
    """Energy (kWh) and electricity (USD) of the GPUs that sit idle during the makespan window: in each region,
    G_r GPUs over the window minus the GPU-seconds of the done jobs (all of which run inside the window), at
    the GPU type's idle power times PUE, priced by the region's price curve (hourly series integrated exactly)."""
    if window is None:
        return 0.0, 0.0
    t0, t1 = window
    curves = F.price_curves(inst)
    busy_gpu_s: dict[str, float] = defaultdict(float)
    busy_price: dict[str, float] = defaultdict(float)    # sum of GPUs x integral of the price over the run
    for f in done:
        p = plans[f.name]
        g = inst.job(f.name).gpus_per_stage
        for b in p.blocks:
            busy_gpu_s[b.region] += g * b.stages * f.run_s
            busy_price[b.region] += g * b.stages * curves[b.region].integral(f.start_s, f.finish_s)
    kwh, usd = [], []
    for r in inst.regions:
        if r.gpus <= 0:
            continue
        kw = F.idle_kw_per_gpu(inst, r.name)
        kwh.append(kw * max(0.0, r.gpus * (t1 - t0) - busy_gpu_s[r.name]) / 3600.0)
        usd.append(kw * max(0.0, r.gpus * curves[r.name].integral(t0, t1) - busy_price[r.name]) / 3600.0)
    return math.fsum(kwh), math.fsum(usd)


def link_metrics(inst: Instance, done: Sequence[JobFigures], plans: Mapping[str, JobPlan],
                 window: tuple[float, float] | None) -> dict[str, Any]:
    """Link utilisation = reserved Gbit/s / capacity, from the done jobs' hops over [start_s, finish_s).

    Both directions of a link always carry the same reservation (a hop reserves w_i both ways, rule 3), so
    one figure per link serves both directions.  Per link: ``peak`` (the largest utilisation at any instant)
    and ``mean`` (time-weighted over the makespan window [first arrival, last finish] of the done jobs).
    ``link_utilisation`` lists the links that carry traffic ("a<->b", a and b as in the instance), ``links_used`` counts
    them; ``peak_link_utilisation`` is the largest peak of any link; ``mean_link_utilisation`` the unweighted
    mean of the per-link means over the links that carry traffic (BACE-Pipe's alpha averages the same set);
    ``mean_link_utilisation_all_links`` the same over every link of the instance.  None where undefined (no
    links, or no done job)."""
    nl = len(inst.links)
    events: dict[int, list[tuple[float, int, str, float]]] = defaultdict(list)   # (t, -1 end / +1 start, job, w)
    for f in done:
        p = plans[f.name]
        if not f.finish_s > f.start_s:
            continue
        per_link: dict[int, float] = defaultdict(float)
        for h in p.hops:
            for u, v in zip(h.route, h.route[1:]):
                per_link[inst.link_index[(u, v)]] += h.reserved_gbps
        for li, w in per_link.items():
            events[li].append((f.start_s, 1, f.name, w))
            events[li].append((f.finish_s, -1, f.name, w))
    span = (window[1] - window[0]) if window is not None else 0.0
    per: dict[str, dict[str, float]] = {}
    means_used, peaks = [], []
    for li in sorted(events):
        link = inst.links[li]
        ev = sorted(events[li])   # every change at one instant is applied before the peak is taken
        active: dict[str, float] = {}
        load = peak = area = 0.0
        last = ev[0][0]
        i = 0
        while i < len(ev):
            t = ev[i][0]
            area += load * (t - last)
            last = t
            while i < len(ev) and ev[i][0] == t:
                _, kind, name, w = ev[i]
                if kind > 0:
                    active[name] = w
                else:
                    active.pop(name, None)
                i += 1
            load = math.fsum(active.values())    # no rounding drift from adding and removing reservations
            peak = max(peak, load)
        cap = link.bandwidth_gbps
        mean = area / (cap * span) if span > 0 else None
        per[f"{link.a}<->{link.b}"] = {"peak": peak / cap, "mean": mean}
        peaks.append(peak / cap)
        if mean is not None:
            means_used.append(mean)
    has_window = window is not None and span > 0
    return {
        "peak_link_utilisation": (max(peaks) if peaks else 0.0) if nl and window is not None else None,
        "mean_link_utilisation": (math.fsum(means_used) / len(means_used) if means_used else 0.0)
        if nl and has_window else None,
        "mean_link_utilisation_all_links": math.fsum(means_used) / nl if nl and has_window else None,
        "links_used": len(per),
        "link_utilisation": per,
    }


def make_schedule(inst: Instance, plans: Iterable[JobPlan], method: str, solver: SolverInfo | None = None,
                  meta: dict | None = None, check: bool = True, iteration_model: str = "analytic") -> Schedule:
    """Price a method's plans into a Schedule (jobs in instance order).  Jobs the plans omit are listed
    as ``unscheduled``.  With ``check`` (default), a plan that breaks rule 1 raises ValueError: a method
    must never emit one."""
    by_name = {p.name: p for p in plans}
    unknown = set(by_name) - set(inst.job_index)
    if unknown:
        raise ValueError(f"plans name jobs not in the instance: {sorted(unknown)}")
    entries, figs, statuses = [], {}, {}
    for job in inst.jobs:
        p = by_name.get(job.name) or JobPlan(job.name, "unscheduled")
        statuses[job.name] = p.status
        if p.status != "done":
            entries.append(JobEntry(name=p.name, status=p.status))
            continue
        v = check_plan(inst, p)
        if v:
            if check:
                raise ValueError(f"method {method!r} produced an invalid plan: " + "; ".join(map(str, v)))
            # kept unpriced so that the evaluator can report it
            entries.append(JobEntry(name=p.name, status="done", start_s=p.start_s, blocks=p.blocks, hops=p.hops))
            continue
        f = price_plan(inst, p, iteration_model)
        figs[job.name] = f
        entries.append(JobEntry(name=p.name, status="done", start_s=f.start_s, blocks=p.blocks, hops=p.hops,
                                finish_s=f.finish_s, iteration_s=f.iteration_s, energy_kwh=f.energy_kwh,
                                electricity_usd=f.electricity_usd, egress_usd=f.egress_usd))
    meta = dict(meta or {})
    if iteration_model != "analytic":
        meta["iteration_model"] = iteration_model
    return Schedule(instance=inst.name, method=method, jobs=tuple(entries),
                    metrics=compute_metrics(inst, statuses, figs, {n: by_name[n] for n in figs}),
                    solver=solver, meta=meta)


# ---------------------------------------------------------------------- the evaluator

@dataclass
class Report:
    """Feasibility and recomputed figures of a schedule."""
    feasible: bool
    violations: list[Violation]
    figures: dict[str, JobFigures]
    metrics: dict[str, Any]
    statuses: dict[str, str] = field(default_factory=dict)
    arrival_s: dict[str, float] = field(default_factory=dict)

    def to_frame(self):
        """One row per job of the schedule: status and arrival for every job, the figures for done jobs
        (money as ``electricity_usd``, ``egress_usd`` and their total ``cost_usd``)."""
        import pandas as pd
        rows = []
        for name, st in self.statuses.items():
            f = self.figures.get(name)
            row = {"job": name, "status": st, "arrival_s": self.arrival_s.get(name)}
            if f is not None:
                row.update(arrival_s=f.arrival_s, start_s=f.start_s, finish_s=f.finish_s, wait_s=f.wait_s,
                           jct_s=f.jct_s, run_s=f.run_s, iteration_s=f.iteration_s, tau_s=f.tau_s,
                           demand_gbps=f.demand_gbps, power_kw=f.power_kw, energy_kwh=f.energy_kwh,
                           electricity_usd=f.electricity_usd, egress_usd=f.egress_usd, cost_usd=f.cost_usd,
                           comm_bound=f.comm_bound, stall_s=f.stall_s)
            rows.append(row)
        return pd.DataFrame(rows).set_index("job") if rows else pd.DataFrame()

    def summary(self) -> str:
        lines = [f"feasible: {'yes' if self.feasible else 'NO'} ({len(self.violations)} violation(s))"]
        lines += ["  " + str(v) for v in self.violations[:50]]
        if len(self.violations) > 50:
            lines.append(f"  ... and {len(self.violations) - 50} more")
        lines += format_metrics(self.metrics)
        return "\n".join(lines)


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


_NOTES = {
    "total_electricity_usd": "electricity: active GPUs only (cost reading a; the paper's cost)",
    "total_egress_usd": "egress",
    "total_cost_usd": "total = electricity + egress (cost reading c)",
    "total_electricity_incl_idle_usd": "electricity + idle GPUs of every region over the makespan (cost reading b)",
    "idle_electricity_usd": "idle GPUs of every region over the makespan",
    "energy_weighted_price_usd_per_kwh": "total_electricity_usd / total_energy_kwh",
    "peak_link_utilisation": "largest reserved/capacity of any link at any instant",
    "mean_link_utilisation": "time-weighted over the makespan; mean over links carrying traffic",
    "mean_link_utilisation_all_links": "time-weighted over the makespan; mean over all links",
    "total_stall_s": "run time lost to communication-bound hops (against every hop at b_j)",
    "blocking_probability": "rejected in blocking mode / jobs",
}
MAX_LINK_LINES = 12


def format_metrics(metrics: Mapping[str, Any], links: bool = True, keys: Sequence[str] | None = None) -> list[str]:
    """The metrics as ``key: value`` lines (the keys of the schedule file; money under its three names, each
    with what it counts), then one line per link carrying traffic.  Used by every command that prints metrics.
    ``keys``: only these (in this order, where present)."""
    lines = []
    items = metrics.items() if keys is None else [(k, metrics[k]) for k in keys if k in metrics]
    for k, v in items:
        if isinstance(v, Mapping):
            continue
        note = _NOTES.get(k)
        lines.append(f"{k}: {short(v, unit_of(k))}" + (f"   # {note}" if note else ""))
    per = metrics.get("link_utilisation") or {}
    if links and per:
        lines.append("link utilisation (reserved/capacity, both directions; peak, time-weighted mean):")
        ranked = sorted(per.items(), key=lambda kv: -kv[1]["peak"])
        for name, d in ranked[:MAX_LINK_LINES]:
            lines.append(f"  {name}: peak {short(d['peak'])}, mean {short(d['mean'])}")
        if len(ranked) > MAX_LINK_LINES:
            lines.append(f"  ... and {len(ranked) - MAX_LINK_LINES} more (--json lists every link)")
    return lines


def evaluate(inst: Instance, schedule: Schedule, check_reported: bool = True,
             iteration_model: str | None = None) -> Report:
    """Check ``schedule`` against ``inst`` (rules 0-4) and recompute all figures and metrics.

    ``iteration_model``: how T_iter is computed (``analytic`` or a pipeline schedule kind); default: the one
    the schedule's ``meta.iteration_model`` states, else ``analytic``."""
    if iteration_model is None:
        iteration_model = str(schedule.meta.get("iteration_model", "analytic"))
    viol: list[Violation] = []
    if schedule.instance and schedule.instance != inst.name:
        viol.append(Violation(0, f"schedule is for instance {schedule.instance!r}, not {inst.name!r}"))
    seen: dict[str, int] = defaultdict(int)
    statuses: dict[str, str] = {}
    figures: dict[str, JobFigures] = {}
    plans: dict[str, JobPlan] = {}
    for e in schedule.jobs:
        seen[e.name] += 1
        if seen[e.name] == 2:
            viol.append(Violation(0, f"job {e.name!r} appears more than once", job=e.name))
        if seen[e.name] > 1:
            continue
        v = check_plan(inst, e.plan)
        viol += v
        if e.name not in inst.job_index:
            continue
        statuses[e.name] = e.status
        if e.status == "done" and not v:
            figures[e.name] = f = price_plan(inst, e.plan, iteration_model)
            plans[e.name] = e.plan
            if check_reported:
                for attr in ("finish_s", "iteration_s", "energy_kwh", "electricity_usd", "egress_usd"):
                    rep, true = getattr(e, attr), getattr(f, attr)
                    if rep is not None and not _close(rep, true):   # absent figures are computed, not missing
                        viol.append(Violation(4, f"job {e.name!r}: reported {attr} = {_fmt(rep)}, "
                                                 f"the model gives {true:.9g}", job=e.name))
    for job in inst.jobs:
        if job.name not in seen:
            viol.append(Violation(0, f"job {job.name!r} of the instance is missing from the schedule", job=job.name))
    viol += _check_capacity(inst, schedule, figures)
    metrics = compute_metrics(inst, statuses, figures, plans)
    if check_reported and schedule.metrics:
        viol += check_reported_metrics(schedule.metrics, metrics)
    return Report(feasible=not viol, violations=viol, figures=figures, metrics=metrics, statuses=statuses,
                  arrival_s={n: inst.job(n).arrival_s for n in statuses})


def check_reported_metrics(reported: Mapping[str, Any], true: Mapping[str, Any]) -> list[Violation]:
    """Rule 4 for the metrics block: every reported key the evaluator knows must equal its recomputation
    (numbers to relative 1e-6, nested objects key by key).  Keys a schedule does not report are not checked,
    so a schedule written before a metric existed still evaluates.  Before ``not_started`` existed (no
    ``jobs_not_started`` reported), P1's not-started jobs were reported as blocked: ``jobs_blocked`` and
    ``blocking_probability`` are then checked under that older definition (blocked + not started)."""
    out: list[Violation] = []
    expected = dict(true)
    if "jobs_not_started" not in reported and true.get("jobs_not_started"):
        n_jobs = sum(true[k] for k in ("jobs_done", "jobs_blocked", "jobs_not_started", "jobs_unscheduled"))
        expected["jobs_blocked"] = true["jobs_blocked"] + true["jobs_not_started"]
        expected["blocking_probability"] = expected["jobs_blocked"] / n_jobs if n_jobs else 0.0
    for k, t in expected.items():
        if k in reported:
            out += [Violation(4, f"metrics.{where}: reported {_fmt(r)}, recomputed {_fmt(v)}")
                    for where, r, v in _differences(k, reported[k], t)]
    return out


def _differences(where: str, rep: Any, true: Any) -> list[tuple[str, Any, Any]]:
    if isinstance(true, Mapping):
        if not isinstance(rep, Mapping):
            return [(where, rep, "an object")]
        out = []
        for k in sorted(set(rep) | set(true)):
            if k not in true:
                out.append((f"{where}.{k}", rep[k], None))
            elif k not in rep:
                out.append((f"{where}.{k}", None, true[k]))
            else:
                out += _differences(f"{where}.{k}", rep[k], true[k])
        return out
    if rep is None and true is None:
        return []
    if true is not None and isinstance(rep, (int, float)) and not isinstance(rep, bool) \
            and _close(float(rep), float(true)):
        return []
    return [(where, rep, true)]


def _check_capacity(inst: Instance, schedule: Schedule, figures: dict[str, JobFigures]) -> list[Violation]:
    """Rules 2 and 3: sweep job starts and finishes; report each maximal interval over capacity."""
    # resource keys: ("gpu", region) and ("bw", link index, direction 0: a->b, 1: b->a)
    usage: dict[str, list] = {}
    events: list[tuple[float, int, str]] = []   # (time, +1 start / -1 finish, job)
    for e in schedule.jobs:
        f = figures.get(e.name)
        if f is None or e.status != "done":
            continue
        job = inst.job(e.name)
        res: dict[tuple, float] = defaultdict(float)
        for b in e.blocks:
            res[("gpu", b.region)] += job.gpus_per_stage * b.stages
        for h in e.hops:
            for u, v in zip(h.route, h.route[1:]):
                li = inst.link_index[(u, v)]
                res[("bw", li, 0)] += h.reserved_gbps
                res[("bw", li, 1)] += h.reserved_gbps
        usage[e.name] = list(res.items())
        if f.finish_s > f.start_s:
            events.append((f.start_s, 1, e.name))
            events.append((f.finish_s, -1, e.name))
    events.sort(key=lambda x: (x[0], x[1]))
    cap: dict[tuple, float] = {}
    for r in inst.regions:
        cap[("gpu", r.name)] = r.gpus
    for i, l in enumerate(inst.links):
        cap[("bw", i, 0)] = l.bandwidth_gbps
        cap[("bw", i, 1)] = l.bandwidth_gbps
    load: dict[tuple, float] = defaultdict(float)
    running: dict[tuple, set] = defaultdict(set)
    open_v: dict[tuple, tuple[float, float, set]] = {}  # resource -> (t0, peak, jobs)
    out: list[Violation] = []

    def over(key) -> bool:
        c = cap[key]
        return load[key] > c + (0 if key[0] == "gpu" else BW_TOL * max(1.0, c))

    def close(key, t1):
        t0, peak, jobs = open_v.pop(key)
        out.append(_cap_violation(inst, key, t0, t1, peak, jobs))

    i, n = 0, len(events)
    while i < n:
        t = events[i][0]
        touched = set()
        while i < n and events[i][0] == t:
            _, kind, name = events[i]
            for key, amt in usage[name]:
                load[key] += kind * amt
                if kind > 0:
                    running[key].add(name)
                else:
                    running[key].discard(name)
                touched.add(key)
            i += 1
        for key in touched:
            if over(key):
                if key in open_v:
                    t0, peak, jobs = open_v[key]
                    open_v[key] = (t0, max(peak, load[key]), jobs | running[key])
                else:
                    open_v[key] = (t, load[key], set(running[key]))
            elif key in open_v:
                close(key, t)
    for key in list(open_v):
        close(key, math.inf)
    out.sort(key=lambda v: (v.t0, v.resource))
    return out


def _cap_violation(inst: Instance, key, t0, t1, peak, jobs) -> Violation:
    who = ", ".join(sorted(jobs))
    if key[0] == "gpu":
        res = f"region {key[1]}"
        msg = (f"region {key[1]!r}: {peak:g} GPUs in use > {inst.region(key[1]).gpus} available "
               f"from t={t0:g} s to t={t1:g} s (jobs: {who})")
        rule = 2
    else:
        l = inst.links[key[1]]
        a, b = (l.a, l.b) if key[2] == 0 else (l.b, l.a)
        res = f"link {a}->{b}"
        msg = (f"link {a}->{b}: {peak:.6g} Gbit/s reserved > {l.bandwidth_gbps:g} available "
               f"from t={t0:g} s to t={t1:g} s (jobs: {who})")
        rule = 3
    return Violation(rule, msg, resource=res, t0=t0, t1=t1)
