"""P1 with the proofs of levels 2 and 3 split over worker processes (``--solver highs-split``; issue 11, sixth
round; models/placement.md section 9f).

HiGHS's branch and bound is serial, so a second core helps only through a second search.  Here each level's
proof is partitioned: the region-use binaries u[j,r] of the walk model chosen by the root LP (most fractional,
weighted by the job's stage count; ``SPLIT_PARTS`` = 2^d parts for d such binaries) are fixed to every
combination of 0 and 1, and the parts go to a small work queue served by ``workers`` persistent processes
(one per core by default), each of which builds the walk model once and then solves parts one after another
(one HiGHS thread each).  Because u is binary, the parts partition the level's feasible set, so

* level 2 (min cost) = the least of the parts' optima.  A part whose search starts after a better placement
  is known gets that placement's cost B as HiGHS's ``objective_bound`` (a cutoff): a part proven to hold
  nothing below B contributes nothing, and the placement of cost B is kept.  The level is proven when every
  part is proven (optimal or infeasible under its cutoff); else the level reports its best placement with
  the least of the parts' bounds (None when a part has none);
* level 3 (min run time, proven by cost minimization under a shorter run-time cut, P1.45 with the cutoff
  P1.51) is proven when every part's proof is; a part that finds a shorter placement proves its own part's
  optimum, and the level's optimum is the least of the parts' (the incumbent's run time included).

A level may also be run as several groups of parts, each covering the whole feasible set (``plan_groups``:
"parts", "seeds" = a race of two whole searches with different HiGHS seeds, "whole"); it is proven by the first
group whose every part is, and the parts still running are then cancelled through HiGHS's own cancel.  By
default (measured, benchmarks/README.md, sixth round) level 2 runs whole, in the calling process while the
workers start (``LEVEL2_HERE``), and level 3 in two parts on the workers.

Exclusions (section 9g, seventh round): while level 2 runs in the calling process, the free worker proves level 2
on the candidates' halves the start is not in (``EXCLUDE``, a chain of ``EXCLUDE_CHAIN``); a set proven to hold
nothing costing <= the level-2 limit holds no level-3 point, so level 3's parts are the leaves of a decision tree
over the candidates with those sets (and any level-2 part proven the same way) dropped.

Level 1 (count) is decided in the calling process (by the GPU-count bound when the start reaches it, else by
one plain solve), as is the choice of the split binaries; the parent never runs two HiGHS searches at
once (two HiGHS solves in threads of one process hung, benchmarks/README.md, fifth round).  Workers are
*spawned* with SIGINT ignored (a solve running in one cancels itself on Ctrl-C); Ctrl-C in the parent ends
them (None on their queue and a cancel, then SIGTERM and SIGKILL) before it propagates, as in ``solvers.race``.  Negative prices (the walk model is not exact there) or a formulation other than walk
fall back to the plain serial solve.
"""
from __future__ import annotations

import logging
import math
import queue
import signal
import time
from dataclasses import replace
from itertools import product

from ..solvers.base import SolveOptions, SolveResult, Termination, relative_gap
from .placement_levels import LEVEL_TOL, clears_limit, level_record, remaining_s

log = logging.getLogger(__name__)

NAME = "highs-split"
#: number of parts of each level's proof (a power of two: 2^d parts for d split binaries); the
#: ``backend_options`` key ``split_parts`` overrides it per solve
SPLIT_PARTS = 2
#: worker processes (None: one per core, at most the number of parts); ``split_workers`` overrides it
SPLIT_WORKERS: int | None = None
#: how levels 2 and 3 are run (``plan_groups``): "parts" (the 2^d parts), "seeds" (a race of two whole searches
#: with HiGHS random seeds s and s + 1), "whole" (one search in a worker); ``split_l2`` / ``split_l3`` override
SPLIT_L2 = "whole"      # measured: level 2's parts cost about as much as the whole each (benchmarks/README.md,
SPLIT_L3 = "parts"      # sixth round), level 3's halves 0.74-0.77x of the whole (CPU)
#: level-3 parts start on workers left idle in level 2's tail, from the best level-2 placement known then; they
#: count only if level 2 ends on that placement (models/placement.md section 9f).  Off: a part reports its
#: placement only when it ends, so the part still running usually holds the final one and the speculative work
#: was thrown away in every measured run (benchmarks/README.md, sixth round), while it takes CPU from it
SPECULATE = False
#: with level 2 "whole", the calling process solves it itself (no wait for the workers' start-up; they take
#: level 3's parts), exactly as the plain level driver does
LEVEL2_HERE = True
#: a level-2 part's cutoff is the best known cost times (1 + this) (the level tolerance)
CUTOFF_SLACK = LEVEL_TOL
#: exclusions (models/placement.md section 9g): while level 2 runs whole in the calling process, each idle worker
#: (one per core the calling process leaves free) solves level 2 on one half {u[j,r] != the start's value} of a split candidate, under the cutoff start cost x
#: (1 + EXCLUDE_SLACK).  A half proven to hold no placement costing <= the level-2 limit Z holds no level-3
#: solution either, so level 3 is proven on the rest only (and a level-3 part inside an excluded half is dropped)
EXCLUDE = True
#: the exclusions' cutoff slack: above LEVEL_TOL so that a half proven empty under it is empty under Z even
#: when the start is optimal (Z = z2 (1 + LEVEL_TOL) <= start cost (1 + LEVEL_TOL) < the cutoff)
EXCLUDE_SLACK = 1e-6
#: exclusions per worker, one after another (a chain, section 9g): the next one is restricted to the start's
#: side of the previous one when that one is excluded whatever level 2 ends on
EXCLUDE_CHAIN = 4
#: after level 2, wait up to this long for the exclusion chains to end before level 3 is planned (0: take what has
#: ended; the tests set it so that the chains' answers are all in, whatever the timing)
EXCLUDE_WAIT_S = 0.0
#: level 3's further splits of the one region the exclusions leave are ranked by the root LP restricted to it
RERANK = True
#: the parent waits this long past the time limit before giving up on the workers
GRACE_S = 10.0
POLL_S = 0.05
#: planted errors for the exactness tests (None in use): "drop_best" ignores the answer of a part that holds a
#: better placement (as if that part had been dropped), "max_part" keeps the worse of two level-2 placements
#: instead of the better (the min taken wrongly)
PLANT: str | None = None


