"""``bace-opt simulate INSTANCE --policy NAME [--mode queue|blocking] [--seed N] -o OUT``.

Runs the online simulator (``bace_opt.sim``) with one policy, writes the priced schedule and prints the
metrics summary (the evaluator's metrics plus events and total head-of-line blocked time) and what users read
from a run (``bace_opt.evaluate.workload``: JCT, queueing delay and slowdown percentiles, by size class, cost,
GPU utilisation and cost per day, what became of a trace's cancelled jobs), over a steady-state window with
``--window-jobs A:B`` or ``--window-time T0:T1``; ``--figure F.png`` draws the JCT CDF, cost per day and
utilisation.
"""
from __future__ import annotations

import json
import logging
import sys

from .. import clock
from .._check import loads_strict
from ..errors import InputError
from ..files import check_output
from ._args import int_arg
from ..evaluate import format_metrics, format_workload, workload_report
from ..evaluate.workload import parse_window, select_window
from ..instance import load_instance
from ..policies import available, describe
from .._format import short, shown

log = logging.getLogger("bace_opt.cli.simulate")


def add_parser(sub):
    names = available()
    epilog = "policies:\n" + "\n".join(f"  {n:<24} {describe(n)}" for n in names)
    import argparse
    p = sub.add_parser("simulate", help="simulate an online policy (BACE-Pipe, baselines, ablations)",
                       description="Simulate jobs arriving over time, scheduled by one policy; write the "
                                   "schedule (checked and priced by the evaluator) and print its metrics.",
                       epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("instance", help="instance JSON file (schema bace-opt/instance/v1)")
    p.add_argument("--policy", default="bace-pipe", metavar="NAME",
                   help=f"one of: {', '.join(names)} (default bace-pipe); or a policy of your own: "
                        "package.module:Class or path/to/file.py:Class (docs/policies.md)")
    p.add_argument("--mode", default="queue", choices=["queue", "blocking"],
                   help="queue: jobs that cannot start wait; blocking: they are rejected on arrival")
    p.add_argument("--seed", type=int_arg, default=0, help="seed passed to the policy (default 0)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, repeatable (e.g. seeds=all, via=routes, hol=skip, time_limit_s=30)")
    p.add_argument("--iteration-model", default="analytic", choices=["analytic", "gpipe", "1f1b", "greedy"],
                   help="iteration time of every job: the analytic formula (default) or an explicit micro-batch "
                        "schedule of the pipeline layer")
    p.add_argument("--no-hol", action="store_true", help="do not measure head-of-line blocked time (faster)")
    p.add_argument("--window-jobs", metavar="A:B", default=None,
                   help="per-job figures over the jobs A..B-1 by arrival (0-based), a steady-state window as Gavel "
                        "and Blox measure (e.g. 4000:5000); utilisation and cost per day stay over the whole run")
    p.add_argument("--window-time", metavar="T0:T1", default=None,
                   help="per-job figures over the jobs arriving in [T0, T1) (seconds, or with h / d: 1d:6d)")
    p.add_argument("--figure", metavar="F.png", default=None,
                   help="draw the JCT CDF, cost per day and GPU utilisation (needs matplotlib)")
    p.add_argument("-o", "--output", metavar="OUT", help="write the schedule JSON here")
    p.add_argument("--jobs", action="store_true", help="also print the per-job table")
    p.add_argument("--json", action="store_true", help="print one JSON object (run, metrics; per job with --jobs)")
    p.set_defaults(func=run)


#: keys that are the command's own options, not the policy's: ``--option KEY=...`` names the option to use
OWN_OPTIONS = {"seed": "--seed", "mode": "--mode", "iteration_model": "--iteration-model", "track_hol": "--no-hol",
               "policy": "--policy"}


def parse_options(items, policies=(), own=OWN_OPTIONS) -> dict:
    """``--option KEY=VALUE`` items as a dict (values read as JSON, else kept as text), checked against the
    options each of ``policies`` declares (``bace_opt.policies.check_policy_options``: the same check the
    Python API runs).  ``own``: keys that belong to the command (refused here, naming the option to use)."""
    out = {}
    for it in items:
        if "=" not in it:
            raise InputError(f"--option {it!r}: expected KEY=VALUE")
        k, v = it.split("=", 1)
        k = k.strip().replace("-", "_")
        if not k:
            raise InputError(f"--option {it!r}: empty key")
        if k in own:
            raise InputError(f"--option {k}: not a policy option; use {own[k]}")
        if not v.strip():
            raise InputError(f"--option {k}: empty value (KEY=VALUE)")
        try:
            out[k] = loads_strict(v, f"--option {k}")
        except InputError:
            if v.strip()[:1] in "[{" or v.strip().lower() in ("nan", "infinity", "-infinity"):
                raise
            out[k] = v
    from ..policies.registry import check_policy_options
    for spec in policies:
        check_policy_options(spec, out, where="--option")
    return out


def run(args) -> int:
    from ..sim import simulate
    if args.output:
        check_output(args.output, suffixes=(".json",), inputs=(args.instance,))
    from ..policies import resolve
    resolve(args.policy)        # a registered name, package.module:Class or file.py:Class, checked before any work
    options = parse_options(args.option, [args.policy])
    win_jobs, win_s = parse_window(args.window_jobs, "jobs"), parse_window(args.window_time, "time")
    if win_jobs is not None and win_s is not None:
        raise InputError("--window-jobs and --window-time: give one window")
    if args.figure:
        check_output(args.figure, suffixes=(".png", ".svg", ".pdf"), inputs=(args.instance,))
    inst = load_instance(args.instance)
    select_window(inst, win_jobs, win_s)        # a window the instance cannot hold is refused before any work
    log.info("loaded %s: %d regions, %d jobs; simulating %s (%s mode)", inst.name, len(inst.regions),
             len(inst.jobs), args.policy, args.mode)
    # progress on stderr where a person watches it (a terminal, not -q), or with -v as log lines
    show = args.verbosity >= 1 or (args.verbosity >= 0 and sys.stderr.isatty())
    sched = simulate(inst, policy=args.policy, mode=args.mode, seed=args.seed, track_hol=not args.no_hol,
                     iteration_model=args.iteration_model, progress=show or None, **options)
    if args.output:
        sched.save(args.output)
        log.info("wrote %s", args.output)
    # what users read, computed by the evaluator from the schedule (bace_opt.evaluate.workload)
    wrep = workload_report(inst, sched, window_jobs=win_jobs, window_s=win_s)
    if args.figure:
        from ..plot import plot_workload, save_figure
        save_figure(plot_workload({sched.method: wrep}), args.figure)
        log.info("wrote %s", args.figure)
    if args.json:
        d = {"instance": inst.name, "policy": sched.method, "mode": args.mode, "seed": args.seed,
             "iteration_model": args.iteration_model, "events": sched.meta["events"],
             "decisions": sched.meta["decisions"], "metrics": dict(sched.metrics),
             "total_hol_blocked_s": None if args.no_hol else sched.meta["total_hol_blocked_s"],
             "output": args.output, "report": wrep}
        if args.jobs:
            d["jobs"] = [dict(j, **{k: sched.meta["jobs"][j["name"]][k] for k in ("wait_s", "hol_blocked_s")})
                         for j in sched.to_dict()["jobs"]]
        d["wall_s"] = clock.wall_s()     # the command's wall clock from its start (bace_opt.clock)
        print(json.dumps(d, indent=1))
        return 0
    print(f"{shown(inst.name)}: policy {shown(sched.method)}, {args.mode} mode, {sched.meta['events']} events, "
          f"{sched.meta['decisions']} decisions")
    for line in format_metrics(sched.metrics):
        print(line)
    if not args.no_hol:
        print(f"total_hol_blocked_s: {short(sched.meta['total_hol_blocked_s'], 's')}")
    for line in format_workload(wrep):
        print(line)
    if args.jobs:
        import pandas as pd
        df = sched.to_frame()
        for col in ("wait_s", "hol_blocked_s"):
            df[col] = [sched.meta["jobs"][n][col] for n in df.index]
        with pd.option_context("display.width", 200, "display.max_columns", 30, "display.precision", 4):
            print(df)
    if args.output:
        print(f"schedule written to {args.output}")
    if args.figure:
        print(f"figure written to {args.figure}")
    return 0
