"""The instance parameters an adversarial search may change, with their bounds, per family.

A ``Space`` is a fixed set of named Optuna distributions (so a resumed search can re-tell Optuna the finished
trials) and a ``build(params)`` that turns one point into a valid ``Instance`` of the chosen size.  The bounds
are the family's own ranges, so every candidate is an instance the family's builder could have drawn:

random  (``bace_opt.builders.synthetic``'s ranges; full mesh, one GPU type, g_j = 1; sizes fixed by the
        config): per region GPUs 1..max_gpus_per_region, price 0.05..0.40 USD/kWh, PUE 1.0..1.3; per link
        bandwidth 1..20 Gbit/s, latency 1..60 ms; per job stages 1..max_stages (capped by the cluster's GPUs),
        micro-batches 1..8, iterations 1..50, stage time 0.05..2 s (log scale), activation 1..200 MB (log),
        arrival 0..max_arrival_s (only when max_arrival_s > 0; P1 decides at the latest arrival with every job
        waiting, so arrivals change only the priority ties there).
paper   (``bace_opt.builders.paper``'s ranges; the six paper regions with their great-circle latencies): per
        region GPUs from {16, 32, 64, 128}, price 0.156..0.295 USD/kWh, network bandwidth 25..100 Gbit/s (a
        link gets the mean of its two ends, the paper's rule); the jobs are the family's jobs of a job seed
        1..1000 (which LLMs and datasets; stages by the paper's K* rule for the cluster drawn).
realistic  a shipped realistic instance (``instances/realistic-6r-8j-seed1.json``, Skyplane bandwidth,
        hourly prices): per region GPUs from {16, 32, 64, 128}; per link bandwidth x 0.3..1.5 (the paper's
        sensitivity range); per region hourly price series x 0.5..1.5; jobs and latencies as shipped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError
from ..instance import Instance

FAMILIES = ("random", "paper", "realistic")
ROOT = Path(__file__).resolve().parents[2]
REALISTIC_BASE = "instances/realistic-6r-8j-seed1.json"


@dataclass(frozen=True)
class SpaceConfig:
    """What the search may change and the fixed size of its instances."""
    family: str = "random"
    n_regions: int = 4
    n_jobs: int = 6
    max_gpus_per_region: int = 8
    max_stages: int = 4
    max_arrival_s: float = 0.0
    base: str | None = None          # realistic: the instance file perturbed (default REALISTIC_BASE)

    def check(self) -> None:
        probs = []
        if self.family not in FAMILIES:
            probs.append(f"family: must be one of {', '.join(FAMILIES)}, got {self.family!r}")
        for name, lo in (("n_regions", 2), ("n_jobs", 1), ("max_gpus_per_region", 1), ("max_stages", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                probs.append(f"{name}: must be an integer >= {lo}, got {v!r}")
        if self.family == "paper" and self.n_regions != 6:
            probs.append(f"n_regions: the paper family has 6 regions, got {self.n_regions}")
        if not (isinstance(self.max_arrival_s, (int, float)) and math.isfinite(self.max_arrival_s)
                and self.max_arrival_s >= 0):
            probs.append(f"max_arrival_s: must be >= 0, got {self.max_arrival_s!r}")
        if probs:
            raise InputError(probs)


@dataclass
class Space:
    config: SpaceConfig
    distributions: dict = field(default_factory=dict)

    def build(self, params: Mapping[str, Any], name: str = "adversary") -> Instance:
        return _BUILD[self.config.family](self, params, name)


def make_space(config: SpaceConfig) -> Space:
    """The distributions of ``config``'s family and size."""
    import optuna.distributions as D
    config.check()
    c = config
    d: dict = {}
    if c.family == "random":
        for i in range(c.n_regions):
            d[f"r{i}.gpus"] = D.IntDistribution(1, c.max_gpus_per_region)
            d[f"r{i}.price"] = D.FloatDistribution(0.05, 0.40)
            d[f"r{i}.pue"] = D.FloatDistribution(1.0, 1.3)
        for i in range(c.n_regions):
            for j in range(i + 1, c.n_regions):
                d[f"l{i}-{j}.bw"] = D.FloatDistribution(1.0, 20.0)
                d[f"l{i}-{j}.lat"] = D.FloatDistribution(1.0, 60.0)
        for k in range(c.n_jobs):
            d[f"j{k}.stages"] = D.IntDistribution(1, c.max_stages)
            d[f"j{k}.microbatches"] = D.IntDistribution(1, 8)
            d[f"j{k}.iterations"] = D.IntDistribution(1, 50)
            d[f"j{k}.stage_time"] = D.FloatDistribution(0.05, 2.0, log=True)
            d[f"j{k}.activation"] = D.FloatDistribution(1.0, 200.0, log=True)
            if c.max_arrival_s > 0:
                d[f"j{k}.arrival"] = D.FloatDistribution(0.0, float(c.max_arrival_s))
    elif c.family == "paper":
        from ..builders.paper import BANDWIDTH_RANGE_GBPS, GPU_COUNTS, PRICE_RANGE_USD_PER_KWH
        for i in range(6):
            d[f"r{i}.gpus"] = D.CategoricalDistribution(list(GPU_COUNTS))
            d[f"r{i}.price"] = D.FloatDistribution(*PRICE_RANGE_USD_PER_KWH)
            d[f"r{i}.bw"] = D.FloatDistribution(*BANDWIDTH_RANGE_GBPS)
        d["job_seed"] = D.IntDistribution(1, 1000)
    else:
        from ..builders.paper import GPU_COUNTS
        base = _realistic_base(c)
        for i, r in enumerate(base.regions):
            if r.gpus > 0:
                d[f"r{i}.gpus"] = D.CategoricalDistribution(list(GPU_COUNTS))
                d[f"r{i}.price_scale"] = D.FloatDistribution(0.5, 1.5)
        for e in range(len(base.links)):
            d[f"l{e}.bw_scale"] = D.FloatDistribution(0.3, 1.5)
    return Space(config, d)


