"""The pooled CP-SAT search for the upper end of a P2 bracket (models/schedule.md section 8.4,
``bace_opt.exact.p2.search``): evaluator-feasible, never worse than its start orders, deterministic for a
seed with one CP-SAT worker, stops within a second, and on small instances between the area bound and the
proven exact optimum."""
from __future__ import annotations

import time

import pytest

from bace_opt import evaluate, simulate
from bace_opt.builders.paper import paper_instance
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact import solve
from bace_opt.exact.p2.candidates import enumerate_candidates
from bace_opt.exact.p2.area import area_lower_bound
from bace_opt.exact.p2.list_schedule import ListScheduler
from bace_opt.exact.p2.scale import best_list_schedule, start_orders
from bace_opt.exact.p2.search import pooled_cpsat, pooled_data, pooled_search
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

pytestmark = pytest.mark.skipif(not registry.available("cpsat"), reason="needs CP-SAT")


def _small(seed):
    return random_instance(seed, 3, 5, max_gpus_per_region=6, max_stages=4, max_arrival_s=1800.0)


def _ls(inst):
    return ListScheduler(inst, enumerate_candidates(inst, max_blocks=2, routes_k=1))


@pytest.fixture(scope="module")
def paper24():
    inst = paper_instance(seed=3, jobs=24, arrivals="poisson", bandwidth_source="nominal", name="p24")
    ls = _ls(inst)
    return inst, ls, start_orders(inst, ls, [simulate(inst, policy="bace-pipe")])


@pytest.mark.parametrize("seed", [1, 2])
def test_small_between_area_bound_and_exact_optimum(seed):
    """The exact P2 at 1 s (all no-stall placements, proven optimal) is at or above the continuous optimum, the
    area bound below it: the search's schedule is feasible, above the bound and reaches the 1-s optimum (the
    list scheduler starts in continuous time, so it may lie below it by rounding)."""
    inst = _small(seed)
    out = best_list_schedule(inst, 4.5, seed=1)
    assert out["search"] == "pooled CP-SAT + local search"
    s = out["schedule"]
    assert evaluate(inst, s).feasible and s.metrics["jobs_done"] == len(inst.jobs)
    assert s.metrics["avg_jct_s"] == pytest.approx(out["value"], rel=1e-9)
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, time_resolution_s=1.0)
    assert opt.solver.status == "optimal"
    lb = area_lower_bound(inst, SolveOptions(time_limit_s=20, threads=1))
    assert lb["lower_bound_jct_s"] - 1e-6 <= out["value"] <= opt.metrics["avg_jct_s"] + 1e-6


def test_never_worse_than_its_start_orders_and_feasible(paper24):
    inst, ls, orders = paper24
    first = min(ls.value(ls.run(o)) for o in orders)
    v, order, sol, evals, info = pooled_search(ls, orders, 6.0, seed=1)
    assert v <= first + 1e-9 and evals > len(orders)
    assert info["pooled_status"] in ("OPTIMAL", "FEASIBLE")
    assert ls.value(ls.run(order)) == pytest.approx(v, rel=1e-12)    # the order reproduces the schedule
    s = ls.schedule_of(sol)
    assert evaluate(inst, s).feasible and s.metrics["avg_jct_s"] == pytest.approx(v, rel=1e-9)


def test_pooled_solution_respects_releases_and_the_pool(paper24):
    """The pooled CP-SAT's order is a permutation; its pooled mean JCT is at least every job's own run (a
    check of the model's releases and durations) and the real list schedule of its order is feasible."""
    inst, ls, orders = paper24
    sol = ls.run(orders[0])
    cp = pooled_cpsat(ls, sol, 3.0, seed=1, workers=1)
    assert cp["status"] in ("OPTIMAL", "FEASIBLE")
    assert sorted(cp["order"]) == list(range(ls.n))
    rel, dur, w, cap = pooled_data(ls)
    assert cap == sum(r.gpus for r in inst.regions) and max(w) <= cap
    assert cp["pooled_jct_s"] >= 10.0 * sum(dur) / ls.n - 1e-6      # starts at or after the (rounded-up) arrivals
    assert evaluate(inst, ls.schedule_of(ls.run(cp["order"]))).feasible


def test_deterministic_for_a_seed_with_one_worker():
    inst = _small(3)
    ls = _ls(inst)
    orders = start_orders(inst, ls, [])
    a = pooled_search(ls, orders, 30.0, seed=5, workers=1, max_evals=300)
    b = pooled_search(_ls(inst), orders, 30.0, seed=5, workers=1, max_evals=300)
    assert a[4]["pooled_status"] == "OPTIMAL"       # CP-SAT proves the pooled 5-job model: its order is fixed
    assert a[3] == b[3] == 2 * 300 and a[:3] == b[:3]


def test_stop_callback_ends_the_search_within_a_second(paper24):
    inst, ls, orders = paper24
    t0 = time.perf_counter()
    v, order, sol, evals, info = pooled_search(ls, orders, 60.0, seed=1, stop=lambda: time.perf_counter() - t0 > 1.0)
    assert time.perf_counter() - t0 < 2.0 and "pooled_status" not in info
    assert evaluate(inst, ls.schedule_of(sol)).feasible
    t0 = time.perf_counter()
    cp = pooled_cpsat(ls, sol, 60.0, seed=1, stop=lambda: time.perf_counter() - t0 > 1.0)
    assert time.perf_counter() - t0 < 2.0 and cp["status"] in ("FEASIBLE", "OPTIMAL")


def test_other_goals_keep_the_local_search():
    inst = _small(1)
    for goal in ("cost", "sum"):
        out = best_list_schedule(inst, 0.5, goal=goal, mu=1.0, seed=1)
        assert out["search"] == "local search" and evaluate(inst, out["schedule"]).feasible
    with pytest.raises(ValueError):
        best_list_schedule(inst, 0.5, search="annealing")
