"""Probe (issue 44 item 2): the level-2 walk LP of an instance by IPM without crossover, PDLP and simplex, each
with the certified bound from its row duals (bace_opt.exact.p1.lpbound).  One JSON line per method on stdout.

    PYTHONPATH=. python docs/research/p1-bound/lp_probe.py INSTANCE.json Z1 [METHOD[:LIMIT] ...]
"""
import json
import os
import sys
import time

import pyomo.environ as pyo

from bace_opt.exact.p1 import walk
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.lpbound import relaxation_bound
from bace_opt.instance import load_instance


#: the trail's rows (a walk LP without them keeps the stage, class, capacity and hop-count rows)
DROP_TRAIL = ["con_balance", "con_connect", "con_connect_arc", "con_pair_cut", "con_start_one", "con_end_one",
              "con_start_used", "con_end_used", "con_entered", "con_supply_at_start", "con_supply_total",
              "con_open_trail", "con_orient_end", "con_orient_start", "con_sym_reverse"]
#: ... and the rows of the arcs (what is left is the stage LP: stages, classes, capacities, counts)
DROP_HOP = ["con_cost_product", "con_cost_product_min", "con_arcs_min", "con_arc_started", "con_whole_split",
            "con_bandwidth", "con_reserve_class"]


def main():
    path, z1 = sys.argv[1], int(sys.argv[2])
    methods = sys.argv[3:] or ["ipm:120"]
    inst = load_instance(path)
    t = time.perf_counter()
    data = PlacementData(inst, None, None, None, None)
    m = walk.build_model(data)
    walk.prepare_level(m, 2, z1)
    m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
    m.obj_count.deactivate()
    m.obj_cost.activate()
    drop = {"stage": DROP_TRAIL + DROP_HOP, "hop": DROP_TRAIL, "full": []}[os.environ.get("VARIANT", "full")]
    for name in drop:
        if hasattr(m, name):
            getattr(m, name).deactivate()
    build = time.perf_counter() - t
    from pyomo.contrib.appsi.solvers.highs import Highs
    opt = Highs()
    opt.highs_options["threads"] = int(os.environ.get("THREADS", "2"))
    t = time.perf_counter()
    opt.set_instance(m)
    load = time.perf_counter() - t
    h = opt._solver_model
    h.setOptionValue("output_flag", bool(os.environ.get("LOG")))
    for spec in methods:
        meth, _, lim = spec.partition(":")
        r = relaxation_bound(h, meth, float(lim) if lim else None)
        print(json.dumps({"instance": inst.name, "z1": z1, "variant": os.environ.get("VARIANT", "full"), "method": meth, "limit_s": lim, "bound": r.bound,
                          "lp_objective": r.lp_objective, "status": r.status, "seconds": round(r.seconds, 2),
                          "build_s": round(build, 2), "load_s": round(load, 2), "loadavg": os.getloadavg()[0]}),
              flush=True)


if __name__ == "__main__":
    main()
