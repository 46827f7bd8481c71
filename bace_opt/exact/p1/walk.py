"""P1 placement as a Pyomo MILP in the walk formulation (models/placement.md section 9, P1.30-P1.39).

Instead of positions k = 1..K_j and one unit flow per hop (the position formulation of ``p1.milp``),
job j's hops are described together by ONE walk: binary arc variables F[j,e,d] (link e crossed in direction
d) forming a trail from the region of the first block to the region of the last that passes through every
region j uses.  The chain is the order of first visits along the trail, and hop k's route the part of the
trail between the k-th and (k+1)-th first visit (a simple path after removing loops).  Every chain with its
routes gives such a trail with the same link uses; every trail decodes to a chain whose link uses are no
more than the trail's (section 9 proves it), so the optimum is the same and every simple route is still a
candidate.  The model has no position index (no symmetry between block orders), and per job 2|E_j| arc
binaries instead of 2 (K_j - 1) |E_j|.

Speed-ups (models/placement.md section 9b): count cuts for the fixed count (P1.41, added by ``prepare_level``),
proportional and identical jobs ordered (P1.42, P1.43), class-capacity rows (P1.44), and ``LEVEL3_BY_COST``:
the level driver proves level 3 by cost minimization under a shorter run-time cut (P1.45).  Tighter rows
(section 9c, each behind a module switch, all on): region-count covers (P1.46), whole-job indicators y (P1.47),
open and oriented trails (P1.48, P1.49), pair cut-sets of the connectivity (P1.50), and the cost product on one
price-rate column per job (P1.37').

Notation (code name: symbol of models/placement.md):
    x[j]        x_j        job j starts at t0
    u[j,r]      u_jr       j uses region r
    n[j,r,c]    n_jrc      stages of j in region r while the job's slowest speed class is c
    s[j,c]      s_jc       the slowest GPU speed used by j is class c (only when j's regions have > 1 speed)
    p[j,r]      p_jr       the trail starts in r (the first block)
    t[j,r]      t_jr       the trail ends in r (the last block)
    F[j,e,d]    F_jed      the trail crosses link e in direction d (0: a->b, 1: b->a)
    z[j,e,d]    z_jed      connectivity flow from the start to every other used region (continuous)
    sig[j,v]    sigma_jv   supply of that flow at node v (only at the start)
    q[j,e,d]    q_jed      Pi_j * F_jed: price-weighted GPU rate times arc use (USD/s)
    v[j,e]      v_je       bandwidth j reserves on link e (only with > 1 speed class)
    y[j,r]      y_jr       all S_j stages of j are in r (only where cap_jr = S_j; P1.47)
    P[j]        P_j        Pi_j = sum_r pi_jr n_jr, the job's price rate (P1.37')

This module builds the model (its row families); reading a solution back (the trail decoded into a chain and
routes) and loading a MIP start are in ``p1.walk_solution``.  The formulation's interface, which the level
driver ``p1.milp`` reads from this module as from ``p1.position``: ``build_model``,
``prepare_level``, ``LEVEL3_BY_COST``, and ``solution_from_pyomo`` / ``load_solution_into_pyomo`` (from
``p1.walk_solution``).
"""
from __future__ import annotations

import logging

import pyomo.environ as pyo

from .common import add_speed_classes, class_index_sets, price_rate, sigma, stages_in
from .data import PlacementData, arc_ends, count_cuts, job_arcs, proportional_groups
from .walk_solution import load_solution_into_pyomo, solution_from_pyomo  # noqa: F401  (interface)

log = logging.getLogger(__name__)

#: the level driver proves level 3 by cost minimization under a shorter run-time cut (P1.45)
LEVEL3_BY_COST = True
#: region-count covers (P1.46) and whole-job indicators (P1.47) are built (switches for measurement)
REGION_COVERS = True
WHOLE_JOBS = True
#: open trails: a job held by several regions starts and ends in different regions (P1.48; needs WHOLE_JOBS)
OPEN_TRAILS = True
#: ... and oriented from the lower region index to the higher, cumulatively (P1.49, needs OPEN_TRAILS)
ORIENTED_TRAILS = True
#: pair cut-sets of the trail's connectivity (P1.50)
PAIR_CUTS = True
#: the cost product rows with x_j and one price-rate variable per job (P1.37')
PRICE_VAR = True


