"""Exact slot assignment of one iteration's batch of PP requests (models/optical.md, section 5).

Given the spectrum state (link bitsets) and a batch of requests r, each with a block width w_r = data + guard
slots, a weight (CB: ``cb_weight``, else 1) and candidate paths P_r, choose for each request at most one
(path, first slot):

    x[r,p,f] in {0, 1}     request r on candidate p starting at slot f; only for f with [f, f + w_r) free on
                           every link of p in the given state (eq. 15: the variable is left out otherwise)
    (14) sum_{p,f} x[r,p,f] <= 1                                              every request
    (16) sum_{r, p with e in p, f <= s < f + w_r} x[r,p,f] <= 1                every link e, free slot s
    (17) z >= (f + w_r) x[r,p,f]                                               highest slot used (1-based end)
    level 1: maximise  A = sum_r weight_r sum_{p,f} x[r,p,f]                  (CB-weighted accepted requests)
    level 2: minimise  z  subject to  A >= A*  (A* the level-1 optimum, or its incumbent when not proven)

Two back ends build the same model: ``build_milp`` (Pyomo, HiGHS through solvers.highs) with one
``add_<family>`` function per equation family, and ``build_cpsat`` (OR-Tools CP-SAT, weights scaled by
``WEIGHT_SCALE`` to integers: exact for weights that are multiples of 1 / WEIGHT_SCALE).  Both report status,
incumbent, proven bound and gap per level; the decoded lightpaths go through the independent checker.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Sequence

from ..errors import InputError
from ..instance.optical import OpticalNetwork, Path
from ..solvers.base import SolveOptions, Termination, relative_gap
from .spectrum import Lightpath, SpectrumGrid, fit_starts

log = logging.getLogger(__name__)

WEIGHT_SCALE = 1000
SOLVERS = ("highs", "cpsat")


@dataclass(frozen=True)
class BatchRequest:
    src: str
    dst: str
    data_slots: int
    weight: float = 1.0


@dataclass
class SlotAssignment:
    """Result of one exact solve: per level status / incumbent / bound / gap, and the chosen lightpaths."""
    solver: str
    status: str
    accepted_weight: float | None
    accepted_bound: float | None
    max_slot: float | None
    max_slot_bound: float | None
    level2_status: str | None
    choices: dict[int, tuple[int, int]] = field(default_factory=dict)   # request -> (path index, first slot)
    lightpaths: list[Lightpath] = field(default_factory=list)
    variables: int = 0
    wall_s: float = 0.0

    @property
    def proven(self) -> bool:
        return self.status == Termination.OPTIMAL.value

    def gap_of(self, heuristic_weight: float) -> float | None:
        """Eq. 18: relative shortfall of a heuristic's accepted weight against the proven bound, (bound - H) / bound."""
        if self.accepted_bound is None:
            return None
        if self.accepted_bound <= 1e-12:
            return 0.0
        return max(0.0, (self.accepted_bound - heuristic_weight) / self.accepted_bound)


class _Index:
    """The variable index set (eq. 15), built once: (r, p, f) with the block free in the given state."""

    def __init__(self, network: OpticalNetwork, requests: Sequence[BatchRequest], candidates, occupancy):
        grid = SpectrumGrid(network)
        if occupancy is not None:
            if len(occupancy) != grid.n_links:
                raise InputError(f"exact slot assignment: occupancy has {len(occupancy)} links, network "
                                 f"{grid.n_links}")
            grid.occ = list(occupancy)
        self.grid = grid
        self.S = network.slots_per_link
        g = network.guard_slots
        self.width = [r.data_slots + g for r in requests]
        self.keys: list[tuple[int, int, int]] = []
        self.links: list[list[tuple[int, ...]]] = []
        for r, paths in enumerate(candidates):
            ls = [grid.links_of(p.nodes) for p in paths]
            self.links.append(ls)
            for p, links in enumerate(ls):
                m = fit_starts(grid.free_mask(links), self.width[r])
                f = 0
                while m:
                    if m & 1:
                        self.keys.append((r, p, f))
                    m >>= 1
                    f += 1
        # cells (link, slot) -> variables covering them (eq. 16), only cells two or more variables share
        cover: dict[tuple[int, int], list[int]] = {}
        for v, (r, p, f) in enumerate(self.keys):
            for e in self.links[r][p]:
                for s in range(f, f + self.width[r]):
                    cover.setdefault((e, s), []).append(v)
        self.cells = {c: vs for c, vs in cover.items() if len(vs) > 1}


