"""The stage relaxation's bound with and without the latency floors (P1.61 pairs, P1.62 separated sets).

    python docs/research/p1-strength/floor_probe.py INSTANCE [--rounds R] [--mip-s S]
"""
import argparse
import logging
import os
import time

import pyomo.environ as pyo

from bace_opt.instance import load_instance
from bace_opt.exact.p1 import walk, stage
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.latency import add_latency_floors, violated_sets
from bace_opt.exact.p1.solution import start_candidates
from bace_opt.solvers.base import SolveOptions


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("instance")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mip-s", type=float, default=60.0)
    a = ap.parse_args()
    print("load", os.getloadavg())
    data = PlacementData(load_instance(a.instance))
    m = walk.build_model(data)
    ws = start_candidates(data, None)[0]
    z1 = sum(1 for v in ws.x.values() if v > 0.5)
    m.obj_count.deactivate()
    m.obj_cost.activate()
    walk.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    walk.load_solution_into_pyomo(m, ws)
    print("start", z1, "jobs, cost", pyo.value(m.obj_cost.expr))
    stage.STAGE_MIP_MAX_S = a.mip_s
    opts = SolveOptions(time_limit_s=a.mip_s / stage.STAGE_MIP_SHARE, threads=1)
    t = time.perf_counter()
    st = stage.stage_bound(m, opts, time.perf_counter())
    print(f"plain: LP {st.lp_bound} MIP {st.mip_bound} {st.mip_status} {time.perf_counter() - t:.2f} s")
    sets: dict = {}
    for k in range(a.rounds):
        n = add_latency_floors(m, sets, active=True)
        t = time.perf_counter()
        st = stage.stage_bound(m, opts, time.perf_counter())
        print(f"floors round {k} ({n} rows): LP {st.lp_bound} MIP {st.mip_bound} {st.mip_status} obj {st.mip_objective}"
              f" {time.perf_counter() - t:.2f} s")
        new = violated_sets(data, st.stages, sets)
        if not new:
            break
        for j, ts in new.items():
            sets.setdefault(j, []).extend(ts)
    print("load", os.getloadavg())


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
