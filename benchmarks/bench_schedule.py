"""Benchmark P2 (offline schedule, models/schedule.md): CP-SAT at 1 s, and CP-SAT vs the slotted HiGHS MILP on
the same slots; then a JCT-cost Pareto front.

    python -m benchmarks.bench_schedule [--time-limit 120] [--threads 1] [--quick]

Target (issue 3): P2 on 6 jobs x 4 regions proven optimal by CP-SAT in under 120 s.  Per run it prints build
time, solve time, status, final gap, nodes (CP-SAT: branches), candidates, and, where the target is missed,
by how much (the gap left at the limit, or the time over 120 s).  Writes benchmarks/results/schedule_runs.csv,
benchmarks/results/schedule_pareto.csv and benchmarks/results/schedule.md.

    python -m benchmarks.bench_schedule --brackets [--family paper8|paper24|paper72] [--seeds 1,2,3]
        [--arrivals zero,poisson] [--bandwidth nominal,measured] [--budget 600]
    python -m benchmarks.bench_schedule --combine results/A.csv results/B.csv ... --family paper72 --tag NAME

Certified P2 brackets (issues 11 and 30) for mean JCT and cost, within ``--budget`` seconds on 2 threads per
instance, by one recipe: ``bace_opt.gaps.report.p2_figures`` (lower bounds: area relaxation, and the pool
relaxation up to 12 jobs; upper: the policies, the list scheduler's local search, and the restricted exact P2
up to 12 jobs; models/schedule.md section 8).  paper8: instances/paper-6r-8j-seed{1,2,3}.json; paper24 and
paper72: the paper builder at 24/72 jobs, batch and Poisson arrivals, nominal and measured bandwidth.  Every
registered policy is simulated and placed against the brackets.  Writes results/schedule_brackets.csv and .md
(paper8) or results/schedule_brackets_<family>.csv and .md, after every instance, with the machine's load.

Instances (all 6 jobs x 4 regions, deterministic):
  small-4r-6j            instances/small-4r-6j.json (shipped; bace-opt generate random --seed 1 --regions 4 --jobs 6)
  rand-4r-6j-s2-hourly   synthetic.random_instance(seed=2, n_regions=4, n_jobs=6, max_gpus_per_region=8,
                         max_stages=8, hourly_prices=True): GPUs contended, one link binding, hourly prices
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import bace_opt as bo
from bace_opt.files import atomic_write, csv_text
from bace_opt.builders.synthetic import random_instance
from bace_opt.exact.schedule import pareto_front, solve_schedule
from bace_opt.solvers.base import SolveOptions
from benchmarks.common import RESULTS, ROOT, git_commit

TARGET_S = 120.0


def instances():
    return {
        "small-4r-6j": bo.load_instance(ROOT / "instances" / "small-4r-6j.json"),
        "rand-4r-6j-s2-hourly": random_instance(seed=2, n_regions=4, n_jobs=6, max_gpus_per_region=8, max_stages=8,
                                                hourly_prices=True, name="rand-4r-6j-s2-hourly"),
    }


def cost_of(inst, sched):
    m = sched.metrics
    return m["total_electricity_usd"] + (m["total_egress_usd"] if inst.objective.egress else 0.0)


def run(inst, name, solver, mu, opts, **kw):
    t = time.perf_counter()
    s = solve_schedule(inst, solver, opts, mu=mu, **kw)
    wall = time.perf_counter() - t
    x = s.solver
    rep = bo.evaluate(inst, s) if x.objective is not None else None
    row = {
        "instance": name, "solver": x.name, "mu_s_per_usd": mu, "time_unit_s": x.extra.get("time_unit_s"),
        "status": x.status, "objective": x.objective, "bound": x.bound, "gap": x.gap,
        "evaluator_objective": x.extra.get("evaluator_objective"),
        "avg_jct_s": s.metrics.get("avg_jct_s"), "total_cost_usd": cost_of(inst, s) if x.objective else None,
        "build_s": round(x.build_s, 3), "solve_s": round(x.solve_s, 3), "wall_s": round(wall, 3), "nodes": x.nodes,
        "candidates": sum(x.extra["candidates_per_job"].values()),
        "candidates_enumerated": sum(x.extra["candidates_enumerated"].values()),
        "scope": x.extra.get("optimality_scope"), "feasible": None if rep is None else rep.feasible,
        "rounding_slack_s": x.extra.get("rounding_slack_s"),
    }
    if solver == "cpsat" and x.extra.get("time_unit_s") == 1.0:
        row["target"] = (f"met ({wall:.1f} s < {TARGET_S:g} s)" if x.status == "optimal" and wall <= TARGET_S
                         else f"MISSED: {x.status}, gap {x.gap if x.gap is not None else float('nan'):.3%} "
                              f"left at {wall:.1f} s" if x.status != "optimal"
                         else f"MISSED by {wall - TARGET_S:.1f} s")
    return s, row


def fmt(row):
    g = "-" if row["gap"] is None else f"{row['gap']:.2e}"
    o = "-" if row["objective"] is None else f"{row['objective']:.6f}"
    return (f"{row['instance']:22s} {row['solver']:6s} mu={row['mu_s_per_usd']:<10.4g} unit={row['time_unit_s']:<6g} "
            f"{row['status']:9s} obj={o:>16s} gap={g:>9s} build={row['build_s']:7.2f}s solve={row['solve_s']:7.2f}s "
            f"nodes={row['nodes']} cands={row['candidates']}/{row['candidates_enumerated']}"
            + (f"  target: {row['target']}" if row.get("target") else ""))


def brackets_main(args) -> int:
    """Certified P2 brackets (module doc): ``gaps.report.p2_figures`` per instance of ``--family``, every
    registered policy placed against them; results/schedule_brackets[_<family>].csv and .md, rewritten after
    every instance."""
    from bace_opt.evaluate.metrics import objective_cost_usd
    from bace_opt.gaps.report import p2_figures
    from bace_opt.policies import available
    POLICIES = [p for p in available() if p not in args.skip_policies.split(",")]
    from benchmarks.common import load_line
    rows = []
    args.commit = git_commit()               # the code that runs (HEAD may move while a long run goes on)
    stem = "schedule_brackets" if args.family == "paper8" else f"schedule_brackets_{args.family}"
    stem += f"_{args.tag}" if args.tag else ""
    print(f"# P2 brackets, family {args.family}, budget {args.budget:g} s per instance, {load_line()}", flush=True)
    for name, inst in bracket_instances(args):
        load0 = os.getloadavg()[0]
        t = time.perf_counter()
        runs = []
        for p in POLICIES:
            sp = bo.simulate(inst, policy=p)
            runs.append((p, sp, bo.evaluate(inst, sp).feasible and sp.metrics["jobs_done"] == len(inst.jobs)))
        sim_s = time.perf_counter() - t
        fig = p2_figures(inst, args.budget, threads=2, runs=runs)
        wall = time.perf_counter() - t
        lo, up = fig["jct_lower_bound_s"], fig["jct_best_s"]
        clo, cup = fig["cost_lower_bound_usd"], fig["cost_best_usd"]
        row = {"instance": name, "jobs": len(inst.jobs), "lower_s": lo, "lower_kind": fig["jct_lower_bound_kind"],
               "upper_s": up, "upper_from": fig["jct_best_from"],
               "width_pct": None if lo is None or not up else 100 * (up - lo) / up,
               "cost_lower_usd": clo, "cost_upper_usd": cup, "cost_upper_from": fig["cost_best_from"],
               "cost_width_pct": None if clo is None or not cup else 100 * (cup - clo) / cup,
               "lower_time_s": fig["lower_s"], "upper_time_s": fig["upper_s"], "policies_sim_s": sim_s,
               "wall_s": wall,
               "loadavg_start": round(load0, 2), "loadavg_end": round(os.getloadavg()[0], 2)}
        for p, sp, ok in runs:
            m = sp.metrics
            c = objective_cost_usd(inst, m)
            row[f"{p}_jct_s"] = m["avg_jct_s"] if ok else None
            row[f"{p}_cost_usd"] = c if ok else None
            row[f"{p}_inside"] = bool(ok and lo is not None and m["avg_jct_s"] >= lo - 1e-6 and c >= clo - 1e-9)
        rows.append(row)
        print(" ".join(f"{k}={_fmt(v)}" for k, v in row.items() if not k.endswith(("_jct_s", "_cost_usd"))),
              flush=True)
        _write_brackets(rows, stem, args, POLICIES)
    print(f"wrote results/{stem}.csv and .md; {load_line()}")
    return 0


def bracket_instances(args):
    """The instances of ``--family``: paper8 = the shipped paper 8-job files (seeds), paper24/paper72 = the paper
    builder at 24/72 jobs, seeds x arrivals (zero = batch, poisson: mean inter-arrival 3600 s) x bandwidth
    (nominal, measured), built in memory (deterministic)."""
    from bace_opt.builders.paper import paper_instance
    seeds = [int(x) for x in args.seeds.split(",")]
    if args.family == "paper8":
        for seed in seeds:
            yield f"paper-6r-8j-seed{seed}", bo.load_instance(ROOT / "instances" / f"paper-6r-8j-seed{seed}.json")
        return
    jobs = {"paper24": 24, "paper72": 72}[args.family]
    for bw in args.bandwidth.split(","):
        for arr in args.arrivals.split(","):
            for seed in seeds:
                name = f"paper-6r-{jobs}j-seed{seed}" + ("-poisson" if arr == "poisson" else "") + (
                    "-measured" if bw == "measured" else "")
                yield name, paper_instance(seed=seed, jobs=jobs, arrivals=arr, bandwidth_source=bw, name=name)


def _write_brackets(rows, stem, args, policies) -> None:
    atomic_write(RESULTS / f"{stem}.csv", csv_text(list(rows[0]), rows))
    cols = ["instance", "lower_s", "upper_s", "width_pct", "upper_from", "cost_lower_usd", "cost_upper_usd",
            "cost_width_pct", "lower_time_s", "upper_time_s", "policies_sim_s", "loadavg_start", "loadavg_end"]
    md = [f"# Certified P2 brackets, {args.family} (mean JCT and cost)\n",
          f"`python -m benchmarks.bench_schedule --brackets --family {args.family} --budget {args.budget:g}` "
          f"(commit {args.commit}) on {os.cpu_count()} shared cores, recipe `bace_opt.gaps.report.p2_figures`: "
          "lower = the larger proven relaxation bound (packing P2.35-P2.38 on the area relaxation; pool P2.29 up to "
          "12 jobs; the lower_kind column says which), upper = best evaluator-feasible schedule (policies, "
          "list-schedule local search and pooled CP-SAT search, restricted exact P2 up to 12 jobs); "
          "width = (upper - lower) / upper; the bracket's time is lower + upper time (`--budget`), simulating "
          "the policies (whose schedules also start the search) is counted apart.  Cost: lower = every job at its cheapest rate, upper = cheapest "
          "placements or a policy.\n",
          "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(_fmt(r[c]) for c in cols) + " |" for r in rows]
    md += ["", "Policies: mean JCT / cost above the certified lower bounds (%); OUTSIDE would mean below a lower "
           "bound (the bound would be wrong).", "",
           "| instance | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
    for r in rows:
        cells = []
        for p in policies:
            j, c = r[f"{p}_jct_s"], r[f"{p}_cost_usd"]
            if j is None or not r["lower_s"] or not r["cost_lower_usd"]:
                cells.append("unfinished" if j is None else "no bound")
                continue
            cells.append(f"{100 * (j / r['lower_s'] - 1):+.1f} / {100 * (c / r['cost_lower_usd'] - 1):+.1f}"
                         + ("" if r[f"{p}_inside"] else " OUTSIDE"))
        md.append(f"| {r['instance']} | " + " | ".join(cells) + " |")
    atomic_write(RESULTS / f"{stem}.md", "\n".join(md) + "\n")


def combine_main(args) -> int:
    """``--combine FILE.csv ...``: per instance, the largest lower bound and the lowest upper end over the
    given bracket runs (both are certified, so is the bracket they make), each with the run it came from and
    the time that end took (lower_time_s of its row, upper_time_s of its row: the bracket's time is their sum).
    A measured-bandwidth instance takes a nominal instance's lower bound only when the two build identical
    relaxation data (``p2.area.area_data``; the relaxations drop links).  Writes
    results/schedule_brackets_<tag>.md and .csv (instance, lower_s, cost_lower_usd, upper_s, width, sources, time:
    what ``bace-opt bench --brackets`` reads)."""
    import csv
    from bace_opt.exact.p2.area import area_data
    rows = {}
    for f in args.combine:
        with open(f, newline="") as fh:
            for r in csv.DictReader(fh):
                rows.setdefault(r["instance"], []).append(dict(r, file=os.path.basename(f)))
    same = {}
    for name, inst in bracket_instances(args):
        if name.endswith("-measured"):
            nominal = dict(bracket_instances(argparse.Namespace(**{**vars(args), "bandwidth": "nominal"})))
            base = name[: -len("-measured")]
            if base in nominal and area_data(inst) == area_data(nominal[base]):
                same[name] = base
    out = ["# Certified P2 brackets, " + args.family + ", composed from the runs below\n",
           f"`python -m benchmarks.bench_schedule --combine {' '.join(os.path.basename(f) for f in args.combine)} "
           f"--family {args.family} --tag {args.tag}`: per instance the largest certified lower bound and the lowest "
           "evaluator-checked upper end among the runs (both certified, so is the bracket); time = the lower "
           "end's lower_time_s + the upper end's upper_time_s in their runs. A measured-bandwidth instance uses "
           "its nominal twin's lower bounds when both build identical relaxation data (checked here).\n",
           "| instance | lower_s | from | upper_s | from | width_pct | time_s |", "|---|---|---|---|---|---|---|"]
    table = []
    for name in sorted(set(rows) | set(same)):
        own = rows.get(name, [])
        lows = [r for r in own + (rows.get(same[name], []) if name in same else []) if r["lower_s"]]
        ups = [r for r in own if r["upper_s"]]
        if not lows or not ups:
            continue
        lo = max(lows, key=lambda r: (float(r["lower_s"]), -float(r["lower_time_s"])))   # equal: the quicker
        up = min(ups, key=lambda r: (float(r["upper_s"]), float(r["upper_time_s"])))
        L, U = float(lo["lower_s"]), float(up["upper_s"])
        src = lo["file"] + ("" if lo["instance"] == name else f" ({lo['instance']})")
        out.append(f"| {name} | {L:.6g} | {src} | {U:.6g} | {up['file']} | {100 * (U - L) / U:.2f} | "
                   f"{float(lo['lower_time_s']) + float(up['upper_time_s']):.0f} |")
        costs = [float(r["cost_lower_usd"]) for r in lows if r.get("cost_lower_usd")]
        table.append({"instance": name, "lower_s": L, "cost_lower_usd": max(costs) if costs else None, "upper_s": U,
                      "width_pct": 100 * (U - L) / U, "lower_from": src, "upper_from": up["file"],
                      "time_s": float(lo["lower_time_s"]) + float(up["upper_time_s"])})
    if table:        # the columns bench --brackets reads (bace_opt.bench.bounds.BRACKET_COLUMNS)
        atomic_write(RESULTS / f"schedule_brackets_{args.tag}.csv", csv_text(list(table[0]), table))
    atomic_write(RESULTS / f"schedule_brackets_{args.tag}.md", "\n".join(out) + "\n")
    print("\n".join(out))
    return 0


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.5g}"
    return str(v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=TARGET_S)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="only the shipped instance (smoke run)")
    ap.add_argument("--brackets", action="store_true", help="certified P2 brackets (mean JCT and cost)")
    ap.add_argument("--family", choices=("paper8", "paper24", "paper72"), default="paper8",
                    help="--brackets: the paper 8-job files, or the paper builder at 24 or 72 jobs")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--arrivals", default="zero,poisson", help="--brackets paper24/72: zero (batch), poisson")
    ap.add_argument("--bandwidth", default="nominal,measured", help="--brackets paper24/72: nominal, measured")
    ap.add_argument("--tag", default="", help="--brackets: suffix of the results files (a partial grid)")
    ap.add_argument("--skip-policies", default="", help="--brackets: registered policies not simulated (comma list)")
    ap.add_argument("--budget", type=float, default=600.0, help="--brackets: seconds per instance (default 600)")
    ap.add_argument("--combine", nargs="+", metavar="FILE.csv",
                    help="compose brackets from these --brackets runs (per instance the best of each end)")
    args = ap.parse_args(argv)
    if args.combine:
        return combine_main(args)
    if args.brackets:
        return brackets_main(args)
    opts = SolveOptions(time_limit_s=args.time_limit, threads=args.threads)
    RESULTS.mkdir(parents=True, exist_ok=True)
    rows = []
    insts = instances()
    if args.quick:
        insts = {"small-4r-6j": insts["small-4r-6j"]}
    print(f"# P2 benchmark: time limit {args.time_limit:g} s, {args.threads} thread(s), load {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")
    for name, inst in insts.items():
        # 1. CP-SAT at 1 s resolution: mu = 0 (mean JCT) and mu = m (JCT and cost of comparable weight)
        s0, r0 = run(inst, name, "cpsat", 0.0, opts, time_resolution_s=1.0)
        rows.append(r0); print(fmt(r0), flush=True)
        c0 = r0["total_cost_usd"] or 0.0
        mu_m = (r0["avg_jct_s"] / c0) if c0 > 0 and r0["avg_jct_s"] else 1.0
        _, r1 = run(inst, name, "cpsat", mu_m, opts, time_resolution_s=1.0 if not _hourly(inst) else None)
        rows.append(r1); print(fmt(r1), flush=True)
        # 2. the same slotted problem, both back ends (slot: the MILP default, at least SLOT_MIN_S[name])
        for mu in (0.0, mu_m):
            sh, rh = run(inst, name, "highs", mu, opts, slot_s=_slot(inst, mu, name))
            rows.append(rh); print(fmt(rh), flush=True)
            _, rc = run(inst, name, "cpsat", mu, opts, time_resolution_s=rh["time_unit_s"])
            rows.append(rc); print(fmt(rc), flush=True)
            if rh["status"] == "error":
                print("  HiGHS:", sh.solver.message)
            if rh["status"] == rc["status"] == "optimal":
                d = abs(rh["objective"] - rc["objective"]) / abs(rc["objective"])
                print(f"  same slots ({rh['time_unit_s']:g} s): HiGHS {rh['objective']:.9g} vs CP-SAT {rc['objective']:.9g}"
                      f" (rel diff {d:.1e}); slotted optimum vs 1 s CP-SAT: "
                      f"{(rc['objective'] - (r0 if mu == 0 else r1)['objective']):+.4f} s")
    _write_csv(RESULTS / "schedule_runs.csv", rows)

    # 3. Pareto front (weighted sum, default mus) on the shipped instance, CP-SAT at 1 s
    inst = insts["small-4r-6j"]
    t = time.perf_counter()
    df = pareto_front(inst, "cpsat", options=opts, time_resolution_s=1.0)
    print(f"\n# Pareto front small-4r-6j (CP-SAT, 1 s, {time.perf_counter() - t:.1f} s)")
    print(df.to_string(index=False))
    df.insert(0, "instance", "small-4r-6j")
    atomic_write(RESULTS / "schedule_pareto.csv", df.to_csv(index=False))
    _write_md(rows, df, args)


#: the rand instance has 2159 candidates: at the default slot (10 s) its MILP has ~40 M nonzeros (over the
#: 5 M guard), so it is compared at 60 s slots (and at the default 600 s when hourly prices set the horizon)
SLOT_MIN_S = {"small-4r-6j": 0.0, "rand-4r-6j-s2-hourly": 60.0}


def _slot(inst, mu, name):
    from bace_opt.exact.schedule import _default_delta, _series_end_s
    from bace_opt.exact.p2.candidates import enumerate_candidates
    timed = mu > 0 and _series_end_s(inst) > 0
    return max(_default_delta(inst, enumerate_candidates(inst), timed, 200), SLOT_MIN_S[name])


def _hourly(inst):
    return any(r.price_series is not None for r in inst.regions)


def _write_csv(path, rows):
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    atomic_write(path, csv_text(keys, rows))


def _write_md(rows, df, args):
    commit = git_commit()
    lines = [f"# P2 benchmark (bench_schedule.py, commit {commit}, {platform.machine()}, {os.cpu_count()} cores "
             f"shared, time limit {args.time_limit:g} s, {args.threads} thread(s))", "",
             "| instance | solver | mu (s/USD) | unit (s) | status | objective (s) | gap | build s | solve s | nodes | "
             "candidates kept/enumerated | target |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        g = "-" if r["gap"] is None else f"{r['gap']:.1e}"
        o = "-" if r["objective"] is None else f"{r['objective']:.4f}"
        lines.append(f"| {r['instance']} | {r['solver']} | {r['mu_s_per_usd']:.4g} | {r['time_unit_s']:g} | "
                     f"{r['status']} | {o} | {g} | {r['build_s']:.2f} | {r['solve_s']:.2f} | {r['nodes']} | "
                     f"{r['candidates']}/{r['candidates_enumerated']} | {r.get('target', '')} |")
    lines += ["", "Pareto front, small-4r-6j (CP-SAT, 1 s): `schedule_pareto.csv`", "",
              df.drop(columns=["instance"]).to_markdown(index=False) if _has_tabulate() else df.to_string(index=False)]
    atomic_write(RESULTS / "schedule.md", "\n".join(lines) + "\n")


def _has_tabulate():
    try:
        import tabulate  # noqa: F401
        return True
    except ImportError:
        return False


if __name__ == "__main__":
    main()
