"""The instance model: GPU types, regions, links, jobs (``bace-opt/instance/v1``).

Plain frozen dataclasses with no solver import.  ``load_instance`` / ``Instance.from_dict`` validate the
whole input and report *every* problem at once with its place (``jobs[3].stage_time_s: must be > 0, got 0``);
``Instance.save`` / ``to_dict`` write the canonical form, so that load -> save -> load is the identity.

Derived views are built once per instance and cached: name indexes, the networkx topology, k-shortest
routes between two regions with latency and bottleneck bandwidth, per-region speed factors and per-job
reference demands.  Units follow docs/system-model.md: s, ms (one way), Gbit/s, MB, W, USD/kWh.

The optional ``optical`` section (fibres, slots, modulation, candidate paths) is modelled and validated in
``optical.py`` of this package; the instance model imports nothing above ``_check``, ``errors`` and ``files``.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import networkx as nx
import logging

from .. import _check as C
from ..errors import InputError
from ..files import atomic_write
from .optical import OpticalNetwork, parse_optical

SCHEMA = "bace-opt/instance/v1"
log = logging.getLogger(__name__)

# Bounds on magnitudes (docs/decisions.md, "Strict input"): far beyond any real instance, tight enough that no
# figure derived from an accepted instance overflows, loses its run time to rounding (an arrival of 1e9 s
# still resolves a 1 us stage) or makes a later command loop or allocate without end.
MAX_TIME_S = 1e9                 # arrivals, price-series start and span: ~31.7 years
MIN_STAGE_TIME_S = 1e-6
MAX_STAGE_TIME_S = 1e6
MAX_COUNT = 10**6                # stages, micro-batches, GPUs per stage
MAX_ITERATIONS = 10**9
MAX_GPUS = 10**9                 # GPUs of one region
MAX_PRICE_USD_PER_KWH = 100.0    # |price|: real day-ahead caps are ~4-5 USD/kWh; negative prices allowed
MIN_STEP_S = 1.0                 # price-series step
MAX_SERIES_LEN = 10**6
MIN_BANDWIDTH_GBPS = 1e-6
MAX_BANDWIDTH_GBPS = 1e9
MAX_LATENCY_MS = 1e7
MAX_EGRESS_USD_PER_GB = 1e3
MAX_ACTIVATION_MB = 1e9
MAX_MEMORY_GB = 1e6
MAX_TFLOPS = 1e9
MIN_TFLOPS = 1e-6
MAX_POWER_W = 1e7
MAX_PUE = 10.0

#: Idle draw of a GPU type whose ``idle_power_w`` is absent, as a fraction of ``power_w`` (our reading,
#: docs/decisions.md "Cost readings"): a GPU held by a cluster keeps a CUDA context and sits above bare idle.
DEFAULT_IDLE_POWER_FRACTION = 0.25


@dataclass(frozen=True)
class GpuType:
    name: str
    tflops: float
    memory_gb: float
    power_w: float
    idle_power_w: float | None = None   # W drawn by an idle GPU; None: DEFAULT_IDLE_POWER_FRACTION * power_w

    @property
    def idle_w(self) -> float:
        """Idle draw (W): ``idle_power_w`` if given, else ``DEFAULT_IDLE_POWER_FRACTION * power_w``."""
        return self.idle_power_w if self.idle_power_w is not None else DEFAULT_IDLE_POWER_FRACTION * self.power_w


@dataclass(frozen=True)
class PriceSeries:
    """Hourly (or any step) electricity price: value k holds on [start_s + k*step_s, start_s + (k+1)*step_s).

    Before ``start_s`` the first value holds, past the end the last value holds (our reading, stated in
    docs/decisions).
    """
    start_s: float
    step_s: float
    usd_per_kwh: tuple[float, ...]


@dataclass(frozen=True)
class Region:
    name: str
    gpu_type: str
    gpus: int
    price_usd_per_kwh: float
    pue: float = 1.0
    price_series: PriceSeries | None = None


@dataclass(frozen=True)
class Link:
    a: str
    b: str
    bandwidth_gbps: float
    latency_ms: float
    egress_usd_per_gb: float = 0.0


@dataclass(frozen=True)
class Job:
    name: str
    arrival_s: float
    stages: int
    microbatches: int
    iterations: int
    stage_time_s: float
    activation_mb: float
    gpus_per_stage: int = 1
    model: str | None = None
    memory_gb: float | None = None   # per-GPU memory one stage needs; regions with less cannot host it

    @property
    def gpus(self) -> int:
        """GPUs the whole job occupies: g_j * S_j."""
        return self.gpus_per_stage * self.stages


@dataclass(frozen=True)
class Objective:
    egress: bool = False  # include egress USD in the cost that optimizers minimize


@dataclass(frozen=True)
class Route:
    """A path of links between two regions."""
    regions: tuple[str, ...]
    links: tuple[int, ...]          # indexes into Instance.links, in path order
    latency_ms: float               # sum of the links' latencies
    bottleneck_gbps: float          # min capacity over the links
    egress_usd_per_gb: float        # sum of the links' egress prices


@dataclass(frozen=True, eq=True)
class Instance:
    name: str
    gpu_types: Mapping[str, GpuType]
    reference_gpu: str
    regions: tuple[Region, ...]
    links: tuple[Link, ...]
    jobs: tuple[Job, ...]
    objective: Objective = Objective()
    meta: Mapping[str, Any] = field(default_factory=dict)
    optical: OpticalNetwork | None = None   # optional optical layer (instance/optical.py)

    def __post_init__(self):
        # Accept lists/dicts from code; store immutable containers.  Validate like a file would be.
        object.__setattr__(self, "regions", tuple(self.regions))
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "gpu_types", dict(self.gpu_types))
        object.__setattr__(self, "meta", dict(self.meta))

    def __hash__(self):  # instances are used as cache keys by identity
        return id(self)

    # ------------------------------------------------------------------ I/O
    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> "Instance":
        return _parse(data, source)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"schema": SCHEMA, "name": self.name}
        if self.meta:
            out["meta"] = self.meta
        out["gpu_types"] = {g.name: {"tflops": g.tflops, "memory_gb": g.memory_gb, "power_w": g.power_w,
                                     **({} if g.idle_power_w is None else {"idle_power_w": g.idle_power_w})}
                            for g in self.gpu_types.values()}
        out["reference_gpu"] = self.reference_gpu
        regions = []
        for r in self.regions:
            d = {"name": r.name, "gpu_type": r.gpu_type, "gpus": r.gpus,
                 "price_usd_per_kwh": r.price_usd_per_kwh, "pue": r.pue}
            if r.price_series is not None:
                d["price_series"] = {"start_s": r.price_series.start_s, "step_s": r.price_series.step_s,
                                     "usd_per_kwh": list(r.price_series.usd_per_kwh)}
            regions.append(d)
        out["regions"] = regions
        out["links"] = [{"a": l.a, "b": l.b, "bandwidth_gbps": l.bandwidth_gbps, "latency_ms": l.latency_ms,
                         "egress_usd_per_gb": l.egress_usd_per_gb} for l in self.links]
        jobs = []
        for j in self.jobs:
            d = {"name": j.name, "arrival_s": j.arrival_s, "stages": j.stages, "gpus_per_stage": j.gpus_per_stage,
                 "microbatches": j.microbatches, "iterations": j.iterations, "stage_time_s": j.stage_time_s,
                 "activation_mb": j.activation_mb}
            if j.model is not None:
                d["model"] = j.model
            if j.memory_gb is not None:
                d["memory_gb"] = j.memory_gb
            jobs.append(d)
        out["jobs"] = jobs
        out["objective"] = {"egress": self.objective.egress}
        if self.optical is not None:
            out["optical"] = self.optical.to_dict()
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def save(self, path) -> None:
        atomic_write(path, self.to_json())

    def validated(self) -> "Instance":
        """Re-check an instance built in code (dataclass constructors do not validate)."""
        return _parse(self.to_dict(), self.name)

    def replace(self, **changes) -> "Instance":
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ derived views (built once)
    @cached_property
    def region_index(self) -> dict[str, int]:
        return {r.name: i for i, r in enumerate(self.regions)}

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {j.name: i for i, j in enumerate(self.jobs)}

    @cached_property
    def link_index(self) -> dict[tuple[str, str], int]:
        """(a, b) and (b, a) -> index of the link joining them."""
        d = {}
        for i, l in enumerate(self.links):
            d[(l.a, l.b)] = i
            d[(l.b, l.a)] = i
        return d

    @cached_property
    def link_ends(self) -> tuple[tuple[int, int], ...]:
        """Each link's end regions as ``region_index`` integers."""
        ri = self.region_index
        return tuple((ri[l.a], ri[l.b]) for l in self.links)

    def region(self, name: str) -> Region:
        return self.regions[self.region_index[name]]

    def job(self, name: str) -> Job:
        return self.jobs[self.job_index[name]]

    def gpu(self, region: str) -> GpuType:
        return self.gpu_types[self.region(region).gpu_type]

    @cached_property
    def speed(self) -> dict[str, float]:
        """Speed factor f_r = tflops_r / tflops_ref of each region's GPU type."""
        ref = self.gpu_types[self.reference_gpu].tflops
        return {r.name: self.gpu_types[r.gpu_type].tflops / ref for r in self.regions}

    @cached_property
    def total_gpus(self) -> int:
        return sum(r.gpus for r in self.regions)

    @cached_property
    def compute_regions(self) -> tuple[str, ...]:
        """Regions with at least one GPU (the others are transit nodes)."""
        return tuple(r.name for r in self.regions if r.gpus > 0)

    def eligible_regions(self, job: Job) -> tuple[str, ...]:
        """Regions that can host a stage of ``job``: enough GPUs for one stage and, if the job states its
        per-GPU memory need, enough GPU memory."""
        out = []
        for r in self.regions:
            if r.gpus < job.gpus_per_stage:
                continue
            if job.memory_gb is not None and self.gpu_types[r.gpu_type].memory_gb < job.memory_gb:
                continue
            out.append(r.name)
        return tuple(out)

    @cached_property
    def graph(self) -> nx.Graph:
        """Undirected topology: nodes are region names, edges carry the link attributes and ``index``."""
        g = nx.Graph()
        for r in self.regions:
            g.add_node(r.name, gpus=r.gpus)
        for i, l in enumerate(self.links):
            g.add_edge(l.a, l.b, index=i, bandwidth_gbps=l.bandwidth_gbps, latency_ms=l.latency_ms,
                       egress_usd_per_gb=l.egress_usd_per_gb)
        return g

    @cached_property
    def _route_cache(self) -> dict:
        return {}

    @cached_property
    def _route_obj_cache(self) -> dict:
        return {}

    def route(self, regions) -> Route:
        """The Route object for an explicit list of regions (assumed a valid path; a KeyError otherwise).
        Kept per instance (a ``Route`` is frozen and the instance's links are fixed): the evaluator asks it for
        every hop of every plan, twice."""
        regions = tuple(regions)
        cache = self._route_obj_cache
        r = cache.get(regions)
        if r is None:
            idx = tuple(self.link_index[(u, v)] for u, v in zip(regions, regions[1:]))
            links = [self.links[i] for i in idx]
            r = cache[regions] = Route(regions, idx, sum(l.latency_ms for l in links),
                                       min((l.bandwidth_gbps for l in links), default=math.inf),
                                       sum(l.egress_usd_per_gb for l in links))
        return r

    def routes(self, src: str, dst: str, k: int | None = 4) -> list[Route]:
        """The k lowest-latency simple paths from src to dst (all simple paths when k is None), in order of
        (latency, hops).  Cached per (src, dst, k)."""
        key = (src, dst, k)
        cache = self._route_cache
        if key not in cache:
            if src == dst:
                cache[key] = []
            else:
                gen = nx.shortest_simple_paths(self.graph, src, dst, weight=_latency_weight)
                paths = list(gen if k is None else itertools.islice(gen, k))
                rs = [self.route(p) for p in paths]
                rs.sort(key=lambda r: (r.latency_ms, len(r.regions), r.regions))
                cache[key] = rs
        return cache[key]

    def direct_or_shortest(self, src: str, dst: str) -> Route:
        return self.routes(src, dst, 1)[0]