def build_model(data: PlacementData) -> pyo.ConcreteModel:
    """The P1 MILP in the walk form (P1.5, P1.6, P1.13, P1.16, P1.21, P1.30-P1.39) with three objectives,
    only ``obj_count`` active."""
    m = pyo.ConcreteModel(name="bace_opt_P1_placement_walk")
    m.data = data
    J = data.jobs
    walk = [d for d in J if d.K > 1]
    JR = [(d.j, r) for d in J for r in d.regions]
    JRW = [(d.j, r) for d in walk for r in d.regions]
    JRC, JC = class_index_sets(J)
    JE = [(d.j, e) for d in walk for e in d.links]
    JED = [(j, e, dd) for (j, e) in JE for dd in (0, 1)]
    JE_multi = [(d.j, e) for d in walk if len(d.classes) > 1 for e in d.links]
    nodes = range(len(data.inst.regions))
    JV = [(d.j, v) for d in walk for v in nodes]
    m.J = pyo.Set(initialize=[d.j for d in J], ordered=True)
    m.JR = pyo.Set(initialize=JR, dimen=2, ordered=True)
    m.JRW = pyo.Set(initialize=JRW, dimen=2, ordered=True)
    m.JRC = pyo.Set(initialize=JRC, dimen=3, ordered=True)
    m.JC = pyo.Set(initialize=JC, dimen=2, ordered=True)
    m.JE = pyo.Set(initialize=JE, dimen=2, ordered=True)
    m.JED = pyo.Set(initialize=JED, dimen=3, ordered=True)
    m.JE_MULTI = pyo.Set(initialize=JE_multi, dimen=2, ordered=True)
    m.JV = pyo.Set(initialize=JV, dimen=2, ordered=True)

    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.u = pyo.Var(m.JR, domain=pyo.Binary)
    m.n = pyo.Var(m.JRC, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, r, c: (0, J[j].cap[r]))
    m.s = pyo.Var(m.JC, domain=pyo.Binary)
    m.p = pyo.Var(m.JRW, domain=pyo.Binary)
    m.t = pyo.Var(m.JRW, domain=pyo.Binary)
    m.F = pyo.Var(m.JED, domain=pyo.Binary)
    m.z = pyo.Var(m.JED, bounds=lambda _, j, e, dd: (0, J[j].K - 1))
    m.sig = pyo.Var(m.JRW, bounds=lambda _, j, r: (0, J[j].K - 1))
    m.q = pyo.Var(m.JED, bounds=lambda _, j, e, dd: (0, J[j].pi_max))
    m.v = pyo.Var(m.JE_MULTI, domain=pyo.NonNegativeReals)

    add_stages(m)
    add_classes(m)
    add_trail(m)
    add_connectivity(m)
    if PAIR_CUTS:
        add_pair_cuts(m)
    add_capacity(m)
    add_class_capacity(m)
    if REGION_COVERS:
        add_region_covers(m)
    if WHOLE_JOBS:
        add_whole_jobs(m)
    if OPEN_TRAILS and WHOLE_JOBS:       # P1.48-P1.49 need y: a job held whole starts and ends in one region
        add_open_trails(m)
    add_cost_linearization(m)
    add_symmetry_breaking(m)
    add_objectives(m)
    return m


def _U(m, j, e):
    """U_je = F_je0 + F_je1: times the trail crosses link e (<= 2, P1.33)."""
    return m.F[j, e, 0] + m.F[j, e, 1]


