"""price-pack and select-pack against BACE-Pipe, with price-pack's ablation, on the gap suite's instances and on
the adversarial ones.

Instance sets, each with a *proven* P1 optimum read from committed result files (nothing re-solved here):

* gap small: random 3r-3j, 3r-4j, 4r-4j, 4r-6j (seeds 1-5), optimum = the ``p1:highs`` rows of
  ``results/gap-small.csv`` (status optimal);
* gap medium: random 6r-8j, 6r-12j and paper 6r-8j (seeds 1-3), optimum = ``results/gap-medium.csv``;
* gap binding: random 4r-6j, 6r-8j with links x0.05, paper 6r-8j measured (seeds 1-3), paper 6r-24j measured
  (seed 1), optimum = ``results/gap-binding.csv``;
* adversarial: every proven candidate of the BACE-Pipe search ``results/adversary/bace-pipe-random-tpe``
  (random family, 4 regions, 6 jobs), optimum = the candidate's recorded proven optimum; and the search run
  against price-pack itself (``results/adversary/price-pack-random-tpe``) when present.

Each policy's decision epoch (its ``decide`` at t0 on the empty cluster) is priced by the evaluator and its P1
cost (``cost_at_t0_usd``) compared with the optimum's: the cost gap where it starts as many jobs, else the jobs
lost.  Decision time: the least of ``--reps`` repetitions (the machine is shared; the load is printed beside
it, and only ratios within this run compare).

Run:  python -m benchmarks.bench_price_pack [--reps 3] [--policies P ...] [--sets "gap binding" ...] [--no-write]
Writes benchmarks/results/price-pack.csv (one row per instance x policy) and price-pack.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pandas as pd

from bace_opt.gaps.decompose import heuristic_epoch, p1_cost
from bace_opt.adversary.search import AdversaryConfig
from bace_opt.adversary.space import make_space
from bace_opt.bench.markdown import md
from bace_opt.bench.report import load
from bace_opt.bench.runner import RunSpec
from bace_opt.bench.tasks import build_instance
from bace_opt.files import atomic_write
from benchmarks.common import RESULTS as RES

POLICIES = ["bace-pipe", "price-pack", "select-pack", "price-pack-no-enum", "price-pack-no-order", "price-pack-no-search"]
VARIANTS = {"price-pack (max_evals=0: starting orders only)": ("price-pack", {"max_evals": 0})}


def gap_suite_instances(csv: Path, label: str):
    df = load(csv)
    ex = df[(df["method"] == "p1:highs") & (df["status"] == "optimal")]
    for _, e in ex.iterrows():
        opts = json.loads(e["options"])
        spec = RunSpec("gap", e["family"], e["size"], int(e["seed"]), "p1:highs", opts["instance"])
        yield label, f"{e['size']}/{int(e['seed'])}", build_instance(spec), int(e["jobs_done"]), float(e["p1_cost_usd"])


def adversarial_instances(d: Path, label: str):
    if not (d / "trials.jsonl").exists():
        return
    cfg = AdversaryConfig.from_dict(json.loads((d / "config.json").read_text()))
    space = make_space(cfg.space)
    for line in (d / "trials.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("opt_status") == "optimal" and r.get("opt_cost_usd") is not None:
            yield label, f"t{r['trial']}", space.build(r["params"]), int(r["opt_jobs"]), float(r["opt_cost_usd"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--policies", nargs="*", default=None, help="only these policies (default: all, ablations too)")
    ap.add_argument("--sets", nargs="*", default=None, help="only these instance sets (e.g. 'gap binding')")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    sets = [gap_suite_instances(RES / "gap-small.csv", "gap small"),
            gap_suite_instances(RES / "gap-medium.csv", "gap medium"),
            gap_suite_instances(RES / "gap-binding.csv", "gap binding"),
            adversarial_instances(RES / "adversary" / "bace-pipe-random-tpe", "adversarial (vs bace-pipe)"),
            adversarial_instances(RES / "adversary" / "price-pack-random-tpe", "adversarial (vs price-pack)")]
    runs = [(p, p, {}) for p in POLICIES] + [(lab, p, o) for lab, (p, o) in VARIANTS.items()]
    if args.policies is not None:
        runs = [r for r in runs if r[0] in args.policies]
    rows = []
    for gen in sets:
        for label, name, inst, opt_jobs, opt_cost in gen:
            if args.sets is not None and label not in args.sets:
                break
            t0 = max(j.arrival_s for j in inst.jobs)
            for lab, pol, opts in runs:
                best, cpus = None, []
                for _ in range(args.reps):
                    h = heuristic_epoch(inst, pol, **opts)
                    cpus.append(h.meta["decision_cpu_s"])
                    if best is None or h.meta["decision_s"] < best.meta["decision_s"]:
                        best = h
                jobs = sum(j.status == "done" for j in best.jobs)
                cost = p1_cost(inst, best, t0)
                rows.append({"set": label, "instance": name, "policy": lab, "opt_jobs": opt_jobs, "jobs": jobs,
                             "jobs_lost": opt_jobs - jobs, "cost_usd": cost, "opt_cost_usd": opt_cost,
                             "cost_gap_pct": (cost / opt_cost - 1) * 100 if jobs == opt_jobs and opt_cost > 0
                             else float("nan"),
                             "decision_ms": 1000 * best.meta["decision_s"], "decision_cpu_ms": 1000 * min(cpus)})
    load1 = os.getloadavg()
    df = pd.DataFrame(rows)
    t = df.groupby(["set", "policy"], sort=False).agg(
        instances=("instance", "count"), jobs_lost=("jobs_lost", "sum"),
        cost_gap_mean_pct=("cost_gap_pct", "mean"), cost_gap_worst_pct=("cost_gap_pct", "max"),
        decision_ms_median=("decision_ms", "median"), decision_ms_max=("decision_ms", "max"),
        decision_cpu_ms_max=("decision_cpu_ms", "max"))
    text = ("# price-pack and select-pack vs BACE-Pipe against the proven P1 optimum\n\n"
            f"Load average (1, 5, 15 min) at start {tuple(round(x, 1) for x in load0)}, at end "
            f"{tuple(round(x, 1) for x in load1)} on 2 cores: decision times are inflated by that load; compare "
            f"policies within this table. Decision time = least of {args.reps} repetitions, wall clock "
            f"(decision_ms) and CPU time of the process (decision_cpu_ms, less sensitive to the load).\n\n"
            + md(t) + "\n")
    print(text)
    if not args.no_write:
        atomic_write(RES / "price-pack.csv", df.to_csv(index=False))
        atomic_write(RES / "price-pack.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
