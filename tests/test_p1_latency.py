"""Issue 44 item 3: the latency floors of P1's level 2 (``p1.latency``, P1.61-P1.62).  Every floor row holds at
every integral placement of the walk model (the proven optima and the starts); the stage relaxation with the
floors and its rounds stays at or below the proven optima (paper, realistic, random, binding instances) and at or
above the one without them; its placement made whole passes the evaluator, its cost the evaluator's."""
from __future__ import annotations

import itertools
import math
import time

import pyomo.environ as pyo
import pytest

import bace_opt as bo
from bace_opt.evaluate import evaluate, make_schedule
from bace_opt.exact.p1 import walk
from bace_opt.exact.p1.data import PlacementData, cost_at_t0_usd
from bace_opt.exact.p1.latency import (add_latency_floors, extend_latency_floors, job_metric,
                                       latency_cost_rate, path_floor, violated_sets)
from bace_opt.exact.p1.solution import solution_cost, solution_from_plans, start_candidates
from bace_opt.exact.p1.stage import repair, stage_bound, stage_plans
from bace_opt.solvers.base import SolveOptions
from test_p1_bound import CASES, INST, _level2_model


def _all_sets(data, size):
    return {d.j: list(itertools.combinations(sorted(d.regions), size)) for d in data.jobs if d.K > 1}


def _violated(m, tol=1e-7):
    bad = []
    for c in list(m.con_lat_floor.values()) + list(m.con_lat_link.values()):
        v = pyo.value(c.body)
        if c.lb is not None and v < c.lb - tol * max(1.0, abs(c.lb)):
            bad.append((c.name, v, c.lb))
        if c.ub is not None and v > c.ub + tol * max(1.0, abs(c.ub)):
            bad.append((c.name, v, c.ub))
    return bad


def test_path_floor_metric():
    metric = {(0, 1): 3.0, (1, 0): 3.0, (1, 2): 4.0, (2, 1): 4.0, (0, 2): 5.0, (2, 0): 5.0}
    assert path_floor(metric, (0, 1)) == 3.0
    assert path_floor(metric, (0, 1, 2)) == 7.0             # 0-1-2, the shortest of the three orders
    assert path_floor(metric, (2,)) == 0.0
    assert math.isinf(path_floor({}, (0, 1)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_floor_rows_hold_at_integral_placements(name):
    inst = bo.load_instance(INST / name)
    data = PlacementData(inst)
    r = bo.solve(inst, problem="placement", threads=1, time_limit=60, levels=2)
    sols = list(start_candidates(data, None))
    sols.append(solution_from_plans(data, [j.plan for j in r.jobs if j.plan is not None and j.plan.status == "done"]))
    m = _level2_model(data, CASES[name][0])
    sets = _all_sets(data, 3)
    for k, v in _all_sets(data, 4).items():
        sets.setdefault(k, []).extend(v)
    n = len(add_latency_floors(m, sets, active=True))
    assert n == len(m.con_lat_floor)
    for sol in sols:
        if sol is None or walk.load_solution_into_pyomo(m, sol) is False:
            continue
        for j in m.lat_w:                           # w_j at its largest: the trail's latency cost rate
            m.lat_w[j].set_value(latency_cost_rate(m, j))
        assert _violated(m) == [], name


def _check_stage(inst, data, z1, z2):
    m = _level2_model(data, z1)
    active = sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))
    plain = stage_bound(m, SolveOptions(time_limit_s=60), time.perf_counter())
    st = stage_bound(m, SolveOptions(time_limit_s=200), time.perf_counter(), floors=True)
    assert sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True)) == active   # floors left off
    assert st.mip_bound is not None and st.mip_bound <= z2 * (1 + 1e-9) + 1e-12
    assert st.mip_bound >= plain.mip_bound * (1 - 1e-6) - 1e-9
    plans = stage_plans(data, st)
    if plans:
        sol = repair(data, st)
        assert sol is not None and solution_cost(data, sol) >= z2 * (1 - 1e-9)
        rep = evaluate(inst, make_schedule(inst, plans, method="stage relaxation with floors made whole"))
        assert rep.feasible, rep.summary()
        assert cost_at_t0_usd(inst, plans, data.t0) == pytest.approx(solution_cost(data, sol), rel=1e-9)
    return st


@pytest.mark.parametrize("name", sorted(CASES))
def test_stage_with_floors_at_or_below_the_optimum(name):
    inst = bo.load_instance(INST / name)
    _check_stage(inst, PlacementData(inst), *CASES[name])


def test_random_instances_stage_with_floors_at_or_below_the_optimum():
    from bace_opt.builders.synthetic import random_instance
    for seed in (1, 2, 3):
        inst = random_instance(seed, 5, 5, topology="sparse", transit=2, mixed_gpus=True, max_gpus_per_region=6,
                               max_stages=5, egress=seed % 2 == 0)
        r = bo.solve(inst, problem="placement", threads=1, time_limit=60, levels=2)
        lv = {x["level"]: x for x in r.solver.extra["levels"]}
        assert r.solver.status == "optimal"
        _check_stage(inst, PlacementData(inst), int(lv[1]["objective"]), lv[2]["objective"])