def add_stages(m):
    """P1.5 sum_r n_jr = S_j x_j; P1.6 u_jr <= n_jr <= cap_jr u_jr; P1.30 a job without a walk (K_j = 1)
    uses one region: sum_r u_jr <= x_j."""
    J = m.data.jobs
    m.con_stages_total = pyo.Constraint(m.J, rule=lambda m, j: sum(stages_in(m, J[j], r) for r in J[j].regions)
                                        == J[j].S * m.x[j])
    m.con_stages_min = pyo.Constraint(m.JR, rule=lambda m, j, r: stages_in(m, J[j], r) >= m.u[j, r])
    m.con_stages_max = pyo.Constraint(m.JR, rule=lambda m, j, r: stages_in(m, J[j], r) <= J[j].cap[r] * m.u[j, r])
    m.con_single = pyo.Constraint([d.j for d in J if d.K == 1],
                                  rule=lambda m, j: sum(m.u[j, r] for r in J[j].regions) <= m.x[j])


def add_classes(m):
    """P1.16 (``p1.common.add_speed_classes``) with u_jr the region-use binary, and P1.40 (tighter,
    valid because every stage of j is counted in the chosen class): sum_r n_jrc = S_j s_jc."""
    J = m.data.jobs
    m.con_class_total = pyo.Constraint(
        m.JC, rule=lambda m, j, c: sum(m.n[j, r, c] for r in J[j].regions if (j, r, c) in m.n) == J[j].S * m.s[j, c])
    add_speed_classes(m, lambda m, d, r: m.u[d.j, r])


def _arcs(m):
    data = m.data
    if not hasattr(m, "_arc_cache"):
        m._arc_cache = {d.j: job_arcs(data.inst, d) for d in data.jobs if d.K > 1}
    return m._arc_cache


def add_trail(m):
    """P1.31 sum_r p_jr = x_j, sum_r t_jr = x_j, p_jr <= u_jr, t_jr <= u_jr (the trail starts and ends in
    used regions);  P1.32 balance at every node v: sum_out F - sum_in F = p_jv - t_jv (0 at nodes j cannot
    use);  P1.33 F binary: each link at most once per direction (section 9: a second crossing in the same
    direction is never needed);  P1.34 valid cuts: F_jed <= x_j; every used region other than the start is
    entered, sum_in F >= u_jv - p_jv; the trail has at least (regions used - 1) arcs."""
    J = m.data.jobs
    arcs = _arcs(m)
    walk = [d.j for d in J if d.K > 1]
    m.con_start_one = pyo.Constraint(walk, rule=lambda m, j: sum(m.p[j, r] for r in J[j].regions) == m.x[j])
    m.con_end_one = pyo.Constraint(walk, rule=lambda m, j: sum(m.t[j, r] for r in J[j].regions) == m.x[j])
    m.con_start_used = pyo.Constraint(m.JRW, rule=lambda m, j, r: m.p[j, r] <= m.u[j, r])
    m.con_end_used = pyo.Constraint(m.JRW, rule=lambda m, j, r: m.t[j, r] <= m.u[j, r])

    def bal(m, j, v):
        d = J[j]
        oa, ia = arcs[j]
        lhs = sum(m.F[j, e, dd] for e, dd in oa[v]) - sum(m.F[j, e, dd] for e, dd in ia[v])
        rhs = (m.p[j, v] - m.t[j, v]) if v in d.cap else 0
        if isinstance(lhs, int) and isinstance(rhs, int):
            return pyo.Constraint.Skip
        return lhs == rhs
    m.con_balance = pyo.Constraint(m.JV, rule=bal)
    m.con_arc_started = pyo.Constraint(m.JED, rule=lambda m, j, e, dd: m.F[j, e, dd] <= m.x[j])

    def entered(m, j, r):
        ia = arcs[j][1]
        if not ia[r]:
            return m.u[j, r] <= m.p[j, r]
        return sum(m.F[j, e, dd] for e, dd in ia[r]) >= m.u[j, r] - m.p[j, r]
    m.con_entered = pyo.Constraint(m.JRW, rule=entered)
    m.con_arcs_min = pyo.Constraint(walk, rule=lambda m, j: sum(_U(m, j, e) for e in J[j].links)
                                    >= sum(m.u[j, r] for r in J[j].regions) - m.x[j])


