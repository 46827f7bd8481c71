"""The pipeline-schedule layer (CrossPipe, USENIX ATC'25): the iteration time of one job's placement from an
explicit micro-batch schedule, richer than the analytic T_iter of the system model.

    from bace_opt.pipeline import pipeline_iteration_s
    res = pipeline_iteration_s(inst, "llama-70b-1", [("eu-west", 2), ("us-east", 2)],
                               [(("eu-west", "us-east"), 5.0)], kind="greedy")
    res.iteration_s, res.analytic_iteration_s, res.ops

Kinds: ``gpipe`` and ``1f1b`` (fixed per-stage orders, simulated exactly), ``greedy`` (CrossPipe's
latency-aware greedy) and ``optimal`` (CP-SAT, with status, bound and gap).  The model, the schedules and the
CP-SAT formulation are described in model.py, schedules.py, optimal.py and models/pipeline.md.

With zero latency and zero transfer time and the default unified backward block, GPipe and 1F1B give exactly
the analytic (m + S - 1) * (T_F + T_B) for identical stages.  With ``split_backward`` the gradient leaves a
stage after D instead of after D + W, and both are shorter by (S - 1) * T_W.

The function is pure: equal inputs give equal outputs, and results are cached on the (hashable) block model,
so repeated calls (the evaluator, the simulator) are cheap.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..instance import Instance, Job
from .model import (Boundary, PipelineModel, PipelineOptions, analytic_iteration_s, build_model,
                    default_memory_limit, normalize_placement)
from .schedules import (Op, PipelineDeadlock, check_ops, gpipe, greedy, makespan, onefoneb, peak_inflight,
                        simulate_orders)

KINDS = ("gpipe", "1f1b", "greedy", "optimal")


@dataclass(frozen=True)
class PipelineResult:
    """The schedule of one placement and its iteration time (s).

    ``memory_limit`` is the limit the schedule respects (GPipe: m, it needs every micro-batch in flight);
    ``peak_inflight`` what it uses.  For ``optimal``: ``status`` (optimal, feasible, time_limit, ...),
    ``objective_s`` / ``bound_s`` / ``gap`` of the CP-SAT grid model, ``resolution_s``, ``exact_grid`` and
    ``source`` (cp-sat, or the heuristic kept when CP-SAT found nothing better); None for the other kinds.
    """
    kind: str
    iteration_s: float
    analytic_iteration_s: float | None
    ops: tuple[Op, ...]
    model: PipelineModel
    memory_limit: tuple[int, ...]
    peak_inflight: tuple[int, ...]
    status: str | None = None
    objective_s: float | None = None
    bound_s: float | None = None
    gap: float | None = None
    resolution_s: float | None = None
    exact_grid: bool | None = None
    source: str | None = None
    wall_s: float | None = None

    def to_dict(self, ops: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "iteration_s": self.iteration_s,
                             "analytic_iteration_s": self.analytic_iteration_s,
                             "stages": self.model.stages, "microbatches": self.model.microbatches,
                             "split_backward": self.model.split,
                             "memory_limit": list(self.memory_limit), "peak_inflight": list(self.peak_inflight)}
        if self.kind == "optimal":
            d.update(status=self.status, objective_s=self.objective_s, bound_s=self.bound_s, gap=self.gap,
                     resolution_s=self.resolution_s, exact_grid=self.exact_grid, source=self.source,
                     wall_s=self.wall_s)
        if ops:
            d["ops"] = [{"kind": o.kind, "stage": o.stage, "mb": o.mb, "start_s": o.start_s, "end_s": o.end_s,
                         "arrive_s": o.arrive_s} for o in self.ops]
        return d


def as_options(options) -> PipelineOptions:
    """PipelineOptions from None, a PipelineOptions or a mapping of its fields (unknown keys: InputError)."""
    if options is None:
        return PipelineOptions()
    if isinstance(options, PipelineOptions):
        return options
    if isinstance(options, dict):
        known = set(PipelineOptions.__dataclass_fields__)
        bad = sorted(set(options) - known)
        if bad:
            raise InputError(f"pipeline options: unknown option(s) {', '.join(bad)} (known: {', '.join(sorted(known))})")
        return PipelineOptions(**options)
    raise InputError(f"pipeline options must be a PipelineOptions or a dict, got {type(options).__name__}")


def schedule_model(model: PipelineModel, kind: str = "1f1b", options: PipelineOptions | None = None,
                   analytic: float | None = None) -> PipelineResult:
    """Schedule a block model directly (no instance needed); cached on (model, kind, solver options)."""
    if kind not in KINDS:
        raise InputError(f"pipeline kind must be one of {', '.join(KINDS)}, got {kind!r}")
    opt = as_options(options)
    solver_key = (opt.time_limit_s, opt.threads, opt.seed, opt.resolution_s, opt.hint) if kind == "optimal" else None
    res = _schedule_cached(model, kind, solver_key)
    if analytic is not None:
        from dataclasses import replace
        res = replace(res, analytic_iteration_s=analytic)
    return res


@functools.lru_cache(maxsize=128)
def _schedule_cached(model: PipelineModel, kind: str, solver_key) -> PipelineResult:
    extra: dict[str, Any] = {}
    limit = model.memory_limit
    if kind == "gpipe":
        ops = gpipe(model)
        limit = (model.microbatches,) * model.stages
    elif kind == "1f1b":
        ops = onefoneb(model)
    elif kind == "greedy":
        ops = greedy(model)
    else:
        from .optimal import solve_optimal
        tl, threads, seed, resol, hint = solver_key
        r = solve_optimal(model, time_limit_s=tl, threads=threads, seed=seed, resolution_s=resol, hint=hint)
        ops = list(r.ops)
        extra = dict(status=r.status, objective_s=r.objective_s, bound_s=r.bound_s, gap=r.gap,
                     resolution_s=r.resolution_s, exact_grid=r.exact_grid, source=r.source, wall_s=r.wall_s)
    return PipelineResult(kind=kind, iteration_s=makespan(ops), analytic_iteration_s=None, ops=tuple(ops),
                          model=model, memory_limit=tuple(limit), peak_inflight=tuple(peak_inflight(model, ops)),
                          **extra)


def pipeline_iteration_s(inst: Instance, job: Job | str, blocks, hops, kind: str = "1f1b",
                         options: PipelineOptions | None = None) -> PipelineResult:
    """Iteration time of ``job`` placed as ``blocks`` = [(region, stages)] with ``hops`` =
    [(route, reserved_gbps)] (bace_opt.schedule.Block / Hop accepted), under schedule ``kind``.

    ``result.iteration_s`` replaces the analytic T_iter (``result.analytic_iteration_s``, formulas.iteration_s)
    when the pipeline layer is asked for.  Raises InputError on a bad job, placement, kind or option.
    """
    if kind not in KINDS:
        raise InputError(f"pipeline kind must be one of {', '.join(KINDS)}, got {kind!r}")
    options = as_options(options)
    if isinstance(job, str):
        if job not in inst.job_index:
            raise InputError(f"job {job!r} is not in instance {inst.name!r}")
        job = inst.job(job)
    model = build_model(inst, job, blocks, hops, options)
    return schedule_model(model, kind, options, analytic=analytic_iteration_s(inst, job, blocks, hops))


__all__ = ["KINDS", "Boundary", "as_options", "Op", "PipelineDeadlock", "PipelineModel", "PipelineOptions", "PipelineResult",
           "analytic_iteration_s", "build_model", "check_ops", "default_memory_limit", "makespan",
           "normalize_placement", "pipeline_iteration_s", "schedule_model", "simulate_orders"]
