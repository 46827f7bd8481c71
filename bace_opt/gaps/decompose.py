"""A heuristic's P1 gap to the proven optimum, split into a selection gap and a placement gap.

P1 (system-model.md, "P1 placement") is lexicographic: most jobs started, then least cost at t0 prices.  A
heuristic's decision epoch (its policy's ``decide`` at t0 on the empty cluster, ``heuristic_epoch``) loses
money in two places: *which* jobs it starts (BACE-Pipe starts the shortest first; the optimum picks the
cheapest set of the same size) and *how* it places the jobs it starts.  With

    H      the heuristic's P1 cost (``cost_at_t0_usd`` of its plans, priced by the evaluator),
    C_S    the P1 optimum restricted to the heuristic's own set S of started jobs (P1 solved with ``jobs=S``:
           it starts all of S, since the heuristic does, at least cost),
    C*     the free P1 optimum (all waiting jobs),

the gaps are (fractions; our reading, docs/decisions.md "Gap decomposition")

    cost gap       H / C*   - 1
    selection gap  C_S / C* - 1        (the cheapest placement of S against the free optimum)
    placement gap  H / C_S  - 1        (the heuristic's placement of S against the cheapest one)

so that 1 + cost gap = (1 + selection gap) (1 + placement gap), exactly.  All three are defined only where the
heuristic starts as many jobs as the optimum (``same_admissions``); otherwise the heuristic lost admissions,
a worse failure the lexicographic objective ranks first, and the cost gaps are None.

A gap is *proven* only if each exact solve it uses is proven optimal (levels 1 and 2 of P1; level 3, run time,
does not change the cost and is skipped).  Unproven solves keep their status and bound so a caller can
record them as such; they never count as a gap.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..instance import Instance
from ..schedule import JobPlan, Schedule

log = logging.getLogger(__name__)


def heuristic_epoch(inst: Instance, policy: Any, decision_time_limit_s: float | None = None,
                    **options: Any) -> Schedule:
    """One decision of ``policy`` (a registered name, with ``options``, or a policy object) at P1's decision time
    t0 (the latest arrival), every resource free; the jobs it does not start are ``not_started``.  A priced
    Schedule; ``meta`` holds t0 and the decision's wall and CPU time (``decision_s``, ``decision_cpu_s``; CPU time
    is less sensitive to the load of a shared machine).

    The decision goes through the simulator's gate (``policies.gate``): the policy sees its own copy of the
    instance, and a plan that breaks a rule (over-commits, an unknown or duplicate job, a start off t0, ...), an
    exception, exit or interrupt inside the policy, or a call past ``decision_time_limit_s`` is the policy's
    ``PolicyError``, never a result."""
    from ..evaluate import make_schedule
    from ..policies import get_policy
    from ..policies.contract import check_policy
    from ..policies.gate import epoch_plans
    t0 = max((j.arrival_s for j in inst.jobs), default=0.0)
    pol = check_policy(get_policy(policy, **options) if isinstance(policy, str) else policy)
    names = [j.name for j in inst.jobs if j.arrival_s <= t0]
    plans, decision_s, decision_cpu_s = epoch_plans(inst, pol, t0, names, decision_time_limit_s)
    started = {p.name for p in plans}
    plans += [JobPlan(j.name, "not_started") for j in inst.jobs if j.name not in started]
    return make_schedule(inst, plans, method=f"p1-heur:{pol.name}",
                         meta={"t0_s": t0, "decision_s": decision_s, "decision_cpu_s": decision_cpu_s})


def p1_cost(inst: Instance, sched: Schedule, t0: float) -> float:
    """P1's level-2 objective of a schedule's started jobs (electricity at t0 prices, plus egress where the
    instance counts it), from the evaluator's run times."""
    from ..exact.placement import cost_at_t0_usd
    return cost_at_t0_usd(inst, [p.plan for p in sched.jobs if p.status == "done"], t0)


