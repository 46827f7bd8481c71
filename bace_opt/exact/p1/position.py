"""P1 placement as a Pyomo MILP in the position formulation (models/placement.md sections 3-5): which waiting
jobs start at t0, where, and over which routes.

Position-indexed formulation.  Job j's blocks occupy positions k = 1..K_j (contiguous from 1); position k
holds one region (``a[j,k,r]``), every region at most once (P1.4, no loss: models/placement.md section 3);
stage counts per region and slowest-speed class ``n[j,r,c]``; hop k (between positions k and k+1) is a unit
flow ``f[j,k,e,d]`` over the directed links of the whole topology (transit nodes included) from the region of
block k to the region of block k+1 (P1.8-P1.11), so any simple path is allowed: the route candidates are all
simple paths, the optimum is never cut off.  Run time depends on tau (the class) and the hops' latency;
cost = price-weighted GPU count x run time, linearized exactly by ``q[j,k,e] = Pi_j * g[j,k,e]`` with the
binary link use g and the computed bound Pi_max_j (P1.14-P1.15).  Lexicographic objective by sequential solves
(P1.17-P1.19): max jobs started; fix; min cost at t0 prices; fix (within a relative 1e-9 tolerance); min
total run time.

Notation (code name: symbol of models/placement.md):
    x[j]        x_j        job j starts at t0
    a[j,k,r]    a_jkr      block at position k of job j is in region r
    n[j,r,c]    n_jrc      stages of j in region r while the job's slowest speed class is c
    s[j,c]      s_jc       the slowest GPU speed used by j is class c (only when j's regions have > 1 speed)
    h[j,k,r]    h_jkr      hop k of j leaves region r (= a_jkr when position k+1 is used)
    f[j,k,e,d]  f_jked     hop k of j crosses link e in direction d (0: a->b, 1: b->a)
    q[j,k,e]    q_jke      Pi_j * (f_jke0 + f_jke1): price-weighted GPU rate times link use (USD/s)
    v[j,e]      v_je       bandwidth j reserves on link e (only with > 1 speed class)

The formulation's interface (the level driver ``p1.milp`` reads it; ``p1.walk`` has the same):
``build_model``, ``solution_from_pyomo``, ``load_solution_into_pyomo``.
"""
from __future__ import annotations

import pyomo.environ as pyo

from .common import add_speed_classes, class_index_sets, price_rate, sigma, stages_in
from .data import JobData, PlacementData, has_negative_prices, identical_pairs, job_arcs
from .solution import Solution


def build_model(data: PlacementData) -> pyo.ConcreteModel:
    """The P1 MILP (models/placement.md, P1.1-P1.16) with three objectives, only ``obj_count`` active."""
    m = pyo.ConcreteModel(name="bace_opt_P1_placement")
    m.data = data
    J = data.jobs
    # ---- index sets, precomputed (models/placement.md section 1)
    JK = [(d.j, k) for d in J for k in range(1, d.K + 1)]
    JKR = [(d.j, k, r) for d in J for k in range(1, d.K + 1) for r in d.regions]
    JRC, JC = class_index_sets(J)
    JH = [(d.j, k) for d in J for k in range(1, d.K)]
    JHR = [(d.j, k, r) for d in J for k in range(1, d.K) for r in d.regions]
    JHE = [(d.j, k, e) for d in J for k in range(1, d.K) for e in d.links]
    JHED = [(j, k, e, dd) for (j, k, e) in JHE for dd in (0, 1)]
    JE_multi = [(d.j, e) for d in J if len(d.classes) > 1 and d.K > 1 for e in d.links]
    m.J = pyo.Set(initialize=[d.j for d in J], ordered=True)
    m.JK = pyo.Set(initialize=JK, dimen=2, ordered=True)
    m.JKR = pyo.Set(initialize=JKR, dimen=3, ordered=True)
    m.JRC = pyo.Set(initialize=JRC, dimen=3, ordered=True)
    m.JC = pyo.Set(initialize=JC, dimen=2, ordered=True)
    m.JH = pyo.Set(initialize=JH, dimen=2, ordered=True)
    m.JHR = pyo.Set(initialize=JHR, dimen=3, ordered=True)
    m.JHE = pyo.Set(initialize=JHE, dimen=3, ordered=True)
    m.JHED = pyo.Set(initialize=JHED, dimen=4, ordered=True)
    m.JE_MULTI = pyo.Set(initialize=JE_multi, dimen=2, ordered=True)

    # ---- variables
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.a = pyo.Var(m.JKR, domain=pyo.Binary)
    m.n = pyo.Var(m.JRC, domain=pyo.NonNegativeIntegers,
                  bounds=lambda _, j, r, c: (0, J[j].cap[r]))
    m.s = pyo.Var(m.JC, domain=pyo.Binary)
    m.h = pyo.Var(m.JHR, bounds=(0, 1))                 # integral whenever a is (P1.7)
    m.f = pyo.Var(m.JHED, domain=pyo.Binary)
    m.q = pyo.Var(m.JHE, bounds=lambda _, j, k, e: (min(0.0, J[j].pi_min), J[j].pi_max))   # < 0: negative prices
    m.v = pyo.Var(m.JE_MULTI, domain=pyo.NonNegativeReals)

    add_positions(m)
    add_stages(m)
    add_classes(m)
    add_hops(m)
    if has_negative_prices(data):
        add_no_cycles(m)
    add_capacity(m)
    add_cost_linearization(m)
    add_symmetry_breaking(m)
    add_objectives(m)
    return m


