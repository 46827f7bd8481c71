"""BACE-Pipe against the paper's baselines and its ablations on the paper instances (issue 4).

Instances: the paper family (``bace_opt.builders.paper.paper_instance``) for seeds 1-3: the base setup
(8 jobs) and the sensitivity variants of system-model.md (bandwidth x0.3 and x1.5, GPUs x0.5 and x1.25,
24 jobs).  Each is read from ``instances/<name>.json`` when that file exists (the shipped instances), and
built with the builder otherwise; the table says which.

Every policy runs in the simulator (queue mode, all jobs arriving at 0 as in the paper's batch); every
schedule is checked by the evaluator, and every figure below is the evaluator's.  Printed and written:

* per instance and policy: average JCT (h, over completed jobs), total electricity (USD), jobs completed,
  jobs never started (a policy whose rules can never place a job, e.g. a single-region baseline with a job
  larger than every region, leaves it ``unscheduled``), total head-of-line-blocked hours;
* BACE-Pipe's change against each baseline beside the paper's ranges (JCT -27.9..-64.7 %, cost
  -12.6..-30.6 %).  When both policies complete every job, the change compares the schedules' metrics.  When
  one leaves jobs unscheduled, the whole-schedule figures are not comparable (fewer jobs run); the change
  is then computed over the jobs both completed ("common jobs") and marked so;
* the ablation table: change of each ablation against full BACE-Pipe, beside the paper's
  (priority +41.9 % JCT / +5.0 % cost, pathfinder +52.5 % / +20.5 %, cost-min +4.6 % / +13.9 %).

Nothing is tuned toward the paper; see benchmarks/results/policies.md for what comes out and why it differs.

Run:  python -m benchmarks.bench_policies [--seeds 1 2 3] [--exact] [--no-write]
Writes benchmarks/results/policies.csv (one row per instance x policy) and policies.md.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import bace_opt as bo
from bace_opt.builders.paper import paper_instance
from bace_opt.files import atomic_write, csv_text
from bace_opt.policies import ABLATIONS, HEURISTICS
from benchmarks.common import RESULTS, ROOT, git_commit

BASELINES = ("lcf", "ldf", "cr-lcf", "cr-ldf")
VARIANTS = [  # (label, builder kwargs)
    ("base", {}),
    ("bw x0.3", {"bandwidth_scale": 0.3}),
    ("bw x1.5", {"bandwidth_scale": 1.5}),
    ("gpu x0.5", {"gpu_scale": 0.5}),
    ("gpu x1.25", {"gpu_scale": 1.25}),
    ("24 jobs", {"jobs": 24}),
    ("poisson 1h (ours)", {"arrivals": "poisson", "mean_interarrival_s": 3600.0}),
]
#: our options of BACE-Pipe (not the paper's rules), shown beside the default for reference
OPTION_RUNS = [("bace-pipe [prefer=price]", "bace-pipe", {"prefer": "price"}),
               ("bace-pipe [seeds=all]", "bace-pipe", {"seeds": "all"})]
PAPER_MAIN = {"jct": (-64.7, -27.9), "cost": (-30.6, -12.6)}
PAPER_ABLATION = {"bace-pipe-no-priority": (41.9, 5.0), "bace-pipe-no-pathfinder": (52.5, 20.5),
                  "bace-pipe-no-costmin": (4.6, 13.9)}


def load_or_build(seed: int, kw: dict) -> tuple[bo.Instance, str]:
    inst = paper_instance(seed=seed, **kw)
    f = ROOT / "instances" / f"{inst.name}.json"
    if f.exists():
        return bo.load_instance(f), f"instances/{f.name}"
    return inst, "builder"


def run_all(seeds, exact: bool, time_limit_s: float):
    policies = [(p, p, {}) for p in HEURISTICS + ABLATIONS] + OPTION_RUNS
    if exact:
        policies.append(("exact-p1", "exact-p1", {"time_limit_s": time_limit_s}))
    rows, scheds = [], {}
    for label, kw in VARIANTS:
        for seed in seeds:
            inst, src = load_or_build(seed, kw)
            for pol, pname, opts in policies:
                if pname == "exact-p1" and label != "base":
                    continue
                t = time.perf_counter()
                s = bo.simulate(inst, pname, **opts)
                wall = time.perf_counter() - t
                rep = bo.evaluate(inst, s)
                if not rep.feasible:
                    raise SystemExit(f"{pol} on {inst.name}: infeasible schedule: {rep.violations[:3]}")
                m = rep.metrics
                scheds[(label, seed, pol)] = rep
                for e in s.jobs:
                    _SCHED_BLOCKS[(id(rep), e.name)] = e.blocks
                    _SCHED_HOPS[(id(rep), e.name)] = e.hops
                rows.append({
                    "variant": label, "seed": seed, "instance": inst.name, "source": src, "policy": pol,
                    "jobs": len(inst.jobs), "jobs_done": m["jobs_done"], "jobs_unscheduled": m["jobs_unscheduled"],
                    "avg_jct_h": m["avg_jct_s"] / 3600 if m["avg_jct_s"] is not None else None,
                    "makespan_h": m["makespan_s"] / 3600 if m["makespan_s"] is not None else None,
                    "total_electricity_usd": m["total_electricity_usd"], "total_egress_usd": m["total_egress_usd"],
                    "avg_wait_h": m["avg_wait_s"] / 3600 if m["avg_wait_s"] is not None else None,
                    "hol_blocked_h": s.meta["total_hol_blocked_s"] / 3600,
                    "comm_bound_jobs": sum(1 for f in rep.figures.values() if f.comm_bound),
                    "wall_s": wall,
                    "time_limit_s": opts.get("time_limit_s"),
                    "solver_statuses": " ".join(f"{k}:{v}" for k, v in
                                                s.meta.get("policy_stats", {}).get("solver_statuses", {}).items()),
                })
    return rows, scheds


def change(a: bo.Report, b: bo.Report) -> tuple[float | None, float | None, bool]:
    """(JCT change %, electricity change %, common-jobs flag) of a against b."""
    fa, fb = a.figures, b.figures
    if set(fa) == set(fb):
        ja, jb = a.metrics["avg_jct_s"], b.metrics["avg_jct_s"]
        ca, cb = a.metrics["total_electricity_usd"], b.metrics["total_electricity_usd"]
        common = False
    else:
        both = sorted(set(fa) & set(fb))
        if not both:
            return None, None, True
        ja = math.fsum(fa[n].jct_s for n in both) / len(both)
        jb = math.fsum(fb[n].jct_s for n in both) / len(both)
        ca = math.fsum(fa[n].electricity_usd for n in both)
        cb = math.fsum(fb[n].electricity_usd for n in both)
        common = True
    return 100 * (ja - jb) / jb, 100 * (ca - cb) / cb, common


def fmt(x, nd=1, sign=True):
    if x is None:
        return "-"
    return f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def report(rows, scheds, seeds) -> str:
    L = []
    L.append("# BACE-Pipe vs baselines and ablations on the paper instances\n")
    L.append("Generated by `python -m benchmarks.bench_policies` (every figure is the evaluator's; queue mode, "
             "all jobs arriving at t=0). Average JCT is over the jobs a policy completed; `done` = completed / "
             "jobs (the rest are `unscheduled`: the policy's rules never place them).\n")
    srcs = sorted({r["source"] if r["source"] == "builder" else "instances/" for r in rows})
    L.append(f"Instances from: {', '.join(srcs)}.\n")
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    # ---------------------------------------------------------------- per variant table (mean over seeds)
    L.append("## Average JCT (h) / total electricity (USD) / done, per instance\n")
    for label, _ in VARIANTS:
        L.append(f"### {label}\n")
        head = "| policy | " + " | ".join(f"seed {s}: JCT h / USD / done" for s in seeds) + " | HoL-blocked h (sum) |"
        L.append(head)
        L.append("|" + "---|" * (len(seeds) + 2))
        for p in pols:
            cells, hol = [], 0.0
            if (label, seeds[0], p) not in scheds:
                continue
            for s in seeds:
                r = next(x for x in rows if x["variant"] == label and x["seed"] == s and x["policy"] == p)
                cells.append(f"{fmt(r['avg_jct_h'], 2, False)} / {r['total_electricity_usd']:.1f} / "
                             f"{r['jobs_done']}/{r['jobs']}")
                hol += r["hol_blocked_h"]
            L.append(f"| {p} | " + " | ".join(cells) + f" | {hol:.2f} |")
        L.append("")
        ex = [r for r in rows if r["variant"] == label and r["policy"] == "exact-p1"]
        if ex:
            L.append(f"exact-p1 solver statuses per decision (HiGHS, time limit {ex[0]['time_limit_s']:g} s per "
                     "solve; `feasible` = stopped at the limit with a solution, not proven optimal): " +
                     "; ".join(f"seed {r['seed']}: {r['solver_statuses']}" for r in ex) + "\n")
    # ---------------------------------------------------------------- BACE-Pipe vs baselines
    L.append("## BACE-Pipe's change against each baseline (%; negative = BACE-Pipe better)\n")
    L.append(f"Paper (base setup, against the four baselines): JCT {PAPER_MAIN['jct'][0]}..{PAPER_MAIN['jct'][1]} %, "
             f"electricity cost {PAPER_MAIN['cost'][0]}..{PAPER_MAIN['cost'][1]} %. `*` = over the jobs both "
             "completed (the baseline left some unscheduled), not comparable to whole-schedule figures.\n")
    L.append("| variant | baseline | " + " | ".join(f"seed {s} JCT / cost" for s in seeds) +
             " | range JCT (whole schedules) | range cost (whole schedules) |")
    L.append("|" + "---|" * (len(seeds) + 4))
    for label, _ in VARIANTS:
        for b in BASELINES + ("fifo", "exact-p1"):
            if (label, seeds[0], b) not in scheds:
                continue
            cells, js, cs = [], [], []
            for s in seeds:
                dj, dc, common = change(scheds[(label, s, "bace-pipe")], scheds[(label, s, b)])
                star = "*" if common else ""
                cells.append(f"{fmt(dj)}{star} / {fmt(dc)}{star}")
                if not common and dj is not None:
                    js.append(dj)
                    cs.append(dc)
            rj = f"{min(js):+.1f}..{max(js):+.1f}" if js else "-"
            rc = f"{min(cs):+.1f}..{max(cs):+.1f}" if cs else "-"
            L.append(f"| {label} | {b} | " + " | ".join(cells) + f" | {rj} | {rc} |")
    L.append("")
    # ---------------------------------------------------------------- ablations
    L.append("## Ablations: change against full BACE-Pipe (%; positive = the ablation is worse)\n")
    L.append("| variant | removed | " + " | ".join(f"seed {s} JCT / cost" for s in seeds) +
             " | mean JCT | mean cost | paper JCT | paper cost |")
    L.append("|" + "---|" * (len(seeds) + 6))
    for label, _ in VARIANTS:
        for a in ABLATIONS:
            cells, js, cs = [], [], []
            for s in seeds:
                dj, dc, common = change(scheds[(label, s, a)], scheds[(label, s, "bace-pipe")])
                star = "*" if common else ""
                cells.append(f"{fmt(dj)}{star} / {fmt(dc)}{star}")
                if dj is not None:
                    js.append(dj)
                    cs.append(dc)
            pj, pc = PAPER_ABLATION[a] if label == "base" else ("", "")
            L.append(f"| {label} | {a.replace('bace-pipe-no-', '')} | " + " | ".join(cells) +
                     f" | {fmt(statistics.mean(js)) if js else '-'} | {fmt(statistics.mean(cs)) if cs else '-'} | "
                     f"{'+' + str(pj) if pj != '' else ''} | {'+' + str(pc) if pc != '' else ''} |")
    L.append("")
    L.append(facts(scheds, seeds))
    return "\n".join(L)


def facts(scheds, seeds) -> str:
    """Figures that explain the results: how close the network comes to binding, and how jobs compare to
    region sizes (computed from the instances and the schedules, not written by hand)."""
    from bace_opt import formulas as F
    L = ["## Facts behind the numbers (computed)\n",
         "| variant | b_j at ref. GPU (Gbit/s) | link capacity (Gbit/s) | peak link utilization, bace-pipe | "
         "comm-bound jobs (cr-lcf, cr-ldf, no-pathfinder) | jobs larger than the largest region | "
         "multi-region jobs, bace-pipe | max latency share of T_iter, bace-pipe |",
         "|---|---|---|---|---|---|---|---|"]
    for label, kw in VARIANTS:
        bs, caps, peak, cb, big, multi, lat = [], [], 0.0, 0, 0, 0, 0.0
        for seed in seeds:
            inst, _ = load_or_build(seed, kw)
            bs += [F.demand_gbps(j, j.stage_time_s) for j in inst.jobs]
            caps += [l.bandwidth_gbps for l in inst.links]
            largest = max(r.gpus for r in inst.regions)
            big += sum(1 for j in inst.jobs if j.gpus > largest)
            rep = scheds[(label, seed, "bace-pipe")]
            peak = max(peak, _peak_link_utilization(inst, rep))
            multi += sum(1 for n, f in rep.figures.items() if len(_blocks(rep, n)) > 1)
            for n, f in rep.figures.items():
                lsum = sum(inst.route(h.route).latency_ms for h in _SCHED_HOPS.get((id(rep), n), ()))
                lat = max(lat, 2 * lsum / 1000 / f.iteration_s)
            for pol in ("cr-lcf", "cr-ldf", "bace-pipe-no-pathfinder"):
                cb += sum(1 for f in scheds[(label, seed, pol)].figures.values() if f.comm_bound)
        L.append(f"| {label} | {min(bs):.2f}..{max(bs):.2f} | {min(caps):.1f}..{max(caps):.1f} | {100 * peak:.1f} % | "
                 f"{cb} | {big} of {len(seeds) * len(inst.jobs)} | {multi} | {100 * lat:.2f} % |")
    L.append("")
    L.append(NOTES)
    return "\n".join(L)


NOTES = """## Why these numbers differ from the paper's (read with the tables above)

