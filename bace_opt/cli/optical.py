"""``bace-opt optical simulate|cba|exact``: the optical layer and CBA (bace_opt.optical, models/optical.md).

    bace-opt optical simulate --topology nsfnet --slots 100 --k 5 --load 100 200 300 --holding 1 \\
                              --requests 100000 --sizes uniform:1:8 --seed 1 [--seeds 5] [--plot F.png] [-o F.csv]
        dynamic RSA blocking experiment; one row per (policy, load): blocking and its 95 % confidence interval
    bace-opt optical cba --workload llama3-8b --schedule gpipe --microbatches 64 --iterations 20 --seed 1
        CBA against its baselines (KSP-FF, SD-FF, each with and without CBA) on NSFNET
    bace-opt optical exact --workload llama3-8b ... --solver highs|cpsat
        per iteration, the exact slot assignment of the batch and each scheme's gap against its proven bound

``--topology`` is ``nsfnet`` (the shipped table of topologies/nsfnet/nsfnet_chen.txt; docs/data.md), a link-list
.txt, a Topology Zoo .gml, a JSON optical section, or an instance JSON file with an ``optical`` section.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError


def _topology_args(p, slots_default=80, k_default=4):
    p.add_argument("--topology", default="nsfnet", metavar="PATH|nsfnet",
                   help="nsfnet, a .txt link list, a .gml, a JSON optical section or an instance with one")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="a raw data folder (docs/data.md); default: the tables shipped with the package")
    p.add_argument("--slots", type=int, default=None, help=f"frequency slots per link (default {slots_default})")
    p.add_argument("--guard", type=int, default=None, help="guard slots per lightpath (default 1)")
    p.add_argument("--k", type=int, default=None, help=f"candidate paths per pair (default {k_default})")
    p.add_argument("--reach-table", action="store_true",
                   help="choose the modulation by path length (BPSK..16QAM) instead of a fixed 64QAM at 75 Gbit/s")


def add_parser(sub):
    p = sub.add_parser("optical", help="optical layer: RSA blocking experiment, CBA, exact slot assignment",
                       description=__doc__.split("\n\n")[0])
    osub = p.add_subparsers(dest="optical_command", metavar="SUBCOMMAND")

    s = osub.add_parser("simulate", help="dynamic RSA simulation: blocking probability versus load")
    _topology_args(s, 80, 4)
    s.add_argument("--load", type=float, nargs="+", required=True, metavar="ERLANG", help="offered load(s)")
    s.add_argument("--holding", type=float, default=1.0, metavar="S", help="mean holding time (default 1 s)")
    s.add_argument("--requests", type=int, default=100_000, help="measured requests per seed (default 100000)")
    s.add_argument("--warmup", type=int, default=None, help="requests discarded first (default requests / 10)")
    s.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    s.add_argument("--seeds", type=int, default=5, help="independent runs per point for the interval (default 5)")
    s.add_argument("--policy", nargs="+", default=["ksp-ff"], metavar="NAME",
                   help="sp-ff sd-ff ksp-ff ksp-lf ksp-bf ksp-mu (default ksp-ff)")
    s.add_argument("--sizes", default="fixed:1", help="fixed:N | uniform:A:B (slots) | gbps:A:B (default fixed:1)")
    s.add_argument("--metric", default="length", choices=["length", "hops"], help="k shortest by length or hops")
    s.add_argument("--order", default="length", choices=["length", "hops", "hops-per-se"],
                   help="candidate order (default length)")
    s.add_argument("--nodes", nargs="+", default=None, metavar="NODE",
                   help="datacentres: requests run between ordered pairs of these (default every node)")
    s.add_argument("--directed", action="store_true", help="each direction of a link is a separate fibre")
    s.add_argument("--truncate", type=float, default=None, metavar="X", help="cut holding times at X x the mean")
    s.add_argument("--plot", metavar="FILE.png", help="draw blocking versus load")
    s.add_argument("-o", "--output", metavar="FILE.csv", help="write the table as CSV")
    s.add_argument("--json", action="store_true", help="print JSON rows")
    s.set_defaults(func=run_simulate)

    for name, helptext in (("cba", "CBA against KSP-FF and SD-FF (with and without CBA) on the pipeline layer"),
                           ("exact", "exact slot assignment per iteration and the gap of every scheme")):
        c = osub.add_parser(name, help=helptext)
        _topology_args(c, 80, 4)
        c.add_argument("--workload", default="llama3-8b", choices=["llama3-8b", "llama3-70b"])
        c.add_argument("--schedule", default="gpipe", choices=["gpipe", "1f1b"])
        c.add_argument("--microbatches", type=int, default=64)
        c.add_argument("--iterations", type=int, default=20)
        c.add_argument("--seed", type=int, default=1)
        c.add_argument("--initial-slots", type=int, default=1, help="data slots per PP request at start (default 1)")
        c.add_argument("--bg-count", type=int, default=60, help="background requests per cross-DC event (default 60)")
        c.add_argument("--json", action="store_true", help="print JSON")
        if name == "exact":
            c.add_argument("--solver", default="highs", choices=["highs", "cpsat"])
            c.add_argument("--time-limit", type=float, default=60.0, metavar="S", help="per level (default 60 s)")
        c.set_defaults(func=run_cba if name == "cba" else run_exact)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


# ---------------------------------------------------------------------- helpers

def load_network(args):
    from ..optical import REACH_TABLE, load_topology, nsfnet_path
    topo = args.topology
    if topo == "nsfnet":
        path = nsfnet_path(args.data)
        if not path.is_file():
            raise InputError(f"--topology nsfnet: {path} not found (give --data DIR or a topology path)")
    else:
        path = Path(topo)
    net = None
    if path.suffix.lower() == ".json" and path.is_file():
        from .. import _check as C
        data = C.read_json(path, "topology file")
        if isinstance(data, dict) and "schema" in data:
            from ..instance import load_instance
            inst = load_instance(path)
            net = getattr(inst, "optical", None)
            if net is None:
                raise InputError(f"{path}: the instance has no optical section")
    if net is None:
        net = load_topology(path)
    kw = {}
    for arg, fld, lo in (("slots", "slots_per_link", 1), ("guard", "guard_slots", 0), ("k", "k_paths", 1)):
        v = getattr(args, arg)
        if v is not None:
            if v < lo:
                raise InputError(f"--{arg} must be >= {lo}, got {v}")
            kw[fld] = v
    if getattr(args, "reach_table", False):
        kw["modulations"] = REACH_TABLE
    if kw:
        from ..optical import network_from_dict
        net = network_from_dict(net.replace(**kw).to_dict(), f"--topology {topo}").replace(name=net.name)
    return net


def write_atomic(path: str, text: str, inputs=()) -> None:
    """Write through the toolkit's one atomic writer (bace_opt.files); never over an input of the command."""
    from ..files import atomic_write, check_output
    check_output(path, option="output", inputs=inputs)
    atomic_write(path, text)