def _latency_weight(u, v, d):
    # a tiny per-hop term makes ties between equal-latency paths prefer fewer hops
    return d["latency_ms"] + 1e-9


# ---------------------------------------------------------------------- loading and validation

def load_instance(path) -> Instance:
    """Load and validate an instance file; raises InputError listing every problem.  Logs a warning when
    some electricity price is negative (see ``negative_price_regions``)."""
    data = C.read_json(path, "instance file")
    C.refuse_other_schema(data, path, SCHEMA, "an instance file")
    inst = _parse(data, str(path))
    neg = negative_price_regions(inst)
    if neg:
        log.warning("%s: negative electricity prices in region(s) %s: accepted (real day-ahead markets have "
                    "them); cost is taken literally, so minimizing cost rewards energy used in those hours and "
                    "a slower placement there costs less (docs/decisions.md, 'Negative prices')", path,
                    ", ".join(neg))
    return inst


def negative_price_regions(inst: Instance) -> list[str]:
    """Regions whose constant price or some hourly price is negative."""
    return [r.name for r in inst.regions
            if r.price_usd_per_kwh < 0 or (r.price_series is not None and min(r.price_series.usd_per_kwh) < 0)]


def _parse(data: Any, source: str | None) -> Instance:
    """Every section in turn (each problem recorded with its place), then the whole-instance checks."""
    p = C.Problems()
    top = C.obj(p, "", data, {"schema", "name", "gpu_types", "reference_gpu", "regions", "links", "jobs"},
                {"meta", "objective", "optical"})
    if top is None:
        p.raise_if_any(source)
    if "schema" in top and top["schema"] != SCHEMA:
        p.add("schema", f"must be {SCHEMA!r}, got {top['schema']!r}")
    name = C.string(p, "name", top.get("name", C.MISSING), default="")
    meta = top.get("meta", {})
    if not isinstance(meta, dict):
        p.add("meta", "must be an object")
        meta = {}
    C.finite_tree(p, "meta", meta)
    gt = top.get("gpu_types", C.MISSING)
    gpu_types = _parse_gpu_types(p, gt)
    ref = C.string(p, "reference_gpu", top.get("reference_gpu", C.MISSING), default=None)
    if ref is not None and isinstance(gt, dict) and ref not in gt:
        p.add("reference_gpu", f"unknown GPU type {ref!r} (known: {', '.join(sorted(gt))})")
    regions, rnames = _parse_regions(p, top.get("regions", C.MISSING), gt)
    links = _parse_links(p, top.get("links", C.MISSING), rnames)
    raw_jobs = top.get("jobs", C.MISSING)
    jobs = _parse_jobs(p, raw_jobs)
    objective = _parse_objective(p, top)

    # Whole-instance checks (only meaningful when the parts parsed)
    if regions and not p:
        _check_topology(p, regions, links)
        _check_jobs_fit(p, gpu_types, regions, raw_jobs, jobs)
    # the optional optical section (optical.py, models/optical.md section 1): every problem with its field path,
    # including region pairs with GPUs that no fibre path within a modulation's reach joins
    optical = (parse_optical(p, "optical", top["optical"], region_names=sorted(rnames),
                             compute_regions=[r.name for r in regions if r.gpus > 0]) if "optical" in top else None)
    p.raise_if_any(source)
    return Instance(name=name, gpu_types=gpu_types, reference_gpu=ref, regions=tuple(regions), links=tuple(links),
                    jobs=tuple(jobs), objective=objective, meta=meta, optical=optical)


