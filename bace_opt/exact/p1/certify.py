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
* ``certify_levels``: a level-2 record gets the largest of its own bound, the stage relaxation's
  (``p1.stage``) and the floor, ``bound_source`` (always present, one of ``BOUND_SOURCES``) says which, and
  its gap from it, so that a solve stopped by its limit reports a certified gap, never none.
* ``Timeline``: the best certified bound and the best incumbent as the solve moves (``{t_s, bound, incumbent,
  bound_source}`` points, the schema ``solve --json`` and ``gap --json`` write as ``timeline``; ``t_s`` in
  seconds from the command's start, ``clock.command_start``).
"""
from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ... import clock
from ...schedule import JobPlan
from ...solvers.base import relative_gap
from .data import JobData, PlacementData, has_negative_prices

log = logging.getLogger(__name__)

#: where a level-2 bound comes from (``levels[cost_usd].bound_source``): the engine's own search (a MIP's dual
#: bound, or column generation's), the stage relaxation's MIP or LP (``p1.stage``, models/placement.md section
#: 12), the cost floor (the last resort), or none (level 1 not proven, or no bound at all)
SOURCE_SEARCH = "engine search (MIP dual bound)"
SOURCE_STAGE_MIP = "stage relaxation MIP (dual bound)"
SOURCE_STAGE_LP = "stage relaxation LP (safe dual bound)"
SOURCE_FLOOR = "cost floor (each started job's least cost alone)"
SOURCE_NONE = "none"
BOUND_SOURCES = (SOURCE_SEARCH, SOURCE_STAGE_MIP, SOURCE_STAGE_LP, SOURCE_FLOOR, SOURCE_NONE)

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


def certify_levels(data: PlacementData, lv: list[dict], timeline: "Timeline | None" = None) -> list[dict]:
    """Give the level-2 record the largest certified bound: its own (the engine's search), the stage
    relaxation's (``relaxation_bound`` / ``relaxation_source`` in the record, ``p1.stage``) and ``cost_floor``,
    the last two only with level 1 proven;
    ``bound_source`` names it (always set, ``BOUND_SOURCES``) and the gap is recomputed.  A bound that is not
    finite becomes None.  The records are changed in place and returned; the final point goes on ``timeline``."""
    for r in lv:          # a back end's "no bound" (-inf, nan) is no bound, not a number to print or write
        if r.get("bound") is not None and not math.isfinite(r["bound"]):
            r["bound"], r["gap"] = None, None
    by = {r["level"]: r for r in lv}
    r1, r2 = by.get(1), by.get(2)
    if r2 is None:
        return lv
    own = r2.get("bound")
    cands = [(own, r2.get("bound_source") or SOURCE_SEARCH)] if own is not None else []
    if r1 is not None and r1["status"] == "optimal" and r1["objective"] is not None:
        relaxed = r2.get("relaxation_bound")
        if relaxed is not None and math.isfinite(relaxed):
            cands.append((relaxed, r2.get("relaxation_source") or SOURCE_STAGE_LP))
        floor = cost_floor(data, int(round(r1["objective"])))
        if floor is not None:
            cands.append((floor, SOURCE_FLOOR))
    obj = r2.get("objective")
    cands = _drop_conflicts(r2, cands, obj)
    if not cands:
        r2["bound_source"] = SOURCE_NONE
        return lv
    best, src = max(cands, key=lambda c: c[0])       # the first listed wins a tie (the engine's own)
    if obj is not None and best > obj:               # a bound above the incumbent proves it (within the tolerance)
        best = obj
    r2["bound"], r2["bound_source"] = best, src
    r2["gap"] = relative_gap(obj, best)
    if timeline is not None:
        timeline.add(best, obj, src)
    return lv


#: a bound may exceed a feasible placement's cost by this much (relative; numerical tolerance) and still prove it;
#: beyond it the bound is wrong (a cut or relaxation stronger than the problem): it is dropped, never capped
CONFLICT_TOL = 1e-6


def _drop_conflicts(r2: dict, cands: list, obj) -> list:
    """The bounds of ``cands`` that a feasible placement of cost ``obj`` does not refute.  A bound above it
    (beyond ``CONFLICT_TOL``) cannot be valid: it is logged, listed in ``r2["bound_conflicts"]`` and dropped, and
    a level the engine called optimal on that bound alone is demoted to feasible (``certify_levels`` then
    recomputes its gap from the bounds that stand)."""
    if obj is None:
        return cands
    slack = CONFLICT_TOL * max(abs(obj), 1e-3)
    bad = [(b, s) for b, s in cands if b > obj + slack]
    if not bad:
        return cands
    for b, s in bad:
        log.error("P1 level 2: the bound %.9g (%s) lies above a feasible placement of cost %.9g: the model is "
                  "stronger than the problem (a wrong cut?); the bound is dropped", b, s, obj)
    r2["bound_conflicts"] = [{"bound": b, "bound_source": s, "incumbent": obj} for b, s in bad]
    if r2.get("status") == "optimal":
        r2["status"] = "feasible"
        note = "the engine's optimum was refuted by a cheaper feasible placement (its bound is dropped)"
        r2["message"] = f"{r2['message']}; {note}" if r2.get("message") else note
    return [c for c in cands if c not in bad]


@dataclass
class TimePoint:
    """One point of a solve's time line: seconds since the command started (``Timeline.t_start``), the best
    certified bound and the best incumbent known then (None: none yet), and where the bound came from
    (``BOUND_SOURCES``)."""
    t_s: float
    bound: float | None
    incumbent: float | None
    bound_source: str

    def as_dict(self) -> dict:
        return {"t_s": round(self.t_s, 3), "bound": self.bound, "incumbent": self.incumbent,
                "bound_source": self.bound_source}


@dataclass
class Timeline:
    """The best certified bound and incumbent of one objective as a solve moves: ``add`` keeps the best of each
    (a bound only rises, an incumbent only falls) and appends a point when either moved.  Safe to call from a
    solver's callback thread.

    ``t_s`` counts from ``t_start``: by default where the command's clock starts (``clock.command_start``: the
    process start for ``bace-opt ...``, imports included, so a point's ``t_s`` reads against the command's
    ``--time-limit`` and its top-level ``wall_s``; in a Python program the process start, or the moment it last
    called ``bace_opt.clock.start_command()``), the same origin for every stage of one command (the P1 solve,
    ``gap``'s own-set solves, the trace bracket)."""
    t_start: float = field(default_factory=clock.command_start)
    points: list[TimePoint] = field(default_factory=list)
    bound: float | None = None
    incumbent: float | None = None
    source: str = SOURCE_NONE
    #: the fixed vocabulary of ``bound_source`` (P1's by default; the trace bracket of ``gaps.online`` has its own)
    sources: tuple = BOUND_SOURCES
    #: told each new point as it arrives (progress lines: ``p1_progress``); None: nothing told
    on_point: Callable[[TimePoint], None] | None = None

    def __post_init__(self):
        self._lock = threading.Lock()

    def add(self, bound: float | None, incumbent: float | None, source: str | None = None) -> None:
        """A bound (from ``source``, one of ``sources``) and / or an incumbent known now."""
        if bound is not None and source not in self.sources:
            raise ValueError(f"bound source {source!r} is not one of {self.sources}")
        with self._lock:
            moved = False
            if bound is not None and math.isfinite(bound) and (self.bound is None or bound > self.bound):
                self.bound, self.source, moved = float(bound), source, True
            if incumbent is not None and math.isfinite(incumbent) and \
                    (self.incumbent is None or incumbent < self.incumbent):
                self.incumbent, moved = float(incumbent), True
            point = None
            if moved or not self.points:
                point = TimePoint(time.perf_counter() - self.t_start, self.bound, self.incumbent, self.source)
                self.points.append(point)
        if point is not None and self.on_point is not None:
            self.on_point(point)

    def as_list(self) -> list[dict]:
        return [p.as_dict() for p in self.points]


def p1_progress(label: str = "P1") -> Callable[[TimePoint], None]:
    """A ``Timeline.on_point`` that tells each point as a progress line (``bace_opt.progress``, logger ``p1``:
    ``-v`` or a terminal, stderr): the level-2 bound, its source, the incumbent and their gap, at most one line a
    second; its ``flush()`` tells the last point held back."""
    from ... import progress
    mv = progress.Moving(progress.logger("p1"), label)

    def tell(p: TimePoint) -> None:
        gap = relative_gap(p.incumbent, p.bound) if p.incumbent is not None and p.bound is not None else None
        mv.tell(f"level 2 bound {progress.value(p.bound, 'USD')} ({p.bound_source}), incumbent "
                f"{progress.value(p.incumbent, 'USD')}" + ("" if gap is None else f", gap {100 * gap:.3g} %"))
    tell.flush = mv.flush
    return tell