def _realistic_base(c: SpaceConfig) -> Instance:
    from ..instance import load_instance
    p = Path(c.base or REALISTIC_BASE)
    return load_instance(p if p.is_absolute() else ROOT / p)


def _build_random(space: Space, p: Mapping[str, Any], name: str) -> Instance:
    from ..builders.synthetic import GPU_TYPES
    c = space.config
    regions = [{"name": f"r{i}", "gpu_type": "G1", "gpus": int(p[f"r{i}.gpus"]),
                "price_usd_per_kwh": round(float(p[f"r{i}.price"]), 4), "pue": round(float(p[f"r{i}.pue"]), 3)}
               for i in range(c.n_regions)]
    links = [{"a": f"r{i}", "b": f"r{j}", "bandwidth_gbps": round(float(p[f"l{i}-{j}.bw"]), 3),
              "latency_ms": round(float(p[f"l{i}-{j}.lat"]), 3), "egress_usd_per_gb": 0.0}
             for i in range(c.n_regions) for j in range(i + 1, c.n_regions)]
    slots = sum(r["gpus"] for r in regions)
    jobs = [{"name": f"j{k}", "arrival_s": round(float(p.get(f"j{k}.arrival", 0.0)), 3),
             "stages": min(int(p[f"j{k}.stages"]), slots), "gpus_per_stage": 1,
             "microbatches": int(p[f"j{k}.microbatches"]), "iterations": int(p[f"j{k}.iterations"]),
             "stage_time_s": round(float(p[f"j{k}.stage_time"]), 4),
             "activation_mb": round(float(p[f"j{k}.activation"]), 3)} for k in range(c.n_jobs)]
    data = {"schema": "bace-opt/instance/v1", "name": name,
            "meta": {"source": "bace_opt.adversary (synthetic, no data; the random family's ranges)",
                     "family": "random"},
            "gpu_types": {"G1": dict(GPU_TYPES["G1"])}, "reference_gpu": "G1", "regions": regions,
            "links": links, "jobs": jobs, "objective": {"egress": False}}
    return Instance.from_dict(data, source=name)


