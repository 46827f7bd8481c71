"""P1 by column generation (issue 37): a Dantzig-Wolfe master whose columns are placements of one job.

``columns`` (a placement of one job, priced by the evaluator), ``master`` (the restricted master LP in highspy),
``pricing`` (fast heuristic pricing), ``pricing_exact`` (the one-job walk MILP with dual-adjusted costs: a proven
lower bound on a job's least reduced cost), ``engine`` (the column-generation loop with its Lagrangian bound).
Not wired into ``solve`` yet: step 3 of the issue measures the master's root bound first
(docs/research/p1-colgen/README.md).
"""
