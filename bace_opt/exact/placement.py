"""P1 placement MILP (models/placement.md): which waiting jobs start at t0, where, and over which routes.

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

Public API: ``solve_placement`` -> ``PlacementResult``; ``build_model`` (Pyomo), ``PlacementData``.
"""
from __future__ import annotations

import logging
import math
import numbers
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import pyomo.environ as pyo

from .. import formulas as F
from ..errors import InputError, BaceOptError
from ..instance import Instance, Job
from ..schedule import Block, Hop, JobPlan, SolverInfo
from ..solvers.base import SolveOptions, SolveResult, relative_gap

log = logging.getLogger(__name__)

LEVEL_TOL = 1e-9   # relative slack when a level's optimum is fixed for the next level (P1.18, P1.19)


# ---------------------------------------------------------------------- data (index sets, coefficients)

@dataclass
class JobData:
    """Everything the models need about one admissible job (P1 parameters)."""
    j: int                      # model index
    job: Job
    regions: list[int]          # eligible region indexes with >= g_j free GPUs
    cap: dict[int, int]         # r -> max stages of j in r (free GPUs // g_j, <= S_j)
    K: int                      # positions: min(S_j, |regions|)
    classes: list[float]        # distinct speed factors of its regions, slowest first
    cls_of: dict[int, int]      # r -> class index of its speed
    tau: list[float]            # tau_c = t_j / f_c
    demand: list[float]         # b_jc = 8 A_j / 1000 / tau_c (Gbit/s)
    links: list[int]            # links usable by some class (free_e >= min_c b_jc)
    pi: dict[int, float]        # r -> USD per second of run time per stage at t0 prices
    base_s: list[float]         # N (m + S - 1) tau_c   (run time without latency, per class)
    lat_coef: float             # 2 N / 1000  (run-time seconds per ms of one-way hop latency)
    egress_coef: float          # N m 2 A / 1000 (GB that cross each hop)
    pi_max: float               # max over placements of Pi_j = sum_r pi_r n_jr   (P1.15 big-M)
    pi_min: float               # min over placements of Pi_j

    @property
    def S(self) -> int:
        return self.job.stages


def job_arcs(inst: Instance, d: JobData) -> tuple[dict, dict]:
    """Directed arcs (link e, direction 0: a->b / 1: b->a) out of and into each node (region index) over the
    links job ``d`` may use: the arc sets of the hop flows (P1.8-P1.10), shared by the MILP and CP-SAT."""
    oa, ia = defaultdict(list), defaultdict(list)
    for e in d.links:
        l = inst.links[e]
        a, b = inst.region_index[l.a], inst.region_index[l.b]
        oa[a].append((e, 0)); ia[b].append((e, 0))
        oa[b].append((e, 1)); ia[a].append((e, 1))
    return oa, ia


