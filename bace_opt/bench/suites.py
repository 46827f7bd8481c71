"""The registry of benchmark suites: each maps a size label to the list of runs (``RunSpec``) it makes.

    gap        BACE-Pipe and every baseline against the P1 optimum (one decision epoch), on growing sizes;
               and the online policies against the P2 optimum on small instances
    solvers    HiGHS vs SCIP vs CP-SAT (vs MathOpt-HiGHS) on P1: time to optimality, root gap, nodes
    paper      the BACE-Pipe paper's main result, sensitivity (bandwidth x0.3/x1.5, GPUs x0.5/x1.25,
               8 -> 24 jobs) and ablation, seeds 1-3
    scaling    simulator and exact build/solve time against jobs and regions
    realistic  measured bandwidth and hourly prices (shipped realistic instances)
    traces     the composed real trace (``generate trace``) swept over load factors and seeds: JCT percentiles,
               waiting, slowdown, utilisation and cost per policy (``evaluate.workload_report``)

Add a suite by adding a function decorated with ``@suite(name, description)`` taking the size label.
"""
from __future__ import annotations

from dataclasses import replace

from typing import Callable

from .spec import RunSpec

POLICIES = ["bace-pipe", "lcf", "ldf", "cr-lcf", "cr-ldf", "fifo", "price-pack"]
ABLATIONS = ["bace-pipe-no-priority", "bace-pipe-no-pathfinder", "bace-pipe-no-costmin"]

SUITES: dict[str, tuple[str, Callable[[str], list[RunSpec]], tuple[str, ...]]] = {}


def suite(name: str, description: str, sizes: tuple[str, ...]):
    def deco(fn):
        SUITES[name] = (description, fn, sizes)
        return fn
    return deco


#: the shipped policy every policy suite runs; a policy of one's own runs exactly where it does
REFERENCE_POLICY = "bace-pipe"


def specs_for(name: str, size: str, policies=()) -> list[RunSpec]:
    """The runs of suite ``name`` at ``size``.  ``policies``: extra policies (registered names, or
    ``package.module:Class`` / ``path/to/file.py:Class`` specs), each run beside BACE-Pipe in every run of the suite
    that runs BACE-Pipe (simulated, or at P1's decision epoch), on the same instance with the same arguments; a
    suite without a policy (``solvers``, ``optical``) gets none."""
    if name not in SUITES:
        raise KeyError(f"unknown suite {name!r} (known: {', '.join(sorted(SUITES))})")
    desc, fn, sizes = SUITES[name]
    if size not in sizes:
        raise KeyError(f"suite {name!r} has no size {size!r} (sizes: {', '.join(sizes)})")
    specs = fn(size)
    known = {s.method for s in specs}
    extra = []
    for p in policies:
        for s in specs:
            kind, _, pol = s.method.partition(":")
            if pol == REFERENCE_POLICY and kind in ("sim", "p1-heur") and f"{kind}:{p}" not in known:
                extra.append(replace(s, method=f"{kind}:{p}"))
    return specs + extra


# P1 gap: random instances (regions, jobs, largest region's GPUs, max stages) per size; the paper family
# (6 regions, 8 or 24 jobs of 14B-101B parameters) for medium and large.  ``binding``: where the network binds
# (random instances with links x0.05, i.e. 0.05-1 Gbit/s against per-hop demands of up to a few Gbit/s, and
# the paper family on measured Skyplane bandwidth); each instance is also solved with link capacities lifted
# (``p1-nobw``) so the report can say whether bandwidth changed the optimum.
GAP_RANDOM = {
    "small": [(3, 3, 8, 4), (3, 4, 8, 4), (4, 4, 8, 4), (4, 6, 8, 4)],
    "medium": [(6, 8, 16, 8), (6, 12, 16, 8)],
    "large": [(8, 16, 32, 12), (10, 24, 32, 12)],
    "binding": [(4, 6, 8, 4), (6, 8, 16, 8)],
}
GAP_SEEDS = {"small": range(1, 6), "medium": range(1, 4), "large": range(1, 3), "binding": range(1, 4)}
GAP_PAPER = {"small": [], "medium": [8], "large": [24], "binding": [8, 24]}
BINDING_RANDOM_SCALE = 0.05
#: policies the gap suite runs beside ``POLICIES`` (issue 30 item 3: select-pack against the P1 optimum)
GAP_POLICIES = POLICIES + ["select-pack"]