def _parse_gpu_types(p: C.Problems, gt: Any) -> dict[str, GpuType]:
    """The ``gpu_types`` section: name -> figures (``idle_power_w`` optional)."""
    gpu_types: dict[str, GpuType] = {}
    if gt is not C.MISSING:
        if not isinstance(gt, dict) or not gt:
            p.add("gpu_types", "must be a non-empty object mapping a GPU type name to its figures")
        else:
            for gname, spec in gt.items():
                w = f"gpu_types.{gname}"
                if C.obj(p, w, spec, {"tflops", "memory_gb", "power_w"}, {"idle_power_w"}) is None:
                    continue
                tf = C.num(p, w + ".tflops", spec.get("tflops", C.MISSING), gt=0, ge=MIN_TFLOPS, le=MAX_TFLOPS,
                           default=None)
                mem = C.num(p, w + ".memory_gb", spec.get("memory_gb", C.MISSING), gt=0, le=MAX_MEMORY_GB,
                            default=None)
                pw = C.num(p, w + ".power_w", spec.get("power_w", C.MISSING), ge=0, le=MAX_POWER_W, default=None)
                idle = None
                if "idle_power_w" in spec:   # optional; absent: a stated fraction of power_w (GpuType.idle_w)
                    idle = C.num(p, w + ".idle_power_w", spec["idle_power_w"], ge=0, le=MAX_POWER_W)
                    if idle is not None and pw is not None and idle > pw:
                        p.add(w + ".idle_power_w", f"must be <= power_w ({pw:g} W), got {idle:g}")
                        idle = None
                if None not in (tf, mem, pw) and (idle is not None or "idle_power_w" not in spec):
                    gpu_types[gname] = GpuType(gname, tf, mem, pw, idle)
    return gpu_types


