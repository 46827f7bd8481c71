"""P1 placement as a CP-SAT model (models/placement.md, section 6): the same decisions and constraints as the
MILP in ``placement`` (P1.1-P1.16), written over integers.

Differences from the MILP, all exact or with a proven error bound:

* The cost's product Pi_j * L_j (price-weighted GPU rate x hop latency) is written per region and link as an
  integer product ``w[j,r,e] = n_jr * U_je`` (``AddMultiplicationEquality``; U_je = number of j's hops on
  link e), so the cost is LINEAR in (n, w, U) with real coefficients c_i (P1.22).
* Objective scaling (P1.23): each real coefficient becomes ĉ_i = round(K c_i), with K = 2^50 / sum_i |c_i| ub_i
  (about 7e13: far inside int64, and large
  coefficients are what trip CP-SAT's presolve, see below).  For every solution x,
  |C(x) - Ĉ(x)/K| <= E := sum_i |c_i - ĉ_i/K| ub_i <= 0.5 sum_i ub_i / K.  CP-SAT proves Ĉ(x_K) optimal for
  the scaled objective, so the true optimum C* satisfies C* >= Ĉ*/K - E >= C(x_K) - 2E: the reported bound is
  (CP-SAT's scaled bound)/K - E, a proven bound on the true cost; the reported objective is C(x_K) re-priced
  with the real coefficients.  E / C is about 1e-12 on the paper instances.
* Bandwidth (P1.14): demands in integer kbit/s rounded UP, capacities rounded DOWN (both ignoring 1e-12
  Gbit/s of floating-point noise), so every CP-SAT solution is feasible for the real capacities.  It is exact
  unless the real reservations on a link sum to within (number of hops on it) x 1e-6 Gbit/s below its
  capacity; there CP-SAT may reject a placement the MILP accepts (then its optimum is a lower bound of
  admissions, never an infeasible schedule).  Why kbit/s and not bit/s: with coefficients near 1e10, CP-SAT
  9.15's presolve proved a feasible 2-job model "optimal" with 0 jobs (seen in tests; with presolve off it
  found 2); 1e6 keeps coefficients small.
* Levels: sequential like the MILP; level 1 is integral; level 2 is fixed at its scaled optimum (an integer,
  so the fixing is exact in the scaled model); level 3 is the scaled total run time.
"""
from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from typing import Sequence

from ...schedule import JobPlan
from ...solvers.base import SolveOptions, relative_gap
from .data import PlacementData, has_negative_prices, identical_pairs, job_arcs
from .levels import LEVEL_NAMES, LEVEL_TOL, remaining_s, solve_or_adopt
from .solution import Solution, start_solution

log = logging.getLogger(__name__)

BW_SCALE = 1e6          # Gbit/s -> kbit/s
BW_NOISE = 1e-3         # kbit/s of floating-point noise ignored when rounding (1e-12 Gbit/s)
OBJ_RANGE = 2.0 ** 46   # scaled objectives stay below this (about 7e13)


def _up(gbps: float) -> int:
    """A demand in integer kbit/s, rounded up (conservative) past floating-point noise."""
    return math.ceil(gbps * BW_SCALE - BW_NOISE)


