import sys, time, math
import bace_opt as bo
from bace_opt.exact.p2.lower import packing_lower_bound
from bace_opt.solvers.base import SolveOptions
inst = bo.load_instance(sys.argv[1])
for unit in map(float, sys.argv[2:]):
    t=time.time(); r = packing_lower_bound(inst, SolveOptions(time_limit_s=300), time_unit_s=unit)
    print("whole", unit, r.get("lower_bound_jct_s"), r.get("lower_bound_status"), {k: v for k, v in r.items() if k in ("lower_bound_units","lower_bound_patterns","lower_bound_build_s","lower_bound_solve_s")}, round(time.time()-t,1), flush=True)
