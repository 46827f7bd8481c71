"""Exact pricing of one job (issue 37): the one-job walk MILP with dual-adjusted costs, a proven lower bound on
the job's least reduced cost.

The model is ``p1.walk.build_model`` on the job alone (same t0 and free resources as the master), written
once as MPS and kept in a highspy object; each pricing call only changes the column costs and the offset.  With
x_j fixed to 1 the objective is

    cost (P1.39: electricity with the exact products q = Pi F, egress)      (level 2; the constant -1 at level 1)
    + const_j + sum_r w_jr n_jr + sum_e omega_e b_j U_je + cls_term_j[c]

the reduced cost of the placement the walk point decodes to, or more: the walk model's integral points are the
placements re-encoded as trails (models/placement.md section 9 (a): same stages and classes, link use no more
than the routes'), plus trails whose decoding uses fewer links.  With several classes the bandwidth term is
omega_e v_je, and v_je >= b_jc U_je (P1.36) is tight at a minimum since omega_e >= 0.  So the MILP's optimum is
<= the least reduced cost over the job's placements, and its dual bound is a valid lower bound of it, even when
the solve stops on its time limit; the decoded incumbent is a column (its reduced cost recomputed exactly).
"""
from __future__ import annotations

import os
import tempfile

import highspy
import numpy as np
from pyomo.repn import generate_standard_repn

from ..data import JobData, PlacementData
from ..solution import plans_from_solution
from ..walk import build_model, job_cost_expr, runtime_expr
from ..walk_solution import solution_from_pyomo
from .columns import Column, columns_from_plans
from .master import JobDuals
from ....solvers.highs import run_highs