def add_connectivity(m):
    """P1.35 single-commodity flow from the start to every other used region over the trail's arcs:
    sigma_jv <= (K_j - 1) p_jv, sum_v sigma_jv = sum_r u_jr - x_j;
    at node v: sum_in z - sum_out z = u_jv - p_jv - sigma_jv (0 at nodes j cannot use);  z_jed <= (K_j - 1) F_jed.
    So every used region is reached from the start along arcs of the trail: the support of F is connected
    where it matters, and a trail from start to end through all of them exists (Euler)."""
    J = m.data.jobs
    arcs = _arcs(m)
    walk = [d.j for d in J if d.K > 1]
    m.con_supply_at_start = pyo.Constraint(m.JRW, rule=lambda m, j, r: m.sig[j, r] <= (J[j].K - 1) * m.p[j, r])
    m.con_supply_total = pyo.Constraint(walk, rule=lambda m, j: sum(m.sig[j, r] for r in J[j].regions)
                                        == sum(m.u[j, r] for r in J[j].regions) - m.x[j])

    def conn(m, j, v):
        d = J[j]
        oa, ia = arcs[j]
        lhs = sum(m.z[j, e, dd] for e, dd in ia[v]) - sum(m.z[j, e, dd] for e, dd in oa[v])
        rhs = (m.u[j, v] - m.p[j, v] - m.sig[j, v]) if v in d.cap else 0
        if isinstance(lhs, int) and isinstance(rhs, int):
            return pyo.Constraint.Skip
        return lhs == rhs
    m.con_connect = pyo.Constraint(m.JV, rule=conn)
    m.con_connect_arc = pyo.Constraint(m.JED, rule=lambda m, j, e, dd: m.z[j, e, dd] <= (J[j].K - 1) * m.F[j, e, dd])


def add_pair_cuts(m):
    """P1.50 cut-sets of two regions W = {a, b} of R_j (P1.35 is their flow form; these rows are what the LP
    misses when the trail's fraction circles inside W): every used region other than the start is reached from
    the start along the trail, so an arc enters W unless the start is in W:
    sum_{arcs into W from outside} F >= u_jr - p_ja - p_jb (r in W); and the trail goes on from every used region
    other than the end to the end, so sum_{arcs out of W} F >= u_jr - t_ja - t_jb."""
    J = m.data.jobs
    arcs = _arcs(m)
    inst = m.data.inst
    rows = [(d.j, a, b, r, io) for d in J if d.K > 2 for i, a in enumerate(d.regions) for b in d.regions[i + 1:]
            for r in (a, b) for io in (0, 1)]

    def rule(m, j, a, b, r, io):
        W = (a, b)
        oa, ia = arcs[j]
        if io == 0:   # arcs into W from outside
            cross = [(e, dd) for v in W for e, dd in ia[v] if arc_ends(inst, e, dd)[0] not in W]
            end = m.p
        else:
            cross = [(e, dd) for v in W for e, dd in oa[v] if arc_ends(inst, e, dd)[1] not in W]
            end = m.t
        return sum(m.F[j, e, dd] for e, dd in cross) >= m.u[j, r] - end[j, a] - end[j, b]
    m.PAIR_ROWS = pyo.Set(initialize=rows, dimen=5, ordered=True)
    m.con_pair_cut = pyo.Constraint(m.PAIR_ROWS, rule=rule)


def add_capacity(m):
    """P1.13 GPUs; P1.36 bandwidth sum_j b_j U_je <= free_e (one class), or with several classes
    v_je >= b_jc (U_je - 2 (1 - s_jc)) and sum_j v_je <= free_e."""
    data = m.data
    J = data.jobs
    R = sorted({r for d in J for r in d.regions})
    m.con_gpus = pyo.Constraint(R, rule=lambda m, r: sum(d.job.gpus_per_stage * stages_in(m, d, r)
                                                         for d in J if r in d.cap) <= data.free_gpus[data.region_names[r]])
    m.con_reserve_class = pyo.Constraint(
        [(j, e, c) for (j, e) in m.JE_MULTI for c in range(len(J[j].classes))],
        rule=lambda m, j, e, c: m.v[j, e] >= J[j].demand[c] * (_U(m, j, e) - 2 * (1 - m.s[j, c])))
    E = sorted({e for d in J if d.K > 1 for e in d.links})

    def bw_rule(m, e):
        terms = []
        for d in J:
            if d.K <= 1 or e not in d.links:
                continue
            terms.append(m.v[d.j, e] if len(d.classes) > 1 else d.demand[0] * _U(m, d.j, e))
        if not terms:
            return pyo.Constraint.Skip
        return sum(terms) <= data.free_gbps[e]
    m.con_bandwidth = pyo.Constraint(E, rule=bw_rule)


