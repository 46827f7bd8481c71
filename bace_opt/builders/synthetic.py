"""The ``random`` family: small, always-valid instances of any size for property tests and exact models.

``random_instance(seed, ...)`` is deterministic for a seed (all draws from named ``_random.Stream``s).  It
always returns a valid instance: the topology is connected (a mesh, or a random spanning tree plus extra
edges), every job fits the cluster (S_j * g_j <= the GPUs of the regions that can hold a stage), and transit
regions (gpus 0) are interior nodes of the sparse topology (each joins at least two others) so that they
actually carry traffic.

Ranges (small on purpose, so exact models can solve instances with a few regions and jobs):
GPUs per region 1..max_gpus_per_region; stages 1..max_stages (capped by the cluster); micro-batches 1..8;
iterations 1..50; stage time 0.05..2 s; activation 1..200 MB; link bandwidth 1..20 Gbit/s; latency 1..60 ms;
price 0.05..0.40 USD/kWh (hourly: 24 values around the region's base price, +-50%); egress 0..0.05 USD/GB;
arrivals 0..max_arrival_s (0 gives every job arrival 0).  Numbers are rounded (3-4 decimals) so files stay
readable.
"""
from __future__ import annotations

from ..errors import InputError
from ..instance import Instance
from ._random import Stream

SOURCE = "bace_opt.builders.synthetic.random_instance"

GPU_TYPES = {
    "G1": {"tflops": 100.0, "memory_gb": 40.0, "power_w": 300.0},
    "G2": {"tflops": 150.0, "memory_gb": 80.0, "power_w": 400.0},
}