def _o(m, d: JobData, k: int):
    """o_jk = sum_r a_jkr: position k of job j is used."""
    return sum(m.a[d.j, k, r] for r in d.regions)


def _u(m, d: JobData, r: int):
    """u_jr = sum_k a_jkr: j uses region r (P1.4 makes it binary)."""
    return sum(m.a[d.j, k, r] for k in range(1, d.K + 1))


def _g(m, j, k, e):
    """g_jke = f_jke0 + f_jke1: hop k of j uses link e (P1.12 makes it binary)."""
    return m.f[j, k, e, 0] + m.f[j, k, e, 1]


def add_positions(m):
    """P1.1 o_jk <= 1; P1.2 o_j1 = x_j; P1.3 o_j,k+1 <= o_jk; P1.4 u_jr <= 1 (each region at most once)."""
    J = m.data.jobs
    m.con_position_one = pyo.Constraint(m.JK, rule=lambda m, j, k: _o(m, J[j], k) <= 1)
    m.con_position_first = pyo.Constraint(m.J, rule=lambda m, j: _o(m, J[j], 1) == m.x[j])
    JK2 = [(d.j, k) for d in J for k in range(1, d.K)]
    m.con_position_contiguous = pyo.Constraint(JK2, rule=lambda m, j, k: _o(m, J[j], k + 1) <= _o(m, J[j], k))
    JR = [(d.j, r) for d in J for r in d.regions if d.K > 1]
    m.con_region_once = pyo.Constraint(JR, rule=lambda m, j, r: _u(m, J[j], r) <= 1)


def add_stages(m):
    """P1.5 sum_r n_jr = S_j x_j; P1.6 u_jr <= n_jr <= cap_jr u_jr (a used region holds >= 1 stage)."""
    J = m.data.jobs
    m.con_stages_total = pyo.Constraint(m.J, rule=lambda m, j: sum(stages_in(m, J[j], r) for r in J[j].regions)
                                        == J[j].S * m.x[j])
    JR = [(d.j, r) for d in J for r in d.regions]
    m.con_stages_min = pyo.Constraint(JR, rule=lambda m, j, r: stages_in(m, J[j], r) >= _u(m, J[j], r))
    m.con_stages_max = pyo.Constraint(JR, rule=lambda m, j, r: stages_in(m, J[j], r) <= J[j].cap[r] * _u(m, J[j], r))


def add_classes(m):
    """P1.16 (``p1.common.add_speed_classes``) with u_jr = sum_k a_jkr."""
    add_speed_classes(m, _u)