@dataclass(frozen=True)
class Solve:
    """One exact P1 solve as the gap uses it."""
    status: str                 # solver status ("optimal" = levels 1 and 2 proven)
    jobs: int | None            # jobs started by the solution (None: no solution)
    cost_usd: float | None      # P1 cost of the solution (evaluator's run times)
    bound_usd: float | None     # proven lower bound on the level-2 cost
    wall_s: float
    count_proven: bool = False  # level 1 (the most jobs that can start) is proven, whatever level 2's status
    engine: str | None = None   # the P1 engine that ran ("walk" or "cg")
    #: where ``bound_usd`` comes from (``exact.p1.certify.BOUND_SOURCES``; None: no level-2 record)
    bound_source: str | None = None
    #: the evaluator's electricity and egress of the solution (USD, over each run): egress is not in the objective
    #: unless ``inst.objective.egress``, and can outweigh the electricity (``gaps.text.egress_lines``)
    electricity_usd: float | None = None
    egress_usd: float | None = None
    #: the solve's time line (``exact.p1.certify.Timeline`` points: t_s from the command's start)
    timeline: tuple = ()

    @property
    def proven(self) -> bool:
        return self.status == "optimal"

    @property
    def certified(self) -> bool:
        """Level 1 is proven and level 2 has a bound: a gap against it is certified (an upper bound of the gap)."""
        return self.count_proven and self.bound_usd is not None and self.bound_usd > 0


def solve_p1(inst: Instance, jobs=None, t0: float | None = None, time_limit_s: float = 30.0,
             solver: str = "highs", warm_start=None, engine: str = "auto") -> tuple[Solve, Schedule | None]:
    """P1 levels 1-2 (optionally over the waiting jobs ``jobs`` only) with a time limit, on the P1 ``engine``."""
    from ..exact import solve
    t = time.perf_counter()
    kw: dict = {"levels": 2, "engine": engine}
    if jobs is not None:
        kw["jobs"] = list(jobs)
    if t0 is not None:
        kw["t0"] = t0
    sched = solve(inst, problem="placement", solver=solver, time_limit=time_limit_s, warm_start=warm_start, **kw)
    info = sched.solver
    t0_used = sched.meta.get("t0", t0)
    has = info.objective is not None or info.status in ("optimal", "feasible")
    n = sum(1 for p in sched.jobs if p.status == "done") if has else None
    cost = p1_cost(inst, sched, t0_used) if has else None
    lv = {r["level"]: r for r in (info.extra or {}).get("levels", [])}
    count_proven = info.status == "optimal" or lv.get(1, {}).get("status") == "optimal"
    bound = info.bound if count_proven else None
    m = sched.metrics if has else {}
    return Solve(info.status, n, cost, bound, time.perf_counter() - t, count_proven,
                 (info.extra or {}).get("engine"), lv.get(2, {}).get("bound_source"),
                 m.get("total_electricity_usd"), m.get("total_egress_usd"),
                 tuple((info.extra or {}).get("timeline") or ())), (sched if has else None)


