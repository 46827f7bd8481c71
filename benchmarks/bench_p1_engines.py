"""P1's two engines side by side (issue 37, steps 3 and 5): the walk model and column generation with
branch-and-price, on the same instances in the same run, and each shipped policy's gap against what they prove.

    python -m benchmarks.bench_p1_engines --family fleet20 --time-limit 300       # ~30 min on 2 cores
    python -m benchmarks.bench_p1_engines --family paper,realistic --time-limit 120

Per instance and engine: P1 levels 1-2 (``bo.solve(..., levels=2, engine=E)``, every core, the select-pack start
at the plain epoch), its status, the count, the cost of the placement returned (the evaluator's), the level-2
bound and gap, the wall time, columns and branch-and-price nodes (cg), and the 1-minute load before and after.
Where both engines prove an instance, their optima must agree (rel 1e-6; the script exits 1 if not).  Then, per
policy (bace-pipe, select-pack, price-pack, lcf), its decision at the same epoch (``gaps.heuristic_epoch``) and
its cost gap against the best bound and the best placement of both engines: proven when an engine proved the
optimum, else certified ("at most" against the bound, "at least" against the best placement found).

Families: paper (instances/paper-6r-8j-seed1..3), realistic (8 x 16, seeds 1-3, built from the shipped tables),
random-large (12 x 32), fleet12 (the first 12 regions of the fleet, 30 jobs) and fleet20
(instances/realistic-20r-50j-seed1..3).  Writes benchmarks/results/p1_engines-<families>.csv and .md.
"""
from __future__ import annotations

import argparse
import sys
import time

import bace_opt as bo
from bace_opt.files import csv_text
from bace_opt.gaps.decompose import heuristic_epoch, p1_cost
from benchmarks.common import RANDOM_LARGE, RESULTS, ROOT, git_commit, load_1min, load_line, realistic, write_result

ENGINES = ("walk", "cg")
POLICIES = ("bace-pipe", "select-pack", "price-pack", "lcf")
FIELDS = ("instance", "engine", "status", "jobs", "cost_usd", "bound_usd", "gap", "wall_s", "columns", "bnp_nodes",
          "bound_source", "load_before", "load_after", "commit")


def family_instances(family: str, seeds) -> list:
    if family == "paper":
        return [bo.load_instance(ROOT / f"instances/paper-6r-8j-seed{s}.json") for s in seeds]
    if family == "realistic":
        return [realistic(s) for s in seeds]
    if family == "random-large":
        from bace_opt.builders.synthetic import random_instance
        return [random_instance(seed=s, **RANDOM_LARGE["12r-32j"]) for s in seeds]
    if family == "fleet12":
        from bace_opt.builders.realistic import FLEET20, realistic_instance
        return [realistic_instance(None, FLEET20[:12], seed=s, jobs=30, gpu_mix=("A100-80GB", "H100-80GB"),
                                   fill_missing="rtt", name=f"realistic-12r-30j-seed{s}") for s in seeds]
    if family == "fleet20":
        return [bo.load_instance(ROOT / f"instances/realistic-20r-50j-seed{s}.json") for s in seeds]
    raise SystemExit(f"unknown family {family!r} (paper, realistic, random-large, fleet12, fleet20)")


def run_engine(inst, engine: str, time_limit: float, commit: str) -> dict:
    before = load_1min()
    t = time.perf_counter()
    s = bo.solve(inst, time_limit=time_limit, levels=2, engine=engine)
    wall = time.perf_counter() - t
    lv = {r["level"]: r for r in s.solver.extra.get("levels", [])}
    l2 = lv.get(2, {})
    t0 = s.meta.get("t0", 0.0)
    done = [p for p in s.jobs if p.status == "done"]
    cost = p1_cost(inst, s, t0) if done else None
    return {"instance": inst.name, "engine": engine, "status": s.solver.status, "jobs": len(done),
            "cost_usd": cost, "bound_usd": s.solver.bound, "gap": s.solver.gap, "wall_s": round(wall, 1),
            "columns": l2.get("columns"), "bnp_nodes": l2.get("bnp_nodes"), "bound_source": l2.get("bound_source"),
            "load_before": before, "load_after": load_1min(), "commit": commit,
            "count_proven": lv.get(1, {}).get("status") == "optimal"}


def policy_rows(inst, rows: list[dict]) -> list[tuple]:
    """(policy, jobs, cost, gap text) against the best bound and placement of the engines' rows."""
    proven = [r for r in rows if r["status"] == "optimal"]
    bound = max((r["bound_usd"] for r in rows if r["count_proven"] and r["bound_usd"]), default=None)
    best = min((r["cost_usd"] for r in rows if r["cost_usd"] is not None), default=None)
    jobs = max((r["jobs"] for r in rows), default=None)
    out = []
    for name in POLICIES:
        h = heuristic_epoch(inst, name)
        t0 = float(h.meta["t0_s"])
        n = sum(1 for p in h.jobs if p.status == "done")
        c = p1_cost(inst, h, t0)
        if jobs is not None and n < jobs:
            text = f"{jobs - n} admissions lost"
        elif proven:
            text = f"{100 * (c / proven[0]['cost_usd'] - 1):.2f} % (proven)"
        elif bound:
            lo = max(0.0, c / min(best, c) - 1) if best else 0.0
            text = f"{100 * lo:.2f} .. {100 * (c / bound - 1):.2f} % (certified)"
        else:
            text = "no bound"
        out.append((inst.name, name, n, round(c, 4), text))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="paper")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--time-limit", type=float, default=300.0)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    engines = [e for e in args.engines.split(",") if e]
    commit = git_commit()
    print(load_line(), flush=True)
    rows, prows, bad = [], [], 0
    for fam in args.family.split(","):
        for inst in family_instances(fam, seeds):
            mine = []
            for eng in engines:
                r = run_engine(inst, eng, args.time_limit, commit)
                print(r, flush=True)
                mine.append(r)
            both = [r for r in mine if r["status"] == "optimal"]
            if len(both) > 1 and abs(both[0]["cost_usd"] - both[1]["cost_usd"]) > 1e-6 * max(1.0, both[0]["cost_usd"]):
                print(f"DISAGREE on {inst.name}: {both[0]['cost_usd']} vs {both[1]['cost_usd']}", flush=True)
                bad += 1
            rows += mine
            prows += policy_rows(inst, mine)
    tag = args.family.replace(",", "+")
    write_result(RESULTS / f"p1_engines-{tag}.csv", csv_text(FIELDS, [[r[k] for k in FIELDS] for r in rows]))
    md = [f"# P1 engines, {args.family} ({args.time_limit:g} s each; commit {commit}; {load_line()})", "",
          "| instance | engine | status | jobs | cost USD | bound USD | gap | wall s | columns | B&P nodes | load |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['instance']} | {r['engine']} | {r['status']} | {r['jobs']} | {_f(r['cost_usd'])} | "
                  f"{_f(r['bound_usd'])} | {_p(r['gap'])} | {r['wall_s']} | {r['columns'] or '-'} | "
                  f"{r['bnp_nodes'] or '-'} | {r['load_before']}-{r['load_after']} |")
    md += ["", "| instance | policy | jobs | cost USD | cost gap |", "|---|---|---|---|---|"]
    md += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in prows]
    write_result(RESULTS / f"p1_engines-{tag}.md", "\n".join(md) + "\n")
    print("\n".join(md))
    return 1 if bad else 0


def _f(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def _p(x) -> str:
    return "-" if x is None else f"{100 * x:.3f} %"


if __name__ == "__main__":
    sys.exit(main())
