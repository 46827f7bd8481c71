"""Latency floors of P1's level 2 (models/placement.md section 13, P1.61-P1.62; issue 44 item 3): rows that bound
a split job's latency cost from below by the regions it uses, written on the walk model's columns (u, P, q) so
that the stage relaxation (``p1.stage``), which drops the trail and the arcs, keeps most of the cost it used to
lose.

A job j held by a set U of regions pays lat_j Pi_j L_j for latency (P1.39; Pi_j = sum_r pi_r n_jr its price rate,
L_j = sum_ed l_e F_jed its trail's latency), and its trail is a walk over the links j may use that visits every
region of U.  So L_j >= D_j(U), the least latency of a path through U in the shortest-path metric d_j of j's link
graph: for two regions a, b of U, L_j >= d_j(a, b); for three, L_j >= d_ab + d_bc + d_ac - max(d_ab, d_bc, d_ac)
(the shortest of the three orders).  With q_jed >= Pi_j F_jed (P1.37, exact at binary F) and Pi_j <= Pi^max_j:

    P1.61  w_j >= d_j(a, b) (Pi_j - Pi^max_j (2 - u_ja - u_jb))                  (pairs a < b)
    P1.62  w_j >= D_j(U) (Pi_j - Pi^max_j (|U| - sum_{r in U} u_jr))    (sets U of >= 3, separated)
    with   sum_ed l_e q_jed >= w_j >= 0                                     (one row per job: the floors stay short)

Each is valid for every integral point of the walk model: where all its regions are used the right side is
D Pi_j <= Pi_j L_j <= sum l_e q_jed; otherwise it is <= D (Pi_j - Pi^max_j) <= 0.  Two regions that j's links do
not connect are never both used (the trail connects them); such a pair gets no row.

``job_metric``: d_j over j's links (Floyd-Warshall on the region indexes).  ``add_latency_floors(m, sets)``
adds P1.61 for every pair and P1.62 for the sets given, as one list ``con_lat_floor`` (deactivated: the stage
relaxation switches it on; the walk search runs without it unless ``ACTIVE_IN_SEARCH``); ``extend_latency_floors``
adds P1.62 rows to it.
``violated_sets``: the region sets of a stage solution whose floor the rows so far miss, for the next round.
"""
from __future__ import annotations

import itertools
import math

import pyomo.environ as pyo

from .common import price_rate

#: the floors stay on in the walk MILP's own search (measured: docs/research/p1-strength/README.md)
ACTIVE_IN_SEARCH = False
#: level 2 carries the floors only where the walk model has at least this many arc binaries (sum_j 2 |E_j|):
#: below it the walk search proves level 2 soon on its own and the floors only cost (realistic 8 x 16, 896 arcs:
#: proven in 15-20 s, the floors +2 s, A/B wall 1.13; fleet12, 3,960 arcs: 0.50 % at 300 s without them)
MIN_ARCS = 2000
#: a set of up to this many regions gets its exact path floor (every order), a larger one its spanning tree's
EXACT_PATH_MAX = 7


def floors_pay(data) -> bool:
    """Whether level 2's stage relaxation carries the floors: the walk model has >= ``MIN_ARCS`` arc binaries."""
    return sum(2 * len(d.links) for d in data.jobs if d.K > 1) >= MIN_ARCS


def job_metric(data, d) -> dict:
    """{(a, b): least latency of a path from a to b over the links job ``d`` may use} for a != b in d.regions
    (absent: not connected)."""
    inst = data.inst
    nodes = sorted({inst.region_index[inst.links[e].a] for e in d.links} |
                   {inst.region_index[inst.links[e].b] for e in d.links} | set(d.regions))
    dist = {(a, b): (0.0 if a == b else math.inf) for a in nodes for b in nodes}
    for e in d.links:
        lk = inst.links[e]
        a, b = inst.region_index[lk.a], inst.region_index[lk.b]
        w = float(lk.latency_ms)
        if w < dist[a, b]:
            dist[a, b] = dist[b, a] = w
    for k in nodes:
        for a in nodes:
            dak = dist[a, k]
            if dak == math.inf:
                continue
            for b in nodes:
                if dak + dist[k, b] < dist[a, b]:
                    dist[a, b] = dak + dist[k, b]
    return {(a, b): dist[a, b] for a in d.regions for b in d.regions if a != b and dist[a, b] < math.inf}


def path_floor(metric: dict, regions) -> float:
    """The least latency of a path visiting ``regions`` in ``metric`` (inf: not connected): every order up to
    ``EXACT_PATH_MAX`` regions, else the metric's minimum spanning tree (a path through them is a spanning tree, so
    the tree's weight is a floor too)."""
    rs = sorted(regions)
    if len(rs) < 2:
        return 0.0
    if len(rs) <= EXACT_PATH_MAX:
        best = math.inf
        for o in itertools.permutations(rs):
            if o[0] < o[-1]:
                best = min(best, sum(metric.get((a, b), math.inf) for a, b in zip(o, o[1:])))
        return best
    tree, inside, left = 0.0, {rs[0]}, set(rs[1:])
    while left:          # Prim
        w, b = min((metric.get((a, b), math.inf), b) for a in inside for b in left)
        tree += w
        inside.add(b)
        left.discard(b)
    return tree


