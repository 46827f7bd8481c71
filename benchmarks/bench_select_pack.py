"""select-pack at paper size: decision time, and online mean JCT and cost against the certified P2 bounds.

1. **Decision time at P1's epoch** (every resource free, all jobs waiting): the paper family with 8 and 24
   jobs (seeds 1-3, nominal and measured bandwidth), ``--reps`` decisions each; the median and the max over
   *every* decision (not the least of the repetitions), wall clock and CPU time of the process.
2. **Decision time in the simulator**: every ``decide`` call of ``bo.simulate`` (queue mode) on the same
   instances, timed by a wrapper that only forwards the call.
3. **Online against the certified P2 brackets** (``results/schedule_brackets.csv``, paper 6r-8j seeds 1-3,
   mu = 0): each policy's mean JCT above the certified lower bound, and its cost above the cost lower bound
   (the sum of each job's cheapest mode alone, ``exact.schedule_relax``; it ignores that the jobs compete for
   the cheap GPUs, so no schedule need reach it), all priced by the evaluator.

The machine is shared: the load average is printed at start and end; compare policies within one run.

Run:  python -m benchmarks.bench_select_pack [--reps 5] [--no-write]
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
from bace_opt.files import atomic_write
from bace_opt.gaps.decompose import heuristic_epoch
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    dec = pd.DataFrame(decision_rows(args.reps))
    onl = pd.DataFrame(online_rows())
    load1 = os.getloadavg()

    def q(x):
        return statistics.quantiles(x, n=100, method="inclusive")[98] if len(x) > 1 else x.iloc[0]
    t = dec.groupby(["part", "instances", "policy"], sort=False).agg(
        decisions=("wall_ms", "count"), wall_ms_median=("wall_ms", "median"), wall_ms_p99=("wall_ms", q),
        wall_ms_max=("wall_ms", "max"), cpu_ms_median=("cpu_ms", "median"), cpu_ms_max=("cpu_ms", "max"),
        over_target=("wall_ms", lambda x: int((x > TARGET_MS).sum())))
    text = ("# select-pack at paper size: decision time, and online against the certified P2 bounds\n\n"
            f"`python -m benchmarks.bench_select_pack --reps {args.reps}`. Load average (1, 5, 15 min) at start "
            f"{tuple(round(x, 1) for x in load0)}, at end {tuple(round(x, 1) for x in load1)} on "
            f"{os.cpu_count()} cores: wall times are inflated by that load (CPU time much less).\n\n"
            f"## Decision time (ms; over_target: decisions above {TARGET_MS:g} ms wall)\n\n"
            "epoch: the decision at P1's epoch (every resource free, all jobs waiting), "
            f"{args.reps} repetitions per instance and seed 1-3; simulate: every decision of a queue-mode "
            "simulation of the same instances.\n\n" + md(t) + "\n\n"
            "## Online (queue mode) against the certified P2 brackets (paper 6r-8j, mu = 0)\n\n"
            "jct_over_lb_pct: mean JCT above the certified lower bound; best_known_over_lb_pct: the bracket's "
            "upper end (the best schedule known) above it; cost_over_lb_pct: cost above the cost lower bound "
            "(each job's cheapest mode alone).\n\n"
            + md(onl[["instance", "policy", "jobs_done", "avg_jct_s", "jct_over_lb_pct", "best_known_over_lb_pct",
                      "cost_usd", "cost_over_lb_pct"]].set_index(["instance", "policy"])) + "\n")
    print(text)
    if not args.no_write:
        atomic_write(RES / "select-pack.csv", pd.concat([dec.assign(table="decision"),
                                                          onl.assign(table="online")]).to_csv(index=False))
        atomic_write(RES / "select-pack.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
