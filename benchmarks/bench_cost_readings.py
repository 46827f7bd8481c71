"""Cost readings and network figures side by side on the paper family (issue 9 items 2 and 5).

For each paper-family instance (seeds 1-3, 8 jobs, bandwidth scale 1, 0.3 and 0.03; and 24 jobs at scale 1)
every policy below runs in the simulator (queue mode, all jobs arriving at 0), and the evaluator prices the
schedule under the three cost readings of docs/decisions.md ("Evaluator metrics and cost readings"):

  (a) total_electricity_usd            active GPUs only (the paper's metric)
  (b) total_electricity_incl_idle_usd  (a) + idle GPUs of every region over the makespan (idle_power_w, default
                                       25 % of power_w: 75 W for the A6000)
  (c) total_cost_usd                   (a) + egress (0.02 USD/GB on every link of the paper family)

beside the figures that say whether the network bound: peak and mean link utilisation, total stall time, and
the energy-weighted price (USD/kWh) that drives reading (a).  BACE-Pipe's change against each baseline is
given under each reading, only where both policies finished every job (otherwise "not comparable" with the
counts: a policy with unfinished jobs has less energy and egress, not a better schedule).

Run:  python -m benchmarks.bench_cost_readings [--seeds 1 2 3] [--no-write]
Writes benchmarks/results/cost-readings.csv (one row per instance x policy) and cost-readings.md.
"""
from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys

import bace_opt as bo
from bace_opt.builders.paper import paper_instance
from bace_opt.files import atomic_write
from benchmarks.common import RESULTS

POLICIES = ("bace-pipe", "lcf", "ldf", "cr-lcf", "cr-ldf", "bace-pipe-no-pathfinder")
BASELINES = ("lcf", "ldf", "cr-lcf", "cr-ldf")
VARIANTS = [("bw x1", {}), ("bw x0.3", {"bandwidth_scale": 0.3}), ("bw x0.03", {"bandwidth_scale": 0.03}),
            ("24 jobs", {"jobs": 24})]
READINGS = [("a", "total_electricity_usd", "active GPUs"),
            ("b", "total_electricity_incl_idle_usd", "active + idle GPUs"),
            ("c", "total_cost_usd", "active GPUs + egress")]
COLUMNS = ["variant", "seed", "instance", "policy", "jobs", "jobs_done", "avg_jct_s", "total_electricity_usd",
           "total_electricity_incl_idle_usd", "total_egress_usd", "total_cost_usd", "egress_over_electricity",
           "energy_weighted_price_usd_per_kwh", "total_energy_kwh", "peak_link_utilisation",
           "mean_link_utilisation", "total_stall_s", "jobs_comm_bound", "makespan_s"]


def run(seeds) -> list[dict]:
    rows = []
    for label, kw in VARIANTS:
        for seed in seeds:
            inst = paper_instance(seed=seed, **kw)
            for pol in POLICIES:
                s = bo.simulate(inst, pol, track_hol=False)
                rep = bo.evaluate(inst, s)
                if not rep.feasible:
                    raise SystemExit(f"{pol} on {inst.name}: infeasible schedule: {rep.violations[:3]}")
                m = rep.metrics
                row = {"variant": label, "seed": seed, "instance": inst.name, "policy": pol, "jobs": len(inst.jobs)}
                row.update({k: m.get(k) for k in COLUMNS if k in m})
                el = m["total_electricity_usd"]
                row["egress_over_electricity"] = m["total_egress_usd"] / el if el else None
                rows.append(row)
    return rows


def _pct(x, y):
    return 100.0 * (x - y) / y


