"""P1 placement as a Pyomo MILP (models/placement.md): which waiting jobs start at t0, where, and over which routes.

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

Public API: ``build_model``, ``solve_levels_milp`` (the sequential levels with HiGHS natively or SCIP / HiGHS
through MathOpt), ``build_level_model``, ``lp_relaxation_bound``, ``write_level_mps``.
"""
from __future__ import annotations

import logging
import sys
import time
from typing import Mapping

import pyomo.environ as pyo

from ..files import atomic_write_by_name
from ..instance import Instance
from ..solvers.base import SolveOptions, SolveResult, Termination, relative_gap
from .placement_common import add_speed_classes, class_index_sets, price_rate, sigma, stages_in
from .placement_data import (JobData, PlacementData, count_upper_bound, has_negative_prices, identical_pairs,
                             job_arcs)
from .placement_levels import LEVEL_TOL, clears_limit, level_record, remaining_s, solve_or_adopt
from .placement_solution import Solution, start_candidates

log = logging.getLogger(__name__)


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
    """P1.16 (``placement_common.add_speed_classes``) with u_jr = sum_k a_jkr."""
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


def _run_backend(m, solver: str, options: SolveOptions, warm: bool, tl) -> SolveResult:
    if solver == "highs":
        from ..solvers.highs import solve_pyomo
        return solve_pyomo(m, options, warm_start=warm, time_limit_s=tl)
    from ..solvers.mathopt import solve_pyomo
    return solve_pyomo(m, options, backend=solver, warm_start=warm, time_limit_s=tl)


FORMULATIONS = ("walk", "position")


def formulation_module(formulation: str):
    """The module of a Pyomo formulation of P1: ``build_model``, ``solution_from_pyomo``,
    ``load_solution_into_pyomo`` (position: this module; walk: ``placement_walk``)."""
    import sys
    if formulation == "position":
        return sys.modules[__name__]
    if formulation == "walk":
        from . import placement_walk
        return placement_walk
    raise ValueError(f"formulation: must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")


