"""Solver layer: registry, adapters on tiny Pyomo / CP-SAT models (statuses, bounds, warm start)."""
from __future__ import annotations

import pyomo.environ as pyo
import pytest

from bace_opt.errors import SolverUnavailableError
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions, Termination, relative_gap

MILP = [s for s in ("highs", "scip", "mathopt-highs") if registry.available(s)]


def knapsack():
    """max 5a + 4b + 3c  s.t. 2a + 3b + c <= 4 (binary): optimum a = c = 1, value 8; written as min -value."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=["a", "b", "c"])
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    w, v = {"a": 2, "b": 3, "c": 1}, {"a": 5, "b": 4, "c": 3}
    m.con_cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in m.I) <= 4)
    m.obj = pyo.Objective(expr=-sum(v[i] * m.x[i] for i in m.I))
    return m


def run(m, name, **kw):
    opts = SolveOptions(time_limit_s=10)
    if name == "highs":
        from bace_opt.solvers.highs import solve_pyomo
        return solve_pyomo(m, opts, **kw)
    from bace_opt.solvers.mathopt import solve_pyomo
    return solve_pyomo(m, opts, backend=name, **kw)


def test_registry():
    assert set(registry.names()) == {"highs", "scip", "mathopt-highs", "cpsat", "race"}
    assert registry.available("highs") and registry.available("cpsat")
    assert not registry.available("nope")
    with pytest.raises(SolverUnavailableError, match="unknown solver"):
        registry.require("nope")
    assert registry.require("highs").kind == "milp"


def test_both_imports_in_one_process():
    import highspy  # noqa: F401
    from ortools.math_opt.python import mathopt  # noqa: F401


@pytest.mark.parametrize("name", MILP)
def test_milp_adapters_solve_and_load_values(name):
    m = knapsack()
    r = run(m, name)
    assert r.termination == Termination.OPTIMAL and r.has_solution
    assert r.objective == pytest.approx(-8) and r.bound == pytest.approx(-8) and r.gap == pytest.approx(0, abs=1e-9)
    assert [round(m.x[i].value) for i in m.I] == [1, 0, 1]


@pytest.mark.parametrize("name", MILP)
def test_milp_adapters_report_infeasible(name):
    m = knapsack()
    m.con_bad = pyo.Constraint(expr=m.x["a"] + m.x["b"] >= 3)
    r = run(m, name)
    assert r.termination == Termination.INFEASIBLE and not r.has_solution and r.objective is None


@pytest.mark.parametrize("name", [n for n in MILP if registry.BACKENDS[n].warm_start])
def test_warm_start_accepted(name):
    m = knapsack()
    for i, val in zip(m.I, (0, 1, 1)):   # feasible, value 7
        m.x[i].set_value(val)
    r = run(m, name, warm_start=True)
    assert r.termination == Termination.OPTIMAL and r.objective == pytest.approx(-8)


def test_mathopt_error_is_reported_not_raised():
    from bace_opt.solvers.mathopt import solve_pyomo
    m = knapsack()
    r = solve_pyomo(m, SolveOptions(backend_options={"threads": -5}), backend="scip")
    assert r.termination == Termination.ERROR and r.message


def test_cpsat_adapter():
    from ortools.sat.python import cp_model
    from bace_opt.solvers.cpsat import solve_cp
    md = cp_model.CpModel()
    x = [md.NewBoolVar(f"x{i}") for i in range(3)]
    md.Add(2 * x[0] + 3 * x[1] + x[2] <= 4)
    md.Maximize(5 * x[0] + 4 * x[1] + 3 * x[2])
    r, s = solve_cp(md, SolveOptions(time_limit_s=5))
    assert r.termination == Termination.OPTIMAL and r.objective == 8 and r.bound == 8
    assert [s.Value(v) for v in x] == [1, 0, 1]
    md.Add(x[0] + x[1] >= 3)
    r2, _ = solve_cp(md, SolveOptions(time_limit_s=5))
    assert r2.termination == Termination.INFEASIBLE and r2.objective is None


def test_relative_gap():
    assert relative_gap(10.0, 9.0) == pytest.approx(0.1)
    assert relative_gap(None, 1.0) is None
    assert relative_gap(0.0, 0.0) == 0.0
