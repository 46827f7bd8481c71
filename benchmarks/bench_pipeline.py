"""Pipeline schedules under cross-region latency and bandwidth: GPipe, 1F1B, the greedy, the CP-SAT optimum.

The sweep of CrossPipe's Sec. 7.1 (2 DCs): T_lat/T_F and T_bw/T_F in {0, 0.5, 1, 2}, for 4 stages x 8
micro-batches (M8: PP4, GBS 8) and 8 stages x 16 micro-batches (M70: PP8, GBS 16), stages split evenly over
2 regions (one cross-region hop, in the middle).  T_F = 1 s, T_B = 2 s (our reading, forward_fraction 1/3);
every schedule except GPipe keeps 1F1B's memory (S - k in flight on 0-based stage k), as CrossPipe's CrossUD
does; GPipe holds all m micro-batches.  The 8-stage configuration also runs CrossPipe's Table 5 delay points
(0.25, 0.25), (0.25, 2) and (2, 0.25).

Columns (iteration time in units of T_F):
    gpipe, 1f1b            static schedules, unified backward block B
    greedy                 the greedy, unified B (same model and memory as 1f1b)
    greedy_split           the greedy with B split into D and W (CrossPipe's CrossUDSub, n_sub = 1)
    optimal, optimal_split CP-SAT optimum, unified / split (CrossPipe's CrossUD); status and gap reported
Reductions are against 1f1b (unified), the static schedule CrossPipe compares against.

Also: the greedy's wall time on 32 stages x 128 micro-batches (target < 1 s).
Run:  python -m benchmarks.bench_pipeline [--time-limit S] [--quick]
Writes benchmarks/results/pipeline.csv and pipeline.md.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import ortools

from bace_opt.files import atomic_write, csv_text
from bace_opt.pipeline import PipelineModel, PipelineOptions, check_ops, schedule_model
from bace_opt.pipeline.schedules import greedy, makespan, onefoneb
from benchmarks.common import RESULTS, git_commit

RATIOS = (0.0, 0.5, 1.0, 2.0)
TABLE5_POINTS = ((0.25, 0.25), (0.25, 2.0), (2.0, 0.25))
# CrossPipe Table 5, case 1 (M70, 2 DCs, GBS 16, memory as 1F1B): runtime per micro-batch (s)
CROSSPIPE_TABLE5 = {(0.0, 0.0): (0.151, 0.137, 0.137), (0.25, 0.25): (0.168, 0.149, 0.142),
                    (0.25, 2.0): (0.241, 0.181, 0.177), (2.0, 0.25): (0.242, 0.160, 0.153),
                    (2.0, 2.0): (0.321, 0.198, 0.196)}   # (1F1B, CrossUDSub, CrossUD)


def model(S, m, lat, bw, split):
    return PipelineModel.uniform(S, m, 1.0, 2.0, cross=[S // 2 - 1], latency_s=lat, transfer_s=bw, split=split)


def run_point(S, m, lat, bw, time_limit):
    row = {"stages": S, "microbatches": m, "lat_over_tf": lat, "bw_over_tf": bw}
    for col, kind, split in (("gpipe", "gpipe", False), ("1f1b", "1f1b", False), ("greedy", "greedy", False),
                             ("greedy_split", "greedy", True), ("optimal", "optimal", False),
                             ("optimal_split", "optimal", True)):
        mod = model(S, m, lat, bw, split)
        t0 = time.perf_counter()
        res = schedule_model(mod, kind, PipelineOptions(time_limit_s=time_limit, threads=1))
        wall = time.perf_counter() - t0
        bad = check_ops(mod, res.ops, res.memory_limit)
        if bad:
            raise SystemExit(f"{col} at {row}: invalid schedule: {bad[:3]}")
        row[col] = res.iteration_s
        if kind == "optimal":
            row[col + "_status"] = res.status
            row[col + "_bound"] = res.bound_s
            row[col + "_gap"] = res.gap
            row[col + "_wall_s"] = round(wall, 3)
            row[col + "_source"] = res.source
    base = row["1f1b"]
    for col in ("gpipe", "greedy", "greedy_split", "optimal", "optimal_split"):
        row[f"red_{col}_pct"] = round(100.0 * (base - row[col]) / base, 2)
    return row


def time_greedy(S=32, m=128, reps=3):
    out = {}
    for split in (False, True):
        mod = model(S, m, 1.0, 1.0, split)
        for name, fn in (("greedy", greedy), ("1f1b", onefoneb)):
            best = float("inf")
            for _ in range(reps):
                t0 = time.perf_counter()
                ops = fn(mod)
                best = min(best, time.perf_counter() - t0)
            out[(name, split)] = (best, makespan(ops), len(ops))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0, help="CP-SAT limit per solve (s, default 10)")
    ap.add_argument("--quick", action="store_true", help="only the 4-stage configuration")
    ap.add_argument("--out", default=str(RESULTS), help="results directory")
    args = ap.parse_args(argv)
    configs = [(4, 8)] + ([] if args.quick else [(8, 16)])
    rows = []
    t_all = time.perf_counter()
    for S, m in configs:
        points = [(l, b) for l in RATIOS for b in RATIOS]
        if S == 8:
            points += list(TABLE5_POINTS)
        for lat, bw in points:
            r = run_point(S, m, lat, bw, args.time_limit)
            rows.append(r)
            print(f"S={S:2d} m={m:2d} lat={lat:4.2f} bw={bw:4.2f} | gpipe {r['gpipe']:6.1f} 1f1b {r['1f1b']:6.1f} "
                  f"greedy {r['greedy']:6.1f} greedy_split {r['greedy_split']:6.1f} "
                  f"opt {r['optimal']:6.1f} ({r['optimal_status']}) opt_split {r['optimal_split']:6.1f} "
                  f"({r['optimal_split_status']}, {r['optimal_split_wall_s']:.1f}s) | vs 1f1b: "
                  f"greedy {r['red_greedy_pct']:5.1f}% greedy_split {r['red_greedy_split_pct']:5.1f}% "
                  f"opt_split {r['red_optimal_split_pct']:5.1f}%", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gantts = draw_examples(out)
    timing = time_greedy()
    for (name, split), (sec, ms, n) in timing.items():
        print(f"32 stages x 128 micro-batches, lat = bw = T_F: {name}{' split' if split else ''} "
              f"{sec * 1000:.1f} ms ({n} ops, iteration {ms:g} T_F)")
    sweep_s = time.perf_counter() - t_all

    keys = list(rows[0].keys())
    atomic_write(out / "pipeline.csv", csv_text(keys, rows))
    atomic_write(out / "pipeline.md", report(rows, timing, args, sweep_s, gantts))
    print(f"wrote {out / 'pipeline.csv'} and {out / 'pipeline.md'}")


def draw_examples(out):
    """Gantt charts of 1F1B and the split greedy, 4 stages x 8 micro-batches, latency = transfer = 2 T_F."""
    from bace_opt.pipeline.gantt import draw_gantt
    names = []
    for kind, split in (("1f1b", False), ("greedy", True)):
        mod = model(4, 8, 2.0, 2.0, split)
        res = schedule_model(mod, kind)
        name = f"pipeline_gantt_{kind}{'_split' if split else ''}.png"
        draw_gantt(mod, res.ops, out / name, title=f"{kind}{' (split backward)' if split else ''}: 4 stages x 8 "
                   f"micro-batches, latency = transfer = 2 T_F, iteration {res.iteration_s:g} T_F")
        names.append(name)
    return names


def report(rows, timing, args, sweep_s, gantts=()):
    L = ["# Pipeline schedules under cross-region latency and bandwidth", "",
         f"`python -m benchmarks.bench_pipeline{' --quick' if args.quick else ''} --time-limit {args.time_limit:g}`"
         f" at commit {git_commit()}; Python {platform.python_version()}, OR-Tools {ortools.__version__}, "
         f"CP-SAT 1 worker; whole run {sweep_s:.0f} s.", "",
         "Model: 2 regions, stages split evenly, one hop in the middle; T_F = 1, T_B = 2 (times below in T_F); "
         "memory as 1F1B (S - k in flight) for every column but GPipe (m in flight). `greedy`/`optimal`: unified "
         "backward block; `*_split`: backward split into D and W halves (CrossPipe's CrossUDSub / CrossUD). "
         "Reductions are against 1F1B (unified).", "",
         f"CP-SAT runs stop at {args.time_limit:g} s on a shared 2-core machine: a column `optimal` entry is a "
         "proven optimum only where the last column says `optimal`; elsewhere it is the best schedule found, "
         "with its gap to the proven bound, and it can differ from run to run. Every other figure is "
         "deterministic. Every schedule passed `check_ops` (dependencies, no overlap on stages and link "
         "directions, memory).", ""]
    for S in sorted({r["stages"] for r in rows}):
        rs = [r for r in rows if r["stages"] == S]
        m = rs[0]["microbatches"]
        L += [f"## {S} stages x {m} micro-batches", "",
              "| lat/T_F | bw/T_F | GPipe | 1F1B | greedy | greedy split | optimal | optimal split | "
              "greedy vs 1F1B | greedy split vs 1F1B | optimal split vs 1F1B | CP-SAT (unified / split) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            cp = f"{r['optimal_status']} / {r['optimal_split_status']}"
            if r["optimal_split_gap"] not in (None, 0.0):
                cp += f" gap {100 * r['optimal_split_gap']:.1f}%"
            L.append(f"| {r['lat_over_tf']:g} | {r['bw_over_tf']:g} | {r['gpipe']:g} | {r['1f1b']:g} | "
                     f"{r['greedy']:g} | {r['greedy_split']:g} | {r['optimal']:g} | {r['optimal_split']:g} | "
                     f"{r['red_greedy_pct']:.1f}% | {r['red_greedy_split_pct']:.1f}% | "
                     f"{r['red_optimal_split_pct']:.1f}% | {cp} |")
        L.append("")
        same = [r for r in rs]
        better = sum(r["greedy"] < r["1f1b"] - 1e-9 for r in same)
        equal = sum(abs(r["greedy"] - r["1f1b"]) <= 1e-9 for r in same)
        worse = sum(r["greedy"] > r["1f1b"] + 1e-9 for r in same)
        opt_eq = sum(abs(r["greedy"] - r["optimal"]) <= 1e-9 for r in same if r["optimal_status"] == "optimal")
        opt_eq_s = sum(abs(r["greedy_split"] - r["optimal_split"]) <= 1e-9 for r in same
                       if r["optimal_split_status"] == "optimal")
        n_opt = sum(r["optimal_status"] == "optimal" for r in same)
        n_opt_s = sum(r["optimal_split_status"] == "optimal" for r in same)
        L += [f"Greedy vs 1F1B (same model, same memory): better in {better}, equal in {equal}, worse in {worse} "
              f"of {len(same)} points. Greedy equals the proven optimum in {opt_eq} of {n_opt} points (unified) "
              f"and {opt_eq_s} of {n_opt_s} (split). Largest reduction vs 1F1B: greedy "
              f"{max(r['red_greedy_pct'] for r in same):.1f}%, greedy split "
              f"{max(r['red_greedy_split_pct'] for r in same):.1f}%, optimal split "
              f"{max(r['red_optimal_split_pct'] for r in same):.1f}%.", ""]
        ties = [f"({r['lat_over_tf']:g}, {r['bw_over_tf']:g})" for r in same if abs(r["greedy"] - r["1f1b"]) <= 1e-9]
        miss = [f"({r['lat_over_tf']:g}, {r['bw_over_tf']:g}): {r['greedy']:g} vs {r['optimal']:g}" for r in same
                if r["greedy"] > r["optimal"] + 1e-9]
        miss_s = [f"({r['lat_over_tf']:g}, {r['bw_over_tf']:g}): {r['greedy_split']:g} vs {r['optimal_split']:g}"
                  for r in same if r["greedy_split"] > r["optimal_split"] + 1e-9]
        L += [f"Greedy no better than 1F1B at (lat, bw)/T_F = {', '.join(ties) or 'none'}: with no or small "
              "delays 1F1B's order is already tight. Greedy above the best CP-SAT schedule (unified): "
              f"{'; '.join(miss) or 'nowhere'}; (split): {'; '.join(miss_s) or 'nowhere'}.", ""]
    L += ["## Beside CrossPipe's reported figures", "",
          "CrossPipe (ATC'25) Sec. 7.1, measured on 2 DCs: runtime down by up to **33.6%** against the original "
          "static schedules and 21.9% against their `_O` variants (M70, T_bw/T_F = 2). Table 5, case 1 (M70, PP8, "
          "GBS 16, memory as 1F1B), runtime per micro-batch, and our 8-stage x 16 simulation at the same delay "
          "points:", "",
          "| (lat, bw)/T_F | CrossPipe 1F1B | CrossUDSub | CrossUD | CrossUDSub vs 1F1B | CrossUD vs 1F1B | "
          "ours: greedy split vs 1F1B | ours: optimal split vs 1F1B |", "|---|---|---|---|---|---|---|---|"]
    by = {(r["lat_over_tf"], r["bw_over_tf"]): r for r in rows if r["stages"] == 8}
    for pt, (o, us, ud) in CROSSPIPE_TABLE5.items():
        r = by.get(pt)
        ours = (f"{r['red_greedy_split_pct']:.1f}% | {r['red_optimal_split_pct']:.1f}%" if r else "- | -")
        L.append(f"| {pt} | {o} | {us} | {ud} | {100 * (o - us) / o:.1f}% | {100 * (o - ud) / o:.1f}% | {ours} |")
    L += ["", "Their numbers are measured on GH200 nodes (real kernels, communication overheads, n_sub = 4 "
          "sub-blocks, zero-bubble W deferral with their memory model); ours come from the block model alone "
          "(whole blocks, memory counted in micro-batches until W ends), so the two agree in trend, not to the "
          "digit.", "",
          "## Greedy speed (32 stages x 128 micro-batches, one hop, latency = transfer = T_F)", "",
          "| schedule | backward | wall time (best of 3) | ops | iteration (T_F) |", "|---|---|---|---|---|"]
    for (name, split), (sec, ms, n) in timing.items():
        L.append(f"| {name} | {'split' if split else 'unified'} | {sec * 1000:.1f} ms | {n} | {ms:g} |")
    L.append("")
    if gantts:
        L += ["## Example schedules (4 stages x 8, latency = transfer = 2 T_F)", ""]
        L += [f"![{g}]({g})" for g in gantts]
        L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
