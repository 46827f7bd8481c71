"""``bace-opt evaluate INSTANCE SCHEDULE``: check feasibility, recompute and print metrics; exit 1 if infeasible."""
from __future__ import annotations

import json

from .. import clock
from ..evaluate import evaluate, make_schedule
from ..files import check_output
from ..instance import load_instance
from ..schedule import load_schedule


def add_parser(sub):
    p = sub.add_parser("evaluate", help="check a schedule and recompute its metrics",
                       description="Check a schedule against an instance (GPU and link capacity over time, "
                                   "routes, reported figures) and print the recomputed metrics. Exit 0 if "
                                   "feasible, 1 if not, 2 on bad input.")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("schedule", help="schedule JSON file (schema bace-opt/schedule/v1)")
    p.add_argument("--json", action="store_true", help="print one JSON object (feasible, violations, metrics)")
    p.add_argument("--jobs", action="store_true", help="also print the per-job table")
    p.add_argument("-o", "--write", metavar="OUT", dest="write",
                   help="write the schedule priced by the evaluator (every figure and metric recomputed) here")
    p.add_argument("--iteration-model", choices=["analytic", "gpipe", "1f1b", "greedy"],
                   help="how iteration times are recomputed (default: what the schedule's meta states, else analytic)")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.write:
        check_output(args.write, option="--write", suffixes=(".json",), inputs=(args.instance, args.schedule))
    inst = load_instance(args.instance)
    sched = load_schedule(args.schedule)
    rep = evaluate(inst, sched, iteration_model=args.iteration_model)
    if args.write:
        # the same plans, priced by the evaluator; a plan breaking rule 1 stays unpriced (and rep says why)
        known = [p for p in sched.plans if p.name in inst.job_index]
        seen, plans = set(), []
        for p in known:
            if p.name not in seen:
                seen.add(p.name)
                plans.append(p)
        meta = dict(sched.meta)
        if args.iteration_model:
            meta.pop("iteration_model", None)
        priced = make_schedule(inst, plans, method=sched.method, solver=sched.solver, meta=meta, check=False,
                               iteration_model=args.iteration_model or str(sched.meta.get("iteration_model",
                                                                                          "analytic")))
        priced.save(args.write)
    if args.json:
        print(json.dumps({"feasible": rep.feasible,
                          "violations": [{"rule": v.rule, "message": v.message} for v in rep.violations],
                          "metrics": rep.metrics, "wall_s": clock.wall_s()}, indent=1))
    else:
        print(rep.summary())
        if args.jobs:
            import pandas as pd
            with pd.option_context("display.width", 200, "display.max_columns", 30):
                print(rep.to_frame())
        if args.write:
            print(f"priced schedule written to {args.write}")
    return 0 if rep.feasible else 1
