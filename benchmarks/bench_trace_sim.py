"""Simulating a trace week (issue 45 item 2): events per second, time per event and peak memory at 300, 1,000
and 3,000 jobs for BACE-Pipe, price-pack, select-pack and a baseline (lcf).

The instance: the composed real week on fleet20 (``bace-opt generate trace``, 300 jobs per 7 days at load 1).
``--scale window`` (default): the same load factor ``--load L`` at every size, N jobs over 7 N / (300 L) days
(``--days`` of ``generate trace``), so time per event compares like with like; ``--scale load``: N jobs over the
same 7 days (``--load N/300``: the load factor rises with N).  ``--gpus G`` gives every region G GPUs instead of
the seeded draw (1,136 GPUs: offered load 0.035 at load 1); ``--gpus 16 --load 8``: 320 GPUs, offered load
about 1, the contended case.  Each run is a fresh process
(``--one``), so its peak memory (``ru_maxrss``) is its own; time is the simulation's CPU time
(``time.process_time``; the evaluator's pricing included, not the instance build) and wall time.  ``--repeat K``
(default 3) runs each row K times and reports the median.  ``decisions`` counts the calls into the policy and
``ms/decision`` divides by them (a run's early events often find nobody waiting and ask the policy nothing).  The machine's load average is printed with the
table (wall times scale with it on a shared machine).

Run:  python -m benchmarks.bench_trace_sim [--sizes 300 1000 3000] [--policies bace-pipe price-pack select-pack lcf]
                                          [--gpus 16] [--load 8] [--scale window|load] [--repeat 3] [--timeout 600]
Prints one JSON line per row and a markdown table; writes nothing unless ``--out FILE.csv`` (rows appended
atomically).
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys

from benchmarks.common import ROOT, append_rows, git_commit, load_line

POLICIES = ("bace-pipe", "price-pack", "select-pack", "lcf")
SIZES = (300, 1000, 3000)
COLUMNS = ["jobs", "gpus", "policy", "status", "scale", "days", "offered_load", "events", "cpu_s", "wall_s", "events_per_cpu_s",
           "cpu_ms_per_event", "peak_rss_mb", "runs", "commit", "decisions", "cpu_ms_per_decision"]


def instance(n_jobs: int, gpus: int | None, load: float = 1.0, scale: str = "window", seed: int = 1):
    from bace_opt.builders.trace import trace_instance
    if scale == "window":
        return trace_instance(seed=seed, load=load, days=7.0 * n_jobs / (300.0 * load), gpus=gpus)
    return trace_instance(seed=seed, load=n_jobs / 300.0, gpus=gpus)


def one_run(n_jobs: int, gpus: int | None, policy: str, load: float = 1.0, scale: str = "window") -> dict:
    """Build the trace and simulate it in this process; its figures."""
    from bace_opt.sim import run_simulation
    inst = instance(n_jobs, gpus, load, scale)
    sched, stats = run_simulation(inst, policy, track_hol=False)
    return {"jobs": len(inst.jobs), "gpus": gpus or "seeded", "policy": policy, "status": "ok", "scale": scale,
            "days": round(inst.meta["trace"]["window_s"] / 86400.0, 3),
            "offered_load": inst.meta["trace"]["offered_load"], "events": stats.events, "decisions": stats.decisions,
            "cpu_s": round(stats.cpu_s, 3), "wall_s": round(stats.wall_s, 3),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "jobs_done": sched.metrics["jobs_done"]}


def _process(n: int, gpus: int | None, policy: str, timeout: float, load: float, scale: str) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_trace_sim", "--one", str(n), str(gpus or 0), policy, repr(load),
           scale]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"jobs": n, "policy": policy, "status": f"timeout {timeout:g} s"}
    if r.returncode != 0:
        return {"jobs": n, "policy": policy, "status": f"error: {r.stderr.strip()[-200:]}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def row(runs: list[dict]) -> dict:
    ok = [r for r in runs if r.get("status") == "ok"]
    if len(ok) < len(runs):
        return runs[-1]
    out = dict(ok[0])
    for k in ("cpu_s", "wall_s", "peak_rss_mb"):
        out[k] = round(statistics.median(r[k] for r in ok), 3)
    out["events_per_cpu_s"] = round(out["events"] / out["cpu_s"]) if out["cpu_s"] > 0 else None
    out["cpu_ms_per_event"] = round(1000 * out["cpu_s"] / out["events"], 4) if out["events"] else None
    # per decision (a call into the policy): under a growing queue nearly every event needs one, at the start of
    # a run (a short window) about half do, so time per event mixes the policy's cost with how often it is asked
    out["cpu_ms_per_decision"] = round(1000 * out["cpu_s"] / out["decisions"], 4) if out.get("decisions") else None
    out["runs"] = " ".join(str(r["cpu_s"]) for r in ok)
    return out


def table(rows: list[dict]) -> str:
    head = ("| jobs | policy | offered load | events | decisions | CPU s | wall s | events/CPU s | ms/event | "
            "ms/decision | peak MB |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        if r.get("status") != "ok":
            lines.append(f"| {r['jobs']} | {r['policy']} | | | | {r['status']} | | | | | |")
            continue
        lines.append(f"| {r['jobs']} | {r['policy']} | {r['offered_load']} | {r['events']} | "
                     f"{r.get('decisions', '')} | {r['cpu_s']} | {r['wall_s']} | {r['events_per_cpu_s']} | "
                     f"{r['cpu_ms_per_event']} | {r.get('cpu_ms_per_decision', '')} | {r['peak_rss_mb']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--one"]:
        n, g, policy = int(argv[1]), int(argv[2]), argv[3]
        print(json.dumps(one_run(n, g or None, policy, float(argv[4]), argv[5])))
        return 0
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_trace_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--gpus", type=int, default=None, help="GPUs per region (default: the seeded draw)")
    ap.add_argument("--load", type=float, default=1.0, help="load factor (generate trace --load; default 1)")
    ap.add_argument("--scale", choices=["window", "load"], default="window",
                    help="N jobs at the same load over a longer window (default), or over 7 days at load N/300")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0, help="per run, s of wall time")
    ap.add_argument("--out", default=None, help="append the rows to this CSV")
    a = ap.parse_args(argv)
    print(load_line(), flush=True)
    rows = []
    for n in a.sizes:
        for p in a.policies:
            runs = []
            for _ in range(a.repeat):
                runs.append(_process(n, a.gpus, p, a.timeout, a.load, a.scale))
                if runs[-1].get("status") != "ok":
                    break
            r = row(runs)
            r["commit"] = git_commit(missing="")
            rows.append(r)
            print(json.dumps(r), flush=True)
            if a.out:
                append_rows(ROOT / a.out if not a.out.startswith("/") else a.out, COLUMNS, [r], extrasaction="ignore")
    print(load_line())
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
