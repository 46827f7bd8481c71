"""Pyomo pieces shared by P1's two MILP formulations (``p1.milp``: positions and per-hop flows;
``p1.walk``: one trail per job).  Both place stages with ``n_jrc`` (stages of job j in region r counted
in speed class c) and pick the slowest class with ``s_jc`` (models/placement.md, P1.16); they differ only in
how "job j uses region r" (u_jr) is written, which the caller passes in."""
from __future__ import annotations

from typing import Callable

import pyomo.environ as pyo

from .data import JobData


def class_index_sets(jobs) -> tuple[list, list]:
    """JRC: (j, r, c) where region r's class is at least as fast as c (n_jrc exists only there);
    JC: (j, c) for jobs with more than one speed class."""
    JRC = [(d.j, r, c) for d in jobs for r in d.regions for c in range(len(d.classes))
           if d.classes[d.cls_of[r]] >= d.classes[c]]
    JC = [(d.j, c) for d in jobs if len(d.classes) > 1 for c in range(len(d.classes))]
    return JRC, JC


def stages_in(m, d: JobData, r: int):
    """n_jr = sum_c n_jrc: stages of j in r."""
    return sum(m.n[d.j, r, c] for c in range(len(d.classes)) if d.classes[d.cls_of[r]] >= d.classes[c])


def price_rate(m, d: JobData):
    """Pi_j = sum_r pi_r n_jr (USD per second of run time)."""
    return sum(d.pi[r] * stages_in(m, d, r) for r in d.regions)


def sigma(m, d: JobData, c: int):
    """s_jc, or x_j when j has a single speed class."""
    return m.s[d.j, c] if len(d.classes) > 1 else m.x[d.j]


def add_speed_classes(m, uses: Callable) -> None:
    """P1.16 slowest speed class, exact: sum_c s_jc = x_j; n_jrc <= cap_jr s_jc (n_jrc exists only for
    f_r >= f_c); s_jc <= sum_{r: f_r = f_c} u_jr (the class is attained, so tau_j is exactly t_j/f_c).
    ``uses(m, d, r)`` is the formulation's expression of u_jr."""
    J = m.data.jobs
    m.con_class_one = pyo.Constraint([d.j for d in J if len(d.classes) > 1],
                                     rule=lambda m, j: sum(m.s[j, c] for c in range(len(J[j].classes))) == m.x[j])
    JRC_multi = [(j, r, c) for (j, r, c) in m.JRC if len(J[j].classes) > 1]
    m.con_class_stages = pyo.Constraint(JRC_multi, rule=lambda m, j, r, c: m.n[j, r, c] <= J[j].cap[r] * m.s[j, c])
    m.con_class_attained = pyo.Constraint(
        m.JC, rule=lambda m, j, c: m.s[j, c] <= sum(uses(m, J[j], r) for r in J[j].regions if J[j].cls_of[r] == c))
