"""The metrics block of a schedule, from its jobs' figures: jobs and time, money under its three names (and the
cost readings), energy, idle GPUs, stall, and where the network binds (link utilisation).
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Mapping, Sequence

from .. import formulas as F
from ..instance import Instance
from ..schedule import JobPlan
from .figures import JobFigures


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