class ExactPricer:
    """The one-job walk MILP of job ``d`` of ``data``, kept for repeated pricing."""

    def __init__(self, data: PlacementData, d: JobData, threads: int = 1):
        self.data, self.d = data, d
        self.one = PlacementData(data.inst, jobs=[d.job.name], t0=data.t0, free_gpus=data.free_gpus,
                                 free_gbps=data.free_gbps)
        m = self.m = build_model(self.one)
        self.d1 = self.one.jobs[0]
        fd, path = tempfile.mkstemp(suffix=".mps")
        os.close(fd)
        try:
            _, sid = m.write(path, format="mps", io_options={"symbolic_solver_labels": True})
            h = self.h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("threads", threads)
            h.readModel(path)
        finally:
            os.unlink(path)
        smap = m.solutions.symbol_map[sid]
        names = list(h.getLp().col_names_)
        self.col = {}
        for i, nm in enumerate(names):
            v = smap.bySymbol.get(nm)
            if v is not None:
                self.col[id(v)] = i
        self.vars = {id(v): v for v in m.component_data_objects()
                     if hasattr(v, "is_variable_type") and v.is_variable_type()}
        repn = generate_standard_repn(job_cost_expr(m, self.d1), compute_values=True)
        self.cost_const = float(repn.constant)
        self.cost_lin = {id(v): float(c) for v, c in zip(repn.linear_vars, repn.linear_coefs)}
        repn = generate_standard_repn(runtime_expr(m), compute_values=True)      # level 3 (P1.19, walk form)
        self.run_const = float(repn.constant)
        self.run_lin = {id(v): float(c) for v, c in zip(repn.linear_vars, repn.linear_coefs)}
        x = self.col.get(id(m.x[0]))
        if x is not None:
            h.changeColBounds(x, 1.0, 1.0)
        self.n = h.getNumCol()
        lp = h.getLp()
        self.lower0, self.upper0 = np.array(lp.col_lower_), np.array(lp.col_upper_)
        self.n_rows0 = h.getNumRow()

    def restrict(self, br) -> None:
        """Apply a branch-and-price node's restrictions of this job (``branching.JobBranch``: regions forbidden
        or needed, stage bounds per region) to the MILP's column bounds and rows; ``unrestrict`` undoes them.
        Every placement that meets the branch is still a point of the MILP (its trail with u, n as the
        placement's), so the optimum stays a lower bound of the least reduced cost over those placements."""
        m, h = self.m, self.h
        lo, hi = self.lower0.copy(), self.upper0.copy()
        rows = []
        if br is not None:
            for r in self.d1.regions:
                iu = self.col.get(id(m.u[0, r]))
                ns = [self.col[id(m.n[0, r, c])] for c in range(len(self.d1.classes))
                      if (0, r, c) in m.n and id(m.n[0, r, c]) in self.col]
                if iu is not None and r in br.forbid:
                    hi[iu] = 0.0
                if iu is not None and r in br.need:
                    lo[iu] = max(lo[iu], 1.0)
                if r in br.nmax:
                    for i in ns:
                        hi[i] = min(hi[i], float(br.nmax[r]))
                if r in br.nmin and ns:
                    rows.append((float(br.nmin[r]), ns))
        h.changeColsBounds(self.n, np.arange(self.n, dtype=np.int32), lo, hi)
        for k, ns in rows:
            h.addRow(k, highspy.kHighsInf, len(ns), np.array(ns, dtype=np.int32), np.ones(len(ns)))

    def unrestrict(self) -> None:
        h = self.h
        extra = h.getNumRow() - self.n_rows0
        if extra > 0:
            h.deleteRows(extra, np.arange(self.n_rows0, self.n_rows0 + extra, dtype=np.int32))
        h.changeColsBounds(self.n, np.arange(self.n, dtype=np.int32), self.lower0, self.upper0)

    def _costs(self, du: JobDuals) -> tuple[np.ndarray, float]:
        m, d1 = self.m, self.d1
        c = np.zeros(self.n)
        off = du.const
        if du.level != 1:
            for wgt, const, lin in ((du.mu, self.cost_const, self.cost_lin), (du.rho, self.run_const, self.run_lin)):
                if wgt:
                    off += wgt * const
                    for k, v in lin.items():
                        if k in self.col:
                            c[self.col[k]] += wgt * v
        else:
            off -= 1.0

        def add(var, v):
            i = self.col.get(id(var))
            if i is not None:
                c[i] += v
        for r in d1.regions:
            if du.fix.get(r):
                add(m.u[0, r], du.fix[r])
            for cc in range(len(d1.classes)):
                if (0, r, cc) in m.n:
                    add(m.n[0, r, cc], du.w[r])
        if d1.K > 1:
            multi = len(d1.classes) > 1
            for e in d1.links:
                om = du.omega.get(e, 0.0)
                if not om:
                    continue
                if multi:
                    add(m.v[0, e], om)
                else:
                    add(m.F[0, e, 0], d1.demand[0] * om)
                    add(m.F[0, e, 1], d1.demand[0] * om)
        if len(d1.classes) > 1:
            for cc in range(len(d1.classes)):
                add(m.s[0, cc], du.cls_term[cc])
        else:
            off += du.cls_term[0]
        return c, off

    def price(self, du: JobDuals, time_limit: float = 60.0, abs_gap: float = 1e-9,
              cutoff: float | None = None, first: bool = False) -> tuple[float, Column | None, str]:
        """(lower bound on the least reduced cost, the best placement found as a column or None, HiGHS status).

        ``cutoff``: only placements of reduced cost below it are looked for (HiGHS's objective bound); when none
        exists the solve ends infeasible and the lower bound is the cutoff.  ``first``: stop at the first such
        placement (a column for the master; the lower bound is then HiGHS's dual bound at that moment, valid but
        not the least reduced cost)."""
        h = self.h
        c, off = self._costs(du)
        h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), c)
        h.changeObjectiveOffset(off)
        h.setOptionValue("time_limit", float(max(time_limit, 0.05)))
        h.setOptionValue("mip_rel_gap", 1e-9)
        h.setOptionValue("mip_abs_gap", abs_gap)
        h.setOptionValue("objective_bound", float(cutoff) if cutoff is not None else highspy.kHighsInf)
        h.setOptionValue("mip_max_improving_sols", 1 if first else highspy.kHighsIInf)
        run_highs(h)
        st = h.getModelStatus()
        info = h.getInfo()
        status = h.modelStatusToString(st)
        col = None
        if info.primal_solution_status == 2:        # a feasible solution is at hand
            col = self._decode(np.array(h.getSolution().col_value))
        if st == highspy.HighsModelStatus.kInfeasible:
            return (float("inf") if cutoff is None else float(cutoff)), None, status
        lb = info.mip_dual_bound
        if st == highspy.HighsModelStatus.kOptimal and col is not None:
            lb = min(lb, info.objective_function_value)
        if cutoff is not None:
            lb = min(lb, cutoff)
        return float(lb), col, status

    def _decode(self, vals: np.ndarray) -> Column | None:
        for k, v in self.vars.items():
            i = self.col.get(k)
            v.set_value(float(vals[i]) if i is not None else 0.0, skip_validation=True)
        sol = solution_from_pyomo(self.m)
        plans, _ = plans_from_solution(self.one, sol)
        cols = columns_from_plans(self.data, plans)
        return cols[0] if cols else None