# ---------------------------------------------------------------------- simulate

def run_simulate(args) -> int:
    from ..optical.dynamic import DynamicOptions, RequestSizes, sweep, sweep_frame
    from ..optical.rsa import get_rsa_policy
    for flag, out in (("--plot", args.plot), ("-o", args.output)):
        if out and not Path(out).resolve().parent.is_dir():
            raise InputError(f"{flag} {out}: folder {Path(out).resolve().parent} does not exist")
    net = load_network(args)
    for pol in args.policy:
        get_rsa_policy(pol)
    if args.seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {args.seeds}")
    opt = DynamicOptions(load_erlang=args.load[0], holding_s=args.holding, requests=args.requests,
                         warmup=args.requests // 10 if args.warmup is None else args.warmup,
                         policy=args.policy[0], sizes=RequestSizes.parse(args.sizes), k=args.k,
                         metric=args.metric, order=args.order, directed=args.directed, truncate=args.truncate,
                         nodes=tuple(args.nodes) if args.nodes else None)
    for load in args.load:
        DynamicOptions(load_erlang=load)     # validates every load
    seeds = range(args.seed, args.seed + args.seeds)
    ests = sweep(net, opt, args.load, seeds, args.policy)
    df = sweep_frame(ests)
    if args.output:
        write_atomic(args.output, df.to_csv(index=False), [args.topology])
    if args.plot:
        _plot_sweep(df, args.plot, f"{net.name or 'network'}: {net.slots_per_link} slots, k={args.k or net.k_paths}, "
                                   f"sizes {args.sizes}")
    if args.json:
        print(json.dumps([e.to_dict() for e in ests], indent=1))
        return 0
    print(f"topology {net.name}: {len(net.nodes)} nodes, {len(net.fibres)} links, {net.slots_per_link} slots, "
          f"guard {net.guard_slots}, k {args.k or net.k_paths}; sizes {args.sizes}; holding {args.holding:g} s; "
          f"{args.requests} requests per seed after {opt.warmup} warm-up; seeds {seeds.start}..{seeds.stop - 1}")
    print(f"{'policy':<8} {'load_erlang':>11} {'blocking':>10} {'ci95_low':>10} {'ci95_high':>10} {'wall_s':>8}")
    for e in ests:
        print(f"{e.policy:<8} {e.load_erlang:>11g} {e.mean:>10.5f} {e.low:>10.5f} {e.high:>10.5f} {e.wall_s:>8.2f}")
    return 0