def test_violated_sets_cut_off_the_solution_and_extend():
    inst = bo.load_instance(INST / "paper-6r-8j-seed1.json")
    data = PlacementData(inst)
    d = next(d for d in data.jobs if d.K > 1 and len(d.regions) >= 3)
    regs = sorted(d.regions)[:3]
    metric = job_metric(data, d)
    stages = {(d.j, r, 0): 1 for r in regs}
    got = violated_sets(data, stages, {})
    pair = max(metric[a, b] for a, b in itertools.combinations(regs, 2))
    if path_floor(metric, regs) > pair * (1 + 1e-9):
        assert got == {d.j: [tuple(regs)]}
        assert violated_sets(data, stages, got) == {}
    else:
        assert got == {}
    m = _level2_model(data, CASES["paper-6r-8j-seed1.json"][0])
    n0 = len(add_latency_floors(m, active=False))
    assert not m.con_lat_floor.active
    extend_latency_floors(m, {d.j: [tuple(regs)]})
    assert len(m.con_lat_floor) == n0 + (1 if path_floor(metric, regs) > 0 else 0)


def test_floors_pay_by_size(monkeypatch):
    from bace_opt.exact.p1 import latency
    data = PlacementData(bo.load_instance(INST / "paper-6r-8j-seed1.json"))
    assert not latency.floors_pay(data)              # 240 arc binaries: the walk search proves it alone
    monkeypatch.setattr(latency, "MIN_ARCS", 0)
    assert latency.floors_pay(data)


@pytest.mark.parametrize("name", ["paper-6r-8j-seed1.json", "realistic-6r-8j-seed1.json",
                                  "paper-6r-8j-seed1-gpu0.5.json"])
def test_solve_with_floors_proves_the_optimum_and_its_placement_passes(monkeypatch, name):
    from bace_opt.exact.p1 import latency
    monkeypatch.setattr(latency, "MIN_ARCS", 0)      # the floors on, as at fleet scale
    inst = bo.load_instance(INST / name)
    z1, z2 = CASES[name]
    r = bo.solve(inst, problem="placement", threads=1, time_limit=60, levels=2)
    lv = {x["level"]: x for x in r.solver.extra["levels"]}
    assert r.solver.status == "optimal"
    assert lv[1]["objective"] == z1 and lv[2]["objective"] == pytest.approx(z2, rel=1e-6)
    st = lv[2]["stage_relaxation"]
    assert st["mip_bound"] is None or st["mip_bound"] <= z2 * (1 + 1e-9) + 1e-12
    data = PlacementData(inst)
    plans = [j.plan for j in r.jobs if j.plan is not None and j.plan.status == "done"]
    rep = evaluate(inst, make_schedule(inst, plans, method="P1 with floors"))
    assert rep.feasible, rep.summary()
    assert cost_at_t0_usd(inst, plans, data.t0) == pytest.approx(lv[2]["objective"], rel=1e-9)
    tl = r.solver.extra["timeline"]     # what the time line says is what the solve has: no incumbent below it
    assert min(p["incumbent"] for p in tl if p["incumbent"] is not None) >= lv[2]["objective"] * (1 - 1e-9)


def test_lazy_pairs_only_for_the_jobs_named():
    from bace_opt.exact.p1.latency import floor_rows
    inst = bo.load_instance(INST / "paper-6r-8j-seed1.json")
    data = PlacementData(inst)
    m = _level2_model(data, CASES["paper-6r-8j-seed1.json"][0])
    assert add_latency_floors(m, active=False, jobs=set()) == []          # the link rows only
    j = next(d.j for d in data.jobs if d.K > 1 and len(d.regions) >= 2)
    got = extend_latency_floors(m, {}, {j})
    want = floor_rows(data, None, {j})
    assert len(got) == len(want) > 0 and all(r[0] == j and len(r[1]) == 2 for r in want)
    assert len(floor_rows(data)) >= len(want)


@pytest.mark.parametrize("name", ["paper-6r-8j-seed1.json", "realistic-6r-8j-seed1.json"])
def test_made_whole_offered_as_made_under_the_search_rows(name):
    """The first round's placement made whole is offered as soon as it is made (the plain MIP's, not after the
    floors' rounds), while the model carries the search's rows (the walk rows on, the floors off); the stage's rows
    are back after each offer, and the model's rows at the end are those before the stage."""
    from bace_opt.exact.p1.stage import ARC_ROWS, TRAIL_ROWS
    inst = bo.load_instance(INST / name)
    data = PlacementData(inst)
    z1, z2 = CASES[name]
    m = _level2_model(data, z1)
    active = sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))
    walk_rows = [getattr(m, n) for n in TRAIL_ROWS + ARC_ROWS if hasattr(m, n) and getattr(m, n).active]
    got = []

    def offer(sol, usd):
        assert all(c.active for c in walk_rows) and not m.con_lat_floor.active and not m.con_lat_link.active
        assert solution_cost(data, sol) == pytest.approx(usd, rel=1e-12) and usd >= z2 * (1 - 1e-9)
        got.append(usd)

    st = stage_bound(m, SolveOptions(time_limit_s=200), time.perf_counter(), floors=True, on_made_whole=offer)
    assert sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True)) == active
    if st.made_whole is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0] >= st.made_whole_usd      # the first, once (the cheapest is kept)
