"""Which optimiser for the adversarial search: TPE against random sampling at equal budgets.

Reads two committed searches of the same settings (bace-pipe, random family, 4 regions x 6 jobs, 20 s limit,
seed 0) that differ only in the sampler: ``results/adversary/bace-pipe-random-tpe`` and
``results/adversary/bace-pipe-random-rs``; prints, after the first 50, 100 and 200 candidates, the largest
proven gap, the mean of the 10 largest, the mean, and how many exceed the gap suite's worst at that size
(``results/gap-small.csv``, random 4r-6j).  Reproduce the searches with

    bace-opt adversary --policy bace-pipe --family random --budget 200 --seed 0 --sampler tpe \\
        -o benchmarks/results/adversary/bace-pipe-random-tpe
    bace-opt adversary --policy bace-pipe --family random --budget 200 --seed 0 --sampler random \\
        -o benchmarks/results/adversary/bace-pipe-random-rs
"""
from __future__ import annotations

import json
import sys

from bace_opt.bench.report import load, p1_gaps
from benchmarks.common import RESULTS as RES


def main() -> int:
    g = p1_gaps(load(RES / "gap-small.csv"))
    suite_worst = g[(g["method"] == "bace-pipe") & (g["size"] == "4r-6j")]["cost_gap_pct"].max()
    print(f"gap suite, random 4r-6j, bace-pipe: worst proven cost gap {suite_worst:.1f} %\n")
    print("| sampler | candidates | best % | top-10 mean % | mean % | above the suite's worst |")
    print("|---|---|---|---|---|---|")
    for name in ("tpe", "rs"):
        d = RES / "adversary" / f"bace-pipe-random-{name}" / "trials.jsonl"
        recs = sorted((json.loads(l) for l in d.read_text().splitlines()), key=lambda r: r["trial"])
        for budget in (50, 100, 200):
            gaps = sorted((100 * r["cost_gap"] for r in recs[:budget] if r["status"] == "proven"), reverse=True)
            if not gaps:
                continue
            print(f"| {'TPE (multivariate)' if name == 'tpe' else 'random'} | {budget} | {gaps[0]:.1f} | "
                  f"{sum(gaps[:10]) / len(gaps[:10]):.1f} | {sum(gaps) / len(gaps):.1f} | "
                  f"{sum(x > suite_worst for x in gaps)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
