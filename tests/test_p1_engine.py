"""P1's engines and what a solve reports when it is not proven (issue 37, steps 3-5): the engine rule, the
certified bound and gap, the heuristic start, the time left for a level, and the gap's certified ranges."""
from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.errors import InputError
from bace_opt.exact.p1 import backend as pb
from bace_opt.exact.p1.certify import SOURCE_NONE, SOURCE_SEARCH, certify_levels, cost_floor, job_floor
from bace_opt.exact.p1.data import PlacementData, count_upper_bound
from bace_opt.exact.p1.milp import MIN_LEVEL_S, out_of_time
from bace_opt.gaps.decompose import Solve, decompose, heuristic_epoch, p1_cost
from bace_opt.solvers.base import SolveOptions

ROOT = Path(__file__).resolve().parent.parent
PAPER = [ROOT / "instances" / f"paper-6r-8j-seed{s}.json" for s in (1, 2, 3)]


@pytest.fixture(scope="module")
def optima():
    """(instance, data, proven level-1 count, proven level-2 cost) of the paper instances (walk engine)."""
    out = []
    for f in PAPER:
        inst = bo.load_instance(f)
        r = pb.solve_one(inst, options=SolveOptions(time_limit_s=60, threads=1), levels=2)
        assert r.solver_info.status == "optimal"
        lv = {x["level"]: x for x in r.levels}
        out.append((inst, PlacementData(inst), int(lv[1]["objective"]), lv[2]["objective"]))
    return out


def test_cost_floor_is_below_the_optimum_and_each_placement(optima):
    for inst, data, z1, z2 in optima:
        floor = cost_floor(data, z1)
        assert floor is not None and 0 < floor <= z2 * (1 + 1e-9)
        # each job's floor is below the cost of any placement of it alone: the optimum's own placements
        r = pb.solve_one(inst, options=SolveOptions(time_limit_s=60, threads=1), levels=2)
        from bace_opt.exact.placement import cost_at_t0_usd
        for p in r.plans:
            d = next(d for d in data.jobs if d.job.name == p.name)
            assert job_floor(data, d) <= cost_at_t0_usd(inst, [p], data.t0) * (1 + 1e-9)


def test_cost_floor_refuses_negative_prices():
    inst = bo.load_instance(PAPER[0])
    data = PlacementData(inst)
    d = data.jobs[0]
    d.pi[d.regions[0]] = -1.0
    assert cost_floor(data, 1) is None


def test_certify_levels_raises_a_missing_or_infinite_bound(optima):
    _, data, z1, z2 = optima[0]
    lv = [{"level": 1, "status": "optimal", "objective": float(z1), "bound": float(z1), "gap": 0.0},
          {"level": 2, "status": "feasible", "objective": z2 * 1.1, "bound": -math.inf, "gap": None},
          {"level": 3, "status": "time_limit", "objective": None, "bound": math.nan, "gap": None}]
    certify_levels(data, lv)
    assert lv[1]["bound"] == pytest.approx(cost_floor(data, z1))
    assert lv[1]["bound_source"].startswith("cost floor")
    assert lv[1]["gap"] == pytest.approx(1 - lv[1]["bound"] / lv[1]["objective"])
    assert lv[2]["bound"] is None
    # a better bound of the engine's own is kept; an unproven count gives no floor
    lv = [{"level": 1, "status": "optimal", "objective": float(z1)},
          {"level": 2, "status": "feasible", "objective": z2 * 1.1, "bound": z2, "gap": 0.1}]
    assert certify_levels(data, lv)[1]["bound"] == z2 and lv[1]["bound_source"] == SOURCE_SEARCH
    lv = [{"level": 1, "status": "feasible", "objective": float(z1)},
          {"level": 2, "status": "feasible", "objective": z2 * 1.1, "bound": None, "gap": None}]
    assert certify_levels(data, lv)[1]["bound"] is None and lv[1]["bound_source"] == SOURCE_NONE



def test_certify_levels_drops_a_bound_a_feasible_placement_refutes(optima):
    """A bound above the cost of a feasible placement is wrong (a cut stronger than the problem): it is listed
    as a conflict and dropped, and an 'optimal' resting on it is demoted; never capped to the incumbent.  A bound
    above it within the numerical tolerance still proves it."""
    _, data, z1, z2 = optima[0]
    lv = [{"level": 1, "status": "optimal", "objective": float(z1)},
          {"level": 2, "status": "optimal", "objective": z2, "bound": z2 * 1.05, "gap": 0.0, "message": None}]
    certify_levels(data, lv)
    assert lv[1]["status"] == "feasible" and "refuted" in lv[1]["message"]
    assert lv[1]["bound_conflicts"] == [{"bound": z2 * 1.05, "bound_source": SOURCE_SEARCH, "incumbent": z2}]
    assert lv[1]["bound"] == pytest.approx(cost_floor(data, z1)) and lv[1]["bound"] < z2
    lv = [{"level": 1, "status": "optimal", "objective": float(z1)},
          {"level": 2, "status": "optimal", "objective": z2, "bound": z2 * (1 + 1e-8), "gap": 0.0}]
    certify_levels(data, lv)
    assert lv[1]["status"] == "optimal" and lv[1]["bound"] == z2 and "bound_conflicts" not in lv[1]

