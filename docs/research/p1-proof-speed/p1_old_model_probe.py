"""Record, not maintained: a one-off probe of issue 11 (P1 proof speed), measured on highspy 1.12 (HiGHS 1.12)
and kept as the record of those measurements (output and reading in results/p1_old_model_probe.md; the rounds in
log.md, which names each run's commit and load).  Moved from benchmarks/ in issue 26; no test imports it,
and it may not run against today's bace_opt.  Run it from the repository root, as it was run (PYTHONPATH=.
makes ``benchmarks.common`` importable; the sibling probes it imports are found beside it):

    PYTHONPATH=. python docs/research/p1-proof-speed/p1_old_model_probe.py ...

Issue 11: do the old (position) and new (walk) formulations agree where the old one cannot prove the realistic
instances inside one benchmark run (benchmarks/README.md, "Old (position) model with a long limit")?  Each mode
first solves the instance with the new model, then asks the old model to prove the same level from the new
optimum as MIP start.  A MIP start changes only the search: the old model's proof is its own.  Prints JSON lines.

    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_old_model_probe.py level2 2 6000     # seed, time limit of the old model (s)
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_old_model_probe.py level3 2 3900

level2: the old model solves levels 1-2 from the new level-2 optimum.
level3: the old model solves level 3 only, with levels 1-2 fixed at the values the old model itself proved
        (level 1 by the GPU-count bound; level 2 from ``level2`` or the long run, ``Z2_OLD``), handed in through
        the race's level sharing (``placement_levels.LevelShare``), from the new level-3 optimum.  The old model's
        level 3 is proved by cost minimization (P1.45), as the walk model's is: the method is exact for any
        formulation, and the plain min-T solve of the position model does not finish in hours.
"""
from __future__ import annotations

import json
import sys
import time

from benchmarks.common import realistic
from bace_opt.exact.p1 import position as placement_position   # the position model (placement_milp.py before issue 26)
from bace_opt.exact.placement import solve_placement
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.levels import LevelShare, SharedLevel
from bace_opt.exact.p1.solution import solution_from_plans
from bace_opt.solvers.base import SolveOptions

#: level-2 optima proved by the old model: seeds 1 and 3 in results/bench_placement_realistic_-oldlong.md (to the
#: 7 decimals printed there), seed 2 by ``level2`` (results/p1_old_model_probe.md).  The level loop fixes level 2
#: at max(this, the start's cost) (1 + LEVEL_TOL), so a value rounded down to 7 decimals changes nothing.
Z2_OLD = {1: 62.2589536, 2: 16.703894727051647, 3: 55.9579029}


def _levels(res):
    return [(r["level"], r["status"], r["objective"], r.get("bound"), r.get("nodes"), r.get("solve_s"),
             r.get("message")) for r in res.levels]


def _new(inst, levels, out):
    t = time.perf_counter()
    new = solve_placement(inst, solver="highs", options=SolveOptions(time_limit_s=900, threads=1), levels=levels)
    print(json.dumps(dict(out, stage="walk", wall=round(time.perf_counter() - t, 1),
                          status=new.solver_info.status, levels=_levels(new))), flush=True)
    return new


def level2(s, tl):
    inst = realistic(s)
    new = _new(inst, 2, {"seed": s})
    t = time.perf_counter()
    old = solve_placement(inst, solver="highs", formulation="position", warm_start=new.plans, levels=2,
                          options=SolveOptions(time_limit_s=tl, threads=1))
    print(json.dumps(dict(seed=s, stage="position", wall=round(time.perf_counter() - t, 1),
                          status=old.solver_info.status, levels=_levels(old))), flush=True)


class _Fixed(LevelShare):
    """Levels 1 and 2 handed in as proven (by the old model itself, see the module doc)."""

    def __init__(self, z1, z2, sol):
        self.z1, self.z2, self.sol = z1, z2, sol

    def take(self, level):
        if level == 1:
            return SharedLevel(1, -float(self.z1), self.sol, "old model (GPU-count bound)")
        if level == 2:
            return SharedLevel(2, self.z2, self.sol, "old model (level 2 proven alone)")
        return None


def level3(s, tl):
    inst = realistic(s)
    new = _new(inst, 3, {"seed": s})
    sol = solution_from_plans(PlacementData(inst), new.plans)
    saved = getattr(placement_position, "LEVEL3_BY_COST", False)
    placement_position.LEVEL3_BY_COST = True       # the position module's level 3 by cost minimization (P1.45)
    try:
        t = time.perf_counter()
        old = solve_placement(inst, solver="highs", formulation="position", warm_start=new.plans,
                              share=_Fixed(new.levels[0]["objective"], Z2_OLD[s], sol),
                              options=SolveOptions(time_limit_s=tl, threads=1))
    finally:
        placement_position.LEVEL3_BY_COST = saved
    print(json.dumps(dict(seed=s, stage="position-level3", wall=round(time.perf_counter() - t, 1),
                          status=old.solver_info.status, levels=_levels(old))), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("level2", "level3"):
        print("usage: p1_old_model_probe.py level2|level3 SEED TIME_LIMIT_S", file=sys.stderr)
        raise SystemExit(2)
    {"level2": level2, "level3": level3}[sys.argv[1]](int(sys.argv[2]), float(sys.argv[3]))
