"""Benchmark of the P1 placement models: per instance and back end, build time, solve time, root (LP
relaxation) gap, final gap, nodes, and whether the targets are met.

    python -m benchmarks.bench_placement            # full run (about 15-25 min on 2 cores)
    python -m benchmarks.bench_placement --quick    # small instances only

Instances: instances/paper-6r-8j-seed{1,2,3}.json and instances/paper-6r-24j-seed1.json when present (else built
with bace_opt.builders.paper), plus "small" = the first 4 jobs of paper seed 1.  Targets (issue 3): the paper
instances (6 regions x 8 jobs) proven optimal by HiGHS in < 60 s; 24 jobs in < 300 s.  A missed target prints by
how much.  Root gap = (level-2 optimum - LP relaxation of the level-2 model with level 1 fixed) / optimum.
Writes benchmarks/results/bench_placement.csv and .md.

    python -m benchmarks.bench_placement --realistic [--variants highs:walk,highs:position]

(variants highs:walk0 = the walk model without P1.46-P1.50 and highs:walkp1 = without the price-pack start
and the level-3 cutoff P1.51, for before / after figures in one run; see WALK_VARIANTS; a suffix #N runs the
variant with random seed N, e.g. highs:walk#2, to see how much of a difference is the search's luck)

Realistic suite (issue 11): ``generate realistic`` with 8 AWS regions (28 measured links), mixed A100/H100
(--gpu-types A100-80GB,H100-80GB), hourly prices, 16 jobs, seeds 1-3, built in-process from the shipped tables.
Each variant (back end:formulation; "race" for the racing portfolio) solves every instance in the same run;
the rows give per level the build time, solve time, nodes and the root bound (LP relaxation of level 2
with level 1 fixed, per formulation), and the run checks that every variant that proves an instance agrees
on all three level optima (rel 1e-6).  Target: HiGHS proves each instance in < 60 s on 2 cores.  Writes
benchmarks/results/bench_placement_realistic.csv and .md.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from bace_opt.evaluate import evaluate
from bace_opt.exact import solve
from bace_opt.exact.placement import PlacementData, lp_relaxation_bound
from bace_opt.files import atomic_write, csv_text
from bace_opt.instance import load_instance
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions
from benchmarks.common import RANDOM_LARGE, RESULTS, ROOT, git_commit, load_1min, realistic

TARGET_S = {"paper-8j": 60.0, "paper-24j": 300.0}
#: issue 27's targets on highspy 1.16 (issue 11's, on 1.12, were 60 s and 600 s)
REALISTIC_TARGET_S = 30.0
RANDOM_LARGE_TARGET_S = 300.0
#: the 20-region, 50-job fleet (instances/realistic-20r-50j-seed*.json): proven within 600 s, or a gap of at most
#: 0.5 % against the proven bound
FLEET_TARGET_S, FLEET_TARGET_GAP = 600.0, 0.005


def realistic_main(args) -> int:
    """Old and new P1 formulations (and the race) side by side on the realistic instances, one run."""
    variants = [parse_variant(v) for v in args.variants.split(",") if v.strip()]
    rows, commit = [], git_commit()
    seeds = [int(x) for x in args.seeds.split(",")]
    for seed in seeds:
        for inst, label in family_instances(args.family, seed):
            _realistic_instance(args, variants, inst, label, rows, commit)
    _realistic_write(args, rows, commit)
    return 0


def _version(pkg: str) -> str:
    from importlib.metadata import version
    return version(pkg)


def parse_variant(text: str) -> tuple[str, str, int]:
    """``backend[:formulation][#seed]`` -> (backend, formulation, HiGHS/CP-SAT random seed); the seed (default 0,
    ``SolveOptions.seed``) changes the search, never the optimum (issue 11, fifth round: HiGHS seeds)."""
    body, sep, seed = text.strip().partition("#")
    if sep and not seed.isdigit():
        raise SystemExit(f"--variants: {text!r}: the part after '#' must be a seed (a non-negative integer)")
    parts = body.split(":")
    if not parts[0] or len(parts) > 2:
        raise SystemExit(f"--variants: {text!r}: expected backend[:formulation][#seed]")
    return parts[0], (parts[1] if len(parts) > 1 else "walk"), int(seed) if sep else 0


#: the walk model's families P1.46-P1.50 (models/placement.md section 9c), off in the "walk0" variant
WALK_CUTS = ("REGION_COVERS", "WHOLE_JOBS", "OPEN_TRAILS", "ORIENTED_TRAILS", "PAIR_CUTS", "PRICE_VAR")
#: walk variants = the walk model with some of the later changes off, for before / after figures in one run:
#: walk0 = before section 9c (no P1.46-P1.50, level-3 proof with heuristics, greedy start, level-2 row in the
#: level-3 proof); walkp1 = as after the second round (section 9c on, greedy start, level-2 row in the level-3
#: proof); walk = everything (section 9d: the price-pack start and the level-3 cutoff P1.51)
WALK_VARIANTS = ("walk", "walk0", "walkp1")


class _walk_cuts:
    """Context: the walk model as in variant ``form`` (``WALK_VARIANTS``); any other form leaves everything on."""

    def __init__(self, form):
        self.form = form if not isinstance(form, bool) else ("walk" if form else "walk0")

    def __enter__(self):
        from bace_opt.exact.p1 import milp as M
        from bace_opt.exact.p1 import solution as S
        from bace_opt.exact.p1 import walk as W
        self.saved = {k: getattr(W, k) for k in WALK_CUTS}
        self.l3 = M.LEVEL3_PROOF_HIGHS
        self.l3cut, self.start = M.LEVEL3_CUTOFF, S.COST_START
        on = self.form != "walk0"
        for k in WALK_CUTS:
            setattr(W, k, self.saved[k] and on)
        if not on:
            M.LEVEL3_PROOF_HIGHS = {}       # the level-3 proof with HiGHS's heuristics, as before
        if self.form in ("walk0", "walkp1"):
            M.LEVEL3_CUTOFF = False
            S.COST_START = False

    def __exit__(self, *exc):
        from bace_opt.exact.p1 import milp as M
        from bace_opt.exact.p1 import solution as S
        from bace_opt.exact.p1 import walk as W
        for k, v in self.saved.items():
            setattr(W, k, v)
        M.LEVEL3_PROOF_HIGHS = self.l3
        M.LEVEL3_CUTOFF, S.COST_START = self.l3cut, self.start
        return False


def family_instances(family: str, seed: int):
    """(instance, label) pairs of a --realistic family for one seed."""
    if family == "paper8":
        return [(paper(seed, 8), f"paper-6r-8j-seed{seed}")]
    if family == "random-large":
        from bace_opt.builders.synthetic import random_instance
        return [(random_instance(seed=seed, **RANDOM_LARGE[k]), f"random-{k}-seed{seed}") for k in RANDOM_LARGE]
    if family == "fleet20":
        p = ROOT / "instances" / f"realistic-20r-50j-seed{seed}.json"
        return [(load_instance(p), p.stem)]
    return [(realistic(seed), f"realistic-8r-16j-mixed-seed{seed}")]


def _realistic_instance(args, variants, inst, label, rows, commit) -> None:
    """Every variant on one instance (appends to ``rows``), then the level-2 root LP bound per formulation."""
    from bace_opt.exact.placement import solve_placement
    data = PlacementData(inst)
    for backend, form, seed in variants:
        tl = args.time_limit or (600.0 if form == "walk" or backend == "race" else 300.0)
        load0 = os.getloadavg()[0]
        cpu0 = time.process_time()
        t = time.perf_counter()
        kw = {} if backend in ("cpsat", "race") else {"formulation": "walk" if form in WALK_VARIANTS else form}
        if backend == "race":       # "race" shares proven levels; "race:noshare" races whole solves
            from bace_opt.exact.p1.race import race_placement
            res = race_placement(inst, options=SolveOptions(time_limit_s=tl, threads=args.threads, seed=seed),
                                 share_levels=(form != "noshare"))
        else:
            with _walk_cuts(form):
                res = solve_placement(inst, solver=backend, options=SolveOptions(time_limit_s=tl, threads=args.threads,
                                                                                 seed=seed),
                                      **kw)
        wall = time.perf_counter() - t
        cpu = time.process_time() - cpu0
        si = res.solver_info
        lv = {l["level"]: l for l in res.levels}
        lpb = (si.extra or {}).get("levels_proved_by") or {}
        row = dict(instance=label, backend=backend,
                   formulation=form if backend != "cpsat" and (backend != "race" or form == "noshare") else "-",
                   seed=seed,
                   levels_proved_by="/".join(f"{k}:{lpb[k]}" for k in sorted(lpb)),
                   status=si.status, wall_s=wall, cpu_s=cpu if backend != "race" else None, time_limit_s=tl,
                   proved_by=(si.extra or {}).get("proved_by", backend),
                   jobs_started=lv.get(1, {}).get("objective"),
                   cost_usd=lv.get(2, {}).get("objective"), cost_bound=lv.get(2, {}).get("bound"),
                   run_s=lv.get(3, {}).get("objective"), build_s=si.build_s,
                   level_build_s="/".join(f"{lv[k]['build_s'] or 0.0:.2f}" for k in sorted(lv)),
                   level_solve_s="/".join(f"{lv[k]['solve_s']:.1f}" for k in sorted(lv)),
                   level_nodes="/".join(str(lv[k]["nodes"]) for k in sorted(lv)),
                   level_status="/".join(lv[k]["status"] for k in sorted(lv)),
                   root_bound_l2=None, loadavg_start=round(load0, 2), loadavg_end=load_1min(),
                   commit=commit)
        rows.append(row)
        print(" ".join(f"{k}={_fmt(row[k])}" for k in ("instance", "backend", "formulation", "seed", "status", "wall_s",
                                                        "cpu_s", "cost_usd", "run_s", "level_build_s",
                                                        "level_solve_s", "level_nodes", "level_status",
                                                        "loadavg_start", "loadavg_end")),
              flush=True)
    # root bounds per formulation (level 2 LP relaxation, level 1 fixed at the proven count)
    z1 = next((r["jobs_started"] for r in rows if r["instance"] == label and r["level_status"].startswith("optimal")),
              None)       # level 1 proven
    if z1 is not None:
        for form in sorted({r["formulation"] for r in rows if r["instance"] == label
                            and r["backend"] != "race" and r["formulation"] != "-"}):
            tb = time.perf_counter()
            with _walk_cuts(form):
                lp = lp_relaxation_bound(data, level=2, fix={1: z1},
                                         formulation="walk" if form in WALK_VARIANTS else form)
            for r in rows:
                if r["instance"] == label and r["formulation"] == form:
                    r["root_bound_l2"] = lp
            print(f"  {label} {form}: level-2 LP bound {lp:.9g} ({time.perf_counter() - tb:.1f} s)", flush=True)


def _realistic_write(args, rows, commit) -> None:
    lines = _agreement(rows) + _realistic_targets(rows, args.family) + _race_lines(rows)
    for line in lines:
        print(line)
    out = RESULTS
    out.mkdir(exist_ok=True)
    name = {"realistic": "bench_placement_realistic", "random-large": "bench_placement_random_large",
            "fleet20": "bench_placement_fleet20"}.get(
        args.family, f"bench_placement_{args.family}_race")
    if args.out_suffix:
        name += "_" + args.out_suffix
    atomic_write(out / f"{name}.csv", csv_text(list(rows[0]), rows))
    cols = ["instance", "backend", "formulation", "seed", "status", "proved_by", "wall_s", "cpu_s", "jobs_started", "cost_usd",
            "run_s", "root_bound_l2", "build_s", "level_build_s", "level_solve_s", "level_nodes", "level_status",
            "loadavg_start", "loadavg_end"]
    what = {"realistic": "8 AWS regions, 28 measured links, mixed A100-80GB/H100-80GB, hourly prices, 16 jobs "
                         "(bench_placement.realistic)",
            "paper8": "the paper instances, 6 regions x 8 jobs",
            "random-large": "bace_opt.builders.synthetic.random_instance as the solvers suite's large size: "
                            + ", ".join(f"{k} {v}" for k, v in RANDOM_LARGE.items()),
            "fleet20": "instances/realistic-20r-50j-seed*.json: 20 regions across AWS, GCP and Azure, mixed GPU "
                       "types, measured links (estimates named in each instance's meta), hourly prices, 50 jobs"}[
        args.family]
    md = [f"# P1 {args.family} benchmark (commit {commit}, {os.cpu_count()} cores shared with other sessions, "
          f"threads={args.threads or 'all cores'}; highspy {_version('highspy')})\n",
          f"Instances: {what}.  Variants: walk = the new formulation with P1.41-P1.50 (models/placement.md sections "
          "9-9d), walk0 = the same without P1.46-P1.51 and the price-pack start (as before section 9c), walkp1 = without P1.51 and the price-pack start (as after section 9c), position = the old one.  level_* = levels 1/2/3 (jobs started, cost at t0, run time); a level "
          "proven by the GPU-count bound shows 0.0 s and None nodes.  root_bound_l2 = LP relaxation of level 2 "
          "with level 1 fixed.  loadavg = 1-minute load when the row started / ended (2 cores): timings scale "
          "with it; compare rows of one run.\n",
          "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(_fmt(r[c]) for c in cols) + " |" for r in rows]
    md += [""] + lines
    atomic_write(out / f"{name}.md", "\n".join(md) + "\n")
    print(f"wrote {out / (name + '.csv')} and .md")
    return 0


def _agreement(rows):
    lines = []
    for label in dict.fromkeys(r["instance"] for r in rows):
        opt = [r for r in rows if r["instance"] == label and r["status"] == "optimal"]
        if len(opt) == 1:       # the others must be consistent with it: bound <= optimum <= incumbent (level 2)
            ref = opt[0]
            z = ref["cost_usd"]
            bad = [r for r in rows if r["instance"] == label and r is not ref and r["jobs_started"] == ref["jobs_started"]
                   and r["cost_usd"] is not None and r["cost_bound"] is not None
                   and not (r["cost_bound"] <= z * (1 + 1e-6) and r["cost_usd"] >= z * (1 - 1e-6))]
            lines.append(f"AGREEMENT {label}: only {_label(ref)} proved it (cost {z:.9g}); "
                         + ("the others are consistent (their level-2 bound <= it <= their incumbent)" if not bad else
                            "INCONSISTENT: " + ", ".join(_label(r) for r in bad)))
            continue
        if len(opt) < 2:
            these = [r for r in rows if r["instance"] == label and r["cost_usd"] is not None]
            top = max((r["jobs_started"] for r in these), default=None)
            these = [r for r in these if r["jobs_started"] == top]
            lo = max((r["cost_bound"] for r in these if r["cost_bound"] is not None), default=None)
            hi = min((r["cost_usd"] for r in these), default=None)
            lines.append(f"AGREEMENT {label}: no variant proved it; over all variants the level-2 optimum is in "
                         f"[{lo:.9g}, {hi:.9g}] (gap {(hi - lo) / hi:.3%})" if lo is not None and hi else
                         f"AGREEMENT {label}: no variant proved it")
            continue
        ref = opt[0]
        bad = [r for r in opt[1:] if r["jobs_started"] != ref["jobs_started"]
               or abs(r["cost_usd"] - ref["cost_usd"]) > 1e-6 * abs(ref["cost_usd"])
               or abs(r["run_s"] - ref["run_s"]) > 1e-6 * abs(ref["run_s"])]
        who = ", ".join(_label(r) for r in opt)
        lines.append(f"AGREEMENT {label}: {'OK' if not bad else 'MISMATCH'} over {who} "
                     f"(jobs {ref['jobs_started']:g}, cost {ref['cost_usd']:.9g}, run {ref['run_s']:.9g})")
    return lines


def _label(r) -> str:
    """A row's variant as given to --variants: backend:formulation, with #seed when the seed is not 0."""
    return f"{r['backend']}:{r['formulation']}" + (f"#{r['seed']}" if r.get("seed") else "")


