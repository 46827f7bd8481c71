"""Racing portfolio for P1: several back ends on the same placement problem in parallel processes; the first
proof wins (``--solver race``).

    race_placement(inst, members=("highs", "cpsat"), options=SolveOptions(time_limit_s=600), **kw)

Each member runs ``p1.backend.solve_one(inst, solver=member, ...)`` (P1 on one back end) in its own process
(the threads asked for, every core by default, shared out among the members: one each on 2 cores).  Sharing:

* every member starts from the same best start (the caller's warm start when it fits, else the greedy
  placement; HiGHS and SCIP take it as a MIP start, CP-SAT as a complete hint);
* levels (P1.17-P1.19) are shared (``share_levels``, default on): the first member to prove a level sends
  its optimum and the solution attaining it to the parent, which passes it to every other member.  A member
  still solving that level is stopped through its back end's own cancel (``solvers.base.set_external_stop``;
  the process lives on), adopts the level as proven (its optimum fixed for the next levels exactly as its
  own proof would be; CP-SAT fixes it in its scaled units with the scaling error as slack, P1.23) and starts
  the next level from the shared solution (MIP start, or CP-SAT hint).  So every member works on the first
  level nobody has proven, from the best solution anyone has, and the race can finish before its fastest
  member would alone (HiGHS proving level 2, CP-SAT level 3, say).  Nothing is exchanged within a level.  CP-SAT
  takes hints only before it starts and our MathOpt adapter (SCIP) has no callback; HiGHS 1.16 keeps a solution
  handed to its ``cbMipUserSolution`` (``tests/test_race_incumbents.py``; 1.12 dropped it), but sharing CP-SAT's
  incumbents with it is not built: HiGHS proved every level of every race measured, and P1's levels are
  bound-limited (docs/research/highs-1.16/README.md, section 3; models/placement.md section 10).

As soon as one member reports every level proven optimal, all others are stopped (SIGTERM, then SIGKILL after
``STOP_GRACE_S``) and its result is returned with ``solver.extra["proved_by"]`` naming it and
``extra["levels_proved_by"]`` naming the member that proved each level.  If nobody proves within the time
limit, the best result (most jobs, then lowest cost, then lowest run time; proven levels first) is returned
with status ``feasible``.

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

from ...errors import InputError
from ...procs import die_with_parent
from ...schedule import SolverInfo
from ...solvers import base, registry
from ...solvers.base import SolveOptions, available_cores
from .backend import PlacementResult, solve_one
from .data import PlacementData
from .levels import SharedLevel

log = logging.getLogger(__name__)

NAME = "race"
#: the members when none are named: the registry declares them (a race is available when one of them is)
DEFAULT_MEMBERS = registry.RACE_MEMBERS
#: seconds a member asked to stop through its inbox gets to end on its own (its back end's cancel) before it
#: is terminated
POLITE_S = 1.0
STOP_GRACE_S = 2.0      # SIGTERM, then SIGKILL after this
GRACE_S = 10.0          # the parent waits this long past the members' time limit before stopping them
POLL_S = 0.05


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


class _MemberShare:
    """A member's side of the level sharing (a ``p1.levels.LevelShare``): a thread files the levels the
    parent passes on; the level loop takes them, and the running solve is stopped when its level arrives."""

    def __init__(self, i: int, name: str, inbox, out):
        self.i, self.name, self.out = i, name, out
        self._proved: dict = {}
        self._current = 0
        self._lock = threading.Lock()
        self.over = False             # the race is decided: stop whatever runs, solve nothing more
        if inbox is not None:
            threading.Thread(target=self._listen, args=(inbox,), name="race-inbox", daemon=True).start()

    def _listen(self, inbox) -> None:
        while True:
            try:
                got = inbox.get()
            except (EOFError, OSError):
                return
            if got is None:            # the race is over: stop whatever runs (the child then ends normally)
                self.over = True
                return
            with self._lock:
                self._proved.setdefault(got.level, got)

    def stop_wanted(self) -> bool:
        with self._lock:
            return self.over or self._current in self._proved

    def take(self, level: int):
        with self._lock:
            self._current = level
            return self._proved.get(level)

    def publish(self, level: int, objective: float, solution) -> None:
        self.out.put(("level", self.i, SharedLevel(level, float(objective), solution, self.name)))


def _member(i: int, solver: str, inst, options: SolveOptions, kw: dict, out, inbox, parent_pid=None) -> None:
    """Child process: solve (sharing levels through ``inbox``/``out`` when ``inbox`` is given), put
    ("done", i, result or None, error text or None) on ``out``.  The member dies with the parent
    (``procs.die_with_parent``): a parent killed outright (SIGKILL, or SIGTERM where it is not handled) leaves no
    member solving on until its own time limit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C and stops us
    die_with_parent(parent_pid)
    try:
        share = None
        if inbox is not None:
            share = _MemberShare(i, solver, inbox, out)
            base.set_external_stop(share.stop_wanted)
        res = solve_one(inst, solver=solver, options=options, share=share, **kw)
        out.put(("done", i, res, None))
    except BaseException as e:   # report any failure to the parent instead of dying silently
        out.put(("done", i, None, f"{type(e).__name__}: {e}"))


