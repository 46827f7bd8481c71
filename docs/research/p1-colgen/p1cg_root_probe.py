"""Issue 37, step 3: the root bound of P1's Dantzig-Wolfe master (``bace_opt.exact.p1.cg``) against the walk
model's root LP and the known optimum, per family.

    PYTHONPATH=. python docs/research/p1-colgen/p1cg_root_probe.py FAMILY [--seeds 1,2,3] [--time-limit S]
        [--variants plain,pack] [--no-root] [--out results/root.jsonl]

FAMILY: paper (instances/paper-6r-8j-seed*), realistic (8 x 16, ``benchmarks.common.realistic``), random-large
(12 x 32, ``benchmarks.common.RANDOM_LARGE``), binding (the gap suite's binding size: random 6r-8j with links
x0.05, and instances/paper-6r-8j-seed1-measured.json), fleet12 (``generate realistic`` on the first 12 regions of
the fleet20 preset, 30 jobs, A100/H100, ``--fill-missing rtt``), fleet20 (instances/realistic-20r-50j-seed*).
Per instance: level 1 (max jobs started; the bounds are of -count) and level 2 (min cost at t0 with level 1 fixed
at its optimum z1): the column-generation bound (certified: the Lagrangian bound, equal to the master's LP optimum
when it converged), the walk root LP (``placement_milp.lp_relaxation_bound``), the optimum where known.  One HiGHS
thread everywhere; the 1-minute load before and after each instance is printed.  One JSON line per instance.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bace_opt.exact.p1.cg.engine import Pricers, column_generation, lp_support, start_solutions
from bace_opt.exact.p1.data import PlacementData, count_upper_bound
from bace_opt.instance import load_instance

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent

#: level-2 optima (cost at t0, USD) and where they were proven; fleet20: (lower, upper) = HiGHS's proven dual bound
#: and its incumbent after 600 s (docs/research/highs-1.16/log.md), no optimum known
KNOWN = {
    "paper-6r-8j-seed1": 146.308256, "paper-6r-8j-seed2": 25.7721214, "paper-6r-8j-seed3": 14.0023622,
    "realistic-8r-16j-mixed-seed1": 62.2589536, "realistic-8r-16j-mixed-seed2": 16.7038947,
    "realistic-8r-16j-mixed-seed3": 55.9579029, "random-12r-32j-seed1": 0.852231659,
    "random-6r-8j-bw0.05-seed1": 0.152161, "random-6r-8j-bw0.05-seed2": 0.119168,
    "random-6r-8j-bw0.05-seed3": 0.271004, "paper-6r-8j-seed1-measured": 146.304243,
    "realistic-20r-50j-seed1": (45.61, 46.21), "realistic-20r-50j-seed2": (49.64, 150.96),
    "realistic-20r-50j-seed3": (30.71, 101.96),
}
FLEET12 = 12


def instances(family: str, seeds):
    if family == "paper":
        return [(load_instance(ROOT / f"instances/paper-6r-8j-seed{s}.json"), f"paper-6r-8j-seed{s}") for s in seeds]
    if family == "realistic":
        from benchmarks.common import realistic
        return [(realistic(s), f"realistic-8r-16j-mixed-seed{s}") for s in seeds]
    if family == "random-large":
        from bace_opt.builders.synthetic import random_instance
        from benchmarks.common import RANDOM_LARGE
        return [(random_instance(seed=s, **RANDOM_LARGE["12r-32j"]), f"random-12r-32j-seed{s}") for s in seeds]
    if family == "binding":
        from bace_opt.builders.synthetic import random_instance
        from bace_opt.builders.transforms import scale_bandwidth
        out = [(scale_bandwidth(random_instance(seed=s, n_regions=6, n_jobs=8, max_gpus_per_region=16,
                                                max_stages=8), 0.05), f"random-6r-8j-bw0.05-seed{s}") for s in seeds]
        return out + [(load_instance(ROOT / "instances/paper-6r-8j-seed1-measured.json"), "paper-6r-8j-seed1-measured")]
    if family == "fleet12":
        from bace_opt.builders.realistic import FLEET20, realistic_instance
        return [(realistic_instance(None, FLEET20[:FLEET12], seed=s, jobs=30, gpu_mix=("A100-80GB", "H100-80GB"),
                                    fill_missing="rtt", name=f"realistic-12r-30j-seed{s}"),
                 f"realistic-12r-30j-seed{s}") for s in seeds]
    if family == "fleet20":
        return [(load_instance(ROOT / f"instances/realistic-20r-50j-seed{s}.json"), f"realistic-20r-50j-seed{s}")
                for s in seeds]
    raise SystemExit(f"unknown family {family!r}")


def load() -> float:
    return os.getloadavg()[0]


def level1_optimum(inst, data, tl):
    """z1: the GPU-count bound when a start reaches it, else the exact level 1 (walk model, HiGHS)."""
    ub = count_upper_bound(data)
    from bace_opt.exact.p1.solution import greedy_start, price_pack_start
    for plans in (price_pack_start(data) or [], greedy_start(data)):
        if len(plans) >= ub:
            return ub, "count bound"
    from bace_opt.exact.placement import solve_placement
    from bace_opt.solvers.base import SolveOptions
    res = solve_placement(inst, levels=1, options=SolveOptions(time_limit_s=tl, threads=1))
    return len(res.plans), f"walk level 1 ({res.solver_info.status})"


def root_lp(data, level, z1):
    from bace_opt.exact.p1.milp import lp_relaxation_bound
    t = time.perf_counter()
    v = lp_relaxation_bound(data, level, {1: z1} if level == 2 else None, formulation="walk")
    return v, time.perf_counter() - t


def cg_fields(r) -> dict:
    return {"bound": r.bound, "rmp": r.rmp, "converged": r.converged, "iterations": r.iterations,
            "exact_rounds": r.exact_rounds, "columns": r.columns, "seconds": round(r.seconds, 2),
            "artificial": r.artificial}


def probe(inst, label, args) -> dict:
    row = {"instance": label, "load_before": load(), "started_utc": time.strftime("%H:%M:%S", time.gmtime())}
    data = PlacementData(inst)
    t = time.perf_counter()
    starts = start_solutions(data)
    seeds = [c for sol in starts for c in sol]
    row["seed_s"] = round(time.perf_counter() - t, 2)
    z1, how = level1_optimum(inst, data, args.time_limit)
    row.update(z1=z1, z1_from=how, jobs=len(data.jobs), regions=len(inst.regions))
    pricers = Pricers(data)
    r1 = column_generation(data, 1, seeds=seeds, pricers=pricers, time_limit=args.time_limit)
    row["cg_l1"] = cg_fields(r1)
    plain = None
    for v in args.variants.split(","):
        cpu = time.process_time()
        more, support = [], []
        if v == "pack" and plain is not None:     # start from the plain master's columns and LP optimum
            more, support = plain.master.columns, lp_support(plain.master)
        r2 = column_generation(data, 2, z1, seeds=seeds + r1.master.columns + more, support=support, starts=starts,
                               pricers=pricers, time_limit=args.time_limit, pack=(v == "pack"))
        if v == "plain":
            plain = r2
        row[f"cg_l2_{v}"] = cg_fields(r2)
        row[f"cg_l2_{v}"]["cpu_s"] = round(time.process_time() - cpu, 2)
        t = time.perf_counter()
        row[f"cg_l2_{v}"]["rmp_mip"] = r2.master.integer_value(60.0)      # an incumbent from the columns
        row[f"cg_l2_{v}"]["rmp_mip_s"] = round(time.perf_counter() - t, 2)
        print(label, v, cg_fields(r2), flush=True)
    row["exact_build_s"] = round(pricers.build_s, 2)
    if not args.no_root:
        row["root_l1"], row["root_l1_s"] = root_lp(data, 1, z1)
        row["root_l2"], row["root_l2_s"] = root_lp(data, 2, z1)
    row["known_l2"] = KNOWN.get(label)
    row["load_after"] = load()
    return row


def _gap(bound, opt):
    if bound is None or opt is None or bound < -1e300:
        return "-"
    ref = opt[0] if isinstance(opt, (list, tuple)) else opt
    return f"{100 * (ref - bound) / abs(ref):.3f}"


def _cg(r: dict) -> str:
    """A level-2 CG figure: the converged master's LP value, or 'LB x, RMP y' (certified bound, restricted master)."""
    if not r:
        return "-"
    if r["converged"]:
        return f"{r['bound']:.6f}"
    lb = "none" if r["bound"] in (None, float("-inf")) or r["bound"] < -1e300 else f"{r['bound']:.4f}"
    return f"LB {lb}, RMP {r['rmp']:.4f}"


