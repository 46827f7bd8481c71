"""The level-2 stage relaxation as the solve runs it (``p1.stage.stage_bound``, floors on or off), and the cost of
its placement made whole (``p1.stage.repair``).

    python docs/research/p1-strength/stage_probe.py INSTANCE [--limit S] [--no-floors]
"""
import argparse
import logging
import os
import time

import pyomo.environ as pyo

from bace_opt.instance import load_instance
from bace_opt.exact.p1 import walk, stage
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.solution import solution_cost, start_candidates
from bace_opt.solvers.base import SolveOptions


def level2_model(path: str):
    """(the placement data, its walk model prepared for level 2 from the first start's job count, the start
    loaded) of the instance at ``path``; prints the start."""
    data = PlacementData(load_instance(path))
    m = walk.build_model(data)
    ws = start_candidates(data, None)[0]
    z1 = sum(1 for v in ws.x.values() if v > 0.5)
    m.obj_count.deactivate()
    m.obj_cost.activate()
    walk.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    walk.load_solution_into_pyomo(m, ws)
    print("start", z1, "jobs, cost", pyo.value(m.obj_cost.expr))
    return data, m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("instance")
    ap.add_argument("--limit", type=float, default=300.0)
    ap.add_argument("--no-floors", action="store_true")
    a = ap.parse_args()
    print("load", os.getloadavg())
    data, m = level2_model(a.instance)
    t = time.perf_counter()
    st = stage.stage_bound(m, SolveOptions(time_limit_s=a.limit), t, floors=not a.no_floors,
                           on_bound=lambda b, mip: print(f"  {time.perf_counter() - t:7.2f} s bound {b:.6f} ({'MIP' if mip else 'LP'})"))
    print(f"stage: LP {st.lp_bound} MIP {st.mip_bound} {st.mip_status} rounds {st.rounds} {st.seconds:.2f} s")
    cand = stage.repair(data, st)
    print("repaired:", None if cand is None else solution_cost(data, cand))
    print("load", os.getloadavg())


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
