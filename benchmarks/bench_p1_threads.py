"""Parallel exact pricing of the cg engine (issue 37, step 1): wall time of the same exact pricing rounds on 1, 2
and every core, in one run on one machine.

    python -m benchmarks.bench_p1_threads [--seed 2] [--threads 1 2 N]

The workload: ``ROUNDS`` full exact pricing rounds (``p1.cg.nodecg.exact_round``: every job's one-job walk MILP
solved out at the level-2 root master's duals, the Lagrangian term of each) on realistic 8 x 16 (the seed
given), the one-job MILPs built beforehand (their build is not timed).  The jobs are priced in parallel on the
threads (highspy's ``run`` releases the GIL) and their results taken in job order, so the terms must agree to
the last digit whatever the thread count (the script exits 1 if not).  One line per thread count with the
1-minute load before and after; writes ``benchmarks/results/p1_threads.md``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from bace_opt.exact.p1.cg.bnp import Search
from bace_opt.exact.p1.cg.branching import Node
from bace_opt.exact.p1.cg.engine import Pricers
from bace_opt.exact.p1.cg.nodecg import exact_round, solve_master
from bace_opt.exact.p1.cg.solve import start_sets
from bace_opt.exact.p1.data import PlacementData
from benchmarks.common import RESULTS, git_commit, load_line, realistic, write_result

ROUNDS = 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--threads", type=int, nargs="+", default=None)
    args = ap.parse_args(argv)
    threads = args.threads or sorted({1, 2, os.cpu_count() or 1})
    inst = realistic(args.seed)
    data = PlacementData(inst)
    pricers = Pricers(data)
    starts = start_sets(data, None)
    z1 = max(len(c) for _, c in starts)
    S = Search(data, 2, z1, None, pricers, [s for s in starts if len(s[1]) == z1], None, 1, 1e-9, 60.0)
    for j in range(len(data.jobs)):
        pricers.exact_pricer(j)
    _, y, _ = solve_master(S.ctx)
    lines = [f"# cg engine: exact pricing rounds against threads (commit {git_commit()})", "",
             f"{inst.name}: {len(data.jobs)} jobs, {len(S.M.columns)} columns, {os.cpu_count()} cores; {ROUNDS} full "
             f"exact rounds per thread count; {load_line()}", "",
             "| threads | wall s | load before -> after | same terms |", "|---|---|---|---|"]
    ref, bad = None, False
    for th in threads:
        S.ctx.pool = ThreadPoolExecutor(th) if th > 1 else None
        la = os.getloadavg()[0]
        t = time.perf_counter()
        terms = [exact_round(S.ctx, Node({}, 0.0), y, 0, S.scale(), whole=True)[1] for _ in range(ROUNDS)]
        wall = time.perf_counter() - t
        if S.ctx.pool is not None:
            S.ctx.pool.shutdown()
        ref = terms if ref is None else ref
        bad |= terms != ref
        lines.append(f"| {th} | {wall:.2f} | {la:.2f} -> {os.getloadavg()[0]:.2f} | {'yes' if terms == ref else 'NO'} |")
        print(lines[-1], flush=True)
    write_result(RESULTS / "p1_threads.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
