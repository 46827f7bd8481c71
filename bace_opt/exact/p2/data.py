"""P2's discretized problem (models/schedule.md section 2), the data both back ends read: ``SlottedProblem``
(its jobs ``JobData`` with their candidates, durations and objective tables, and the binding ``Resource``s),
and ``RawResult``, what a back end returns before ``schedule`` turns it into a Schedule.

``schedule.build_problem`` builds the problem; ``p2.cpsat`` and ``p2.milp`` solve it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import formulas as F
from ...instance import Instance
from .candidates import Candidate, CandidateSet


@dataclass
class JobData:
    """One job of the discretized problem.  Start index t runs over lo..H (column t - lo of the arrays); it starts
    at Delta (k0 + t) (``SlottedProblem.start_of``)."""
    index: int
    name: str
    arrival_s: float
    lo: int
    cands: list[Candidate]
    d: np.ndarray          # (C,) duration in time units, ceil(R / Delta)
    run_s: np.ndarray      # (C,) R_jc
    val: np.ndarray        # (C, T) or (C, 1): R_jc / n + mu * cost_jc(Delta t)  (objective part besides Delta t / n)
    cost: np.ndarray       # (C, T) or (C, 1): cost_jc(Delta t) in USD (electricity + priced egress)
    varies: bool           # val/cost depend on t (else one column)


@dataclass
class Resource:
    """A capacity that can bind: GPUs of a region or one link (both directions carry the same load)."""
    name: str
    kind: str                              # "gpu" | "link"
    capacity: float
    uses: dict[tuple[int, int], float]     # (job index, candidate index) -> amount


@dataclass
class SlottedProblem:
    inst: Instance
    delta_s: float
    mu: float
    cost_cap_usd: float | None
    jobs: list[JobData]
    H: int                                 # last start index any job may take
    horizon_proven: bool
    resources: list[Resource]
    offset: float                          # - sum_j (a_j - O) / n, O = Delta k0 (relax: - Delta)
    symmetric: list[tuple[int, int]]       # (a, b): identical jobs, t_a <= t_b is valid
    candset: CandidateSet
    stats: dict[str, Any] = field(default_factory=dict)
    origin_units: int = 0                  # k0: start index t is the time Delta (k0 + t) (schedule.grid_origin)

    @property
    def origin_s(self) -> float:
        """The grid's origin O = Delta k0 (the last grid point at or before the first arrival)."""
        return self.delta_s * self.origin_units

    def start_of(self, t: int) -> float:
        """Start time (s) of start index t: Delta (k0 + t), the same float as before the origin moved."""
        return self.delta_s * (self.origin_units + t)

    @property
    def n(self) -> int:
        return len(self.jobs)

    def objective_of(self, choice: dict[int, tuple[int, int]]) -> float:
        """Exact objective (P2.1) of a choice {job index: (candidate index, start index t)}."""
        tot = math.fsum(self.delta_s * t / self.n + self._col(self.jobs[j].val, self.jobs[j], c, t)
                        for j, (c, t) in choice.items())
        return tot + self.offset

    def cost_of(self, choice: dict[int, tuple[int, int]]) -> float:
        return math.fsum(self._col(self.jobs[j].cost, self.jobs[j], c, t) for j, (c, t) in choice.items())

    @staticmethod
    def _col(arr, jd: JobData, c: int, t: int) -> float:
        return float(arr[c, t - jd.lo] if jd.varies else arr[c, 0])


@dataclass
class RawResult:
    status: str                                      # optimal | feasible | infeasible | time_limit | error
    choice: dict[int, tuple[int, int]] | None        # job index -> (candidate index, start index)
    objective: float | None = None                   # exact objective of ``choice`` (P2.1), s
    bound: float | None = None                       # proven lower bound (s)
    nodes: int | None = None
    build_s: float = 0.0
    solve_s: float = 0.0
    message: str | None = None
    extra: dict = field(default_factory=dict)


