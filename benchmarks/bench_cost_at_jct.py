"""How far above the least possible cost at its own speed each policy lands (issue 30, item 3: "its online ...
cost within 2 % of the certified lower bounds"):

    python -m benchmarks.bench_cost_at_jct [--jobs 8,24,72] [--seeds 1,2,3] [--arrivals zero,poisson]
        [--policies bace-pipe,price-pack,...] [--time-limit 300] [--tag NAME]

The cost bound of the distance-to-bound tables (every job at its cheapest rate) is attained only by a schedule
that waits for the cheap GPUs; no fast schedule comes near it.  Here each policy's run (queue mode) is measured
against P2.40 (models/schedule.md section 8.5): the least cost of any schedule whose mean JCT is at most the
policy's own, a certified lower bound (the area relaxation with region energy under a mean-JCT cap; its LP, then
its MIP up to 12 jobs, on HiGHS).  A policy with unfinished jobs is not placed.  paper 8 jobs: the shipped
instances/paper-6r-8j-seed{1,2,3}.json (batch only); 24/72 jobs: the paper builder, nominal bandwidth.  Writes
results/cost_at_jct[_TAG].csv and .md after every instance, with the machine's load.
"""
from __future__ import annotations

import argparse
import os
import time

import bace_opt as bo
from bace_opt.builders.paper import paper_instance
from bace_opt.evaluate.metrics import objective_cost_usd
from bace_opt.exact.p2.area_sum import sum_lower_bound
from bace_opt.exact.p2.relax import job_modes
from bace_opt.files import atomic_write, csv_text
from bace_opt.solvers.base import SolveOptions
from benchmarks.common import RESULTS, ROOT, git_commit, load_1min, load_line

POLICIES = "bace-pipe,price-pack,select-pack,cr-lcf,cr-ldf,lcf,ldf"
MIP_MAX_JOBS = 12


def instances(args):
    for jobs in (int(x) for x in args.jobs.split(",")):
        for arr in args.arrivals.split(","):
            for seed in (int(x) for x in args.seeds.split(",")):
                if jobs == 8:
                    if arr == "zero":
                        yield bo.load_instance(ROOT / "instances" / f"paper-6r-8j-seed{seed}.json")
                    continue
                name = f"paper-6r-{jobs}j-seed{seed}" + ("-poisson" if arr == "poisson" else "")
                yield paper_instance(seed=seed, jobs=jobs, arrivals=arr, name=name)


def rows_of(inst, policies, time_limit: float) -> list[dict]:
    cheapest = sum(job_modes(inst, j)[1] for j in inst.jobs)
    out = []
    for p in policies:
        m = bo.simulate(inst, policy=p).metrics
        row = {"commit": git_commit(), "instance": inst.name, "policy": p, "jobs_done": m["jobs_done"], "jobs": len(inst.jobs),
               "mean_jct_s": m["avg_jct_s"], "cost_usd": objective_cost_usd(inst, m), "cheapest_rate_usd": cheapest}
        if m["jobs_done"] < len(inst.jobs):
            out.append(dict(row, bound_usd=None, status="unfinished jobs", above_pct=None,
                            above_cheapest_pct=None, unit_s=None, bound_s=0.0, loadavg=load_1min()))
            continue
        t = time.perf_counter()
        b = cost_bound(inst, m["avg_jct_s"], time_limit)
        out.append(distances(dict(row, bound_usd=b["lower_bound"], status=b["lower_bound_status"],
                                  unit_s=b.get("lower_bound_time_unit_s"), bound_s=time.perf_counter() - t,
                                  loadavg=load_1min())))
    return out


def distances(row: dict) -> dict:
    """above_pct: the cost above the larger of P2.40 at the policy's mean JCT and the cheapest-rate bound (both
    bound the cost of every schedule as fast; P2.40 ignores which regions a job may use, so under a loose cap
    the cheapest-rate bound can be the larger); above_cheapest_pct: above the cheapest-rate bound alone."""
    lb, cheapest, cost = row["bound_usd"], float(row["cheapest_rate_usd"]), float(row["cost_usd"])
    ok = lb not in (None, "") and 0 < float(lb) < float("inf")
    best = max(float(lb), cheapest) if ok else None
    return dict(row, above_pct=None if best is None else 100 * (cost - best) / best,
                above_cheapest_pct=100 * (cost - cheapest) / cheapest)


