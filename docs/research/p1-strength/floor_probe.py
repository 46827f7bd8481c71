"""The stage relaxation's bound with and without the latency floors (P1.61 pairs, P1.62 separated sets).

    python docs/research/p1-strength/floor_probe.py INSTANCE [--rounds R] [--mip-s S]
"""
import argparse
import logging
import os
import time

from bace_opt.exact.p1 import stage
from bace_opt.exact.p1.latency import add_latency_floors, violated_sets
from bace_opt.solvers.base import SolveOptions
from stage_probe import level2_model        # this folder's (run as a script: its folder is on the path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("instance")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mip-s", type=float, default=60.0)
    a = ap.parse_args()
    print("load", os.getloadavg())
    data, m = level2_model(a.instance)
    stage.STAGE_MIP_MAX_S = a.mip_s
    opts = SolveOptions(time_limit_s=a.mip_s / stage.STAGE_MIP_SHARE, threads=1)
    t = time.perf_counter()
    st = stage.stage_bound(m, opts, time.perf_counter())
    print(f"plain: LP {st.lp_bound} MIP {st.mip_bound} {st.mip_status} {time.perf_counter() - t:.2f} s")
    sets: dict = {}
    for k in range(a.rounds):
        n = len(add_latency_floors(m, sets, active=True))     # the rows added
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