def _parse_regions(p: C.Problems, raw_regions: Any, gt: Any) -> tuple[list[Region], set[str]]:
    """The ``regions`` section (GPU types checked against ``gt``, the raw ``gpu_types``); also the names seen."""
    regions: list[Region] = []
    rnames: set[str] = set()
    if raw_regions is not C.MISSING and C.array(p, "regions", raw_regions, nonempty=True) is not None:
        for i, r in enumerate(raw_regions):
            w = f"regions[{i}]"
            if C.obj(p, w, r, {"name", "gpu_type", "gpus", "price_usd_per_kwh"}, {"pue", "price_series"}) is None:
                continue
            rn = C.string(p, w + ".name", r.get("name", C.MISSING), default=None)
            if rn is not None:
                if rn in rnames:
                    p.add(w + ".name", f"duplicate region name {rn!r}")
                rnames.add(rn)
            gtype = C.string(p, w + ".gpu_type", r.get("gpu_type", C.MISSING), default=None)
            if gtype is not None and isinstance(gt, dict) and gtype not in gt:
                p.add(w + ".gpu_type", f"unknown GPU type {gtype!r} (known: {', '.join(sorted(gt))})")
            gpus = C.integer(p, w + ".gpus", r.get("gpus", C.MISSING), ge=0, le=MAX_GPUS, default=None)
            price = C.num(p, w + ".price_usd_per_kwh", r.get("price_usd_per_kwh", C.MISSING),
                          ge=-MAX_PRICE_USD_PER_KWH, le=MAX_PRICE_USD_PER_KWH, default=None)
            pue = C.num(p, w + ".pue", r.get("pue", C.MISSING), ge=1.0, le=MAX_PUE, default=1.0)
            series = None
            if "price_series" in r:
                series = _parse_series(p, w + ".price_series", r["price_series"])
            if None not in (rn, gtype, gpus, price, pue):
                regions.append(Region(rn, gtype, gpus, price, pue, series))
    return regions, rnames


