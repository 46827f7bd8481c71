"""Certified brackets of the weighted sum, mean JCT + mu x cost, on the paper instances at 24 and 72 jobs
(issue 30, item 1: "the weighted sum"), by ``bace_opt.solve(..., problem="schedule", bracket=True, mu=mu)``:

    python -m benchmarks.bench_sum_brackets [--jobs 24,72] [--seeds 1,2,3] [--arrivals zero,poisson]
        [--mu 20,100] [--budget 300] [--tag NAME]

Per instance and mu: the lower bound (the larger of the separable one, area relaxation + mu x each job at its
cheapest rate, and the region-energy one, P2.39; models/schedule.md section 8), the best schedule (the exact P2
over <= 2 regions per job and 1 route per hop when it builds, else the list scheduler's search on mean JCT +
mu cost), the bracket's width, and where five policies land above the lower bound.  Every bracket gets
``--budget`` seconds on 2 threads.  Writes results/weighted_sum_brackets[_TAG].csv and .md after every
instance, with the machine's load.
"""
from __future__ import annotations

import argparse
import os
import time

import bace_opt as bo
from bace_opt.builders.paper import paper_instance
from bace_opt.evaluate.metrics import objective_cost_usd
from bace_opt.files import atomic_write, csv_text
from benchmarks.common import RESULTS, git_commit, load_1min, load_line

POLICIES = ("bace-pipe", "price-pack", "select-pack", "cr-lcf", "lcf")


def one(inst, mu: float, budget: float) -> dict:
    la = load_1min()
    t = time.perf_counter()
    s = bo.solve(inst, problem="schedule", solver="highs", time_limit=budget, threads=2, mu=mu, bracket=True,
                 max_blocks=2, routes_k=1)
    wall = time.perf_counter() - t
    x = s.solver.extra
    row = {"instance": inst.name, "mu_s_per_usd": mu, "lower": x.get("lower_bound"), "upper": x.get("upper_bound"),
           "width_pct": None if x.get("bracket_gap") is None else 100 * x["bracket_gap"],
           "lower_kind": x.get("lower_bound_kind"), "separable_lower": x.get("lower_bound_area"),
           "region_energy_lower": x.get("lower_bound_sum"), "upper_from": s.solver.name,
           "upper_mean_jct_s": s.metrics.get("avg_jct_s"), "upper_cost_usd": objective_cost_usd(inst, s.metrics),
           "wall_s": wall, "loadavg_start": la, "loadavg_end": load_1min()}
    for p in POLICIES:
        m = bo.simulate(inst, policy=p).metrics
        done = m["jobs_done"] == len(inst.jobs)
        v = m["avg_jct_s"] + mu * objective_cost_usd(inst, m) if done else None
        lo = row["lower"]
        row[p] = None if v is None or not lo else 100 * (v - lo) / lo
    return row


def write(rows, stem, args) -> None:
    atomic_write(RESULTS / f"{stem}.csv", csv_text(list(rows[0]), rows))
    cols = ["instance", "mu_s_per_usd", "lower", "upper", "width_pct", "lower_kind", "separable_lower",
            "region_energy_lower", "upper_from", "wall_s", "loadavg_start", "loadavg_end"]
    md = [f"# Certified brackets of mean JCT + mu x cost, paper {args.jobs} jobs\n",
          f"`python -m benchmarks.bench_sum_brackets --jobs {args.jobs} --seeds {args.seeds} --arrivals "
          f"{args.arrivals} --mu {args.mu} --budget {args.budget:g}` (commit {args.commit}) on {os.cpu_count()} "
          "shared cores: `bace_opt.solve(problem='schedule', bracket=True, mu=mu, max_blocks=2, routes_k=1)`. "
          "lower = the larger certified bound (separable: area relaxation + mu x cheapest-rate cost; region "
          "energy: P2.39), upper = the returned schedule's evaluator objective (list-schedule: the exact P2 was "
          "too large to build), width = (upper - lower) / upper.\n",
          "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows]
    md += ["", "Policies: mean JCT + mu x cost above the certified lower bound (%; - = unfinished jobs).", "",
           "| instance | mu | " + " | ".join(POLICIES) + " |", "|---|---|" + "---|" * len(POLICIES)]
    md += [f"| {r['instance']} | {fmt(r['mu_s_per_usd'])} | " + " | ".join(
        "-" if r[p] is None else f"+{r[p]:.1f}" for p in POLICIES) + " |" for r in rows]
    atomic_write(RESULTS / f"{stem}.md", "\n".join(md) + "\n")


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.5g}"
    return str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_sum_brackets", description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", default="24", help="job counts, comma-separated (24, 72)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--arrivals", default="zero", help="zero (batch), poisson")
    ap.add_argument("--mu", default="20,100", help="s per USD, comma-separated")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds per bracket")
    ap.add_argument("--tag", default="", help="results/weighted_sum_brackets_TAG.*")
    args = ap.parse_args(argv)
    args.commit = git_commit()
    stem = "weighted_sum_brackets" + (f"_{args.tag}" if args.tag else "")
    rows = []
    for jobs in (int(x) for x in args.jobs.split(",")):
        for arr in args.arrivals.split(","):
            for seed in (int(x) for x in args.seeds.split(",")):
                name = f"paper-6r-{jobs}j-seed{seed}" + ("-poisson" if arr == "poisson" else "")
                inst = paper_instance(seed=seed, jobs=jobs, arrivals=arr, name=name)
                for mu in (float(x) for x in args.mu.split(",")):
                    rows.append(one(inst, mu, args.budget))
                    r = rows[-1]
                    print(f"{name} mu={mu:g}: lower {fmt(r['lower'])} ({r['lower_kind']}), upper {fmt(r['upper'])}"
                          f", width {fmt(r['width_pct'])} %, {r['wall_s']:.0f} s; {load_line()}", flush=True)
                    write(rows, stem, args)
    print(f"wrote results/{stem}.csv and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
