"""Ctrl-C latency per solver back end, and the Gantt chart of a paper-size job (issue 10).

For each back end: ``bace-opt -v solve random-12r-32j.json --solver S --time-limit 300`` in a subprocess (the
solvers suite's random 12 x 32 instance, ``generate random --seed 1 --regions 12 --jobs 32 --max-gpus-per-region
32 --max-stages 12``, which no back end proves in 300 s; the paper 24-job instance is now proven by HiGHS and
SCIP in 1-2 s, before the signal); one second after the solver reports "solver running", SIGINT; measured:
seconds from the signal to the process's exit, its exit code, and whether an output file appeared (the
documented behaviour: exit 130, no output).  A solve that had already ended when the signal was sent is
reported as such in ``detail`` (its latency means nothing).  Then the 1F1B schedule of a 40-stage x 256-micro-batch job (llama-3.1-70b-2 of the same
instance as placed by bace-pipe) drawn with ``pipeline.gantt.draw_gantt`` (aggregated above 2,000 blocks):
drawing time and number of bars.  The machine load (``os.getloadavg``) is recorded beside every figure.

Run:  python -m benchmarks.bench_interrupt [--solvers highs,scip,cpsat,mathopt-highs]
Writes benchmarks/results/interrupt.csv (one row per measurement, appended; the file is replaced atomically).
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bace_opt.files import append_csv_rows
from benchmarks.common import RESULTS, ROOT

INSTANCE = ROOT / "instances" / "paper-6r-24j-seed1.json"
OUT = RESULTS / "interrupt.csv"
MAIN = "import sys; from bace_opt.cli.main import main; sys.exit(main())"
FIELDS = ["what", "backend", "seconds", "exit_code", "output_written", "detail", "load_1min"]


def busy_instance(d: str) -> Path:
    """The random 12 x 32 instance of the solvers suite, written to directory ``d``."""
    from bace_opt.builders.synthetic import random_instance
    path = Path(d) / "random-12r-32j.json"
    random_instance(seed=1, n_regions=12, n_jobs=32, max_gpus_per_region=32, max_stages=12).save(path)
    return path


def interrupt_latency(solver: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "o.json"
        inst = busy_instance(d)
        p = subprocess.Popen([sys.executable, "-c", MAIN, "-v", "solve", str(inst), "--solver", solver,
                              "--time-limit", "300", "-o", str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        while True:
            line = p.stderr.readline()
            if not line or "solver running" in line:
                break
        time.sleep(1.0)
        ended = p.poll() is not None
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        took = time.monotonic() - t
        detail = next((l.split(": ", 1)[1] for l in err.splitlines() if "interrupted: the solver" in l), "")
        if ended:
            detail = "the solve had ended before the signal; " + detail
        return {"what": "ctrl-c", "backend": solver, "seconds": round(took, 3), "exit_code": p.returncode,
                "output_written": out.exists(), "detail": detail, "load_1min": round(os.getloadavg()[0], 2)}


def gantt_time() -> dict:
    import bace_opt as bo
    from bace_opt.pipeline import pipeline_iteration_s
    from bace_opt.pipeline.gantt import draw_gantt
    inst = bo.load_instance(INSTANCE)
    sched = bo.simulate(inst, policy="bace-pipe")
    e = sched.job("llama-3.1-70b-2")
    res = pipeline_iteration_s(inst, e.name, e.blocks, e.hops, kind="1f1b")
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        draw_gantt(res.model, res.ops, Path(d) / "g.png")
        took = time.perf_counter() - t
    m = res.model
    return {"what": "gantt", "backend": "matplotlib-agg", "seconds": round(took, 3), "exit_code": "",
            "output_written": True, "detail": f"{m.stages} stages x {m.microbatches} micro-batches, "
                                              f"{len(res.ops)} blocks", "load_1min": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solvers", default="highs,scip,cpsat,mathopt-highs")
    args = ap.parse_args()
    rows = [interrupt_latency(s) for s in args.solvers.split(",") if s]
    rows.append(gantt_time())
    append_csv_rows(OUT, FIELDS, rows)
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
