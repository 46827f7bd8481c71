"""The restricted master LP of P1's Dantzig-Wolfe form (issue 37), in highspy.

Variables: lambda_p >= 0 for every column p (a placement of one job, ``columns.Column``).  Rows:

    conv_j     sum_{p of j} lambda_p <= 1                                 at most one placement per job
    level1     sum_p lambda_p >= z1*                                      (level 2 only: the count fixed)
    gpu_r      sum_p g_j n_pr lambda_p <= F_r                             P1.13
    bw_e       sum_p b_pc U_pe lambda_p <= B_e                            P1.14 / P1.36 (U_pe: hops crossing e)
    count_T    lo_T <= sum_{p of j: G_j >= T} lambda_p <= hi_T            P1.41 (level 2, count fixed)
    class_f    sum_{p: f_{c(p)} >= f} lambda_p <= k_f                      P1.44 (its first row is a sum of gpu_r here)
    prop_ij    x_i - x_j >= 0                                             P1.42 (x_j = sum_{p of j} lambda_p)
    same_ij    Phi_i - Phi_j + Phi^max_i x_j <= Phi^max_i                 P1.43

and, for level 2, one artificial column per ">=" row with cost ``big_m`` (the phase-1 columns: the master is
feasible from the first iteration, and the artificial columns leave once real columns cover the rows; the
bound stays valid while they are in, as the master with them is a relaxation).  Objective: level 1 min
-sum lambda (the count), level 2 min sum cost_p lambda_p.

Every row of the walk model's root that spans several jobs (P1.13, P1.36, P1.41-P1.44, the level-1 row) is here,
and every column is an integral placement of one job, so the master's LP optimum is at least the walk root LP's
(the walk model's per-job rows describe a relaxation of the convex hull of the job's placements).

``JobDuals`` is what pricing needs from the duals: the reduced cost of a placement p of job j is
rc_p = cost_p + const_j + sum_r w_jr n_pr + b_pc sum_e omega_e U_pe + cls_term_j[c(p)].
"""
from __future__ import annotations

from dataclasses import dataclass, field

import highspy
import numpy as np

from ..data import PlacementData, count_cuts, proportional_groups
from ..walk import phi_max
from .columns import Column
from ....solvers.highs import run_highs

INF = highspy.kHighsInf


@dataclass
class JobDuals:
    """Dual prices seen by one job's pricing problem (see the module docstring)."""
    level: int
    const: float
    w: dict                     # region -> per stage
    omega: dict                 # link -> per Gbit/s reserved per hop crossing it (>= 0)
    cls_term: list              # per speed class of the job
    conv: float                 # the dual of conv_j (<= 0)
    fix: dict = field(default_factory=dict)   # region -> per use of the region (packing rows; 0 without)
    mu: float = 1.0             # weight of the cost (level 2: 1; level 3: minus the cost row's dual; level 1: 0)
    rho: float = 0.0            # weight of the run time (level 3: 1)

    def reduced_cost(self, col: Column) -> float:
        base = -1.0 if self.level == 1 else self.mu * col.cost + self.rho * col.run_s
        return (base + self.const + sum(self.w.get(r, 0.0) * n + self.fix.get(r, 0.0)
                                        for r, n in zip(col.chain, col.stages))
                + col.demand * sum(self.omega.get(e, 0.0) * k for e, k in col.links.items()) + self.cls_term[col.cls])


def class_rows(data: PlacementData) -> list[tuple[float, int, list[tuple[int, list[int]]]]]:
    """P1.44's second row per speed f above the slowest: (f, k_f, [(job, classes >= f)]), k_f the most jobs
    (smallest GPU totals first) that fit the free GPUs of regions of speed >= f (as ``p1.walk``)."""
    inst = data.inst
    speed = {r: inst.speed[inst.regions[r].name] for r in range(len(inst.regions))}
    used = {r for d in data.jobs for r in d.regions}
    rows = []
    for f in sorted({speed[r] for r in used})[1:]:
        cap = sum(data.free_gpus[data.region_names[r]] for r in used if speed[r] >= f)
        terms = [(d.j, [c for c in range(len(d.classes)) if d.classes[c] >= f]) for d in data.jobs]
        terms = [(j, cs) for j, cs in terms if cs]
        k, tot = 0, 0
        for g in sorted(data.jobs[j].job.gpus for j, _ in terms):
            if tot + g > cap:
                break
            tot, k = tot + g, k + 1
        if terms:
            rows.append((f, k, terms))
    return rows