def _plot_sweep(df, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ..optical.plot import plot_blocking
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_blocking(df, ax, title)
    fig.tight_layout()
    from ..files import atomic_savefig
    try:
        atomic_savefig(fig, path, dpi=120)
    finally:
        plt.close(fig)


# ---------------------------------------------------------------------- cba / exact

def _cba_config(args):
    from ..optical.cba import CbaConfig
    return CbaConfig(workload=args.workload, schedule=args.schedule, microbatches=args.microbatches,
                     iterations=args.iterations, seed=args.seed, initial_slots=args.initial_slots,
                     bg_count=args.bg_count)


def run_cba(args) -> int:
    from ..optical.cba import compare
    net = load_network(args)
    runs = compare(net, _cba_config(args))
    rows = [r.summary() for r in runs.values()]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    first = next(iter(runs.values()))
    print(f"{args.workload}, {args.schedule}, {args.microbatches} micro-batches, {args.iterations} iterations, "
          f"seed {args.seed}; stages -> nodes {list(first.mapping)}; {len(first.boundaries)} cross-DC boundaries")
    print(f"{'policy':<12} {'iteration_s':>12} {'bubble_ratio':>13} {'pp_blocking':>12} {'bg_blocking':>12} "
          f"{'mean_slots':>11}")
    for r in rows:
        print(f"{r['policy']:<12} {r['mean_iteration_s']:>12.4f} {r['mean_bubble_ratio']:>13.4f} "
              f"{r['pp_blocking']:>12.4f} {r['bg_blocking']:>12.4f} {r['mean_slots']:>11.2f}")
    for bl in ("ksp-ff", "sd-ff"):
        a, b = runs[bl].mean_iteration_s, runs[bl + "+cba"].mean_iteration_s
        print(f"CBA vs {bl}: iteration time {100 * (b - a) / a:+.2f} %")
    return 0


def run_exact(args) -> int:
    from ..bench.optical import exact_gaps
    from ..solvers.base import SolveOptions
    if not args.time_limit > 0:
        raise InputError(f"--time-limit must be > 0, got {args.time_limit}")
    net = load_network(args)
    rows = exact_gaps(net, _cba_config(args), args.solver, SolveOptions(time_limit_s=args.time_limit))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'policy':<12} {'iters':>5} {'proven':>6} {'mean_gap':>9} {'max_gap':>8} {'heur_w':>8} {'opt_w':>8} "
          f"{'heur_maxslot':>12} {'opt_maxslot':>11} {'solve_s':>8}")
    for r in rows:
        print(f"{r['policy']:<12} {r['iterations']:>5} {r['proven']:>6} {r['mean_gap']:>9.4f} {r['max_gap']:>8.4f} "
              f"{r['heuristic_weight']:>8.1f} {r['optimal_weight']:>8.1f} {r['heuristic_max_slot']:>12.1f} "
              f"{r['optimal_max_slot']:>11.1f} {r['solve_s']:>8.2f}")
    return 0
