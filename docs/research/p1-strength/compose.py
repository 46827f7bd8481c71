"""Where a placement's level-2 cost goes: per started job, its stage cost (price rate x base time) and its latency
cost (price rate x lat_coef x trail latency), for a schedule file or the P1 start.

    python docs/research/p1-strength/compose.py INSTANCE [SCHEDULE]
"""
import json
import sys

from bace_opt.instance import load_instance
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.solution import solution_from_plans, start_candidates
from bace_opt.schedule import load_schedule


def main():
    inst = load_instance(sys.argv[1])
    data = PlacementData(inst)
    if len(sys.argv) > 2:
        sch = load_schedule(sys.argv[2])
        sol = solution_from_plans(data, [p for p in sch.plans if p is not None and p.status == "done" and p.start_s is not None and p.start_s <= data.t0 + 1e-6])
    else:
        sol = start_candidates(data, None)[0]
    tot_b = tot_l = 0.0
    for d in data.jobs:
        if sol.x.get(d.j, 0) < 0.5:
            continue
        used = [r for r in d.regions if sol.n.get((d.j, r), 0) > 0.5]
        c = min(d.cls_of[r] for r in used)
        rate = sum(d.pi[r] * round(sol.n[(d.j, r)]) for r in used)
        lat = sum(inst.links[k[2]].latency_ms for k, v in sol.f.items() if k[0] == d.j and v > 0.5)
        b, l = rate * d.base_s[c], rate * d.lat_coef * lat
        tot_b += b
        tot_l += l
        print(f"{d.job.name:12s} S={d.S} g={d.job.gpus_per_stage} regions={[(inst.regions[r].name, round(sol.n[(d.j, r)])) for r in used]}"
              f" base {b:.4f} lat {l:.4f} ({lat:.1f} ms) pi_min*base {d.pi_min * d.base_s[0]:.4f}")
    print(f"total base {tot_b:.4f} latency {tot_l:.4f} sum {tot_b + tot_l:.4f}")


if __name__ == "__main__":
    main()