def add_class_capacity(m):
    """P1.44 for every speed f above the slowest: a job whose slowest class is at least f holds all its G_j GPUs
    in regions of speed >= f, so sum_j G_j phi_jf <= Cap_f (free GPUs of those regions) and, as any k such jobs
    hold at least the k smallest G_j, sum_j phi_jf <= k_f (the most smallest totals that fit Cap_f), with
    phi_jf = sum_{c: f_c >= f} s_jc (x_j for a job with one class at least f).  Both are implied for integral
    points (the first is a sum of P1.13 rows); they are explicit so that the solver's knapsack cuts see them."""
    data = m.data
    J = data.jobs
    inst = data.inst
    speed = {r: inst.speed[inst.regions[r].name] for r in range(len(inst.regions))}
    used = {r for d in J for r in d.regions}
    rows = []
    for f in sorted({speed[r] for r in used})[1:]:
        cap = sum(data.free_gpus[data.region_names[r]] for r in used if speed[r] >= f)
        terms = [(d, [c for c in range(len(d.classes)) if d.classes[c] >= f]) for d in J]
        terms = [(d, cs) for d, cs in terms if cs]
        k, tot = 0, 0
        for g in sorted(d.job.gpus for d, _ in terms):
            if tot + g > cap:
                break
            tot, k = tot + g, k + 1
        if terms:
            rows.append((cap, k, terms))

    def phi(d, cs):
        return sum(m.s[d.j, c] for c in cs) if len(d.classes) > 1 else m.x[d.j]
    m.CLASS_ROWS = pyo.Set(initialize=range(len(rows)), ordered=True)
    m.con_class_gpus = pyo.Constraint(m.CLASS_ROWS, rule=lambda m, i: sum(d.job.gpus * phi(d, cs)
                                                                          for d, cs in rows[i][2]) <= rows[i][0])
    m.con_class_jobs = pyo.Constraint(m.CLASS_ROWS, rule=lambda m, i: sum(phi(d, cs) for d, cs in rows[i][2])
                                      <= rows[i][1])


def regions_needed(caps: list[int], stages: int) -> int:
    """The fewest regions whose caps (largest first) hold ``stages`` stages (0 for none; len + 1 if all do not)."""
    k, tot = 0, 0
    for c in sorted(caps, reverse=True):
        if tot >= stages:
            break
        tot, k = tot + c, k + 1
    return k if tot >= stages else len(caps) + 1


def region_cover_rows(d) -> list[tuple[int | None, list[int], int]]:
    """P1.46 for job ``d``: (r, others, k) meaning sum_{r' in others} u_jr' >= k u_jr (r None: the whole job,
    sum_r u_jr >= k x_j).  Only rows with k >= 1 (r given) or k >= 2 (r None) are informative."""
    rows = []
    k = regions_needed([d.cap[r] for r in d.regions], d.S)
    if k >= 2:
        rows.append((None, list(d.regions), k))
    for r in d.regions:
        if d.cap[r] >= d.S:
            continue
        others = [q for q in d.regions if q != r]
        k = regions_needed([d.cap[q] for q in others], d.S - d.cap[r])
        rows.append((r, others, k))
    return rows


def add_region_covers(m):
    """P1.46 region-count covers: a job needs at least k_j regions, k_j the fewest whose caps hold S_j (largest
    caps first): sum_r u_jr >= k_j x_j; and a job that uses r with cap_jr < S_j places the other >= S_j - cap_jr
    stages in at least k_jr other regions: sum_{r' != r} u_jr' >= k_jr u_jr.  Both hold for every integral point
    (P1.5, P1.6); the LP relaxation, where u_jr may be as small as n_jr / cap_jr, misses them."""
    J = m.data.jobs
    rows = [(d.j, r, others, k) for d in J if d.K > 1 for r, others, k in region_cover_rows(d)]
    m.COVER_ROWS = pyo.Set(initialize=range(len(rows)), ordered=True)

    def rule(m, i):
        j, r, others, k = rows[i]
        lhs = sum(m.u[j, q] for q in others)
        return lhs >= k * (m.x[j] if r is None else m.u[j, r])
    m.con_region_cover = pyo.Constraint(m.COVER_ROWS, rule=rule)