def cost_bound(inst, jct_s: float, time_limit: float) -> dict:
    """P2.40 at ``jct_s``: its LP, then (up to ``MIP_MAX_JOBS`` jobs) its MIP with the time left; the larger
    proven bound (a time-limited MIP whose root did not end proves less than the LP)."""
    t0 = time.perf_counter()
    best = sum_lower_bound(inst, SolveOptions(time_limit_s=time_limit, threads=2), jct_cap_s=jct_s)
    left = time_limit - (time.perf_counter() - t0)
    if len(inst.jobs) <= MIP_MAX_JOBS and left > 1.0 and best["lower_bound_status"] != "infeasible":
        b = sum_lower_bound(inst, SolveOptions(time_limit_s=left, threads=2), mip=True, jct_cap_s=jct_s)
        if b["lower_bound"] is not None and (best["lower_bound"] is None or b["lower_bound"] > best["lower_bound"]):
            best = b
    return best


def write(rows, stem, args) -> None:
    atomic_write(RESULTS / f"{stem}.csv", csv_text(list(rows[0]), rows))
    policies = args.policies.split(",")
    md = ["# Cost above the least cost at the policy's own mean JCT (P2.40)\n",
          f"`python -m benchmarks.bench_cost_at_jct --jobs {args.jobs} --seeds {args.seeds} --arrivals {args.arrivals}"
          f" --time-limit {args.time_limit:g}` (commit {args.commit}) on {os.cpu_count()} shared cores. Each cell: the "
          "policy's cost above the certified least cost of any schedule whose mean JCT is at most the policy's "
          "(%; the larger of P2.40 at that mean JCT and the cheapest-rate bound), then, in brackets, above every "
          "job at its cheapest rate alone (the distance-to-bound tables' cost bound)."
          " `-`: unfinished jobs or no bound proven.\n",
          "| instance | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
    by = {}
    for r in rows:
        by.setdefault(r["instance"], {})[r["policy"]] = r
    for name, d in by.items():
        cells = []
        for p in policies:
            r = d.get(p)
            if r is None or r["above_pct"] is None:
                cells.append("-")
            else:
                cells.append(f"+{r['above_pct']:.1f} ({r['above_cheapest_pct']:+.1f})")
        md.append(f"| {name} | " + " | ".join(cells) + " |")
    loads = [r["loadavg"] for r in rows]
    md += ["", f"Bound: HiGHS, the LP then, up to {MIP_MAX_JOBS} jobs, the MIP (the larger proven), {args.time_limit:g} s each; bound time "
           f"{min(r['bound_s'] for r in rows):.1f}-{max(r['bound_s'] for r in rows):.1f} s; load "
           f"{min(loads):.2f}-{max(loads):.2f} on {os.cpu_count()} cores. Rows: results/{stem}.csv."]
    atomic_write(RESULTS / f"{stem}.md", "\n".join(md) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_cost_at_jct", description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", default="8,24,72")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--arrivals", default="zero,poisson", help="zero (batch), poisson (24/72 jobs)")
    ap.add_argument("--policies", default=POLICIES)
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per bound")
    ap.add_argument("--tag", default="")
    ap.add_argument("--no-run", action="store_true", help="rewrite the report from the results CSV")
    args = ap.parse_args(argv)
    args.commit = git_commit()
    stem = "cost_at_jct" + (f"_{args.tag}" if args.tag else "")
    if args.no_run:
        import csv
        with open(RESULTS / f"{stem}.csv", newline="") as fh:
            rows = [distances(r) for r in csv.DictReader(fh)]
        for r in rows:
            for k in ("bound_s", "loadavg"):
                r[k] = float(r[k])
        args.commit = rows[0].get("commit") or args.commit
        write(rows, stem, args)
        return 0
    rows = []
    for inst in instances(args):
        rows += rows_of(inst, args.policies.split(","), args.time_limit)
        print(inst.name + ": " + ", ".join(f"{r['policy']} {r['above_pct'] if r['above_pct'] is None else round(r['above_pct'], 1)}"
                                           for r in rows if r["instance"] == inst.name) + f"; {load_line()}", flush=True)
        write(rows, stem, args)
    print(f"wrote results/{stem}.csv and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
