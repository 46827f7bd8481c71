"""The packing relaxation of P2 (models/schedule.md section 8.3, P2.35-P2.38): its bound lies below the proven
exact P2 optimum and every policy's mean JCT, at or above the area relaxation's on the same grid, and strictly
above it where jobs cannot fill the pool; its packings are exactly the maximal ones."""
from __future__ import annotations

import itertools

import pytest

from bace_opt import simulate
from bace_opt.bench.suites import POLICIES
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact import solve
from bace_opt.exact.p2.area import area_data, area_lower_bound
from bace_opt.exact.p2.lower import maximal_packings, packing_lower_bound, size_classes
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

pytestmark = pytest.mark.skipif(not registry.available("cpsat"), reason="needs CP-SAT")

OPT = SolveOptions(time_limit_s=20, threads=1)


def _crowded(seed, regions, jobs, gpus):
    """All jobs at t = 0 on a small pool: they queue, and their sizes do not always add up to the pool."""
    return random_instance(seed, regions, jobs, max_gpus_per_region=gpus, max_stages=4, max_arrival_s=0.0)


@pytest.mark.parametrize("args", [(2, 2, 6, 5), (3, 2, 6, 5), (5, 2, 6, 5), (3, 3, 7, 4), (8, 2, 6, 5)])
@pytest.mark.parametrize("unit", [None, 25.0])
def test_packing_bound_between_area_and_exact_optimum(args, unit):
    inst = _crowded(*args)
    area = area_lower_bound(inst, OPT, time_unit_s=unit, mip=False)["lower_bound_jct_s"]
    lp = packing_lower_bound(inst, OPT, time_unit_s=unit)
    mip = packing_lower_bound(inst, OPT, time_unit_s=unit, mip=True)
    assert lp["lower_bound_status"] == "optimal" and mip["lower_bound_status"] == "optimal"
    assert lp["lower_bound_jct_s"] >= area - 1e-6          # P2.32 is implied by P2.37-P2.38
    assert mip["lower_bound_jct_s"] >= lp["lower_bound_jct_s"] - 1e-6
    # the exact P2 at 1 s over all no-stall placements is >= the continuous optimum >= the bound
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, time_resolution_s=1.0)
    assert opt.solver.status == "optimal"
    assert mip["lower_bound_jct_s"] <= opt.metrics["avg_jct_s"] + 1e-6
    for p in POLICIES:
        s = simulate(inst, policy=p)
        if s.metrics["jobs_done"] == len(inst.jobs):
            assert s.metrics["avg_jct_s"] >= mip["lower_bound_jct_s"] - 1e-6, p
            assert s.metrics["total_electricity_usd"] >= lp["lower_bound_cost_usd"] - 1e-9, p


@pytest.mark.parametrize("args", [(3, 2, 6, 5), (5, 2, 6, 5)])
def test_packing_bound_is_stronger_where_sizes_do_not_fill_the_pool(args):
    """Pools of 5 and 4 GPUs with jobs of 3-4 GPUs: the fluid pool runs them side by side, packings cannot."""
    inst = _crowded(*args)
    area = area_lower_bound(inst, OPT, mip=False)["lower_bound_jct_s"]
    lp = packing_lower_bound(inst, OPT)["lower_bound_jct_s"]
    assert lp >= area * 1.05


def _brute_packings(sizes, counts, G):
    out = set()
    for n in itertools.product(*(range(c + 1) for c in counts)):
        if sum(s * k for s, k in zip(sizes, n)) <= G:
            out.add(n)
    return out


@pytest.mark.parametrize("sizes,counts,G", [([5, 3, 2], [2, 3, 4], 11), ([80, 64, 62, 60, 48], [27, 9, 9, 18, 9], 288),
                                              ([4, 3], [1, 1], 6), ([7], [3], 6)])
def test_maximal_packings_are_the_maximal_feasible_multisets(sizes, counts, G):
    feas = _brute_packings(sizes, counts, G)
    maxi = {n for n in feas if all(n[k] >= counts[k] or sum(s * c for s, c in zip(sizes, n)) + sizes[k] > G
                                   for k in range(len(sizes)))}
    got = maximal_packings(sizes, counts, G)
    assert len(got) == len(set(got)) and set(got) == maxi
    assert maximal_packings(sizes, counts, G, limit=len(maxi) - 1) is None if len(maxi) > 1 else True


def test_coarse_size_classes_round_down_and_stay_valid():
    """With few packings allowed the sizes are rounded down to a coarser step: still below the optimum."""
    inst = _crowded(3, 3, 7, 4)
    data = area_data(inst)
    of_job, cls_w, pats, step = size_classes(data, max_patterns=1)
    assert step > 1 and len(pats) <= 1
    assert all(cls_w[k] <= W for k, (_, W, _, _) in zip(of_job, data["jobs"]))
    lb = packing_lower_bound(inst, OPT, mip=True, max_patterns=1)
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, time_resolution_s=1.0)
    assert lb["size_step"] == step and lb["lower_bound_jct_s"] <= opt.metrics["avg_jct_s"] + 1e-6