def report(rows, seeds, load: str) -> str:
    by = {(r["variant"], r["seed"], r["policy"]): r for r in rows}
    out = ["# Cost readings and network figures on the paper family", "",
           "Written by `python -m benchmarks.bench_cost_readings` (every figure priced by the evaluator; "
           f"seeds {', '.join(map(str, seeds))}; queue mode, all jobs at t=0). Machine load when run: {load}.", "",
           "Readings (docs/decisions.md, \"Evaluator metrics and cost readings\"): (a) `total_electricity_usd` = "
           "active GPUs only (the paper's metric); (b) `total_electricity_incl_idle_usd` = (a) + idle GPUs of "
           "every region over the makespan (A6000 idle 75 W = the default 25 % of 300 W); (c) `total_cost_usd` "
           "= (a) + egress (0.02 USD/GB).", "",
           "## Per policy (mean over seeds; ranges in brackets)", "",
           "| variant | policy | done | avg JCT h | (a) USD | (b) USD | (c) USD | egress / (a) | USD/kWh | "
           "peak link use | mean link use | stall h |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def agg(vals, fmt):
        vals = [v for v in vals if v is not None]
        if not vals:
            return "-"
        lo, hi, mu = min(vals), max(vals), statistics.fmean(vals)
        return fmt.format(mu) if lo == hi else f"{fmt.format(mu)} [{fmt.format(lo)}-{fmt.format(hi)}]"

    for label, _ in VARIANTS:
        for pol in POLICIES:
            rs = [by[(label, s, pol)] for s in seeds]
            done = "/".join(f"{r['jobs_done']}" for r in rs) + f" of {rs[0]['jobs']}"
            out.append(f"| {label} | {pol} | {done} | "
                       f"{agg([r['avg_jct_s'] / 3600 for r in rs], '{:.1f}')} | "
                       f"{agg([r['total_electricity_usd'] for r in rs], '{:.0f}')} | "
                       f"{agg([r['total_electricity_incl_idle_usd'] for r in rs], '{:.0f}')} | "
                       f"{agg([r['total_cost_usd'] for r in rs], '{:.0f}')} | "
                       f"{agg([r['egress_over_electricity'] for r in rs], '{:.1f}')} | "
                       f"{agg([r['energy_weighted_price_usd_per_kwh'] for r in rs], '{:.3f}')} | "
                       f"{agg([100 * r['peak_link_utilisation'] for r in rs], '{:.0f} %')} | "
                       f"{agg([100 * r['mean_link_utilisation'] for r in rs], '{:.1f} %')} | "
                       f"{agg([r['total_stall_s'] / 3600 for r in rs], '{:.1f}')} |")
    out += ["", "## BACE-Pipe's cost change against each baseline, per reading", "",
            "Range over the seeds where both policies finished every job; `n/c` = not comparable (the counts "
            "of finished jobs differ, given as bace-pipe/baseline). The paper reports -12.6..-30.6 % (electricity).",
            "", "| variant | baseline | JCT | (a) active | (b) + idle | (c) + egress |", "|---|---|---|---|---|---|"]
    for label, _ in VARIANTS:
        for base in BASELINES:
            cells = {"jct": [], "a": [], "b": [], "c": []}
            nc = []
            for s in seeds:
                bp, bl = by[(label, s, "bace-pipe")], by[(label, s, base)]
                if not (bp["jobs_done"] == bl["jobs_done"] == bp["jobs"]):
                    nc.append(f"seed {s}: {bp['jobs_done']}/{bl['jobs_done']}")
                    continue
                cells["jct"].append(_pct(bp["avg_jct_s"], bl["avg_jct_s"]))
                for key, col, _ in READINGS:
                    cells[key].append(_pct(bp[col], bl[col]))

            def rng(v):
                if not v:
                    return "n/c"
                return f"{min(v):+.1f}..{max(v):+.1f} %" if len(v) > 1 else f"{v[0]:+.1f} %"
            note = f" (n/c {'; '.join(nc)})" if nc and cells["a"] else ""
            out.append(f"| {label} | {base} | {rng(cells['jct'])}{note} | {rng(cells['a'])} | {rng(cells['b'])} | "
                       f"{rng(cells['c'])} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args(argv)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = run(a.seeds)
    md = report(rows, a.seeds, load.split("load average:")[-1].strip() if "load" in load else "n/a")
    print(md)
    if not a.no_write:
        res = RESULTS
        import io
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else (repr(r[k]) if isinstance(r[k], float) else r[k]))
                        for k in COLUMNS})
        atomic_write(res / "cost-readings.csv", buf.getvalue())
        atomic_write(res / "cost-readings.md", md)
        print(f"wrote {res / 'cost-readings.csv'} and cost-readings.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