def floor_rows(data, sets: dict | None = None, jobs=None) -> list[tuple[int, tuple, float]]:
    """(j, regions, D) of P1.61 for every pair of every job with a walk (K_j > 1; those in ``jobs`` only, when
    given) and a positive floor, and of P1.62 for ``sets`` ({j: [(a, b, c, ...), ...]}, three regions or more)."""
    rows = []
    for d in data.jobs:
        if d.K <= 1 or (jobs is not None and d.j not in jobs and d.j not in (sets or {})):
            continue
        metric = job_metric(data, d)
        for a, b in itertools.combinations(sorted(d.regions) if jobs is None or d.j in jobs else (), 2):
            if d.cap[a] + d.cap[b] >= 2 and 0.0 < metric.get((a, b), math.inf) < math.inf:
                rows.append((d.j, (a, b), metric[a, b]))
        for t in (sets or {}).get(d.j, ()):
            D = path_floor(metric, t)
            if 0.0 < D < math.inf:
                rows.append((d.j, tuple(sorted(t)), D))
    return rows


def floor_row(m, j: int, regs: tuple, D: float):
    """The P1.61 / P1.62 row of job j over the regions ``regs`` with floor ``D`` on its latency-cost column
    ``lat_w[j]`` (an expression to add)."""
    d = m.data.jobs[j]
    rate = m.P[j] if hasattr(m, "P") and j in m.P else price_rate(m, d)
    return m.lat_w[j] >= D * (rate - d.pi_max * (len(regs) - sum(m.u[j, r] for r in regs)))


def add_latency_floors(m, sets: dict | None = None, active: bool | None = None, jobs=None) -> list:
    """Add the column ``lat_w`` (per job with a walk), its link row ``con_lat_link`` (sum_ed l_e q_jed >= w_j) and
    the list ``con_lat_floor`` (P1.61 every pair, P1.62 ``sets``) to the walk model ``m``, replacing them if there;
    deactivated unless ``active`` (default ``ACTIVE_IN_SEARCH``).  Returns the floor rows (ConstraintData)."""
    data = m.data
    inst = data.inst
    J = data.jobs
    for name in ("con_lat_floor", "con_lat_link", "lat_w"):
        if hasattr(m, name):
            m.del_component(getattr(m, name))
    walk = [d.j for d in J if d.K > 1]
    # w_j <= sum_ed l_e q_jed <= 2 Pi^max_j sum_e l_e (q <= Pi^max): a finite bound, which the safe dual bound of
    # the stage LP needs (``p1.lpbound``: a reduced cost of either sign needs both column bounds)
    m.lat_w = pyo.Var(walk, bounds=lambda _, j: (0, 2.0 * J[j].pi_max * sum(inst.links[e].latency_ms
                                                                          for e in J[j].links)))
    m.con_lat_link = pyo.Constraint(walk, rule=lambda m, j: sum(
        inst.links[e].latency_ms * (m.q[j, e, 0] + m.q[j, e, 1]) for e in J[j].links if inst.links[e].latency_ms)
        >= m.lat_w[j])
    m.con_lat_floor = pyo.ConstraintList()
    rows = [m.con_lat_floor.add(floor_row(m, j, regs, D)) for j, regs, D in floor_rows(data, sets, jobs)]
    set_floors_active(m, ACTIVE_IN_SEARCH if active is None else active)
    return rows


def set_floors_active(m, on: bool) -> None:
    """Switch the floors (``con_lat_link`` and ``con_lat_floor``) on or off."""
    for name in ("con_lat_link", "con_lat_floor"):
        c = getattr(m, name, None)
        if c is not None:
            c.activate() if on else c.deactivate()


def extend_latency_floors(m, sets: dict, pair_jobs=()) -> list:
    """Add P1.62 for ``sets`` ({j: [regions, ...]}) and P1.61 for every pair of the jobs ``pair_jobs`` to
    ``con_lat_floor`` (made by ``add_latency_floors``); the new rows, for a persistent solver's ``add_constraints``."""
    metrics: dict = {}
    out = [m.con_lat_floor.add(floor_row(m, j, regs, D)) for j, regs, D in floor_rows(m.data, None, set(pair_jobs))]
    for j, ts in sorted(sets.items()):
        metric = metrics.setdefault(j, job_metric(m.data, m.data.jobs[j]))
        for t in ts:
            D = path_floor(metric, t)
            if 0.0 < D < math.inf:
                out.append(m.con_lat_floor.add(floor_row(m, j, tuple(sorted(t)), D)))
    return out


def latency_cost_rate(m, j: int) -> float:
    """sum_ed l_e q_jed at the model's current values (what ``lat_w[j]`` may be at most)."""
    inst = m.data.inst
    return float(sum(inst.links[e].latency_ms * ((m.q[j, e, 0].value or 0.0) + (m.q[j, e, 1].value or 0.0))
                     for e in m.data.jobs[j].links))


def violated_sets(data, stages: dict, have: dict) -> dict:
    """{j: [regions, ...]} for each job of the stage solution ``stages`` ({(j, r, c): n}) held by >= 3 regions U:
    U itself and the triples of U whose path floor exceeds the best floor of the rows already on U's subsets
    (pairs and ``have``, {j: [...]}): the P1.62 rows that cut the solution off."""
    by_job: dict = {}
    for (j, r, _c), k in stages.items():
        if k > 0:
            by_job.setdefault(j, set()).add(r)
    out: dict = {}
    J = data.jobs
    for j, regs in sorted(by_job.items()):
        if len(regs) < 3:
            continue
        metric = job_metric(data, J[j])
        old = [set(t) for t in have.get(j, ())]
        cands = [tuple(sorted(regs))] + [t for t in itertools.combinations(sorted(regs), 3) if len(regs) > 3]
        for t in cands:
            if set(t) in old:
                continue
            known = max([metric.get((a, b), math.inf) for a, b in itertools.combinations(t, 2)] +
                        [path_floor(metric, o) for o in old if o <= set(t)])
            if path_floor(metric, t) > known * (1 + 1e-9):
                out.setdefault(j, []).append(t)
    return out
