"""The ``realistic`` family: instances from the raw third-party formats in a data folder the user gives.

Reads (and only reads) ``<data_dir>/skyplane``, ``<data_dir>/green_dcc`` and, for WAN topologies,
a GML file (``<data_dir>/topologies/topozoo/<Name>.gml`` or any path).  Nothing is copied into the repository;
the shipped instances hold derived numbers only and name their sources in ``meta``.

Cloud mode (``topology_gml=None``): the regions are cloud regions in Skyplane naming (``aws:us-east-1``,
``gcp:europe-west3`` with or without the zone suffix), fully meshed where measurements exist.

- Bandwidth of link {u, v} = aggregate (``aggregate``: median by default; mean, min, max) of Skyplane's
  iperf3 ``throughput_recieved`` (bit/s, 64 TCP flows between ONE VM pair; successful PREMIUM-tier runs only)
  over the measurements of BOTH directions, / 1e9 -> Gbit/s, times ``vm_pairs_per_link`` (default 8; CLI
  alias ``--parallel-connections``): our reading of a region pair's capacity as 8 parallel VM pairs, which
  Skyplane (NSDI'23) shows scales about linearly.  (Reading and aggregation: builders.skyplane.)
- Latency = aggregate of ``avg_rtt`` (ms, ping) over both directions / 2 (one way).  The realistic family is
  always measured: the paper family's ``bandwidth_source`` has no nominal counterpart here.
- Egress price of a link = mean of the two directions' USD/GB (skyplane/egress_cost.csv): exact for the
  model, whose traffic over a hop is half forward activations, half backward gradients.
- A pair without a throughput or a latency measurement gets no link (listed in ``meta.missing_pairs``);
  the instance must still be connected, else an InputError names the cut-off regions and every missing
  measurement.  ``fill_missing="rtt"`` estimates the holes instead (skyplane.fill: RTT by the great-circle
  rule, throughput from a log-log fit on RTT), each listed with its estimate in ``meta.estimated_pairs``.
- Electricity: the region's grid zone from green_dcc/cloud_region_to_grid_zone_curated.csv, its hourly
  day-ahead price from electricity_price_usd_mwh_hourly_2023_wide.csv for ``hours`` hours starting at
  ``price_day`` 00:00 UTC: USD/MWh / 1000 + ``retail_adder_usd_per_kwh`` (default 0.10: network charges,
  levies and supplier margin on top of the wholesale price), clipped at >= 0 (wholesale prices can be
  negative).  ``price_series`` starts at t = 0 (= price_day 00:00 UTC), step 3600 s; past its end the last
  value holds.  ``price_usd_per_kwh`` is the mean of the series.
- GPUs: ``gpus`` (an int for every region, or a dict region -> count); default a seeded draw from
  {16, 32, 64, 128} per region, as in the paper family.  GPU type: the A6000 of the paper by default.
- Jobs: the paper family's job generator (paper.paper_jobs), seeded the same way, with K* capped by the
  largest region's GPU count.

WAN mode (``topology_gml`` given: a Topology Zoo GML file, or a ``.txt`` link list in the DeepRMSA format such
as topologies/nsfnet/nsfnet_chen.txt, whose nodes are labelled "1".."14" and whose links carry fibre lengths:
latency = length / 200 km/ms + 0.5 ms): the regions are the GML nodes (named by their ``label``); ``sites`` maps a
node label to ``{"zone": <grid zone or cloud region id>, "gpus": n}``; every other node is a transit region
(gpus 0, price 0).  Links are the GML edges; parallel edges are merged (capacities add up, latency = the
smaller).  Capacity: ``LinkSpeedRaw`` (bit/s) when present, else an ``OC-n`` label (n x 51.84 Mbit/s), else
``default_capacity_gbps``; times ``capacity_scale``.  Latency from the nodes' coordinates with the WAN rule
of geo.py (1.2 x great-circle / 200 km/ms + 0.5 ms per link).  No egress price.  (Finding and reading the
topology file: bace_opt.data.topologies.)
"""
from __future__ import annotations

import logging
import re
import statistics

import networkx as nx

from ..data.raw import norm_region, parse_day
from ..data.source import DataSource, open_data
from ..data.topologies import read_gml, read_link_list
from ..errors import InputError
from ..instance import Instance
from . import geo, skyplane
from ._random import Stream
from .paper import GPU_COUNTS, paper_jobs
from .profiles import GpuSpec, get_gpu

