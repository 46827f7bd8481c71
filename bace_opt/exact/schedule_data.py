"""P2's discretized problem (models/schedule.md section 2), the data both back ends read: ``SlottedProblem``
(its jobs ``JobData`` with their candidates, durations and objective tables, and the binding ``Resource``s),
and ``RawResult``, what a back end returns before ``schedule`` turns it into a Schedule.

``schedule.build_problem`` builds the problem; ``schedule_cpsat`` and ``schedule_milp`` solve it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..instance import Instance
from .candidates import Candidate, CandidateSet


@dataclass
class JobData:
    """One job of the discretized problem.  Start index t runs over lo..H (column t - lo of the arrays); it starts
    at O + Delta t (``SlottedProblem.start_of``)."""
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
    offset: float                          # - sum_j (a_j - O) / n (relax: - Delta)
    symmetric: list[tuple[int, int]]       # (a, b): identical jobs, t_a <= t_b is valid
    candset: CandidateSet
    stats: dict[str, Any] = field(default_factory=dict)
    origin_s: float = 0.0                  # the grid's origin O (the first arrival): start index t is O + Delta t

    def start_of(self, t: int) -> float:
        """Start time (s) of start index t: O + Delta t (exactly Delta t when O = 0)."""
        return self.origin_s + self.delta_s * t if self.origin_s else self.delta_s * t

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