def cost_lower_envelope(inst: Instance, curves, job, cand, lo: int, H: int, delta_s: float,
                         at_grid: np.ndarray) -> np.ndarray:
    """min of cost(s) over s in (Delta (t-1), Delta t] for t = lo..H (P2.23; absolute indices).  cost(s) =
    sum over blocks of kW x integral of the price over [s, s + R] (+ egress) is piecewise linear in s with
    breakpoints where s or s + R crosses a price step, so its minimum over an interval is at an end or at such a breakpoint."""
    R = cand.run_s
    pts = [delta_s * np.arange(lo - 1, H + 1, dtype=float)]
    for r, _ in cand.blocks:
        cv = curves[r]
        if cv.values is None:
            continue
        b = cv.start + cv.step * np.arange(len(cv.values) + 1, dtype=float)
        pts += [b, b - R]
    s = np.unique(np.concatenate(pts))
    s = s[(s > delta_s * (lo - 1)) & (s <= delta_s * H)]

    def cost_at(x):
        tot = np.zeros(len(x))
        for r, nst in cand.blocks:
            reg = inst.region(r)
            kw = job.gpus_per_stage * nst * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
            tot = tot + kw * integral_vec(curves[r], x, x + R) / 3600.0
        if inst.objective.egress:
            tot = tot + cand.egress_usd
        return tot
    left = cost_at(delta_s * np.arange(lo - 1, H, dtype=float))      # the open left end, by continuity
    out = np.minimum(at_grid, left)
    if len(s):
        t = np.ceil(s / delta_s - 1e-12).astype(int)
        t = np.clip(t, lo, H)
        np.minimum.at(out, t - lo, cost_at(s))
    return out


def integral_vec(curve: F.PriceCurve, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Vectorized ``PriceCurve.integral`` (same arithmetic as bace_opt.formulas, so results agree)."""
    if curve.values is None:
        return curve.constant * (t1 - t0)

    def Fv(t):
        v, step, n = curve.values, curve.step, len(curve.values)
        x = t - curve.start
        k = np.floor_divide(x, step)
        kk = np.clip(k, 0, n - 1).astype(int)
        inside = curve.cum[kk] + (x - kk * step) * v[kk]
        past = curve.cum[n] + (x - n * step) * v[-1]
        return np.where(x <= 0, x * v[0], np.where(k >= n, past, inside))

    return Fv(t1) - Fv(t0)


def used_label(prob: SlottedProblem) -> str:
    used = next((s for s in prob.stats.get("candidate_steps", []) if s.get("used")), None)
    if used is not None:
        return used["candidates"]
    return "all placements" if prob.candset.complete else ", ".join(prob.candset.incomplete_reasons)


def slotted_label(prob: SlottedProblem) -> str:
    """What the slotted problem is, in words (the problem its status and bound are for)."""
    scope = ("all no-stall placements" if prob.candset.complete else
             "the restricted candidate set (" + used_label(prob) + ")")
    return (f"the slotted model (starts on a {prob.delta_s:g} s grid from {prob.origin_s:g} s, the grid point at "
            f"or before the first arrival; resources held for run times rounded up to it) over {scope}"
            + ("" if prob.horizon_proven else ", starts capped at horizon_s"))


def posed_status(status: str, prob: SlottedProblem) -> str:
    """The back end's status read for the continuous-time P2: a proven slotted optimum is "optimal for the
    slotted model" (an upper bound of the continuous optimum, which a policy may beat by the rounding), and
    "... over the restricted candidate set" when the candidates were limited; an infeasible restricted
    problem is infeasible over its candidates only."""
    restricted = not prob.candset.complete or not prob.horizon_proven
    if status == "optimal":
        return "optimal for the slotted model" + (" over the restricted candidate set" if restricted else "")
    if status == "infeasible":
        return "infeasible" + (" over the restricted candidate set" if restricted else "")
    return status