def add_hops(m):
    """P1.7 hop source: h_jkr <= a_jkr, sum_r h_jkr = o_j,k+1.
    P1.8 flow conservation at every node v of the topology (transit nodes too):
         sum_out f - sum_in f = h_jkv - a_j,k+1,v.
    P1.9/P1.10 in- and out-degree <= 1 per node and hop; P1.12 f_jke0 + f_jke1 <= 1.  The flow's support is
    then one simple path from block k's region to block k+1's region (plus, possibly, disjoint cycles that
    only cost; the decoder drops them)."""
    data = m.data
    J = data.jobs
    inst = data.inst
    m.con_hop_source_le = pyo.Constraint(m.JHR, rule=lambda m, j, k, r: m.h[j, k, r] <= m.a[j, k, r])
    m.con_hop_source_one = pyo.Constraint(m.JH, rule=lambda m, j, k: sum(m.h[j, k, r] for r in J[j].regions)
                                          == _o(m, J[j], k + 1))
    # arcs out of / into each node, per job (over the job's usable links)
    out_arcs, in_arcs = {}, {}
    for d in J:
        out_arcs[d.j], in_arcs[d.j] = job_arcs(inst, d)
    nodes = range(len(inst.regions))
    JHV = [(d.j, k, v) for d in J for k in range(1, d.K) for v in nodes
           if out_arcs[d.j][v] or in_arcs[d.j][v] or v in d.cap]
    m.JHV = pyo.Set(initialize=JHV, dimen=3, ordered=True)

    def flow_rule(m, j, k, v):
        d = J[j]
        lhs = sum(m.f[j, k, e, dd] for e, dd in out_arcs[j][v]) - sum(m.f[j, k, e, dd] for e, dd in in_arcs[j][v])
        rhs = (m.h[j, k, v] - m.a[j, k + 1, v]) if v in d.cap else 0
        if isinstance(lhs, int) and isinstance(rhs, int):
            return pyo.Constraint.Skip
        return lhs == rhs
    m.con_flow = pyo.Constraint(m.JHV, rule=flow_rule)
    JHV_in = [(j, k, v) for (j, k, v) in JHV if len(in_arcs[j][v]) > 1]
    JHV_out = [(j, k, v) for (j, k, v) in JHV if len(out_arcs[j][v]) > 1]
    m.con_flow_in = pyo.Constraint(JHV_in, rule=lambda m, j, k, v:
                                   sum(m.f[j, k, e, dd] for e, dd in in_arcs[j][v]) <= 1)
    m.con_flow_out = pyo.Constraint(JHV_out, rule=lambda m, j, k, v:
                                    sum(m.f[j, k, e, dd] for e, dd in out_arcs[j][v]) <= 1)
    m.con_link_once = pyo.Constraint(m.JHE, rule=lambda m, j, k, e: _g(m, j, k, e) <= 1)


def add_no_cycles(m):
    """P1.12b (only with negative prices; harden, issue 10): node potentials p_jkv in [0, |V| - 1] with
    p_jkb >= p_jka + 1 - |V| (1 - f_jke,d) on every arc a->b, so a hop's flow has no cycle.  With prices >= 0
    cycles only cost and an optimum has none (the decoder drops any); with a negative price a cycle's latency
    makes the cost more negative, and without this family the model's cost would differ from the evaluator's."""
    data = m.data
    J = data.jobs
    inst = data.inst
    nv = len(inst.regions)
    JHV = [(d.j, k, v) for d in J for k in range(1, d.K) for v in range(nv)]
    m.JHV_POT = pyo.Set(initialize=JHV, dimen=3, ordered=True)
    m.p_node = pyo.Var(m.JHV_POT, bounds=(0, nv - 1))

    def rule(m, j, k, e, dd):
        l = inst.links[e]
        a, b = inst.region_index[l.a], inst.region_index[l.b]
        if dd == 1:
            a, b = b, a
        return m.p_node[j, k, b] >= m.p_node[j, k, a] + 1 - nv * (1 - m.f[j, k, e, dd])
    m.con_no_cycles = pyo.Constraint(m.JHED, rule=rule)


