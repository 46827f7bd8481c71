"""``bace-opt adversary``: search instance parameters for a heuristic's largest proven P1 gap (resumable)."""
from __future__ import annotations

import json
import sys

from ..errors import InputError
from ._args import finite_float, int_arg


def add_parser(sub):
    p = sub.add_parser("adversary", help="search instances that maximise a heuristic's proven P1 gap (resumable)",
                       description="Search the family's instance parameters (region GPUs and prices, link bandwidth "
                                   "and latency, job sizes, stages, activations, arrivals; within the family's "
                                   "bounds) with Optuna for the largest proven P1 cost gap of POLICY. Each candidate's "
                                   "P1 is solved exactly with --time-limit; only proven gaps count. Rerun the same "
                                   "command to resume: finished candidates are re-told to the optimiser, never "
                                   "solved again. Writes DIR/trials.jsonl, trials.csv, report.md and the worst "
                                   "instances in DIR/worst/.")
    p.add_argument("--policy", default="bace-pipe", help="a registered policy (default bace-pipe), package.module:Class or path/to/file.py:Class")
    p.add_argument("--family", default="random", choices=("random", "paper", "realistic"))
    p.add_argument("--budget", type=int_arg, default=200, help="candidates to finish in DIR (default 200)")
    p.add_argument("--seed", type=int_arg, default=0, help="sampler seed (default 0)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory (created; resumed if it "
                                                                       "holds a search with the same settings)")
    p.add_argument("--regions", type=int_arg, default=4, help="random: regions (default 4)")
    p.add_argument("--jobs", type=int_arg, default=6, help="jobs (default 6)")
    p.add_argument("--max-gpus", type=int_arg, default=8, help="random: max GPUs per region (default 8)")
    p.add_argument("--max-stages", type=int_arg, default=4, help="random: max stages per job (default 4)")
    p.add_argument("--max-arrival", type=finite_float, default=0.0, help="random: arrivals searched in [0, this] s")
    p.add_argument("--time-limit", type=finite_float, default=20.0, help="per exact solve, s (default 20)")
    p.add_argument("--sampler", default="tpe", choices=("tpe", "random"))
    p.add_argument("--solver", default="highs", help="P1 back end (default highs)")
    p.add_argument("--policy-options", default="{}", metavar="JSON", help="options of the policy (JSON object)")
    p.add_argument("--workers", type=int_arg, default=1, help="candidates evaluated at once (local processes)")
    p.add_argument("--dask", metavar="ADDRESS", help="evaluate on a Dask scheduler ('local': a LocalCluster)")
    p.add_argument("--keep", type=int_arg, default=5, help="worst instances saved (default 5)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..adversary.search import AdversaryConfig, run_adversary
    from ..adversary.space import SpaceConfig
    try:
        popts = json.loads(args.policy_options)
    except json.JSONDecodeError as e:
        raise InputError(f"--policy-options: not valid JSON ({e})") from None
    if not isinstance(popts, dict):
        raise InputError("--policy-options: must be a JSON object")
    from ..policies.registry import check_policy_options
    popts = check_policy_options(args.policy, popts, where="--policy-options")
    from ..options import check_solve_options
    check_solve_options({"time_limit": args.time_limit}, names={"time_limit": "--time-limit"})
    if args.keep < 0:
        raise InputError(f"--keep: must be >= 0, got {args.keep}")
    n_regions = 6 if args.family == "paper" else args.regions
    n_jobs = 8 if args.family == "paper" and args.jobs == 6 else args.jobs
    cfg = AdversaryConfig(policy=args.policy, seed=args.seed, sampler=args.sampler, time_limit_s=args.time_limit,
                          solver=args.solver, policy_options=popts,
                          space=SpaceConfig(family=args.family, n_regions=n_regions, n_jobs=n_jobs,
                                            max_gpus_per_region=args.max_gpus, max_stages=args.max_stages,
                                            max_arrival_s=args.max_arrival))
    res = run_adversary(cfg, args.out, args.budget, workers=args.workers, dask_address=args.dask, keep=args.keep)
    print(res.report())
    if res.records and not res.judged():      # every candidate failed: no search happened
        first = res.first_error()
        print(f"bace-opt adversary: error: all {len(res.records)} candidates failed; the first (trial "
              f"{first['trial']}): {first.get('error')}", file=sys.stderr)
        return 1
    return 0
