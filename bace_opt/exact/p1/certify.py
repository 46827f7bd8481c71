"""What a P1 solve reports when it does not prove its optimum: the best valid bound and the best placement checked
by the evaluator that it has (issue 37, step 4; models/placement.md section 11).

* ``cost_floor``: a lower bound on level 2 (the cost at t0 with the count fixed at z1) that needs no solve: the
  z1 smallest per-job floors, each the least cost of the job alone over its speed classes (the cheapest stage
  fill of the regions of that class or faster, times the class's run time without latency, plus the least
  latency and egress of one hop when no such region holds the whole job).  Valid because every placement of z1
  jobs pays at least each started job's floor, whatever the others take; valid for prices >= 0 only (None
  otherwise).
* ``heuristic_starts``: the placements a shipped heuristic (select-pack: within 2.55 % of the optimum at worst
  on the gap suites) makes at the same epoch, through the simulator's gate (``policies.gate.epoch_plans``), as
  starts for the engines: an engine stopped by its time limit returns at least that placement.
* ``certify_levels``: a level-2 record gets the larger of its own bound and the floor (``bound_source`` says
  which), and its gap from it, so that a solve stopped by its limit reports a certified gap, never none.
"""
from __future__ import annotations

import logging
import math
from typing import Sequence

from ... import clock
from ...schedule import JobPlan
from ...solvers.base import relative_gap
from .data import JobData, PlacementData, has_negative_prices

log = logging.getLogger(__name__)

#: shipped policies whose placement at the epoch starts the engines (and is the incumbent they must beat)
HEURISTIC_STARTS = ("select-pack",)
#: a heuristic start gets at most this share of the solve's time limit for its decision (and never over 60 s)
START_SHARE = 0.2


def job_floor(data: PlacementData, d: JobData) -> float:
    """The least cost of job ``d`` placed alone (a lower bound of every placement of it: see the module doc)."""
    inst = data.inst
    lat_min = min((inst.links[e].latency_ms for e in d.links), default=0.0)
    eg_min = min((inst.links[e].egress_usd_per_gb for e in d.links), default=0.0) if data.egress else 0.0
    best = math.inf
    for c in range(len(d.classes)):
        rs = sorted((r for r in d.regions if d.cls_of[r] >= c), key=lambda r: d.pi[r])
        if sum(d.cap[r] for r in rs) < d.S:
            continue
        left, rate = d.S, 0.0
        for r in rs:
            k = min(left, d.cap[r])
            rate += k * d.pi[r]
            left -= k
            if not left:
                break
        hop = not any(d.cap[r] >= d.S for r in rs)
        cost = rate * (d.base_s[c] + (d.lat_coef * lat_min if hop else 0.0)) + (d.egress_coef * eg_min if hop else 0.0)
        best = min(best, cost)
    return best


def cost_floor(data: PlacementData, z1: int) -> float | None:
    """A valid lower bound on the level-2 cost with ``z1`` jobs started (None with negative prices)."""
    if has_negative_prices(data) or z1 > len(data.jobs):
        return None
    floors = sorted(job_floor(data, d) for d in data.jobs)
    return float(sum(floors[:z1]))


#: a heuristic start is not tried with less than this many seconds left
MIN_START_S = 0.2


def heuristic_starts(inst, t0: float, names: Sequence[str], time_limit_s: float | None,
                     policies: Sequence[str] = HEURISTIC_STARTS) -> list[tuple[str, list[JobPlan]]]:
    """(policy name, plans) of each heuristic's decision at ``t0`` on the jobs ``names``, every resource free.
    A policy that fails or overruns its share of the time is logged and left out (a start is a help, not a
    need)."""
    from ...policies import get_policy
    from ...policies.base import PolicyError
    from ...policies.gate import epoch_plans
    limit = 60.0 if time_limit_s is None else max(1.0, min(60.0, START_SHARE * time_limit_s))
    limit = clock.budget(limit)              # never past the command's deadline (bace_opt.clock)
    out = []
    for name in policies:
        if limit < MIN_START_S:
            log.info("P1: no %s start: %.2f s left of the time limit", name, limit)
            continue
        try:
            plans, wall, _ = epoch_plans(inst, get_policy(name), t0, names, limit)
        except PolicyError as e:
            log.warning("P1: the %s start was not used: %s", name, e)
            continue
        log.info("P1: %s start: %d jobs in %.2f s", name, len(plans), wall)
        if plans:
            out.append((name, plans))
    return out


def certify_levels(data: PlacementData, lv: list[dict]) -> list[dict]:
    """Raise the level-2 record's bound to ``cost_floor`` where that is higher (level 1 proven), and recompute
    its gap; a bound that is not finite becomes None.  The records are changed in place and returned."""
    for r in lv:          # a back end's "no bound" (-inf, nan) is no bound, not a number to print or write
        if r.get("bound") is not None and not math.isfinite(r["bound"]):
            r["bound"], r["gap"] = None, None
    by = {r["level"]: r for r in lv}
    r1, r2 = by.get(1), by.get(2)
    if r1 is None or r2 is None or r1["status"] != "optimal" or r1["objective"] is None:
        return lv
    floor = cost_floor(data, int(round(r1["objective"])))
    if floor is None:
        return lv
    own = r2.get("bound")
    if own is None or not math.isfinite(own) or floor > own:
        r2["bound"] = floor
        r2["bound_source"] = "cost floor (each started job's least cost alone)"
        r2["gap"] = relative_gap(r2["objective"], floor)
    return lv