@dataclass
class Master:
    """The restricted master of one level (1: max count; 2: min cost with the count >= ``z1``; 3: min run time
    with the count >= ``z1`` and the cost <= ``z2``).  ``conv_art``: one artificial column per conv row too (cost
    ``big_m``), so that a branch-and-price node forcing a job (conv_j = 1) keeps the master feasible."""
    data: PlacementData
    level: int
    z1: int | None = None
    z2: float | None = None
    conv_art: bool = False
    t_cut: float | None = None       # level 2 only: a row sum_p run_p lambda_p <= t_cut (level 3 by cost, P1.45)
    big_m: float = 0.0
    pack: bool = False
    columns: list = field(default_factory=list)
    keys: set = field(default_factory=set)
    configs: list = field(default_factory=list)

    def __post_init__(self):
        data = self.data
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        # reduced costs of the master's own columns >= -1e-10 at its optimum, below the pricing tolerance, so a
        # placement already in the master is never priced as a new negative column
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        self.rows: list[tuple] = []          # row key per index
        self.lo: list[float] = []
        self.hi: list[float] = []

        def row(key, lo, hi):
            self.rows.append(key)
            self.lo.append(lo)
            self.hi.append(hi)
        for d in data.jobs:
            row(("conv", d.j), -INF, 1.0)
        if self.level >= 2:
            row(("level1",), float(self.z1), INF)
        if self.level == 3:
            row(("cost",), -INF, float(self.z2))
        if self.level == 2 and self.t_cut is not None:
            row(("run",), -INF, float(self.t_cut))
        used = sorted({r for d in data.jobs for r in d.regions})
        for r in used:
            row(("gpu", r), -INF, float(data.free_gpus[data.region_names[r]]))
        for e in sorted({e for d in data.jobs if d.K > 1 for e in d.links}):
            row(("bw", e), -INF, float(data.free_gbps[e]))
        self.count_rows = count_cuts(data, self.z1) if self.level >= 2 else []
        for i, (_, lo, hi) in enumerate(self.count_rows):
            row(("count", i), float(lo) if lo > 0 else -INF, float(hi))
        self.class_rows = class_rows(data)
        for i, (_, k, _) in enumerate(self.class_rows):
            row(("class", i), -INF, float(k))
        pairs = [(i, j) for g in proportional_groups(data) for i, j in zip(g, g[1:])]
        self.prop = pairs
        for i, j in pairs:
            row(("prop", i, j), 0.0, INF)
        self.same = [(i, j) for i, j in pairs if data.jobs[i].job.iterations == data.jobs[j].job.iterations]
        for i, j in self.same:
            row(("same", i, j), -INF, float(phi_max(data.jobs[i])))
        self.pack_regions = packing_regions(data) if self.pack else []
        for r in self.pack_regions:
            row(("cfg", r), -INF, 1.0)
            for d in data.jobs:
                if r in d.cap:
                    row(("pu", d.j, r), 0.0, 0.0)
                    row(("pn", d.j, r), -INF, 0.0)
        self.index = {k: i for i, k in enumerate(self.rows)}
        n = len(self.rows)
        h.addRows(n, np.array(self.lo), np.array(self.hi), 0, np.array([], dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([], dtype=float))
        h.changeObjectiveSense(highspy.ObjSense.kMinimize)
        self.n_art = 0
        self.order: list = []        # ("col", i) / ("cfg", i) per master column after the artificial ones
        self._job_rows = self._rows_of_jobs()
        self.art_conv = {}
        if not self.big_m:
            self.big_m = default_big_m(data) if self.level == 2 else \
                (default_big_run(data) if self.level == 3 else len(data.jobs) + 1.0)
        for k, i in self.index.items():
            if (self.level >= 2 and self.lo[i] > -INF and k[0] in ("level1", "count")) or \
                    (self.conv_art and k[0] == "conv"):
                if k[0] == "conv":
                    self.art_conv[k[1]] = self.n_art
                h.addCol(self.big_m, 0.0, INF, 1, np.array([i], dtype=np.int32), np.array([1.0]))
                self.n_art += 1

    def _rows_of_jobs(self) -> dict:
        """Per job: the rows whose coefficient on its columns is a constant (row index -> coefficient)."""
        out = {d.j: {self.index[("conv", d.j)]: 1.0} for d in self.data.jobs}
        if self.level >= 2:
            for d in self.data.jobs:
                out[d.j][self.index[("level1",)]] = 1.0
        for i, (jobs, _, _) in enumerate(self.count_rows):
            for j in jobs:
                out[j][self.index[("count", i)]] = 1.0
        for i, j in self.prop:
            out[i][self.index[("prop", i, j)]] = 1.0
            out[j][self.index[("prop", i, j)]] = -1.0
        for i, j in self.same:
            out[j][self.index[("same", i, j)]] = float(phi_max(self.data.jobs[i]))
        return out

    def coefficients(self, col: Column) -> dict[int, float]:
        """Row index -> coefficient of a column."""
        co = dict(self._job_rows[col.j])
        d = self.data.jobs[col.j]
        for r, g in col.gpus.items():
            co[self.index[("gpu", r)]] = float(g)
            if ("pu", col.j, r) in self.index:
                co[self.index[("pu", col.j, r)]] = 1.0
                co[self.index[("pn", col.j, r)]] = float(g // d.job.gpus_per_stage)
        for e, k in col.links.items():
            co[self.index[("bw", e)]] = col.demand * k
        if self.level == 3:
            co[self.index[("cost",)]] = col.cost
        if ("run",) in self.index:
            co[self.index[("run",)]] = col.run_s
        for i, (f, _, terms) in enumerate(self.class_rows):
            if d.classes[col.cls] >= f and any(j == col.j for j, _ in terms):
                co[self.index[("class", i)]] = 1.0
        for i, j in self.same:
            if col.j in (i, j):
                key = self.index[("same", i, j)]
                co[key] = co.get(key, 0.0) + (col.phi if col.j == i else -col.phi)
        return co

    def objective(self, col: Column) -> float:
        """The column's coefficient in the level's objective."""
        return -1.0 if self.level == 1 else (col.cost if self.level == 2 else col.run_s)

    def add(self, col: Column) -> bool:
        """Add a column unless the same placement is in already."""
        if col.key in self.keys:
            return False
        self.keys.add(col.key)
        self.order.append(("col", len(self.columns)))
        co = self.coefficients(col)
        idx = np.array(sorted(co), dtype=np.int32)
        self.h.addCol(self.objective(col), 0.0, INF, len(idx), idx,
                      np.array([co[i] for i in idx]))
        self.columns.append(col)
        for r, n in zip(col.chain, col.stages):      # the column's use of r alone is a configuration of r
            if r in self.pack_regions:
                self.add_config(r, {col.j: n})
        return True

    def solution_configs(self, cols: list) -> int:
        """The region patterns of an integral solution (columns of distinct jobs that fit together, e.g. a start):
        with them the master holds that solution from the first iteration."""
        added = 0
        for r in self.pack_regions:
            conf = {c.j: n for c in cols for rr, n in zip(c.chain, c.stages) if rr == r}
            if conf and self.add_config(r, conf):
                added += 1
        return added

    def seed_configs(self, support: list, orders: int = 20, seed: int = 0) -> int:
        """First-fit packings of region r from the placements of an LP solution (``support``: (column, value)
        pairs, e.g. the plain master's optimum): for each of ``orders`` random orders of those placements (the
        larger values first in the first order), each job's stages in r from the first of its placements that
        still fits.  They let the master with packing rows start near the plain master's value instead of from
        one job per configuration."""
        import random
        rng = random.Random(seed)
        added = 0
        for r in self.pack_regions:
            uses = [(v, c.j, n) for c, v in support for rr, n in zip(c.chain, c.stages) if rr == r]
            if not uses:
                continue
            cap = self.data.free_gpus[self.data.region_names[r]]
            for k in range(orders):
                order = sorted(uses, key=lambda t: -t[0]) if k == 0 else rng.sample(uses, len(uses))
                conf, left = {}, cap
                for _, j, n in order:
                    g = self.data.jobs[j].job.gpus_per_stage
                    if j not in conf and g * n <= left:
                        conf[j] = n
                        left -= g * n
                if conf and self.add_config(r, conf):
                    added += 1
        return added

    def add_config(self, r: int, conf: dict) -> bool:
        """A packing configuration of region r: job -> stages (every listed job uses r)."""
        key = (r, tuple(sorted(conf.items())))
        if key in self.keys:
            return False
        self.keys.add(key)
        co = {self.index[("cfg", r)]: 1.0}
        for j, n in conf.items():
            co[self.index[("pu", j, r)]] = -1.0
            co[self.index[("pn", j, r)]] = -float(n)
        idx = np.array(sorted(co), dtype=np.int32)
        self.h.addCol(0.0, 0.0, INF, len(idx), idx, np.array([co[i] for i in idx]))
        self.configs.append((len(self.columns) + len(self.configs), r, dict(conf)))
        self.order.append(("cfg", len(self.configs) - 1))
        return True

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(objective, row duals, column values of the real columns)."""
        h = self.h
        run_highs(h)
        st = h.getModelStatus()
        if st != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"restricted master: {h.modelStatusToString(st)}")
        sol = h.getSolution()
        vals = np.array(sol.col_value)[self.n_art:]
        lam = np.array([v for (kind, _), v in zip(self.order, vals) if kind == "col"])
        return h.getInfo().objective_function_value, np.array(sol.row_dual), lam

    def artificial(self) -> float:
        """The artificial columns' total value (0 when the real columns cover every ">=" row)."""
        return float(sum(self.h.getSolution().col_value[:self.n_art]))

    def job_duals(self, y: np.ndarray, j: int) -> JobDuals:
        """The prices one job's pricing sees (HiGHS duals: reduced cost = c - A^T y)."""
        d = self.data.jobs[j]
        const = -sum(c * y[i] for i, c in self._job_rows[j].items())
        w = {r: -d.job.gpus_per_stage * y[self.index[("gpu", r)]] for r in d.regions}
        for i, jj in self.same:
            if j in (i, jj):
                yy = y[self.index[("same", i, jj)]]
                for r in d.regions:
                    w[r] -= (r + 1) * yy * (1.0 if j == i else -1.0)
        omega = {e: -y[self.index[("bw", e)]] for e in d.links if ("bw", e) in self.index} if d.K > 1 else {}
        cls_term = [0.0] * len(d.classes)
        for i, (f, _, terms) in enumerate(self.class_rows):
            if any(jj == j for jj, _ in terms):
                for c in range(len(d.classes)):
                    if d.classes[c] >= f:
                        cls_term[c] -= y[self.index[("class", i)]]
        fix = {}
        for r in self.pack_regions:
            if ("pu", j, r) in self.index:
                fix[r] = -y[self.index[("pu", j, r)]]
                w[r] -= y[self.index[("pn", j, r)]]
        mu = {1: 0.0, 2: 1.0}.get(self.level, -float(y[self.index[("cost",)]]) if self.level == 3 else 1.0)
        rho = 1.0 if self.level == 3 else (-float(y[self.index[("run",)]]) if ("run",) in self.index else 0.0)
        return JobDuals(self.level, const, w, omega, cls_term, float(y[self.index[("conv", j)]]), fix,
                        mu=max(mu, 0.0), rho=max(rho, 0.0))

    def price_configs(self, y: np.ndarray, tol: float) -> tuple[float, int]:
        """Exact pricing of every region's configurations (a knapsack DP each): adds those of negative reduced
        cost; returns (sum over regions of min(-y_cfg_r, least reduced cost): the regions' Lagrangian term, added)."""
        term, added = 0.0, 0
        for r in self.pack_regions:
            items = [(d.j, d.job.gpus_per_stage, d.cap[r], y[self.index[("pu", d.j, r)]],
                      y[self.index[("pn", d.j, r)]]) for d in self.data.jobs if r in d.cap]
            val, conf = knapsack(items, self.data.free_gpus[self.data.region_names[r]])
            ycfg = y[self.index[("cfg", r)]]
            rc = val - ycfg
            term += min(-ycfg, rc)
            if rc < -tol and conf and self.add_config(r, conf):
                added += 1
        return term, added

    def integer_value(self, time_limit: float = 60.0) -> float | None:
        """The restricted master as a MIP (lambda binary), for an incumbent from the columns at hand (a set of
        placements that fits the free resources and meets every row: a P1 placement of the level); None if it
        has none within ``time_limit`` (e.g. the artificial columns are needed)."""
        h = self.h
        h.setOptionValue("time_limit", float(time_limit))
        # the configurations at hand need not hold the incumbent's pattern of any region: the packing rows are
        # freed for the MIP (the GPU rows keep it feasible) and put back after
        pk = np.array([i for i, k in enumerate(self.rows) if k[0] in ("cfg", "pu", "pn")], dtype=np.int32)
        if len(pk):
            h.changeRowsBounds(len(pk), pk, np.full(len(pk), -INF), np.full(len(pk), INF))
        n = h.getNumCol()
        integ = np.array([highspy.HighsVarType.kInteger] * n)
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), integ)
        try:
            run_highs(h)
            ok = h.getInfo().primal_solution_status == 2
            val = h.getInfo().objective_function_value if ok and self.artificial() < 1e-9 else None
        finally:
            h.setOptionValue("time_limit", highspy.kHighsInf)
            if len(pk):
                h.changeRowsBounds(len(pk), pk, np.array([self.lo[i] for i in pk]), np.array([self.hi[i] for i in pk]))
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                    np.array([highspy.HighsVarType.kContinuous] * n))
        return val


