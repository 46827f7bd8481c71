"""``bace-opt evaluate INSTANCE SCHEDULE``: check feasibility, recompute and print metrics; exit 1 if infeasible."""
from __future__ import annotations

import json

from ..evaluate import evaluate
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
    p.add_argument("--iteration-model", choices=["analytic", "gpipe", "1f1b", "greedy"],
                   help="how iteration times are recomputed (default: what the schedule's meta states, else analytic)")
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_instance(args.instance)
    sched = load_schedule(args.schedule)
    rep = evaluate(inst, sched, iteration_model=args.iteration_model)
    if args.json:
        print(json.dumps({"feasible": rep.feasible,
                          "violations": [{"rule": v.rule, "message": v.message} for v in rep.violations],
                          "metrics": rep.metrics}, indent=1))
    else:
        print(rep.summary())
        if args.jobs:
            import pandas as pd
            with pd.option_context("display.width", 200, "display.max_columns", 30):
                print(rep.to_frame())
    return 0 if rep.feasible else 1
