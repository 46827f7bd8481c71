"""``bace-opt gap INSTANCE --policy P [--policy Q ...] [--online] [--json] [-o OUT]``: how far each policy is from
optimal (``bace_opt.gaps.gap``).

Prints, per policy, the jobs it starts at P1's decision epoch against the proven optimum, its cost gap with the
selection and placement parts, and the optimum with its status and bound; with ``--online``, its whole-run mean
JCT and cost against the certified P2 figures.  ``-o`` writes the same as ``--json`` prints, to a file.
"""
from __future__ import annotations

import json
import logging

from .. import clock
from ..errors import InputError
from ..files import atomic_write, check_output
from .._format import short
from ..instance import load_instance
from ._args import ENGINE_HELP, check_range, finite_float
from .simulate import parse_options

log = logging.getLogger("bace_opt.cli.gap")


def add_parser(sub):
    p = sub.add_parser("gap", help="how far a policy is from optimal (proven P1 gap; --online: P2 bracket)",
                       description="How far each policy is from optimal on INSTANCE, against proven figures "
                                   "only: the jobs it starts at P1's decision epoch, its cost gap to the proven "
                                   "optimum split into selection (which jobs) and placement (where they run); "
                                   "with --online, its whole-run mean JCT and cost against the certified P2 "
                                   "lower bounds (docs/policies.md for a policy of your own).")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--policy", action="append", default=None, metavar="P",
                   help="a registered policy (bace-opt policies lists them), package.module:Class, or "
                        "path/to/file.py:Class; repeatable (default bace-pipe)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option for every --policy, repeatable")
    p.add_argument("--time-limit", type=finite_float, default=60.0, metavar="S",
                   help="wall-clock limit of the whole command, s (default 60): from start to exit, the P1 optimum, "
                        "each policy's own-set solve and, with --online, the simulations and the P2 bracket")
    p.add_argument("--solver", default="highs", choices=("highs", "cpsat", "scip", "mathopt-highs"),
                   help="P1 back end (default highs)")
    p.add_argument("--engine", default="auto", choices=("auto", "walk", "cg"), help=ENGINE_HELP)
    p.add_argument("--online", action="store_true",
                   help="also simulate each policy over the whole run and place its mean JCT and cost against "
                        "the certified P2 lower bounds")
    p.add_argument("--online-time-limit", type=finite_float, default=None, metavar="S",
                   help="with --online, a cap on the online part (the policies' runs and the P2 figures, bracket "
                        "included) inside --time-limit, s (default: half of --time-limit; the online part also "
                        "gets whatever the P1 part leaves); above --time-limit it is refused; without --online it "
                        "is ignored, with a note")
    p.add_argument("--skip-p1", action="store_true",
                   help="with --online, skip the one-epoch P1 part (skipped anyway on a trace instance: one "
                        "decision epoch over a week of arrivals means nothing); the exit code then comes from the "
                        "online part")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    p.add_argument("-o", "--output", metavar="OUT", help="also write the JSON here")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..gaps import gap
    if args.skip_p1 and not args.online:
        raise InputError("--skip-p1 needs --online (without it there is nothing left to measure)")
    check_range("--time-limit", args.time_limit, gt=0)
    check_range("--online-time-limit", args.online_time_limit, gt=0)
    if args.output:
        check_output(args.output, suffixes=(".json",), inputs=(args.instance,))
    policies = args.policy or ["bace-pipe"]
    options = parse_options(args.option, policies, own={"policy": "--policy"})   # every policy takes them all
    inst = load_instance(args.instance)
    log.info("loaded %s: %d regions, %d jobs; gap of %s", inst.name, len(inst.regions), len(inst.jobs),
             ", ".join(policies))
    report = gap(inst, policies, time_limit=args.time_limit, solver=args.solver, online=args.online,
                 online_time_limit=args.online_time_limit, policy_options=options, engine=args.engine,
                 p1=False if args.skip_p1 else None)
    d = report.to_dict()
    d["calc_wall_s"] = d.pop("wall_s")   # the gap call's own time, without start-up and loading
    d["wall_s"] = clock.wall_s()         # the command's wall clock from its start (bace_opt.clock)
    d["time_limit_s"] = args.time_limit
    if args.output:
        atomic_write(args.output, json.dumps(d, indent=1) + "\n")
        log.info("wrote %s", args.output)
    if args.json:
        print(json.dumps(d, indent=1))
    else:
        print(report.summary())
        print(f"time: wall {short(clock.wall_s(), 's')} of the limit {short(args.time_limit, 's')}")
    if report.p1_skipped:       # the online part decides: each policy's bracket has a certified lower bound
        return 0 if report.online_certified else 1
    return 0 if report.optimum.proven or report.optimum.certified else 1