def test_engine_rule():
    data = PlacementData(bo.load_instance(PAPER[0]))
    assert pb.choose_engine(data, "highs", "auto")[0] == "walk"
    assert pb.choose_engine(data, "cpsat", "auto")[0] == "walk"
    assert pb.choose_engine(data, "highs", "cg") == ("cg", "named by the caller")
    eng, why = pb.choose_engine(data, "highs", "auto", max_binaries=10)      # the walk model is not built
    assert eng == "cg" and "> max_binaries=10" in why
    assert pb.choose_engine(data, "scip", "auto", max_binaries=10)[0] == "walk"
    with pytest.raises(InputError, match="engine 'cg' runs on HiGHS"):
        pb.choose_engine(data, "cpsat", "cg")
    with pytest.raises(InputError, match="engine: must be one of"):
        pb.choose_engine(data, "highs", "colgen")


def test_auto_runs_cg_where_the_walk_model_is_refused():
    inst = bo.load_instance(ROOT / "instances" / "tiny-2r-2j.json")
    r = pb.solve_one(inst, options=SolveOptions(time_limit_s=60, threads=1), levels=2, max_binaries=5,
                     engine="auto")
    assert r.solver_info.extra["engine"] == "cg" and r.solver_info.status == "optimal"
    w = pb.solve_one(inst, options=SolveOptions(time_limit_s=60, threads=1), levels=2, engine="walk")
    assert r.solver_info.objective == pytest.approx(w.solver_info.objective, rel=1e-6)
    assert pb.solve_one(inst, levels=2, max_binaries=5, engine="walk").solver_info.status == "error"


def test_engine_is_reported_and_checked():
    inst = bo.load_instance(PAPER[0])
    s = bo.solve(inst, time_limit=60, threads=1, levels=2)
    assert s.meta["engine"] == "walk" and s.solver.extra["engine_rule"].startswith("the faster engine")
    assert s.meta["start"] == "heuristic:select-pack"
    with pytest.raises(InputError, match="engine 'cg' is not a member of a race"):
        bo.solve(inst, solver="race", engine="cg", time_limit=5)
    with pytest.raises(InputError, match="engine: must be one of"):
        bo.gap(inst, "select-pack", engine="nope")


def test_heuristic_start_only_at_the_plain_epoch():
    inst = bo.load_instance(PAPER[0])
    names = [j.name for j in inst.jobs][:3]
    s = bo.solve(inst, time_limit=60, threads=1, levels=2, jobs=names)
    assert s.meta["start"] is None
    s = bo.solve(inst, time_limit=60, threads=1, levels=2, heuristic_start=False)
    assert s.meta["start"] is None


def test_a_level_is_not_started_without_time():
    now = time.perf_counter()
    assert out_of_time(SolveOptions(time_limit_s=100.0), now - 100 + MIN_LEVEL_S / 2)
    assert not out_of_time(SolveOptions(time_limit_s=100.0), now - 50)
    assert out_of_time(SolveOptions(time_limit_s=2.0), now - 1.8)      # a quarter of a short limit
    assert not out_of_time(SolveOptions(time_limit_s=2.0), now - 1.0)
    assert not out_of_time(SolveOptions(time_limit_s=None), now - 1e6)


def test_certified_gap_when_the_optimum_is_not_proven(optima):
    inst, data, z1, z2 = optima[0]
    h = heuristic_epoch(inst, "bace-pipe")
    hcost = p1_cost(inst, h, data.t0)
    n = sum(1 for p in h.jobs if p.status == "done")
    assert n == z1, "bace-pipe starts the most jobs on this instance (the test needs the same admissions)"
    bound, inc = 0.9 * z2, 1.05 * z2
    opt = Solve("feasible", z1, inc, bound, 1.0, count_proven=True, engine="walk")
    g = decompose(inst, "bace-pipe", optimum=opt, heuristic=h, time_limit_s=30)
    assert g.cost_gap is None and not g.proven
    assert g.cost_gap_at_most == pytest.approx(hcost / bound - 1)
    assert g.cost_gap_at_least == pytest.approx(max(0.0, hcost / min(inc, hcost) - 1))
    # no bound, or an unproven count: nothing is certified
    g = decompose(inst, "bace-pipe", optimum=Solve("feasible", z1, inc, None, 1.0, count_proven=True), heuristic=h,
                  time_limit_s=30)
    assert g.cost_gap_at_most is None
    g = decompose(inst, "bace-pipe", optimum=Solve("feasible", z1, inc, bound, 1.0), heuristic=h, time_limit_s=30)
    assert g.cost_gap_at_most is None and g.same_admissions is None
