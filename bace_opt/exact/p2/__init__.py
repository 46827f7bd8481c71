"""P2, the offline schedule, solved exactly or bracketed (models/schedule.md): the modules behind
``bace_opt.exact.schedule.solve_schedule`` and ``bace_opt.exact.solve(problem="schedule")``.

* ``candidates``: the placement candidates of every job (``CandidateSet``, the ladder of restrictions).
* ``data``: the slotted problem shared by the exact models; ``milp`` (time-indexed HiGHS) and ``cpsat`` (CP-SAT).
* ``bound``: the certified bracket (``solve_bracket``, ``solve_or_bracket``); its lower end: ``relax`` (job modes,
  the pool relaxation), ``area`` and ``area_sum`` (area relaxations, the cost-at-JCT bound), ``lower`` (the
  packing relaxation), ``cg`` (the time-indexed bound by column generation, research: not in the bracket); its
  upper end: ``list_schedule`` (the list scheduler and its local search), ``search`` (the pooled CP-SAT search),
  ``scale`` (the best list schedule at scale).
"""