def _parse_links(p: C.Problems, raw_links: Any, rnames: set[str]) -> list[Link]:
    """The ``links`` section: ends among the region names, at most one link per pair."""
    links: list[Link] = []
    seen_pairs: dict[frozenset, int] = {}
    if raw_links is not C.MISSING and C.array(p, "links", raw_links) is not None:
        for i, l in enumerate(raw_links):
            w = f"links[{i}]"
            if C.obj(p, w, l, {"a", "b", "bandwidth_gbps", "latency_ms"}, {"egress_usd_per_gb"}) is None:
                continue
            a = C.string(p, w + ".a", l.get("a", C.MISSING), default=None)
            b = C.string(p, w + ".b", l.get("b", C.MISSING), default=None)
            for end, v in (("a", a), ("b", b)):
                if v is not None and v not in rnames:
                    p.add(f"{w}.{end}", f"unknown region {v!r}")
            if a is not None and a == b:
                p.add(w, f"self-loop: both ends are {a!r}")
            elif a is not None and b is not None:
                key = frozenset((a, b))
                if key in seen_pairs:
                    p.add(w, f"duplicate link {a!r}-{b!r} (also links[{seen_pairs[key]}]); at most one per pair")
                else:
                    seen_pairs[key] = i
            bw = C.num(p, w + ".bandwidth_gbps", l.get("bandwidth_gbps", C.MISSING), gt=0, ge=MIN_BANDWIDTH_GBPS,
                       le=MAX_BANDWIDTH_GBPS, default=None)
            lat = C.num(p, w + ".latency_ms", l.get("latency_ms", C.MISSING), ge=0, le=MAX_LATENCY_MS, default=None)
            eg = C.num(p, w + ".egress_usd_per_gb", l.get("egress_usd_per_gb", C.MISSING), ge=0,
                       le=MAX_EGRESS_USD_PER_GB, default=0.0)
            if None not in (a, b, bw, lat, eg) and a != b:
                links.append(Link(a, b, bw, lat, eg))
    return links


