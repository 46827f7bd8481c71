"""Racing portfolio for P1: several back ends on the same placement problem in parallel processes; the first
proof wins (``--solver race``).

    race_placement(inst, members=("highs", "cpsat"), options=SolveOptions(time_limit_s=600), **kw)

Each member runs ``bace_opt.exact.placement.solve_placement(inst, solver=member, ...)`` alone in its own
process (one thread each: the race is the parallelism).  Sharing: every member starts from the same best
start (the caller's warm start when it fits, else the greedy placement; HiGHS and SCIP take it as a MIP
start, CP-SAT as a complete hint); members do not exchange incumbents during their solves (no back end here
accepts a new incumbent mid-solve through our adapters).  The parent waits for results; as soon as one
member reports every level proven optimal, all others are stopped (SIGTERM, then SIGKILL after
``STOP_GRACE_S``) and its result is returned with ``solver.extra["proved_by"]`` naming it.  If nobody proves
within the time limit, the best result (most jobs, then lowest cost, then lowest run time; proven levels
first) is returned with status ``feasible``.

Deterministic for a given set of results: when several results are available at the moment the parent
decides, the choice depends only on their content and the members' order, never on arrival order within
that moment.  Ctrl-C (KeyboardInterrupt in the parent) stops every child before it propagates; the children
ignore SIGINT themselves so that only the parent decides.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from dataclasses import replace
from typing import Sequence

from ..errors import InputError
from .base import SolveOptions

log = logging.getLogger(__name__)

NAME = "race"
DEFAULT_MEMBERS = ("highs", "cpsat")
STOP_GRACE_S = 2.0      # SIGTERM, then SIGKILL after this
GRACE_S = 10.0          # the parent waits this long past the members' time limit before stopping them
POLL_S = 0.05


def available() -> bool:
    from . import registry
    return any(registry.available(m) for m in DEFAULT_MEMBERS)


def _context():
    """Members are *spawned*, never forked: Pyomo guards its output capture with a multiprocessing lock
    that a forked child shares with the parent, and a member stopped while it holds that lock (the race
    terminates the losers) would leave every later Pyomo solve of the parent waiting on it."""
    return mp.get_context("spawn")


def _start_ignoring_sigint(procs) -> None:
    """Start the members with SIGINT ignored from their first instruction (an ignored signal stays ignored
    across exec, and Python then installs no KeyboardInterrupt handler): a Ctrl-C reaches the whole
    process group, and a member still starting up must not die with a traceback; the parent stops them."""
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        for p in procs:
            p.start()
    finally:
        if main:
            signal.signal(signal.SIGINT, old)


def _member(i: int, solver: str, inst, options: SolveOptions, kw: dict, out) -> None:
    """Child process: solve alone, put (i, result or error text) on ``out``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C and stops us
    try:
        from ..exact.placement import solve_placement
        res = solve_placement(inst, solver=solver, options=options, **kw)
        out.put((i, res, None))
    except BaseException as e:   # report any failure to the parent instead of dying silently
        out.put((i, None, f"{type(e).__name__}: {e}"))


def _stop(procs) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for p in procs:
        p.join(max(deadline - time.monotonic(), 0.0))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(1.0)


def _rank(res) -> tuple:
    """Sort key of a member's result (smaller is better): all proven, then levels lexicographically."""
    lv = {l["level"]: l for l in res.levels}
    count = lv.get(1, {}).get("objective")
    cost = lv.get(2, {}).get("objective")
    run = lv.get(3, {}).get("objective")
    proven = sum(1 for l in res.levels if l["status"] == "optimal")
    return (0 if res.solver_info.status == "optimal" else 1,
            -(count if count is not None else -1),
            cost if cost is not None else float("inf"),
            run if run is not None else float("inf"),
            -proven)


def choose(results: dict) -> int:
    """The member index whose result the race returns: the best by ``_rank`` (a proof first), ties to the
    earlier member.  Depends only on the results' content and the members' order."""
    return min(results, key=lambda i: (_rank(results[i]), i))