class _LocalMember:
    """The first member runs in the parent process, in a thread, so it pays no process start-up (interpreter,
    imports): the race is never later than that member alone by more than the CPU the others take from it.
    It looks like a ``Process`` to the race: ``terminate`` sets its share's ``over`` flag, which cancels the
    running level through the back end's own cancel (``solvers.base.set_external_stop``) and every later
    level at once."""

    def __init__(self, i: int, solver: str, inst, options: SolveOptions, kw: dict, out, inbox):
        self.name = f"race-{solver}"
        self.share = _MemberShare(i, solver, inbox, out)
        self._thread = threading.Thread(target=self._run, args=(i, solver, inst, options, kw, out, inbox is not None),
                                        name=self.name, daemon=True)
        self.pid = None

    def _run(self, i, solver, inst, options, kw, out, sharing) -> None:
        base.set_external_stop(self.share.stop_wanted)
        try:
            res = solve_one(inst, solver=solver, options=options, share=self.share if sharing else None, **kw)
            out.put(("done", i, res, None))
        except BaseException as e:   # report any failure to the race like a child would
            out.put(("done", i, None, f"{type(e).__name__}: {e}"))

    def start(self) -> None:
        self._thread.start()
        self.pid = os.getpid()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def exitcode(self):
        return None if self._thread.is_alive() else 0

    def terminate(self) -> None:
        self.share.over = True

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def kill(self) -> None:
        if self._thread.is_alive():      # its back end did not stop in time: the command line will not wait
            base.ABANDONED.append(self.name)


def _stop(procs, polite: bool = False) -> None:
    """End every member: with ``polite`` (they were asked to stop through their inboxes) they get up to
    ``POLITE_S`` to end on their own first; then terminate, and kill what is left after ``STOP_GRACE_S``."""
    procs = [p for p in procs if p.pid is not None]     # a member whose start failed was never started
    if polite:
        deadline = time.monotonic() + POLITE_S
        for p in procs:
            if isinstance(p, _LocalMember):
                p.terminate()                            # (sets its flag: the same request)
            else:
                p.join(max(deadline - time.monotonic(), 0.0))
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
    members = list(dict.fromkeys(members))
    ok = [b for b, spec in registry.BACKENDS.items() if spec.kind != "race"]
    bad = [m for m in members if m not in ok]
    if bad:
        raise InputError(f"race members: unknown back end(s) {', '.join(bad)} (known: {', '.join(ok)})")
    usable = [m for m in members if registry.available(m)]
    if not usable:
        raise InputError(f"race members: none of {', '.join(members)} is installed")
    for m in members:
        if m not in usable:
            log.warning("race: member %s is not installed; racing without it", m)
    return usable


