"""Schedules: the output of every method (``bace-opt/schedule/v1``).

A method decides, for each job, a status, a start time, a placement (blocks) and the hops' routes and
reservations: a ``JobPlan``.  It never computes its own figures: ``bace_opt.evaluate.make_schedule`` prices
the plans with the one evaluator and returns a ``Schedule`` whose per-job figures and ``metrics`` come
from that code.  ``Schedule.save`` / ``load_schedule`` read and write JSON; ``to_frame`` gives pandas;
``plot`` draws it through the plotting back end named by ``PLOT_BACKEND``.
"""
from __future__ import annotations

import importlib
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import _check as C
from .errors import InputError

SCHEMA = "bace-opt/schedule/v1"
#: ``done``: placed and run; ``blocked``: rejected on arrival (blocking mode); ``not_started``: waiting at a P1
#: decision epoch and not started then (not a rejection); ``unscheduled``: never placed (arrived after P1's t0,
#: or no placement found by the end of a simulation).
JOB_STATUSES = ("done", "blocked", "not_started", "unscheduled")
#: Methods whose schedules are one P1 decision epoch (exact P1, a heuristic's P1 decision in the benchmarks).
P1_METHOD_PREFIXES = ("exact-placement", "p1-heur:")
SOLVER_STATUSES = ("optimal", "feasible", "infeasible", "time_limit", "error")
#: |time| of a schedule (s) and |figure| above these are refused on loading (docs/decisions.md, "Strict input")
MAX_SCHEDULE_TIME_S = 1e12
MAX_FIGURE = 1e30
#: The plotting back end of ``Schedule.plot``: the name of a module with ``plot_schedule(inst, sched, kind=...,
#: at=...)``, imported when a picture is asked for, the way pandas resolves ``DataFrame.plot`` through
#: ``pandas.options.plotting.backend``.  The drawing code (``bace_opt.plot``) needs matplotlib and the builders'
#: region coordinates, so it sits on top of the package beside the command line; the schedule model, far below
#: it, names it here instead of importing it, and ``Schedule.plot`` (public API) keeps working.  Set it to
#: another module's name to draw with that one.
PLOT_BACKEND = "bace_opt.plot"


@dataclass(frozen=True)
class Block:
    region: str
    stages: int


@dataclass(frozen=True)
class Hop:
    route: tuple[str, ...]
    reserved_gbps: float

    def __post_init__(self):
        object.__setattr__(self, "route", tuple(self.route))


@dataclass(frozen=True)
class JobPlan:
    """What a method decides for one job.  ``blocks``/``hops`` empty unless status is ``done``."""
    name: str
    status: str = "done"
    start_s: float | None = None
    blocks: tuple[Block, ...] = ()
    hops: tuple[Hop, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "blocks", tuple(b if isinstance(b, Block) else Block(*b) for b in self.blocks))
        object.__setattr__(self, "hops", tuple(h if isinstance(h, Hop) else Hop(*h) for h in self.hops))


@dataclass(frozen=True)
class JobEntry(JobPlan):
    """A job of a schedule: the plan plus the figures the evaluator computed for it."""
    finish_s: float | None = None
    iteration_s: float | None = None
    energy_kwh: float | None = None
    electricity_usd: float | None = None
    egress_usd: float | None = None

    @property
    def plan(self) -> JobPlan:
        return JobPlan(self.name, self.status, self.start_s, self.blocks, self.hops)


@dataclass(frozen=True)
class SolverInfo:
    """How an exact method ended.  ``status`` is why it stopped; ``objective`` is None when no solution."""
    name: str
    status: str
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    wall_s: float | None = None
    build_s: float | None = None
    solve_s: float | None = None
    nodes: int | None = None
    message: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if v is not None and k != "extra"}
        if self.extra:
            d["extra"] = dict(self.extra)
        return d


