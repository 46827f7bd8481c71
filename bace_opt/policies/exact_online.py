"""``exact-p1``: the online reference that solves P1 exactly on the residual resources at every event.

At each scheduling event it calls ``bace_opt.exact.placement.solve_placement`` on the jobs it may start,
with ``t0 = now`` and the free GPUs and free link bandwidth of the ``ClusterState``, and starts the jobs
that P1's optimum starts (lexicographic: most jobs started, then least cost, then least run time; w = b_j,
no stall).  This is "what if each decision were optimal", not an optimal online schedule.  The exact model
is imported lazily; without it the policy raises ``SolverUnavailableError``.

Solver statuses of every call are kept in ``self.calls`` (the simulator copies ``extra_meta()`` into the
schedule's meta), so that a reader can see whether each decision was proven optimal.
"""
from __future__ import annotations

import logging
import time
from typing import Sequence

from ..errors import SolverUnavailableError
from ..instance import Job
from ..schedule import JobPlan
from ..solvers.base import SolveOptions
from .base import ClusterState

log = logging.getLogger(__name__)


def _solve_placement():
    try:
        from ..exact.placement import solve_placement
    except ImportError as e:
        raise SolverUnavailableError(
            "policy 'exact-p1' needs bace_opt.exact.placement.solve_placement, which is not available "
            f"in this installation ({e})") from e
    return solve_placement


class ExactP1:
    """Solve P1 on the residual resources at every event (see module doc)."""

    def __init__(self, solver: str = "highs", time_limit_s: float = 60.0, seed: int = 0, name: str = "exact-p1"):
        self.name = name
        self.solver = solver
        self.time_limit_s = float(time_limit_s)
        self.seed = int(seed)
        self.options = {"solver": solver, "time_limit_s": self.time_limit_s}
        self.calls: list[dict] = []

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        return self._solve(now, queue, state, record=True)

    def _solve(self, now: float, queue: Sequence[Job], state: ClusterState, record: bool) -> list[JobPlan]:
        if not queue:
            return []
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
        return plans

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """P1 on this one job (a MILP solve: the simulator's HoL measurement calls it for every waiting job
        that could fit by GPU count, so pass ``track_hol=False`` for long exact-p1 runs).  Not counted in
        ``calls``."""
        plans = self._solve(state.now, [job], state, record=False)
        return plans[0] if plans else None

    def extra_meta(self) -> dict:
        st = [c.get("status") for c in self.calls]
        return {"solver_calls": len(self.calls),
                "solver_statuses": {s: st.count(s) for s in sorted(set(map(str, st)))},
                "solver_wall_s": sum(c["wall_s"] for c in self.calls)}