def _random_args(n_regions, n_jobs, gpus, stages, **kw):
    return {"n_regions": n_regions, "n_jobs": n_jobs, "max_gpus_per_region": gpus, "max_stages": stages, **kw}


@suite("gap", "BACE-Pipe and baselines vs the P1 optimum (and online policies vs the P2 optimum)",
       ("small", "medium", "large", "binding"))
def _gap(size: str) -> list[RunSpec]:
    out = []
    tl = {"small": 60, "medium": 120, "large": 300, "binding": 300}[size]
    binding = size == "binding"

    def p1_runs(family, label, seed, ia):
        out.append(RunSpec("gap", family, label, seed, "p1:highs", ia, {"time_limit": tl}))
        if binding:
            out.append(RunSpec("gap", family, label, seed, "p1-nobw:highs", ia, {"time_limit": tl}))
        for p in GAP_POLICIES:
            out.append(RunSpec("gap", family, label, seed, f"p1-heur:{p}", ia))

    for n_regions, n_jobs, gpus, stages in GAP_RANDOM[size]:
        for seed in GAP_SEEDS[size]:
            extra = {"bandwidth_scale": BINDING_RANDOM_SCALE} if binding else {}
            label = f"{n_regions}r-{n_jobs}j" + (f"-bw{BINDING_RANDOM_SCALE:g}" if binding else "")
            p1_runs("random", label, seed, _random_args(n_regions, n_jobs, gpus, stages, **extra))
    for n_jobs in GAP_PAPER[size]:
        for seed in ((1,) if binding and n_jobs > 8 else (1, 2, 3)):
            if binding:
                p1_runs("paper", f"paper-6r-{n_jobs}j-measured", seed, {"jobs": n_jobs, "bandwidth_source": "measured"})
            else:
                p1_runs("paper", f"paper-6r-{n_jobs}j", seed, {"jobs": n_jobs})
    if size == "small":
        # P2: the offline optimum vs the online policies (arrivals spread over an hour), 3-4 jobs on 3 regions
        for n_regions, n_jobs in [(3, 3), (3, 4)]:
            label = f"p2-{n_regions}r-{n_jobs}j"
            for seed in range(1, 4):
                ia = _random_args(n_regions, n_jobs, 8, 4, max_arrival_s=3600.0)
                out.append(RunSpec("gap", "random", label, seed, "p2:cpsat", ia, {"time_limit": 120, "bracket": True}))
                for p in GAP_POLICIES:
                    out.append(RunSpec("gap", "random", label, seed, f"sim:{p}", ia))
    return out


# P1 by back end, growing: (family, label, instance args, seeds) per size; time limit 60 s (small) or 600 s
SOLVER_SIZES = {
    "small": [("random", "3r-4j", _random_args(3, 4, 8, 4), (1, 2)),
              ("random", "4r-6j", _random_args(4, 6, 8, 4), (1, 2)),
              ("random", "6r-8j", _random_args(6, 8, 16, 8), (1, 2))],
    "medium": [("paper", "paper-6r-8j", {"jobs": 8}, (1, 2, 3)),
               ("random", "8r-16j", _random_args(8, 16, 32, 12), (1,))],
    "large": [("paper", "paper-6r-24j", {"jobs": 24}, (1,)),
              ("random", "10r-24j", _random_args(10, 24, 32, 12), (1,)),
              ("random", "12r-32j", _random_args(12, 32, 32, 12), (1,))],
    # where the network binds (as the gap suite's binding size)
    "binding": [("random", "6r-8j-bw0.05", _random_args(6, 8, 16, 8, bandwidth_scale=BINDING_RANDOM_SCALE),
                 (1, 2, 3)),
                ("paper", "paper-6r-8j-measured", {"jobs": 8, "bandwidth_source": "measured"}, (1, 2, 3)),
                ("paper", "paper-6r-24j-measured", {"jobs": 24, "bandwidth_source": "measured"}, (1,))],
}
SOLVERS = ("highs", "scip", "cpsat")


