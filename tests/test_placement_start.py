"""P1 fourth round (models/placement.md section 9d): the price-pack MIP start and the level-3 proof with the
level-2 limit as a HiGHS objective cutoff (P1.51) keep the brute-force optimum, and the tests can fail: a
cutoff set too low certifies a wrong level 3, and a cutoff set too high must not let a dearer solution in."""
from __future__ import annotations

import pytest

from bace_opt.exact.p1 import milp as M
from bace_opt.exact.p1 import solution as S
from bace_opt.exact.placement import solve_placement
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.solution import (greedy_start, solution_cost, solution_from_plans,
                                               start_candidates)
from bace_opt.schedule import Block, Hop, JobPlan
from bace_opt.solvers.base import SolveOptions

from test_placement import brute_force, make
from test_placement_speed import SPAN, _tiny

OPT = SolveOptions(time_limit_s=30)


def _levels(inst, **kw):
    r = solve_placement(inst, options=OPT, **kw)
    assert r.solver_info.status == "optimal", r.solver_info
    return [l["objective"] for l in r.levels], r


def _matches_brute_force(inst, got):
    n_bf, cost_bf, run_bf = brute_force(inst)
    return got[0] == n_bf and got[1] == pytest.approx(cost_bf, rel=1e-6, abs=1e-12) \
        and got[2] == pytest.approx(run_bf, rel=1e-6)


# ---------------------------------------------------------------------- the price-pack start

def test_start_candidates_best_first_and_price_pack_no_dearer_than_greedy():
    data = PlacementData(SPAN)
    cands = start_candidates(data, None)
    keys = [(-sum(1 for v in c.x.values() if v > 0.5), solution_cost(data, c)) for c in cands]
    assert keys == sorted(keys)
    g = solution_from_plans(data, greedy_start(data))
    assert keys[0] <= (-sum(1 for v in g.x.values() if v > 0.5), solution_cost(data, g))


def test_a_failing_price_pack_start_leaves_the_greedy_start(monkeypatch):
    from bace_opt.policies import price_pack

    def boom(*a, **k):
        raise RuntimeError("planted")
    monkeypatch.setattr(price_pack.PricePack, "decide", boom)
    data = PlacementData(SPAN)
    assert S.price_pack_start(data) is None
    assert len(start_candidates(data, None)) == 1
    got, _ = _levels(SPAN)
    assert _matches_brute_force(SPAN, got)


@pytest.mark.parametrize("seed", range(3))
def test_the_start_does_not_change_the_optimum(seed, monkeypatch):
    inst = _tiny(seed)
    on, _ = _levels(inst)
    monkeypatch.setattr(S, "COST_START", False)
    off, _ = _levels(inst)
    assert on[0] == off[0] and on[1:] == pytest.approx(off[1:], rel=1e-6, abs=1e-12)
    assert _matches_brute_force(inst, on)


# ---------------------------------------------------------------------- P1.51 the level-3 cutoff

def _proof(monkeypatch, inst, plans, slack=None, check=True):
    """The level-3 proof (``p1.milp._level3_by_cost``) from the level-2 solution ``plans`` (whose cost is
    fixed as the level-2 optimum), with the cutoff slack and the above-the-row check as given.  Returns the
    level-3 result (termination, run time)."""
    import time

    import pyomo.environ as pyo

    from bace_opt.exact.p1 import walk as W
    if slack is not None:
        monkeypatch.setattr(M, "LEVEL3_CUTOFF_SLACK", slack)
    monkeypatch.setattr(M, "LEVEL3_CUTOFF_CHECK", check)
    data = PlacementData(inst)
    sol = solution_from_plans(data, plans)
    m = W.build_model(data)
    z1 = sum(1 for v in sol.x.values() if v > 0.5)
    W.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    assert W.load_solution_into_pyomo(m, sol)
    z2 = pyo.value(m.obj_cost.expr)
    m.level2_limit = z2 + M.LEVEL_TOL * max(abs(z2), 1e-9)
    m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    m.obj_count.deactivate()
    res, _ = M._level3_by_cost(m, W, sol, "highs", OPT, time.perf_counter())
    _proof.message = res.message
    return res.termination.value, res.objective


#: every price 0, so every placement costs 0 and level 3 alone decides; the level-2 solution SLOW (k split A-C
#: over the 40 ms link) costs 0 but is not the shortest (every job fits one region: 180 s in all)
ZERO = make([("A", 2, 0.0), ("B", 2, 0.0), ("C", 2, 0.0)],
            [("A", "B", 10, 5), ("B", "C", 10, 80), ("A", "C", 10, 40)],
            [("j", 2, 25.0), ("k", 2, 25.0)])