def default_candidates(network: OpticalNetwork, requests: Sequence[BatchRequest], k: int | None = None):
    return [network.candidate_paths(r.src, r.dst, k=k) for r in requests]


# ---------------------------------------------------------------------- MILP (Pyomo + HiGHS)

def add_one_choice(m, ix: _Index, n_req: int):
    """Eq. 14: at most one (path, first slot) per request."""
    import pyomo.environ as pyo
    by_r: dict[int, list[int]] = {}
    for v, (r, _, _) in enumerate(ix.keys):
        by_r.setdefault(r, []).append(v)
    m.con_one_choice = pyo.Constraint(list(by_r), rule=lambda m, r: sum(m.x[v] for v in by_r[r]) <= 1)


def add_no_overlap(m, ix: _Index):
    """Eq. 16: one lightpath per free slot of a link."""
    import pyomo.environ as pyo
    cells = list(ix.cells)
    m.con_no_overlap = pyo.Constraint(range(len(cells)), rule=lambda m, c: sum(m.x[v] for v in ix.cells[cells[c]]) <= 1)


def add_highest_slot(m, ix: _Index):
    """Eq. 17: z >= (f + w_r) x[r,p,f]."""
    import pyomo.environ as pyo
    m.con_highest_slot = pyo.Constraint(range(len(ix.keys)),
                                        rule=lambda m, v: m.z >= (ix.keys[v][2] + ix.width[ix.keys[v][0]]) * m.x[v])


def build_milp(ix: _Index, requests: Sequence[BatchRequest]):
    import pyomo.environ as pyo
    m = pyo.ConcreteModel("slot_assignment")
    m.x = pyo.Var(range(len(ix.keys)), domain=pyo.Binary)
    m.z = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, ix.S))
    add_one_choice(m, ix, len(requests))
    add_no_overlap(m, ix)
    add_highest_slot(m, ix)
    m.accepted = pyo.Expression(expr=sum(requests[r].weight * m.x[v] for v, (r, _, _) in enumerate(ix.keys)))
    m.obj1 = pyo.Objective(expr=m.accepted, sense=pyo.maximize)
    return m


def _solve_milp(ix, requests, options: SolveOptions):
    import pyomo.environ as pyo
    from ..solvers.highs import solve_pyomo
    m = build_milp(ix, requests)
    r1 = solve_pyomo(m, options)
    if not r1.has_solution:
        return r1.termination.value, None, None, None, None, None, {}
    a_star = r1.objective
    vals1 = {v: pyo.value(m.x[v]) for v in range(len(ix.keys))}
    m.obj1.deactivate()
    m.con_level1 = pyo.Constraint(expr=m.accepted >= a_star - 1e-6)
    m.obj2 = pyo.Objective(expr=m.z, sense=pyo.minimize)
    r2 = solve_pyomo(m, options)
    vals = {v: pyo.value(m.x[v]) for v in range(len(ix.keys))} if r2.has_solution else vals1
    chosen = [v for v, x in vals.items() if x is not None and x > 0.5]
    z = r2.objective if r2.has_solution else None
    return (r1.termination.value, a_star, r1.bound, z, r2.bound if r2.has_solution else None,
            r2.termination.value, chosen)


# ---------------------------------------------------------------------- CP-SAT

