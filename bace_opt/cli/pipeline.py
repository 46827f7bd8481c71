"""``bace-opt pipeline INSTANCE SCHEDULE --job NAME --kind gpipe|1f1b|greedy|optimal [--gantt FILE.png]
[--json] [--time-limit S]``: the iteration time of the placement SCHEDULE gives one job, from an explicit
micro-batch schedule (bace_opt.pipeline), beside the analytic T_iter of the system model."""
from __future__ import annotations

import json

from .. import clock
from ..errors import InputError
from ..files import check_output
from ..options import Opt, check_solve_options
from ._args import finite_float, int_arg
from ..instance import load_instance
from ..pipeline import KINDS, PipelineOptions, check_ops, pipeline_iteration_s
from ..schedule import load_schedule
from .._format import short


def add_parser(sub):
    p = sub.add_parser("pipeline", help="iteration time of one job's placement under a pipeline schedule",
                       description="Schedule the micro-batches of one job's placement (taken from SCHEDULE) "
                                   "with GPipe, 1F1B, CrossPipe's latency-aware greedy or the CP-SAT optimum, "
                                   "and print its iteration time beside the analytic model's.")
    p.add_argument("instance", help="instance JSON file (schema bace-opt/instance/v1)")
    p.add_argument("schedule", help="schedule JSON file giving the job's placement (schema bace-opt/schedule/v1)")
    p.add_argument("--job", required=True, metavar="NAME", help="the job (must have status 'done' in SCHEDULE)")
    p.add_argument("--kind", default="1f1b", choices=KINDS, help="pipeline schedule (default 1f1b)")
    p.add_argument("--split-backward", action="store_true",
                   help="split the backward block into input-gradient (D) and weight-gradient (W) halves")
    p.add_argument("--forward-fraction", type=finite_float, default=1.0 / 3.0, metavar="PHI",
                   help="T_F = PHI * stage time, T_B = (1 - PHI) * stage time (default 1/3)")
    p.add_argument("--memory-limit", type=int_arg, default=None, metavar="N",
                   help="in-flight micro-batches per stage (default: 1F1B's, S - k + 1 on stage k)")
    p.add_argument("--time-limit", type=finite_float, default=60.0, metavar="S",
                   help="wall-clock limit of the whole command, s (default 60; the CP-SAT search of --kind optimal gets "
                        "what is left of it)")
    p.add_argument("--threads", type=int_arg, default=1, help="CP-SAT workers for --kind optimal (default 1)")
    p.add_argument("--gantt", metavar="FILE.png", help="draw the schedule as a Gantt chart (.png, .pdf or .svg)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


GANTT_SUFFIXES = (".png", ".pdf", ".svg")
#: the pipeline's own options (time limit and threads are the solve's: ``bace_opt.options.SOLVE_OPTIONS``)
FORWARD_FRACTION = Opt("float", gt=0, lt=1)
MEMORY_LIMIT = Opt("int", ge=1, le=10**6, none=True)


def run(args) -> int:
    if args.gantt:
        check_output(args.gantt, option="--gantt", suffixes=GANTT_SUFFIXES, inputs=(args.instance, args.schedule))
    check_solve_options({"time_limit": args.time_limit, "threads": args.threads},
                        names={"time_limit": "--time-limit", "threads": "--threads"})
    for opt, name in ((FORWARD_FRACTION, "--forward-fraction"), (MEMORY_LIMIT, "--memory-limit")):
        opt.check(getattr(args, name[2:].replace("-", "_")), name)
    inst = load_instance(args.instance)
    sched = load_schedule(args.schedule)
    try:
        entry = sched.job(args.job)
    except KeyError:
        names = ", ".join(j.name for j in sched.jobs[:10]) + (" ..." if len(sched.jobs) > 10 else "")
        raise InputError(f"job {args.job!r} is not in schedule {args.schedule!r} (jobs: {names})") from None
    if args.job not in inst.job_index:
        raise InputError(f"job {args.job!r} is not in instance {args.instance!r}")
    if entry.status != "done":
        raise InputError(f"job {args.job!r} has status {entry.status!r} in {args.schedule!r}: it has no placement "
                         f"to schedule (needs 'done')")
    # the placement must pass the evaluator's own rule-1 checks (regions, stages, hops, routes, reservations)
    from ..evaluate import check_plan
    bad = check_plan(inst, entry.plan)
    if bad:
        raise InputError([f"{args.schedule}: {v.message} (rule {v.rule})" for v in bad])
    opts = PipelineOptions(forward_fraction=args.forward_fraction, split_backward=args.split_backward,
                           memory_limit=args.memory_limit, time_limit_s=args.time_limit, threads=args.threads)
    res = pipeline_iteration_s(inst, args.job, entry.blocks, entry.hops, kind=args.kind, options=opts)
    bad = check_ops(res.model, res.ops, res.memory_limit)
    if bad:  # a bug, not bad input: say so loudly
        raise RuntimeError(f"pipeline schedule breaks the model: {bad[:3]}")
    if args.gantt:
        from ..pipeline.gantt import draw_gantt
        draw_gantt(res.model, res.ops, args.gantt,
                   title=f"{args.job}: {args.kind}, iteration {res.iteration_s:.6g} s "
                         f"(analytic {res.analytic_iteration_s:.6g} s)")
    if args.json:
        d = {"job": args.job}
        d.update(res.to_dict())
        d["wall_s"] = clock.wall_s()     # the command's wall clock from its start (bace_opt.clock)
        print(json.dumps(d, indent=1))
    else:
        m = res.model
        print(f"job {args.job}: {m.stages} stages x {m.microbatches} micro-batches, "
              f"{len(m.boundaries)} cross-region hop(s), kind {args.kind}")
        print(f"iteration_s: {short(res.iteration_s, 's', 6)}")
        print(f"analytic_iteration_s: {short(res.analytic_iteration_s, 's', 6)}")
        print(f"ratio: {res.iteration_s / res.analytic_iteration_s:.4f}")
        print(f"memory_limit: {list(res.memory_limit)}  peak_inflight: {list(res.peak_inflight)}")
        if args.kind == "optimal":
            gap = "-" if res.gap is None else f"{res.gap:.3g}"
            print(f"status: {res.status}  objective_s: {short(res.objective_s, 's', 6)}  "
                  f"bound_s: {short(res.bound_s, 's', 6)}  gap: {gap}  "
                  f"resolution_s: {res.resolution_s:g}  exact_grid: {res.exact_grid}  source: {res.source}")
        if args.gantt:
            print(f"gantt: {args.gantt}")
    return 0
