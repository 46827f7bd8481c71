"""A caller's warm start, checked before a solve uses it (issue 42): an infeasible one is one warning naming what
is infeasible, and is ignored (before: P1 and P2 dropped it without a word, or said only "does not fit the P1
model (region twice, ineligible region or unusable link)").

P1 starts every job of the warm start at its decision time t0, all at once: each started plan must pass the
evaluator's rule 1 (``evaluate.check_plan``: regions, stages, routes, reservations), and their GPUs per region and
Gbit/s per link direction together must fit what is free at t0 (``free_gpus``, ``free_gbps``, else the
instance's capacity).  P2 keeps the warm start's times: the evaluator's rules 1-3 over time.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import replace
from typing import Any, Mapping, Sequence

from ..evaluate import BW_TOL, check_plan, evaluate, make_schedule
from ..files import issue_summary
from ..instance import Instance
from ..schedule import JobPlan

log = logging.getLogger(__name__)


def checked_warm_start(inst: Instance, warm: Any, problem: str, kw: Mapping[str, Any] | None = None) -> Any:
    """``warm`` (a Schedule or a list of ``JobPlan``) when it is feasible for ``problem`` ("placement": P1 at t0;
    "schedule": P2 over time), else None, after one warning naming what is infeasible (module doc).  ``kw``: the
    solve's keyword arguments (P1's ``jobs``, ``t0``, ``free_gpus``, ``free_gbps``)."""
    plans = list(warm.plans) if hasattr(warm, "plans") else list(warm)
    kw = kw or {}
    if problem == "placement":
        waiting = _waiting(inst, kw.get("jobs"), kw.get("t0"))
        plans = [p for p in plans if p.name in waiting or p.name not in inst.job_index]   # P1 ignores the others
        issues = placement_issues(inst, plans, kw.get("free_gpus"), kw.get("free_gbps"))
    else:
        issues = schedule_issues(inst, plans)
    if not issues:
        return warm
    log.warning("the warm start is infeasible and is ignored: %s", issue_summary(issues))
    return None


def _waiting(inst: Instance, jobs, t0) -> set[str]:
    """The jobs P1 places: ``jobs`` if given, else those arrived by t0 (default: the last arrival)."""
    if jobs is not None:
        return set(jobs)
    if t0 is None:
        return {j.name for j in inst.jobs}
    return {j.name for j in inst.jobs if j.arrival_s <= t0 + 1e-9}


def _known(inst: Instance, plans: Sequence[JobPlan]) -> tuple[list[JobPlan], list[str]]:
    """The started plans of the instance's jobs, each once, and the issues of the others."""
    out, issues, seen = [], [], set()
    for p in plans:
        if p.name not in inst.job_index:
            issues.append(f"job {p.name!r} is not in instance {inst.name!r}")
        elif p.name in seen:
            issues.append(f"job {p.name!r} appears more than once")
        elif p.status == "done":
            seen.add(p.name)
            out.append(p)
    return out, issues


def placement_issues(inst: Instance, plans: Sequence[JobPlan], free_gpus: Mapping[str, int] | None = None,
                     free_gbps: Mapping[int, float] | None = None) -> list[str]:
    """What makes ``plans`` infeasible as P1's placement at t0 (every started job at once), one line each."""
    started, issues = _known(inst, plans)
    gpus: dict[str, int] = defaultdict(int)
    gbps: dict[tuple[int, int], float] = defaultdict(float)
    who: dict[Any, list[str]] = defaultdict(list)
    for p in started:
        job = inst.job(p.name)
        v = check_plan(inst, replace(p, start_s=job.arrival_s))      # P1 starts it at t0: its place only
        if v:
            issues += [x.message for x in v]
            continue
        for b in p.blocks:
            gpus[b.region] += job.gpus_per_stage * b.stages
            who[b.region].append(p.name)
        for h in p.hops:
            for u, w in zip(h.route, h.route[1:]):
                li = inst.link_index[(u, w)]
                for d in (0, 1):               # a hop reserves its Gbit/s both ways (the evaluator's rule 3)
                    gbps[(li, d)] += h.reserved_gbps
                    who[(li, d)].append(p.name)
    for r, n in gpus.items():
        cap = inst.region(r).gpus if free_gpus is None else free_gpus.get(r, 0)
        if n > cap:
            issues.append(f"region {r!r}: {n} GPUs at t0 > {cap} {'available' if free_gpus is None else 'free'} "
                          f"(jobs: {', '.join(who[r])})")
    for (li, d), g in gbps.items():
        link = inst.links[li]
        cap = link.bandwidth_gbps if free_gbps is None else free_gbps.get(li, 0.0)
        if g > cap + BW_TOL * max(1.0, cap):
            a, b = (link.a, link.b) if d == 0 else (link.b, link.a)
            issues.append(f"link {a}->{b}: {g:.6g} Gbit/s reserved at t0 > {cap:g} "
                          f"{'available' if free_gbps is None else 'free'} (jobs: {', '.join(who[(li, d)])})")
    return issues


def schedule_issues(inst: Instance, plans: Sequence[JobPlan]) -> list[str]:
    """What makes ``plans`` infeasible as P2's schedule (the evaluator's rules 1-3 over time), one line each."""
    started, issues = _known(inst, plans)
    rep = evaluate(inst, make_schedule(inst, started, method="warm start", check=False), check_reported=False)
    return issues + [v.message for v in rep.violations if v.rule in (1, 2, 3)]
