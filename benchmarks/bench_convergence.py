"""How a fleet's certified P1 gap closes with time (issue 44, item 6): the certified gap against time, read from ONE
solve's time line per fleet.

    python -m benchmarks.bench_convergence                           # 600 s per fleet, 4 fleets: ~45 min
    python -m benchmarks.bench_convergence --max-time 120            # the same checkpoints up to 120 s
    python -m benchmarks.bench_convergence --fleets fleet20-2 --max-time 600
    python -m benchmarks.bench_convergence --code /tmp/old83 --label 83f6bed --max-time 120   # another checkout

Per fleet, one ``bace-opt solve FLEET --problem placement --time-limit MAX --json`` (the default solve, as a
user runs it, in its own process: every time counts from that process's start), its load before and after.  The
certified gap at a checkpoint t (10, 30, 60, 120, 300, 600 s, those up to ``--max-time``) is
(incumbent - bound) / incumbent at the last point of the solve's ``timeline`` with ``t_s`` <= t (``t_s`` is
seconds from the command's start; the bound is certified only with level 1 proven, so a point without a bound
reads "none").  A solve that ends before a checkpoint keeps its final figure there.  The last column is the
gap at the end from the level-2 record (level 1 proven) and the command's wall clock: the only figure a checkout
without a time line (one from before issue 44's bound work, e.g. 83f6bed) gives, so ``--code`` on such a checkout
fills only it (run it once per limit for more points: ``--max-time 60``, ``--max-time 120``, ...).

Caveat: a solve with a shorter limit splits its time differently (the stage relaxation's and the search's
shares follow the limit), so the figure at checkpoint t of a long solve is what the long solve knew at t, not
what a solve limited to t reports at its end.

Fleets: fleet20-1..3 (instances/realistic-20r-50j-seed1..3.json, the shipped seeds) and fleet12 (the first 12
regions of fleet20, 30 jobs, seed 1, as ``bench_p1_engines``).  Writes benchmarks/results/convergence-LABEL.md
(the table) and .json (the time lines, for notebooks/08-gap-over-time.ipynb).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import RESULTS, ROOT, git_commit, load_1min, load_line, write_result

CHECKPOINTS = (10, 30, 60, 120, 300, 600)
FLEETS = ("fleet20-1", "fleet20-2", "fleet20-3", "fleet12")


def fleet_file(name: str, work: Path) -> Path:
    """The instance file of a fleet (fleet12 is built, as ``bench_p1_engines`` builds it, and written)."""
    if name.startswith("fleet20-"):
        return ROOT / f"instances/realistic-20r-50j-seed{int(name.split('-')[1])}.json"
    if name == "fleet12":
        from bace_opt.builders.realistic import FLEET20, realistic_instance
        path = work / "realistic-12r-30j-seed1.json"
        if not path.exists():
            realistic_instance(None, FLEET20[:12], seed=1, jobs=30, gpu_mix=("A100-80GB", "H100-80GB"),
                               fill_missing="rtt", name="realistic-12r-30j-seed1").save(path)
        return path
    raise SystemExit(f"unknown fleet {name!r} ({', '.join(FLEETS)})")


def gap_of(inc, bound):
    if inc is None or bound is None or not inc > 0:
        return None
    return max(inc - bound, 0.0) / inc


def at(timeline: list[dict], t: float):
    """(gap, bound_source) at checkpoint ``t`` from the time line (None, None: no point yet)."""
    pts = [p for p in timeline if p["t_s"] <= t]
    if not pts:
        return None, None
    p = pts[-1]
    return gap_of(p.get("incumbent"), p.get("bound")), p.get("bound_source")


def run_fleet(name: str, path: Path, code: Path, max_time: float, work: Path) -> dict:
    """One solve of ``path`` with the checkout ``code``; its JSON, wall clock and load."""
    env = dict(os.environ, PYTHONPATH=str(code))
    before = load_1min()
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "bace_opt", "solve", str(path), "--problem", "placement",
                        "--time-limit", str(max_time), "--json", "-o", str(work / f"{name}-schedule.json")],
                       capture_output=True, text=True, env=env, cwd=str(code), timeout=max_time * 3 + 300)
    wall = time.perf_counter() - t
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError:
        d = {"status": f"no JSON (exit {p.returncode}): {p.stderr.strip().splitlines()[-1:] }"}
    lv = {r["level"]: r for r in d.get("levels") or []}
    l1, l2 = lv.get(1, {}), lv.get(2, {})
    end = gap_of(l2.get("objective"), l2.get("bound")) if l1.get("status") == "optimal" else None
    return {"fleet": name, "instance": d.get("instance"), "status": d.get("status"), "wall_s": round(wall, 1),
            "time_limit_s": max_time, "end_gap": end, "end_bound_source": l2.get("bound_source"),
            "objective": l2.get("objective"), "bound": l2.get("bound"), "timeline": d.get("timeline"),
            "load_before": before, "load_after": load_1min()}


def pct(g) -> str:
    return "none" if g is None else f"{100 * g:.3g} %"


def table(rows: list[dict], checkpoints, label: str) -> list[str]:
    head = ["fleet", "code"] + [f"{c} s" for c in checkpoints] + ["at the end (wall)", "bound at the end", "load"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        tl = r["timeline"]
        cells = ["(no time line)" if tl is None else pct(at(tl, c)[0]) for c in checkpoints]
        out.append("| " + " | ".join([r["fleet"], label] + cells + [
            f"{pct(r['end_gap'])} ({r['wall_s']:g} s)", str(r["end_bound_source"] or "-"),
            f"{r['load_before']:g} / {r['load_after']:g}"]) + " |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fleets", default=",".join(FLEETS), help=f"comma-separated (default {','.join(FLEETS)})")
    ap.add_argument("--max-time", type=float, default=600.0, help="each solve's --time-limit, s (default 600)")
    ap.add_argument("--code", default=str(ROOT), help="the checkout whose bace_opt runs (default this one)")
    ap.add_argument("--label", default=None, help="the code's name in the table and files (default its commit)")
    a = ap.parse_args(argv)
    code = Path(a.code).resolve()
    label = a.label or (git_commit() if code == ROOT else code.name)
    checkpoints = [c for c in CHECKPOINTS if c <= a.max_time]
    print(f"# convergence, code {label}, --time-limit {a.max_time:g} s; {load_line()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in a.fleets.split(","):
            r = run_fleet(name, fleet_file(name, work), code, a.max_time, work)
            rows.append(r)
            print("\n".join(table([r], checkpoints, label)[2:]), flush=True)
    lines = [f"Certified P1 gap against time, one solve per fleet (`python -m benchmarks.bench_convergence "
             f"--max-time {a.max_time:g}`{'' if code == ROOT else f' --code {label}'}), {load_line()}:", ""]
    lines += table(rows, checkpoints, label)
    text = "\n".join(lines) + "\n"
    print(text)
    tag = f"convergence-{label}-{a.max_time:g}s"
    write_result(RESULTS / f"{tag}.md", text)
    write_result(RESULTS / f"{tag}.json", json.dumps({"label": label, "max_time_s": a.max_time,
                                                      "checkpoints": checkpoints, "runs": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
