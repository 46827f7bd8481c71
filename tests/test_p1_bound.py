"""Issue 44: a certified level-2 bound that always arrives early.  The safe dual bound of an LP (any dual point),
the stage relaxation (its LP and MIP at or below the proven optima; its placement made whole is feasible), the
fixed vocabulary of ``bound_source``, the time line, and P2's packing MIP that has its LP's bound first."""
from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

import bace_opt as bo
from bace_opt.evaluate import evaluate, make_schedule
from bace_opt.exact.p1 import walk
from bace_opt.exact.p1.certify import BOUND_SOURCES, SOURCE_FLOOR, SOURCE_STAGE_LP, Timeline
from bace_opt.exact.p1.data import PlacementData, cost_at_t0_usd
from bace_opt.exact.p1.lpbound import LpArrays, safe_dual_bound
from bace_opt.exact.p1.solution import solution_cost
from bace_opt.exact.p1.stage import repair, stage_bound, stage_plans
from bace_opt.solvers.base import SolveOptions

ROOT = Path(__file__).resolve().parent.parent
INST = ROOT / "instances"
#: proven level-1 and level-2 optima (walk engine, HiGHS; tests/test_p1_engine.py solves the paper ones again)
CASES = {"paper-6r-8j-seed1.json": (6, 146.30825555841002), "paper-6r-8j-seed2.json": (5, 25.77212136711),
         "paper-6r-8j-seed3.json": (4, 14.002362174326333), "realistic-6r-8j-seed1.json": (7, 94.38712643949452),
         "small-4r-6j.json": (6, 0.052584694141472994), "paper-6r-8j-seed1-bw0.3.json": (6, 146.30825555841002),
         "paper-6r-8j-seed1-gpu0.5.json": (3, 26.079989678173334)}    # bw0.3 / gpu0.5: bandwidth, GPUs binding


def _tiny_lp():
    """min x + 2y s.t. x + y >= 1, x - y <= 0.5, 0 <= x, y <= 3 (optimum 1.25 at x = 0.75, y = 0.25)."""
    return LpArrays(c=np.array([1.0, 2.0]), offset=0.0, l=np.zeros(2), u=np.full(2, 3.0),
                    rl=np.array([1.0, -np.inf]), ru=np.array([np.inf, 0.5]), row=np.array([0, 0, 1, 1]),
                    col=np.array([0, 1, 0, 1]), value=np.array([1.0, 1.0, 1.0, -1.0]))


def test_safe_dual_bound_of_any_dual_point_is_below_the_optimum():
    lp = _tiny_lp()
    opt = 1.25
    assert safe_dual_bound(lp, [1.5, -0.5]) == pytest.approx(opt, rel=1e-12)    # the optimal duals
    assert safe_dual_bound(lp, [1.5, -0.5]) <= opt
    rng = random.Random(3)
    for _ in range(200):                      # any point, of any sign: a bound, never above the optimum
        y = [rng.uniform(-3, 3), rng.uniform(-3, 3)]
        b = safe_dual_bound(lp, y)
        assert b is not None and b <= opt
    assert safe_dual_bound(lp, [math.nan, 0.0]) is None
    free = LpArrays(**{**lp.__dict__, "u": np.array([np.inf, 3.0])})
    assert safe_dual_bound(free, [0.0, 0.0]) == pytest.approx(0.0, abs=1e-12)   # d >= 0 needs no upper bound
    assert safe_dual_bound(free, [3.0, 0.0]) is None                             # d_x = -2 would need one


def _level2_model(data, z1):
    m = walk.build_model(data)
    walk.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    m.obj_count.deactivate()
    m.obj_cost.activate()
    return m


@pytest.mark.parametrize("name", sorted(CASES))
def test_stage_relaxation_at_or_below_the_optimum_and_its_placement_feasible(name):
    import time
    inst = bo.load_instance(INST / name)
    z1, z2 = CASES[name]
    data = PlacementData(inst)
    m = _level2_model(data, z1)
    active = sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))
    st = stage_bound(m, SolveOptions(time_limit_s=30), time.perf_counter())
    assert sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True)) == active     # rows restored
    assert st.lp_bound is not None and st.mip_bound is not None
    assert st.lp_bound <= st.mip_bound * (1 + 1e-9) + 1e-12
    assert st.mip_bound <= z2 * (1 + 1e-9)
    assert st.bound >= 0.9 * z2 - 1e-9              # and close to it on these instances (within 10 %)
    plans = stage_plans(data, st)
    if plans:                                       # made whole: feasible, the model's cost is the evaluator's
        sol = repair(data, st)
        assert sol is not None and solution_cost(data, sol) >= z2 * (1 - 1e-9)
        rep = evaluate(inst, make_schedule(inst, plans, method="stage relaxation made whole"))
        assert rep.feasible, rep.summary()
        assert cost_at_t0_usd(inst, plans, data.t0) == pytest.approx(solution_cost(data, sol), rel=1e-9)


