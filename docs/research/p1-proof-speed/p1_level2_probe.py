"""Record, not maintained: a one-off probe of issue 11 (P1 proof speed), measured on highspy 1.12 (HiGHS 1.12)
and kept as the record of those measurements (output and reading in results/p1_level2_probe.md; the rounds in
log.md, which names each run's commit and load).  Moved from benchmarks/ in issue 26; no test imports it,
and it may not run against today's bace_opt.  Run it from the repository root, as it was run (PYTHONPATH=.
makes ``benchmarks.common`` importable; the sibling probes it imports are found beside it):

    PYTHONPATH=. python docs/research/p1-proof-speed/p1_level2_probe.py ...

Probes of issue 11's eighth round: can level 2 of the realistic instances be proven faster on one core
(benchmarks/README.md, "Eighth round"; models/placement.md 9h)?  Scratch measurements, one process, HiGHS one
thread, level 2 of the walk model with level 1 fixed and the price-pack start as MIP start (as the level driver
solves it).  Each prints one JSON line per solve.  Nothing here changes the solver.

    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_probe.py options 2,3 base,seed1,seed2,feas1e-6,heur0,pscost4,pscost2
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_probe.py incumbents 2,3    # when the improving solutions are found
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_probe.py optstart 2,3      # the proof from the optimum as MIP start
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_probe.py rows 2,3 none,-pairs,-covers,-oriented,-open,-whole

options:    HiGHS option variants (``VARIANTS``) against the defaults of ``solvers.highs.solve_pyomo``.
incumbents: the time, cost and dual bound of every improving solution (HiGHS's improving-solution callback).
optstart:   level 2 solved once, then again from its optimum as MIP start (and with the optimum's cost times
            (1 + 1e-6) as objective bound too): how much of the time is the search for the optimum.
rows:       leave-one-out of the walk model's row families (module switches of ``placement_walk``; "-whole" also
            drops P1.48-P1.49, which need y; "-open" drops P1.48-P1.49): root LP, rows, nodes, time.
"""
from __future__ import annotations

import json
import os
import sys
import time

import pyomo.environ as pyo

from p1_second_core_probe import _level2_model
from bace_opt.exact.p1 import walk as fm
from bace_opt.solvers.base import SolveOptions
from bace_opt.solvers import highs as H

VARIANTS = {
    "base": {}, "seed1": {"random_seed": 1}, "seed2": {"random_seed": 2},
    "feas1e-6": {"mip_feasibility_tolerance": 1e-6},
    "heur0": {"mip_heuristic_effort": 0.0},
    "pscost4": {"mip_pscost_minreliable": 4},
    "pscost2": {"mip_pscost_minreliable": 2},
}
ROWS = {"none": [], "-covers": ["REGION_COVERS"], "-whole": ["WHOLE_JOBS"], "-open": ["OPEN_TRAILS"],
        "-oriented": ["ORIENTED_TRAILS"], "-pairs": ["PAIR_CUTS"]}


def _model(s):
    data, m, ws = _level2_model(s)
    m.obj_cost.activate()
    fm.load_solution_into_pyomo(m, ws)
    return data, m, ws


def _load():
    return round(os.getloadavg()[0], 2)


def options(seeds, names):
    for s in seeds:
        for name in names:
            _, m, _ = _model(s)
            c_start, l0 = pyo.value(m.obj_cost.expr), _load()
            t, c = time.perf_counter(), time.process_time()
            r = H.solve_pyomo(m, SolveOptions(time_limit_s=200, threads=1, backend_options=VARIANTS[name]),
                              warm_start=True)
            print(json.dumps(dict(seed=s, v=name, wall=round(time.perf_counter() - t, 1),
                                  cpu=round(time.process_time() - c, 1), nodes=r.nodes, obj=r.objective,
                                  start=c_start, st=r.termination.value, load=[l0, _load()])), flush=True)


def incumbents(seeds):
    from pyomo.contrib.appsi.solvers.highs import Highs
    orig = Highs.set_instance
    for s in seeds:
        _, m, _ = _model(s)
        ev: list = []
        t0 = time.perf_counter()

        def patched(self, model, _ev=ev, _t0=t0):
            orig(self, model)

            def cb(e):
                _ev.append((round(time.perf_counter() - _t0, 2), e.data_out.objective_function_value,
                            e.data_out.mip_dual_bound))
            self._solver_model.cbMipImprovingSolution.subscribe(cb)
        Highs.set_instance = patched
        try:
            r = H.solve_pyomo(m, SolveOptions(time_limit_s=200, threads=1), warm_start=True)
        finally:
            Highs.set_instance = orig
        print(json.dumps(dict(seed=s, wall=round(time.perf_counter() - t0, 1), nodes=r.nodes, obj=r.objective,
                              events=ev)), flush=True)


def optstart(seeds):
    for s in seeds:
        _, m, _ = _model(s)
        r = H.solve_pyomo(m, SolveOptions(time_limit_s=200, threads=1), warm_start=True)
        opt = fm.solution_from_pyomo(m)
        for tag, extra in (("optstart", {}), ("optstart_cutoff", {"objective_bound": r.objective * (1 + 1e-6)})):
            _, m2, _ = _level2_model(s)
            m2.obj_cost.activate()
            ok = fm.load_solution_into_pyomo(m2, opt)
            t = time.perf_counter()
            r2 = H.solve_pyomo(m2, SolveOptions(time_limit_s=200, threads=1, backend_options=extra),
                               warm_start=ok is not False)
            print(json.dumps(dict(seed=s, v=tag, first=round(r.solve_s, 1), wall=round(time.perf_counter() - t, 1),
                                  nodes=r2.nodes, obj=r2.objective, st=r2.termination.value)), flush=True)


def rows(seeds, names):
    from pyomo.contrib.appsi.solvers.highs import Highs
    saved = {f: getattr(fm, f) for fs in ROWS.values() for f in fs}
    try:
        for s in seeds:
            for name in names:
                for f in saved:
                    setattr(fm, f, True)
                for f in ROWS[name]:
                    setattr(fm, f, False)
                _, m, ws = _level2_model(s)
                m.obj_cost.activate()
                nrows = sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))
                r = m.clone()
                pyo.TransformationFactory("core.relax_integer_vars").apply_to(r)
                t = time.perf_counter()
                lp = Highs().solve(r).best_feasible_objective
                lp_s = time.perf_counter() - t
                fm.load_solution_into_pyomo(m, ws)
                l0 = _load()
                t = time.perf_counter()
                res = H.solve_pyomo(m, SolveOptions(time_limit_s=200, threads=1), warm_start=True)
                print(json.dumps(dict(seed=s, v=name, rows=nrows, root=round(lp, 4), lp_s=round(lp_s, 2),
                                      wall=round(time.perf_counter() - t, 1), nodes=res.nodes, obj=res.objective,
                                      st=res.termination.value, load=[l0, _load()])), flush=True)
    finally:
        for f, v in saved.items():
            setattr(fm, f, v)


if __name__ == "__main__":
    mode, seeds = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    if mode == "options":
        options(seeds, sys.argv[3].split(","))
    elif mode == "incumbents":
        incumbents(seeds)
    elif mode == "optstart":
        optstart(seeds)
    elif mode == "rows":
        rows(seeds, sys.argv[3].split(","))
    else:
        raise SystemExit(f"unknown mode {mode!r}: options, incumbents, optstart, rows")
