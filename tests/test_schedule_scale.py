"""P2 brackets at scale (models/schedule.md sections 8.3-8.4): the area relaxation's bound lies below the proven
exact P2 optimum and below every policy's and every list schedule's evaluated mean JCT; the list scheduler's
schedules are feasible."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt import evaluate, simulate
from bace_opt.bench.suites import POLICIES
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact import solve
from bace_opt.exact.p2.area import area_lower_bound, build_area, area_data
from bace_opt.exact.p2.scale import best_list_schedule
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

pytestmark = pytest.mark.skipif(not registry.available("cpsat"), reason="needs CP-SAT")


def _small(seed):
    return random_instance(seed, 3, 5, max_gpus_per_region=6, max_stages=4, max_arrival_s=1800.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("unit", [None, 7.0, 600.0])
def test_area_bound_below_exact_optimum_and_policies(seed, unit):
    inst = _small(seed)
    lb = area_lower_bound(inst, SolveOptions(time_limit_s=20, threads=1), time_unit_s=unit)
    lp = area_lower_bound(inst, SolveOptions(time_limit_s=20, threads=1), time_unit_s=unit, mip=False)
    assert lb["lower_bound_status"] == "optimal"
    assert lp["lower_bound_jct_s"] <= lb["lower_bound_jct_s"] + 1e-6
    # the exact P2 at 1 s over all no-stall placements is an upper bound of the continuous optimum; the
    # continuous optimum is >= the bound, so the exact optimum is too
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, time_resolution_s=1.0)
    assert opt.solver.status == "optimal"
    assert lb["lower_bound_jct_s"] <= opt.metrics["avg_jct_s"] + 1e-6
    for p in POLICIES:
        s = simulate(inst, policy=p)
        if s.metrics["jobs_done"] == len(inst.jobs):
            assert s.metrics["avg_jct_s"] >= lb["lower_bound_jct_s"] - 1e-6, p
            assert s.metrics["total_electricity_usd"] >= lb["lower_bound_cost_usd"] - 1e-9, p


@pytest.mark.parametrize("seed", [1, 4])
def test_list_schedule_is_feasible_and_above_the_bound(seed):
    inst = _small(seed)
    warm = [simulate(inst, policy="bace-pipe")]
    out = best_list_schedule(inst, 2.0, warm=warm, seed=1)
    s = out["schedule"]
    assert evaluate(inst, s).feasible and s.metrics["jobs_done"] == len(inst.jobs)
    assert s.metrics["avg_jct_s"] == pytest.approx(out["value"], rel=1e-9)
    lb = area_lower_bound(inst, SolveOptions(time_limit_s=20, threads=1))
    assert out["value"] >= lb["lower_bound_jct_s"] - 1e-6
    cost = best_list_schedule(inst, 1.0, warm=warm, goal="cost", seed=1)
    assert evaluate(inst, cost["schedule"]).feasible
    assert cost["value"] >= lb["lower_bound_cost_usd"] - 1e-9


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_jobs_with_no_candidate_get_a_built_placement_of_three_regions_or_more(seed):
    """One GPU per region: a job of 3-4 GPUs has no candidate of <= 2 regions; the list scheduler builds one over
    3-4 regions (it skipped such jobs and returned no schedule at all), evaluator-checked, every job done, at
    most BACE-Pipe's mean JCT on these (its order search starts from the same kind of order)."""
    inst = random_instance(seed, 6, 5, max_gpus_per_region=1, max_stages=4)
    assert any(j.stages * j.gpus_per_stage >= 3 for j in inst.jobs)
    out = best_list_schedule(inst, 2.0, search="local", seed=1)
    s = out["schedule"]
    assert s is not None and evaluate(inst, s).feasible and s.metrics["jobs_done"] == len(inst.jobs)
    assert any(len(p.blocks) >= 3 for p in s.plans if p.status == "done")
    assert s.metrics["avg_jct_s"] <= simulate(inst, policy="bace-pipe").metrics["avg_jct_s"] * (1 + 1e-9)


def test_area_overlaps_sum_to_the_run_time():
    """Every start column's GPU-seconds over the units equal W_j R_j at both ends of its phase range (P2.30),
    and the unit-t share is Delta - phi."""
    inst = _small(2)
    data = area_data(inst)
    D = 60.0
    m = build_area(data, D, compact=False)
    use = {}
    for u, row in m["rows"].items():
        for c, v in row.items():
            use.setdefault(c, {})[u] = v
    for xc, yc, p_lo, p_hi, t in m["links"]:
        _, W, R, _ = data["jobs"][m["col_job"][xc]]
        if t + math.floor(R / D) + 2 > m["H"]:
            continue
        for phi in (p_lo, p_hi):
            per_unit = {u: use.get(xc, {}).get(u, 0.0) + phi * use.get(yc, {}).get(u, 0.0)
                        for u in set(use.get(xc, {})) | set(use.get(yc, {}))}
            assert sum(per_unit.values()) == pytest.approx(W * R, rel=1e-9)
            assert all(-1e-6 <= v <= W * D + 1e-6 for v in per_unit.values())
            assert per_unit.get(t, 0.0) == pytest.approx(W * min(D - phi, R), rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("seed", [1, 2])
def test_compact_form_is_the_same_relaxation(seed):
    inst = _small(seed)
    a = area_lower_bound(inst, SolveOptions(time_limit_s=20, threads=1), time_unit_s=5.0, mip=False, compact=False)
    b = area_lower_bound(inst, SolveOptions(time_limit_s=20, threads=1), time_unit_s=5.0, mip=False, compact=True)
    assert a["lower_bound_jct_s"] == pytest.approx(b["lower_bound_jct_s"], rel=1e-7)


@pytest.mark.parametrize("path", ["paper-6r-8j-seed1-poisson.json", "realistic-6r-8j-seed1.json"])
def test_the_list_schedulers_vectorised_pricing_is_the_evaluators(path):
    """``p2.list_schedule.price_candidates`` prices every candidate at once with numpy: each kept candidate's run
    time and cost at the job's arrival equal ``evaluate.price_plan``'s (the one evaluator), prices varying by the
    hour on the realistic instance, egress in the objective or not."""
    import dataclasses
    from bace_opt.evaluate import price_plan
    from bace_opt.exact.p2.candidates import enumerate_candidates
    from bace_opt.exact.p2.list_schedule import ListScheduler
    from bace_opt.instance import Objective
    base = bo.load_instance(Path(__file__).resolve().parent.parent / "instances" / path)
    for egress in (False, True):
        inst = dataclasses.replace(base, objective=Objective(egress=egress))
        ls = ListScheduler(inst, enumerate_candidates(inst, max_blocks=2, routes_k=1))
        checked = 0
        for job, jc in zip(inst.jobs, ls.jobs):
            for c, run, cost in zip(jc.cands, jc.run, jc.cost):
                f = price_plan(inst, c.plan(job.arrival_s))
                want = f.electricity_usd + (f.egress_usd if egress else 0.0)
                assert run == pytest.approx(f.finish_s - f.start_s, rel=1e-12, abs=1e-9)
                assert cost == pytest.approx(want, rel=1e-9, abs=1e-12)
                checked += 1
        assert checked > len(inst.jobs)