* **The network never binds on this instance family.** The facts table shows every job's no-stall demand b_j
  (a few Gbit/s: one micro-batch's activation per stage time) far below every link's capacity, even at
  bandwidth x0.3, a peak link utilization well below 100 %, and no communication-bound job even for the
  baselines that do not check bandwidth.  So the bandwidth-aware pathfinder has nothing to avoid: removing it
  changes JCT by about 0 %, and the bandwidth x0.3 / x1.5 variants give nearly the base figures.  The paper
  reports +52.5 % JCT without the pathfinder, which needs demands comparable to link capacity; the system
  model's demand (activations only, pipeline parallelism, no data-parallel gradient traffic) does not produce
  them here.
* **Latency is a small part of an iteration** (last column: 2 x route latency / T_iter), so a cross-region
  placement runs almost as fast as a single-region one; run time, hence energy, barely depends on placement.
* **JCT gains come from two things**: the priority rule (shortest compute first, since alpha, the links'
  utilization, stays small) when a batch of jobs waits at t=0, and pooling GPUs across regions against the
  single-region baselines, whose head-of-line-blocked hours are large.  The priority gain (against FIFO and
  the cross-region baselines) grows when GPUs are scarce (GPU x0.5, 24 jobs) and vanishes when jobs rarely
  wait together (Poisson arrivals: BACE-Pipe places exactly as FIFO); the gain against the single-region
  baselines remains wherever jobs need more GPUs than one region has free.
* **Cost.** With constant prices and one GPU type, electricity = sum over GPUs of power x price x run time;
  when every job runs and run times barely depend on placement, total cost is set by which jobs' GPU-hours
  land in which regions.  BACE-Pipe's order (short jobs first) gives the cheap regions to short jobs; the
  no-priority ablation (same placement rules, FIFO order) is then sometimes cheaper.  The pathfinder grows
  chains toward high-bandwidth links rather than cheap regions (``prefer=price`` is our option that does the
  latter; its row shows the effect), so BACE-Pipe is not cheaper than the cost-first baselines here; the
  paper's -12.6..-30.6 % is not reproduced.
* Single-region baselines leave a job ``unscheduled`` only when it is larger than every region (then its
  comparison is over common jobs, marked `*`).
"""


_SCHED_BLOCKS: dict = {}


def _blocks(rep, name):
    return _SCHED_BLOCKS.get((id(rep), name), ())


def _peak_link_utilization(inst, rep) -> float:
    """Highest reserved / capacity over links and time (sweep over starts and finishes)."""
    ev = []
    for n, f in rep.figures.items():
        for h in _SCHED_HOPS.get((id(rep), n), ()):
            for u, v in zip(h.route, h.route[1:]):
                k = inst.link_index[(u, v)]
                ev.append((f.start_s, 1, k, h.reserved_gbps))
                ev.append((f.finish_s, 0, k, -h.reserved_gbps))
    ev.sort()
    load: dict[int, float] = {}
    peak = 0.0
    for t, _, k, w in ev:
        load[k] = load.get(k, 0.0) + w
        peak = max(peak, load[k] / inst.links[k].bandwidth_gbps)
    return peak


_SCHED_HOPS: dict = {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--exact", action="store_true", help="also run exact-p1 (solves P1 at every event)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="exact-p1: time limit per solve (s)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    t = time.perf_counter()
    rows, scheds = run_all(args.seeds, args.exact, args.time_limit)
    md = report(rows, scheds, args.seeds)
    print(md)
    print(f"({len(rows)} simulations in {time.perf_counter() - t:.1f} s)")
    if not args.no_write:
        out = RESULTS
        out.mkdir(parents=True, exist_ok=True)
        commit = git_commit(missing="")
        atomic_write(out / "policies.csv", csv_text(
            list(rows[0]) + ["commit"],
            ({**{k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}, "commit": commit}
             for r in rows)))
        atomic_write(out / "policies.md", md + "\n")
        print(f"wrote {out.relative_to(ROOT)}/policies.csv and policies.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
