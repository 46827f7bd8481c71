"""The CG engine (branch-and-price, ``p1cg.solve_levels_cg``) against the walk engine (``solve_levels_milp``) on
one family, one instance at a time, in the same run (issue 37 step 3, second part).

    PYTHONPATH=. python docs/research/p1-colgen/bnp_bench.py FAMILY [--seeds 1 2 3] [--levels 3] [--time-limit S]
        [--threads N] [--engines cg walk] [-v]
    PYTHONPATH=. python docs/research/p1-colgen/bnp_bench.py table      # the README's table from bnp.jsonl

FAMILY as ``p1cg_root_probe.py`` (paper, realistic, random-large, binding, fleet12, fleet20).  One JSON line per
instance and engine goes to results/bnp.jsonl (records of every level, wall seconds, load before and after).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from p1cg_root_probe import instances  # noqa: E402

from bace_opt.exact.p1.cg import solve_levels_cg  # noqa: E402
from bace_opt.exact.p1.data import PlacementData  # noqa: E402
from bace_opt.exact.p1.milp import solve_levels_milp  # noqa: E402
from bace_opt.solvers.base import SolveOptions  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "bnp.jsonl"
KEEP = ("level", "status", "objective", "bound", "gap", "solve_s", "bnp_nodes", "columns", "exact_rounds",
        "incumbent_source", "message")


def run(inst, label, engine, args) -> dict:
    data = PlacementData(inst)
    opts = SolveOptions(threads=args.threads, time_limit_s=args.time_limit)
    la = os.getloadavg()[0]
    t = time.perf_counter()
    c0 = time.process_time()
    if engine == "cg":
        sol, lv, build_s = solve_levels_cg(data, opts, None, args.levels, t)
    else:
        sol, lv, build_s = solve_levels_milp(data, "highs", opts, None, args.levels, t)
    wall = time.perf_counter() - t
    row = {"instance": label, "engine": engine, "threads": args.threads, "time_limit": args.time_limit,
           "wall_s": round(wall, 2), "cpu_s": round(time.process_time() - c0, 2), "load": [la, os.getloadavg()[0]],
           "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "levels": [{k: r.get(k) for k in KEEP} for r in lv]}
    with OUT.open("a") as f:
        f.write(json.dumps(row) + "\n")
    return row


def table() -> None:
    """The README's table: per instance, the last row of each engine (level 2 and 3 figures)."""
    rows: dict = {}
    for line in OUT.read_text().splitlines():
        r = json.loads(line)
        rows[(r["instance"], r["engine"])] = r
    print("| instance | engine | wall s (cpu s) | load | L1 | L2 status | L2 objective | L2 bound | L2 gap % | L2 nodes"
          " | L2 incumbent | L3 status | L3 objective |")
    print("|" + "---|" * 13)
    for (inst, eng), r in rows.items():
        lv = {x["level"]: x for x in r["levels"]}
        l2, l3 = lv.get(2, {}), lv.get(3, {})
        gap = None
        if l2.get("objective") is not None and l2.get("bound") is not None:
            gap = (l2["objective"] - l2["bound"]) / abs(l2["objective"]) * 100
        f = lambda v, d=9: "-" if v is None else (f"{v:.{d}g}" if isinstance(v, float) else str(v))  # noqa: E731
        print(f"| {inst} | {eng} | {r['wall_s']} ({r['cpu_s']}) | {r['load'][0]:.1f}-{r['load'][1]:.1f} | "
              f"{f(lv[1]['objective'])} | {l2.get('status', '-')} | {f(l2.get('objective'))} | {f(l2.get('bound'))} | "
              f"{f(gap, 3)} | {f(l2.get('bnp_nodes'))} | {l2.get('incumbent_source') or '-'} | "
              f"{l3.get('status', '-')} | {f(l3.get('objective'))} |")


def main() -> None:
    if sys.argv[1:] == ["table"]:
        table()
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("family")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--levels", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--engines", nargs="+", default=["cg", "walk"])
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    if args.v:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
        logging.getLogger("pyomo").setLevel(logging.WARNING)
    for inst, label in instances(args.family, args.seeds):
        for engine in args.engines:
            row = run(inst, label, engine, args)
            lv = " | ".join(f"L{r['level']} {r['status']} {r['objective']:.9g} [{r['bound']}] n{r['bnp_nodes']} "
                            f"{r['incumbent_source']}" if r["objective"] is not None else f"L{r['level']} {r['status']}"
                            for r in row["levels"])
            print(f"{label} {engine} {row['wall_s']} s (cpu {row['cpu_s']}) load {row['load']}: {lv}", flush=True)


if __name__ == "__main__":
    main()