def solve_levels_milp(data, solver, options, warm_start, levels, t_start, formulation: str = "walk", share=None):
    """The sequential levels (P1.17-P1.19) on one Pyomo model of ``formulation``, kept between levels.
    ``share`` (a ``placement_levels.LevelShare``): levels another race member proved are adopted, not solved."""
    if formulation == "walk" and has_negative_prices(data):
        # a trail may pick up cycles that earn money under a negative price (models/placement.md section 9):
        # the position formulation with P1.12b is exact there
        log.info("P1: a price at t0 is negative; using the position formulation (walk assumes prices >= 0)")
        formulation = "position"
    fm = formulation_module(formulation)
    tb = time.perf_counter()
    m = fm.build_model(data)
    build_s = time.perf_counter() - tb
    ws, warm = None, False
    tb = time.perf_counter()
    cands = start_candidates(data, warm_start)
    start_s = time.perf_counter() - tb
    build_s += start_s              # the level-1 record's build time includes the search for a start
    log.info("P1: model built in %.2f s; MIP starts searched in %.2f s", build_s - start_s, start_s)
    for cand in cands:     # best first; the walk model refuses a start whose
        if fm.load_solution_into_pyomo(m, cand) is not False:    # routes cross a link twice one way (P1.33)
            ws, warm = cand, registry_warm(solver)
            break
    if ws is None:
        fm.load_solution_into_pyomo(m, Solution({}, {}, {}, {}))    # all zero, as before a refused start
    lv: list[dict] = []
    sol = None
    objs = {1: m.obj_count, 2: m.obj_cost, 3: m.obj_run}
    ub1 = count_upper_bound(data)
    z1 = None
    for level in range(1, levels + 1):
        for o in objs.values():
            o.deactivate()
        objs[level].activate()
        tp = time.perf_counter()
        if hasattr(fm, "prepare_level"):      # the walk formulation's level-dependent family (P1.41)
            fm.prepare_level(m, level, z1)
        prep_s = time.perf_counter() - tp
        if level == 1 and ws is not None and sum(1 for v in ws.x.values() if v > 0.5) >= ub1:
            # the MIP start already starts count_upper_bound jobs: level 1 is proven without a solve
            res = SolveResult(solver, Termination.OPTIMAL, objective=-float(ub1), bound=-float(ub1),
                              message="proven by the GPU-count bound (the start reaches it)")
            pyo_count = ub1
            adopted = None
        elif level == 3 and getattr(fm, "LEVEL3_BY_COST", False) and sol is not None:
            box = {}

            def run(box=box, sol=sol):
                r, box["sol"] = _level3_by_cost(m, fm, sol, solver, options, t_start)
                return r
            res, adopted = solve_or_adopt(share, level, run, solver)
            pyo_count = None
        else:
            res, adopted = solve_or_adopt(
                share, level, lambda: _run_backend(m, solver, options, warm, remaining_s(options, t_start)), solver)
            pyo_count = None
        rec = level_record(level, res, (build_s if level == 1 else 0.0) + prep_s)
        lv.append(rec)
        if not res.has_solution:
            if sol is None:
                return None, lv, build_s
            break   # keep the previous level's solution
        if adopted is not None:
            sol = adopted.solution
            fm.load_solution_into_pyomo(m, sol)     # the next level's start (and the cost it fixes, below)
        else:
            if level == 3 and getattr(fm, "LEVEL3_BY_COST", False):
                sol = box["sol"]                        # decoded already (P1.45)
            else:
                sol = ws if pyo_count is not None else fm.solution_from_pyomo(m)
            if share is not None and res.termination == Termination.OPTIMAL:
                share.publish(level, res.objective, sol)
        if level == 3 and getattr(fm, "LEVEL3_BY_COST", False):
            continue
        if adopted is None and pyo_count is None and fm is not sys.modules[__name__] and \
                res.termination != Termination.OPTIMAL:
            # an unproven walk incumbent may carry arcs the decoder drops (loops, closed walks): report the
            # decoded placement's own value, which is what the schedule will cost (never worse than the incumbent)
            _report_decoded(m, fm, sol, level, rec, objs[level])
        warm = registry_warm(solver)
        if level == 1:
            z1 = int(round(-res.objective))
            m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
        elif level == 2:
            z2 = max(pyo.value(m.obj_cost.expr), res.objective)
            m.level2_limit = z2 + LEVEL_TOL * max(abs(z2), 1e-9)
            m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= m.level2_limit)
    if len(lv) == 3 and lv[1]["objective"] is not None and fm.load_solution_into_pyomo(m, sol) is not False:
        # level 3 may end on a cheaper solution than level 2's (unproven) incumbent: the reported cost is the
        # cost of the solution returned
        c = pyo.value(m.obj_cost.expr)
        if c < lv[1]["objective"]:
            lv[1]["objective"] = c
            lv[1]["gap"] = relative_gap(c, lv[1]["bound"])
    return sol, lv, build_s


#: at most this many improving solutions are taken by the cost-minimization proof of level 3 before the
#: plain level-3 solve takes over (each one strictly lowers the run time; in practice level 2's solution is
#: already level-3 optimal and one proof suffices)
LEVEL3_ROUNDS = 5

#: the level-3 proof with HiGHS uses the level-2 limit as an objective cutoff instead of a row (P1.51)
LEVEL3_CUTOFF = True
#: the cutoff is the level-2 limit z2 (1 + LEVEL_TOL) times (1 + this); anything >= 0 is exact (a larger cutoff
#: only admits more solutions, which the check below refuses); a negative value is wrong (tests plant it)
LEVEL3_CUTOFF_SLACK = LEVEL_TOL
#: a solution found under the cutoff but above the level-2 limit is refused (the row is restored); off only in
#: the test that shows the check is needed
LEVEL3_CUTOFF_CHECK = True

#: HiGHS options of the level-3 proof by cost minimization (P1.45): the usual outcome is infeasibility, which
#: primal heuristics cannot help to prove, so they are off (the tree still finds an improving solution when
#: one exists: every integral node LP is one)
LEVEL3_PROOF_HIGHS: dict = {"mip_heuristic_effort": 0.0, "mip_heuristic_run_rins": False,
                            "mip_heuristic_run_rens": False, "mip_heuristic_run_feasibility_jump": False,
                            "mip_heuristic_run_root_reduced_cost": False}


