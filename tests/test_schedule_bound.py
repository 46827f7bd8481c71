"""Certified P2 brackets (bace_opt.exact.p2.bound, models/schedule.md section 8): the relaxation's bound
is below the continuous optimum, so below every feasible schedule (online policies included)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bace_opt import simulate
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact import solve
from bace_opt.exact import schedule as S
from bace_opt.exact.p2.candidates import enumerate_candidates
from bace_opt import formulas as F
from bace_opt.solvers import registry

pytestmark = pytest.mark.skipif(not registry.available("cpsat"), reason="needs CP-SAT")


@pytest.mark.parametrize("seed", [1, 3])
def test_bracket_contains_every_policy(seed):
    inst = random_instance(seed, 3, 4, max_gpus_per_region=8, max_stages=4, max_arrival_s=3600.0)
    s = solve(inst, problem="schedule", solver="cpsat", time_limit=60, bracket=True)
    x = s.solver.extra
    assert x["lower_bound_certified"] and x["lower_bound_status"] == "optimal"
    assert x["lower_bound"] <= x["upper_bound"] == pytest.approx(s.metrics["avg_jct_s"])
    assert 0 <= x["bracket_gap"] < 0.05
    for p in ("bace-pipe", "fifo", "lcf", "cr-ldf"):
        assert simulate(inst, policy=p).metrics["avg_jct_s"] >= x["lower_bound"] - 1e-9, p


def test_incomplete_candidate_set_is_not_certified():
    inst = random_instance(2, 3, 3, max_gpus_per_region=8, max_stages=4)
    s = solve(inst, problem="schedule", solver="cpsat", time_limit=30, bracket=True, max_blocks=1)
    x = s.solver.extra
    assert x["lower_bound_slotted_certified"] is False and "incomplete" in x["lower_bound_note"]
    # the pool and packing relaxations need no candidates: the bracket still has a certified lower end
    assert x["lower_bound_certified"] and x["lower_bound_kind"].startswith(("pool", "packing"))
    assert x["lower_bound"] == max(x["lower_bound_pool"], x["lower_bound_area"])
    assert x["lower_bound"] <= x["upper_bound"] * (1 + 1e-9)     # equal here, up to the solver's rounding


@pytest.mark.parametrize("seed", [1, 2])
def test_pool_bound_is_below_every_schedule(seed):
    from bace_opt.exact.p2.relax import pool_lower_bound, cumulative_lower_bound
    from bace_opt.solvers.base import SolveOptions
    inst = random_instance(seed, 3, 5, max_gpus_per_region=6, max_stages=4)
    pool = pool_lower_bound(inst, SolveOptions(time_limit_s=10), time_unit_s=2.0)
    cum = cumulative_lower_bound(inst, SolveOptions(time_limit_s=5), time_unit_s=2.0)
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60)
    assert pool["lower_bound_status"] in ("optimal", "feasible", "time_limit") and pool["lower_bound"] is not None
    assert pool["lower_bound"] <= opt.metrics["avg_jct_s"] + 1e-9
    assert cum["lower_bound"] <= opt.metrics["avg_jct_s"] + 1e-9
    for p in ("bace-pipe", "fifo", "lcf"):
        assert simulate(inst, policy=p).metrics["avg_jct_s"] >= pool["lower_bound"] - 1e-9


@settings(max_examples=25, deadline=None)
@given(x=st.floats(0.0, 1e6), delta=st.sampled_from([0.1, 1.0, 7.0, 60.0]))
def test_floor_units_is_exact(x, delta):
    k = S._floor_units(x, delta)
    assert k * delta <= x < (k + 1) * delta


@pytest.mark.parametrize("seed", [1, 2])
def test_cost_envelope_is_below_cost_everywhere_in_its_slot(seed):
    inst = random_instance(seed, 3, 2, max_stages=4, hourly_prices=True)
    cs = enumerate_candidates(inst)
    curves = F.price_curves(inst)
    delta, lo, H = 900.0, 0, 40
    job = inst.jobs[0]
    for cand in cs.by_job[job.name][:5]:
        def cost(s):
            tot = 0.0
            for r, nst in cand.blocks:
                reg = inst.region(r)
                kw = job.gpus_per_stage * nst * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
                tot += kw * curves[r].integral(s, s + cand.run_s) / 3600.0
            return tot
        grid = np.array([cost(delta * t) for t in range(lo, H + 1)])
        env = S._cost_lower_envelope(inst, curves, job, cand, lo, H, delta, grid)
        for t in range(lo, H + 1):
            fine = [cost(delta * (t - 1) + delta * k / 50) for k in range(1, 51)]
            assert env[t - lo] <= min(fine) + 1e-12
            assert env[t - lo] >= min(fine) - 1e-3 * max(1e-9, abs(min(fine)))   # tight, up to sampling


def test_cli_bracket(tmp_path, capsys):
    from bace_opt.cli.main import main
    inst = random_instance(1, 3, 3, max_gpus_per_region=8, max_stages=4)
    p = tmp_path / "i.json"
    p.write_text(inst.to_json())
    assert main(["solve", str(p), "--problem", "schedule", "--solver", "cpsat", "--bracket", "--time-limit", "30",
                 "-o", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "bracket: lower" in out and "certified" in out
    assert main(["solve", str(p), "--bracket", "-o", str(tmp_path / "t.json")]) == 2


def _too_large(seed, mu=0.0, limit=4.0):
    """A bracket whose exact P2 refuses to build (a 10-column limit): the list scheduler gives the upper end."""
    from bace_opt.exact.p2.bound import solve_bracket
    from bace_opt.solvers.base import SolveOptions
    inst = random_instance(seed, 3, 6, max_gpus_per_region=8, max_stages=4, max_arrival_s=3600.0)
    opts = SolveOptions(time_limit_s=limit, backend_options={"max_columns": 10})
    return inst, solve_bracket(inst, "highs", opts, mu=mu)


@pytest.mark.parametrize("seed", [1, 4])
def test_bracket_without_the_exact_model_uses_the_list_scheduler(seed):
    from bace_opt.evaluate import evaluate
    inst, s = _too_large(seed)
    si, x = s.solver, s.solver.extra
    assert si.name == "list-schedule" and si.status == "feasible" and "too large" in si.message
    assert s.method == "list-schedule" and evaluate(inst, s).feasible
    assert x["upper_bound"] == pytest.approx(s.metrics["avg_jct_s"], rel=1e-12) == si.objective
    assert x["lower_bound_certified"] and x["lower_bound_kind"].startswith(("pool", "packing"))
    assert x["lower_bound_slotted"] is None and si.bound == x["lower_bound"]
    assert 0 <= x["bracket_gap"] == si.gap < 1
    for p in ("bace-pipe", "fifo", "lcf", "price-pack"):
        r = simulate(inst, policy=p)
        assert r.metrics["avg_jct_s"] >= x["lower_bound"] - 1e-6, p


def test_weighted_sum_bracket_contains_every_policy():
    from bace_opt.evaluate.metrics import objective_cost_usd
    mu = 30.0
    inst, s = _too_large(2, mu=mu)
    x = s.solver.extra
    assert x["upper_bound"] == pytest.approx(s.metrics["avg_jct_s"] + mu * objective_cost_usd(inst, s.metrics))
    # the larger of the separable bound (mean JCT bound + mu x cost bound) and the joint one (P2.39)
    assert x["lower_bound"] == max(x["lower_bound_area"], x["lower_bound_sum"], x["lower_bound_pool"])
    assert x["lower_bound"] <= x["upper_bound"] * (1 + 1e-9)     # may be equal, up to the solver's rounding
    for p in ("bace-pipe", "cr-lcf", "price-pack"):
        m = simulate(inst, policy=p).metrics
        assert m["avg_jct_s"] + mu * objective_cost_usd(inst, m) >= x["lower_bound"] - 1e-6, p


@pytest.mark.parametrize("seed,hourly,stronger", [(1, False, False), (2, True, True), (5, False, True)])
def test_region_energy_bound_is_below_the_exact_optimum(seed, hourly, stronger):
    """P2.39 (the weighted sum priced region by region) is below the exact P2 optimum of mean JCT + mu cost
    and every policy; where the cheap regions cannot hold every job at once, or prices vary by the hour, it
    beats the separable bound."""
    from bace_opt.evaluate.metrics import objective_cost_usd
    from bace_opt.exact.p2.area import area_lower_bound
    from bace_opt.exact.p2.area_sum import sum_lower_bound
    from bace_opt.solvers.base import SolveOptions
    inst = random_instance(seed, 3, 4, max_gpus_per_region=8, max_stages=4, hourly_prices=hourly)
    mu = 2e4
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, mu=mu)
    assert opt.solver.status == "optimal"
    best = opt.solver.extra["evaluator_objective"]
    for mip, packing in ((False, False), (True, False), (False, True), (True, True)):
        joint = sum_lower_bound(inst, SolveOptions(time_limit_s=20), mu=mu, mip=mip, time_unit_s=300.0,
                                packing=packing, fluid_factor=1.0 if packing else 2.0)
        assert joint["lower_bound_status"] == "optimal"
        assert joint["lower_bound"] <= best * (1 + 1e-9)
        for p in ("bace-pipe", "fifo", "price-pack"):
            m = simulate(inst, policy=p).metrics
            assert m["avg_jct_s"] + mu * objective_cost_usd(inst, m) >= joint["lower_bound"] * (1 - 1e-9), p
    sep = area_lower_bound(inst, SolveOptions(time_limit_s=20), mu=mu, mip=False, time_unit_s=300.0)
    lp = sum_lower_bound(inst, SolveOptions(time_limit_s=20), mu=mu, mip=False, time_unit_s=300.0)
    assert lp["lower_bound"] >= sep["lower_bound"] * (1 - 1e-9)
    if stronger:
        assert lp["lower_bound"] > sep["lower_bound"] * 1.005
    # mu = 0: the same model as the area relaxation
    zero = sum_lower_bound(inst, SolveOptions(time_limit_s=20), mu=0.0, mip=False, time_unit_s=300.0)
    assert zero["lower_bound"] == pytest.approx(area_lower_bound(inst, SolveOptions(time_limit_s=20), mip=False,
                                                                 time_unit_s=300.0)["lower_bound"], rel=1e-7)


@pytest.mark.parametrize("seed", [2, 5])
def test_cost_at_a_mean_jct_is_below_every_schedule_that_fast(seed):
    """P2.40: the least cost of any schedule with mean JCT <= X is below the cost of every schedule (the exact
    optimum at several mu, the policies) whose mean JCT is <= X; it falls as X grows; below the mean JCT
    bound there is no schedule (infeasible)."""
    from bace_opt.evaluate.metrics import objective_cost_usd
    from bace_opt.exact.p2.area import area_lower_bound
    from bace_opt.exact.p2.area_sum import sum_lower_bound
    from bace_opt.solvers.base import SolveOptions
    inst = random_instance(seed, 3, 4, max_gpus_per_region=8, max_stages=4, hourly_prices=seed == 2)
    o = SolveOptions(time_limit_s=20)
    points = [simulate(inst, policy=p).metrics for p in ("bace-pipe", "fifo", "price-pack", "cr-lcf")]
    points += [solve(inst, problem="schedule", solver="cpsat", time_limit=60, mu=mu).metrics for mu in (0.0, 2e4)]
    prev = math.inf
    for m in sorted(points, key=lambda m: m["avg_jct_s"]):
        for mip, packing in ((False, False), (True, False), (False, True)):
            b = sum_lower_bound(inst, o, mip=mip, time_unit_s=300.0, jct_cap_s=m["avg_jct_s"], packing=packing)
            assert b["lower_bound_status"] == "optimal"
            assert b["lower_bound"] <= objective_cost_usd(inst, m) * (1 + 1e-9)
        assert b["lower_bound"] <= prev * (1 + 1e-9)
        prev = b["lower_bound"]
    jct_lb = area_lower_bound(inst, o, mip=False, time_unit_s=300.0)["lower_bound_jct_s"]
    b = sum_lower_bound(inst, o, time_unit_s=300.0, jct_cap_s=jct_lb * 0.99)
    assert b["lower_bound_status"] == "infeasible" and b["lower_bound"] == math.inf


def test_measured_bandwidth_leaves_the_relaxations_unchanged():
    """The relaxations drop links, and on the paper instances every job's shortest mode is a single region:
    nominal and measured bandwidth give the same relaxation data, so the same lower bounds (benchmarks/README.md
    uses the nominal runs' bounds for the measured instances)."""
    from bace_opt.builders.paper import paper_instance
    from bace_opt.exact.p2.area import area_data
    for seed, arr in ((1, "zero"), (3, "poisson")):
        a = area_data(paper_instance(seed=seed, jobs=24, arrivals=arr))
        b = area_data(paper_instance(seed=seed, jobs=24, arrivals=arr, bandwidth_source="measured"))
        assert a == b
