"""``exact-p1``: the online reference that solves P1 exactly on the residual resources at every event.

At each scheduling event it calls ``bace_opt.exact.placement.solve_placement`` on the jobs it may start,
with ``t0 = now`` and the free GPUs and free link bandwidth of the ``ClusterState``, and starts the jobs
that P1's optimum starts (lexicographic: most jobs started, then least cost, then least run time; w = b_j,
no stall).  This is "what if each decision were optimal", not an optimal online schedule.  It follows the
policy contract of ``bace_opt.policies.contract`` and lives with the exact models it solves; the policy registry
names it by import path (``bace_opt.policies.registry``: ``"bace_opt.exact.online:ExactP1"``).  The exact model
is imported when the policy first solves (``exact.placement``, which does not import this module); without it
the policy raises ``SolverUnavailableError``.

Solver statuses of every call are kept in ``self.calls`` (the simulator copies ``extra_meta()`` into the
schedule's meta), so that a reader can see whether each decision was proven optimal.

Queue mode (``queue_session``, issue 15): the simulator's generic path solved a MILP over the whole queue at
every event and, for the head-of-line measurement, one MILP per waiting job after it, so a contended run did
work quadratic in the queue.  ``ExactQueue`` keeps the set of waiting jobs *proven unfit*: a job j is in it
when it provably cannot start alone on the current residual resources, which stays true until a job finishes
(``released``: the only event that frees GPUs or bandwidth; a start or a price step frees nothing, and P1's
feasibility does not depend on prices).  Two proofs put a job there:

* a decision on queue Q whose solve is proven optimal starts a set A with |A| = the most jobs Q can start;
  every other j in Q is unfit on what is left, because a plan for j alone there together with A's plans would
  start |A| + 1 jobs of Q on the decision's resources (a subset of a feasible start set is feasible: each
  job's GPUs and reservations only add up);
* ``place`` for j alone proven optimal with no job started.

An unfit job is neither offered to the decision's MILP (it cannot be in any feasible start set, so the
feasible start sets are those of the full queue) nor asked ``place`` by the head-of-line measurement (its
answer is None).  A decision whose waiting jobs are all unfit solves nothing and is recorded as a proven call
(status "optimal", ``skipped``).  A decision or ``place`` that is not proven optimal adds nothing to the set.
"""
from __future__ import annotations

import logging
import time
from typing import Sequence

from ..errors import InputError, SolverUnavailableError
from ..instance import Job
from ..policies.base import ClusterState
from ..policies.contract import PolicyBase, WaitingQueue
from ..schedule import JobPlan
from ..solvers.base import SolveOptions

log = logging.getLogger(__name__)


def _solve_placement():
    try:
        from .placement import solve_placement
    except ImportError as e:
        raise SolverUnavailableError(
            "policy 'exact-p1' needs bace_opt.exact.placement.solve_placement, which is not available "
            f"in this installation ({e})") from e
    return solve_placement


class ExactP1(PolicyBase):
    """Solve P1 on the residual resources at every event (see module doc)."""

    def __init__(self, solver: str = "highs", time_limit_s: float = 60.0, seed: int = 0, name: str = "exact-p1"):
        self.name = name
        self.solver = solver
        if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not time_limit_s > 0 \
                or time_limit_s == float("inf"):
            raise InputError(f"exact-p1: time_limit_s must be a finite number of seconds > 0, got {time_limit_s!r}")
        self.time_limit_s = float(time_limit_s)
        self.seed = int(seed)
        self.options = {"solver": solver, "time_limit_s": self.time_limit_s}
        self.calls: list[dict] = []

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        return self._solve(now, queue, state, record=True)[0]

    def queue_session(self, inst) -> "ExactQueue":
        """The simulator's queue-mode session: the same decisions, with proven-unfit jobs left out (module doc)."""
        return ExactQueue(self)

    def _solve(self, now: float, queue: Sequence[Job], state: ClusterState,
               record: bool) -> tuple[list[JobPlan], bool]:
        """P1 on ``queue``: (the plans P1's optimum starts, whether the solve was proven optimal)."""
        if not queue:
            return [], True
        solve_placement = _solve_placement()
        inst = state.inst
        t = time.perf_counter()
        res = solve_placement(inst, jobs=[j.name for j in queue], t0=now,
                              free_gpus={r: state.free(r) for r in inst.region_index},
                              free_gbps={k: state.free_gbps(k) for k in range(len(inst.links))},
                              solver=self.solver,
                              options=SolveOptions(time_limit_s=self.time_limit_s, seed=self.seed))
        plans = [p for p in (getattr(res, "plans", None) or []) if p.status == "done"]
        info = {"t_s": now, "jobs": len(queue), "started": len(plans), "wall_s": time.perf_counter() - t}
        si = getattr(res, "solver_info", None)
        if si is not None:
            info["status"] = si.status
            if si.gap is not None:
                info["gap"] = si.gap
        if record:
            self.calls.append(info)
        log.debug("exact-p1 at t=%g: %s", now, info)
        return plans, (si is not None and si.status == "optimal")

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """P1 on this one job (a MILP solve: the simulator's HoL measurement calls it for every waiting job
        that could fit by GPU count, so pass ``track_hol=False`` for long exact-p1 runs).  Not counted in
        ``calls``."""
        plans = self._solve(state.now, [job], state, record=False)[0]
        return plans[0] if plans else None

    def extra_meta(self) -> dict:
        st = [c.get("status") for c in self.calls]
        return {"solver_calls": len(self.calls),
                "solver_statuses": {s: st.count(s) for s in sorted(set(map(str, st)))},
                "solver_wall_s": sum(c["wall_s"] for c in self.calls)}


class ExactQueue(WaitingQueue):
    """Queue-mode session of ``exact-p1`` for the simulator (module doc): the simulator's generic session with
    the set of waiting jobs proven unfit on the current residual resources."""

    def __init__(self, pol: ExactP1):
        super().__init__()
        self.pol = pol
        self.unfit: set[str] = set()            # waiting jobs proven not to start alone on the residual
        self.saved_place = 0                     # head-of-line place calls answered by the unfit set
        self.saved_decisions = 0                 # decisions answered by it (every waiting job unfit)
        self.saved_offers = 0                    # jobs left out of a decision's MILP

    def remove(self, name: str, now: float = 0.0) -> None:
        super().remove(name, now)
        self.unfit.discard(name)

    def released(self) -> None:
        self.unfit.clear()                      # a finished job freed GPUs and bandwidth

    def decide(self, now: float, state: ClusterState) -> list[JobPlan]:
        pol = self.pol
        ask = [j for n, j in self.waiting.items() if n not in self.unfit]
        self.saved_offers += len(self.waiting) - len(ask)
        if not ask:
            self.saved_decisions += 1
            pol.calls.append({"t_s": now, "jobs": len(self.waiting), "started": 0, "wall_s": 0.0,
                              "status": "optimal", "skipped": True})
            return []
        plans, proven = pol._solve(now, ask, state, record=True)
        if proven:
            started = {p.name for p in plans}
            self.unfit.update(j.name for j in ask if j.name not in started)
        return plans

    def hol_update(self, state: ClusterState, now: float = 0.0) -> None:
        tot = state.total_free_gpus()
        for n, job in self.waiting.items():
            m = False
            if job.gpus > tot:
                pass
            elif n in self.unfit:
                self.saved_place += 1
            else:
                self.place_calls += 1
                plans, proven = self.pol._solve(state.now, [job], state, record=False)
                m = bool(plans)
                if proven and not m:
                    self.unfit.add(n)
            self._mark(n, m, now)