log = logging.getLogger(__name__)
SOURCE = "bace_opt.builders.realistic"

DEFAULT_REGIONS = ("aws:us-east-1", "aws:us-west-1", "aws:eu-central-1", "aws:ap-northeast-1",
                   "aws:ap-southeast-1", "aws:ap-southeast-2")
AGGREGATES = skyplane.AGGREGATES
#: 20 regions across AWS (7), Google Cloud (7) and Azure (6), each with a grid zone with hourly prices in
#: green_dcc, and every one of their 190 pairs measured by Skyplane (throughput and RTT)
FLEET20 = ("aws:us-east-1", "aws:us-west-1", "aws:ca-central-1", "aws:eu-central-1", "aws:ap-northeast-1",
           "aws:ap-southeast-2", "aws:ap-south-1", "gcp:us-east4", "gcp:europe-west1", "gcp:europe-west4",
           "gcp:europe-west6", "gcp:asia-northeast3", "gcp:asia-southeast1", "gcp:australia-southeast2",
           "azure:eastus", "azure:westus", "azure:canadacentral", "azure:germanywestcentral", "azure:westeurope",
           "azure:koreacentral")
REGION_PRESETS = {"default": DEFAULT_REGIONS, "fleet20": FLEET20}
RETAIL_ADDER_USD_PER_KWH = 0.10
FILL_PRICES = ("none", "previous-hour")
OC_UNIT_GBPS = 0.05184


_norm = norm_region


def _source(data_dir) -> DataSource:
    return data_dir if isinstance(data_dir, DataSource) else open_data(data_dir)


# ---------------------------------------------------------------------- prices

def zone_map(data_dir=None) -> dict[str, str]:
    """cloud region (normalised) -> grid zone (green_dcc/cloud_region_to_grid_zone_curated.csv, or the
    shipped table)."""
    return _source(data_dir).zone_map()


def hourly_prices(data_dir, zones, price_day: str = "2023-07-01", hours: int = 24,
                  retail_adder_usd_per_kwh: float = RETAIL_ADDER_USD_PER_KWH,
                  fill_prices: str = "none") -> tuple[dict[str, list[float]], list[dict]]:
    """zone -> ``hours`` hourly retail prices (USD/kWh) from ``price_day`` 00:00 UTC: wholesale / 1000 + adder,
    clipped at >= 0, rounded to 1e-5; and the list of estimated hours.

    A missing hour (no row, or an empty cell) is an InputError naming file:line[:column] unless
    ``fill_prices="previous-hour"``: it then takes the previous hour's price (the next available one for the
    first hours of the window), and each such hour is listed (zone, hour, UTC time, value, rule)."""
    if fill_prices not in FILL_PRICES:
        raise InputError(f"fill_prices must be one of {', '.join(FILL_PRICES)}, got {fill_prices!r}")
    if isinstance(hours, bool) or not isinstance(hours, int) or hours < 1:
        raise InputError(f"hours must be an integer >= 1, got {hours!r}")
    w = _source(data_dir).prices(zones, parse_day(price_day), hours)
    if w.holes and fill_prices == "none":
        raise InputError([*w.holes, f"{len(w.holes)} gap(s) in the hourly prices of the {hours} h from {price_day}; "
                                    "pass --fill-prices previous-hour (fill_prices='previous-hour') to fill them, "
                                    "each filled hour listed in meta.estimated_prices"])
    out, estimates = {}, []
    for z, raw_vals in w.values.items():
        vals = [None if v is None else max(0.0, round(v / 1000.0 + retail_adder_usd_per_kwh, 5)) for v in raw_vals]
        if all(v is None for v in vals):
            raise InputError(f"no prices for zone {z} in the {hours} h from {price_day} (data covers 2023)")
        for h in [h for h, v in enumerate(vals) if v is None]:
            prev = next((vals[k] for k in range(h - 1, -1, -1) if vals[k] is not None), None)
            rule = "previous hour's price" if prev is not None else "first available hour's price (none before)"
            vals[h] = prev if prev is not None else next(v for v in vals if v is not None)
            estimates.append({"zone": z, "hour": h, "utc": w.hour_label(h), "usd_per_kwh": vals[h], "rule": rule})
        out[z] = vals
    if estimates:
        log.warning("%d hourly price(s) missing in the data were filled (--fill-prices previous-hour): %s",
                    len(estimates), "; ".join(f"{e['zone']} {e['utc']}" for e in estimates[:10])
                    + (f"; ... {len(estimates) - 10} more (meta.estimated_prices)" if len(estimates) > 10 else ""))
    return out, estimates