def _build_paper(space: Space, p: Mapping[str, Any], name: str) -> Instance:
    from ..builders import geo
    from ..builders.paper import EGRESS_USD_PER_GB, PAPER_REGIONS, paper_instance, paper_jobs
    c = space.config
    base = paper_instance(seed=1, jobs=c.n_jobs).to_dict()
    gpus = [int(p[f"r{i}.gpus"]) for i in range(6)]
    bw = [float(p[f"r{i}.bw"]) for i in range(6)]
    for i, r in enumerate(base["regions"]):
        r["gpus"] = gpus[i]
        r["price_usd_per_kwh"] = round(float(p[f"r{i}.price"]), 3)
    links = []
    for i, a in enumerate(PAPER_REGIONS):
        for j in range(i + 1, len(PAPER_REGIONS)):
            b = PAPER_REGIONS[j]
            links.append({"a": a.name, "b": b.name, "bandwidth_gbps": round((bw[i] + bw[j]) / 2, 3),
                          "latency_ms": geo.pair_latency_ms(geo.CITY_COORDS[a.city], geo.CITY_COORDS[b.city]),
                          "egress_usd_per_gb": float(EGRESS_USD_PER_GB)})
    base["links"] = links
    gpu = base["reference_gpu"]
    base["jobs"], notes = paper_jobs(int(p["job_seed"]), c.n_jobs, gpu, sum(gpus), max_stages=max(gpus))
    base["name"] = name
    base["meta"] = {"source": base["meta"]["source"] + "; parameters chosen by bace_opt.adversary within the "
                    "paper family's ranges", "family": "paper", "job_profiles": notes}
    return Instance.from_dict(base, source=name)


def _build_realistic(space: Space, p: Mapping[str, Any], name: str) -> Instance:
    base = _realistic_base(space.config).to_dict()
    for i, r in enumerate(base["regions"]):
        if f"r{i}.gpus" in p:
            r["gpus"] = int(p[f"r{i}.gpus"])
            s = float(p[f"r{i}.price_scale"])
            r["price_usd_per_kwh"] = round(r["price_usd_per_kwh"] * s, 5)
            if r.get("price_series"):
                r["price_series"]["usd_per_kwh"] = [round(v * s, 5) for v in r["price_series"]["usd_per_kwh"]]
    for e, l in enumerate(base["links"]):
        l["bandwidth_gbps"] = round(l["bandwidth_gbps"] * float(p[f"l{e}.bw_scale"]), 3)
    total = sum(r["gpus"] for r in base["regions"])
    for j in base["jobs"]:
        j["stages"] = min(j["stages"], total // j.get("gpus_per_stage", 1))
    base["name"] = name
    base["meta"] = {"source": f"{base['meta'].get('source', '')}; perturbed by bace_opt.adversary "
                              f"(GPUs, link bandwidth x0.3-1.5, prices x0.5-1.5)", "family": "realistic"}
    return Instance.from_dict(base, source=name)


_BUILD = {"random": _build_random, "paper": _build_paper, "realistic": _build_realistic}


def features(inst: Instance) -> dict[str, float]:
    """Instance features whose correlation with the gap the search reports (computed, never searched)."""
    from .. import formulas as F
    prices = [r.price_usd_per_kwh * r.pue for r in inst.regions if r.gpus > 0]
    gpus = [r.gpus for r in inst.regions if r.gpus > 0]
    total = sum(gpus)
    demand = sum(j.stages * j.gpus_per_stage for j in inst.jobs)
    bws = [l.bandwidth_gbps for l in inst.links]
    lats = [l.latency_ms for l in inst.links]
    b_j = [F.demand_gbps(j, j.stage_time_s) for j in inst.jobs]
    comp = [F.compute_s(j) for j in inst.jobs]
    cheapest = min(range(len(prices)), key=lambda i: prices[i])

    def cv(xs):
        m = sum(xs) / len(xs)
        return (sum((x - m) ** 2 for x in xs) / len(xs)) ** 0.5 / m if m > 0 else 0.0
    return {
        "price_spread": max(prices) / min(prices) if min(prices) > 0 else float("inf"),
        "price_cv": cv(prices),
        "gpu_demand_over_supply": demand / total,
        "cheapest_region_share": gpus[cheapest] / total,
        "cheapest_region_fits_jobs": sum(1 for j in inst.jobs if j.stages * j.gpus_per_stage <= gpus[cheapest]),
        "jobs_needing_multi_region": sum(1 for j in inst.jobs if j.stages * j.gpus_per_stage > max(gpus)),
        "bw_binding_share": sum(1 for b in b_j for w in bws if w < b) / (len(b_j) * len(bws)) if bws else 0.0,
        "mean_demand_over_bw": (sum(b_j) / len(b_j)) / (sum(bws) / len(bws)) if bws else 0.0,
        "mean_latency_ms": sum(lats) / len(lats) if lats else 0.0,
        "compute_cv": cv(comp),
        "mean_stages": sum(j.stages for j in inst.jobs) / len(inst.jobs),
    }
