"""select-pack at paper size: decision time, and online mean JCT and cost against the certified P2 bounds.

1. **Decision time at P1's epoch** (every resource free, all jobs waiting): the paper family with 8 and 24
   jobs (seeds 1-3, nominal and measured bandwidth), ``--reps`` decisions each; the median and the max over
   *every* decision (not the least of the repetitions), wall clock and CPU time of the process.
2. **Decision time in the simulator**: every ``decide`` call of ``bo.simulate`` (queue mode) on the same
   instances, timed by a wrapper that only forwards the call.
3. **P1 gap where the GPUs bind the number of jobs** (``--contended``; not in the gap suite): the paper family
   with 24 jobs (nominal and measured bandwidth), 16 jobs, 12 jobs on half the GPUs (seeds 1-3), random
   6 regions x 16 jobs with up to 2 GPUs per stage and random 5 regions x 14 jobs on a sparse network with
   hourly prices and two GPU types (seeds 1-8); P1 solved here by HiGHS (120 s limit; unproven ones are
   left out), each policy's epoch priced by the evaluator: jobs lost and cost gap.
4. **Online against the certified P2 brackets** (``results/schedule_brackets.csv``, paper 6r-8j seeds 1-3,
   mu = 0): each policy's mean JCT above the certified lower bound, and its cost above the cost lower bound
   (the sum of each job's cheapest mode alone, ``exact.p2.relax``; it ignores that the jobs compete for
   the cheap GPUs, so no schedule need reach it), all priced by the evaluator.

The machine is shared: the load average is printed at start and end; compare policies within one run.

Run:  python -m benchmarks.bench_select_pack [--reps 5] [--contended] [--no-write]
Writes benchmarks/results/select-pack.csv (one row per decision-time group / online run) and select-pack.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import pandas as pd

import bace_opt as bo
from bace_opt.bench.markdown import md
from bace_opt.builders import paper_instance
from bace_opt.builders.synthetic import random_instance
from bace_opt.files import atomic_write
from bace_opt.gaps.decompose import heuristic_epoch, p1_cost, solve_p1
from bace_opt.policies import PolicyBase, make_policy
from benchmarks.common import RESULTS as RES

POLICIES = ["bace-pipe", "price-pack", "select-pack"]
TARGET_MS = 50.0


class Timed(PolicyBase):
    """Forwards ``decide`` and ``place`` to a policy and records each decision's wall and CPU time (ms)."""

    def __init__(self, pol):
        self.pol, self.name, self.options = pol, pol.name, pol.options
        self.times: list[tuple[float, float, int]] = []

    def decide(self, now, queue, state):
        t, c = time.perf_counter(), time.process_time()
        out = self.pol.decide(now, queue, state)
        self.times.append((1000 * (time.perf_counter() - t), 1000 * (time.process_time() - c), len(queue)))
        return out

    def place(self, job, state):
        return self.pol.place(job, state)


def instances():
    for jobs in (8, 24):
        for bw in ("nominal", "measured"):
            for seed in (1, 2, 3):
                yield f"paper-6r-{jobs}j-{bw}", seed, paper_instance(seed, jobs=jobs, bandwidth_source=bw)


def decision_rows(reps: int) -> list[dict]:
    rows = []
    for label, seed, inst in instances():
        for pol in POLICIES:
            for _ in range(reps):
                h = heuristic_epoch(inst, pol)
                rows.append({"part": "epoch", "instances": label, "seed": seed, "policy": pol, "queue": len(inst.jobs),
                             "wall_ms": 1000 * h.meta["decision_s"], "cpu_ms": 1000 * h.meta["decision_cpu_s"]})
            timed = Timed(make_policy(pol))
            bo.simulate(inst, timed)
            rows += [{"part": "simulate", "instances": label, "seed": seed, "policy": pol, "queue": n,
                      "wall_ms": w, "cpu_ms": c} for w, c, n in timed.times]
    return rows


def contended_instances():
    for seed in (1, 2, 3):
        yield "paper 6r-24j", seed, paper_instance(seed, jobs=24)
        yield "paper 6r-24j measured", seed, paper_instance(seed, jobs=24, bandwidth_source="measured")
        yield "paper 6r-16j", seed, paper_instance(seed, jobs=16)
        yield "paper 6r-12j gpu x0.5", seed, paper_instance(seed, jobs=12, gpu_scale=0.5)
    for seed in range(1, 9):
        yield "random 6r-16j g<=2", seed, random_instance(seed, n_regions=6, n_jobs=16, max_gpus_per_region=16,
                                                         max_stages=8, max_gpus_per_stage=2)
        yield "random 5r-14j sparse", seed, random_instance(seed, n_regions=5, n_jobs=14, topology="sparse",
                                                            max_gpus_per_region=12, max_stages=8,
                                                            hourly_prices=True, mixed_gpus=True)


def contended_rows() -> list[dict]:
    rows = []
    for label, seed, inst in contended_instances():
        t0 = max(j.arrival_s for j in inst.jobs)
        opt, _ = solve_p1(inst, t0=t0, time_limit_s=120)
        if not opt.proven:
            continue
        for pol in POLICIES:
            h = heuristic_epoch(inst, pol)
            n = sum(j.status == "done" for j in h.jobs)
            cost = p1_cost(inst, h, t0)
            rows.append({"instances": label, "seed": seed, "policy": pol, "opt_jobs": opt.jobs,
                         "jobs_lost": opt.jobs - n, "opt_s": opt.wall_s,
                         "cost_gap_pct": 100 * (cost / opt.cost_usd - 1) if n == opt.jobs and opt.cost_usd > 0
                         else float("nan"), "decision_cpu_ms": 1000 * h.meta["decision_cpu_s"]})
    return rows