def _level3_by_cost(m, fm, sol, solver: str, options: SolveOptions, t_start: float):
    """Level 3 (P1.19) proved by cost minimization (P1.45, models/placement.md section 9): with T_inc the run
    time of the incumbent (level 2's decoded solution), minimize the cost C over the level-3 feasible set
    (count and cost fixed, con_level1/con_level2) cut by T <= T_inc (1 - rel_gap).  Infeasible proves that
    no solution of level 3 runs shorter than T_inc (1 - rel_gap): T_inc is optimal within rel_gap.  A solution
    found instead is a better level-3 incumbent (taken after decoding, and the cut tightened); after
    LEVEL3_ROUNDS of them the plain level-3 solve (min T) takes over for the time left.  With HiGHS the level-2
    row is replaced by an objective cutoff (P1.51, section 9d; ``LEVEL3_CUTOFF``): a solution found above the
    row's limit is refused (the row comes back), or, if the search ended on it, read as the proof.
    Returns (SolveResult of level 3 with objective T and bound, decoded solution)."""
    tol = max(options.rel_gap, LEVEL_TOL)
    if fm.load_solution_into_pyomo(m, sol) is False:
        res = _run_backend(m, solver, options, False, remaining_s(options, t_start))
        return res, (fm.solution_from_pyomo(m) if res.has_solution else sol)
    t_inc = pyo.value(m.obj_run.expr)
    solve_s, nodes = 0.0, 0
    hopts = dict(options.backend_options)
    if solver == "highs":
        hopts.setdefault("mip_max_improving_sols", 1)    # any solution under the cut is enough to move on
        for k, v in LEVEL3_PROOF_HIGHS.items():
            hopts.setdefault(k, v)
    flip_opts = SolveOptions(time_limit_s=options.time_limit_s, rel_gap=options.rel_gap, threads=options.threads,
                             log=options.log, seed=options.seed, backend_options=hopts)
    m.obj_run.deactivate()
    m.obj_cost.activate()
    res = None
    # P1.51: with HiGHS the cost row of level 2 is replaced by the objective cutoff z2 (1 + 2 LEVEL_TOL) (HiGHS
    # prunes nodes whose bound exceeds it and fixes columns by reduced cost against it, which a row does not
    # give); a solution found above the row's limit is not taken: the row comes back and the round is repeated
    cutoff = LEVEL3_CUTOFF and solver == "highs" and hasattr(m, "con_level2") and hasattr(m, "level2_limit")
    improved, refused = 0, 0
    while improved < LEVEL3_ROUNDS:
        m.con_level3_cut = pyo.Constraint(expr=m.obj_run.expr <= t_inc - tol * max(abs(t_inc), 1e-9))
        run_opts = flip_opts
        if cutoff:
            m.con_level2.deactivate()
            run_opts = SolveOptions(time_limit_s=options.time_limit_s, rel_gap=options.rel_gap,
                                    threads=options.threads, log=options.log, seed=options.seed,
                                    backend_options={**hopts, "objective_bound": m.level2_limit
                                                     + LEVEL3_CUTOFF_SLACK * max(abs(m.level2_limit), 1e-9)})
        res = _run_backend(m, solver, run_opts, False, remaining_s(options, t_start))
        if hasattr(m, "con_level2"):
            m.con_level2.activate()
        solve_s += res.solve_s
        nodes += res.nodes or 0
        m.del_component(m.con_level3_cut)
        if cutoff and LEVEL3_CUTOFF_CHECK and res.has_solution and \
                pyo.value(m.obj_cost.expr) > m.level2_limit + 1e-12 * max(abs(m.level2_limit), 1.0):
            v = pyo.value(m.obj_cost.expr)
            if res.termination == Termination.OPTIMAL and \
                    clears_limit(v, m.level2_limit, options.rel_gap):
                # HiGHS keeps a solution above its objective bound as incumbent; the search ended with it, so every
                # node was fathomed or pruned against min(cutoff, v - gap) > Z: no solution has C <= Z (P1.51 (c))
                res = SolveResult(solver, Termination.INFEASIBLE, solve_s=res.solve_s, nodes=res.nodes,
                                  message="proof ended on a solution above the level-2 limit")
            else:
                log.info("P1 level 3: a solution above the level-2 row under the cutoff; the row is restored")
                refused += 1
                cutoff = False
                continue
        if res.termination == Termination.INFEASIBLE:
            log.info("P1 level 3: proven by cost minimization (no solution runs shorter than %.9g s)", t_inc)
            fm.load_solution_into_pyomo(m, sol)
            return SolveResult(solver, Termination.OPTIMAL, objective=t_inc, bound=t_inc * (1 - tol),
                               solve_s=solve_s, nodes=nodes,
                               message="proven by cost minimization under a shorter run-time cut"
                               + (f" (rounds: {improved} improving, {refused} refused above the level-2 limit;"
                                  f" {res.message or 'infeasible'})" if LEVEL3_CUTOFF and solver == "highs" else "")
                               ), sol
        if not res.has_solution:       # time limit or error: the incumbent stands, unproven
            fm.load_solution_into_pyomo(m, sol)
            return SolveResult(solver, Termination.FEASIBLE, objective=t_inc, bound=None, solve_s=solve_s,
                               nodes=nodes, message=f"level 3 not proven ({res.message or res.termination.value})"
                               ), sol
        better = fm.solution_from_pyomo(m)
        if fm.load_solution_into_pyomo(m, better) is False:
            break
        sol, t_inc = better, pyo.value(m.obj_run.expr)
        improved += 1
    # several improvements in a row: minimize T directly from the best solution found
    m.obj_cost.deactivate()
    m.obj_run.activate()
    res = _run_backend(m, solver, options, registry_warm(solver), remaining_s(options, t_start))
    res.solve_s += solve_s
    res.nodes = (res.nodes or 0) + nodes
    if res.has_solution:
        sol = fm.solution_from_pyomo(m)
    else:
        fm.load_solution_into_pyomo(m, sol)
        res = SolveResult(solver, Termination.FEASIBLE, objective=t_inc, bound=res.bound, solve_s=res.solve_s,
                          nodes=res.nodes, message=res.message)
    return res, sol