def add_whole_jobs(m):
    """P1.47 whole-job indicators y_jr (binary, for regions that can hold all of j: cap_jr = S_j): y_jr = 1 iff
    all S_j stages of j are in r.  Rows: n_jr <= S_j y_jr + min(cap_jr, S_j - 1)(u_jr - y_jr), n_jr >= S_j y_jr
    (so y is exactly that indicator at integral points); a job not held whole by one region uses >= 2 regions,
    hence its trail has >= 1 arc: sum_e U_je >= x_j - sum_r y_jr; and per region the binary knapsack
    sum_j G_j y_jr <= F_r (implied by P1.13), on which the solver separates cover cuts."""
    data = m.data
    J = data.jobs
    JRY = [(d.j, r) for d in J if d.K > 1 for r in d.regions if d.cap[r] >= d.S]
    m.JRY = pyo.Set(initialize=JRY, dimen=2, ordered=True)
    m.y = pyo.Var(m.JRY, domain=pyo.Binary)
    m.con_whole_upper = pyo.Constraint(m.JRY, rule=lambda m, j, r: stages_in(m, J[j], r) <= J[j].S * m.y[j, r]
                                       + min(J[j].cap[r], J[j].S - 1) * (m.u[j, r] - m.y[j, r]))
    m.con_whole_lower = pyo.Constraint(m.JRY, rule=lambda m, j, r: stages_in(m, J[j], r) >= J[j].S * m.y[j, r])
    walk = [d.j for d in J if d.K > 1]
    m.con_whole_split = pyo.Constraint(walk, rule=lambda m, j: sum(_U(m, j, e) for e in J[j].links)
                                       >= m.x[j] - sum(m.y[j, r] for r in J[j].regions if (j, r) in m.y))
    R = sorted({r for (_, r) in JRY})
    m.con_whole_gpus = pyo.Constraint(R, rule=lambda m, r: sum(J[j].job.gpus * m.y[j, rr] for (j, rr) in JRY if rr == r)
                                      <= data.free_gpus[data.region_names[r]])


def add_open_trails(m):
    """P1.48 a trail of a job held by several regions does not return to its start: p_jr + t_jr <= u_jr + y_jr
    (y_jr the whole-job indicator of P1.47, 0 where r cannot hold all of j or P1.47 is off).  Valid for some
    optimum of every level: in a trail that ends where it started, the part after the last first visit of a
    used region (non-empty, it returns to the start) carries no hop of the decoded chain (section 9); dropping
    its arcs keeps the chain, stages and classes and lowers link use, latency and egress, so cost and run time
    do not grow, and the new end (the last region first visited) differs from the start.  A job held whole by
    one region has p = t = r and y_jr = 1."""
    J = m.data.jobs
    JR = [(d.j, r) for d in J if d.K > 1 for r in d.regions]
    m.con_open_trail = pyo.Constraint(JR, rule=lambda m, j, r: m.p[j, r] + m.t[j, r] <= m.u[j, r] + _y(m, j, r))
    if ORIENTED_TRAILS:
        add_oriented_trails(m)


def _y(m, j, r):
    """y_jr (P1.47) where it exists, else 0 (r cannot hold all of j, or P1.47 is off)."""
    return m.y[j, r] if hasattr(m, "y") and (j, r) in m.y else 0