def hourly_prices_usd_per_kwh(data_dir, zones, price_day: str = "2023-07-01", hours: int = 24,
                              retail_adder_usd_per_kwh: float = RETAIL_ADDER_USD_PER_KWH) -> dict[str, list[float]]:
    """``hourly_prices`` without filling: any missing hour is an InputError."""
    return hourly_prices(data_dir, zones, price_day, hours, retail_adder_usd_per_kwh)[0]


# ---------------------------------------------------------------------- cloud mode

def realistic_instance(data_dir, regions=DEFAULT_REGIONS, *, seed: int = 1, jobs: int = 8,
                       gpus: int | dict | None = None, gpu: str | GpuSpec = "A6000", vm_pairs_per_link: float = 8,
                       aggregate: str = "median", price_day: str = "2023-07-01", hours: int = 168,
                       retail_adder_usd_per_kwh: float = RETAIL_ADDER_USD_PER_KWH, topology_gml=None,
                       sites: dict | None = None, default_capacity_gbps: float = 100.0, capacity_scale: float = 1.0,
                       arrivals: str = "zero", mean_interarrival_s: float = 3600.0, egress_objective: bool = False,
                       fill_missing: str = "none", throughput_file: str = skyplane.THROUGHPUT_FILE,
                       name: str | None = None, gpu_mix=None, fill_prices: str = "none") -> Instance:
    """A realistic instance from the data (module docstring has every rule).

    ``data_dir``: a raw data folder (docs/data.md), or None for $BACE_OPT_DATA, else the tables shipped with
    the package (the same numbers for what they cover).  ``regions``: region names, or a preset name of
    ``REGION_PRESETS`` ("default", "fleet20").  ``gpu_mix`` (cloud mode): a sequence of GPU type names (e.g.
    ("A100-80GB", "H100-80GB")); each region draws its type from it (``mixed_gpu_types``) and the first is the
    reference GPU the jobs are profiled on; ``gpu`` is then ignored.  ``fill_prices``: "none" (a missing hour
    is an error) or "previous-hour" (see ``hourly_prices``)."""
    d = _source(data_dir)
    problems = []
    if aggregate not in AGGREGATES:
        problems.append(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")
    if not (isinstance(vm_pairs_per_link, (int, float)) and vm_pairs_per_link > 0):
        problems.append(f"vm_pairs_per_link must be > 0, got {vm_pairs_per_link!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.append(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        problems.append(f"jobs must be an integer >= 0, got {jobs!r}")
    if not default_capacity_gbps > 0 or not capacity_scale > 0:
        problems.append("default_capacity_gbps and capacity_scale must be > 0")
    if arrivals not in ("zero", "poisson"):
        problems.append(f"arrivals must be 'zero' or 'poisson', got {arrivals!r}")
    if fill_missing not in skyplane.FILL_MODES:
        problems.append(f"fill_missing must be one of {', '.join(skyplane.FILL_MODES)}, got {fill_missing!r}")
    if fill_prices not in FILL_PRICES:
        problems.append(f"fill_prices must be one of {', '.join(FILL_PRICES)}, got {fill_prices!r}")
    if problems:
        raise InputError(problems, "realistic_instance")
    mix = _gpu_mix(gpu_mix)
    gspec = mix[0] if mix else get_gpu(gpu)
    if gspec.power_w is None:
        raise InputError(f"GPU {gspec.name!r} has no power figure; pass a GpuSpec with power_w")
    if topology_gml is not None and (fill_missing != "none" or throughput_file != skyplane.THROUGHPUT_FILE):
        raise InputError("fill_missing and throughput_file apply to cloud regions (Skyplane), not to topology_gml")
    if topology_gml is not None:
        return _wan_instance(d, topology_gml, sites or {}, seed=seed, jobs=jobs, gspec=gspec, price_day=price_day,
                             hours=hours, adder=retail_adder_usd_per_kwh, default_capacity_gbps=default_capacity_gbps,
                             capacity_scale=capacity_scale, arrivals=arrivals, mean_ia=mean_interarrival_s, name=name,
                             fill_prices=fill_prices)
    if sites:
        raise InputError("sites only apply with topology_gml (a WAN topology)")
    if mix and topology_gml is not None:
        raise InputError("gpu_mix applies to cloud mode only (not with topology_gml)")

    if isinstance(regions, str):
        if regions not in REGION_PRESETS:
            raise InputError(f"regions: unknown preset {regions!r} (presets: {', '.join(REGION_PRESETS)}; or give "
                             "a list of regions)")
        regions = REGION_PRESETS[regions]
    regions = list(dict.fromkeys(str(r) for r in regions))
    if len(regions) < 2:
        raise InputError(f"need at least 2 regions, got {regions!r}")
    zmap = d.zone_map()
    unknown = [r for r in regions if _norm(r) not in zmap]
    if unknown:
        raise InputError(f"no grid zone for region(s) {', '.join(unknown)} in "
                         f"green_dcc/cloud_region_to_grid_zone_curated.csv (known: {', '.join(sorted(zmap))})")
    zones = {r: zmap[_norm(r)] for r in regions}
    prices, price_estimates = hourly_prices(d, zones.values(), price_day, hours, retail_adder_usd_per_kwh,
                                            fill_prices)
    counts = _gpu_counts(gpus, regions, seed)

    meas = skyplane.Measurements(throughput_file=throughput_file, aggregate=aggregate, source=d)
    eg = d.egress()
    links, missing, estimated = [], [], []
    pms = meas.pairs(regions)
    holes = [pm for pm in pms if not pm.complete]
    if holes and fill_missing == "none":
        g = nx.Graph()
        g.add_nodes_from(regions)
        g.add_edges_from((pm.a, pm.b) for pm in pms if pm.complete)
        if not nx.is_connected(g):
            parts = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c))
            cut = ", ".join(r for c in parts[1:] for r in c)
            raise InputError(f"topology is disconnected: region(s) {cut} have no link because Skyplane "
                             f"({d.name}/skyplane) lacks {len(holes)} measurement(s): "
                             f"{skyplane.describe_missing(holes, limit=40)}; pass --fill-missing rtt "
                             "(fill_missing='rtt') to estimate them, or choose other regions")
    for pm in pms:
        a, b = pm.a, pm.b
        if not pm.complete:
            if fill_missing == "none":
                missing.append({"pair": [a, b], "throughput": pm.throughput_gbps is not None,
                                "latency": pm.rtt_ms is not None})
                continue
            pm, _ = skyplane.fill(meas, pm)
            estimated.append({"pair": [a, b], "throughput": pm.throughput_source, "rtt_ms": round(pm.rtt_ms, 3),
                              "rtt": pm.rtt_source})
        e_ab, e_ba = eg.get((_norm(a), _norm(b))), eg.get((_norm(b), _norm(a)))
        e = [x for x in (e_ab, e_ba) if x is not None]
        links.append({"a": a, "b": b,
                      "bandwidth_gbps": round(pm.throughput_gbps * vm_pairs_per_link, 3),
                      "latency_ms": round(pm.rtt_ms / 2.0, 3),
                      "egress_usd_per_gb": round(sum(e) / len(e), 5) if e else 0.0})
    if missing:
        log.info("no measurements for %d pair(s): %s", len(missing), missing)
    if estimated:
        log.warning("%d region pair(s) without Skyplane measurements estimated (--fill-missing rtt; listed in "
                    "meta.estimated_pairs): %s", len(estimated),
                    ", ".join(f"{e['pair'][0]} - {e['pair'][1]}" for e in estimated))

    types = mixed_gpu_types(regions, seed, mix) if mix else {r: gspec for r in regions}
    region_dicts = [_region(r, types[r], counts[r], prices[zones[r]]) for r in regions]
    total = sum(counts.values())
    job_dicts, notes = paper_jobs(seed, jobs, gspec, total, arrivals=arrivals, mean_interarrival_s=mean_interarrival_s,
                                  max_stages=max(counts.values()), stream="bace-opt/realistic")
    nm = name or f"realistic-{len(regions)}r-{jobs}j{'-mixed' if mix else ''}-seed{seed}"
    meta = {
        "source": (f"{SOURCE}.realistic_instance from {d.name}/: Skyplane (github.com/skyplane-project/skyplane) "
                   f"{throughput_file}, latency.csv, egress_cost.csv; green-dcc (github.com/HewlettPackard/"
                   "green-dcc) hourly day-ahead prices 2023 (ENTSO-E, PJM, CAISO, JEPX, EMC, AEMO, ...) via "
                   "cloud_region_to_grid_zone_curated.csv; jobs: bace_opt.builders.paper.paper_jobs"),
        "family": "realistic", "seed": seed,
        "bandwidth_rule": f"{aggregate} of iperf3 throughput_recieved over both directions / 1e9 x "
                          f"{vm_pairs_per_link:g} VM pairs per link",
        "latency_rule": f"{aggregate} of ping avg_rtt over both directions / 2",
        "price_rule": f"hourly wholesale USD/MWh / 1000 + {retail_adder_usd_per_kwh:g} USD/kWh retail adder, "
                      f"clipped at >= 0; t = 0 is {price_day} 00:00 UTC; {hours} hours",
        "grid_zones": zones, "missing_pairs": missing, "job_profiles": notes,
    }
    if fill_missing != "none":
        meta["fill_missing"] = fill_missing
        meta["estimated_pairs"] = estimated
    if fill_prices != "none":
        meta["fill_prices"] = fill_prices
        meta["estimated_prices"] = price_estimates
    if mix:
        meta["gpu_mix_rule"] = (f"each region's GPU type drawn (seeded) from {', '.join(g.name for g in mix)}; "
                                f"jobs profiled on the reference {gspec.name}; figures from the datasheets in "
                                "llm_hw/gpu_specs_curated.csv (bf16 dense TFLOPS, memory, TDP)")
    return _finish(nm, meta, gspec, region_dicts, links, job_dicts, egress_objective, extra_types=mix)