def packing_regions(data: PlacementData) -> list[int]:
    """Regions where the jobs' most stages together exceed the free GPUs (elsewhere the packing rows add
    nothing: every combination of the jobs' own placements fits)."""
    out = []
    for r in sorted({r for d in data.jobs for r in d.regions}):
        js = [d for d in data.jobs if r in d.cap]
        if len(js) > 1 and sum(d.job.gpus_per_stage * d.cap[r] for d in js) > data.free_gpus[data.region_names[r]]:
            out.append(r)
    return out


def knapsack(items, cap: int) -> tuple[float, dict]:
    """min over configurations {j: n_j} (n_j in 1..cap_j for the jobs used, sum g_j n_j <= cap) of
    sum_j (a_j + b_j n_j); items (j, g_j, cap_j, a_j, b_j).  Exact DP over the GPUs used."""
    dp = np.zeros(cap + 1)
    choice = []
    for j, g, cj, a, b in items:
        new = dp.copy()
        pick = np.zeros(cap + 1, dtype=int)
        for n in range(1, cj + 1):
            wgt = g * n
            if wgt > cap:
                break
            cand = dp[:cap + 1 - wgt] + a + b * n
            better = cand < new[wgt:] - 1e-15
            new[wgt:] = np.where(better, cand, new[wgt:])
            pick[wgt:] = np.where(better, n, pick[wgt:])
        choice.append((j, g, pick))
        dp = new
    conf, c = {}, cap
    for j, g, pick in reversed(choice):
        n = int(pick[c])
        if n:
            conf[j] = n
            c -= g * n
    return float(dp[cap]), conf


def default_big_m(data: PlacementData) -> float:
    """A cost for the artificial columns above any real one: the sum over jobs of their dearest placement's
    cost bound (Pi^max_j (slowest base + lat_j x every link's latency) + egress over every link)."""
    inst = data.inst
    lat = sum(l.latency_ms for l in inst.links)
    eg = sum(l.egress_usd_per_gb for l in inst.links) if data.egress else 0.0
    return 1.0 + sum(d.pi_max * (max(d.base_s) + d.lat_coef * lat) + d.egress_coef * eg for d in data.jobs)


def default_big_run(data: PlacementData) -> float:
    """The level-3 counterpart of ``default_big_m``: above any placement set's total run time."""
    lat = sum(l.latency_ms for l in data.inst.links)
    return 1.0 + sum(max(d.base_s) + d.lat_coef * lat for d in data.jobs)