def test_random_instances_stage_bound_at_or_below_the_optimum():
    import time
    from bace_opt.builders.synthetic import random_instance
    for seed in (1, 2):
        inst = random_instance(seed, 4, 4, topology="sparse", transit=2, mixed_gpus=True, max_gpus_per_region=6,
                               max_stages=4, egress=seed % 2 == 0)
        r = bo.solve(inst, problem="placement", threads=1, time_limit=30, levels=2)
        lv = {x["level"]: x for x in r.solver.extra["levels"]}
        assert r.solver.status == "optimal" and lv[2]["bound_source"] in BOUND_SOURCES
        data = PlacementData(inst)
        st = stage_bound(_level2_model(data, int(lv[1]["objective"])), SolveOptions(time_limit_s=30),
                         time.perf_counter())
        assert st.bound is not None and st.bound <= lv[2]["objective"] * (1 + 1e-9) + 1e-12


def test_solve_reports_a_bound_source_and_a_time_line():
    inst = bo.load_instance(INST / "paper-6r-8j-seed2.json")
    s = bo.solve(inst, problem="placement", threads=1, time_limit=30, levels=2)
    lv = {x["level"]: x for x in s.solver.extra["levels"]}
    assert lv[2]["bound_source"] in BOUND_SOURCES
    assert lv[2]["stage_relaxation"]["mip_bound"] <= lv[2]["objective"] * (1 + 1e-9)
    tl = s.solver.extra["timeline"]
    assert tl and all(set(p) == {"t_s", "bound", "incumbent", "bound_source"} for p in tl)
    assert all(p["bound_source"] in BOUND_SOURCES for p in tl)
    assert [p["t_s"] for p in tl] == sorted(p["t_s"] for p in tl)
    bounds = [p["bound"] for p in tl if p["bound"] is not None]
    incs = [p["incumbent"] for p in tl if p["incumbent"] is not None]
    assert bounds == sorted(bounds) and incs == sorted(incs, reverse=True)
    assert bounds[-1] <= incs[-1] * (1 + 1e-9)
    assert s.meta["cost_at_t0_usd"] == pytest.approx(lv[2]["objective"], rel=1e-9)
    rep = evaluate(inst, s)
    assert rep.feasible, rep.summary()


def test_bound_source_vocabulary_and_timeline():
    assert len(set(BOUND_SOURCES)) == len(BOUND_SOURCES) and SOURCE_FLOOR.startswith("cost floor")
    t = Timeline()
    t.add(None, 10.0)
    t.add(5.0, None, SOURCE_STAGE_LP)
    t.add(4.0, 11.0, SOURCE_FLOOR)                 # neither moves: no point
    assert [(p.bound, p.incumbent, p.bound_source) for p in t.points] == [(None, 10.0, "none"),
                                                                             (5.0, 10.0, SOURCE_STAGE_LP)]
    with pytest.raises(ValueError):
        t.add(6.0, None, "my guess")


def test_packing_mip_has_its_lp_bound_first():
    from bace_opt.exact.p2.lower import packing_lower_bound
    inst = bo.load_instance(INST / "paper-6r-8j-seed1.json")
    opts = SolveOptions(time_limit_s=20, threads=1)
    lp = packing_lower_bound(inst, opts, time_unit_s=3600.0)["lower_bound_jct_s"]
    mip = packing_lower_bound(inst, opts, time_unit_s=3600.0, mip=True)
    assert mip["lower_bound_lp_first"] == pytest.approx(lp, rel=1e-6)
    assert mip["lower_bound_lp_first"] <= lp * (1 + 1e-12)      # the safe value is never above the LP's own
    assert mip["lower_bound_jct_s"] >= mip["lower_bound_lp_first"]


def test_a_solve_in_a_worker_thread_proves_every_level():
    """The stage relaxation's HiGHS sizes the calling thread's task scheduler; a later level solved in the same
    thread (a Dask or race worker runs P1 outside the main thread) must still prove its optimum."""
    import threading
    import bace_opt as bo
    from bace_opt.bench.suites import specs_for
    from bace_opt.bench.tasks import build_instance
    spec = [s for s in specs_for("gap", "small") if s.size == "3r-3j" and s.seed == 1][0]
    inst = build_instance(spec)
    out = {}
    t = threading.Thread(target=lambda: out.update(s=bo.solve(inst, problem="placement", time_limit=60)))
    t.start()
    t.join()
    assert out["s"].solver.status == "optimal", out["s"].solver.message