@dataclass(frozen=True)
class GapDecomposition:
    """A heuristic's P1 gap and its split (see the module doc).  Gaps are fractions (0.1 = 10 %)."""
    policy: str
    t0_s: float
    heuristic_jobs: int
    heuristic_cost_usd: float
    decision_s: float
    optimum: Solve
    own_set: Solve | None                 # None when the heuristic started nothing or it was not solved
    same_admissions: bool | None          # None when the optimum's job count is not proven
    admissions_lost: int | None
    cost_gap: float | None
    selection_gap: float | None
    placement_gap: float | None
    #: certified, when the optimum is not proven but level 1 is: the cost gap is at most this (against the
    #: optimum's bound) and at least this (against the best placement found; 0 when the policy beats it)
    cost_gap_at_most: float | None = None
    cost_gap_at_least: float | None = None
    #: the evaluator's electricity and egress of the policy's decision (USD; see ``Solve.egress_usd``)
    heuristic_electricity_usd: float | None = None
    heuristic_egress_usd: float | None = None

    @property
    def own_placement_gap(self) -> float | None:
        """H / C_S - 1 against the PROVEN cheapest placement of the policy's own started set, whether or not it
        starts as many jobs as the optimum (a policy that lost admissions still places the jobs it starts;
        ``placement_gap`` is the same figure, kept for the split of a proven cost gap)."""
        o = self.own_set
        if o is None or not o.proven or o.cost_usd is None or not o.cost_usd > 0:
            return None
        return self.heuristic_cost_usd / o.cost_usd - 1.0

    @property
    def own_placement_range(self) -> tuple[float | None, float | None]:
        """(at least, at most) of the placement gap where the own-set solve is not proven: at least
        H / min(I_S, H) - 1 against its best placement (0 when the policy's own is the best), at most H / B_S - 1
        against its bound where it is certified (else None).  (None, None) when proven or not solved."""
        o = self.own_set
        if o is None or o.proven or o.cost_usd is None:
            return None, None
        best = min(o.cost_usd, self.heuristic_cost_usd)
        return (max(0.0, self.heuristic_cost_usd / best - 1.0) if best > 0 else None,
                self.heuristic_cost_usd / o.bound_usd - 1.0 if o.certified else None)

    @property
    def proven(self) -> bool:
        """The cost gap is proven (the free optimum is); the split needs ``split_proven`` too."""
        return self.optimum.proven and self.cost_gap is not None

    @property
    def split_proven(self) -> bool:
        return self.proven and self.own_set is not None and self.own_set.proven

    def to_row(self, prefix: str = "") -> dict:
        """Flat dict (for CSV rows)."""
        out = {"policy": self.policy, "t0_s": self.t0_s, "heuristic_jobs": self.heuristic_jobs,
               "heuristic_cost_usd": self.heuristic_cost_usd, "decision_s": self.decision_s,
               "same_admissions": self.same_admissions, "admissions_lost": self.admissions_lost,
               "cost_gap": self.cost_gap, "selection_gap": self.selection_gap, "placement_gap": self.placement_gap,
               "cost_gap_at_most": self.cost_gap_at_most, "cost_gap_at_least": self.cost_gap_at_least,
               "gap_proven": self.proven, "split_proven": self.split_proven}
        for name, s in (("opt", self.optimum), ("own", self.own_set)):
            for k, v in (asdict(s) if s is not None else dict.fromkeys(Solve.__dataclass_fields__)).items():
                if k != "timeline":           # flat: a row holds figures, the time line goes to the JSON
                    out[f"{name}_{k}"] = v
        return {prefix + k: v for k, v in out.items()}


def split_gap(heuristic_cost_usd: float, own_set_cost_usd: float | None,
              optimum_cost_usd: float | None) -> tuple[float | None, float | None, float | None]:
    """(cost gap, selection gap, placement gap) from the three costs (None where a cost is missing or the
    denominator is not positive).  1 + cost = (1 + selection)(1 + placement)."""
    def ratio(a, b):
        if a is None or b is None or not b > 0:
            return None
        return a / b - 1.0
    return (ratio(heuristic_cost_usd, optimum_cost_usd), ratio(own_set_cost_usd, optimum_cost_usd),
            ratio(heuristic_cost_usd, own_set_cost_usd))


def own_set_optimum(inst: Instance, heuristic: Schedule, t0: float, time_limit_s: float = 30.0,
                    solver: str = "highs", engine: str = "auto") -> Solve | None:
    """P1 restricted to the jobs the heuristic started (warm-started from the heuristic's own plans, so the
    solver starts from a feasible solution of the restricted problem)."""
    started = [p for p in heuristic.jobs if p.status == "done"]
    if not started:
        return None
    s, _ = solve_p1(inst, jobs=[p.name for p in started], t0=t0, time_limit_s=time_limit_s, solver=solver,
                    warm_start=[p.plan for p in started], engine=engine)
    return s


