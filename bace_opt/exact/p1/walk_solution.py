"""The walk formulation's solutions (models/placement.md section 9): decoding a trail into a chain of regions and
its routes, and loading a position-form solution into the walk model as a MIP start (P1.30-P1.39, ``p1.walk``).

Every trail decodes to a chain whose link uses are no more than the trail's (section 9, "same optimum"): the
used regions in order of first visit, each hop's route the trail between two first visits with loops removed.
A start whose routes cross a link twice in the same direction is refused (P1.33).
"""
from __future__ import annotations

from collections import defaultdict

import pyomo.environ as pyo

from .data import arc_ends
from .solution import Solution


def trail_chain(inst, used: set[int], start: int, arcs_used: list[tuple[int, int]]) -> tuple[list[int], list[list[int]]]:
    """(chain, routes) from a trail: the Eulerian trail from ``start`` over the directed arcs ``arcs_used``
    (Hierholzer), the used regions in order of first visit, and each hop's route = the trail between two
    consecutive first visits with loops removed (a simple path).  Arcs not reachable from the start (a
    cycle through transit nodes only) are ignored."""
    adj = defaultdict(list)
    for a, b in sorted(arcs_used, reverse=True):
        adj[a].append(b)
    stack, trail = [start], []
    while stack:
        v = stack[-1]
        if adj[v]:
            stack.append(adj[v].pop())
        else:
            trail.append(stack.pop())
    trail.reverse()
    chain, cut = [], []
    for i, v in enumerate(trail):
        if v in used and v not in chain:
            chain.append(v)
            cut.append(i)
    missing = used - set(chain)
    if missing:
        raise ValueError(f"trail from {start} does not reach used region(s) {sorted(missing)}")
    routes = []
    for i0, i1 in zip(cut, cut[1:]):
        seg, pos = [], {}
        for v in trail[i0:i1 + 1]:
            if v in pos:                     # a loop: cut back to the first visit of v
                del seg[pos[v] + 1:]
                pos = {w: k for k, w in enumerate(seg)}
            else:
                pos[v] = len(seg)
                seg.append(v)
        routes.append(seg)
    return chain, routes


def solution_from_pyomo(m) -> Solution:
    """The decoded solution in the position form of ``p1.solution.Solution`` (x, a, n, f), so the
    shared decoder ``plans_from_solution`` turns it into JobPlans."""
    data = m.data
    inst = data.inst
    x, a, n, f = {}, {}, {}, {}
    for d in data.jobs:
        j = d.j
        x[j] = 1.0 if (m.x[j].value or 0.0) > 0.5 else 0.0
        for r in d.regions:
            n[(j, r)] = float(round(sum((m.n[j, r, c].value or 0.0) for c in range(len(d.classes))
                                        if (j, r, c) in m.n)))
        if x[j] < 0.5:
            continue
        used = {r for r in d.regions if n[(j, r)] >= 1}
        if len(used) == 1 or d.K == 1:
            a[(j, 1, next(iter(used)))] = 1.0
            continue
        start = next(r for r in d.regions if (m.p[j, r].value or 0.0) > 0.5)
        arcs_used = [arc_ends(inst, e, dd) for e in d.links for dd in (0, 1) if (m.F[j, e, dd].value or 0.0) > 0.5]
        chain, routes = trail_chain(inst, used, start, arcs_used)
        for k, r in enumerate(chain, start=1):
            a[(j, k, r)] = 1.0
        for k, rt in enumerate(routes, start=1):
            for u_, v_ in zip(rt, rt[1:]):
                e = inst.link_index[(inst.regions[u_].name, inst.regions[v_].name)]
                dd = 0 if inst.region_index[inst.links[e].a] == u_ else 1
                f[(j, k, e, dd)] = 1.0
    return Solution(x, a, n, f)


def load_solution_into_pyomo(m, sol: Solution) -> bool:
    """Set every variable of ``m`` from a position-form ``sol`` (a complete MIP start).  Returns False (and
    sets nothing useful) when a job's routes cross a link twice in the same direction, which P1.33 excludes."""
    data = m.data
    for v in m.component_data_objects(pyo.Var):
        v.set_value(0, skip_validation=True)
    for d in data.jobs:
        j = d.j
        if sol.x.get(j, 0.0) < 0.5:
            continue
        m.x[j].set_value(1)
        chain = [r for k in range(1, d.K + 1) for r in d.regions if sol.a.get((j, k, r), 0) > 0.5]
        cls = min(d.cls_of[r] for r in chain)
        if len(d.classes) > 1:
            for c in range(len(d.classes)):
                m.s[j, c].set_value(1 if c == cls else 0)
        pi = 0.0
        for r in chain:
            nr = round(sol.n[(j, r)])
            m.u[j, r].set_value(1)
            m.n[j, r, cls].set_value(nr)
            pi += d.pi[r] * nr
            if (j, r) in getattr(m, "y", {}) and nr == d.S:
                m.y[j, r].set_value(1)      # P1.47: held whole by r
        if pi > d.pi_max and pi - d.pi_max <= 1e-12 * d.pi_max:
            pi = d.pi_max       # the same sum as pi_max's (P1.15) in another order: rounding, not a bigger value
        if d.K == 1:
            continue
        m.p[j, chain[0]].set_value(1)
        if hasattr(m, "P"):
            m.P[j].set_value(pi)
        m.t[j, chain[-1]].set_value(1)
        m.sig[j, chain[0]].set_value(len(chain) - 1)
        for (jj, k, e, dd), val in sol.f.items():
            if jj != j or val < 0.5:
                continue
            if m.F[j, e, dd].value:
                return False
            m.F[j, e, dd].set_value(1)
            m.q[j, e, dd].set_value(pi)
            m.z[j, e, dd].set_value(m.z[j, e, dd].value + len(chain) - k)
        for e in d.links:
            if (j, e) in m.v:
                m.v[j, e].set_value(d.demand[cls] * (m.F[j, e, 0].value + m.F[j, e, 1].value))
    return True