def race_placement(inst, *, members: Sequence[str] = DEFAULT_MEMBERS, options: SolveOptions = SolveOptions(),
                   share_levels: bool = True, in_process: bool = True, **kw):
    """Race ``members`` on P1 (keyword arguments as ``placement.solve_placement``); returns a ``PlacementResult``.
    ``share_levels``: pass each level's first proof on to the other members (module doc).  ``in_process``: the
    first member runs in this process (a thread; ``_LocalMember``), the others in spawned processes."""
    members = check_members(members)
    if len(members) > available_cores():
        log.warning("race: %d members on %d cores: they share cores", len(members), available_cores())
    # the members share the cores: each gets its share of the threads asked for (every core by default), at least 1
    total = options.threads if options.threads is not None else available_cores()
    opts = replace(options, threads=max(1, total // len(members)))
    ctx = _context()
    out = ctx.Queue()
    t0 = time.perf_counter()
    sharing = share_levels and len(members) > 1
    inboxes = [(queue.Queue() if i == 0 and in_process else ctx.Queue()) if sharing else None
               for i in range(len(members))]
    procs = [_LocalMember(i, m, inst, opts, kw, out, inboxes[i]) if i == 0 and in_process else
             ctx.Process(target=_member, args=(i, m, inst, opts, kw, out, inboxes[i], os.getpid()), daemon=True,
                         name=f"race-{m}") for i, m in enumerate(members)]
    proved_by: dict[int, str] = {}     # level -> the member that proved it first
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
            for kind, i, res, err in ((m[0], m[1], m[2], m[3] if len(m) > 3 else None) for m in batch):
                if kind == "level":
                    if res.level not in proved_by:       # the first proof of this level: pass it on
                        proved_by[res.level] = members[i]
                        log.info("race: %s proved level %d (%.2f s)", members[i], res.level,
                                 time.perf_counter() - t0)
                        for k, box in enumerate(inboxes):
                            if k != i and box is not None and k not in results and k not in errors:
                                box.put(res)
                elif res is None:
                    errors[i] = err
                else:
                    results[i] = res
            if any(r.solver_info.status == "optimal" for r in results.values()):
                winner = choose(results)
                break
    finally:
        for box in inboxes:     # asks every member to stop and end on its own (its listener sets ``over``),
            if box is not None:  # so that a child releases what it holds (else Python warns of leaked
                box.put(None)    # semaphores at exit); then _stop terminates whatever is still running
        _stop(procs, polite=any(box is not None for box in inboxes))   # also on KeyboardInterrupt
        for box in inboxes:     # a stopped member may leave data unread: never wait on it at exit
            if box is not None and hasattr(box, "cancel_join_thread"):
                box.cancel_join_thread()
                box.close()
        out.cancel_join_thread()     # (not closed: an abandoned in-process member may still report into it)
    wall = time.perf_counter() - t0
    summary = [{"member": m, "status": (results[i].solver_info.status if i in results else
                                        ("error" if i in errors else "stopped")),
                "wall_s": results[i].solver_info.wall_s if i in results else None,
                "message": errors.get(i)} for i, m in enumerate(members)]
    if winner is None and results:
        winner = choose(results)
    if winner is None:
        data = PlacementData(inst, kw.get("jobs"), kw.get("t0"), kw.get("free_gpus"), kw.get("free_gbps"))
        msg = "; ".join(f"{m}: {errors.get(i, 'no result')}" for i, m in enumerate(members))
        info = SolverInfo(name=NAME, status="time_limit" if not errors else "error", wall_s=wall, build_s=0.0,
                          solve_s=wall, message=f"race: no member returned a result ({msg})",
                          extra={"members": summary})
        return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, [], data.t0)
    res = results[winner]
    si = res.solver_info
    proved = si.status == "optimal"
    levels_by = {r["level"]: (members[winner] if "(race)" not in (r.get("message") or "") else
                              proved_by.get(r["level"])) for r in res.levels if r["status"] == "optimal"}
    extra = dict(si.extra or {}, members=summary, proved_by=members[winner] if proved else None,
                 best_member=members[winner], levels_proved_by=levels_by)
    msg = si.message
    if proved:
        log.info("race: %s proved the optimum in %.2f s", members[winner], wall)
    info = replace(si, name=NAME, wall_s=wall, extra=extra,
                   message=msg if proved else (msg or "race: no member proved every level"))
    return replace(res, solver_info=info)