def _parse_jobs(p: C.Problems, raw_jobs: Any) -> list[Job]:
    """The ``jobs`` section: unique names, every figure within its bounds."""
    jobs: list[Job] = []
    jnames: set[str] = set()
    if raw_jobs is not C.MISSING and C.array(p, "jobs", raw_jobs) is not None:
        for i, j in enumerate(raw_jobs):
            w = f"jobs[{i}]"
            if C.obj(p, w, j, {"name", "arrival_s", "stages", "microbatches", "iterations", "stage_time_s",
                               "activation_mb"}, {"gpus_per_stage", "model", "memory_gb"}) is None:
                continue
            jn = C.string(p, w + ".name", j.get("name", C.MISSING), default=None)
            if jn is not None:
                if jn in jnames:
                    p.add(w + ".name", f"duplicate job name {jn!r}")
                jnames.add(jn)
            vals = dict(
                name=jn,
                arrival_s=C.num(p, w + ".arrival_s", j.get("arrival_s", C.MISSING), ge=0, le=MAX_TIME_S,
                                default=None),
                stages=C.integer(p, w + ".stages", j.get("stages", C.MISSING), ge=1, le=MAX_COUNT, default=None),
                microbatches=C.integer(p, w + ".microbatches", j.get("microbatches", C.MISSING), ge=1, le=MAX_COUNT,
                                       default=None),
                iterations=C.integer(p, w + ".iterations", j.get("iterations", C.MISSING), ge=1, le=MAX_ITERATIONS,
                                     default=None),
                stage_time_s=C.num(p, w + ".stage_time_s", j.get("stage_time_s", C.MISSING), gt=0, ge=MIN_STAGE_TIME_S,
                                   le=MAX_STAGE_TIME_S, default=None),
                activation_mb=C.num(p, w + ".activation_mb", j.get("activation_mb", C.MISSING), gt=0,
                                    le=MAX_ACTIVATION_MB, default=None),
                gpus_per_stage=C.integer(p, w + ".gpus_per_stage", j.get("gpus_per_stage", C.MISSING), ge=1,
                                         le=MAX_COUNT, default=1),
            )
            model = C.string(p, w + ".model", j.get("model", C.MISSING), default=None)
            mem = C.num(p, w + ".memory_gb", j.get("memory_gb", C.MISSING), gt=0, le=MAX_MEMORY_GB, default=None)
            if None not in vals.values():
                jobs.append(Job(**vals, model=model, memory_gb=mem))
    return jobs