def add_oriented_trails(m):
    """P1.49 (with P1.48) the start has a lower region index than the end unless one region holds the whole job,
    cumulatively: for every region k of j, sum_{r <= k} t_jr <= sum_{r < k} p_jr + sum_{r <= k} y_jr and
    sum_{r >= k} p_jr <= sum_{r > k} t_jr + sum_{r >= k} y_jr.  Valid for some optimum of every level: take
    one that meets P1.48 (start != end for a job in several regions) and reverse the trails with start index >
    end index (same links, regions, stages: same cost, run time and resource use; P1.42-P1.43 do not depend on
    the orientation).  At an integral point the end index t* and start index p* satisfy p* < t* (or p* = t* with
    y = 1), which is what both rows say.  P1.38 is their aggregate; these rows keep the LP from mixing the two
    orientations of one trail, which halves the cost product P1.37 on each direction."""
    J = m.data.jobs
    rows = [(d.j, k) for d in J if d.K > 1 for k in d.regions]

    def end_rule(m, j, k):
        R = J[j].regions
        return sum(m.t[j, r] for r in R if r <= k) <= sum(m.p[j, r] for r in R if r < k) \
            + sum(_y(m, j, r) for r in R if r <= k)

    def start_rule(m, j, k):
        R = J[j].regions
        return sum(m.p[j, r] for r in R if r >= k) <= sum(m.t[j, r] for r in R if r > k) \
            + sum(_y(m, j, r) for r in R if r >= k)
    m.con_orient_end = pyo.Constraint(rows, rule=end_rule)
    m.con_orient_start = pyo.Constraint(rows, rule=start_rule)


def add_cost_linearization(m):
    """P1.37 / P1.37' q_jed = Pi_j F_jed exactly (F binary): q >= Pi_j - Pi_max_j (x_j - F), q >= Pi_min_j F, q >= 0
    (x_j for 1 is valid because F <= x_j and Pi_j = 0 when j does not start; it is tighter for fractional x_j).
    With ``PRICE_VAR`` (P1.37'): x_j in place of 1, and Pi_j one variable P_j per job (P_j = sum_r pi_r n_jr)
    instead of the sum repeated in every row; without it, P1.37 as in section 9."""
    J = m.data.jobs
    if PRICE_VAR:
        walk = [d.j for d in J if d.K > 1]
        m.P = pyo.Var(walk, bounds=lambda _, j: (0, J[j].pi_max))
        m.con_price_rate = pyo.Constraint(walk, rule=lambda m, j: m.P[j] == price_rate(m, J[j]))

        def rate(m, j):
            return m.P[j]
    else:
        def rate(m, j):
            return price_rate(m, J[j])
    m.con_cost_product = pyo.Constraint(m.JED, rule=lambda m, j, e, dd:
                                        m.q[j, e, dd] >= rate(m, j) - J[j].pi_max * ((m.x[j] if PRICE_VAR else 1)
                                                                                     - m.F[j, e, dd]))
    m.con_cost_product_min = pyo.Constraint(m.JED, rule=lambda m, j, e, dd:
                                            m.q[j, e, dd] >= J[j].pi_min * m.F[j, e, dd])


def add_symmetry_breaking(m):
    """P1.38 a trail and its reverse cost the same: index(start) <= index(end).  P1.42 proportional jobs
    (``proportional_groups``; identical jobs, P1.21, included) start in order of N_j: x_i >= x_j for consecutive
    i, j of a group.  P1.43 identical jobs (equal N_j too) that both start hold placements in order of
    Phi_j = sum_r (r + 1) n_jr: Phi_i <= Phi_j + Phi^max_i (1 - x_j)."""
    J = m.data.jobs
    walk = [d.j for d in J if d.K > 1]
    m.con_sym_reverse = pyo.Constraint(walk, rule=lambda m, j: sum(r * m.p[j, r] for r in J[j].regions)
                                       <= sum(r * m.t[j, r] for r in J[j].regions))
    pairs = [(i, j) for g in proportional_groups(m.data) for i, j in zip(g, g[1:])]
    m.SYM_PAIRS = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    m.con_sym_jobs = pyo.Constraint(m.SYM_PAIRS, rule=lambda m, i, j: m.x[i] >= m.x[j])
    same = [(i, j) for i, j in pairs if J[i].job.iterations == J[j].job.iterations]
    m.SAME_PAIRS = pyo.Set(initialize=same, dimen=2, ordered=True)

    def phi(d):
        return sum((r + 1) * stages_in(m, d, r) for r in d.regions)
    m.con_sym_same = pyo.Constraint(m.SAME_PAIRS, rule=lambda m, i, j: phi(J[i]) <= phi(J[j]) + phi_max(J[i])
                                    * (1 - m.x[j]))