def _race_lines(rows):
    lines = []
    for r in rows:
        if r["backend"] != "race":
            continue
        alone = [x for x in rows if x["instance"] == r["instance"] and x["backend"] != "race" and x["status"] == "optimal"]
        if not alone:
            lines.append(f"RACE {r['instance']}: {r['status']} in {r['wall_s']:.1f} s; no member proved it alone")
            continue
        best = min(alone, key=lambda x: x["wall_s"])
        lines.append(f"RACE{'' if r['formulation'] == '-' else ':' + r['formulation']} {r['instance']}: {r['status']} "
                     f"by {r['proved_by']} (levels {r.get('levels_proved_by') or '-'}) in {r['wall_s']:.1f} s; fastest member "
                     f"alone {_label(best)} {best['wall_s']:.1f} s (difference "
                     f"{r['wall_s'] - best['wall_s']:+.1f} s, load {r['loadavg_start']}-{r['loadavg_end']})")
    return lines


def _level2_gap(r) -> float | None:
    """The cost level's relative gap against its proven bound (None without both)."""
    c, b = r.get("cost_usd"), r.get("cost_bound")
    if c is None or b is None or not c > 0:
        return None
    return max(c - b, 0.0) / c


def _realistic_targets(rows, family="realistic"):
    lines = []
    target = RANDOM_LARGE_TARGET_S if family == "random-large" else REALISTIC_TARGET_S
    for r in rows:
        if r["backend"] != "highs":
            continue
        ok = r["status"] == "optimal" and r["wall_s"] < target
        if family == "fleet20":
            target = FLEET_TARGET_S
            gap = _level2_gap(r)
            ok = (r["status"] == "optimal" and r["wall_s"] < target) or (gap is not None and gap <= FLEET_TARGET_GAP)
        lines.append(f"TARGET {'MET   ' if ok else 'MISSED'} {r['instance']} {_label(r)}: {r['status']} in "
                     f"{r['wall_s']:.1f} s, CPU {_fmt(r['cpu_s'])} s (target {target:.0f} s; load {r['loadavg_start']}-"
                     f"{r['loadavg_end']} on 2 cores)")
    return lines