def _parse_objective(p: C.Problems, top: dict) -> Objective:
    """The optional ``objective`` section (whether egress counts in the cost)."""
    objective = Objective()
    if "objective" in top:
        o = C.obj(p, "objective", top["objective"], set(), {"egress"})
        if o is not None:
            eg = C.boolean(p, "objective.egress", o.get("egress", C.MISSING), default=False)
            objective = Objective(egress=bool(eg))
    return objective


def _parse_series(p: C.Problems, w: str, s: Any) -> PriceSeries | None:
    if C.obj(p, w, s, {"start_s", "step_s", "usd_per_kwh"}, set()) is None:
        return None
    start = C.num(p, w + ".start_s", s.get("start_s", C.MISSING), ge=-MAX_TIME_S, le=MAX_TIME_S, default=None)
    step = C.num(p, w + ".step_s", s.get("step_s", C.MISSING), gt=0, ge=MIN_STEP_S, le=MAX_TIME_S, default=None)
    vals = s.get("usd_per_kwh", C.MISSING)
    out = None
    if vals is not C.MISSING and C.array(p, w + ".usd_per_kwh", vals, nonempty=True) is not None:
        if len(vals) > MAX_SERIES_LEN:
            p.add(w + ".usd_per_kwh", f"at most {MAX_SERIES_LEN} values, got {len(vals)}")
            return None
        out = []
        for k, v in enumerate(vals):
            x = C.num(p, f"{w}.usd_per_kwh[{k}]", v, ge=-MAX_PRICE_USD_PER_KWH, le=MAX_PRICE_USD_PER_KWH,
                      default=None)
            out.append(x)
        if None in out:
            out = None
    if None in (start, step, out):
        return None
    if abs(start + step * len(out)) > 2 * MAX_TIME_S:
        p.add(w, f"the series ends at {start + step * len(out):g} s, beyond {2 * MAX_TIME_S:g} s")
        return None
    return PriceSeries(start, step, tuple(out))


def _check_topology(p: C.Problems, regions: list[Region], links: list[Link]) -> None:
    g = nx.Graph()
    g.add_nodes_from(r.name for r in regions)
    g.add_edges_from((l.a, l.b) for l in links)
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c))
    if len(comps) > 1:
        main = comps[0]
        for c in comps[1:]:
            p.add("links", f"topology is disconnected: region(s) {', '.join(c)} cannot reach "
                           f"{', '.join(main[:3])}{'...' if len(main) > 3 else ''}")


def _check_jobs_fit(p: C.Problems, gpu_types: dict, regions: list[Region], raw_jobs: list, jobs: list[Job]) -> None:
    total = sum(r.gpus for r in regions)
    max_region = max((r.gpus for r in regions), default=0)
    pos = {j.get("name"): i for i, j in enumerate(raw_jobs) if isinstance(j, dict)}
    for j in jobs:
        w = f"jobs[{pos.get(j.name, '?')}]"
        if j.gpus > total:
            p.add(w, f"job {j.name!r} needs {j.gpus} GPUs ({j.stages} stages x {j.gpus_per_stage}), "
                     f"more than the whole instance has ({total})")
        elif j.gpus_per_stage > max_region:
            p.add(w + ".gpus_per_stage", f"{j.gpus_per_stage} GPUs per stage, but no region has that many "
                                         f"(largest: {max_region})")
        elif sum(r.gpus // j.gpus_per_stage for r in regions) < j.stages:
            slots = sum(r.gpus // j.gpus_per_stage for r in regions)
            p.add(w, f"job {j.name!r} needs {j.stages} stages of {j.gpus_per_stage} GPUs in one region each; "
                     f"the regions hold only {slots} such stages")
        if j.memory_gb is not None:
            ok = [r for r in regions if r.gpus >= j.gpus_per_stage and gpu_types[r.gpu_type].memory_gb >= j.memory_gb]
            cap = sum(r.gpus // j.gpus_per_stage for r in ok) * j.gpus_per_stage
            if not ok:
                p.add(w + ".memory_gb", f"needs {j.memory_gb:g} GB per GPU; no region's GPU type has that much")
            elif cap < j.gpus:
                p.add(w, f"job {j.name!r} needs {j.gpus} GPUs with >= {j.memory_gb:g} GB, only {cap} exist")
