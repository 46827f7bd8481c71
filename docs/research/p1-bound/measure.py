"""Measure the default ``solve --problem placement`` (issue 44 targets): one JSON line per run with the level-2
gap, its bound source, the stage relaxation's figures, wall seconds and the load before and after.

    PYTHONPATH=. python docs/research/p1-bound/measure.py OUT.jsonl LIMIT INSTANCE.json [...]
"""
import json
import os
import subprocess
import sys
import time


def run(path: str, limit: float) -> dict:
    out = "/tmp/p1bound-" + os.path.basename(path)
    l0 = os.getloadavg()[0]
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "bace_opt", "solve", path, "--problem", "placement", "--time-limit",
                        str(limit), "--json", "-o", out + ".sched.json"], capture_output=True, text=True)
    wall = time.perf_counter() - t
    row = {"instance": os.path.basename(path), "limit_s": limit, "process_wall_s": round(wall, 1),
           "load_before": round(l0, 2), "load_after": round(os.getloadavg()[0], 2), "rc": p.returncode}
    try:
        d = json.loads(p.stdout)
    except ValueError:
        return dict(row, error=p.stderr[-500:])
    lv = {x["level"]: x for x in d["levels"]}
    l2 = lv.get(2, {})
    tl = d.get("timeline") or []
    first = next((x for x in tl if x["bound"] is not None and x["bound_source"] != "cost floor (each started job's least cost alone)"), None)
    return dict(row, solver_wall_s=round(d["wall_s"], 1), jobs=lv.get(1, {}).get("objective"),
                level1=lv.get(1, {}).get("message") or lv.get(1, {}).get("status"),
                cost=l2.get("objective"), bound=l2.get("bound"), gap_pct=None if l2.get("gap") is None
                else round(100 * l2["gap"], 3), bound_source=l2.get("bound_source"), status=d["status"],
                stage=l2.get("stage_relaxation"), first_bound_t_s=first and first["t_s"],
                cost_at_t0_usd=d.get("cost_at_t0_usd"), evaluated_cost_usd=d.get("evaluated_cost_usd"),
                commit=subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                      text=True).stdout.strip())


if __name__ == "__main__":
    dest, limit = sys.argv[1], float(sys.argv[2])
    for path in sys.argv[3:]:
        r = run(path, limit)
        print(json.dumps(r), flush=True)
        with open(dest, "a") as f:
            f.write(json.dumps(r) + "\n")