def add_capacity(m):
    """P1.13 GPUs: sum_j g_j n_jr <= free_r.  P1.14 bandwidth per link (= per direction, reservations are
    symmetric): sum_j b_j sum_k g_jke <= free_e; with several speed classes b_j depends on s_jc and the
    reservation is v_je >= b_jc (U_je - (K_j - 1)(1 - s_jc)), U_je = sum_k g_jke (P1.14b)."""
    data = m.data
    J = data.jobs
    R = sorted({r for d in J for r in d.regions})
    m.con_gpus = pyo.Constraint(R, rule=lambda m, r: sum(d.job.gpus_per_stage * stages_in(m, d, r)
                                                         for d in J if r in d.cap) <= data.free_gpus[data.region_names[r]])
    m.con_reserve_class = pyo.Constraint(
        [(j, e, c) for (j, e) in m.JE_MULTI for c in range(len(J[j].classes))],
        rule=lambda m, j, e, c: m.v[j, e] >= J[j].demand[c] * (sum(_g(m, j, k, e) for k in range(1, J[j].K))
                                                              - (J[j].K - 1) * (1 - m.s[j, c])))
    E = sorted({e for d in J if d.K > 1 for e in d.links})

    def bw_rule(m, e):
        terms = []
        for d in J:
            if d.K <= 1 or e not in d.links:
                continue
            if len(d.classes) > 1:
                terms.append(m.v[d.j, e])
            else:
                terms.append(d.demand[0] * sum(_g(m, d.j, k, e) for k in range(1, d.K)))
        if not terms:
            return pyo.Constraint.Skip
        return sum(terms) <= data.free_gbps[e]
    m.con_bandwidth = pyo.Constraint(E, rule=bw_rule)


def add_cost_linearization(m):
    """P1.15 q_jke = Pi_j * g_jke exactly (g binary): q >= Pi_j - Pi_max_j (1 - g), q >= Pi_min_j g, q >= 0.
    Only lower bounds are needed: q appears with a non-negative coefficient in a minimized objective and
    nowhere else, so at an optimum q takes its lower envelope, which equals Pi_j g for binary g."""
    J = m.data.jobs
    m.con_cost_product = pyo.Constraint(m.JHE, rule=lambda m, j, k, e:
                                        m.q[j, k, e] >= price_rate(m, J[j]) - J[j].pi_max * (1 - _g(m, j, k, e)))
    m.con_cost_product_min = pyo.Constraint(m.JHE, rule=lambda m, j, k, e:
                                            m.q[j, k, e] >= J[j].pi_min * _g(m, j, k, e))


def add_symmetry_breaking(m):
    """P1.20 a chain and its reverse cost the same (same regions, same links): require
    index(first region) <= index(last region), the last region being e_jkr = a_jkr - h_jkr (k < K), a_jKr.
    P1.21 identical jobs start in a fixed order: x_j >= x_j' for j before j'."""
    J = m.data.jobs
    pairs = identical_pairs(m.data)

    def rev_rule(m, j):
        d = J[j]
        first = sum(r * m.a[j, 1, r] for r in d.regions)
        last = sum(r * (m.a[j, k, r] - m.h[j, k, r]) for k in range(1, d.K) for r in d.regions) \
            + sum(r * m.a[j, d.K, r] for r in d.regions)
        return first <= last
    m.con_sym_reverse = pyo.Constraint([d.j for d in J if d.K > 1], rule=rev_rule)
    m.SYM_PAIRS = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    m.con_sym_jobs = pyo.Constraint(m.SYM_PAIRS, rule=lambda m, i, j: m.x[i] >= m.x[j])


