"""P1 by column generation (issue 37): a Dantzig-Wolfe master whose columns are placements of one job.

``columns`` (a placement of one job, priced by the evaluator), ``master`` (the restricted master LP in highspy),
``pricing`` (fast heuristic pricing), ``pricing_exact`` (the one-job walk MILP with dual-adjusted costs: a proven
lower bound on a job's least reduced cost), ``engine`` (the root column-generation loop with its Lagrangian
bound, used by the root-bound probe), ``branching`` / ``nodecg`` / ``bnp`` (branch-and-price of one level) and
``solve`` (``solve_levels_cg``: every level, with the contract of ``placement_milp.solve_levels_milp``).
Not wired into ``solve`` yet (docs/research/p1-colgen/README.md).
"""
from .solve import solve_levels_cg

__all__ = ["solve_levels_cg"]
