"""Record, not maintained: a one-off probe of issue 11 (P1 proof speed), measured on highspy 1.12 (HiGHS 1.12)
and kept as the record of those measurements (output and reading in results/p1_level3_split_probe.md; the rounds in
log.md, which names each run's commit and load).  Moved from benchmarks/ in issue 26; no test imports it,
and it does not run against today's bace_opt: it imports ``bace_opt.exact.placement_split`` (``--solver highs-split``), removed in issue 27 (docs/research/highs-1.16/README.md); check out a commit before b70dcb8 to run it.  Run it from the repository root, as it was run (PYTHONPATH=.
makes ``benchmarks.common`` importable; the sibling probes it imports are found beside it):

    PYTHONPATH=. python docs/research/p1-proof-speed/p1_level3_split_probe.py ...

Probes of issue 11's eighth round on level 3 (benchmarks/README.md, "Eighth round"; models/placement.md 9h).
Scratch measurements, one process, HiGHS one thread; level 2 is solved first (the walk model with level 1 fixed,
from the price-pack start; its placement x* is kept in /tmp between runs), then level 3 in each MODE, one after
the other.  Each prints one JSON line per solve.  Nothing here changes the solver.

    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level3_split_probe.py 2 A,B,whole          # realistic seed 2
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level3_split_probe.py 12r-32j whole,plain   # random 12 x 32, seed 1
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level3_split_probe.py 10r-24j whole,row     # random 10 x 24, seed 1

whole: level 3 as the level driver proves it: cost minimization under a shorter run-time cut (P1.45) with the
       level-2 limit as HiGHS's objective cutoff (P1.51).
row:   the same with the level-2 limit as a row instead of the cutoff.
plain: min T under the level-2 row, from x* (no proof by cost minimization).
whole-ps2: ``whole`` with HiGHS's ``mip_pscost_minreliable`` = 2 (default 8: fewer strong-branching LPs).
A / B: ``whole`` split by x*'s region-use pattern u*: A = {u = u*} (every u fixed), B = {u != u*} (the no-good row
       sum_{u*=1} (1 - u) + sum_{u*=0} u >= 1).  A and B partition the level, so A + B is a proof of it.
"""
from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

import pyomo.environ as pyo

from benchmarks.common import RANDOM_LARGE, realistic
from p1_second_core_probe import _level2_model
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact.p1 import milp as M, placement_walk as fm
from bace_opt.exact.p1.levels import LEVEL_TOL
from bace_opt.exact.placement_split import _u_values
from bace_opt.files import atomic_write
from bace_opt.solvers.base import SolveOptions
from bace_opt.solvers.highs import solve_pyomo


MODES = ("whole", "whole-ps2", "row", "plain", "A", "B")


def main(key: str, modes: list[str]) -> None:
    if not key.isdigit() and key not in RANDOM_LARGE:
        raise SystemExit(f"instance {key!r}: a realistic seed (1, 2, 3) or one of {', '.join(RANDOM_LARGE)}")
    unknown = [x for x in modes if x not in MODES]
    if unknown:
        raise SystemExit(f"mode(s) {', '.join(unknown)}: expected {', '.join(MODES)}")
    inst = realistic(int(key)) if key.isdigit() else random_instance(seed=1, **RANDOM_LARGE[key])
    data, m, ws = _level2_model(None, inst)
    m.obj_cost.activate()
    pk = Path(f"/tmp/p1_level3_split_probe_l2_{key}.pkl")
    if pk.exists():
        sol, z2 = pickle.loads(pk.read_bytes())
    else:
        fm.load_solution_into_pyomo(m, ws)
        t = time.perf_counter()
        r = solve_pyomo(m, SolveOptions(time_limit_s=900, threads=1), warm_start=True)
        sol = fm.solution_from_pyomo(m)
        z2 = max(pyo.value(m.obj_cost.expr), r.objective)
        print(json.dumps(dict(L2=round(time.perf_counter() - t, 1), nodes=r.nodes, z2=z2, st=r.termination.value)),
              flush=True)
        atomic_write(pk, pickle.dumps((sol, z2)))
    m.level2_limit = z2 + LEVEL_TOL * max(abs(z2), 1e-9)
    m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    us = _u_values(data, sol)
    print(json.dumps(dict(u_ones=sum(us.values()), u_total=len(us))), flush=True)
    for mode in modes:
        fixed = []
        if mode == "A":
            for idx, val in us.items():
                v = m.u[idx]
                fixed.append((v, v.lb, v.ub))
                v.setlb(val)
                v.setub(val)
        if mode == "B":
            m.nogood = pyo.Constraint(expr=sum((1 - m.u[i]) if val else m.u[i] for i, val in us.items()) >= 1)
        M.LEVEL3_CUTOFF = mode != "row"
        m.obj_cost.deactivate()
        m.obj_run.activate()
        t = time.perf_counter()
        if mode == "plain":
            fm.load_solution_into_pyomo(m, sol)
            res = solve_pyomo(m, SolveOptions(time_limit_s=900, threads=1), warm_start=True)
        else:
            bo = {"mip_pscost_minreliable": 2} if mode == "whole-ps2" else {}
            res, _ = M._level3_by_cost(m, fm, sol, "highs", SolveOptions(time_limit_s=900, threads=1,
                                                                         backend_options=bo), time.perf_counter())
        print(json.dumps(dict(mode=mode, wall=round(time.perf_counter() - t, 1), nodes=res.nodes,
                              st=res.termination.value, T=res.objective, bound=res.bound, msg=res.message,
                              load=round(os.getloadavg()[0], 2))), flush=True)
        M.LEVEL3_CUTOFF = True
        for v, lb, ub in fixed:
            v.setlb(lb)
            v.setub(ub)
        if hasattr(m, "nogood"):
            m.del_component(m.nogood)
        if hasattr(m, "con_level2"):
            m.con_level2.activate()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(sys.argv[1], sys.argv[2].split(","))
