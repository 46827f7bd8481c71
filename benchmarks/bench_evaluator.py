"""Evaluator throughput on a 10,000-job, 20-region schedule, and load time of the largest shipped instance.

Target (issue 2): evaluate a 10,000-job, 20-region schedule in under 2 s on one core.

The schedule: 20 regions in a full mesh, hourly price series; regions paired (0,1), (2,3), ...; each job
runs split across one pair (two blocks and one hop at its no-stall demand), and the jobs of a pair run one
after another, so the schedule is feasible by construction.  Run:  python -m benchmarks.bench_evaluator
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time

import bace_opt as bo
from bace_opt import formulas as F
from benchmarks.common import ROOT



def build(n_jobs=10_000, n_regions=20, seed=0):
    rng = random.Random(seed)
    gt = bo.GpuType("A6000", 154.8, 48, 300)
    regions = [bo.Region(f"r{i:02d}", "A6000", 64, round(rng.uniform(0.156, 0.295), 3),
                         price_series=bo.PriceSeries(0.0, 3600.0, tuple(round(rng.uniform(0.1, 0.3), 3)
                                                                         for _ in range(24 * 30))))
               for i in range(n_regions)]
    links = [bo.Link(a.name, b.name, rng.uniform(25, 100), rng.uniform(5, 150), 0.02)
             for i, a in enumerate(regions) for b in regions[i + 1:]]
    jobs = [bo.Job(f"job{i:05d}", float(i * 30), rng.randint(4, 64), rng.randint(8, 64), rng.randint(10, 200),
                   rng.uniform(0.05, 0.5), rng.uniform(5, 60)) for i in range(n_jobs)]
    inst = bo.Instance("bench-eval", {"A6000": gt}, "A6000", regions, links, jobs).validated()
    free_at = {}
    plans = []
    for i, j in enumerate(inst.jobs):
        pair = (i % (n_regions // 2)) * 2
        a, b = regions[pair].name, regions[pair + 1].name
        start = max(j.arrival_s, free_at.get(pair, 0.0))
        n1 = j.stages // 2 or 1
        blocks = [(a, n1), (b, j.stages - n1)] if j.stages > 1 else [(a, 1)]
        hops = [((a, b), F.demand_gbps(j, F.tau_s(inst, j, [a, b])))] if j.stages > 1 else []
        p = bo.JobPlan(j.name, "done", start, blocks, hops)
        free_at[pair] = bo.price_plan(inst, p).finish_s
        plans.append(p)
    return inst, plans


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--regions", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    inst, plans = build(a.jobs, a.regions)
    t = time.perf_counter()
    sched = bo.make_schedule(inst, plans, "bench")
    t_price = time.perf_counter() - t
    best = float("inf")
    for _ in range(a.repeat):
        t = time.perf_counter()
        rep = bo.evaluate(inst, sched)
        best = min(best, time.perf_counter() - t)
    assert rep.feasible, rep.summary()
    t = time.perf_counter()
    text = sched.to_json()
    bo.Schedule.from_dict(json.loads(text))
    t_json = time.perf_counter() - t
    print(f"schedule: {a.jobs} jobs, {a.regions} regions, {len(inst.links)} links, hourly prices (720 h)")
    print(f"make_schedule (price every plan): {t_price:.3f} s")
    print(f"evaluate (check rules 0-4 + recompute), best of {a.repeat}: {best:.3f} s  "
          f"({a.jobs / best:,.0f} jobs/s)  target < 2 s: {'met' if best < 2 else 'MISSED'}")
    print(f"schedule JSON write + read: {t_json:.3f} s ({len(text) / 1e6:.1f} MB)")
    shipped = sorted((ROOT / "instances").glob("*.json"), key=lambda p: p.stat().st_size)
    if shipped:
        big = shipped[-1]
        t = time.perf_counter()
        bo.load_instance(big)
        print(f"load largest shipped instance {big.name} ({big.stat().st_size / 1e3:.0f} kB): "
              f"{time.perf_counter() - t:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
