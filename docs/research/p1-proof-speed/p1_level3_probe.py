"""Record, not maintained: a one-off probe of issue 11 (P1 proof speed), measured on highspy 1.12 (HiGHS 1.12)
and kept as the record of those measurements (output and reading in results/p1_level3_probe.md; the rounds in
log.md, which names each run's commit and load).  Moved from benchmarks/ in issue 26; no test imports it,
and it does not run against today's bace_opt: it imports ``bace_opt.exact.placement_split`` (``--solver highs-split``), removed in issue 27 (docs/research/highs-1.16/README.md); check out a commit before b70dcb8 to run it.  Run it from the repository root, as it was run (PYTHONPATH=.
makes ``benchmarks.common`` importable; the sibling probes it imports are found beside it):

    PYTHONPATH=. python docs/research/p1-proof-speed/p1_level3_probe.py ...

Probes of issue 11's seventh round (benchmarks/README.md, "Seventh round"; models/placement.md 9g): where does
the level-3 proof of the realistic instances spend its time?  Scratch measurements, one process, HiGHS one thread,
the levels run one after the other; each prints JSON lines.  Nothing here changes the solver.

    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level3_probe.py lp 2         # level 3's root LP against level 2's, and its candidates
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level3_probe.py quarters 2,3  # level 3 in the half holding level 2's placement,
                                                                 # then in that half's two quarters

lp:       level 2 is solved; the LP relaxation of level 3's proof (min cost with the run-time cut T <= T_inc (1 -
          1e-9) and the level-2 row) is compared with level 2's root LP and ranks the split candidates as
          placement_split.split_candidates does; then level 3 is proven in the two halves of the first candidate.
quarters: level 3 restricted to the half of the first split candidate that holds level 2's placement (the other
          half is what an exclusion rules out), then that half split on the next candidate (CANDIDATE argument).
"""
from __future__ import annotations

import json
import os
import sys
import time

import pyomo.environ as pyo

from p1_second_core_probe import _level2_model, _split_candidates
from bace_opt.exact.p1 import milp as M, placement_walk as fm
from bace_opt.exact.p1.levels import LEVEL_TOL
from bace_opt.exact.placement_split import _u_values
from bace_opt.solvers.base import SolveOptions
from bace_opt.solvers.highs import solve_pyomo


def _levels_1_2(s):
    """Level 2 solved on realistic seed ``s``; returns (data, model at level 3 with the level-2 row, level-2
    placement, level-2 root LP ranking, the figures so far)."""
    data, m, ws = _level2_model(s)
    m.obj_cost.activate()
    _, cand = _split_candidates(data, m)
    fm.load_solution_into_pyomo(m, ws)
    t = time.perf_counter()
    rr = solve_pyomo(m, SolveOptions(time_limit_s=600, threads=1), warm_start=True)
    out = {"seed": s, "L2": [round(time.perf_counter() - t, 1), rr.nodes, rr.objective]}
    sol = fm.solution_from_pyomo(m)
    z2 = max(pyo.value(m.obj_cost.expr), rr.objective)
    m.level2_limit = z2 + LEVEL_TOL * max(abs(z2), 1e-9)
    m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    return data, m, sol, cand, out


def _level3(m, sol, fixes, out, tag):
    """The level-3 proof (P1.45 with P1.51) with the region-use binaries ``fixes`` fixed; CPU s, nodes, status."""
    m.obj_cost.deactivate(); m.obj_run.activate()
    for idx, val in fixes:
        m.u[idx].setlb(val); m.u[idx].setub(val)
    c = time.process_time()
    q, _ = M._level3_by_cost(m, fm, sol, "highs", SolveOptions(time_limit_s=300, threads=1), time.perf_counter())
    out[tag] = [round(time.process_time() - c, 1), q.nodes, q.termination.value]
    for idx, _ in fixes:
        m.u[idx].setlb(0); m.u[idx].setub(1)
    print(json.dumps({tag: out[tag]}), flush=True)


def lp(s):
    from pyomo.contrib.appsi.solvers.highs import Highs
    data, m, sol, cand, out = _levels_1_2(s)
    t_inc = pyo.value(m.obj_run.expr)
    r3 = m.clone()
    r3.cut = pyo.Constraint(expr=r3.obj_run.expr <= t_inc * (1 - 1e-9))
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(r3)
    out["L3_LP"] = Highs().solve(r3).best_feasible_objective
    K = {d.j: d.S for d in data.jobs}
    out["cand_L2LP"] = [str(c[1]) for c in cand[:4]]
    out["cand_L3LP_u"] = [str(c) for c in sorted(
        ((round(min(pyo.value(r3.u[i]), 1 - pyo.value(r3.u[i])) * K[i[0]], 4), i, round(pyo.value(r3.u[i]), 3))
         for i in r3.u if r3.u[i].value is not None), reverse=True)[:6]]
    print(json.dumps(out), flush=True)
    v = cand[0][1]
    for val in (0, 1):
        _level3(m, sol, [(v, val)], out, f"L3_u{v}_{val}")
    out["load"] = os.getloadavg()[0]
    print(json.dumps(out), flush=True)


def quarters(s, k2=1):
    data, m, sol, cand, out = _levels_1_2(s)
    uv = _u_values(data, sol)
    v1, v2 = cand[0][1], cand[k2][1]
    h = uv[v1]
    out["half"] = [str(v1), h]
    out["quarter_var"] = [str(v2), uv[v2]]
    print(json.dumps(out), flush=True)
    _level3(m, sol, [(v1, h)], out, "L3_half")
    _level3(m, sol, [(v1, h), (v2, 0)], out, "L3_q0")
    _level3(m, sol, [(v1, h), (v2, 1)], out, "L3_q1")
    out["load"] = os.getloadavg()[0]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    what, seeds = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    for s in seeds:
        {"lp": lp, "quarters": quarters}[what](s)