SLOW = [JobPlan("j", "done", 0.0, (Block("B", 2),), ()),
        JobPlan("k", "done", 0.0, (Block("A", 1), Block("C", 1)), (Hop(("A", "C"), 1.0),))]


def test_level3_cutoff_finds_the_run_time_optimum(monkeypatch):
    run_bf = brute_force(ZERO)[2]
    assert _proof(monkeypatch, ZERO, SLOW) == ("optimal", pytest.approx(run_bf, rel=1e-9))
    got, _ = _levels(ZERO, warm_start=SLOW)
    assert _matches_brute_force(ZERO, got)


def test_planted_low_cutoff_certifies_a_wrong_level3(monkeypatch):
    """A cutoff below the level-2 optimum (here 0: the cutoff is 1e-9 x slack = -1e-3 USD) prunes everything: the
    slow solution is 'proven' optimal, which the brute force refutes, so the agreement tests can fail."""
    term, run = _proof(monkeypatch, ZERO, SLOW, slack=-1e6)
    assert term == "optimal" and run > brute_force(ZERO)[2] * (1 + 1e-6)


#: one job of 2 stages over three 1-GPU regions: A-B (cheap, direct 40 ms; via C 55 ms) is the cost optimum (run
#: 98 s); B-C (5 ms) runs shorter (91 s) but costs 39 % more, so it lies under a cutoff of 2 z2 and above the
#: level-2 row
PRICED = make([("A", 1, 0.10), ("B", 1, 0.10), ("C", 1, 0.20)],
              [("A", "B", 10, 40), ("B", "C", 10, 5), ("A", "C", 10, 50)],
              [("k", 2, 25.0)])
CHEAP = [JobPlan("k", "done", 0.0, (Block("A", 1), Block("B", 1)), (Hop(("A", "B"), 1.0),))]


def test_high_cutoff_does_not_let_a_dearer_faster_solution_in(monkeypatch):
    """With the cutoff far above the level-2 limit the proof meets the dearer, faster placement under it.  The
    driver must not take it: either the search ended on it (then it proves that nothing at or below the limit
    runs shorter, P1.51 (c)) or it stopped at it (then the row is restored and the round repeated).  Without
    that check (planted) it returns the dearer placement's run time, which the brute force refutes."""
    n_bf, cost_bf, run_bf = brute_force(PRICED)
    got, _ = _levels(PRICED)
    assert _matches_brute_force(PRICED, got)
    assert _proof(monkeypatch, PRICED, CHEAP, slack=1.0) == ("optimal", pytest.approx(run_bf, rel=1e-9))
    assert "ended on a solution above" in _proof.message
    real = M._run_backend

    def stops_at_first(*a, **k):        # as HiGHS does on a larger model: it stops at the first solution found
        res = real(*a, **k)
        if res.has_solution and res.termination.value == "optimal":
            res.termination = type(res.termination)("feasible")
        return res
    with monkeypatch.context() as mp:
        mp.setattr(M, "_run_backend", stops_at_first)
        assert _proof(mp, PRICED, CHEAP, slack=1.0) == ("optimal", pytest.approx(run_bf, rel=1e-9))
        assert "1 refused" in _proof.message
    term, run = _proof(monkeypatch, PRICED, CHEAP, slack=1.0, check=False)
    assert run < run_bf * (1 - 1e-6)


def test_start_budget_shrinks_with_size_and_stays_deterministic(monkeypatch):
    """The price-pack start's packing budget: COST_START_EVALS at the realistic family's size (16 jobs x 8 regions)
    and below, a quarter of it at twice that size, never under 20 (the 20-region fleet's start took minutes with
    the full budget)."""
    from bace_opt.builders.synthetic import random_instance

    small = PlacementData(SPAN)
    assert S.start_evals(small) == S.COST_START_EVALS
    big = PlacementData(random_instance(seed=1, n_regions=8, n_jobs=32))
    assert len(big.jobs) * len(big.inst.regions) == 2 * S.COST_START_REF_SIZE
    assert S.start_evals(big) == S.COST_START_EVALS // 4
    huge = PlacementData(random_instance(seed=1, n_regions=16, n_jobs=64))
    assert S.start_evals(huge) == S.COST_START_EVALS // 64
    monkeypatch.setattr(S, "COST_START_EVALS", 200)
    assert S.start_evals(huge) == 20
