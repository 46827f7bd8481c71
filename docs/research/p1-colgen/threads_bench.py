"""Parallel exact pricing (issue 37, step 1): wall time of the same exact pricing rounds on 1 and 2 threads.

The workload: ``ROUNDS`` full exact rounds (``nodecg.exact_round``, every job's one-job walk MILP solved out, the
Lagrangian term of each) at the level-2 master's duals after ``CG_S`` seconds of column generation on one
instance, the one-job MILPs built beforehand (their build is not timed).  The terms must agree to the last digit
(the results do not depend on the thread count).  Prints one line per thread count with the 1-minute load
before and after (the machine is shared: read the load with the times).

    PYTHONPATH=. python docs/research/p1-colgen/threads_bench.py [--instance realistic:2] [--threads 1 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from p1cg_root_probe import instances  # noqa: E402

from bace_opt.exact.p1.cg.bnp import Search  # noqa: E402
from bace_opt.exact.p1.cg.branching import Node  # noqa: E402
from bace_opt.exact.p1.cg.engine import Pricers  # noqa: E402
from bace_opt.exact.p1.cg.nodecg import exact_round, solve_master  # noqa: E402
from bace_opt.exact.p1.cg.solve import start_sets  # noqa: E402
from bace_opt.exact.p1.data import PlacementData  # noqa: E402

ROUNDS = 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="realistic:2", help="FAMILY:SEED (p1cg_root_probe families)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    fam, seed = args.instance.split(":")
    inst, label = instances(fam, [int(seed)])[0]
    data = PlacementData(inst)
    pricers = Pricers(data)
    starts = start_sets(data, None)
    z1 = max(len(c) for _, c in starts)
    S = Search(data, 2, z1, None, pricers, [s for s in starts if len(s[1]) == z1], None, 1, 1e-9, 60.0)
    for j in range(len(data.jobs)):
        pricers.exact_pricer(j)
    _, y, _ = solve_master(S.ctx)
    print(f"{label}: {len(data.jobs)} jobs, {len(S.M.columns)} columns, {os.cpu_count()} cores; "
          f"{ROUNDS} full exact rounds per thread count", flush=True)
    ref = None
    for th in args.threads:
        S.ctx.pool = ThreadPoolExecutor(th) if th > 1 else None
        la = os.getloadavg()[0]
        t = time.perf_counter()
        terms = [exact_round(S.ctx, Node({}, 0.0), y, 0, S.scale(), whole=True)[1] for _ in range(ROUNDS)]
        wall = time.perf_counter() - t
        if S.ctx.pool is not None:
            S.ctx.pool.shutdown()
        ref = terms if ref is None else ref
        print(f"threads {th}: {wall:.2f} s wall, load {la:.2f} -> {os.getloadavg()[0]:.2f}, terms {terms[0]:.12g}"
              f"{'' if terms == ref else ' (DIFFERENT)'}", flush=True)


if __name__ == "__main__":
    main()
