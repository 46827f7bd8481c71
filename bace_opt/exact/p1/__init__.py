"""P1, placement at one decision epoch, solved exactly (models/placement.md): the modules behind
``bace_opt.exact.placement.solve_placement``.

* ``data``: the problem data (``PlacementData``: free resources, per-job parameters, counts and cuts).
* The walk engine: the Pyomo MILPs of ``walk`` (default) and ``position`` (with ``walk_solution`` and ``common``),
  solved level by level by ``milp``; CP-SAT's own model ``cpsat``; the level scheme ``levels``; starts and
  decoding ``solution``.
* ``cg``: the column-generation engine (a Dantzig-Wolfe master over placements of one job, heuristic and exact
  pricing, branch-and-price; ``cg.solve_levels_cg``).
* ``backend``: one back end's solve and the engine rule (``choose_engine``); ``certify``: the cost floor, the
  heuristic starts and the certified bound of a solve that is not proven; ``race``: the racing portfolio of
  back ends in processes.
"""
