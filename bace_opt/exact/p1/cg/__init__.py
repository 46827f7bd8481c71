"""P1 by column generation (issue 37): a Dantzig-Wolfe master whose columns are placements of one job.

``columns`` (a placement of one job, priced by the evaluator), ``master`` (the restricted master LP in highspy),
``pricing`` (fast heuristic pricing), ``pricing_exact`` (the one-job walk MILP with dual-adjusted costs: a proven
lower bound on a job's least reduced cost), ``engine`` (the root column-generation loop with its Lagrangian
bound, used by the root-bound probe), ``branching`` / ``nodecg`` / ``bnp`` (branch-and-price of one level) and
``solve`` (``solve_levels_cg``: every level, with the contract of ``p1.milp.solve_levels_milp``).
Wired into ``solve`` as the engine "cg" (``p1.backend.choose_engine``; models/placement.md section 11).
"""
from .solve import solve_levels_cg

__all__ = ["solve_levels_cg"]