def online_rows() -> list[dict]:
    br = pd.read_csv(RES / "schedule_brackets.csv")
    rows = []
    for _, b in br.iterrows():
        inst = bo.load_instance(RES.parent.parent / "instances" / f"{b['instance']}.json")
        for pol in POLICIES:
            s = bo.simulate(inst, pol)
            m = s.metrics
            cost = m["total_electricity_usd"] + (m["total_egress_usd"] if inst.objective.egress else 0.0)
            rows.append({"instance": b["instance"], "policy": pol, "jobs_done": m["jobs_done"],
                         "avg_jct_s": m["avg_jct_s"], "jct_lower_s": b["lower_s"], "jct_upper_s": b["upper_s"],
                         "jct_over_lb_pct": 100 * (m["avg_jct_s"] / b["lower_s"] - 1),
                         "best_known_over_lb_pct": 100 * (b["upper_s"] / b["lower_s"] - 1),
                         "cost_usd": cost, "cost_lower_usd": b["cost_lower_usd"],
                         "cost_over_lb_pct": 100 * (cost / b["cost_lower_usd"] - 1)})
    return rows


def contended_text(con: pd.DataFrame) -> str:
    t = con.groupby(["instances", "policy"], sort=False).agg(
        instances_proven=("seed", "count"), jobs_lost=("jobs_lost", "sum"),
        cost_gap_mean_pct=("cost_gap_pct", "mean"), cost_gap_worst_pct=("cost_gap_pct", "max"),
        decision_cpu_ms_median=("decision_cpu_ms", "median"), decision_cpu_ms_max=("decision_cpu_ms", "max"))
    a = con.groupby("policy", sort=False).agg(instances_proven=("seed", "count"), jobs_lost=("jobs_lost", "sum"),
                                              cost_gap_mean_pct=("cost_gap_pct", "mean"),
                                              cost_gap_worst_pct=("cost_gap_pct", "max"))
    return ("## P1 gap where the GPUs bind the number of jobs (`--contended`)\n\n"
            "Cost gap to the P1 optimum (HiGHS, proven) where the policy starts as many jobs; jobs_lost: jobs "
            "the optimum starts and the policy does not.\n\n" + md(t) + "\n\nAll of them:\n\n" + md(a) + "\n\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--contended", action="store_true", help="also the P1 gap on the contended instances (~3 min)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    dec = pd.DataFrame(decision_rows(args.reps))
    onl = pd.DataFrame(online_rows())
    con = pd.DataFrame(contended_rows()) if args.contended else None
    load1 = os.getloadavg()

    def q(x):
        return statistics.quantiles(x, n=100, method="inclusive")[98] if len(x) > 1 else x.iloc[0]
    t = dec.groupby(["part", "instances", "policy"], sort=False).agg(
        decisions=("wall_ms", "count"), wall_ms_median=("wall_ms", "median"), wall_ms_p99=("wall_ms", q),
        wall_ms_max=("wall_ms", "max"), cpu_ms_median=("cpu_ms", "median"), cpu_ms_max=("cpu_ms", "max"),
        over_target=("wall_ms", lambda x: int((x > TARGET_MS).sum())))
    text = ("# select-pack at paper size: decision time, and online against the certified P2 bounds\n\n"
            f"`python -m benchmarks.bench_select_pack --reps {args.reps}{' --contended' if args.contended else ''}`"
            f" (niced 19). Load average (1, 5, 15 min) at start "
            f"{tuple(round(x, 1) for x in load0)}, at end {tuple(round(x, 1) for x in load1)} on "
            f"{os.cpu_count()} cores: wall times are inflated by that load (CPU time much less).\n\n"
            f"## Decision time (ms; over_target: decisions above {TARGET_MS:g} ms wall)\n\n"
            "epoch: the decision at P1's epoch (every resource free, all jobs waiting), "
            f"{args.reps} repetitions per instance and seed 1-3; simulate: every decision of a queue-mode "
            "simulation of the same instances.\n\n" + md(t) + "\n\n"
            + (contended_text(con) if con is not None else "") +
            "## Online (queue mode) against the certified P2 brackets (paper 6r-8j, mu = 0)\n\n"
            "jct_over_lb_pct: mean JCT above the certified lower bound; best_known_over_lb_pct: the bracket's "
            "upper end (the best schedule known) above it; cost_over_lb_pct: cost above the cost lower bound "
            "(each job's cheapest mode alone).\n\n"
            + md(onl[["instance", "policy", "jobs_done", "avg_jct_s", "jct_over_lb_pct", "best_known_over_lb_pct",
                      "cost_usd", "cost_over_lb_pct"]].set_index(["instance", "policy"])) + "\n")
    print(text)
    if not args.no_write:
        parts = [dec.assign(table="decision"), onl.assign(table="online")]
        parts += [con.assign(table="contended")] if con is not None else []
        atomic_write(RES / "select-pack.csv", pd.concat(parts).to_csv(index=False))
        atomic_write(RES / "select-pack.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