def paper(seed: int, jobs: int):
    p = ROOT / "instances" / f"paper-6r-{jobs}j-seed{seed}.json"
    if p.exists():
        return load_instance(p)
    from bace_opt.builders.paper import paper_instance
    return paper_instance(seed=seed, jobs=jobs)


def instances(quick: bool):
    s1 = paper(1, 8)
    small = s1.replace(name=s1.name + "-first4", jobs=s1.jobs[:4])
    out = [("small-4j", small, None)]
    if not quick:
        out += [(f"paper-8j-seed{s}", paper(s, 8), "paper-8j") for s in (1, 2, 3)]
        out += [("paper-24j-seed1", paper(1, 24), "paper-24j")]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backends", default="highs,scip,mathopt-highs,cpsat")
    ap.add_argument("--time-limit", type=float, default=None, help="override every time limit (s)")
    ap.add_argument("--threads", type=int, default=None,
                    help="solver threads (default: every core, as bace-opt solve; a race shares them out)")
    ap.add_argument("--realistic", action="store_true", help="the issue-11 realistic suite (see the docstring)")
    ap.add_argument("--variants", default="highs:walk,highs:position",
                    help="realistic suite: comma-separated backend[:formulation][#seed] (formulation walk|position; "
                         "backend highs, scip, cpsat or race; #seed: the "
                         "back end's random seed, default 0)")
    ap.add_argument("--seeds", default="1,2,3", help="realistic suite: seeds (default 1,2,3)")
    ap.add_argument("--family", choices=["realistic", "paper8", "random-large", "fleet20"], default="realistic",
                    help="with --realistic: the issue-11 realistic instances, the paper 8-job instances (for the "
                         "race measured beside its members), or the random 10 x 24 and 12 x 32 instances (seed 1 "
                         "by default, 600 s target); results go to bench_placement_<family>*.md")
    ap.add_argument("--out-suffix", default="", help="appended to the result file names (keep several runs)")
    args = ap.parse_args(argv)
    if args.realistic:
        if args.family == "random-large" and args.seeds == "1,2,3":
            args.seeds = "1"
        return realistic_main(args)
    backends = [b for b in args.backends.split(",") if registry.available(b)]
    rows = []
    commit = git_commit()
    for label, inst, target in instances(args.quick):
        data = PlacementData(inst)
        for b in backends:
            if target == "paper-24j" and b != "highs":
                tl = 120.0          # cross-check back ends get a shorter budget on the big instance
            elif target is None:
                tl = 60.0
            else:
                tl = TARGET_S[target] * (2.0 if b == "highs" else 1.0)
            if args.time_limit:
                tl = args.time_limit
            t = time.perf_counter()
            s = solve(inst, solver=b, options=SolveOptions(time_limit_s=tl, threads=args.threads))
            wall = time.perf_counter() - t
            si = s.solver
            feasible = evaluate(inst, s).feasible if s.metrics["jobs_done"] else True
            lv = {l["level"]: l for l in (si.extra or {}).get("levels", [])}
            unproven = [f"level {k}" for k in sorted(lv) if lv[k]["status"] != "optimal"]
            row = dict(instance=label, jobs=len(inst.jobs), backend=b, status=si.status, time_limit_s=tl,
                       unproven=",".join(unproven) or "-", loadavg_1min=load_1min(),
                       jobs_started=lv.get(1, {}).get("objective"), cost_usd=si.objective, bound=si.bound,
                       final_gap=si.gap, build_s=si.build_s, solve_s=si.solve_s, wall_s=wall, nodes=si.nodes,
                       level_solve_s="/".join(f"{lv[k]['solve_s']:.1f}" for k in sorted(lv)),
                       evaluator_ok=feasible, objective_check=s.meta.get("objective_check_rel_diff"),
                       root_gap=None, target_s=TARGET_S.get(target), commit=commit,
                       python=platform.python_version())
            rows.append(row)
            _print_row(row)
        # root gap of the level-2 model (HiGHS LP relaxation, level 1 fixed at the best count found)
        best = [r for r in rows if r["instance"] == label and r["status"] == "optimal"]
        if best:
            z1, z2 = best[0]["jobs_started"], best[0]["cost_usd"]
            t = time.perf_counter()
            lp = lp_relaxation_bound(data, level=2, fix={1: z1})
            gap = None if lp is None else (z2 - lp) / abs(z2)
            for r in rows:
                if r["instance"] == label:
                    r["root_gap"] = gap
            print(f"  {label}: LP relaxation (level 2) {lp:.6g} vs optimum {z2:.6g}: root gap {gap:.4%} "
                  f"({time.perf_counter() - t:.1f} s)")
    _targets(rows)
    out = RESULTS
    out.mkdir(exist_ok=True)
    name = "bench_placement_quick" if args.quick else "bench_placement"
    atomic_write(out / f"{name}.csv", csv_text(list(rows[0]), rows))
    cols = ["instance", "backend", "status", "unproven", "jobs_started", "cost_usd", "final_gap", "root_gap",
            "build_s", "solve_s", "level_solve_s", "nodes", "evaluator_ok", "loadavg_1min"]
    atomic_write(out / f"{name}.md", "".join(
        [f"# P1 placement benchmark (commit {commit}, {os.cpu_count()} cores shared, threads={args.threads or 'all cores'}; highspy {_version('highspy')})\n\n"
         "final_gap = level-2 (cost) gap; status optimal = all three levels proven; unproven = levels "
         "stopped by the time limit; level_solve_s = solve time of levels 1/2/3; loadavg_1min = machine "
         "load when the row finished (timings on a shared machine scale with it).\n\n",
         "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"]
        + ["| " + " | ".join(_fmt(r[c]) for c in cols) + " |\n" for r in rows]
        + ["\n" + "\n".join(_target_lines(rows)) + "\n"]))
    print(f"wrote {out / (name + '.csv')} and .md")
    return 0


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _print_row(r):
    print(f"{r['instance']:18s} {r['backend']:14s} {r['status']:10s} started={_fmt(r['jobs_started'])} "
          f"cost={_fmt(r['cost_usd'])} gap={_fmt(r['final_gap'])} build={_fmt(r['build_s'])}s "
          f"solve={_fmt(r['solve_s'])}s (levels {r['level_solve_s']}) nodes={_fmt(r['nodes'])} "
          f"eval_ok={r['evaluator_ok']} obj_check={_fmt(r['objective_check'])}", flush=True)


def _target_lines(rows):
    lines = []
    for r in rows:
        if r["backend"] != "highs" or r["target_s"] is None:
            continue
        t = r["wall_s"]
        if r["status"] == "optimal" and t < r["target_s"]:
            lines.append(f"TARGET MET   {r['instance']}: HiGHS proved optimal in {t:.1f} s < {r['target_s']:.0f} s")
        elif r["status"] == "optimal":
            lines.append(f"TARGET MISSED {r['instance']}: HiGHS proved optimal in {t:.1f} s, "
                         f"{t - r['target_s']:.1f} s ({t / r['target_s'] - 1:.0%}) over {r['target_s']:.0f} s")
        else:
            lines.append(f"TARGET MISSED {r['instance']}: HiGHS status {r['status']} after {t:.1f} s "
                         f"(limit {r['time_limit_s']:.0f} s, target {r['target_s']:.0f} s), not proven: "
                         f"{r['unproven']}; level-2 (cost) gap {_fmt(r['final_gap'])}")
    return lines


def _targets(rows):
    for line in _target_lines(rows):
        print(line)


if __name__ == "__main__":
    sys.exit(main())
