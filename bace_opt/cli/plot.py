"""``bace-opt plot INSTANCE SCHEDULE -o F.png|svg [--kind placement|timeline|both] [--at S]``: draw a schedule.

The placement map (regions from coordinates or a topology layout, each job's chain and routes, GPUs used,
prices) and the timeline of GPUs held per region; see bace_opt.plot.  Needs matplotlib.
"""
from __future__ import annotations

import logging

from ..errors import InputError
from ._args import finite_float, int_arg
from ..instance import load_instance
from ..schedule import load_schedule

log = logging.getLogger("bace_opt.cli.plot")


def add_parser(sub):
    p = sub.add_parser("plot", help="draw a schedule: placement map and timeline (PNG, SVG or PDF)",
                       description="Draw SCHEDULE on INSTANCE: regions on a map (from coordinates, else a "
                                   "topology layout), each job's blocks and routes, GPUs used and prices per "
                                   "region; and a timeline of the GPUs each job holds per region.")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("schedule", help="schedule JSON file (schema bace-opt/schedule/v1)")
    p.add_argument("-o", "--output", required=True, metavar="F.png|F.svg", help="picture to write (by suffix)")
    p.add_argument("--kind", choices=("both", "placement", "timeline"), default="both",
                   help="placement map, timeline, or both (default)")
    p.add_argument("--at", type=finite_float, default=None, metavar="S",
                   help="map only the jobs running at time S (s), with GPUs used and prices then")
    p.add_argument("--dpi", type=int_arg, default=150, help="resolution of a PNG (default 150)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..files import check_output
    from ..plot import plot_schedule, save_figure
    check_output(args.output, suffixes=(".png", ".svg", ".pdf"), inputs=(args.instance, args.schedule))
    inst = load_instance(args.instance)
    sched = load_schedule(args.schedule)
    if sched.instance != inst.name:      # as evaluate and pipeline: a picture of the wrong pair would look right
        raise InputError(f"{args.schedule}: the schedule is for instance {sched.instance!r}, not "
                         f"{inst.name!r} ({args.instance})")
    from ..evaluate import check_plan
    # the evaluator's rules 0 and 1 (names, blocks, routes): a plan breaking them cannot be drawn; each named by
    # its field path in the file (capacity and timing faults are drawn: the picture shows them)
    probs = [f"jobs[{i}]: {v.message}" for i, e in enumerate(sched.jobs) for v in check_plan(inst, e.plan)]
    if probs:
        raise InputError(probs, f"{args.schedule} (against {args.instance})")
    if args.dpi < 10:
        raise InputError(f"--dpi must be >= 10, got {args.dpi}")
    fig = plot_schedule(inst, sched, kind=args.kind, at=args.at)
    save_figure(fig, args.output, dpi=args.dpi)
    print(f"wrote {args.output}")
    return 0
