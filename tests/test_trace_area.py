"""``exact.p2.trace_area``: the packing relaxation's LP with a start window per job (and a late column with no
capacity) stays at or below the same LP without windows on the same unit, hence below the proven exact P2
optimum; with a window past the horizon it is the same LP (the builder writes the model of ``p2.area``)."""
from __future__ import annotations

import pytest

from bace_opt.builders.synthetic import random_instance
from bace_opt.exact import solve
from bace_opt.exact.p2.lower import packing_lower_bound
from bace_opt.exact.p2.trace_area import window_packing_lp
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

OPT = SolveOptions(time_limit_s=20, threads=1)


def _inst(seed, regions, jobs, gpus, arrivals):
    return random_instance(seed, regions, jobs, max_gpus_per_region=gpus, max_stages=4, max_arrival_s=arrivals)


CASES = [(2, 2, 6, 5, 0.0), (3, 2, 6, 5, 0.0), (5, 2, 6, 5, 600.0), (3, 3, 7, 4, 300.0), (8, 2, 6, 5, 0.0)]


@pytest.mark.parametrize("args", CASES)
@pytest.mark.parametrize("unit", [25.0, 60.0])
def test_windowed_packing_lp_is_below_the_full_lp_and_equal_with_a_wide_window(args, unit):
    inst = _inst(*args)
    full = packing_lower_bound(inst, OPT, time_unit_s=unit)
    assert full["lower_bound_status"] == "optimal"
    wide = window_packing_lp(inst, unit, 1e9, OPT)
    assert wide["lower_bound_jct_s"] == pytest.approx(full["lower_bound_jct_s"], rel=1e-7)
    for window, f in ((0.0, 0.0), (unit, 0.0), (2 * unit, 1.0), (0.0, 2.0)):
        w = window_packing_lp(inst, unit, window, OPT, run_factor=f)
        assert w["lower_bound_status"] == "optimal"
        assert w["lower_bound_jct_s"] <= full["lower_bound_jct_s"] + 1e-6 * full["lower_bound_jct_s"]


@pytest.mark.skipif(not registry.available("cpsat"), reason="needs CP-SAT")
@pytest.mark.parametrize("args", CASES[:3])
def test_windowed_packing_lp_is_below_the_exact_p2_optimum(args):
    inst = _inst(*args)
    opt = solve(inst, problem="schedule", solver="cpsat", time_limit=60, time_resolution_s=1.0)
    assert opt.solver.status == "optimal"
    for unit in (10.0, 25.0):
        w = window_packing_lp(inst, unit, unit, OPT, run_factor=1.0)
        assert w["lower_bound_jct_s"] <= opt.metrics["avg_jct_s"] + 1e-6
