"""``bace-opt generate paper|random|realistic|trace ... -o FILE``: build an instance file (bace_opt.builders).

The same command always writes the byte-identical file.  Without ``-o`` the instance goes to stdout.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..files import atomic_write, check_output
from ._args import MAX_ABS, finite_float


class _Parser(argparse.ArgumentParser):
    """Bad arguments of a generate sub-command: one line on stderr, exit 2 (argparse would add the usage)."""

    def error(self, message):
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def _pos_float(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {s}")
    if v > MAX_ABS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ABS:g}, got {s}")
    return v


def _nonneg_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {v}")
    return v


def _pos_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if v < 1:            # one message for 0 and for negatives: what is accepted
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    if v > MAX_ABS:      # a count this large overflows every float it multiplies
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ABS:g}, got {s if len(s) <= 40 else s[:37] + '...'}")
    return v


def add_parser(sub):
    p = sub.add_parser("generate", help="build an instance file (paper, random, realistic or trace family)",
                       description="Build an instance file. Families: paper (the BACE-Pipe setup), random "
                                   "(small synthetic instances), realistic (Skyplane + green-dcc data, optional "
                                   "WAN topology). The same command always gives the byte-identical file.")
    fam = p.add_subparsers(dest="family", metavar="FAMILY", parser_class=_Parser)
    p.set_defaults(func=_no_family, _gen_parser=p)

    a = fam.add_parser("paper", help="six regions, A6000, LLM jobs (BACE-Pipe setup)",
                       description="The BACE-Pipe simulation setup: six named regions, A6000 GPUs, per-region "
                                   "GPUs from {16,32,64,128}, 25-100 Gbit/s (or measured Skyplane links with "
                                   "--bandwidth-source measured), 0.156-0.295 USD/kWh, LLM jobs of "
                                   "14B-101B parameters (see bace_opt/builders/paper.py and instances/README.md).")
    a.add_argument("--seed", type=_nonneg_int, required=True, help="random seed (integer >= 0)")
    a.add_argument("--jobs", type=_pos_int, default=8, help="number of jobs (default 8)")
    a.add_argument("--bandwidth-scale", type=_pos_float, default=1.0, help="multiply link bandwidths (default 1)")
    a.add_argument("--gpu-scale", type=_pos_float, default=1.0, help="multiply GPU counts (default 1)")
    a.add_argument("--arrivals", choices=["zero", "poisson"], default="zero",
                   help="all jobs at t=0 (default) or Poisson arrivals")
    a.add_argument("--mean-interarrival", type=_pos_float, default=3600.0,
                   help="mean inter-arrival time in s for --arrivals poisson (default 3600)")
    a.add_argument("--bandwidth-source", choices=["nominal", "measured"], default="nominal",
                   help="link bandwidth and latency: nominal (the paper's 25-100 Gbit/s per region, great-circle "
                        "latency; default) or measured (Skyplane inter-region throughput and ping RTT of the "
                        "matching AWS regions, from DATA/skyplane)")
    a.add_argument("--parallel-connections", type=_pos_int, default=1,
                   help="measured: VM-pair connections per link; link = per-VM-pair throughput x this (default 1)")
    a.add_argument("--aggregate", choices=["median", "mean", "min", "max"], default="median",
                   help="measured: statistic over the runs of both directions of a pair (default median)")
    a.add_argument("--fill-missing", choices=["none", "rtt"], default="none",
                   help="measured: a pair without measurements is an error naming it (none, default) or is "
                        "estimated (rtt: RTT by the great-circle rule, throughput from a fit on RTT)")
    a.add_argument("--throughput-file", default="throughput_2022_11.csv",
                   help="measured: Skyplane throughput file in DATA/skyplane (default throughput_2022_11.csv)")
    a.add_argument("--data", help="measured: raw data folder (docs/data.md; default: $BACE_OPT_DATA, else the "
                                  "per-pair table shipped with the package, the same numbers)")
    a.add_argument("--name", help="instance name (default: derived from the options)")
    a.add_argument("-o", "--output", help="output file (default: stdout)")
    a.set_defaults(func=run)

    r = fam.add_parser("random", help="small random valid instance (property tests, exact models)",
                       description="A random, always-valid instance, deterministic for a seed.")
    r.add_argument("--seed", type=_nonneg_int, required=True, help="random seed (integer >= 0)")
    r.add_argument("--regions", type=_pos_int, default=3, help="regions with GPUs (default 3)")
    r.add_argument("--jobs", type=_nonneg_int, default=3, help="number of jobs (default 3)")
    r.add_argument("--topology", choices=["mesh", "sparse"], default="mesh", help="full mesh or sparse (default mesh)")
    r.add_argument("--transit", type=_nonneg_int, default=0, help="transit regions without GPUs (needs sparse)")
    r.add_argument("--hourly-prices", action="store_true", help="24-hour price series per region")
    r.add_argument("--mixed-gpus", action="store_true", help="two GPU types with different speeds")
    r.add_argument("--max-gpus-per-region", type=_pos_int, default=8, help="default 8")
    r.add_argument("--max-stages", type=_pos_int, default=4, help="default 4")
    r.add_argument("--max-gpus-per-stage", type=_pos_int, default=1, help="default 1")
    r.add_argument("--max-arrival", type=finite_float, default=0.0, help="arrivals uniform in [0, this] s (default 0)")
    r.add_argument("--egress", action="store_true", help="egress prices on links, counted in the objective")
    r.add_argument("--name", help="instance name (default: derived from the options)")
    r.add_argument("-o", "--output", help="output file (default: stdout)")
    r.set_defaults(func=run)

    z = fam.add_parser("realistic", help="from Skyplane and green-dcc data (optional WAN topology from GML)",
                       description="Cloud regions with Skyplane bandwidth/latency/egress and hourly electricity "
                                   "prices (green-dcc, 2023), or a WAN topology from a GML file with GPU sites.")
    z.add_argument("--data", help="raw data folder (docs/data.md; default: $BACE_OPT_DATA, else the tables shipped "
                                  "with the package)")
    z.add_argument("--regions", help="comma-separated cloud regions, or a preset: default (" + ",".join(
        ["aws:us-east-1", "aws:us-west-1", "aws:eu-central-1", "aws:ap-northeast-1", "aws:ap-southeast-1",
         "aws:ap-southeast-2"]) + ") or fleet20 (20 regions across AWS, GCP and Azure, instances/README.md)")
    z.add_argument("--seed", type=_nonneg_int, default=1, help="random seed for GPU counts and jobs (default 1)")
    z.add_argument("--jobs", type=_nonneg_int, default=8, help="number of jobs (default 8)")
    z.add_argument("--gpus", help="GPUs per region: one integer, or region=count,... (default: seeded draw "
                                  "from {16,32,64,128})")
    z.add_argument("--gpu-types", metavar="TYPE,TYPE[,...]",
                   help="mixed fleet: each region draws its GPU type (seeded) from these, e.g. A100-80GB,H100-80GB; "
                        "the first is the reference the jobs are profiled on (default: A6000 everywhere)")
    z.add_argument("--vm-pairs-per-link", "--parallel-connections", type=_pos_float, default=8.0,
                   help="link capacity = aggregate per-VM-pair throughput x this (default 8)")
    z.add_argument("--fill-missing", choices=["none", "rtt"], default="none",
                   help="a pair without throughput or RTT: no link (none, default; an error naming the missing "
                        "pairs if that disconnects the regions) or estimated (rtt: RTT by the great-circle rule, "
                        "throughput from a fit on RTT)")
    z.add_argument("--fill-prices", choices=["none", "previous-hour"], default="none",
                   help="an hour without a price in the data: an error naming file:line:column (none, default) or "
                        "the previous hour's price (previous-hour; each filled hour listed in meta.estimated_prices)")
    z.add_argument("--throughput-file", default="throughput_2022_11.csv",
                   help="Skyplane throughput file in DATA/skyplane (default throughput_2022_11.csv)")
    z.add_argument("--aggregate", choices=["median", "mean", "min", "max"], default="median",
                   help="how to combine measurements of a pair (default median)")
    z.add_argument("--price-day", default="2023-07-01", help="first day of the price series, UTC (default 2023-07-01)")
    z.add_argument("--hours", type=_pos_int, default=168, help="hours of prices (default 168)")
    z.add_argument("--retail-adder", type=finite_float, default=0.10,
                   help="USD/kWh added to wholesale prices (default 0.10)")
    z.add_argument("--topology-gml", help="WAN topology: a GML file or a DeepRMSA link list (.txt), or a name under "
                        "DATA/topologies/topozoo (e.g. Abilene) or DATA/topologies/nsfnet (nsfnet_chen)")
    z.add_argument("--site", action="append", default=[], metavar="LABEL=ZONE[:GPUS]",
                   help="a GPU site of the WAN topology: node label, grid zone (or cloud region), GPUs; repeat")
    z.add_argument("--capacity-gbps", type=_pos_float, default=100.0,
                   help="WAN link capacity when the GML gives none (default 100)")
    z.add_argument("--capacity-scale", type=_pos_float, default=1.0, help="multiply WAN capacities (default 1)")
    z.add_argument("--name", help="instance name (default: derived from the options)")
    z.add_argument("-o", "--output", help="output file (default: stdout)")
    z.set_defaults(func=run)
    _add_trace(fam)


def _add_trace(fam):
    t = fam.add_parser("trace", help="a week of a real GPU-cluster trace (or your own CSV) on a region set",
                       description="Jobs from a GPU-cluster trace mapped to pipeline-parallel training jobs on a "
                                   "realistic region set (default fleet20). Without --trace: the composed real week "
                                   "(Alibaba 2023 arrival shape, Philly runtimes, AcmeTrace sizes and states; "
                                   "docs/decisions.md 'Real workloads'). --trace FILE.csv: your own trace in the "
                                   "format of docs/formats.md ('Trace CSV').")
    t.add_argument("--trace", metavar="FILE", help="a trace file: CSV with submit_time_s,gpus,duration_s[,job_id,"
                                                   "model,state] (docs/formats.md), or --trace-format alibaba")
    t.add_argument("--trace-format", choices=["csv", "alibaba"], default="csv",
                   help="csv (default) or alibaba (cluster-trace-gpu-v2023 openb_pod_list_*.csv)")
    t.add_argument("--data", help="raw data folder (docs/data.md) for the trace statistics, the fleet and the "
                                  "prices (default: $BACE_OPT_DATA, else the shipped tables)")
    t.add_argument("--regions", default="fleet20", help="comma-separated cloud regions or a preset (default fleet20)")
    t.add_argument("--gpus", help="GPUs per region: one integer, or region=count,... (default: seeded draw)")
    t.add_argument("--gpu", default="A6000", help="reference GPU type of the fleet and the jobs (default A6000)")
    t.add_argument("--seed", type=_nonneg_int, default=1, help="random seed (default 1)")
    t.add_argument("--start", type=finite_float, default=0.0, help="window start, trace seconds (default 0)")
    t.add_argument("--days", type=_pos_float, default=7.0, help="window length in days (default 7)")
    t.add_argument("--load", type=_pos_float, default=1.0,
                   help="jobs sampled into the window relative to the trace (Pollux; default 1)")
    t.add_argument("--arrivals", choices=["trace", "poisson"], default="trace",
                   help="trace: the trace's submit times (default); poisson: Poisson at the same rate, jobs drawn "
                        "from the window's mix")
    t.add_argument("--jobs-per-week", type=_pos_int, default=300,
                   help="composed week only: jobs per 7 days at load 1 (default 300)")
    t.add_argument("--min-duration", type=finite_float, default=60.0, help="drop jobs shorter (s; default 60)")
    t.add_argument("--max-duration", type=_pos_float, default=604800.0, help="drop jobs longer (s; default 604800)")
    t.add_argument("--min-gpus", type=_pos_int, default=1, help="drop jobs with fewer GPUs (default 1)")
    t.add_argument("--max-gpus", type=_pos_int, default=256, help="drop jobs with more GPUs (default 256)")
    t.add_argument("--cancelled", choices=["keep", "drop"], default="keep",
                   help="cancelled jobs run their recorded duration (keep, default) or are dropped")
    t.add_argument("--adjust", choices=["gpus", "model"], default="gpus",
                   help="a (model, gpus) that does not fit memory: raise the GPUs to the model's minimum (default) "
                        "or take the largest model that fits")
    t.add_argument("--size-cluster", default="Seren", help="composed week: AcmeTrace cluster of the size and state "
                                                           "statistics (Seren, Kalos, Philly, Helios; default Seren)")
    t.add_argument("--align", default="Mon 00:00", help="weekday and hour (UTC) of instance time 0 in the price week "
                                                        "(default 'Mon 00:00')")
    t.add_argument("--price-day", default="2023-07-01", help="first day of the price series (default 2023-07-01)")
    t.add_argument("--price-hours", type=_pos_int, default=168,
                   help="hours of real prices read, whole weeks (default 168; more needs --data)")
    t.add_argument("--price-repeat", choices=["cycle", "hold"], default="cycle",
                   help="repeat the price weeks to cover the run (cycle, default) or hold the last value")
    t.add_argument("--name", help="instance name (default: derived from the options)")
    t.add_argument("-o", "--output", help="output file (default: stdout)")
    t.set_defaults(func=run)


def _build_trace(args):
    from ..builders.trace import trace_instance
    regions = [r.strip() for r in args.regions.split(",") if r.strip()]
    regions = regions[0] if len(regions) == 1 else regions
    return trace_instance(args.trace, data=args.data, trace_format=args.trace_format, name=args.name,
                          gpus=_parse_gpus(args.gpus), regions=regions, seed=args.seed, start_s=args.start,
                          days=args.days, load=args.load, arrivals=args.arrivals, jobs_per_week=args.jobs_per_week,
                          min_duration_s=args.min_duration, max_duration_s=args.max_duration,
                          min_gpus=args.min_gpus, max_gpus=args.max_gpus, cancelled=args.cancelled,
                          adjust=args.adjust, size_cluster=args.size_cluster, align=args.align,
                          price_day=args.price_day, price_hours=args.price_hours, price_repeat=args.price_repeat,
                          gpu=args.gpu)


def _no_family(args) -> int:
    args._gen_parser.print_help(sys.stderr)
    raise InputError("choose a family: paper, random, realistic or trace")


def _parse_gpus(s: str | None):
    if s is None:
        return None
    s = s.strip()
    if "=" not in s:
        try:
            return int(s)
        except ValueError:
            raise InputError(f"--gpus: expected an integer or region=count,..., got {s!r}") from None
    out = {}
    for part in s.split(","):
        k, sep, v = part.rpartition("=")
        try:
            out[k.strip()] = int(v)
        except ValueError:
            raise InputError(f"--gpus: bad entry {part!r} (expected region=count)") from None
    return out


def _parse_sites(items: list[str]) -> dict:
    out = {}
    for it in items:
        lab, sep, rest = it.partition("=")
        if not sep or not lab.strip() or not rest.strip():
            raise InputError(f"--site: expected LABEL=ZONE[:GPUS], got {it!r}")
        zone, sep2, n = rest.rpartition(":") if ":" in rest and rest.rsplit(":", 1)[1].isdigit() else (rest, "", "")
        spec = {"zone": zone.strip()}
        if n:
            spec["gpus"] = int(n)
        out[lab.strip()] = spec
    return out


def build(args):
    """The Instance a parsed ``generate`` command describes."""
    if args.family == "paper":
        from ..builders.paper import paper_instance
        if args.bandwidth_source == "nominal":
            given = [f for f, v, d in (("--parallel-connections", args.parallel_connections, 1),
                                       ("--aggregate", args.aggregate, "median"),
                                       ("--fill-missing", args.fill_missing, "none"), ("--data", args.data, None),
                                       ("--throughput-file", args.throughput_file, "throughput_2022_11.csv"))
                     if v != d]
            if given:
                raise InputError(f"{', '.join(given)}: only with --bandwidth-source measured")
            return paper_instance(args.seed, args.jobs, args.bandwidth_scale, args.gpu_scale, arrivals=args.arrivals,
                                  mean_interarrival_s=args.mean_interarrival, name=args.name)
        return paper_instance(args.seed, args.jobs, args.bandwidth_scale, args.gpu_scale, arrivals=args.arrivals,
                              mean_interarrival_s=args.mean_interarrival, bandwidth_source="measured",
                              data_dir=args.data, parallel_connections=args.parallel_connections,
                              aggregate=args.aggregate, fill_missing=args.fill_missing,
                              throughput_file=args.throughput_file, name=args.name)
    if args.family == "trace":
        return _build_trace(args)
    if args.family == "random":
        from ..builders.synthetic import random_instance
        return random_instance(args.seed, args.regions, args.jobs, topology=args.topology, transit=args.transit,
                               hourly_prices=args.hourly_prices, mixed_gpus=args.mixed_gpus,
                               max_gpus_per_region=args.max_gpus_per_region, max_stages=args.max_stages,
                               max_gpus_per_stage=args.max_gpus_per_stage, max_arrival_s=args.max_arrival,
                               egress=args.egress, name=args.name)
    from ..builders.realistic import DEFAULT_REGIONS, REGION_PRESETS, realistic_instance
    regions = DEFAULT_REGIONS if not args.regions else [r.strip() for r in args.regions.split(",") if r.strip()]
    if len(regions) == 1 and regions[0] in REGION_PRESETS:
        regions = REGION_PRESETS[regions[0]]
    return realistic_instance(args.data, regions, seed=args.seed, jobs=args.jobs, gpus=_parse_gpus(args.gpus),
                              vm_pairs_per_link=args.vm_pairs_per_link, aggregate=args.aggregate,
                              price_day=args.price_day, hours=args.hours, retail_adder_usd_per_kwh=args.retail_adder,
                              topology_gml=args.topology_gml, sites=_parse_sites(args.site) or None,
                              default_capacity_gbps=args.capacity_gbps, capacity_scale=args.capacity_scale,
                              fill_missing=args.fill_missing, throughput_file=args.throughput_file, name=args.name,
                              gpu_mix=args.gpu_types, fill_prices=args.fill_prices)


def _offered(inst) -> str:
    t = inst.meta.get("trace") if isinstance(inst.meta, dict) else None
    return f", offered load {t['offered_load']:g}" if isinstance(t, dict) and "offered_load" in t else ""


def run(args) -> int:
    if args.output:
        check_output(args.output, suffixes=(".json",), inputs=(getattr(args, "topology_gml", None),
                                                               getattr(args, "trace", None)))
    inst = build(args)
    text = inst.to_json()
    if args.output:
        out = atomic_write(args.output, text)
        print(f"{out}: {inst.name!r}, {len(inst.regions)} regions ({inst.total_gpus} GPUs), {len(inst.links)} links, "
              f"{len(inst.jobs)} jobs{_offered(inst)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
