"""plan-jct hold_wake probe on the 24-job Poisson tuning seeds (U from results/planner-24j.csv)."""
import sys, csv, time
import bace_opt as bo
from bace_opt.builders import paper_instance
jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 24
U = {}
for r in csv.DictReader(open(f"/work/main/benchmarks/results/planner-{jobs}j.csv")):
    U[r["instance"]] = float(r["U_s"])
seeds = [int(x) for x in sys.argv[1].split(",")]
jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 24
for w in [float(x) for x in sys.argv[3].split(",")]:
    rel = []
    for s in seeds:
        inst = paper_instance(seed=s, jobs=jobs, arrivals="poisson", bandwidth_source="measured")
        t = time.perf_counter()
        sc = bo.simulate(inst, "plan-jct", hold_wake=w)
        ev = bo.evaluate(inst, sc)
        u = U.get(inst.name)
        J = ev.metrics["avg_jct_s"]
        rel.append(100 * (J / u - 1) if u else float("nan"))
        print(f"wake {w:g} seed {s}: J {J:.1f} U {u} J/U-1 {rel[-1]:+.2f} % done {ev.metrics['jobs_done']} feasible {ev.feasible} held {sc.meta.get('policy_stats',{}).get('held')} events {sc.meta['events']} {time.perf_counter()-t:.1f}s", flush=True)
    print(f"== wake {w:g}: mean {sum(rel)/len(rel):+.2f} % worst {max(rel):+.2f} %", flush=True)
