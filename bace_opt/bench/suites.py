"""The registry of benchmark suites: each maps a size label to the list of runs (``RunSpec``) it makes.

    gap        BACE-Pipe and every baseline against the P1 optimum (one decision epoch), on growing sizes;
               and the online policies against the P2 optimum on small instances
    solvers    HiGHS vs SCIP vs CP-SAT (vs MathOpt-HiGHS) on P1: time to optimality, root gap, nodes
    paper      the BACE-Pipe paper's main result, sensitivity (bandwidth x0.3/x1.5, GPUs x0.5/x1.25,
               8 -> 24 jobs) and ablation, seeds 1-3
    scaling    simulator and exact build/solve time against jobs and regions
    realistic  measured bandwidth and hourly prices (shipped realistic instances)

Add a suite by adding a function decorated with ``@suite(name, description)`` taking the size label.
"""
from __future__ import annotations

from typing import Callable

from .runner import RunSpec

POLICIES = ["bace-pipe", "lcf", "ldf", "cr-lcf", "cr-ldf", "fifo"]
ABLATIONS = ["bace-pipe-no-priority", "bace-pipe-no-pathfinder", "bace-pipe-no-costmin"]

SUITES: dict[str, tuple[str, Callable[[str], list[RunSpec]], tuple[str, ...]]] = {}


def suite(name: str, description: str, sizes: tuple[str, ...]):
    def deco(fn):
        SUITES[name] = (description, fn, sizes)
        return fn
    return deco


def specs_for(name: str, size: str) -> list[RunSpec]:
    if name not in SUITES:
        raise KeyError(f"unknown suite {name!r} (known: {', '.join(sorted(SUITES))})")
    desc, fn, sizes = SUITES[name]
    if size not in sizes:
        raise KeyError(f"suite {name!r} has no size {size!r} (sizes: {', '.join(sizes)})")
    return fn(size)


# P1 gap: random instances (regions, jobs, largest region's GPUs, max stages) per size; the paper family
# (6 regions, 8 or 24 jobs of 14B-101B parameters) for medium and large.
GAP_RANDOM = {
    "small": [(3, 3, 8, 4), (3, 4, 8, 4), (4, 4, 8, 4), (4, 6, 8, 4)],
    "medium": [(6, 8, 16, 8), (6, 12, 16, 8)],
    "large": [(8, 16, 32, 12), (10, 24, 32, 12)],
}
GAP_SEEDS = {"small": range(1, 6), "medium": range(1, 4), "large": range(1, 3)}
GAP_PAPER = {"small": [], "medium": [8], "large": [24]}


def _random_args(n_regions, n_jobs, gpus, stages, **kw):
    return {"n_regions": n_regions, "n_jobs": n_jobs, "max_gpus_per_region": gpus, "max_stages": stages, **kw}


@suite("gap", "BACE-Pipe and baselines vs the P1 optimum (and online policies vs the P2 optimum)",
       ("small", "medium", "large"))
def _gap(size: str) -> list[RunSpec]:
    out = []
    tl = {"small": 60, "medium": 120, "large": 300}[size]

    def p1_runs(family, label, seed, ia):
        out.append(RunSpec("gap", family, label, seed, "p1:highs", ia, {"time_limit": tl}))
        for p in POLICIES:
            out.append(RunSpec("gap", family, label, seed, f"p1-heur:{p}", ia))

    for n_regions, n_jobs, gpus, stages in GAP_RANDOM[size]:
        for seed in GAP_SEEDS[size]:
            p1_runs("random", f"{n_regions}r-{n_jobs}j", seed, _random_args(n_regions, n_jobs, gpus, stages))
    for n_jobs in GAP_PAPER[size]:
        for seed in (1, 2, 3):
            p1_runs("paper", f"paper-6r-{n_jobs}j", seed, {"jobs": n_jobs})
    if size == "small":
        # P2: the offline optimum vs the online policies (arrivals spread over an hour), 3-4 jobs on 3 regions
        for n_regions, n_jobs in [(3, 3), (3, 4)]:
            label = f"p2-{n_regions}r-{n_jobs}j"
            for seed in range(1, 4):
                ia = _random_args(n_regions, n_jobs, 8, 4, max_arrival_s=3600.0)
                out.append(RunSpec("gap", "random", label, seed, "p2:cpsat", ia, {"time_limit": 120, "bracket": True}))
                for p in POLICIES:
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
}
SOLVERS = ("highs", "scip", "cpsat")


@suite("solvers", "HiGHS vs SCIP vs CP-SAT on P1: time to optimality, root gap, nodes, as size grows",
       ("small", "medium", "large"))
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