def _region(name: str, gspec: GpuSpec, gpus: int, series: list[float]) -> dict:
    return {"name": name, "gpu_type": gspec.name, "gpus": gpus,
            "price_usd_per_kwh": round(statistics.fmean(series), 5), "pue": 1.0,
            "price_series": {"start_s": 0.0, "step_s": 3600.0, "usd_per_kwh": series}}


def _gpu_counts(gpus, regions, seed) -> dict[str, int]:
    if gpus is None:
        return {r: Stream("bace-opt/realistic", seed, "gpus", r).choice(GPU_COUNTS) for r in regions}
    if isinstance(gpus, bool):
        raise InputError(f"gpus must be an integer or a mapping region -> count, got {gpus!r}")
    if isinstance(gpus, int):
        if gpus < 1:
            raise InputError(f"gpus must be >= 1, got {gpus}")
        return {r: gpus for r in regions}
    if isinstance(gpus, dict):
        extra = sorted(set(gpus) - set(regions))
        if extra:
            raise InputError(f"gpus names unknown region(s) {', '.join(extra)}")
        out = {}
        for r in regions:
            v = gpus.get(r)
            if v is None:
                v = Stream("bace-opt/realistic", seed, "gpus", r).choice(GPU_COUNTS)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError(f"gpus[{r!r}] must be an integer >= 0, got {v!r}")
            out[r] = v
        return out
    raise InputError(f"gpus must be an integer or a mapping region -> count, got {gpus!r}")