def phi_max(d) -> int:
    """The largest Phi_j = sum_r (r + 1) n_jr over placements of d (stages filled from the highest index)."""
    left, tot = d.S, 0
    for r in sorted(d.regions, reverse=True):
        k = min(left, d.cap[r])
        tot += (r + 1) * k
        left -= k
    return tot


def add_count_cuts(m, started: int) -> None:
    """P1.41 (levels 2 and 3, once level 1's optimum ``started`` is fixed): lo <= sum of x_j over the jobs with
    a GPU total >= T <= hi for every informative threshold T (``p1.data.count_cuts``)."""
    cuts = count_cuts(m.data, started)
    m.COUNT_CUTS = pyo.Set(initialize=range(len(cuts)), ordered=True)
    m.con_count_hi = pyo.Constraint(m.COUNT_CUTS, rule=lambda m, i: sum(m.x[j] for j in cuts[i][0]) <= cuts[i][2])
    m.con_count_lo = pyo.Constraint(m.COUNT_CUTS, rule=lambda m, i: sum(m.x[j] for j in cuts[i][0]) >= cuts[i][1]
                                    if cuts[i][1] > 0 else pyo.Constraint.Skip)


def prepare_level(m, level: int, started: int | None) -> None:
    """Families that depend on the level (called by the level driver before each solve): from level 2 on, the
    count cuts P1.41 for the fixed count ``started``."""
    if level >= 2 and started is not None and not hasattr(m, "con_count_hi"):
        add_count_cuts(m, started)


def job_cost_expr(m, d):
    """Job j's share of P1.39: sum_rc pi_r base_jc n_jrc + lat_j sum_ed l_e q_jed (+ egress_j sum_e eps_e U_je)."""
    data = m.data
    inst = data.inst
    j = d.j
    terms = [d.pi[r] * d.base_s[c] * m.n[j, r, c] for r in d.regions for c in range(len(d.classes))
             if (j, r, c) in m.n]
    if d.K > 1:
        for e in d.links:
            lat = inst.links[e].latency_ms
            for dd in (0, 1):
                if lat:
                    terms.append(d.lat_coef * lat * m.q[j, e, dd])
                if data.egress and inst.links[e].egress_usd_per_gb:
                    terms.append(d.egress_coef * inst.links[e].egress_usd_per_gb * m.F[j, e, dd])
    return sum(terms) if terms else 0.0


def cost_expr(m):
    """P1.39 cost: sum_j [ sum_rc pi_r base_jc n_jrc + lat_j sum_ed l_e q_jed (+ egress_j sum_e eps_e U_je) ]."""
    terms = [job_cost_expr(m, d) for d in m.data.jobs]
    return sum(terms) if terms else 0.0


def runtime_expr(m):
    """P1.19 in the walk form: sum_j [ sum_c base_jc s_jc + lat_j sum_e l_e U_je ]."""
    inst = m.data.inst
    J = m.data.jobs
    terms = [d.base_s[c] * sigma(m, d, c) for d in J for c in range(len(d.classes))]
    for (j, e, dd) in m.JED:
        lat = inst.links[e].latency_ms
        if lat:
            terms.append(J[j].lat_coef * lat * m.F[j, e, dd])
    return sum(terms) if terms else 0.0


def add_objectives(m):
    """P1.17 level 1: min -sum_j x_j; level 2: min cost (P1.39); level 3: min total run time."""
    m.obj_count = pyo.Objective(expr=-sum(m.x[j] for j in m.J), sense=pyo.minimize)
    m.obj_cost = pyo.Objective(expr=cost_expr(m), sense=pyo.minimize)
    m.obj_run = pyo.Objective(expr=runtime_expr(m), sense=pyo.minimize)
    m.obj_cost.deactivate()
    m.obj_run.deactivate()