def _report_decoded(m, fm, sol, level: int, rec: dict, obj) -> None:
    """Load the decoded ``sol`` into ``m`` and put its objective value in the level record ``rec``."""
    if fm.load_solution_into_pyomo(m, sol) is False:
        return
    val = pyo.value(obj.expr)
    if level == 1:
        val = -val
    if rec["objective"] is None or (val < rec["objective"] if level > 1 else val >= rec["objective"]):
        rec["objective"] = val
        rec["gap"] = relative_gap(val, rec["bound"])


def registry_warm(solver: str) -> bool:
    from ..solvers import registry
    return registry.BACKENDS[solver].warm_start


def build_level_model(data: PlacementData, level: int, fix: Mapping[int, float] | None = None,
                      formulation: str = "position"):
    """The P1 model with only level ``level``'s objective active (P1.17-P1.19) and the earlier levels fixed
    at ``fix`` ({1: jobs started, 2: cost}, the cost with the LEVEL_TOL slack of the sequential scheme)."""
    fm = formulation_module(formulation)
    m = fm.build_model(data)
    objs = {1: m.obj_count, 2: m.obj_cost, 3: m.obj_run}
    for o in objs.values():
        o.deactivate()
    objs[level].activate()
    fix = dict(fix or {})
    if hasattr(fm, "prepare_level"):
        fm.prepare_level(m, level, int(fix[1]) if 1 in fix else None)
    if level > 1 and 1 in fix:
        m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= fix[1])
    if level > 2 and 2 in fix:
        m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= fix[2] * (1 + LEVEL_TOL))
    return m


def lp_relaxation_bound(data: PlacementData, level: int = 2, fix: Mapping[int, float] | None = None,
                        formulation: str = "position") -> float | None:
    """LP relaxation (root) bound of a level's model with the earlier levels fixed at ``fix`` values
    ({1: jobs started, 2: cost}); used by the benchmark for the root gap."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    m = build_level_model(data, level, fix, formulation)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    opt = Highs()
    opt.config.load_solution = False
    res = opt.solve(m)
    return res.best_objective_bound if res.best_objective_bound is not None else res.best_feasible_objective


def write_level_mps(inst: Instance, path, level: int = 2, fix: Mapping[int, float] | None = None, **kw) -> dict:
    """Write the P1 model of ``inst`` at ``level`` (earlier levels fixed at ``fix``: {1: jobs started,
    2: cost}) as free MPS with symbolic labels, for outside solvers (models/README.md).  ``kw`` as
    ``PlacementData`` (jobs, t0, free_gpus, free_gbps).  Returns {"variables", "constraints"} counts."""
    data = PlacementData(inst, **kw)
    m = build_level_model(data, level, fix)
    atomic_write_by_name(path, lambda tmp: m.write(tmp, format="mps", io_options={"symbolic_solver_labels": True}))
    return {"variables": sum(1 for _ in m.component_data_objects(pyo.Var)),
            "constraints": sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))}
