"""The probe of this round: plan-jct with given options on paper instances, J/U - 1 against the U (and L) columns
of benchmarks/results/planner-<jobs>j.csv (the 120 s brackets; no bracket is recomputed).

Run from the repository root:
  python docs/research/planner-poisson/probe.py --seeds 1-6 --families poisson futures=8 future_horizon=6
Options are plan-jct's (key=value, parsed as Python literals); the seeds 7 and 8 are refused without --held-out.
"""
from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time

import numpy as np
import pandas as pd

import bace_opt as bo
from bace_opt.builders import paper_instance
from bace_opt.policies.planner import PlanJct
from bace_opt.sim import run_simulation
from benchmarks.bench_planner import FAMILIES, HELD_OUT, seeds_arg
from benchmarks.common import RESULTS, load_line


def ul_table(jobs: int, held_out: bool) -> dict:
    out = {}
    for f in [f"planner-{jobs}j.csv"] + ([f"planner-{jobs}j-heldout.csv"] if held_out else []):
        p = RESULTS / f
        if p.exists():
            for r in pd.read_csv(p).itertuples():
                out[r.instance] = (r.U_s, r.L_s)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1-6")
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--families", default="batch,poisson")
    ap.add_argument("--held-out", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("options", nargs="*")
    a = ap.parse_args(argv)
    seeds = seeds_arg(a.seeds)
    if set(seeds) & set(HELD_OUT) and not a.held_out:
        ap.error("seeds 7 and 8 are held out")
    opts = {k: ast.literal_eval(v) for k, v in (o.split("=", 1) for o in a.options)}
    import bace_opt.policies.planner_future as pf
    for k in [k for k in opts if k.startswith("F.")]:      # F.NAME=value: a constant of planner_future
        setattr(pf, k[2:], opts.pop(k))
        print(f"planner_future.{k[2:]} = {getattr(pf, k[2:])!r}")
    ul = ul_table(a.jobs, a.held_out)
    print(load_line(), "options", opts, flush=True)
    for fam in a.families.split(","):
        rows = []
        for s in seeds:
            inst = paper_instance(seed=s, jobs=a.jobs, **FAMILIES[fam])
            U, L = ul[inst.name]
            pol = PlanJct(**opts)
            t0 = time.perf_counter()
            sched, stats = run_simulation(inst, pol)
            rep = bo.evaluate(inst, sched)
            J = sched.metrics["avg_jct_s"]
            ds = sorted(stats.decide_s)
            r = dict(seed=s, ju=100 * (J / U - 1), jl=100 * (J / L - 1) if L == L and L else float("nan"),
                     p99=float(np.percentile(ds, 99)), mx=ds[-1], ok=rep.feasible and sched.metrics["jobs_done"]
                     == len(inst.jobs), held=pol.stats["held"], wall=time.perf_counter() - t0)
            rows.append(r)
            if not a.quiet:
                print(f"  {fam:7s} seed {s}: J/U-1 {r['ju']:+7.2f} %  J/L-1 {r['jl']:+7.2f} %  held {r['held']:3d}  "
                      f"decide p99 {r['p99']:.3f} s max {r['mx']:.3f} s  ok {r['ok']}  wall {r['wall']:.1f} s",
                      flush=True)
        ju = [r["ju"] for r in rows]
        print(f"{fam:7s} mean {statistics.mean(ju):+.2f} %  worst {max(ju):+.2f} %  per seed "
              + " ".join(f"{x:+.2f}" for x in ju) + f"  p99 max {max(r['p99'] for r in rows):.3f} s"
              f"  max {max(r['mx'] for r in rows):.3f} s  all ok {all(r['ok'] for r in rows)}", flush=True)
    print(load_line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
