"""``bace-opt optical simulate|cba|exact``: the optical layer and CBA (bace_opt.optical, models/optical.md).

    bace-opt optical simulate --topology nsfnet --slots 100 --k 5 --load 100 200 300 --holding 1 \\
                              --requests 100000 --sizes uniform:1:8 --seed 1 [--seeds 5] [--plot F.png] [-o F.csv]
    bace-opt optical simulate --scenario xlron-nsfnet-ksp [--policy ksp-ff ff-ksp] [--json]
        dynamic RSA blocking experiment; one row per (policy, load): blocking and its 95 % confidence interval
        (--json: with every seed's value).  A scenario sets every option; options given as well override it.
        --export-paths F.json writes the candidate path table, --paths F.json reads one (docs/formats.md).
        Progress: a line on stderr every 5 s when stderr is a terminal (or with --progress); Ctrl-C or
        SIGTERM stops within a second and, with --json, prints the finished seeds first.  Bounds: at most
        10^8 requests per seed, 10^10 per command (all loads, policies and seeds; about 8 CPU-hours).
    bace-opt optical cba --workload llama3-8b --schedule gpipe --microbatches 64 --iterations 20 --seed 1
        CBA against its baselines (KSP-FF, SD-FF, each with and without CBA) on NSFNET
    bace-opt optical exact --workload llama3-8b ... --solver highs|cpsat
        per iteration, the exact slot assignment of the batch and each scheme's gap against its proven bound

``--topology`` is ``nsfnet`` (the shipped table of topologies/nsfnet/nsfnet_chen.txt; docs/data.md), a link-list
.txt, a Topology Zoo .gml, a JSON optical section, or an instance JSON file with an ``optical`` section.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..errors import InputError
from ._args import check_range, finite_float, int_arg

MAX_SLOTS = 100_000
MAX_SEEDS = 10_000
MAX_TOTAL = 10_000_000_000     # requests per command, all loads, policies and seeds


def _topology_args(p, slots_default=80, k_default=4):
    p.add_argument("--topology", default="nsfnet", metavar="PATH|nsfnet",
                   help="nsfnet, a .txt link list, a .gml, a JSON optical section or an instance with one")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="a raw data folder (docs/data.md); default: the tables shipped with the package")
    p.add_argument("--slots", type=int_arg, default=None,
                   help=f"frequency slots per link, 1..{MAX_SLOTS} (default {slots_default})")
    p.add_argument("--guard", type=int_arg, default=None, help="guard slots per lightpath (default 1)")
    p.add_argument("--k", type=int_arg, default=None, help=f"candidate paths per pair, 1..100 (default {k_default})")
    p.add_argument("--reach-table", nargs="?", const="deeprmsa", default=None, metavar="deeprmsa|NAME:SE:KM,...",
                   help="choose the modulation by path length: DeepRMSA's table (BPSK / QPSK <= 2500 km / 8QAM <= "
                        "1250 / 16QAM <= 625; the default when no value is given) or your own, e.g. "
                        "QPSK:2:2500,16QAM:4:625; without it one fixed format, 64QAM at 75 Gbit/s per slot")


def add_parser(sub):
    p = sub.add_parser("optical", help="optical layer: RSA blocking experiment, CBA, exact slot assignment",
                       description=__doc__.split("\n\n")[0])
    osub = p.add_subparsers(dest="optical_command", metavar="SUBCOMMAND")

    s = osub.add_parser("simulate", help="dynamic RSA simulation: blocking probability versus load")
    s.add_argument("--scenario", default=None, metavar="NAME",
                   help="a named setting that sets every option below (xlron-nsfnet-ksp: XLRON's KSP-FF curve on "
                        "NSFNET); options given as well override it")
    _topology_args(s, 80, 4)
    s.add_argument("--load", type=finite_float, nargs="+", default=None, metavar="ERLANG",
                   help="offered load(s), > 0 (required unless a scenario gives them)")
    s.add_argument("--holding", type=finite_float, default=None, metavar="S", help="mean holding time (default 1 s)")
    s.add_argument("--requests", type=int_arg, default=None,
                   help="measured requests per seed, 1..100,000,000 (default 100000)")
    s.add_argument("--warmup", type=int_arg, default=None, help="requests discarded first (default requests / 10)")
    s.add_argument("--seed", type=int_arg, default=None, help="first seed, >= 0 (default 1)")
    s.add_argument("--seeds", type=int_arg, default=None,
                   help=f"independent runs per point for the interval, 1..{MAX_SEEDS} (default 5)")
    s.add_argument("--policy", nargs="+", default=None, metavar="NAME",
                   help="sp-ff sd-ff ksp-ff ksp-lf ksp-bf ff-ksp lf-ksp bf-ksp ksp-mu (default ksp-ff)")
    s.add_argument("--sizes", default=None, help="fixed:N | uniform:A:B (slots) | gbps:A:B (default fixed:1)")
    s.add_argument("--metric", default=None, choices=["length", "hops"], help="k shortest by length or hops")
    s.add_argument("--order", default=None, choices=["length", "hops", "hops-per-se"],
                   help="candidate order (default length)")
    s.add_argument("--tie", default=None, choices=["km", "xlron"],
                   help="rule for equal-cost paths: km (by length, then node names; default) or xlron (XLRON's)")
    s.add_argument("--paths", default=None, metavar="FILE.json", help="read the candidate paths from a path table")
    s.add_argument("--export-paths", default=None, metavar="FILE.json", help="write the candidate path table")
    s.add_argument("--nodes", nargs="+", default=None, metavar="NODE",
                   help="datacentres: requests run between ordered pairs of these (default every node)")
    s.add_argument("--directed", action=argparse.BooleanOptionalAction, default=None,
                   help="each direction of a link is a separate fibre (default: one shared fibre)")
    s.add_argument("--truncate", type=finite_float, default=None, metavar="X",
                   help="truncate holding times at X x the mean (X > 0)")
    s.add_argument("--truncate-mode", default=None, choices=["clip", "redraw"],
                   help="clip: cut at X x mean (default); redraw: drawn again until under it (DeepRMSA / XLRON)")
    s.add_argument("--progress", action="store_true", help="progress lines on stderr even when it is no terminal")
    s.add_argument("--plot", metavar="FILE.png", help="draw blocking versus load")
    s.add_argument("-o", "--output", metavar="FILE.csv", help="write the table as CSV")
    s.add_argument("--json", action="store_true", help="print JSON rows (with every seed's blocking)")
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
    from ..instance.optical import parse_reach
    from ..optical import load_topology, nsfnet_path
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
    for arg, fld, lo, hi in (("slots", "slots_per_link", 1, MAX_SLOTS), ("guard", "guard_slots", 0, MAX_SLOTS - 1),
                             ("k", "k_paths", 1, 100)):
        v = getattr(args, arg)
        if v is not None:
            check_range(f"--{arg}", v, ge=lo, le=hi)
            kw[fld] = v
    if getattr(args, "reach_table", None):
        kw["modulations"] = parse_reach(args.reach_table, net.slot_ghz)
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

_SIM_DEFAULTS = dict(holding=1.0, requests=100_000, seed=1, seeds=5, policy=["ksp-ff"], sizes="fixed:1",
                    metric="length", order="length", tie="km", directed=False, truncate_mode="clip")


def _simulate_settings(args) -> None:
    """Fill the options not given from the scenario, then from the defaults; check every number."""
    from ..optical.dynamic import MAX_REQUESTS
    mode_given = args.truncate_mode is not None
    if args.scenario is not None:
        from ..optical.scenarios import scenario
        for key, v in scenario(args.scenario).items():
            if key == "topology":
                if args.topology == "nsfnet":
                    continue
            elif getattr(args, key) is None:
                setattr(args, key, v)
    for key, v in _SIM_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, v)
    if args.load is None:
        raise InputError("--load: give one or more loads in Erlang (or a --scenario)")
    for load in args.load:
        check_range("--load", load, gt=0)
    check_range("--holding", args.holding, gt=0)
    if not 1 <= args.requests <= MAX_REQUESTS:
        raise InputError(f"--requests: requests must be in 1..{MAX_REQUESTS:,} per seed (the bound: 10^8 requests "
                         f"take about 5-10 CPU-minutes), got {args.requests:,}")
    if args.warmup is None:
        args.warmup = args.requests // 10
    if not 0 <= args.warmup <= MAX_REQUESTS:
        raise InputError(f"--warmup: must be in 0..{MAX_REQUESTS:,}, got {args.warmup:,}")
    check_range("--seed", args.seed, ge=0)
    check_range("--seeds", args.seeds, ge=1, le=MAX_SEEDS)
    total = len(args.load) * len(args.policy) * args.seeds * (args.warmup + args.requests)
    if total > MAX_TOTAL:
        raise InputError(f"--requests: loads x policies x seeds x (warm-up + requests) = {total:,} requests; at most "
                         f"{MAX_TOTAL:,} per command (about 8 CPU-hours for KSP-FF)")
    check_range("--truncate", args.truncate, gt=0)
    if args.truncate is None and mode_given:
        raise InputError(f"--truncate-mode {args.truncate_mode}: give --truncate X as well")


class _Progress:
    """A line on stderr every ``every_s`` seconds: requests done of all, rate, time left (``tick(n)``)."""

    def __init__(self, total: int, enabled: bool, every_s: float = 5.0):
        self.total, self.enabled, self.every_s = total, enabled, every_s
        self.done = 0
        self.t0 = self.last = time.monotonic()

    def tick(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and now - self.last >= self.every_s:
            self.last = now
            rate = self.done / max(now - self.t0, 1e-9)
            left = (self.total - self.done) / rate if rate > 0 else float("inf")
            print(f"optical simulate: {self.done:,} / {self.total:,} requests ({100 * self.done / self.total:.1f} %), "
                  f"{rate:,.0f} per s, about {left / 60:.1f} min left", file=sys.stderr, flush=True)


def run_simulate(args) -> int:
    from ..optical.dynamic import DynamicOptions, RequestSizes, sweep, sweep_frame
    from ..optical.paths import PathTable
    from ..optical.rsa import get_rsa_policy
    _simulate_settings(args)
    for flag, out in (("--plot", args.plot), ("-o", args.output), ("--export-paths", args.export_paths)):
        if out and not Path(out).resolve().parent.is_dir():
            raise InputError(f"{flag} {out}: folder {Path(out).resolve().parent} does not exist")
    inputs = [args.topology] + ([args.paths] if args.paths else [])
    net = load_network(args)
    for pol in args.policy:
        get_rsa_policy(pol)
    table = PathTable.load(net, args.paths) if args.paths else None
    opt = DynamicOptions(load_erlang=args.load[0], holding_s=args.holding, requests=args.requests,
                         warmup=args.warmup, policy=args.policy[0], sizes=RequestSizes.parse(args.sizes), k=args.k,
                         metric=args.metric, order=args.order, directed=args.directed, truncate=args.truncate,
                         truncate_mode=args.truncate_mode, tie=args.tie, path_table=table,
                         nodes=tuple(args.nodes) if args.nodes else None)
    if args.export_paths:
        nodes = list(args.nodes) if args.nodes else list(net.nodes)
        pairs = [(a, b) for a in nodes for b in nodes if a != b]
        k = args.k or net.k_paths
        exp = (PathTable({pr: table[pr][:k] for pr in pairs if pr in table}, table.rule) if table is not None
               else PathTable.build(net, pairs, k, args.metric, args.order, args.tie))
        exp.save(net, args.export_paths, inputs)
    seeds = range(args.seed, args.seed + args.seeds)
    total = len(args.load) * len(args.policy) * len(seeds) * (args.warmup + args.requests)
    prog = _Progress(total, args.progress or sys.stderr.isatty())
    finished: list[dict] = []

    def on_seed(o, run):
        finished.append({"policy": o.policy, "load_erlang": o.load_erlang, "seed": run.seed, "blocking": run.blocking,
                         "requests": run.offered, "cpu_s": run.cpu_s})
    try:
        ests = sweep(net, opt, args.load, seeds, args.policy, tick=prog.tick, on_seed=on_seed)
    except KeyboardInterrupt:
        if args.json:
            print(json.dumps({"interrupted": True, "finished_seeds": finished}, indent=1), flush=True)
        else:
            print(f"optical simulate: stopped after {len(finished)} finished seed runs", file=sys.stderr)
        raise
    df = sweep_frame(ests)
    if args.output:
        write_atomic(args.output, df.drop(columns=["seed_list", "per_seed"]).to_csv(index=False), inputs)
    if args.plot:
        _plot_sweep(df, args.plot, f"{net.name or 'network'}: {net.slots_per_link} slots, k={args.k or net.k_paths}, "
                                   f"sizes {args.sizes}")
    if args.json:
        print(json.dumps([e.to_dict() for e in ests], indent=1))
        return 0
    print(f"topology {net.name}: {len(net.nodes)} nodes, {len(net.fibres)} links"
          f"{' (two one-way fibres each)' if args.directed else ''}, {net.slots_per_link} slots, guard "
          f"{net.guard_slots}, k {args.k or net.k_paths} ({'path table ' + args.paths if args.paths else 'tie ' + args.tie}); "
          f"sizes {args.sizes}; holding {args.holding:g} s"
          f"{f' truncated at {args.truncate:g} x ({args.truncate_mode})' if args.truncate else ''}; "
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
