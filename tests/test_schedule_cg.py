"""The time-indexed relaxation of P2 by column generation (models/schedule.md 8.6, P2.41-P2.47): its bound lies
below the proven exact P2 optimum and every policy's mean JCT (stalling ones included), at or above the packing
LP on the same grid, strictly above it where GPU speeds differ; its Lagrangian value is valid at every
iteration; the pricing is exact and the breakpoints represent every start."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bace_opt import simulate
from bace_opt.bench.suites import ABLATIONS, POLICIES
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact import solve
from bace_opt.exact.p2.area import area_data
from bace_opt.exact.p2.cg import SHIFT_S, Duals, cg_data, cg_lower_bound, overlaps, price_job
from bace_opt.exact.p2.lower import packing_lower_bound
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

pytestmark = pytest.mark.skipif(not registry.available("cpsat"), reason="needs CP-SAT")

OPT = SolveOptions(time_limit_s=30, threads=1)

CASES = [dict(seed=3, n_regions=2, n_jobs=6, max_gpus_per_region=5),
         dict(seed=3, n_regions=3, n_jobs=7, max_gpus_per_region=4),
         dict(seed=1, n_regions=3, n_jobs=6, max_gpus_per_region=6, mixed_gpus=True),
         dict(seed=6, n_regions=3, n_jobs=6, max_gpus_per_region=6, mixed_gpus=True, max_arrival_s=600.0)]


def _inst(kw):
    return random_instance(max_stages=4, **kw)


def _same_run_times(inst, D) -> bool:
    """The packing LP's R_j (p2.relax.job_modes) <= every mode's run time here: then theory says the CG
    bound is at least the packing LP's on the same grid."""
    d = cg_data(inst, D)
    return all(min(m.run_s for m in jb.modes) >= R - 1e-9 for jb, (_, _, R, _) in zip(d.jobs, area_data(inst)["jobs"]))


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("unit", [None, 25.0])
def test_cg_bound_below_optimum_and_policies_above_packing_lp(kw, unit):
    inst = _inst(kw)
    cg = cg_lower_bound(inst, OPT, time_unit_s=unit)
    assert cg["lower_bound_status"] == "optimal"
    lb = cg["lower_bound_jct_s"]
    assert abs(lb - cg["master_value_s"]) <= 1e-6 * max(1.0, lb)
    D = cg["lower_bound_time_unit_s"]
    pk = packing_lower_bound(inst, OPT, time_unit_s=D, fluid_factor=1.0)
    if _same_run_times(inst, D):
        assert lb >= pk["lower_bound_jct_s"] - 1e-6
    # the exact P2 at 1 s over all no-stall placements is >= the continuous optimum >= the bound
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, time_resolution_s=1.0)
    assert opt.solver.status == "optimal"
    assert lb <= opt.metrics["avg_jct_s"] + 1e-6
    for p in POLICIES + ABLATIONS:          # cr-lcf and the no-pathfinder ablation may stall
        s = simulate(inst, policy=p)
        if s.metrics["jobs_done"] == len(inst.jobs):
            assert s.metrics["avg_jct_s"] >= lb - 1e-6, p


def test_cg_strictly_above_packing_lp_where_speeds_differ():
    """Two GPU types: the pool counts every GPU at the fastest speed, the modes do not."""
    inst = _inst(CASES[2])
    cg = cg_lower_bound(inst, OPT, time_unit_s=25.0)["lower_bound_jct_s"]
    pk = packing_lower_bound(inst, OPT, time_unit_s=25.0, fluid_factor=1.0)["lower_bound_jct_s"]
    assert cg >= 1.03 * pk