# ---------------------------------------------------------------------------------------------- worker side

def _worker(wid: int, inst, kw: dict, inbox, out, cancel) -> None:
    """A persistent worker: builds the walk model once, then solves the parts it is sent ("l2", "l3") until it
    gets None.  Puts ("ready", wid, cpu, None), then ("done", wid, part, answer) per part, or ("error", ...).
    ``cancel`` (an Event) set by the parent stops the running part through HiGHS's own cancel."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C and stops us
    logging.getLogger("pyomo").setLevel(logging.ERROR)   # starts loaded across fixed u, cancelled parts: no noise
    try:
        from ..solvers import base
        from . import placement_walk as fm
        from .placement_data import PlacementData
        base.set_external_stop(cancel.is_set)
        data = PlacementData(inst, **kw)
        m = fm.build_model(data)
        out.put(("ready", wid, time.process_time(), None))
        state: dict = {"z1": None, "limit": None}
        while True:
            task = inbox.get()
            if task is None:
                return
            cancel.clear()
            c0 = time.process_time()
            try:
                ans = _exclusion_chain(m, fm, state, task, out, wid, cancel) if task["kind"] == "x2" else \
                    _solve_part(m, fm, state, task)
            except Exception as e:        # a failed part leaves the level unproven; the parent decides
                ans = {"status": Termination.ERROR.value, "message": f"{type(e).__name__}: {e}"}
            ans["cpu"] = time.process_time()
            ans["cpu_s"] = ans["cpu"] - c0
            out.put(("done", wid, task["part"], ans))
    except BaseException as e:   # report any failure to the parent instead of dying silently
        out.put(("error", wid, None, f"{type(e).__name__}: {e}"))


def _fix(m, fixes):
    saved = []
    for (j, r), val in fixes:
        v = m.u[j, r]
        saved.append((v, v.lb, v.ub))
        v.setlb(val)
        v.setub(val)
    return saved


def _unfix(saved) -> None:
    for v, lb, ub in saved:
        v.setlb(lb)
        v.setub(ub)


def _solve_part(m, fm, state: dict, task: dict) -> dict:
    import pyomo.environ as pyo
    from . import placement_milp as M
    from ..solvers.highs import solve_pyomo
    if state["z1"] is None:                 # levels 2 and 3 are solved with level 1's count fixed
        state["z1"] = task["z1"]
        fm.prepare_level(m, 2, task["z1"])
        m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= task["z1"])
    opts: SolveOptions = replace(task["options"], seed=task["seed"])
    t = time.perf_counter()
    for o in (m.obj_count, m.obj_cost, m.obj_run):
        o.deactivate()
    saved = _fix(m, task["fixes"])
    try:
        if task["kind"] in ("l2", "x2"):         # a level-2 part, or an exclusion (a level-2 part as well)
            m.obj_cost.activate()
            if hasattr(m, "con_level2"):
                m.con_level2.deactivate()
            warm = task["start"] is not None and fm.load_solution_into_pyomo(m, task["start"]) is not False
            bopts = dict(opts.backend_options)
            if task["cutoff"] is not None and not warm:
                bopts["objective_bound"] = task["cutoff"]
            res = solve_pyomo(m, replace(opts, backend_options=bopts), warm_start=warm,
                              time_limit_s=task["time_limit_s"])
            ans = {"status": res.termination.value, "objective": res.objective, "bound": res.bound,
                   "nodes": res.nodes, "solve_s": res.solve_s, "message": res.message, "solution": None}
            if res.has_solution:
                z = max(pyo.value(m.obj_cost.expr), res.objective)     # as the level driver fixes it
                sol = fm.solution_from_pyomo(m)
                ans.update(solution=sol, z=z)
        else:
            if state["limit"] != task["limit"]:
                if hasattr(m, "con_level2"):
                    m.del_component(m.con_level2)
                m.level2_limit = task["limit"]
                m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
                state["limit"] = task["limit"]
            m.con_level2.activate()
            m.obj_run.activate()
            o3 = replace(opts, time_limit_s=task["time_limit_s"])
            res, sol = M._level3_by_cost(m, fm, task["start"], "highs", o3, time.perf_counter())
            ans = {"status": res.termination.value, "objective": res.objective, "bound": res.bound,
                   "nodes": res.nodes, "solve_s": res.solve_s, "message": res.message,
                   "solution": sol if res.has_solution else None}
    finally:
        _unfix(saved)
    ans["wall_s"] = time.perf_counter() - t
    return ans


def _exclusion_chain(m, fm, state: dict, task: dict, out, wid: int, cancel) -> dict:
    """A worker's exclusions (section 9g), one after another: for each candidate (b, s) of ``task["chain"]`` (s the
    start's value), level 2 on prefix + {b != s} under the cutoff; each answer is sent at once as ("xpart", wid,
    k, answer with its "fixes").  The prefix grows by {b = s} after an exclusion whose bound exceeds ``task["sure"]``
    (the largest level-2 limit possible: the start's cost (1 + LEVEL_TOL)) by the margin, so excluded whatever level
    2 ends on; after any other answer the next exclusion is a plain half.  Stops when cancelled."""
    prefix: tuple = ()
    done = 0
    for k, (b, s) in enumerate(task["chain"]):
        if cancel.is_set():
            break
        fixes = prefix + ((b, 1 - s),)
        c1 = time.process_time()
        try:
            a = _solve_part(m, fm, state, dict(task, fixes=fixes))
        except Exception as e:
            a = {"status": Termination.ERROR.value, "message": f"{type(e).__name__}: {e}"}
        a.update(fixes=fixes, cpu=time.process_time(), cpu_s=time.process_time() - c1, solution=None)
        out.put(("xpart", wid, k, a))
        done += 1
        sure = _excludes(dict(a, cutoff_used=task["cutoff"]), task["sure"], task["options"].rel_gap)
        prefix = prefix + ((b, s),) if sure else ()
    return {"status": "done", "exclusions": done}


# ---------------------------------------------------------------------------------------------- parent side

def split_candidates(m, data, limit: int, fixes=()) -> list[tuple[float, tuple[int, int]]]:
    """Up to ``limit`` region-use binaries u[j,r] to split on: the root LP's (level 2's, as ``m`` stands, with
    ``fixes`` ((j, r), 0/1) applied) fractional ones ranked by min(u, 1 - u) times the job's stage count, best first
    (ties by index)."""
    import pyomo.environ as pyo
    from pyomo.contrib.appsi.solvers.highs import Highs
    if limit <= 0:
        return []
    r = m.clone()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(r)
    for idx, val in fixes:
        r.u[idx].setlb(val)
        r.u[idx].setub(val)
    opt = Highs()
    res = opt.solve(r)
    if res.best_feasible_objective is None:
        return []
    stages = {d.j: d.S for d in data.jobs}
    cand = []
    for idx in r.u:
        v = r.u[idx].value
        if v is None:
            continue
        score = min(v, 1.0 - v) * stages[idx[0]]
        if score > 1e-6:
            cand.append((score, idx))
    cand.sort(key=lambda c: (-c[0], c[1]))
    return cand[:limit]


def _parts(split_vars, first=None) -> list[tuple]:
    """Every 0/1 combination of the split binaries as a tuple of ((j, r), value); the one holding ``first`` (a
    dict (j, r) -> 0/1, the incumbent's values) first, the others in lexicographic order."""
    combos = list(product((0, 1), repeat=len(split_vars)))
    if first is not None:
        key = tuple(first.get(v, 0) for v in split_vars)
        combos.sort(key=lambda c: (c != key, c))
    return [tuple(zip(split_vars, c)) for c in combos]


def _u_values(data, sol) -> dict:
    """(j, r) -> 1 when the placement ``sol`` puts stages of job j in region r, else 0."""
    return {(d.j, r): int(sol.x.get(d.j, 0) > 0.5 and sol.n.get((d.j, r), 0) > 0.5) for d in data.jobs
            for r in d.regions}


def _in_part(uvals: dict, fixes) -> bool:
    return all(uvals.get(v, 0) == val for v, val in fixes)


def plan_groups(strategy: str, split_vars, first, seed: int) -> list[list[dict]]:
    """The partitions a level's proof is run as: a list of groups, each a list of parts (dicts with the
    fixed binaries ``fixes`` and the HiGHS ``seed``); the level is proven as soon as every part of one group is.
    "parts": one group, the 2^d parts of ``split_vars``; "seeds": one group per worker seed, each the whole
    level (a race of searches that differ in HiGHS's random seed); "whole": one group, one part."""
    if strategy == "parts":
        return [[{"fixes": f, "seed": seed} for f in _parts(split_vars, first)]]
    if strategy == "seeds":
        return [[{"fixes": (), "seed": seed + g}] for g in range(2)]
    if strategy == "whole":
        return [[{"fixes": (), "seed": seed}]]
    raise ValueError(f"highs-split: unknown strategy {strategy!r} (parts, seeds, whole)")


class _Pool:
    """The workers and their work queue (the parent's side).  ``running`` maps a busy worker to its task."""

    def __init__(self, inst, kw: dict, n: int):
        from ..solvers.race import _context, _start_ignoring_sigint
        ctx = _context()
        self.out = ctx.Queue()
        self.inboxes = [ctx.Queue() for _ in range(n)]
        self.cancel = [ctx.Event() for _ in range(n)]
        self.procs = [ctx.Process(target=_worker, args=(i, inst, kw, self.inboxes[i], self.out, self.cancel[i]),
                                  daemon=True, name=f"split-{i}") for i in range(n)]
        self.idle: list[int] = []
        self.running: dict[int, dict] = {}
        self.cpu = [0.0] * n
        self.dead: dict[int, str] = {}
        _start_ignoring_sigint(self.procs)

    def _send(self, w: int, task: dict) -> None:
        task["prepare"](task)
        self.inboxes[w].put({k: v for k, v in task.items() if k not in ("prepare", "on_done", "on_part")})
        self.running[w] = task

    def post(self, w: int, task: dict) -> None:
        """Send ``task`` to worker ``w`` now, even if it is still building its model (it starts the task when
        ready).  Used for the exclusions handed out before level 2 runs in the calling process."""
        if w in self.idle:
            self.idle.remove(w)
        self._send(w, task)

    def drop(self, pred) -> None:
        """Cancel the running tasks for which ``pred(task)`` holds (their answers will not be passed on)."""
        for w, task in self.running.items():
            if pred(task) and not task.get("cancelled"):
                task["cancelled"] = True
                self.cancel[w].set()

    def _reap(self) -> None:
        for i, p in enumerate(self.procs):
            if not p.is_alive() and i not in self.dead:
                self._lost(i, f"worker ended with exit code {p.exitcode}")

    def _lost(self, w: int, why: str) -> None:
        self.dead[w] = why
        if w in self.idle:
            self.idle.remove(w)
        task = self.running.pop(w, None)
        if task is not None and not task.get("cancelled"):
            task["on_done"](task, {"status": Termination.ERROR.value, "message": why})

    def run(self, kind: str, pending: list[dict], finished, deadline: float | None, spare=None,
            skip=None) -> None:
        """Hand ``pending`` tasks (in order) to idle workers, then, while workers are idle and ``spare()`` offers
        one, tasks of the next level (speculative; they may outlive this call).  Each answer goes to its task's
        ``on_done(task, answer)``; ``task["prepare"](task)`` is called just before a task is sent.  Once
        ``finished()`` holds, the running tasks of ``kind`` are cancelled and the rest are not sent.  Returns
        when no task of ``kind`` is pending or running, at ``deadline`` (perf_counter) + GRACE_S, or when no
        worker is left.  ``skip(task)``: a task no longer needed (not sent; cancelled if running)."""
        pending = list(pending)
        while True:
            if skip is not None:
                pending = [t for t in pending if not skip(t)]
                self.drop(lambda t: t["kind"] == kind and skip(t))
            if finished():
                pending = []
                self.drop(lambda t: t["kind"] == kind)
            while self.idle and pending:
                self._send(self.idle.pop(0), pending.pop(0))
            while self.idle and spare is not None and not finished():
                task = spare()
                if task is None:
                    break
                self._send(self.idle.pop(0), task)
            if not pending and not any(t["kind"] == kind for t in self.running.values()):
                return
            if len(self.dead) == len(self.procs):
                for task in pending:
                    task["on_done"](task, {"status": Termination.ERROR.value, "message": "no worker left"})
                return
            if not self._pump() and deadline is not None and time.perf_counter() > deadline + GRACE_S:
                log.warning("highs-split: parts still running past the time limit; giving up on them")
                return

    def _pump(self) -> bool:
        """Take one worker message (waiting up to POLL_S); False when none came (dead workers reaped then)."""
        try:
            msg = self.out.get(timeout=POLL_S)
        except queue.Empty:
            self._reap()
            return False
        self._take(msg)
        return True

    def _take(self, msg) -> None:
        kind, w, part, ans = msg
        if kind == "ready":
            self.cpu[w] = part
            if w not in self.running:           # a posted task is waiting for it
                self.idle.append(w)
        elif kind == "xpart":                   # one exclusion of a chain; the worker goes on with the next
            self.cpu[w] = ans.get("cpu", self.cpu[w])
            task = self.running.get(w)
            if task is not None and not task.get("cancelled"):
                task["on_part"](task, part, ans)
        elif kind == "error":
            self._lost(w, ans)
        else:
            self.cpu[w] = ans.get("cpu", self.cpu[w])
            task = self.running.pop(w, None)
            self.idle.append(w)
            if task is not None and not task.get("cancelled"):
                task["on_done"](task, ans)

    def wait_kind(self, kind: str, until: float) -> None:
        """Take the workers' messages until no task of ``kind`` runs or ``until`` (perf_counter) has passed."""
        while any(t["kind"] == kind for t in self.running.values()) and time.perf_counter() < until:
            self._pump()

    def drain(self) -> None:
        """Take every message already sent by the workers (answers wait in the queue while the calling process
        solves level 2 itself), without blocking."""
        while True:
            try:
                msg = self.out.get_nowait()
            except queue.Empty:
                self._reap()
                return
            self._take(msg)

    def wait_ready(self, deadline: float | None) -> None:
        """Block until every live worker has built its model (so that the first parts start together)."""
        while len(self.idle) + len(self.dead) < len(self.procs):
            if not self._pump() and deadline is not None and time.perf_counter() > deadline + GRACE_S:
                return

    def stop(self) -> None:
        from ..solvers.race import _stop
        for w, box in enumerate(self.inboxes):
            try:
                box.put(None)           # an idle worker ends on its own (a busy one is cancelled first)
                self.cancel[w].set()
            except Exception:
                pass
        end = time.monotonic() + 1.0
        for p in self.procs:
            p.join(max(end - time.monotonic(), 0.0))
        _stop(self.procs)
        for box in self.inboxes + [self.out]:
            box.cancel_join_thread()
            box.close()
        for p in self.procs:
            if not p.is_alive():
                p.close()
        # drop the queues and events now (their semaphores are released when collected, not at exit)
        self.inboxes, self.out, self.cancel, self.procs = [], None, [], []


def _proven(level: int, status: str) -> bool:
    """A part's answer proves its part: level 2 optimal or infeasible (under its cutoff), level 3 optimal."""
    if level == 2:
        return status in (Termination.OPTIMAL.value, Termination.INFEASIBLE.value)
    return status == Termination.OPTIMAL.value


def _complete(level: int, groups, answers) -> int | None:
    """The first group whose every part is answered and proven, else None."""
    for g, parts in enumerate(groups):
        if all(p["id"] in answers and _proven(level, answers[p["id"]]["status"]) for p in parts):
            return g
    return None


def solve_levels_split(inst, kw: dict, data, options: SolveOptions, warm_start, levels: int, t_start: float):
    """The sequential levels (P1.17-P1.19) with levels 2 and 3 split over worker processes (module doc).
    ``kw``: the PlacementData arguments (jobs, t0, free_gpus, free_gbps) the workers rebuild the data from.
    Returns (solution, level records, build seconds, extra) like ``solve_levels_milp`` plus an ``extra`` dict
    (the split binaries, per-part figures, the workers' CPU seconds)."""
    import pyomo.environ as pyo
    from . import placement_milp as M
    from . import placement_walk as fm
    from .placement_data import count_upper_bound, has_negative_prices
    from .placement_solution import Solution, start_candidates
    from ..solvers.race import cpu_count
    bopts = dict(options.backend_options)
    n_parts = int(bopts.pop("split_parts", SPLIT_PARTS))
    n_workers = bopts.pop("split_workers", SPLIT_WORKERS)
    how = {2: bopts.pop("split_l2", SPLIT_L2), 3: bopts.pop("split_l3", SPLIT_L3)}
    options = replace(options, backend_options=bopts, threads=1)
    if has_negative_prices(data):
        log.info("highs-split: a price at t0 is negative; the plain serial solve (position formulation)")
        sol, lv, build_s = M.solve_levels_milp(data, "highs", options, warm_start, levels, t_start, "walk")
        return sol, lv, build_s, {"split": "none (negative prices)"}
    depth = max(0, int(round(math.log2(max(n_parts, 1)))))
    n_workers = int(n_workers) if n_workers else max(1, min(cpu_count(), max(2 ** depth, 2)))
    pool = _Pool(inst, kw, n_workers) if levels >= 2 else None
    extra: dict = {"workers": n_workers, "strategy": {f"level{k}": v for k, v in how.items()}}
    try:
        tb = time.perf_counter()
        m = fm.build_model(data)
        cands = start_candidates(data, warm_start)
        ws = None
        for cand in cands:
            if fm.load_solution_into_pyomo(m, cand) is not False:
                ws = cand
                break
        build_s = time.perf_counter() - tb
        lv: list[dict] = []
        # ---- level 1 in this process (normally proven by the GPU-count bound at once)
        ub1 = count_upper_bound(data)
        m.obj_cost.deactivate(); m.obj_run.deactivate(); m.obj_count.activate()
        if ws is not None and sum(1 for v in ws.x.values() if v > 0.5) >= ub1:
            res = SolveResult("highs", Termination.OPTIMAL, objective=-float(ub1), bound=-float(ub1),
                              message="proven by the GPU-count bound (the start reaches it)")
            sol = ws
        else:
            if ws is None:
                fm.load_solution_into_pyomo(m, Solution({}, {}, {}, {}))
            res = M._run_backend(m, "highs", options, ws is not None, remaining_s(options, t_start))
            sol = fm.solution_from_pyomo(m) if res.has_solution else None
        lv.append(level_record(1, res, build_s))
        if sol is None or levels < 2:
            return sol, lv, build_s, extra
        z1 = int(round(-res.objective))
        start = ws if ws is not None and sum(1 for v in ws.x.values() if v > 0.5) >= z1 else sol
        # ---- the split binaries: the level-2 root LP (count cuts P1.41 and the count fixed)
        tp = time.perf_counter()
        fm.prepare_level(m, 2, z1)
        m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
        m.obj_count.deactivate(); m.obj_cost.activate()
        need = depth if "parts" in how.values() else 0
        # level 3 planned over what level 2's answers leave (section 9g): the exclusion chains (with level 2 whole
        # in this process) and the level-2 parts proven to hold nothing within the limit
        plan_x = EXCLUDE and how[3] == "parts" and levels >= 3 and not SPECULATE and need > 0
        excl = plan_x and how[2] == "whole" and LEVEL2_HERE
        # one exclusion per core the calling process leaves free (it runs level 2 meanwhile): on 2 cores one, as
        # a second exclusion would slow level 2 itself (measured: 55 s against 44 s on realistic seed 2)
        n_excl = max(0, min(n_workers, cpu_count() - 1)) if excl else 0
        cands = [idx for _, idx in split_candidates(m, data, n_excl * EXCLUDE_CHAIN + need + 1)]
        split_vars = cands[:need]
        extra["split"] = [f"u[{j},{r}]" for j, r in split_vars]
        prep_s = time.perf_counter() - tp
        log.info("highs-split: levels 2 / 3 as %s / %s; split binaries %s (%d workers), chosen in %.2f s",
                 how[2], how[3], ", ".join(extra["split"]) or "none", n_workers, prep_s)
        fm.load_solution_into_pyomo(m, start)
        c_start = pyo.value(m.obj_cost.expr)
        deadline = None if options.time_limit_s is None else t_start + options.time_limit_s
        here = how[2] == "whole" and LEVEL2_HERE
        if not here:
            pool.wait_ready(deadline)
            log.info("highs-split: workers ready, solver running in parts (Ctrl-C aborts)")
        # ---- level 2, with level 3's parts started speculatively on workers idle in level 2's tail
        t2 = time.perf_counter()
        best = {"z": c_start, "sol": start}
        groups = _number(plan_groups(how[2], split_vars, _u_values(data, start), options.seed))
        answers: dict[int, dict] = {}
        parts = {p["id"]: p for g in groups for p in g}
        # exclusions (section 9g): worker w proves level 2 on the half of candidate w that the start is not in
        xans: dict = {}                    # (worker, k) -> the k-th answer of the worker's exclusion chain

        def prepx(task):
            task["start"] = None
            task["cutoff"] = best["z"] * (1 + EXCLUDE_SLACK)
            task["time_limit_s"] = remaining_s(options, t_start)

        def donex(task, ans):
            pass                        # the chain's answers came one by one (on_part)

        def partx(task, k, ans):
            xans[(task["part"], k)] = dict(ans, cutoff_used=task["cutoff"])

        if excl:
            su = _u_values(data, start)
            chain_vars = cands[:n_excl * EXCLUDE_CHAIN]
            for w in range(n_excl):
                chain = [(v, su.get(v, 0)) for v in chain_vars[w::n_excl]]
                pool.post(w, {"kind": "x2", "part": w, "chain": chain, "fixes": (), "seed": options.seed, "z1": z1,
                              "options": options, "sure": c_start * (1 + LEVEL_TOL), "prepare": prepx,
                              "on_done": donex, "on_part": partx})

        def prep2(task):
            inside = _in_part(_u_values(data, best["sol"]), task["fixes"])
            task["start"] = best["sol"] if inside else None       # a MIP start where the best placement lies,
            task["cutoff"] = None if inside else best["z"] * (1 + CUTOFF_SLACK)     # its cost as cutoff elsewhere
            task["time_limit_s"] = remaining_s(options, t_start)

        def done2(task, ans):
            answers[task["part"]] = dict(ans, cutoff_used=task["cutoff"])
            if ans.get("solution") is None or ans.get("z") is None:
                return
            if (ans["z"] > best["z"]) if PLANT == "max_part" else (ans["z"] < best["z"]):
                if PLANT == "drop_best":
                    return              # planted: the part that holds a better placement is ignored
                best.update(z=ans["z"], sol=ans["solution"])

        l3: dict = {"groups": None, "queue": None, "answers": {}, "spec": 0}

        def prep3(task):                # level 3 from the best level-2 placement known now, under its limit
            task["start"] = best["sol"]
            task["limit"] = best["z"] + LEVEL_TOL * max(abs(best["z"]), 1e-9)
            task["time_limit_s"] = remaining_s(options, t_start)

        def done3(task, ans):
            l3["answers"][task["part"]] = (task, ans)

        def plan3():
            if l3["groups"] is None:
                l3["groups"] = _number(plan_groups(how[3], split_vars, _u_values(data, best["sol"]), options.seed))
                l3["queue"] = _tasks("l3", l3["groups"], z1, options, prep3, done3)
            return l3["queue"]

        def spare():
            if levels < 3 or not SPECULATE or not plan3():
                return None
            l3["spec"] += 1
            return l3["queue"].pop(0)

        if here:                # level 2 whole in this process while the workers start (they take level 3)
            task = {"part": groups[0][0]["id"], "cutoff": None}
            warm = fm.load_solution_into_pyomo(m, start) is not False
            c0 = time.process_time()
            res = M._run_backend(m, "highs", replace(options, seed=groups[0][0]["seed"]), warm,
                                 remaining_s(options, t_start))
            ans = {"status": res.termination.value, "objective": res.objective, "bound": res.bound,
                   "nodes": res.nodes, "solve_s": res.solve_s, "message": res.message, "solution": None,
                   "wall_s": res.solve_s, "cpu_s": time.process_time() - c0}
            if res.has_solution:
                ans.update(z=max(pyo.value(m.obj_cost.expr), res.objective), solution=fm.solution_from_pyomo(m))
            done2(task, ans)
        else:
            pool.run("l2", _tasks("l2", groups, z1, options, prep2, done2),
                     lambda: _complete(2, groups, answers) is not None, deadline, spare)
        res2 = _combine2(groups, answers, best, time.perf_counter() - t2)
        rec = level_record(2, res2, prep_s)
        rec["parts"] = _part_rows(parts, answers)
        lv.append(rec)
        sol, z2 = best["sol"], best["z"]
        if levels < 3:
            return sol, lv, build_s, _extra(extra, pool)
        # ---- level 3 (the proof by cost minimization, P1.45 with the cutoff P1.51, in every part).  A part
        # started during level 2 counts only if level 2 ended on the placement and limit it started from
        limit = z2 + LEVEL_TOL * max(abs(z2), 1e-9)

        def valid(task):
            return task.get("start") is sol and task.get("limit") == limit       # (a task never sent has neither)

        def excluded() -> list:
            """The sets proven (so far) to hold no placement costing <= the level-2 limit (their fixes): the
            exclusions, and the level-2 parts (a level-2 part is an exclusion too)."""
            ex = [frozenset(a["fixes"]) for a in xans.values() if _excludes(a, limit, options.rel_gap)]
            return ex + [frozenset(parts[i]["fixes"]) for i, a in answers.items()
                         if parts[i]["fixes"] and _excludes(a, limit, options.rel_gap)]

        def covered(task) -> bool:      # a level-3 part inside an excluded set holds no level-3 solution
            return bool(plan_x) and _covered(task["fixes"], excluded())

        pool.drop(lambda t: t["kind"] == "l3" and not valid(t))
        t3 = time.perf_counter()
        if plan_x:
            pool.drain()                # the exclusions that ended while level 2 ran in this process
            if EXCLUDE_WAIT_S > 0:
                pool.wait_kind("x2", time.perf_counter() + EXCLUDE_WAIT_S)
            # level 3 on what the exclusions finished so far leave, split on the next candidates: when one region
            # is left, the candidates of the root LP restricted to it (RERANK; the root's ranking split it badly)
            first3, ex3 = _u_values(data, sol), excluded()
            fixed = {f[0] for a in xans.values() for f in a["fixes"]} | \
                {f[0] for p in parts.values() for f in p["fixes"]}
            tried = [v for v in cands if v in fixed]
            leaves = _level3_leaves(tried, first3, ex3, 2 ** need)
            if len(leaves) < 2 ** need:
                more = cands
                if RERANK and len(leaves) == 1 and leaves[0]:
                    more = [idx for _, idx in split_candidates(m, data, need + 2, fixes=leaves[0])] + cands
                leaves = _level3_leaves(tried + [v for v in more if v not in tried], first3, ex3, 2 ** need)
            # a running exclusion chain keeps its worker only if every level-3 part has a worker meanwhile (it may
            # still cover one); else it is cancelled (it would delay level 3)
            busy = sum(1 for t in pool.running.values() if t["kind"] == "x2" and not t.get("cancelled"))
            keep = len(leaves) <= len(pool.procs) - len(pool.dead) - busy
            if not keep:
                pool.drop(lambda t: t["kind"] == "x2")
            l3["groups"] = _number([[{"fixes": f, "seed": options.seed} for f in leaves]])
            l3["queue"] = _tasks("l3", l3["groups"], z1, options, prep3, done3)
            extra["split_level3"] = [",".join(f"u[{j},{r}]={v}" for (j, r), v in f) or "whole" for f in leaves]
        plan3()
        groups3 = l3["groups"]
        parts3 = {p["id"]: p for g in groups3 for p in g}
        started = {i for i, (task, _) in l3["answers"].items() if valid(task)} | \
            {t["part"] for t in pool.running.values() if t["kind"] == "l3" and not t.get("cancelled")}
        used_spec = len(started)

        def answers3():
            a = {i: ans for i, (task, ans) in l3["answers"].items() if valid(task)}
            for g in groups3:
                for p in g:
                    if covered(p) and not (p["id"] in a and _proven(3, a[p["id"]]["status"])):
                        a[p["id"]] = {"status": Termination.OPTIMAL.value, "objective": None, "bound": None,
                                      "nodes": 0, "covered": True,
                                      "message": "covered: in a half level 2 proved to hold nothing within the limit"}
            return a

        pending3 = [t for t in _tasks("l3", groups3, z1, options, prep3, done3) if t["part"] not in started]
        pool.run("l3", pending3, lambda: _complete(3, groups3, answers3()) is not None, deadline,
                 skip=covered if plan_x else None)
        fm.load_solution_into_pyomo(m, sol)
        best3 = {"t": pyo.value(m.obj_run.expr), "sol": sol}
        for i, ans in sorted(answers3().items()):
            if ans.get("solution") is not None and ans.get("objective") is not None and ans["objective"] < best3["t"]:
                if PLANT == "drop_best":
                    continue
                best3.update(t=ans["objective"], sol=ans["solution"])
        res3 = _combine3(groups3, answers3(), best3, time.perf_counter() - t3)
        rec = level_record(3, res3, 0.0)
        rec["parts"] = _part_rows(parts3, answers3())
        rec["parts_started_in_level2"] = used_spec
        if excl:
            rec["exclusions"] = _exclusion_rows(xans, limit, options.rel_gap)
            extra["exclusions"] = rec["exclusions"]
        lv.append(rec)
        extra["level3_speculative"] = {"started": l3["spec"], "used": used_spec}
        sol = best3["sol"]
        # the cost reported is the cost of the solution returned (level 3 may end on a cheaper one)
        if fm.load_solution_into_pyomo(m, sol) is not False:
            c = pyo.value(m.obj_cost.expr)
            if lv[1]["objective"] is not None and c < lv[1]["objective"]:
                lv[1]["objective"] = c
                lv[1]["gap"] = relative_gap(c, lv[1]["bound"])
        return sol, lv, build_s, _extra(extra, pool)
    finally:
        if pool is not None:
            pool.stop()


def _number(groups) -> list[list[dict]]:
    """Give every part a level-wide id and its group's index."""
    k = 0
    for g, parts in enumerate(groups):
        for p in parts:
            p["id"], p["group"] = k, g
            k += 1
    return groups


def _tasks(kind: str, groups, z1: int, options: SolveOptions, prepare, on_done) -> list[dict]:
    """The parts in the order they are handed out: round robin over the groups (so that a race of whole
    searches starts every member at once), within a group in order."""
    order = []
    for i in range(max(len(g) for g in groups)):
        order += [g[i] for g in groups if i < len(g)]
    return [{"kind": kind, "part": p["id"], "fixes": p["fixes"], "seed": p["seed"], "z1": z1, "options": options,
             "prepare": prepare, "on_done": on_done} for p in order]


def _extra(extra: dict, pool) -> dict:
    return dict(extra, worker_cpu_s=round(sum(pool.cpu), 3))


def _part_rows(parts: dict, answers) -> list[dict]:
    rows = []
    for i, p in parts.items():
        a = answers.get(i, {"status": "not run or cancelled"})
        rows.append({"group": p["group"], "seed": p["seed"],
                     "part": ",".join(f"u[{j},{r}]={v}" for (j, r), v in p["fixes"]) or "whole",
                     "status": a["status"], "objective": a.get("objective"), "nodes": a.get("nodes"),
                     "wall_s": None if a.get("wall_s") is None else round(a["wall_s"], 3),
                     "cpu_s": None if a.get("cpu_s") is None else round(a["cpu_s"], 3)})
    return rows


def _part_bound(a: dict | None) -> float | None:
    """A level-2 part's proven lower bound: its cutoff when it ended infeasible under it, min(objective,
    cutoff) when proven optimal (HiGHS prunes against the lesser of the two), else its dual bound."""
    if a is None:
        return None
    cut = a.get("cutoff_used")
    if a["status"] == Termination.INFEASIBLE.value:
        return cut if cut is not None else math.inf
    if a["status"] == Termination.OPTIMAL.value:
        v = a["objective"] if a.get("bound") is None else min(a["objective"], a["bound"])
        return v if cut is None else min(v, cut)
    return a.get("bound")


def _excludes(a: dict | None, limit: float, rel_gap: float) -> bool:
    """An exclusion's answer proves that its half holds no placement costing <= ``limit`` (section 9g): its
    proven lower bound (``_part_bound``) exceeds the limit by more than twice the solver's tolerance."""
    b = _part_bound(a)
    if b is None or not math.isfinite(limit):
        return False
    if PLANT == "exclude_any":
        return True             # planted: every finished exclusion read as excluding
    return clears_limit(b, limit, max(rel_gap, LEVEL_TOL))


def _covered(fixes, excluded) -> bool:
    """The set fixed by ``fixes`` lies inside one of the ``excluded`` sets (each a frozenset of fixes)."""
    f = set(fixes)
    return any(e <= f for e in excluded)


def _level3_leaves(cands, first: dict, excluded, n_parts: int) -> list[tuple]:
    """Level 3's parts (section 9g): a decision tree over the candidates in order, each node split into its two
    values (``first``'s value first: the level-2 placement's); a node inside an excluded set is dropped; the
    splitting stops once ``n_parts`` nodes are left (or the candidates run out).  The leaves and the dropped nodes
    partition X, so the leaves cover every placement no exclusion rules out."""
    nodes: list[tuple] = [()]
    for v in cands:
        if len(nodes) >= n_parts:
            break
        nxt = []
        for node in nodes:
            for val in sorted((0, 1), key=lambda x: x != first.get(v, 0)):
                child = node + ((v, val),)
                if not _covered(child, excluded):
                    nxt.append(child)
        nodes = nxt
    return nodes


def _exclusion_rows(xans: dict, limit: float, rel_gap: float) -> list[dict]:
    rows = []
    for _, a in sorted(xans.items()):
        rows.append({"half": ",".join(f"u[{j},{r}]={v}" for (j, r), v in a["fixes"]), "status": a["status"],
                     "bound": _part_bound(a), "excluded": _excludes(a, limit, rel_gap),
                     "cpu_s": None if a.get("cpu_s") is None else round(a["cpu_s"], 3)})
    return rows


def _combine2(groups, answers, best, wall) -> SolveResult:
    """Level 2 from its parts: the best placement found by any part (``best``), proven when every part of one
    group is proven; else the bound is the best over the groups of the least of their parts' bounds."""
    nodes = sum((a.get("nodes") or 0) for a in answers.values())
    g = _complete(2, groups, answers)
    msg = f"split: {' + '.join(str(len(p)) for p in groups)} part(s)"
    if g is not None:
        return SolveResult("highs", Termination.OPTIMAL, objective=best["z"], bound=best["z"], solve_s=wall,
                           nodes=nodes, message=msg + f"; group {g} proven")
    bound = None
    for parts in groups:
        bs = [_part_bound(answers.get(p["id"])) for p in parts]
        if all(b is not None for b in bs):
            b = min(min(bs), best["z"])
            bound = b if bound is None else max(bound, b)
    ok = math.isfinite(best["z"])
    return SolveResult("highs", Termination.FEASIBLE if ok else Termination.TIME_LIMIT,
                       objective=best["z"] if ok else None, bound=bound, solve_s=wall, nodes=nodes,
                       message=msg + "; no group proven")


def _combine3(groups, answers, best3, wall) -> SolveResult:
    """Level 3 from its parts: the shortest run time found, proven when every part of one group is."""
    nodes = sum((a.get("nodes") or 0) for a in answers.values())
    g = _complete(3, groups, answers)
    msg = f"split: {' + '.join(str(len(p)) for p in groups)} part(s), each proven by cost minimization"
    if g is not None:
        bs = [answers[p["id"]].get("bound") for p in groups[g]]
        bound = min([b for b in bs if b is not None] + [best3["t"]])
        return SolveResult("highs", Termination.OPTIMAL, objective=best3["t"], bound=bound, solve_s=wall,
                           nodes=nodes, message=msg + f"; group {g} proven")
    return SolveResult("highs", Termination.FEASIBLE, objective=best3["t"], bound=None, solve_s=wall, nodes=nodes,
                       message=msg + "; no group proven")