def _gpu_mix(gpu_mix) -> list[GpuSpec]:
    """The GPU types of ``gpu_mix`` (names or GpuSpecs), checked: at least two, distinct, each with power."""
    if gpu_mix is None:
        return []
    if isinstance(gpu_mix, str):
        gpu_mix = [g.strip() for g in gpu_mix.split(",") if g.strip()]
    specs = [get_gpu(g) for g in gpu_mix]
    names = [g.name for g in specs]
    if len(specs) < 2 or len(set(names)) != len(names):
        raise InputError(f"gpu_mix: needs at least two distinct GPU types, got {names!r}")
    nopower = [g.name for g in specs if g.power_w is None]
    if nopower:
        raise InputError(f"gpu_mix: GPU type(s) {', '.join(nopower)} have no power figure")
    return specs


def mixed_gpu_types(regions, seed: int, mix: list[GpuSpec]) -> dict[str, GpuSpec]:
    """Region -> GPU type, a seeded draw from ``mix`` per region (stream bace-opt/realistic, "gpu_type").  If
    the draw gives every region the same type, the last region takes the next type, so the fleet is mixed."""
    out = {r: Stream("bace-opt/realistic", seed, "gpu_type", r).choice(mix) for r in regions}
    if len({g.name for g in out.values()}) == 1 and len(regions) > 1:
        last = regions[-1]
        out[last] = mix[(mix.index(out[last]) + 1) % len(mix)]
    return out