@pytest.mark.parametrize("kw", CASES[:3])
def test_lagrangian_bound_valid_at_every_iteration(kw):
    inst = _inst(kw)
    full = cg_lower_bound(inst, OPT, time_unit_s=25.0, k_best=1)
    assert full["lower_bound_status"] == "optimal" and full["iterations"] >= 3
    lp = full["master_value_s"]
    zs = [z for _, z, _ in full["history"]]
    assert all(lag <= lp + 1e-6 for _, _, lag in full["history"])
    assert all(b <= a + 1e-6 for a, b in zip(zs, zs[1:]))           # columns are only added
    for k in (1, 2, full["iterations"] // 2):
        part = cg_lower_bound(inst, OPT, time_unit_s=25.0, k_best=1, max_iter=k)
        assert part["lower_bound_jct_s"] is not None and part["lower_bound_jct_s"] <= lp + 1e-6


@pytest.mark.parametrize("kw", CASES)
def test_breakpoints_represent_every_start(kw):
    """Between neighbouring breakpoints the time in every unit is linear in the start (P2.42)."""
    d = cg_data(_inst(kw), 25.0)
    rng = np.random.default_rng(0)
    for jb in d.jobs:
        for m, bp in zip(jb.modes, jb.starts):
            pts = np.append(bp, d.H * d.D)
            assert bp[0] == jb.arrival_s
            for lo, hi in zip(pts, pts[1:]):
                s = lo + rng.random() * (hi - lo)
                th = (hi - s) / (hi - lo)
                got = _dense(s, m.run_s, d)
                want = th * _dense(lo, m.run_s, d) + (1 - th) * _dense(hi, m.run_s, d)
                assert np.allclose(got, want, atol=1e-7 * d.D)


def _dense(s, R, d):
    v = np.zeros(d.H)
    u, ov = overlaps(s, R, d.D, d.H)
    v[u] = ov
    return v


def _compositions(S, caps):
    for n in itertools.product(*(range(c + 1) for c in caps)):
        if sum(n) == S:
            yield n


@pytest.mark.parametrize("kw", CASES[1:3])
def test_pricing_is_exact(kw):
    """price_job's least value equals a brute force over every mode, breakpoint and stage split."""
    d = cg_data(_inst(kw), 25.0)
    rng = np.random.default_rng(1)
    nr, nk = len(d.G), len(d.cls_w)
    du = Duals(np.zeros(d.n), rng.random((nr, d.H)) * 0.01, rng.random((nk, d.H)) * 0.01, np.zeros(d.H))
    for j, jb in enumerate(d.jobs):
        best, cols = price_job(d, j, du)
        brute = (d.H * d.D + jb.run_min_s - jb.arrival_s) / d.n
        for m, bp in zip(jb.modes, jb.starts):
            for s in bp:
                u, ov = overlaps(s, m.run_s, d.D, d.H)
                base = (s + m.run_s - jb.arrival_s) / d.n + float(du.cls[jb.cls][u] @ ov)
                per = [jb.g * float(du.reg[r][u] @ ov) for r in m.regions]
                split = min(sum(n * c for n, c in zip(ns, per)) for ns in _compositions(jb.stages, m.caps))
                brute = min(brute, base + split)
        assert math.isclose(best, brute, rel_tol=1e-9, abs_tol=1e-9)
        assert not cols or math.isclose(cols[0][0], best, rel_tol=1e-9, abs_tol=1e-9) or best < cols[0][0]


def test_no_jobs_and_a_job_that_fits_nowhere():
    import dataclasses
    inst = _inst(CASES[0])
    assert cg_lower_bound(dataclasses.replace(inst, jobs=()), OPT)["lower_bound_jct_s"] == 0.0
    big = dataclasses.replace(inst.jobs[0], gpus_per_stage=1000)
    r = cg_lower_bound(dataclasses.replace(inst, jobs=(big,) + tuple(inst.jobs[1:])), OPT)
    assert r["lower_bound_jct_s"] is None and r["lower_bound_status"] == "infeasible"


def test_late_arrivals_are_counted_from_the_first():
    """Arrivals moved by a multiple of SHIFT_S: the same grid and bound (mean JCT does not depend on the clock);
    moved by 1e9 s: still a small grid, and the bound stays below the policies."""
    import dataclasses

    def moved(inst, by):
        return dataclasses.replace(inst, jobs=tuple(dataclasses.replace(j, arrival_s=j.arrival_s + by)
                                                   for j in inst.jobs))
    inst = _inst(CASES[1])
    a, b = cg_lower_bound(inst, OPT), cg_lower_bound(moved(inst, SHIFT_S * 23149), OPT)
    assert b["lower_bound_status"] == "optimal" and b["horizon_units"] == a["horizon_units"]
    assert math.isclose(a["lower_bound_jct_s"], b["lower_bound_jct_s"], rel_tol=1e-9)
    late = moved(inst, 1e9)
    c = cg_lower_bound(late, OPT)
    assert c["lower_bound_status"] == "optimal" and c["horizon_units"] <= 400
    for p in ("bace-pipe", "cr-lcf"):
        s = simulate(late, policy=p)
        assert s.metrics["avg_jct_s"] >= c["lower_bound_jct_s"] - 1e-6, p