@suite("solvers", "HiGHS vs SCIP vs CP-SAT on P1: time to optimality, root gap, nodes, as size grows",
       ("small", "medium", "large", "binding"))
def _solvers(size: str) -> list[RunSpec]:
    tl = 60 if size == "small" else 600
    return [RunSpec("solvers", fam, label, seed, f"p1:{solver}", ia, {"time_limit": tl})
            for fam, label, ia, seeds in SOLVER_SIZES[size] for seed in seeds for solver in SOLVERS]


PAPER_VARIANTS = {
    "main": {},
    "bw-x0.3": {"bandwidth_scale": 0.3},
    "bw-x1.5": {"bandwidth_scale": 1.5},
    "gpu-x0.5": {"gpu_scale": 0.5},
    "gpu-x1.25": {"gpu_scale": 1.25},
    "jobs-24": {"jobs": 24},
}


@suite("paper", "BACE-Pipe paper reproduction: main result, sensitivity, ablation (seeds 1-3)",
       ("small", "full"))
def _paper(size: str) -> list[RunSpec]:
    out = []
    variants = PAPER_VARIANTS if size == "full" else {"main": {}}
    seeds = (1, 2, 3) if size == "full" else (1,)
    for vname, ia in variants.items():
        for seed in seeds:
            for p in POLICIES + ABLATIONS:
                out.append(RunSpec("paper", "paper", vname, seed, f"sim:{p}", ia))
    return out


@suite("scaling", "simulator and exact build/solve time against jobs and regions", ("small", "full"))
def _scaling(size: str) -> list[RunSpec]:
    out = []
    sim_sizes = [(6, 100), (10, 1000), (20, 10000)] if size == "full" else [(6, 50), (10, 200)]
    for n_regions, n_jobs in sim_sizes:
        ia = _random_args(n_regions, n_jobs, 32, 8, max_arrival_s=60.0 * n_jobs)
        out.append(RunSpec("scaling", "random", f"{n_regions}r-{n_jobs}j", 1, "sim:bace-pipe", ia))
    exact_sizes = [(4, 4), (6, 8), (8, 16), (10, 24)] if size == "full" else [(3, 3), (4, 6)]
    for n_regions, n_jobs in exact_sizes:
        out.append(RunSpec("scaling", "random", f"{n_regions}r-{n_jobs}j", 1, "p1:highs",
                           _random_args(n_regions, n_jobs, 16, 8), {"time_limit": 300}))
    return out


@suite("realistic", "measured bandwidth and hourly prices (shipped realistic and WAN instances)", ("small",))
def _realistic(size: str) -> list[RunSpec]:
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "instances"
    out = []
    for p in sorted(root.glob("realistic*.json")) + sorted(root.glob("wan*.json")):
        for pol in POLICIES:
            out.append(RunSpec("realistic", "file", p.stem, 0, f"sim:{pol}", {"path": f"instances/{p.name}"}))
    return out


# The optical layer and CBA (bench.optical): blocking versus load for every RSA policy on NSFNET;
# CBA against KSP-FF / SD-FF across models, schedules and micro-batch counts; the exact slot assignment's gap.
OPTICAL_SIZES = {"small": dict(requests=5_000, loads=[100, 200], mbs=[16, 64], seeds=[1], iterations=5,
                                backgrounds=[60], exact_iterations=3),
                 "full": dict(requests=100_000, loads=[50, 100, 150, 200, 300], mbs=[16, 32, 64, 128],
                              seeds=[1, 2, 3], iterations=20, backgrounds=[60, 5], exact_iterations=10,
                              sensitivity=[0, 10, 20, 40])}