class CpPlacement:
    """The CP-SAT model of P1 with its variables and the real-coefficient objectives."""

    def __init__(self, data: PlacementData):
        from ortools.sat.python import cp_model
        self.data = data
        inst = data.inst
        md = self.model = cp_model.CpModel()
        J = data.jobs
        self.x, self.a, self.n, self.s, self.h, self.f, self.U, self.nr, self.w = ({} for _ in range(9))
        for d in J:
            j = d.j
            self.x[j] = md.NewBoolVar(f"x[{j}]")
            for k in range(1, d.K + 1):
                for r in d.regions:
                    self.a[j, k, r] = md.NewBoolVar(f"a[{j},{k},{r}]")
            nc = len(d.classes)
            for r in d.regions:
                for c in range(nc):
                    if d.classes[d.cls_of[r]] >= d.classes[c]:
                        self.n[j, r, c] = md.NewIntVar(0, d.cap[r], f"n[{j},{r},{c}]")
                self.nr[j, r] = md.NewIntVar(0, d.cap[r], f"nr[{j},{r}]")
                md.Add(self.nr[j, r] == sum(self.n[j, r, c] for c in range(nc) if (j, r, c) in self.n))
            if nc > 1:
                for c in range(nc):
                    self.s[j, c] = md.NewBoolVar(f"s[{j},{c}]")
            for k in range(1, d.K):
                for r in d.regions:
                    self.h[j, k, r] = md.NewBoolVar(f"h[{j},{k},{r}]")
                for e in d.links:
                    for dd in (0, 1):
                        self.f[j, k, e, dd] = md.NewBoolVar(f"f[{j},{k},{e},{dd}]")
            if d.K > 1:
                for e in d.links:
                    self.U[j, e] = md.NewIntVar(0, d.K - 1, f"U[{j},{e}]")
                    md.Add(self.U[j, e] == sum(self.f[j, k, e, dd] for k in range(1, d.K) for dd in (0, 1)))
        self._constraints()
        self._objectives()

    def sigma(self, d, c):
        return self.s[d.j, c] if len(d.classes) > 1 else self.x[d.j]

    def o(self, d, k):
        return sum(self.a[d.j, k, r] for r in d.regions)

    def u(self, d, r):
        return sum(self.a[d.j, k, r] for k in range(1, d.K + 1))

    def _constraints(self):
        md, data = self.model, self.data
        inst = data.inst
        J = data.jobs
        negative = has_negative_prices(data)
        for d in J:
            j = d.j
            # P1.1-P1.4 positions
            for k in range(1, d.K + 1):
                md.Add(self.o(d, k) <= 1)
            md.Add(self.o(d, 1) == self.x[j])
            for k in range(1, d.K):
                md.Add(self.o(d, k + 1) <= self.o(d, k))
            for r in d.regions:
                md.Add(self.u(d, r) <= 1)
            # P1.5-P1.6 stages
            md.Add(sum(self.nr[j, r] for r in d.regions) == d.S * self.x[j])
            for r in d.regions:
                md.Add(self.nr[j, r] >= self.u(d, r))
                md.Add(self.nr[j, r] <= d.cap[r] * self.u(d, r))
            # P1.16 classes
            nc = len(d.classes)
            if nc > 1:
                md.Add(sum(self.s[j, c] for c in range(nc)) == self.x[j])
                for (jj, r, c), var in self.n.items():
                    if jj == j:
                        md.Add(var <= d.cap[r] * self.s[j, c])
                for c in range(nc):
                    md.Add(self.s[j, c] <= sum(self.u(d, r) for r in d.regions if d.cls_of[r] == c))
            # P1.7-P1.12 hops as unit flows
            oa, ia = job_arcs(inst, d)
            for k in range(1, d.K):
                for r in d.regions:
                    md.Add(self.h[j, k, r] <= self.a[j, k, r])
                md.Add(sum(self.h[j, k, r] for r in d.regions) == self.o(d, k + 1))
                for v in range(len(inst.regions)):
                    out = sum(self.f[j, k, e, dd] for e, dd in oa[v])
                    inn = sum(self.f[j, k, e, dd] for e, dd in ia[v])
                    rhs = (self.h[j, k, v] - self.a[j, k + 1, v]) if v in d.cap else 0
                    if not oa[v] and not ia[v] and v not in d.cap:
                        continue
                    md.Add(out - inn == rhs)
                    if len(ia[v]) > 1:
                        md.Add(inn <= 1)
                    if len(oa[v]) > 1:
                        md.Add(out <= 1)
                for e in d.links:
                    md.Add(self.f[j, k, e, 0] + self.f[j, k, e, 1] <= 1)
                if negative:   # P1.12b: no cycle in a hop's flow (they would earn money; harden, issue 10)
                    nv = len(inst.regions)
                    pot = [md.NewIntVar(0, nv - 1, f"p[{j},{k},{v}]") for v in range(nv)]
                    for e in d.links:
                        l = inst.links[e]
                        a, b = inst.region_index[l.a], inst.region_index[l.b]
                        md.Add(pot[b] >= pot[a] + 1).OnlyEnforceIf(self.f[j, k, e, 0])
                        md.Add(pot[a] >= pot[b] + 1).OnlyEnforceIf(self.f[j, k, e, 1])
            # P1.20 reversal symmetry
            if d.K > 1:
                first = sum(r * self.a[j, 1, r] for r in d.regions)
                last = sum(r * self.a[j, k, r] for k in range(1, d.K + 1) for r in d.regions) \
                    - sum(r * self.h[j, k, r] for k in range(1, d.K) for r in d.regions)
                md.Add(first <= last)
        # P1.21 identical jobs
        for i, j2 in identical_pairs(data):
            md.Add(self.x[i] >= self.x[j2])
        # P1.13 GPUs
        for r in sorted({r for d in J for r in d.regions}):
            md.Add(sum(d.job.gpus_per_stage * self.nr[d.j, r] for d in J if r in d.cap)
                   <= data.free_gpus[data.region_names[r]])
        # P1.14 bandwidth (bit/s)
        terms = defaultdict(list)
        for d in J:
            if d.K <= 1:
                continue
            if len(d.classes) == 1:
                bh = _up(d.demand[0])
                for e in d.links:
                    terms[e].append(bh * self.U[d.j, e])
            else:
                for e in d.links:
                    v = self.model.NewIntVar(0, _up(max(d.demand)) * (d.K - 1), f"v[{d.j},{e}]")
                    for c in range(len(d.classes)):
                        md.Add(v >= _up(d.demand[c]) * self.U[d.j, e]).OnlyEnforceIf(self.s[d.j, c])
                    terms[e].append(v)
        for e, t in terms.items():
            md.Add(sum(t) <= math.floor(data.free_gbps[e] * BW_SCALE + BW_NOISE))

    def _objectives(self):
        """Real-coefficient linear objectives: lists of (coef, var, ub) (P1.22)."""
        data, md = self.data, self.model
        inst = data.inst
        cost, run = [], []
        for (j, r, c), var in self.n.items():
            d = data.jobs[j]
            cost.append((d.pi[r] * d.base_s[c], var, d.cap[r]))
        for d in data.jobs:
            for c in range(len(d.classes)):
                run.append((d.base_s[c], self.sigma(d, c), 1))
            for e in d.links:
                if (d.j, e) not in self.U:
                    continue
                lat = inst.links[e].latency_ms
                U = self.U[d.j, e]
                if lat:
                    run.append((d.lat_coef * lat, U, d.K - 1))
                    for r in d.regions:
                        w = md.NewIntVar(0, d.cap[r] * (d.K - 1), f"w[{d.j},{r},{e}]")
                        md.AddMultiplicationEquality(w, [self.nr[d.j, r], U])
                        self.w[d.j, r, e] = w
                        cost.append((d.pi[r] * d.lat_coef * lat, w, d.cap[r] * (d.K - 1)))
                eg = inst.links[e].egress_usd_per_gb
                if data.egress and eg:
                    cost.append((d.egress_coef * eg, U, d.K - 1))
        self.cost_terms = [t for t in cost if t[0] != 0]
        self.run_terms = [t for t in run if t[0] != 0]

    @staticmethod
    def scaled(terms):
        """(scaled integer terms, K, E): ĉ = round(K c), E = sum |c - ĉ/K| ub (P1.23)."""
        tot = sum(abs(c) * ub for c, _, ub in terms)
        if tot <= 0:
            return [], 1.0, 0.0
        K = OBJ_RANGE / tot
        out, E = [], 0.0
        for c, v, ub in terms:
            ch = round(c * K)
            E += abs(c - ch / K) * ub
            if ch:
                out.append((ch, v))
        return out, K, E


