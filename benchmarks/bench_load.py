"""Load and build times of instances: the largest shipped instance, the builders, a 10,000-job instance.

    python -m benchmarks.bench_load

Prints one line per figure (best of several repeats, wall seconds) and writes
benchmarks/results/bench_load.md.  Timings depend on the machine and its load; nothing here asserts them.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bace_opt.builders import paper_instance, random_instance, realistic_instance
from bace_opt.files import atomic_write
from bace_opt.instance import load_instance
from benchmarks.common import RESULTS, ROOT



def best_of(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    rows = []
    files = sorted((ROOT / "instances").glob("*.json"), key=lambda p: p.stat().st_size)
    largest = files[-1]
    inst = load_instance(largest)
    rows.append((f"load largest shipped instance {largest.name} ({largest.stat().st_size / 1e3:.0f} kB, "
                 f"{len(inst.regions)} regions, {len(inst.jobs)} jobs)", best_of(lambda: load_instance(largest))))
    rows.append(("build paper_instance(seed=1, 8 jobs)", best_of(lambda: paper_instance(1))))
    rows.append(("build paper_instance(seed=1, 24 jobs)", best_of(lambda: paper_instance(1, jobs=24))))
    rows.append(("build realistic_instance (6 regions, 168 h prices, shipped tables)",
                 best_of(lambda: realistic_instance(None), repeats=3)))
    big = random_instance(1, n_regions=20, n_jobs=10_000, max_stages=8, max_arrival_s=1e6)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "big.json"
        big.save(p)
        size = p.stat().st_size
        rows.append(("build random_instance(20 regions, 10,000 jobs)",
                     best_of(lambda: random_instance(1, n_regions=20, n_jobs=10_000, max_stages=8,
                                                     max_arrival_s=1e6), repeats=2)))
        rows.append((f"load 20-region 10,000-job instance ({size / 1e6:.1f} MB)", best_of(lambda: load_instance(p), 3)))
    width = max(len(r[0]) for r in rows)
    lines = [f"{name:<{width}}  {sec * 1000:9.1f} ms" for name, sec in rows]
    print("\n".join(lines))
    out = RESULTS
    out.mkdir(parents=True, exist_ok=True)
    md = ["# bench_load", "", f"python {sys.version.split()[0]}; best of repeats, wall time", "",
          "| what | ms |", "|---|---|"] + [f"| {n} | {s * 1000:.1f} |" for n, s in rows]
    atomic_write(out / "bench_load.md", "\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