@suite("optical", "RSA blocking vs load on NSFNET, CBA vs KSP-FF/SD-FF, exact slot assignment gap", ("small", "full"))
def _optical(size: str) -> list[RunSpec]:
    from ..optical.rsa import RSA_POLICIES
    c = OPTICAL_SIZES[size]
    out = []
    topo = {"topology": "nsfnet", "slots": 100, "k": 5, "sizes": "uniform:1:8", "holding": 1.0}
    # KSP-MU (numpy slot counts per request, ~0.5 ms) stays out of the 100,000-request sweep
    for pol in [p for p in RSA_POLICIES if size == "small" or p != "ksp-mu"]:
        for load in c["loads"]:
            out.append(RunSpec("optical", "optical", f"nsfnet-{load}E", 1, f"optical-sweep:{pol}",
                               dict(topo, load=load, requests=c["requests"])))
    schemes = ("ksp-ff", "ksp-ff+cba", "sd-ff", "sd-ff+cba")
    for bg in c["backgrounds"]:
        for wl in ("llama3-8b", "llama3-70b"):
            for sch in ("gpipe", "1f1b"):
                for mb in c["mbs"]:
                    ia = {"topology": "nsfnet", "slots": 80, "k": 4, "workload": wl, "schedule": sch,
                          "microbatches": mb, "iterations": c["iterations"], "bg_count": bg}
                    for seed in c["seeds"]:
                        for s in schemes:
                            out.append(RunSpec("optical", "optical", f"{wl}-{sch}-{mb}-bg{bg}", seed,
                                               f"optical-cba:{s}", ia))
                ia = {"topology": "nsfnet", "slots": 80, "k": 4, "workload": wl, "schedule": sch, "microbatches": 64,
                      "iterations": c["exact_iterations"], "bg_count": bg}
                for s in schemes:
                    for solver in ("highs", "cpsat"):
                        out.append(RunSpec("optical", "optical", f"{wl}-{sch}-64-bg{bg}", 1,
                                           f"optical-exact:{s}:{solver}", ia, {"time_limit": 60}))
    # how CBA's gain depends on the background load (main case, both schedules)
    for bg in c.get("sensitivity", []):
        for sch in ("gpipe", "1f1b"):
            ia = {"topology": "nsfnet", "slots": 80, "k": 4, "workload": "llama3-8b", "schedule": sch,
                  "microbatches": 64, "iterations": c["iterations"], "bg_count": bg}
            for seed in c["seeds"]:
                for s in schemes:
                    out.append(RunSpec("optical", "optical", f"llama3-8b-{sch}-64-bg{bg}", seed, f"optical-cba:{s}", ia))
    from .optical import xlron_specs      # XLRON's published KSP-FF curve and CBA in its setting (issue 31)
    return out + xlron_specs(size)


# ---------------------------------------------------------------------- regimes: where the paper's claims hold
# The paper family across network regimes and loads.  A regime is (bandwidth source, bandwidth scale, jobs,
# arrivals[, GPU scale]); its label is the row's ``size``, e.g. ``nominal-x0.03-24j-batch``.  Nominal links
# carry 39-91 Gbit/s against 0.7-2.8 Gbit/s of demand per hop, so they start to bind near x0.03; measured
# links (Skyplane, one VM pair per link) carry a few Gbit/s at x1.
REGIME_POLICIES = POLICIES + ABLATIONS
REGIME_GRID = {
    "small": {"bandwidth": [("nominal", 1.5), ("nominal", 1.0), ("nominal", 0.3), ("nominal", 0.1),
                            ("nominal", 0.03), ("measured", 1.0), ("measured", 0.3)],
              "jobs": [8, 24], "arrivals": ["batch", "poisson"], "seeds": (1,),
              "gpu": [0.5, 1.25]},
    "full": {"bandwidth": [("nominal", 1.5), ("nominal", 1.0), ("nominal", 0.3), ("nominal", 0.1),
                           ("nominal", 0.03), ("nominal", 0.01), ("measured", 1.5), ("measured", 1.0),
                           ("measured", 0.3)],
             "jobs": [8, 24, 72], "arrivals": ["batch", "poisson"], "seeds": (1, 2, 3),
             "gpu": [0.5, 1.25]},
}