@dataclass(frozen=True)
class Schedule:
    instance: str
    method: str
    jobs: tuple[JobEntry, ...]
    metrics: Mapping[str, Any]
    solver: SolverInfo | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "jobs", tuple(self.jobs))

    # ------------------------------------------------------------------ access
    def job(self, name: str) -> JobEntry:
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(name)

    @property
    def plans(self) -> list[JobPlan]:
        return [j.plan for j in self.jobs]

    def replace(self, **kw) -> "Schedule":
        return replace(self, **kw)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        d: dict[str, Any] = {"schema": SCHEMA, "instance": self.instance, "method": self.method}
        if self.solver is not None:
            d["solver"] = self.solver.to_dict()
        if self.meta:
            d["meta"] = dict(self.meta)
        jobs = []
        for j in self.jobs:
            e: dict[str, Any] = {"name": j.name, "status": j.status, "start_s": j.start_s, "finish_s": j.finish_s,
                                 "blocks": [{"region": b.region, "stages": b.stages} for b in j.blocks],
                                 "hops": [{"route": list(h.route), "reserved_gbps": h.reserved_gbps} for h in j.hops],
                                 "iteration_s": j.iteration_s, "energy_kwh": j.energy_kwh,
                                 "electricity_usd": j.electricity_usd, "egress_usd": j.egress_usd}
            jobs.append(e)
        d["jobs"] = jobs
        d["metrics"] = dict(self.metrics)
        return d

    def to_json(self) -> str:
        """The JSON text (bace-opt/schedule/v1).  A value JSON cannot hold (NaN, Infinity; a policy option such as
        ``max_price=inf``) is an ``InputError`` naming its field: the file would be refused when read back."""
        d = self.to_dict()
        try:
            return json.dumps(d, indent=1, allow_nan=False) + "\n"
        except ValueError:
            raise InputError(f"schedule {self.instance!r}: {_nonfinite(d)} cannot be written as JSON (JSON has no "
                             "NaN or Infinity); nothing written") from None

    def save(self, path) -> None:
        from .files import atomic_write
        atomic_write(path, self.to_json())

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> "Schedule":
        return _parse(data, source)

    # ------------------------------------------------------------------ pandas
    def to_frame(self):
        """One row per job: plan, figures, and the blocks/routes as readable strings.  Money in the three
        named figures: ``electricity_usd``, ``egress_usd`` and their total ``cost_usd``."""
        import pandas as pd
        rows = []
        for j in self.jobs:
            rows.append({
                "job": j.name, "status": j.status, "start_s": j.start_s, "finish_s": j.finish_s,
                "regions": " > ".join(f"{b.region}:{b.stages}" for b in j.blocks),
                "routes": " | ".join("-".join(h.route) for h in j.hops),
                "reserved_gbps": max((h.reserved_gbps for h in j.hops), default=None),
                "iteration_s": j.iteration_s, "energy_kwh": j.energy_kwh,
                "electricity_usd": j.electricity_usd, "egress_usd": j.egress_usd,
                "cost_usd": (None if j.electricity_usd is None or j.egress_usd is None
                             else j.electricity_usd + j.egress_usd),
            })
        return pd.DataFrame(rows).set_index("job") if rows else pd.DataFrame()

    # ------------------------------------------------------------------ pictures
    def plot(self, inst, kind: str = "both", at: float | None = None):
        """Draw this schedule on ``inst``: placement map and/or timeline (the back end ``PLOT_BACKEND``,
        ``bace_opt.plot`` by default; needs matplotlib).  ``kind``: 'both', 'placement' or 'timeline'; returns a
        matplotlib Figure, shown inline in Jupyter; ``bace_opt.plot.save_figure(fig, 'F.png')`` writes it."""
        return importlib.import_module(PLOT_BACKEND).plot_schedule(inst, self, kind=kind, at=at)


#: how iteration times are computed (``meta.iteration_model``): the analytic formula or a pipeline schedule kind
ITERATION_MODELS = ("analytic", "gpipe", "1f1b", "greedy")


def load_schedule(path) -> Schedule:
    data = C.read_json(path, "schedule file")
    C.refuse_other_schema(data, path, SCHEMA, "a schedule file")
    return _parse(data, str(path))