def _value(solver, terms) -> float:
    return math.fsum(c * solver.Value(v) for c, v, _ in terms)


def solve_levels_cpsat(data: PlacementData, options: SolveOptions, warm_start: Sequence[JobPlan] | None,
                       levels: int, t_start: float, share=None):
    """The sequential levels on one CP-SAT model.  ``share`` (a ``p1.levels.LevelShare``): a level
    another race member proved is adopted, not solved: its solution becomes the hint and its optimum is fixed
    in the scaled units with the scaling error and LEVEL_TOL as slack (so the real optimum stays feasible)."""
    from ...solvers.cpsat import solve_cp

    tb = time.perf_counter()
    cp = CpPlacement(data)
    md = cp.model
    build_s = time.perf_counter() - tb
    ws = start_solution(data, warm_start)
    if ws is not None:
        _hint_solution(cp, ws)
    lv, sol = [], None
    all_vars = None
    for level in range(1, levels + 1):
        if level == 1:
            md.Minimize(-sum(cp.x.values()))
            K, E, terms = 1.0, 0.0, None
        else:
            terms = cp.cost_terms if level == 2 else cp.run_terms
            sc, K, E = cp.scaled(terms)
            md.Minimize(sum(c * v for c, v in sc) if sc else 0)
        box = {}

        def run(box=box):
            r, box["solver"] = solve_cp(md, options, time_limit_s=remaining_s(options, t_start))
            return r
        res, adopted = solve_or_adopt(share, level, run, "cpsat")
        solver = box.get("solver")
        rec = {"level": level, "name": LEVEL_NAMES[level],
               "sense": "max" if level == 1 else "min", "status": res.termination.value,
               "build_s": build_s if level == 1 else 0.0, "solve_s": res.solve_s, "nodes": res.nodes,
               "message": res.message}
        if adopted is not None:
            obj = -adopted.objective if level == 1 else adopted.objective
            rec.update(objective=obj, bound=obj, gap=0.0)
            lv.append(rec)
            sol = adopted.solution
            md.ClearHints()
            _hint_solution(cp, sol)
            if level == 1:
                md.Add(sum(cp.x.values()) >= int(round(obj)))
            elif level == 2 and terms:
                # every placement with real cost <= obj (1 + LEVEL_TOL) has scaled cost <= K (that + E) (P1.23)
                sc, K, E = cp.scaled(terms)
                if sc:
                    md.Add(sum(c * v for c, v in sc) <= math.floor(K * (obj + LEVEL_TOL * max(abs(obj), 1e-9) + E)))
            continue
        if res.has_solution:
            if level == 1:
                obj, bnd = -res.objective, -res.bound
            else:
                obj = _value(solver, terms)
                bnd = res.bound / K - E       # above obj only if the model is wrong: p1.certify refutes it
                rec["scaling"] = {"K": K, "error_bound": E}
            rec.update(objective=obj, bound=bnd, gap=relative_gap(obj, bnd))
        else:
            rec.update(objective=None, bound=None, gap=None)
        lv.append(rec)
        if not res.has_solution:
            break
        sol = _solution(cp, solver)
        if share is not None and res.termination.value == "optimal":
            share.publish(level, res.objective if level == 1 else obj, sol)
        if all_vars is None:
            all_vars = [v for v in _all_vars(cp)]
        md.ClearHints()
        for v in all_vars:
            md.AddHint(v, solver.Value(v))
        if level == 1:
            md.Add(sum(cp.x.values()) >= int(round(obj)))
        elif level == 2:
            sc, _, _ = cp.scaled(terms)
            if sc:
                md.Add(sum(c * v for c, v in sc) <= int(round(res.objective)))
    return sol, lv, build_s


def _all_vars(cp: CpPlacement):
    for dct in (cp.x, cp.a, cp.n, cp.s, cp.h, cp.f, cp.U, cp.nr, cp.w):
        yield from dct.values()


def _solution(cp: CpPlacement, solver) -> Solution:
    x = {j: float(solver.Value(v)) for j, v in cp.x.items()}
    a = {k: float(solver.Value(v)) for k, v in cp.a.items()}
    n = {k: float(solver.Value(v)) for k, v in cp.nr.items()}
    f = {k: float(solver.Value(v)) for k, v in cp.f.items()}
    return Solution(x, a, n, f)


def _hint_solution(cp: CpPlacement, ws: Solution) -> None:
    md = cp.model
    for j, v in cp.x.items():
        md.AddHint(v, int(round(ws.x.get(j, 0))))
    for key, v in cp.a.items():
        md.AddHint(v, 1 if ws.a.get(key, 0) > 0.5 else 0)
    for key, v in cp.nr.items():
        md.AddHint(v, int(round(ws.n.get(key, 0))))
    for key, v in cp.f.items():
        md.AddHint(v, 1 if ws.f.get(key, 0) > 0.5 else 0)
