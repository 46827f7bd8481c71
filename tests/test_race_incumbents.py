"""HiGHS keeps a solution handed to a running MIP search through its ``cbMipUserSolution`` callback.

highspy 1.12 dropped it: the callback was called, ``setSolution`` returned OK and the flag read true on the
Python side, yet HiGHS neither kept the solution nor logged anything (measured in issue 11's ninth round; that
is why the race then shared proven levels only).  highspy 1.16 keeps it, in both patterns: ``setSolution`` and the
flag-and-buffer of HiGHS's own Python examples.  Held at its root node with no primal heuristic, HiGHS ends on the
greedy start alone; handed the optimum mid-search, it ends on the optimum.  This test pins that down, so that a
highspy that drops it again fails here rather than silently in a solve that relies on it."""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from bace_opt.exact.p1 import walk as fm
from bace_opt.exact.placement import solve_placement
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.solution import greedy_start, solution_from_plans
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

from test_placement import _random_instance

pytestmark = pytest.mark.skipif(not registry.available("highs"), reason="needs HiGHS")

#: HiGHS held to its root node with no primal heuristic: its incumbent is the MIP start unless it takes another
ROOT_ONLY = {"mip_max_nodes": 1, "mip_heuristic_effort": 0.0, "mip_heuristic_run_feasibility_jump": False,
             "mip_heuristic_run_rins": False, "mip_heuristic_run_rens": False,
             "mip_heuristic_run_root_reduced_cost": False, "mip_feasibility_tolerance": 1e-9}


def _level2(data, z1, start):
    m = fm.build_model(data)
    fm.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    m.obj_count.deactivate()
    m.obj_cost.activate()
    assert fm.load_solution_into_pyomo(m, start) is not False
    return m


def _solve(m, hand_over=None):
    """Level 2 held to the root from the loaded start.  ``hand_over`` = (how, solution): the callback calls
    ``how(event, vec)`` with ``vec`` the solution's column vector, built here with the model's values put back."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    opt = Highs()
    opt.config.warmstart = True
    opt.config.load_solution = False
    for k, v in ROOT_ONLY.items():
        opt.highs_options[k] = v
    opt.set_instance(m)
    calls = []
    if hand_over is not None:
        cols = opt._pyomo_var_to_solver_var_map
        opt_sol = hand_over[1]
        saved = {vid: opt._vars[vid][0].value for vid in cols}
        fm.load_solution_into_pyomo(m, opt_sol)
        vec = np.zeros(len(cols))
        for vid, col in cols.items():
            vec[col] = opt._vars[vid][0].value or 0.0
        for vid, x in saved.items():
            opt._vars[vid][0].set_value(x, skip_validation=True)

        def cb(e):
            calls.append(hand_over[0](e, vec))
        opt._solver_model.cbMipUserSolution.subscribe(cb)
    res = opt.solve(m)
    return res.best_feasible_objective, calls


def _set_solution(e, vec):
    return str(e.data_in.setSolution(vec))


def _flag_and_buffer(e, vec):       # the pattern of HiGHS's own Python examples
    e.data_in.user_has_solution = True
    e.data_in.user_solution[:] = vec
    return bool(e.data_in.user_has_solution)


@pytest.mark.parametrize("how", [_set_solution, _flag_and_buffer])
def test_highs_keeps_a_solution_handed_over_mid_search(how):
    inst = _random_instance(1, n_regions=5, n_jobs=6, max_stages=6)
    res = solve_placement(inst, solver="highs", options=SolveOptions(time_limit_s=60))
    z1, z2 = int(round(res.levels[0]["objective"])), res.levels[1]["objective"]
    data = PlacementData(inst)
    best = solution_from_plans(data, res.plans)
    greedy = solution_from_plans(data, greedy_start(data))
    alone, _ = _solve(_level2(data, z1, greedy))
    assert alone > z2 * (1 + 1e-6)      # held to the root, HiGHS ends on a worse placement than the optimum
    m = _level2(data, z1, best)         # the optimum is a feasible start of this very model ...
    assert _solve(m)[0] == pytest.approx(z2, rel=1e-9)
    handed, calls = _solve(_level2(data, z1, greedy), (how, best))
    assert calls and all(c in ("HighsStatus.kOk", True) for c in calls)   # ... handed over, accepted by the call
    assert handed == pytest.approx(z2, rel=1e-9), (
        "HiGHS no longer keeps a solution handed over in cbMipUserSolution (it ends on its own worse placement)")
