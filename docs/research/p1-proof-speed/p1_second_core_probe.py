"""Record, not maintained: a one-off probe of issue 11 (P1 proof speed), measured on highspy 1.12 (HiGHS 1.12)
and kept as the record of those measurements (output and reading in results/p1_second_core_probe.md; the rounds in
log.md, which names each run's commit and load).  Moved from benchmarks/ in issue 26; no test imports it,
and it may not run against today's bace_opt.  Run it from the repository root, as it was run (PYTHONPATH=.
makes ``benchmarks.common`` importable; the sibling probes it imports are found beside it):

    PYTHONPATH=. python docs/research/p1-proof-speed/p1_second_core_probe.py ...

Probes of issue 11's fifth round: could P1's second core shorten the proof of levels 2 and 3 on the realistic
instances (benchmarks/README.md, "Fifth round")?  Scratch measurements, one process, HiGHS one thread; each
prints one JSON line per instance.  Nothing here changes the solver.

    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_second_core_probe.py spec 2,3     # speculative level 3 from the MIP start
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_second_core_probe.py split 2,3    # two-way split of levels 2 and 3
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_second_core_probe.py split2 2     # level 2 split on the next 3 candidates

spec:  the level-3 proof by cost minimization (P1.45 with the cutoff P1.51) started before level 2 is known,
       from the MIP start (price-pack): limit = the start's cost, T_inc = the start's run time.  Its answer is
       usable only if the placement it ends on costs no more than the level-2 limit found later (Z_OPT, the
       proven level-2 optima of the realistic seeds, used here only to check that).
split: the level-2 and level-3 solves split on one region-use binary u[j,r] (the root LP's most fractional one,
       weighted by the job's stage count): each half fixes it (bounds 0..0 or 1..1), level 2 with the start's
       cost as HiGHS's objective bound; the halves run one after the other here, so max(half) is what two
       cores would take, against the whole solve measured in the same run.  Exact: u is binary, so the two
       halves partition the feasible set (level 2 = min of the halves; level 3's proof = both halves proven).
"""
from __future__ import annotations

import json
import os
import sys
import time

import pyomo.environ as pyo

from benchmarks.common import realistic
from bace_opt.exact.p1 import milp as M, placement_walk as fm
from bace_opt.exact.p1.data import PlacementData, count_upper_bound
from bace_opt.exact.p1.levels import LEVEL_TOL
from bace_opt.exact.p1.solution import start_candidates
from bace_opt.solvers.base import SolveOptions
from bace_opt.solvers.highs import solve_pyomo

#: proven level-2 / level-3 optima of the realistic seeds (bench_placement_realistic_-quiet.md), to check answers
Z_OPT = {1: 62.2589536, 2: 16.70389472905164, 3: 55.95790294229485}
T_OPT = {2: 10173.763090798786, 3: 33558.93183979777}


def _level2_model(s, inst=None):
    """Realistic seed ``s`` (or ``inst``) as the level driver enters level 2: the walk model with level 1 fixed at the
    GPU-count bound, every objective off; with its data and the price-pack start."""
    data = PlacementData(realistic(s) if inst is None else inst)
    m = fm.build_model(data)
    ws = next(c for c in start_candidates(data, None) if fm.load_solution_into_pyomo(m, c) is not False)
    z1 = count_upper_bound(data)
    fm.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    for o in (m.obj_count, m.obj_cost, m.obj_run):
        o.deactivate()
    return data, m, ws


def spec(s, tl=150.0):
    l0 = os.getloadavg()[0]
    data, m, ws = _level2_model(s)
    c0, t0v = pyo.value(m.obj_cost.expr), pyo.value(m.obj_run.expr)
    m.level2_limit = c0 * (1 + LEVEL_TOL)
    m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    m.obj_run.activate()
    t, c = time.perf_counter(), time.process_time()
    res, sol = M._level3_by_cost(m, fm, ws, "highs", SolveOptions(time_limit_s=tl, threads=1), t)
    fm.load_solution_into_pyomo(m, sol)
    cost = pyo.value(m.obj_cost.expr)
    return dict(seed=s, start_cost=c0, start_T=t0v, status=res.termination.value, wall=round(time.perf_counter() - t, 2),
                cpu=round(time.process_time() - c, 2), nodes=res.nodes, T=pyo.value(m.obj_run.expr), cost=cost,
                cost_ok=cost <= Z_OPT[s] * (1 + LEVEL_TOL), T_opt=T_OPT.get(s), msg=res.message,
                load=[round(l0, 2), round(os.getloadavg()[0], 2)])


