"""BACE-Pipe's pathfinder per call, reference vs ``chain_search`` (issue 15, "Pathfinder per call").

Records the ``place`` and ``fits`` calls one simulation makes (job and a frozen copy of the residual state, in
call order) on the issue-15 family (``benchmarks.common.contended_instance``: ``generate random --seed 3
--regions 20 --max-gpus-per-region 64 --max-stages 16 --hourly-prices --mixed-gpus --topology sparse``,
arrivals over [0, N] s contended or [0, 100 N] s uncontended), then replays every recorded call through the
readable reference functions (``BacePipe.reference_path = True``: ``find_chains`` / ``grow_chain``, the
allocator, ``make_plan`` + ``plan_cost`` per chain) and through ``policies.chain_search``, in the same
process, same calls, same order, and checks that every answer is identical (the same ``JobPlan``, the same
bool).  Time is CPU time (``time.process_time``) of each replay, best of ``--repeat``; before each replay of the
fast path its residual-keyed caches (hop bottlenecks, components, prices at ``now``) are emptied, while the
static per-instance tables of both paths (routes, latencies, eligibility; ``chain_search``'s integer tables)
stay warm from the recorded simulation.

Run:  python -m benchmarks.bench_pathfinder [--sizes 4000] [--policies bace-pipe fifo ...] [--max-calls 20000]
Writes benchmarks/results/pathfinder_per_call.csv (one row per family, size, policy and call kind, appended;
the file is replaced atomically).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

from bace_opt.files import append_csv_rows
from bace_opt.policies import make_policy
from bace_opt.policies.bace_pipe import BacePipe
from bace_opt.policies.base import ClusterState
from bace_opt.sim import run_simulation
from benchmarks.common import (CONTENDED_SPREAD_S, RESULTS, UNCONTENDED_SPREAD_S, contended_instance, git_commit,
                               load_1min)

POLICIES = ("bace-pipe", "fifo", "bace-pipe-no-priority", "bace-pipe-no-costmin")
COLUMNS = ["family", "jobs", "policy", "call", "calls", "reference_cpu_s", "fast_cpu_s", "reference_us_per_call",
           "fast_us_per_call", "speedup", "identical", "load_1min", "commit", "python", "machine"]


def _frozen(state: ClusterState) -> ClusterState:
    c = ClusterState(state.inst, state.now, dict(state._free), list(state._bw))
    return c


def record(inst, policy: str, max_calls: int) -> tuple[list, BacePipe]:
    """Simulate ``policy`` on ``inst`` and return its first ``max_calls`` place/fits calls as (kind, job,
    frozen state), with the policy object."""
    calls = []
    pol = make_policy(policy)
    place, fits = pol.place, pol.fits

    def rec_place(job, state):
        if len(calls) < max_calls:
            calls.append(("place", job, _frozen(state)))
        return place(job, state)

    def rec_fits(job, state):
        if len(calls) < max_calls:
            calls.append(("fits", job, _frozen(state)))
        return fits(job, state)
    pol.place, pol.fits = rec_place, rec_fits
    run_simulation(inst, pol)
    del pol.place, pol.fits
    return calls, pol


def replay(pol: BacePipe, calls: list, reference: bool) -> tuple[float, list]:
    pol.reference_path = reference
    if not reference:      # residual-keyed caches start empty; static tables stay warm, as the reference's do
        for T in calls[0][2].inst.__dict__.get("_bace_chain_tables", {}).values():
            T._caps.clear()
            T.price_now = None
    out = []
    t = time.process_time()
    for kind, job, state in calls:
        out.append(pol.place(job, state) if kind == "place" else pol.fits(job, state))
    dt = time.process_time() - t
    pol.reference_path = False
    return dt, out


def run(family: str, n: int, policy: str, max_calls: int, repeat: int) -> list[dict]:
    inst = contended_instance(n, CONTENDED_SPREAD_S if family == "contended" else UNCONTENDED_SPREAD_S)
    calls, pol = record(inst, policy, max_calls)
    rows = []
    for kind in ("place", "fits"):
        sub = [c for c in calls if c[0] == kind]
        if not sub:
            continue
        ref_t, fast_t = [], []
        ref_out = fast_out = None
        for _ in range(repeat):
            t, ref_out = replay(pol, sub, True)
            ref_t.append(t)
            t, fast_out = replay(pol, sub, False)
            fast_t.append(t)
        r, f = min(ref_t), min(fast_t)
        rows.append({"family": family, "jobs": n, "policy": policy, "call": kind, "calls": len(sub),
                     "reference_cpu_s": round(r, 3), "fast_cpu_s": round(f, 3),
                     "reference_us_per_call": round(r / len(sub) * 1e6, 1),
                     "fast_us_per_call": round(f / len(sub) * 1e6, 1), "speedup": round(r / f, 2) if f > 0 else "",
                     "identical": ref_out == fast_out})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000])
    ap.add_argument("--families", nargs="+", default=["uncontended", "contended"],
                    choices=["uncontended", "contended"])
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--max-calls", type=int, default=20000, help="calls recorded per run (the first ones)")
    ap.add_argument("--repeat", type=int, default=2, help="replays of each path; the best CPU time is kept")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    for p in args.policies:
        if not isinstance(make_policy(p), BacePipe) or make_policy(p).pathfinder != "bandwidth":
            ap.error(f"--policies: {p!r} does not use BACE-Pipe's bandwidth pathfinder")
    out = RESULTS / "pathfinder_per_call.csv"
    commit = git_commit(missing="")
    ok = True
    for n in args.sizes:
        for family in args.families:
            for policy in args.policies:
                for row in run(family, n, policy, args.max_calls, args.repeat):
                    row.update(load_1min=load_1min(), commit=commit,
                               python=platform.python_version(), machine=f"{platform.machine()} x{os.cpu_count()}")
                    ok &= row["identical"]
                    print(json.dumps(row), flush=True)
                    if not args.no_write:
                        append_csv_rows(out, COLUMNS, [row], extrasaction="ignore")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