def _finish(nm, meta, gspec, regions, links, jobs, egress_objective, extra_types=()) -> Instance:
    gtypes = {g.name: {"tflops": g.tflops, "memory_gb": g.memory_gb, "power_w": g.power_w}
              for g in [gspec, *extra_types]}
    data = {"schema": "bace-opt/instance/v1", "name": nm, "meta": meta,
            "gpu_types": gtypes,
            "reference_gpu": gspec.name, "regions": regions, "links": links, "jobs": jobs,
            "objective": {"egress": bool(egress_objective)}}
    return Instance.from_dict(data, source=nm)


# ---------------------------------------------------------------------- WAN mode (GML)

def _edge_capacity_gbps(attrs: dict, default: float) -> tuple[float, str]:
    raw = attrs.get("LinkSpeedRaw")
    if isinstance(raw, (int, float)) and raw > 0:
        return raw / 1e9, "LinkSpeedRaw"
    for k in ("LinkLabel", "LinkType"):
        m = re.search(r"OC-?(\d+)", str(attrs.get(k, "")), flags=re.I)
        if m:
            return int(m.group(1)) * OC_UNIT_GBPS, k
    return default, "default"


def _wan_instance(d: DataSource, topology_gml, sites: dict, *, seed, jobs, gspec, price_day, hours, adder,
                  default_capacity_gbps, capacity_scale, arrivals, mean_ia, name, fill_prices="none") -> Instance:
    path = d.topology(topology_gml)
    g = read_link_list(path) if path.suffix.lower() == ".txt" else read_gml(path)
    labels: dict = {}
    seen: dict[str, int] = {}
    for n, a in sorted(g.nodes(data=True), key=lambda x: x[0]):
        lab = str(a.get("label", n))
        if lab in seen:
            seen[lab] += 1
            lab = f"{lab} ({n})"
        else:
            seen[lab] = 1
        labels[n] = lab
    by_label = {v: k for k, v in labels.items()}
    if not sites:
        raise InputError(f"WAN mode needs sites: a mapping node label -> {{'zone': ..., 'gpus': n}} "
                         f"(nodes of {path.name}: {', '.join(labels.values())})")
    zmap = d.zone_map()
    site_zone, site_gpus, problems = {}, {}, []
    for lab, spec in sites.items():
        if lab not in by_label:
            problems.append(f"sites: {lab!r} is not a node of {path.name} (nodes: {', '.join(labels.values())})")
            continue
        if not isinstance(spec, dict) or set(spec) - {"zone", "gpus"} or "zone" not in spec:
            problems.append(f"sites[{lab!r}]: must be {{'zone': <grid zone or cloud region>, 'gpus': n}}")
            continue
        z = str(spec["zone"])
        site_zone[lab] = zmap.get(_norm(z), z)
        n = spec.get("gpus", None)
        site_gpus[lab] = Stream("bace-opt/realistic", seed, "gpus", lab).choice(GPU_COUNTS) if n is None else n
        if isinstance(site_gpus[lab], bool) or not isinstance(site_gpus[lab], int) or site_gpus[lab] < 1:
            problems.append(f"sites[{lab!r}].gpus: must be an integer >= 1, got {site_gpus[lab]!r}")
    if problems:
        raise InputError(problems, "realistic_instance")
    prices, price_estimates = hourly_prices(d, site_zone.values(), price_day, hours, adder, fill_prices)

    coords = {}
    for n, a in g.nodes(data=True):
        if "Latitude" in a and "Longitude" in a:
            coords[n] = (float(a["Latitude"]), float(a["Longitude"]))
    merged: dict[tuple, dict] = {}
    cap_sources = set()
    for u, v, a in g.edges(data=True):
        if u == v:
            continue
        cap, src = _edge_capacity_gbps(a, default_capacity_gbps)
        cap_sources.add(src)
        if "length_km" in a:    # fibre length given: no route inflation
            lat = round(geo.latency_ms(float(a["length_km"]), 1.0, geo.WAN_OVERHEAD_MS), 2)
        else:
            for n in (u, v):
                if n not in coords:
                    raise InputError(f"{path.name}: node {labels[n]!r} has no Latitude/Longitude; "
                                     "cannot derive latency")
            lat = geo.pair_latency_ms(coords[u], coords[v], geo.WAN_INFLATION, geo.WAN_OVERHEAD_MS)
        key = tuple(sorted((labels[u], labels[v])))
        if key in merged:
            merged[key]["bandwidth_gbps"] += cap * capacity_scale
            merged[key]["latency_ms"] = min(merged[key]["latency_ms"], lat)
        else:
            merged[key] = {"a": key[0], "b": key[1], "bandwidth_gbps": cap * capacity_scale, "latency_ms": lat,
                           "egress_usd_per_gb": 0.0}
    links = [dict(l, bandwidth_gbps=round(l["bandwidth_gbps"], 4)) for _, l in sorted(merged.items())]
    node_order = [labels[n] for n in sorted(labels)]
    region_dicts = []
    for lab in node_order:
        if lab in site_zone:
            region_dicts.append(_region(lab, gspec, site_gpus[lab], prices[site_zone[lab]]))
        else:
            region_dicts.append({"name": lab, "gpu_type": gspec.name, "gpus": 0, "price_usd_per_kwh": 0.0, "pue": 1.0})
    total = sum(site_gpus.values())
    job_dicts, notes = paper_jobs(seed, jobs, gspec, total, arrivals=arrivals, mean_interarrival_s=mean_ia,
                                  max_stages=max(site_gpus.values()), stream="bace-opt/realistic")
    net = str(g.graph.get("label") or g.graph.get("Network") or path.stem)
    nm = name or f"wan-{net.lower()}-{len(site_zone)}s-{len(node_order) - len(site_zone)}t-{jobs}j-seed{seed}"
    meta = {
        "source": (f"{SOURCE}.realistic_instance (WAN mode): topology {path.name} "
                   + ("(DeepRMSA NSFNET, Chen et al. JLT 2019, via carlosnatalino/optical-rl-gym, MIT)"
                      if path.suffix.lower() == ".txt" else
                      "from the Internet Topology Zoo (Knight et al., IEEE JSAC 2011; CC BY 4.0)")
                   + "; prices: green-dcc hourly day-ahead 2023; jobs: bace_opt.builders.paper.paper_jobs"),
        "family": "wan", "seed": seed,
        "capacity_rule": (f"LinkSpeedRaw bit/s / 1e9, else OC-n label x {OC_UNIT_GBPS} Gbit/s, else "
                          f"{default_capacity_gbps:g} Gbit/s; x {capacity_scale:g}; parallel edges summed "
                          f"(used here: {', '.join(sorted(cap_sources))})"),
        "latency_rule": (f"fibre length km / {geo.FIBRE_KM_PER_MS:g} km/ms + {geo.WAN_OVERHEAD_MS} ms per link"
                         if path.suffix.lower() == ".txt" else
                         f"{geo.WAN_INFLATION} x great-circle km / {geo.FIBRE_KM_PER_MS:g} km/ms + "
                         f"{geo.WAN_OVERHEAD_MS} ms per link"),
        "price_rule": f"hourly wholesale USD/MWh / 1000 + {adder:g} USD/kWh retail adder, clipped at >= 0; "
                      f"t = 0 is {price_day} 00:00 UTC; {hours} hours",
        "sites": {lab: {"zone": site_zone[lab], "gpus": site_gpus[lab]} for lab in site_zone},
        # the GML nodes' (latitude, longitude), for pictures (bace_opt.plot); absent for link lists
        **({"coordinates": {labels[n]: [round(c[0], 4), round(c[1], 4)] for n, c in sorted(coords.items(),
                                                                              key=lambda kv: labels[kv[0]])}}
           if coords else {}),
        "job_profiles": notes,
    }
    if fill_prices != "none":
        meta["fill_prices"] = fill_prices
        meta["estimated_prices"] = price_estimates
    return _finish(nm, meta, gspec, region_dicts, links, job_dicts, False)