def regime_label(source: str, scale: float, jobs: int, arrivals: str, gpu_scale: float = 1.0) -> str:
    lab = f"{source}-x{scale:g}-{jobs}j-{arrivals}"
    return lab + (f"-gpu{gpu_scale:g}" if gpu_scale != 1.0 else "")


def parse_regime(label: str) -> dict:
    """The parts of a regime label: source, bandwidth_scale, jobs, arrivals, gpu_scale."""
    parts = label.split("-")
    out = {"source": parts[0], "bandwidth_scale": float(parts[1][1:]), "jobs": int(parts[2][:-1]),
           "arrivals": parts[3], "gpu_scale": 1.0}
    if len(parts) > 4 and parts[4].startswith("gpu"):
        out["gpu_scale"] = float(parts[4][3:])
    return out


def regime_args(source: str, scale: float, jobs: int, arrivals: str, gpu_scale: float = 1.0) -> dict:
    a = {"jobs": jobs, "bandwidth_scale": scale}
    if source != "nominal":
        a["bandwidth_source"] = source
    if arrivals == "poisson":
        a["arrivals"] = "poisson"
    if gpu_scale != 1.0:
        a["gpu_scale"] = gpu_scale
    return a


@suite("regimes", "the paper's claims across bandwidth regimes (nominal, measured) and loads: the claims map",
       ("small", "full"))
def _regimes(size: str) -> list[RunSpec]:
    g = REGIME_GRID[size]
    regimes = [(src, sc, n, arr, 1.0) for src, sc in g["bandwidth"] for n in g["jobs"] for arr in g["arrivals"]]
    # the GPU sensitivity of the paper: 8 jobs, batch, at x1 of each bandwidth source
    regimes += [(src, 1.0, 8, "batch", gs) for src in ("nominal", "measured") for gs in g["gpu"]]
    out = []
    for src, sc, n, arr, gs in regimes:
        label = regime_label(src, sc, n, arr, gs)
        for seed in g["seeds"]:
            for p in REGIME_POLICIES:
                out.append(RunSpec("regimes", "paper", label, seed, f"sim:{p}", regime_args(src, sc, n, arr, gs)))
    return out


# ---------------------------------------------------------------------- traces: a real workload at several loads
# The composed real trace (builders.trace) on a fleet of ``gpus`` GPUs per region (fleet20's seeded draw, 1,136
# GPUs, leaves the shipped week at offered load 0.035: nobody waits), swept over the load factor (Pollux's: more
# or fewer trace jobs sampled into the window) and seeds.  ``window``: Gavel / Blox's steady-state window by
# arrival rank (the per-job figures of those jobs only; None: every job).
TRACE_GRID = {
    "tiny": {"trace": {"regions": "default", "gpus": 2, "days": 1, "jobs_per_week": 20, "max_gpus": 8,
                       "max_duration_s": 6 * 3600}, "loads": [4, 8], "seeds": (1,),
             "policies": ["bace-pipe", "cr-lcf"], "window": None},
    "small": {"trace": {"gpus": 16, "days": 1}, "loads": [4, 8, 12], "seeds": (1, 2),
              "policies": ["bace-pipe", "select-pack", "price-pack", "lcf"], "window": None},
    "full": {"trace": {"gpus": 16, "days": 7}, "loads": [2, 4, 6, 8, 10, 12], "seeds": (1, 2, 3),
             "policies": POLICIES + ["select-pack"], "window": None},
}


def trace_label(trace: dict, load: float) -> str:
    regions = trace.get("regions", "fleet20")
    return f"{regions}-{trace['days']:g}d-g{trace['gpus']}-load{load:g}"


@suite("traces", "the composed real trace over load factors and seeds: JCT percentiles, waiting, slowdown, "
                 "utilisation, cost", ("tiny", "small", "full"))
def _traces(size: str) -> list[RunSpec]:
    g = TRACE_GRID[size]
    margs = {"window_jobs": list(g["window"])} if g["window"] else {}
    return [RunSpec("traces", "trace", trace_label(g["trace"], load), seed, f"sim:{p}", dict(g["trace"], load=load),
                    dict(margs))
            for load in g["loads"] for seed in g["seeds"] for p in g["policies"]]
