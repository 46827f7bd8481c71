"""The order in which an ordered policy offers its jobs: BACE-Pipe's dynamic priority (stage 1 of
system-model.md, "BACE-Pipe") and arrival order.

``prioritize(queue, state)``
    Priority_j = (1 - alpha) (1 - I_j) + alpha (1 - D_j), highest first.  I_j = N_j (m_j + S_j - 1) t_j
    (``formulas.compute_s``), D_j = b_j at the reference GPU (``formulas.demand_gbps(job, t_j)``), both
    min-max normalized over the jobs of ``queue`` (our reading: all equal -> 0).  alpha =
    ``state.alpha()``, the mean utilization of the links with any reservation (0 when none).  Ties: earlier
    arrival, then instance order.
``fifo_order(queue, inst)``
    Arrival order; ties by the instance's job order.
"""
from __future__ import annotations

from typing import Sequence

from .. import formulas as F
from ..instance import Instance, Job
from .base import ClusterState


def reference_demand_gbps(job: Job) -> float:
    """D_j before normalization: b_j on the reference GPU."""
    return F.demand_gbps(job, job.stage_time_s)


def job_profile(inst: Instance, job: Job) -> tuple[float, float, int]:
    """(compute_s, reference demand Gbit/s, GPUs) of a job, cached per instance."""
    cache = inst.__dict__.setdefault("_policy_profiles", {})
    v = cache.get(job.name)
    if v is None:
        v = cache[job.name] = (F.compute_s(job), reference_demand_gbps(job), job.gpus)
    return v


def priorities(queue: Sequence[Job], state: ClusterState, alpha: float | None = None) -> dict[str, float]:
    """Priority_j = (1 - alpha)(1 - I_j) + alpha(1 - D_j) of each job of ``queue`` (see module doc)."""
    if alpha is None:
        alpha = state.alpha()
    if not queue:
        return {}
    prof = [job_profile(state.inst, j) for j in queue]
    norm_c, norm_d = _minmax([p[0] for p in prof]), _minmax([p[1] for p in prof])
    return {j.name: (1.0 - alpha) * (1.0 - i) + alpha * (1.0 - d) for j, i, d in zip(queue, norm_c, norm_d)}


def prioritize(queue: Sequence[Job], state: ClusterState, alpha: float | None = None) -> list[Job]:
    """The jobs of ``queue`` in descending priority (ties: arrival, then instance order)."""
    idx = state.inst.job_index
    if len(queue) < 2:
        return list(queue)
    pr = priorities(queue, state, alpha)
    return sorted(queue, key=lambda j: (-pr[j.name], j.arrival_s, idx[j.name]))


def _minmax(xs: Sequence[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    if hi - lo <= 1e-12 * max(abs(hi), 1.0):
        return [0.0] * len(xs)
    return [(x - lo) / (hi - lo) for x in xs]


def fifo_order(queue: Sequence[Job], inst: Instance) -> list[Job]:
    """Arrival order; ties by the instance's job order."""
    idx = inst.job_index
    return sorted(queue, key=lambda j: (j.arrival_s, idx[j.name]))