def check_members(members: Sequence[str]) -> list[str]:
    from . import registry
    members = list(dict.fromkeys(members))
    bad = [m for m in members if m not in registry.BACKENDS or m == NAME]
    if bad:
        raise InputError(f"race members: unknown back end(s) {', '.join(bad)} "
                         f"(known: {', '.join(b for b in registry.BACKENDS if b != NAME)})")
    usable = [m for m in members if registry.available(m)]
    if not usable:
        raise InputError(f"race members: none of {', '.join(members)} is installed")
    for m in members:
        if m not in usable:
            log.warning("race: member %s is not installed; racing without it", m)
    return usable


def race_placement(inst, *, members: Sequence[str] = DEFAULT_MEMBERS, options: SolveOptions = SolveOptions(),
                   **kw):
    """Race ``members`` on P1 (keyword arguments as ``solve_placement``); returns a ``PlacementResult``."""
    from ..schedule import SolverInfo
    members = check_members(members)
    if len(members) > cpu_count():
        log.warning("race: %d members on %d cores: they share cores", len(members), cpu_count())
    opts = replace(options, threads=1)
    ctx = _context()
    out = ctx.Queue()
    t0 = time.perf_counter()
    procs = [ctx.Process(target=_member, args=(i, m, inst, opts, kw, out), daemon=True, name=f"race-{m}")
             for i, m in enumerate(members)]
    results: dict[int, object] = {}
    errors: dict[int, str] = {}
    winner = None
    limit = None if options.time_limit_s is None else options.time_limit_s + GRACE_S
    try:
        _start_ignoring_sigint(procs)
        while len(results) + len(errors) < len(procs):
            try:
                batch = [out.get(timeout=POLL_S)]
            except queue.Empty:
                batch = []
                for i, p in enumerate(procs):       # a child that died without reporting
                    if not p.is_alive() and i not in results and i not in errors and p.exitcode not in (0, None):
                        errors[i] = f"process ended with exit code {p.exitcode}"
                if limit is not None and time.perf_counter() - t0 > limit:
                    log.warning("race: no member finished within the time limit + %g s; stopping", GRACE_S)
                    break
                continue
            while True:                                 # everything already available decides together
                try:
                    batch.append(out.get_nowait())
                except queue.Empty:
                    break
            for i, res, err in batch:
                if res is None:
                    errors[i] = err
                else:
                    results[i] = res
            if any(r.solver_info.status == "optimal" for r in results.values()):
                winner = choose(results)
                break
    finally:
        _stop(procs)      # also on KeyboardInterrupt: no child outlives the race
    wall = time.perf_counter() - t0
    summary = [{"member": m, "status": (results[i].solver_info.status if i in results else
                                        ("error" if i in errors else "stopped")),
                "wall_s": results[i].solver_info.wall_s if i in results else None,
                "message": errors.get(i)} for i, m in enumerate(members)]
    if winner is None and results:
        winner = choose(results)
    if winner is None:
        from ..exact.placement import PlacementData, PlacementResult
        data = PlacementData(inst, kw.get("jobs"), kw.get("t0"), kw.get("free_gpus"), kw.get("free_gbps"))
        msg = "; ".join(f"{m}: {errors.get(i, 'no result')}" for i, m in enumerate(members))
        info = SolverInfo(name=NAME, status="time_limit" if not errors else "error", wall_s=wall, build_s=0.0,
                          solve_s=wall, message=f"race: no member returned a result ({msg})",
                          extra={"members": summary})
        return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, [], data.t0)
    res = results[winner]
    si = res.solver_info
    proved = si.status == "optimal"
    extra = dict(si.extra or {}, members=summary, proved_by=members[winner] if proved else None,
                 best_member=members[winner])
    msg = si.message
    if proved:
        log.info("race: %s proved the optimum in %.2f s", members[winner], wall)
    info = replace(si, name=NAME, wall_s=wall, extra=extra,
                   message=msg if proved else (msg or "race: no member proved every level"))
    return replace(res, solver_info=info)


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