def cost_expr(m):
    """P1.18 objective: sum_j [ sum_rc pi_r base_jc n_jrc + lat_j sum_ke l_e q_jke (+ egress_j sum_ke eps_e g_jke) ]
    = sum_j elec_j(t0 prices) (+ egress_j): the product Pi_j * R_j written with q."""
    data = m.data
    inst = data.inst
    J = data.jobs
    terms = []
    for (j, r, c) in m.JRC:
        d = J[j]
        terms.append(d.pi[r] * d.base_s[c] * m.n[j, r, c])
    for (j, k, e) in m.JHE:
        d = J[j]
        lat = inst.links[e].latency_ms
        if lat:
            terms.append(d.lat_coef * lat * m.q[j, k, e])
        if data.egress and inst.links[e].egress_usd_per_gb:
            terms.append(d.egress_coef * inst.links[e].egress_usd_per_gb * _g(m, j, k, e))
    return sum(terms) if terms else 0.0


def runtime_expr(m):
    """P1.19 objective: sum_j R_j = sum_j [ sum_c base_jc s_jc + lat_j sum_ke l_e g_jke ]."""
    data = m.data
    inst = data.inst
    J = data.jobs
    terms = []
    for d in J:
        for c in range(len(d.classes)):
            terms.append(d.base_s[c] * sigma(m, d, c))
    for (j, k, e) in m.JHE:
        lat = inst.links[e].latency_ms
        if lat:
            terms.append(J[j].lat_coef * lat * _g(m, j, k, e))
    return sum(terms) if terms else 0.0


def add_objectives(m):
    """P1.17 level 1: min -sum_j x_j; P1.18 level 2: min cost; P1.19 level 3: min total run time."""
    m.obj_count = pyo.Objective(expr=-sum(m.x[j] for j in m.J), sense=pyo.minimize)
    m.obj_cost = pyo.Objective(expr=cost_expr(m), sense=pyo.minimize)
    m.obj_run = pyo.Objective(expr=runtime_expr(m), sense=pyo.minimize)
    m.obj_cost.deactivate()
    m.obj_run.deactivate()


def solution_from_pyomo(m) -> Solution:
    J = m.data.jobs
    x = {j: pyo.value(m.x[j]) or 0.0 for j in m.J}
    a = {idx: (m.a[idx].value or 0.0) for idx in m.JKR}
    n = {}
    for d in J:
        for r in d.regions:
            n[(d.j, r)] = sum((m.n[d.j, r, c].value or 0.0) for c in range(len(d.classes))
                              if (d.j, r, c) in m.n)
    f = {idx: (m.f[idx].value or 0.0) for idx in m.JHED}
    return Solution(x, a, n, f)


def load_solution_into_pyomo(m, sol: Solution) -> None:
    """Set every variable of ``m`` consistently with ``sol`` (a complete MIP start)."""
    data = m.data
    for v in m.component_data_objects(pyo.Var):
        v.set_value(0, skip_validation=True)
    for d in data.jobs:
        j = d.j
        xj = sol.x.get(j, 0.0)
        m.x[j].set_value(round(xj))
        if xj < 0.5:
            continue
        chain = [r for k in range(1, d.K + 1) for r in d.regions if sol.a.get((j, k, r), 0) > 0.5]
        for k in range(1, d.K + 1):
            for r in d.regions:
                m.a[j, k, r].set_value(1 if sol.a.get((j, k, r), 0) > 0.5 else 0)
        cls = min(d.cls_of[r] for r in chain)
        if len(d.classes) > 1:
            for c in range(len(d.classes)):
                m.s[j, c].set_value(1 if c == cls else 0)
        pi = 0.0
        for r in chain:
            nr = round(sol.n[(j, r)])
            m.n[j, r, cls].set_value(nr)
            pi += d.pi[r] * nr
        for k in range(1, len(chain)):
            m.h[j, k, chain[k - 1]].set_value(1)
        for e in d.links:
            for k in range(1, d.K):
                g = 0
                for dd in (0, 1):
                    val = 1 if sol.f.get((j, k, e, dd), 0) > 0.5 else 0
                    m.f[j, k, e, dd].set_value(val)
                    g += val
                m.q[j, k, e].set_value(pi * g)
            if (j, e) in m.v:
                U = sum(pyo.value(_g(m, j, k, e)) for k in range(1, d.K))
                m.v[j, e].set_value(d.demand[cls] * U)