def table(path: Path) -> str:
    """The markdown table of a results file (the last row per instance)."""
    rows = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        rows[r["instance"]] = r
    head = ("| instance | z1 | L1 CG / root (max count) | L2 root LP | L2 CG plain | L2 CG pack | optimum | "
            "gap % root / plain / pack | CG s (CPU s) plain / pack | it / exact / cols plain | it / exact / cols pack | "
            "root s | load |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows.values():
        p, k = r.get("cg_l2_plain", {}), r.get("cg_l2_pack", {})
        opt = r.get("known_l2")
        root = r.get("root_l2")
        opts = "-" if opt is None else (f"[{opt[0]}, {opt[1]}]" if isinstance(opt, list) else f"{opt:.6f}")
        out.append("| " + " | ".join([
            r["instance"], str(r["z1"]),
            f"{-r['cg_l1']['bound']:.4f} / " + ("-" if r.get("root_l1") is None else f"{-r['root_l1']:.4f}"),
            "-" if root is None else f"{root:.6f}",
            _cg(p), _cg(k),
            opts, f"{_gap(root, opt)} / {_gap(p.get('bound'), opt)} / {_gap(k.get('bound'), opt)}",
            f"{p.get('seconds', '-')} ({p.get('cpu_s', '-')}) / {k.get('seconds', '-')} ({k.get('cpu_s', '-')})",
            f"{p.get('iterations', '-')} / {p.get('exact_rounds', '-')} / {p.get('columns', '-')}",
            f"{k.get('iterations', '-')} / {k.get('exact_rounds', '-')} / {k.get('columns', '-')}",
            "-" if r.get("root_l2_s") is None else f"{r['root_l2_s']:.1f}",
            f"{r['load_before']:.1f}-{r['load_after']:.1f}"]) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("family", help="a family, or 'table' to print the results file as markdown")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--variants", default="plain,pack")
    ap.add_argument("--no-root", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "root.jsonl"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.family == "table":
        print(table(out))
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    for inst, label in instances(args.family, [int(s) for s in args.seeds.split(",")]):
        row = probe(inst, label, args)
        print(json.dumps(row), flush=True)
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