def random_instance(seed: int = 0, n_regions: int = 3, n_jobs: int = 3, *, topology: str = "mesh", transit: int = 0,
                    hourly_prices: bool = False, mixed_gpus: bool = False, max_gpus_per_region: int = 8,
                    max_stages: int = 4, max_gpus_per_stage: int = 1, max_arrival_s: float = 0.0,
                    egress: bool = False, extra_edges: int | None = None, name: str | None = None) -> Instance:
    """A random valid instance.

    n_regions: regions with GPUs; transit: extra regions with gpus 0 (needs topology="sparse");
    topology: "mesh" (every pair linked) or "sparse" (random spanning tree + ``extra_edges`` more edges,
    default n // 2); hourly_prices: each region gets a 24-value hourly price series; mixed_gpus: regions draw
    one of two GPU types (speed factors 1 and 1.5); max_gpus_per_stage > 1 draws g_j in 1..that (capped by
    the largest region); egress: links get an egress price and ``objective.egress`` is true.
    """
    problems = []
    for nm, v, lo in (("seed", seed, 0), ("n_regions", n_regions, 1), ("n_jobs", n_jobs, 0), ("transit", transit, 0),
                      ("max_gpus_per_region", max_gpus_per_region, 1), ("max_stages", max_stages, 1),
                      ("max_gpus_per_stage", max_gpus_per_stage, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            problems.append(f"{nm} must be an integer >= {lo}, got {v!r}")
    if topology not in ("mesh", "sparse"):
        problems.append(f"topology must be 'mesh' or 'sparse', got {topology!r}")
    if transit and topology != "sparse":
        problems.append("transit regions need topology='sparse' (in a mesh nothing is routed through them)")
    if not max_arrival_s >= 0:
        problems.append(f"max_arrival_s must be >= 0, got {max_arrival_s!r}")
    if extra_edges is not None and (not isinstance(extra_edges, int) or extra_edges < 0):
        problems.append(f"extra_edges must be an integer >= 0, got {extra_edges!r}")
    if problems:
        raise InputError(problems, "random_instance")

    def S(*key):
        return Stream("bace-opt/random", seed, *key)

    # ---- regions
    gtypes = dict(GPU_TYPES) if mixed_gpus else {"G1": GPU_TYPES["G1"]}
    regions = []
    for i in range(n_regions):
        s = S("region", i)
        gt = s.choice(sorted(gtypes)) if mixed_gpus else "G1"
        base = round(s.uniform(0.05, 0.40), 4)
        r = {"name": f"r{i}", "gpu_type": gt, "gpus": s.integer(1, max_gpus_per_region), "price_usd_per_kwh": base,
             "pue": round(s.uniform(1.0, 1.3), 3)}
        if hourly_prices:
            r["price_series"] = {"start_s": 0.0, "step_s": 3600.0,
                                 "usd_per_kwh": [round(base * s.uniform(0.5, 1.5), 4) for _ in range(24)]}
        regions.append(r)
    for i in range(transit):
        regions.append({"name": f"t{i}", "gpu_type": "G1", "gpus": 0, "price_usd_per_kwh": 0.0, "pue": 1.0})
    names = [r["name"] for r in regions]
    n = len(names)

    # ---- topology
    ts = S("topology")
    pairs: list[tuple[int, int]] = []
    if topology == "mesh":
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    else:
        # random spanning tree: a random order; compute regions first, transit nodes inserted in the middle
        # of the chain-like growth so each transit node gets >= 2 neighbours (attach one later node to it)
        order = ts.permutation(range(n_regions))
        for t in range(transit):
            order.insert(ts.integer(1, max(1, len(order) - 1)), n_regions + t)
        for k in range(1, len(order)):
            prev = order[ts.integer(0, k - 1)]
            pairs.append(tuple(sorted((prev, order[k]))))
        deg = {i: 0 for i in range(n)}
        for a, b in pairs:
            deg[a] += 1
            deg[b] += 1
        for t in range(n_regions, n):      # a transit leaf gets a second neighbour
            if deg[t] < 2 and n > 2:
                others = [i for i in range(n) if i != t and tuple(sorted((i, t))) not in pairs]
                o = ts.choice(others)
                pairs.append(tuple(sorted((o, t))))
                deg[t] += 1
                deg[o] += 1
        k_extra = n // 2 if extra_edges is None else extra_edges
        absent = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in pairs]
        for p in ts.permutation(absent)[:k_extra]:
            pairs.append(p)
        pairs.sort()
    links = []
    for a, b in pairs:
        s = S("link", a, b)
        links.append({"a": names[a], "b": names[b], "bandwidth_gbps": round(s.uniform(1.0, 20.0), 3),
                      "latency_ms": round(s.uniform(1.0, 60.0), 3),
                      "egress_usd_per_gb": round(s.uniform(0.0, 0.05), 4) if egress else 0.0})

    # ---- jobs: every job fits the cluster
    compute = regions[:n_regions]
    biggest = max(r["gpus"] for r in compute)
    jobs = []
    for k in range(n_jobs):
        s = S("job", k)
        g = s.integer(1, min(max_gpus_per_stage, biggest))
        slots = sum(r["gpus"] // g for r in compute)
        stages = s.integer(1, max(1, min(max_stages, slots)))
        arrival = round(s.uniform(0.0, max_arrival_s), 3) if max_arrival_s > 0 else 0.0
        jobs.append({"name": f"j{k}", "arrival_s": arrival, "stages": stages, "gpus_per_stage": g,
                     "microbatches": s.integer(1, 8), "iterations": s.integer(1, 50),
                     "stage_time_s": round(s.uniform(0.05, 2.0), 4), "activation_mb": round(s.uniform(1.0, 200.0), 3)})

    nm = name or (f"random-{n_regions}r{f'-{transit}t' if transit else ''}-{n_jobs}j-{topology}"
                  f"{'-hourly' if hourly_prices else ''}-seed{seed}")
    meta = {"source": f"{SOURCE} (synthetic, no data)", "family": "random", "seed": seed,
            "options": {"n_regions": n_regions, "n_jobs": n_jobs, "topology": topology, "transit": transit,
                        "hourly_prices": hourly_prices, "mixed_gpus": mixed_gpus,
                        "max_gpus_per_region": max_gpus_per_region, "max_stages": max_stages,
                        "max_gpus_per_stage": max_gpus_per_stage, "max_arrival_s": max_arrival_s,
                        "egress": egress, "extra_edges": extra_edges}}
    data = {"schema": "bace-opt/instance/v1", "name": nm, "meta": meta,
            "gpu_types": {k: dict(v) for k, v in sorted(gtypes.items())}, "reference_gpu": "G1",
            "regions": regions, "links": links, "jobs": jobs, "objective": {"egress": bool(egress)}}
    return Instance.from_dict(data, source=nm)