def _parse(data: Any, source: str | None) -> Schedule:
    p = C.Problems()
    top = C.obj(p, "", data, {"schema", "instance", "method", "jobs"}, {"solver", "metrics", "meta"})
    if top is None:
        p.raise_if_any(source)
    if "schema" in top and top["schema"] != SCHEMA:
        p.add("schema", f"must be {SCHEMA!r}, got {top['schema']!r}")
    inst = C.string(p, "instance", top.get("instance", C.MISSING), default="", nonempty=False)
    method = C.string(p, "method", top.get("method", C.MISSING), default="")
    solver = None
    if "solver" in top:
        s = C.obj(p, "solver", top["solver"], {"name", "status"},
                  {"objective", "bound", "gap", "wall_s", "build_s", "solve_s", "nodes", "message", "extra"})
        if s is not None:
            st = s.get("status")
            if st not in SOLVER_STATUSES:
                p.add("solver.status", f"must be one of {', '.join(SOLVER_STATUSES)}, got {st!r}")
            opt = {}
            for k in ("objective", "bound", "gap", "wall_s", "build_s", "solve_s"):
                if s.get(k) is not None:
                    opt[k] = C.num(p, f"solver.{k}", s[k])
            if s.get("nodes") is not None:
                opt["nodes"] = C.integer(p, "solver.nodes", s["nodes"], ge=0)
            C.finite_tree(p, "solver.extra", s.get("extra"))
            extra = s.get("extra") or {}
            if not isinstance(extra, dict):
                p.add("solver.extra", "must be an object")
                extra = {}
            msg = s.get("message")
            if msg is not None and not isinstance(msg, str):
                p.add("solver.message", "must be a string")
                msg = None
            solver = SolverInfo(name=str(s.get("name")), status=str(st), message=msg, extra=extra, **opt)
    metrics = top.get("metrics", {})
    if not isinstance(metrics, dict):
        p.add("metrics", "must be an object")
        metrics = {}
    C.finite_tree(p, "metrics", metrics)
    meta = top.get("meta", {})
    if not isinstance(meta, dict):
        p.add("meta", "must be an object")
        meta = {}
    C.finite_tree(p, "meta", meta)
    if meta.get("iteration_model", "analytic") not in ITERATION_MODELS:
        p.add("meta.iteration_model", f"must be one of {', '.join(ITERATION_MODELS)}, got {meta['iteration_model']!r}")
    # Files written before ``not_started`` existed labelled P1's not-started jobs ``blocked``: read them as
    # ``not_started`` (a P1 schedule rejects nothing).  Their reported metrics keep the old definition, which
    # the evaluator recognizes (no ``jobs_not_started`` reported).
    p1 = meta.get("problem") == "placement" or str(top.get("method", "")).startswith(P1_METHOD_PREFIXES)
    jobs = []
    raw = top.get("jobs", C.MISSING)
    if raw is not C.MISSING and C.array(p, "jobs", raw) is not None:
        for i, j in enumerate(raw):
            w = f"jobs[{i}]"
            if C.obj(p, w, j, {"name", "status"}, {"start_s", "finish_s", "blocks", "hops", "iteration_s",
                                                   "energy_kwh", "electricity_usd", "egress_usd"}) is None:
                continue
            name = C.string(p, w + ".name", j.get("name", C.MISSING), default=None)
            st = j.get("status")
            if st not in JOB_STATUSES:
                p.add(w + ".status", f"must be one of {', '.join(JOB_STATUSES)}, got {st!r}")
            figs = {}
            for k in ("start_s", "finish_s"):
                figs[k] = None if j.get(k) is None else C.num(p, f"{w}.{k}", j[k], ge=-MAX_SCHEDULE_TIME_S,
                                                              le=MAX_SCHEDULE_TIME_S)
            for k in ("iteration_s", "energy_kwh", "electricity_usd", "egress_usd"):
                figs[k] = None if j.get(k) is None else C.num(p, f"{w}.{k}", j[k], ge=-MAX_FIGURE, le=MAX_FIGURE)
            raw_blocks = j.get("blocks")
            if raw_blocks is None or C.array(p, w + ".blocks", raw_blocks) is None:
                raw_blocks = []
            raw_hops = j.get("hops")
            if raw_hops is None or C.array(p, w + ".hops", raw_hops) is None:
                raw_hops = []
            blocks = []
            for bi, b in enumerate(raw_blocks):
                bw = f"{w}.blocks[{bi}]"
                if C.obj(p, bw, b, {"region", "stages"}, set()) is None:
                    continue
                r = C.string(p, bw + ".region", b.get("region", C.MISSING), default=None)
                n = C.integer(p, bw + ".stages", b.get("stages", C.MISSING), ge=1, le=10**6, default=None)
                if r is not None and n is not None:
                    blocks.append(Block(r, n))
            hops = []
            for hi, h in enumerate(raw_hops):
                hw = f"{w}.hops[{hi}]"
                if C.obj(p, hw, h, {"route", "reserved_gbps"}, set()) is None:
                    continue
                route = h.get("route")
                if not isinstance(route, list) or not all(isinstance(x, str) for x in route):
                    p.add(hw + ".route", "must be an array of region names")
                    continue
                w_ = C.num(p, hw + ".reserved_gbps", h.get("reserved_gbps", C.MISSING), gt=0, ge=1e-6, le=1e9,
                           default=None)
                if w_ is not None:
                    hops.append(Hop(tuple(route), w_))
            if p1 and st == "blocked":
                st = "not_started"
            if name is not None and st in JOB_STATUSES:
                jobs.append(JobEntry(name=name, status=st, blocks=tuple(blocks), hops=tuple(hops), **figs))
    p.raise_if_any(source)
    return Schedule(instance=inst, method=method, jobs=tuple(jobs), metrics=metrics, solver=solver, meta=meta)


def plans_by_name(plans: Sequence[JobPlan]) -> dict[str, JobPlan]:
    return {p.name: p for p in plans}


def _nonfinite(v, path: str = "") -> str:
    """The field path of the first NaN or infinite number in ``v`` (JSON-like), e.g. 'meta.policy_options.x = inf'."""
    if isinstance(v, float) and not math.isfinite(v):
        return f"{path or 'value'} = {v}"
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, (list, tuple)) else ()
    for k, x in items:
        found = _nonfinite(x, f"{path}.{k}" if path and isinstance(k, str) else f"{path}[{k}]" if path else str(k))
        if found:
            return found
    return ""