def build_cpsat(ix: _Index, requests: Sequence[BatchRequest]):
    from ortools.sat.python import cp_model
    m = cp_model.CpModel()
    x = [m.NewBoolVar(f"x_{r}_{p}_{f}") for (r, p, f) in ix.keys]
    z = m.NewIntVar(0, ix.S, "z")
    by_r: dict[int, list] = {}
    for v, (r, _, _) in enumerate(ix.keys):
        by_r.setdefault(r, []).append(x[v])
    for r, vs in by_r.items():                                    # eq. 14
        m.AddAtMostOne(vs)
    for vs in ix.cells.values():                                  # eq. 16
        m.AddAtMostOne([x[v] for v in vs])
    for v, (r, p, f) in enumerate(ix.keys):                       # eq. 17
        m.Add(z >= f + ix.width[r]).OnlyEnforceIf(x[v])
    w = [int(round(requests[r].weight * WEIGHT_SCALE)) for (r, _, _) in ix.keys]
    accepted = sum(wi * xi for wi, xi in zip(w, x))
    return m, x, z, accepted


def _solve_cpsat(ix, requests, options: SolveOptions):
    from ..solvers.cpsat import solve_cp
    for q in requests:
        if abs(q.weight * WEIGHT_SCALE - round(q.weight * WEIGHT_SCALE)) > 1e-9:
            raise InputError(f"cp-sat slot assignment: weight {q.weight} is not a multiple of 1/{WEIGHT_SCALE}")
    m, x, z, accepted = build_cpsat(ix, requests)
    m.Maximize(accepted)
    r1, sol = solve_cp(m, options)
    if not r1.has_solution:
        return r1.termination.value, None, None, None, None, None, {}
    a_star = int(round(r1.objective))
    chosen1 = [v for v in range(len(x)) if sol.Value(x[v])]
    m.Add(accepted >= a_star)
    m.Minimize(z)
    m.ClearHints()
    for v in range(len(x)):
        m.AddHint(x[v], v in chosen1)
    r2, sol2 = solve_cp(m, options)
    chosen = [v for v in range(len(x)) if sol2.Value(x[v])] if r2.has_solution else chosen1
    return (r1.termination.value, a_star / WEIGHT_SCALE, r1.bound / WEIGHT_SCALE,
            r2.objective if r2.has_solution else None, r2.bound if r2.has_solution else None,
            r2.termination.value, chosen)


def solve_slot_assignment(network: OpticalNetwork, requests: Sequence[BatchRequest], occupancy=None,
                          candidates: Sequence[Sequence[Path]] | None = None, solver: str = "highs",
                          options: SolveOptions | None = None) -> SlotAssignment:
    """Solve the batch exactly (both levels); ``occupancy``: link bitsets of the state (None: empty)."""
    if solver not in SOLVERS:
        raise InputError(f"slot assignment solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    options = options or SolveOptions(time_limit_s=60.0)
    t = time.perf_counter()
    cands = list(candidates) if candidates is not None else default_candidates(network, requests)
    if len(cands) != len(requests):
        raise InputError("exact slot assignment: one candidate path list per request")
    ix = _Index(network, requests, cands, occupancy)
    if not ix.keys:    # nothing fits anywhere: the empty assignment is optimal
        return SlotAssignment(solver, Termination.OPTIMAL.value, 0.0, 0.0, 0.0, 0.0, Termination.OPTIMAL.value,
                              wall_s=time.perf_counter() - t)
    fn = _solve_milp if solver == "highs" else _solve_cpsat
    st1, a, ab, z, zb, st2, chosen = fn(ix, requests, options)
    choices, lps = {}, []
    g = network.guard_slots
    for v in chosen:
        r, p, f = ix.keys[v]
        choices[r] = (p, f)
        lps.append(Lightpath(r, cands[r][p].nodes, f, requests[r].data_slots, g))
    if a is not None and ab is not None and solver == "highs" and st1 == Termination.OPTIMAL.value:
        ab = a
    return SlotAssignment(solver, st1, a, ab, z, zb, st2, choices, lps, len(ix.keys), time.perf_counter() - t)


__all__ = ["BatchRequest", "SlotAssignment", "solve_slot_assignment", "relative_gap", "SOLVERS"]