class PlacementData:
    """Index sets and coefficients of P1 for (instance, waiting jobs, t0, free resources)."""

    def __init__(self, inst: Instance, jobs: Sequence[str] | None = None, t0: float | None = None,
                 free_gpus: Mapping[str, int] | None = None, free_gbps: Mapping[int, float] | None = None):
        self.inst = inst
        if jobs is None:
            if t0 is None:
                t0 = max((j.arrival_s for j in inst.jobs), default=0.0)
            names = [j.name for j in inst.jobs if j.arrival_s <= t0]
        else:
            names = list(jobs)
            bad = [n for n in names if n not in inst.job_index]
            if bad:
                raise InputError(f"jobs: {', '.join(map(repr, bad))} not in instance {inst.name!r}")
            if len(set(names)) != len(names):
                raise InputError("jobs: a job is named twice")
            if t0 is None:
                t0 = max((inst.job(n).arrival_s for n in names), default=0.0)
            late = [n for n in names if inst.job(n).arrival_s > t0 + 1e-9]
            if late:
                raise InputError(f"jobs: {', '.join(map(repr, late))} arrive after t0 = {t0:g} s")
        self.t0 = float(t0)
        self.names = names
        self.free_gpus = self._free_gpus(free_gpus)
        self.free_gbps = self._free_gbps(free_gbps)
        self.region_names = [r.name for r in inst.regions]
        self.jobs: list[JobData] = []
        self.never: list[str] = []          # waiting jobs that cannot fit the free resources at all
        for name in names:
            jd = self._job(inst.job(name), len(self.jobs))
            if jd is None:
                self.never.append(name)
            else:
                self.jobs.append(jd)

    # -- input checks
    def _free_gpus(self, free):
        inst = self.inst
        out = {r.name: r.gpus for r in inst.regions}
        if free is None:
            return out
        probs = []
        for k, v in free.items():
            if k not in inst.region_index:
                probs.append(f"free_gpus: {k!r} is not a region")
            elif not (isinstance(v, numbers.Real) and math.isfinite(v) and v == int(v)
                      and 0 <= v <= inst.region(k).gpus):
                probs.append(f"free_gpus[{k!r}]: must be an integer in [0, {inst.region(k).gpus}], got {v!r}")
            else:
                out[k] = int(v)
        if probs:
            raise InputError(probs)
        return out

    def _free_gbps(self, free):
        inst = self.inst
        out = {i: l.bandwidth_gbps for i, l in enumerate(inst.links)}
        if free is None:
            return out
        probs = []
        for k, v in free.items():
            if not isinstance(k, numbers.Integral) or not 0 <= k < len(inst.links):
                probs.append(f"free_gbps: key {k!r} is not a link index (0..{len(inst.links) - 1})")
            elif not (isinstance(v, numbers.Real) and math.isfinite(v)
                      and -1e-6 * inst.links[k].bandwidth_gbps - 1e-9 <= v
                      <= inst.links[k].bandwidth_gbps * (1 + 1e-6) + 1e-9):   # float noise of residual sums
                probs.append(f"free_gbps[{k}]: must be in [0, {inst.links[k].bandwidth_gbps:g}], got {v!r}")
            else:
                out[int(k)] = min(max(float(v), 0.0), inst.links[k].bandwidth_gbps)
        if probs:
            raise InputError(probs)
        return out

    # -- per-job parameters
    def _job(self, job: Job, j: int) -> JobData | None:
        inst = self.inst
        g = job.gpus_per_stage
        regions, cap = [], {}
        for rn in inst.eligible_regions(job):
            c = min(job.stages, self.free_gpus[rn] // g)
            if c >= 1:
                ri = inst.region_index[rn]
                regions.append(ri)
                cap[ri] = c
        if sum(cap.values()) < job.stages:
            return None
        speeds = sorted({inst.speed[inst.regions[r].name] for r in regions})
        cls_of = {r: speeds.index(inst.speed[inst.regions[r].name]) for r in regions}
        tau = [job.stage_time_s / f for f in speeds]
        demand = [F.demand_gbps(job, t) for t in tau]
        bmin = min(demand)
        links = [e for e, bw in self.free_gbps.items() if bw >= bmin * (1 - 1e-12)]
        pi = {}
        for r in regions:
            reg = inst.regions[r]
            kw = g * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
            pi[r] = kw * F.price_at(inst, reg.name, self.t0) / 3600.0
        N, m, S = job.iterations, job.microbatches, job.stages
        base = [N * (m + S - 1) * t for t in tau]
        K = min(S, len(regions))
        if len(regions) > 1:
            # a chain of >= 2 blocks needs a hop; if no usable link exists the job runs in one region only
            if not links:
                singles = [r for r in regions if cap[r] >= S]
                if not singles:
                    return None
                regions = singles
                cap = {r: cap[r] for r in singles}
                K = 1
        # Pi_j = 0 when j does not start, so the big-M must cover 0 too: with negative prices the greedy maximum
        # can be < 0 (harden, issue 10; P1.15 stays exact for prices of any sign)
        pi_max = max(0.0, _fill(sorted(regions, key=lambda r: -pi[r]), pi, cap, S))
        pi_min = _fill(sorted(regions, key=lambda r: pi[r]), pi, cap, S)
        return JobData(j=j, job=job, regions=regions, cap=cap, K=K, classes=speeds, cls_of=cls_of, tau=tau,
                       demand=demand, links=links, pi=pi, base_s=base, lat_coef=2.0 * N / 1000.0,
                       egress_coef=N * m * 2.0 * job.activation_mb / 1000.0, pi_max=pi_max, pi_min=pi_min)

    @property
    def egress(self) -> bool:
        return bool(self.inst.objective.egress)


def _fill(order, pi, cap, S) -> float:
    """Sum of pi_r over S stages filled greedily in ``order`` up to each region's cap (a bound of Pi_j)."""
    left, tot = S, 0.0
    for r in order:
        k = min(left, cap[r])
        tot += k * pi[r]
        left -= k
        if not left:
            break
    return tot


# ---------------------------------------------------------------------- Pyomo model

def build_model(data: PlacementData) -> pyo.ConcreteModel:
    """The P1 MILP (models/placement.md, P1.1-P1.16) with three objectives, only ``obj_count`` active."""
    m = pyo.ConcreteModel(name="bace_opt_P1_placement")
    m.data = data
    J = data.jobs
    inst = data.inst
    # ---- index sets, precomputed (models/placement.md section 1)
    JK = [(d.j, k) for d in J for k in range(1, d.K + 1)]
    JKR = [(d.j, k, r) for d in J for k in range(1, d.K + 1) for r in d.regions]
    JRC = [(d.j, r, c) for d in J for r in d.regions for c in range(len(d.classes))
           if d.classes[d.cls_of[r]] >= d.classes[c]]
    JC = [(d.j, c) for d in J if len(d.classes) > 1 for c in range(len(d.classes))]
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


def _nr(m, d: JobData, r: int):
    """n_jr = sum_c n_jrc: stages of j in r."""
    return sum(m.n[d.j, r, c] for c in range(len(d.classes)) if d.classes[d.cls_of[r]] >= d.classes[c])


def _u(m, d: JobData, r: int):
    """u_jr = sum_k a_jkr: j uses region r (P1.4 makes it binary)."""
    return sum(m.a[d.j, k, r] for k in range(1, d.K + 1))


def _sigma(m, d: JobData, c: int):
    """s_jc, or x_j when j has a single speed class."""
    return m.s[d.j, c] if len(d.classes) > 1 else m.x[d.j]


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
    m.con_stages_total = pyo.Constraint(m.J, rule=lambda m, j: sum(_nr(m, J[j], r) for r in J[j].regions)
                                        == J[j].S * m.x[j])
    JR = [(d.j, r) for d in J for r in d.regions]
    m.con_stages_min = pyo.Constraint(JR, rule=lambda m, j, r: _nr(m, J[j], r) >= _u(m, J[j], r))
    m.con_stages_max = pyo.Constraint(JR, rule=lambda m, j, r: _nr(m, J[j], r) <= J[j].cap[r] * _u(m, J[j], r))


def add_classes(m):
    """P1.16 slowest speed class, exact: sum_c s_jc = x_j; n_jrc <= cap_jr s_jc (n_jrc exists only for
    f_r >= f_c); s_jc <= sum_{r: f_r = f_c} u_jr (the class is attained, so tau_j is exactly t_j/f_c)."""
    J = m.data.jobs
    m.con_class_one = pyo.Constraint([d.j for d in J if len(d.classes) > 1],
                                     rule=lambda m, j: sum(m.s[j, c] for c in range(len(J[j].classes))) == m.x[j])
    JRC_multi = [(j, r, c) for (j, r, c) in m.JRC if len(J[j].classes) > 1]
    m.con_class_stages = pyo.Constraint(JRC_multi, rule=lambda m, j, r, c: m.n[j, r, c] <= J[j].cap[r] * m.s[j, c])
    m.con_class_attained = pyo.Constraint(
        m.JC, rule=lambda m, j, c: m.s[j, c] <= sum(_u(m, J[j], r) for r in J[j].regions if J[j].cls_of[r] == c))


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


def has_negative_prices(data: PlacementData) -> bool:
    """Some region's price at t0 is negative (then a hop flow's cycles would *earn* money, see add_no_cycles)."""
    return any(p < 0 for d in data.jobs for p in d.pi.values())


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
    m.con_gpus = pyo.Constraint(R, rule=lambda m, r: sum(d.job.gpus_per_stage * _nr(m, d, r)
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


def _pi_expr(m, d: JobData):
    """Pi_j = sum_r pi_r n_jr (USD per second of run time)."""
    return sum(d.pi[r] * _nr(m, d, r) for r in d.regions)


def add_cost_linearization(m):
    """P1.15 q_jke = Pi_j * g_jke exactly (g binary): q >= Pi_j - Pi_max_j (1 - g), q >= Pi_min_j g, q >= 0.
    Only lower bounds are needed: q appears with a non-negative coefficient in a minimized objective and
    nowhere else, so at an optimum q takes its lower envelope, which equals Pi_j g for binary g."""
    J = m.data.jobs
    m.con_cost_product = pyo.Constraint(m.JHE, rule=lambda m, j, k, e:
                                        m.q[j, k, e] >= _pi_expr(m, J[j]) - J[j].pi_max * (1 - _g(m, j, k, e)))
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


def identical_pairs(data: PlacementData) -> list[tuple[int, int]]:
    """Consecutive pairs (j, j') of identical jobs (same S, g, m, N, t, A, memory and regions/caps), j first
    (P1.21)."""
    pairs, last = [], {}
    for d in data.jobs:
        jb = d.job
        sig = (jb.stages, jb.gpus_per_stage, jb.microbatches, jb.iterations, jb.stage_time_s, jb.activation_mb,
               jb.memory_gb, tuple(sorted(d.cap.items())))
        if sig in last:
            pairs.append((last[sig], d.j))
        last[sig] = d.j
    return pairs


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
            terms.append(d.base_s[c] * _sigma(m, d, c))
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


# ---------------------------------------------------------------------- solutions <-> plans

@dataclass
class Solution:
    """Solver-neutral values of the decision variables that define plans."""
    x: dict[int, float]
    a: dict[tuple, float]
    n: dict[tuple, float]                 # (j, r) -> stages
    f: dict[tuple, float]                 # (j, k, e, d)


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


def plans_from_solution(data: PlacementData, sol: Solution) -> tuple[list[JobPlan], list[str]]:
    """Decode started jobs into JobPlans (start t0, reservation b_j of the decoded placement)."""
    inst = data.inst
    plans, blocked = [], []
    for d in data.jobs:
        if sol.x.get(d.j, 0.0) < 0.5:
            blocked.append(d.job.name)
            continue
        chain = []
        for k in range(1, d.K + 1):
            rs = [r for r in d.regions if sol.a.get((d.j, k, r), 0.0) > 0.5]
            if not rs:
                break
            chain.append(rs[0])
        blocks = [Block(inst.regions[r].name, int(round(sol.n[(d.j, r)]))) for r in chain]
        names = [b.region for b in blocks]
        tau = F.tau_s(inst, d.job, names)
        b = F.demand_gbps(d.job, tau)
        hops = []
        for k in range(1, len(chain)):
            route = _follow(data, d, sol, k, chain[k - 1], chain[k])
            hops.append(Hop(tuple(inst.regions[v].name for v in route), b))
        plans.append(JobPlan(d.job.name, "done", data.t0, tuple(blocks), tuple(hops)))
    blocked += list(data.never)
    return plans, blocked


def _follow(data: PlacementData, d: JobData, sol: Solution, k: int, src: int, dst: int) -> list[int]:
    """The simple path of hop k's flow from src to dst (cycles in the flow's support are dropped)."""
    inst = data.inst
    nxt = defaultdict(list)
    for e in d.links:
        l = inst.links[e]
        a, b = inst.region_index[l.a], inst.region_index[l.b]
        if sol.f.get((d.j, k, e, 0), 0.0) > 0.5:
            nxt[a].append(b)
        if sol.f.get((d.j, k, e, 1), 0.0) > 0.5:
            nxt[b].append(a)
    path, seen, v = [src], {src}, src
    while v != dst:
        cand = [w for w in nxt[v] if w not in seen]
        if not cand:
            raise BaceOptError(f"P1 decoder: hop {k} of job {d.job.name!r} has no connected route "
                               f"{inst.regions[src].name} -> {inst.regions[dst].name} in the solver's flow")
        v = cand[0]
        seen.add(v)
        path.append(v)
    return path


def solution_from_plans(data: PlacementData, plans: Sequence[JobPlan]) -> Solution | None:
    """Encode a given placement (a warm start) in the model's variables; None if it does not fit the model
    (a region twice, an ineligible region, an unusable link...).  Chains are reversed if needed (P1.20)."""
    inst = data.inst
    by = {p.name: p for p in plans if p.status == "done" and p.blocks}
    x, a, n, f = {}, {}, {}, {}
    for d in data.jobs:
        p = by.get(d.job.name)
        x[d.j] = 0.0
        if p is None:
            continue
        try:
            chain = [inst.region_index[b.region] for b in p.blocks]
            stages = [b.stages for b in p.blocks]
            routes = [[inst.region_index[v] for v in h.route] for h in p.hops]
        except KeyError:
            return None
        if len(set(chain)) != len(chain) or any(r not in d.cap for r in chain) or len(chain) > d.K:
            return None
        if chain[0] > chain[-1]:
            chain, stages = chain[::-1], stages[::-1]
            routes = [rt[::-1] for rt in routes[::-1]]
        x[d.j] = 1.0
        for k, (r, s) in enumerate(zip(chain, stages), start=1):
            a[(d.j, k, r)] = 1.0
            n[(d.j, r)] = float(s)
        for k, rt in enumerate(routes, start=1):
            for u, v in zip(rt, rt[1:]):
                e = inst.link_index.get((inst.regions[u].name, inst.regions[v].name))
                if e is None or e not in d.links:
                    return None
                dd = 0 if inst.region_index[inst.links[e].a] == u else 1
                f[(d.j, k, e, dd)] = 1.0
    # P1.21: identical jobs start in order; give a started job's placement to its unstarted twin
    pairs, changed = identical_pairs(data), True
    while changed:
        changed = False
        for i, j in pairs:
            if x.get(i, 0) < 0.5 and x.get(j, 0) > 0.5:
                x[i], x[j] = 1.0, 0.0
                changed = True
                for dct in (a, n, f):
                    for key in [k for k in dct if k[0] == j]:
                        dct[(i,) + key[1:]] = dct.pop(key)
    return Solution(x, a, n, f)


def greedy_start(data: PlacementData) -> list[JobPlan]:
    """A quick feasible placement to start the solvers (never reported as a result): jobs by GPU count
    ascending; each in the cheapest single region that holds it, else filled across regions by ascending
    price; each hop on the lowest-latency path whose links all have the residual bandwidth."""
    import networkx as nx
    inst = data.inst
    gpus = {r: data.free_gpus[inst.regions[r].name] for r in range(len(inst.regions))}
    bw = dict(data.free_gbps)
    plans = []
    for d in sorted(data.jobs, key=lambda d: (d.job.gpus, d.j)):
        g, S = d.job.gpus_per_stage, d.S
        cap = {r: min(S, gpus[r] // g) for r in d.regions}
        order = sorted((r for r in d.regions if cap[r] > 0), key=lambda r: (d.pi[r], r))
        single = [r for r in order if cap[r] >= S]
        if single:
            chain = [(single[0], S)]
        else:
            chain, left = [], S
            for r in order:
                if left == 0 or len(chain) == d.K:
                    break
                k = min(left, cap[r])
                chain.append((r, k))
                left -= k
            if left:
                continue
        names = [inst.regions[r].name for r, _ in chain]
        b = F.demand_gbps(d.job, F.tau_s(inst, d.job, names))
        use: dict[int, float] = defaultdict(float)
        routes, ok = [], True
        for (u, _), (v, _) in zip(chain, chain[1:]):
            G = nx.Graph()
            for e in d.links:
                if bw[e] - use[e] >= b * (1 - 1e-12):
                    l = inst.links[e]
                    G.add_edge(l.a, l.b, w=l.latency_ms + 1e-9)
            try:
                path = nx.shortest_path(G, inst.regions[u].name, inst.regions[v].name, weight="w")
            except (nx.NetworkXNoPath, nx.NodeNotFound):
                ok = False
                break
            for a_, b_ in zip(path, path[1:]):
                use[inst.link_index[(a_, b_)]] += b
            routes.append(tuple(path))
        if not ok:
            continue
        for r, k in chain:
            gpus[r] -= g * k
        for e, w in use.items():
            bw[e] -= w
        plans.append(JobPlan(d.job.name, "done", data.t0,
                             tuple(Block(inst.regions[r].name, k) for r, k in chain),
                             tuple(Hop(rt, b) for rt in routes)))
    return plans


def load_solution_into_pyomo(m, sol: Solution) -> None:
    """Set every variable of ``m`` consistently with ``sol`` (a complete MIP start)."""
    data = m.data
    inst = data.inst
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


# ---------------------------------------------------------------------- the lexicographic driver

@dataclass
class PlacementResult:
    plans: list[JobPlan]
    blocked: list[str]
    solver_info: SolverInfo
    levels: list[dict] = field(default_factory=list)
    t0: float = 0.0

    @property
    def started(self) -> list[str]:
        return [p.name for p in self.plans]


def solve_placement(inst: Instance, *, jobs: Sequence[str] | None = None, t0: float | None = None,
                    free_gpus: Mapping[str, int] | None = None, free_gbps: Mapping[int, float] | None = None,
                    solver: str = "highs", options: SolveOptions = SolveOptions(),
                    warm_start: Sequence[JobPlan] | None = None, levels: int = 3,
                    max_binaries: int = 2_000_000) -> PlacementResult:
    """Solve P1 exactly (models/placement.md): lexicographic (1) max jobs started, (2) min cost at t0 prices,
    (3) min total run time, by sequential solves (P1.17-P1.19).

    ``solver``: "highs" (Pyomo, native), "scip" / "mathopt-highs" (the same Pyomo model via MPS and
    OR-Tools MathOpt), "cpsat" (its own integer model, ``placement_cpsat``).  ``levels`` (1-3) stops early.
    ``solver_info.objective``/``bound``/``gap`` are those of the last level solved (the cost, level 2, by
    default reported as ``extra['cost_usd']``); ``levels`` lists every level's figures.
    A model over ``max_binaries`` binary variables is not built: status "error" with the reason.
    """
    from ..solvers import registry
    registry.require(solver)
    if levels not in (1, 2, 3):
        raise InputError(f"levels: must be 1, 2 or 3, got {levels!r}")
    t_start = time.perf_counter()
    data = PlacementData(inst, jobs, t0, free_gpus, free_gbps)
    if not data.jobs:
        plans, blocked = [], list(data.never)
        info = SolverInfo(name=solver, status="optimal", objective=0.0, bound=0.0, gap=0.0,
                          wall_s=time.perf_counter() - t_start, build_s=0.0, solve_s=0.0, nodes=0,
                          message="no waiting job fits the free resources" if blocked else "no waiting job",
                          extra={"jobs_started": 0, "cost_usd": 0.0, "run_s": 0.0})
        return PlacementResult(plans, blocked, info, [], data.t0)
    size = model_size(data)
    if size > max_binaries:
        info = SolverInfo(name=solver, status="error", wall_s=time.perf_counter() - t_start, build_s=0.0,
                          solve_s=0.0, message=f"P1 model too large: {size} binary variables > max_binaries="
                                               f"{max_binaries} ({len(data.jobs)} jobs); not built",
                          extra={"binaries": size})
        return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, [], data.t0)
    if registry.BACKENDS[solver].kind == "cp":
        from .placement_cpsat import solve_levels_cpsat
        sol, lv, build_s = solve_levels_cpsat(data, options, warm_start, levels, t_start)
    else:
        sol, lv, build_s = _solve_levels_milp(data, solver, options, warm_start, levels, t_start)
    return _finish(data, solver, sol, lv, build_s, t_start)


def model_size(data: PlacementData) -> int:
    """Binary variables of the MILP: x, a, s, f (P1, section 8)."""
    return sum(1 + d.K * len(d.regions) + (len(d.classes) if len(d.classes) > 1 else 0)
               + (d.K - 1) * 2 * len(d.links) for d in data.jobs)


def _remaining(options: SolveOptions, t_start: float) -> float | None:
    if options.time_limit_s is None:
        return None
    return max(options.time_limit_s - (time.perf_counter() - t_start), 0.01)


def _run_backend(m, solver: str, options: SolveOptions, warm: bool, tl) -> SolveResult:
    if solver == "highs":
        from ..solvers.highs import solve_pyomo
        return solve_pyomo(m, options, warm_start=warm, time_limit_s=tl)
    from ..solvers.mathopt import solve_pyomo
    return solve_pyomo(m, options, backend=solver, warm_start=warm, time_limit_s=tl)


LEVEL_NAMES = {1: "jobs_started", 2: "cost_usd", 3: "run_s"}


def _level_record(level: int, res: SolveResult, build_s: float) -> dict:
    obj, bnd = res.objective, res.bound
    if level == 1:  # the model minimizes -count; report the count (a maximization)
        obj = None if obj is None else -obj
        bnd = None if bnd is None else -bnd
    return {"level": level, "name": LEVEL_NAMES[level], "sense": "max" if level == 1 else "min",
            "status": res.termination.value, "objective": obj, "bound": bnd, "gap": relative_gap(obj, bnd),
            "build_s": build_s + res.build_s, "solve_s": res.solve_s, "nodes": res.nodes, "message": res.message}


def _solve_levels_milp(data, solver, options, warm_start, levels, t_start):
    tb = time.perf_counter()
    m = build_model(data)
    build_s = time.perf_counter() - tb
    ws = start_solution(data, warm_start)
    warm = False
    if ws is not None:
        load_solution_into_pyomo(m, ws)
        warm = registry_warm(solver)
    lv: list[dict] = []
    sol = None
    objs = {1: m.obj_count, 2: m.obj_cost, 3: m.obj_run}
    for level in range(1, levels + 1):
        for o in objs.values():
            o.deactivate()
        objs[level].activate()
        res = _run_backend(m, solver, options, warm, _remaining(options, t_start))
        rec = _level_record(level, res, build_s if level == 1 else 0.0)
        lv.append(rec)
        if not res.has_solution:
            if sol is None:
                return None, lv, build_s
            break   # keep the previous level's solution
        sol = solution_from_pyomo(m)
        warm = registry_warm(solver)
        if level == 1:
            z1 = int(round(-res.objective))
            m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= z1)
        elif level == 2:
            z2 = max(pyo.value(m.obj_cost.expr), res.objective)
            m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= z2 + LEVEL_TOL * max(abs(z2), 1e-9))
    return sol, lv, build_s


def start_solution(data: PlacementData, warm_start: Sequence[JobPlan] | None) -> Solution | None:
    """The MIP start: the caller's warm start if it fits the model, else (or if it starts fewer jobs) the
    greedy placement."""
    cands = []
    if warm_start:
        ws = solution_from_plans(data, warm_start)
        if ws is None:
            log.warning("warm start does not fit the P1 model (region twice, ineligible region or unusable "
                        "link); ignored")
        else:
            cands.append(ws)
    gs = solution_from_plans(data, greedy_start(data))
    if gs is not None:
        cands.append(gs)
    if not cands:
        return None
    return max(cands, key=lambda s: sum(1 for v in s.x.values() if v > 0.5))


def registry_warm(solver: str) -> bool:
    from ..solvers import registry
    return registry.BACKENDS[solver].warm_start


def _finish(data, solver, sol, lv, build_s, t_start) -> PlacementResult:
    wall = time.perf_counter() - t_start
    solve_s = sum(r["solve_s"] or 0.0 for r in lv)
    build_total = build_s + sum((r["build_s"] or 0.0) for r in lv[1:])
    nodes = sum(r["nodes"] or 0 for r in lv if r["nodes"] is not None) if lv else None
    if sol is None:
        last = lv[-1] if lv else {"status": "error", "message": "no level solved"}
        status = last["status"] if last["status"] in ("infeasible", "time_limit", "error") else "error"
        info = SolverInfo(name=solver, status=status, wall_s=wall, build_s=build_total, solve_s=solve_s,
                          nodes=nodes, message=last.get("message") or f"level {len(lv)} ended {status}",
                          extra={"levels": lv})
        return PlacementResult([], [d.job.name for d in data.jobs] + list(data.never), info, lv, data.t0)
    plans, blocked = plans_from_solution(data, sol)
    all_opt = all(r["status"] == "optimal" for r in lv)
    last = lv[-1]
    by_level = {r["level"]: r for r in lv}
    cost = by_level.get(2, {}).get("objective")
    status = "optimal" if all_opt else "feasible"
    msg = None
    if not all_opt:
        bad = [r for r in lv if r["status"] != "optimal"]
        msg = "; ".join(f"level {r['level']} ({r['name']}) {r['status']}" + (f": {r['message']}" if r['message'] else "")
                        for r in bad)
    extra = {"levels": lv, "jobs_started": len(plans), "t0": data.t0}
    if cost is not None:
        extra["cost_usd"] = cost
    if 3 in by_level:
        extra["run_s"] = by_level[3]["objective"]
    # report the cost level (the solver's "objective" of P1 as the problem statement prices it)
    rep = by_level.get(2, last)
    info = SolverInfo(name=solver, status=status, objective=rep["objective"], bound=rep["bound"], gap=rep["gap"],
                      wall_s=wall, build_s=build_total, solve_s=solve_s, nodes=nodes, message=msg, extra=extra)
    return PlacementResult(plans, blocked, info, lv, data.t0)


def cost_at_t0_usd(inst: Instance, plans: Sequence[JobPlan], t0: float, egress: bool | None = None) -> float:
    """The P1 cost of ``plans`` recomputed with the model's formulas: electricity at each region's price at
    t0 (constant over the run) plus egress if the instance's objective includes it.  Used to check the
    solver's objective against the evaluator's figures (equal when prices are constant)."""
    from ..evaluate import price_plan
    egress = inst.objective.egress if egress is None else egress
    tot = 0.0
    for p in plans:
        fig = price_plan(inst, p)
        job = inst.job(p.name)
        for b in p.blocks:
            kw = F.power_kw(inst, job, [(b.region, b.stages)])
            tot += kw * F.price_at(inst, b.region, t0) * fig.run_s / 3600.0
        if egress:
            tot += fig.egress_usd
    return tot


def build_level_model(data: PlacementData, level: int, fix: Mapping[int, float] | None = None):
    """The P1 model with only level ``level``'s objective active (P1.17-P1.19) and the earlier levels fixed
    at ``fix`` ({1: jobs started, 2: cost}, the cost with the LEVEL_TOL slack of the sequential scheme)."""
    m = build_model(data)
    objs = {1: m.obj_count, 2: m.obj_cost, 3: m.obj_run}
    for o in objs.values():
        o.deactivate()
    objs[level].activate()
    fix = dict(fix or {})
    if level > 1 and 1 in fix:
        m.con_level1 = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= fix[1])
    if level > 2 and 2 in fix:
        m.con_level2 = pyo.Constraint(expr=m.obj_cost.expr <= fix[2] * (1 + LEVEL_TOL))
    return m


def lp_relaxation_bound(data: PlacementData, level: int = 2, fix: Mapping[int, float] | None = None) -> float | None:
    """LP relaxation (root) bound of a level's model with the earlier levels fixed at ``fix`` values
    ({1: jobs started, 2: cost}); used by the benchmark for the root gap."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    m = build_level_model(data, level, fix)
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
    m.write(str(path), format="mps", io_options={"symbolic_solver_labels": True})
    return {"variables": sum(1 for _ in m.component_data_objects(pyo.Var)),
            "constraints": sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))}