def _split_candidates(data, m):
    """The region-use binaries u ranked for a split: the root LP's fractionality times the job's stage count."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    r = m.clone()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(r)
    Highs().solve(r)
    K = {d.j: d.S for d in data.jobs}        # stages
    cand = sorted(((min(pyo.value(r.u[i]), 1 - pyo.value(r.u[i])) * K[i[0]], i) for i in r.u), reverse=True)
    return r, cand


def _level2_halves(m, ws, var, c0, tl, out):
    """Level 2 with ``var`` fixed to 0, then to 1 (each from the start ``ws``, bounded by its cost c0)."""
    for val in (0, 1):
        var.setlb(val); var.setub(val)
        fm.load_solution_into_pyomo(m, ws)
        t = time.perf_counter()
        rr = solve_pyomo(m, SolveOptions(time_limit_s=tl, threads=1,
                                         backend_options={"objective_bound": c0 * (1 + 1e-9)}), warm_start=True)
        out[f"L2_{val}"] = [round(time.perf_counter() - t, 2), rr.nodes, rr.termination.value, rr.objective]
        var.setlb(0); var.setub(1)


def split(s):
    l0 = os.getloadavg()[0]
    data, m, ws = _level2_model(s)
    c0 = pyo.value(m.obj_cost.expr)
    m.obj_cost.activate()
    r, cand = _split_candidates(data, m)
    var = m.u[cand[0][1]]
    out = {"seed": s, "split": str(cand[0][1]), "u_lp": round(pyo.value(r.u[cand[0][1]]), 3), "start_cost": c0}
    _level2_halves(m, ws, var, c0, 300, out)
    fm.load_solution_into_pyomo(m, ws)
    t = time.perf_counter()
    rr = solve_pyomo(m, SolveOptions(time_limit_s=300, threads=1), warm_start=True)
    out["L2_whole"] = [round(time.perf_counter() - t, 2), rr.nodes, rr.objective]
    sol = fm.solution_from_pyomo(m)
    z2 = max(pyo.value(m.obj_cost.expr), rr.objective)
    m.level2_limit = z2 + LEVEL_TOL * max(abs(z2), 1e-9)
    m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    m.obj_cost.deactivate(); m.obj_run.activate()
    for val in (0, 1, None):
        if val is not None:
            var.setlb(val); var.setub(val)
        t = time.perf_counter()
        r3, _ = M._level3_by_cost(m, fm, sol, "highs", SolveOptions(time_limit_s=300, threads=1), time.perf_counter())
        out[f"L3_{val if val is not None else 'whole'}"] = [round(time.perf_counter() - t, 2), r3.nodes,
                                                            r3.termination.value, r3.objective]
        var.setlb(0); var.setub(1)
        m.obj_cost.deactivate(); m.obj_run.activate()
    out["load"] = [round(l0, 2), round(os.getloadavg()[0], 2)]
    return out


def split2(s, n=3):
    """Level 2 only, split on each of the root LP's ``n`` best candidates in turn (halves one after the other)."""
    data, m, ws = _level2_model(s)
    c0 = pyo.value(m.obj_cost.expr)
    m.obj_cost.activate()
    r, cand = _split_candidates(data, m)
    out = []
    for _, idx in cand[1:n + 1]:           # the first one is split()'s
        var = m.u[idx]
        row = {"seed": s, "split": str(idx), "u_lp": round(pyo.value(r.u[idx]), 3)}
        l0 = os.getloadavg()[0]
        _level2_halves(m, ws, var, c0, 120, row)
        row["load"] = [round(l0, 2), round(os.getloadavg()[0], 2)]
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


if __name__ == "__main__":
    what, seeds = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    for s in seeds:
        if what == "split2":
            split2(s)
        else:
            print(json.dumps({"spec": spec, "split": split}[what](s)), flush=True)