def decompose(inst: Instance, policy: Any, time_limit_s: float = 30.0, solver: str = "highs",
              policy_options: Mapping[str, Any] | None = None, optimum: Solve | None = None,
              heuristic: Schedule | None = None, engine: str = "auto") -> GapDecomposition:
    """The heuristic ``policy``'s P1 gap on ``inst`` and its selection/placement split, each exact solve with
    ``time_limit_s``.  ``optimum`` (a free-P1 ``Solve`` already at hand) and ``heuristic`` (its epoch) skip
    those computations."""
    h = heuristic if heuristic is not None else heuristic_epoch(inst, policy, **dict(policy_options or {}))
    t0 = float(h.meta.get("t0_s", max((j.arrival_s for j in inst.jobs), default=0.0)))
    h_jobs = sum(1 for p in h.jobs if p.status == "done")
    h_cost = p1_cost(inst, h, t0)
    if optimum is None:
        optimum, _ = solve_p1(inst, t0=t0, time_limit_s=time_limit_s, solver=solver, engine=engine)
    same = lost = None
    if (optimum.proven or optimum.count_proven) and optimum.jobs is not None:
        same = h_jobs == optimum.jobs
        lost = optimum.jobs - h_jobs
    own = own_set_optimum(inst, h, t0, time_limit_s, solver, engine) if h_jobs else None
    cost_gap = sel = place = at_most = at_least = None
    if same and optimum.proven:
        cost_gap, sel, place = split_gap(h_cost, own.cost_usd if own and own.proven else None, optimum.cost_usd)
        if h_jobs == 0:
            cost_gap = sel = place = 0.0
    elif same and optimum.certified:
        at_most = h_cost / optimum.bound_usd - 1.0
        best = min(c for c in (optimum.cost_usd, h_cost) if c is not None)
        at_least = max(0.0, h_cost / best - 1.0) if best > 0 else None
    name = policy if isinstance(policy, str) else policy.name
    return GapDecomposition(name, t0, h_jobs, h_cost, float(h.meta.get("decision_s", float("nan"))), optimum,
                            own, same, lost, cost_gap, sel, place, at_most, at_least,
                            h.metrics.get("total_electricity_usd"), h.metrics.get("total_egress_usd"))


def best_placement(optimum: Solve, entries) -> tuple[float | None, str]:
    """The cheapest placement known anywhere in a ``gap`` run that starts the optimum's proven count of jobs,
    and where it came from: the free solve's, each policy's own decision that starts as many jobs, and each such
    policy's own-set solve (P1 restricted to the jobs it starts: with as many jobs, a feasible point of the free
    P1, so an incumbent of it).  ``entries``: ``GapDecomposition``s."""
    cands = [] if optimum.cost_usd is None else [(optimum.cost_usd, "the P1 optimum's solve")]
    if optimum.count_proven and optimum.jobs is not None:
        for g in entries:
            if g is None or g.heuristic_jobs != optimum.jobs:
                continue
            cands.append((g.heuristic_cost_usd, f"{g.policy}'s decision"))
            if g.own_set is not None and g.own_set.cost_usd is not None and g.own_set.jobs == optimum.jobs:
                cands.append((g.own_set.cost_usd, f"{g.policy}'s own-set solve"))
    if not cands:
        return None, "none"
    return min(cands, key=lambda c: c[0])        # the first listed wins a tie (the free solve's)


def against_best(g: GapDecomposition, best: float | None) -> GapDecomposition:
    """``g`` with its certified lower end ``cost_gap_at_least`` taken against ``best`` (``best_placement``), the
    best placement known in the whole run rather than the free solve's alone."""
    import dataclasses
    if g.cost_gap_at_most is None or best is None or not best > 0:
        return g
    return dataclasses.replace(g, cost_gap_at_least=max(0.0, g.heuristic_cost_usd / min(best, g.heuristic_cost_usd)
                                                       - 1.0))
