"""``gap(inst, policy)``: how far each policy is from optimal, against proven figures only.

For every policy, at P1's decision epoch (t0 = the latest arrival, every resource free; ``decompose``):

* jobs started against the proven optimum's count (P1 ranks admissions first: a policy that starts fewer jobs
  has no cost gap, it lost admissions);
* the cost gap H / C* - 1 and its two factors, selection (C_S / C* - 1, which jobs) and placement
  (H / C_S - 1, where they run), 1 + cost = (1 + selection)(1 + placement);
* the optimum with its status and proven bound.  An optimum that is not proven gives no proven gap (a gap is
  measured against a proven figure, never against an incumbent a better placement could beat).  Where level 1
  (the count) is proven and level 2 has a bound B (at fleet scale: the column-generation engine's bound, or the
  walk model's), the gap is *certified*: at most H / B - 1, and at least H / I - 1 against the best placement I
  found (0 when the policy's own is the best), ``cost_gap_at_most`` / ``cost_gap_at_least``.

With ``online=True``, the whole run as the simulator plays it (queue mode), against P2 (models/schedule.md):

* mean JCT against the certified P2 bracket for mean JCT (mu = 0): the lower bound L (the larger of the pool
  and slotted relaxations, valid for the continuous-time problem) and the best schedule found U; the policy's
  mean JCT J is at most J / L - 1 above the optimum (certified) and at least J / U - 1 (when positive);
* cost (electricity, plus egress where the instance's objective counts it) against a certified lower bound:
  every job at its cheapest possible rate (the fewest GPUs at the lowest price of its eligible regions, for its
  shortest run time; ``exact.p2.relax.job_modes``), so the policy's cost C is at most C / L_cost - 1 above
  the cost of any schedule that runs every job;
* cost at the policy's own speed: the least cost of any schedule whose mean JCT is at most the policy's
  (P2.40, ``exact.p2.area_sum``, its LP), a point under the JCT-cost Pareto front; the policy's cost is at
  most C / L_J - 1 above what a schedule as fast as it could pay.  The cheapest-rate bound above is attained only
  by waiting for the cheap GPUs; this one says how much of a policy's cost a schedule as fast could save.
A policy that leaves jobs unfinished gets no online distance (an average over fewer jobs is not comparable).

Time: ``time_limit`` is the wall-clock limit of the whole call (the command's, from process start, for
``bace-opt gap --time-limit``; issue 42): one deadline (``bace_opt.clock``), and every stage takes its share of
what is left (the P1 optimum ``OPTIMUM_SHARE`` of the P1 part, each policy's decision and own-set solve an even
share of the rest; with ``online``, the online part up to ``online_time_limit``, a cap inside ``time_limit``,
``ONLINE_SHARE`` of it by default, plus whatever the P1 part leaves).  ``online_time_limit`` matters only with
``online``: without it, it is ignored with a note.  A policy's simulation in the online part is stopped at the
deadline (``trace_bound.simulate_by_deadline``): the report then has ``status`` "time_limit", the runs that
finished keep their figures, and a note names the policy that did not.

The P1 part (``p1part``) keeps one incumbent for the whole run: the best placement known anywhere in it (the
free solve's, a policy's decision or own-set solve that starts as many jobs; ``incumbent_usd``,
``incumbent_from``), and one time line (``timeline``: ``{t_s, bound, incumbent, bound_source}``, ``t_s`` from the
command's start); where the optimum is certified but not proven, ``GapReport.range`` says which side limits the
range and what would narrow it.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from .._format import short
from ..errors import InputError
from ..options import check_solve_options
from ..instance import Instance
from .decompose import GapDecomposition, Solve, decompose, heuristic_epoch, solve_p1  # noqa: F401 (re-exported)
from .p1part import OPTIMUM_SHARE, p1_part, stage  # noqa: F401 (OPTIMUM_SHARE re-exported: it was defined here)
from .text import distance_sentence  # noqa: F401  (re-exported: it was defined here)
from .trace_bound import simulate_by_deadline

log = logging.getLogger(__name__)

#: the pool relaxation and the restricted exact P2 are tried only up to this many jobs (above it the restricted
#: P2 refuses to build or finds nothing in the time; the area relaxation and the list scheduler scale)
ONLINE_MAX_JOBS = 12
#: p2_figures' shares of its time: the packing relaxation, the pool relaxation (small instances only)
LOWER_SHARE = 0.4
POOL_SHARE = 0.1
#: online: the time the policies' cost-at-their-mean-JCT bounds (P2.40) may take together, as a share of the
#: online time limit (the P2 figures get the rest)
COST_AT_JCT_SHARE = 0.25
#: a step of the online part that would get less time than this is skipped (its build alone would overrun)
MIN_STEP_S = 0.5
#: above this many jobs (and on every trace instance) the online bracket is ``online.trace_figures``
TRACE_BRACKET_JOBS = 100


@dataclass(frozen=True)
class OnlineGap:
    """A policy's whole run against the certified P2 figures (see the module doc)."""
    jobs: int
    jobs_done: int
    mean_jct_s: float | None
    cost_usd: float
    jct_lower_bound_s: float | None
    jct_best_s: float | None
    cost_lower_bound_usd: float | None
    #: P2.40: the least cost of any schedule with a mean JCT at most this policy's (None: not computed)
    cost_at_jct_lower_bound_usd: float | None = None
    #: mean_j R_j, every job's shortest run time (``gaps.online``): JCT minus it is the mean waiting time
    mean_shortest_run_s: float | None = None

    @property
    def mean_wait_s(self) -> float | None:
        """Mean waiting time: mean JCT minus the mean shortest run time (each job's JCT minus its R_j)."""
        if self.mean_jct_s is None or self.mean_shortest_run_s is None:
            return None
        return max(self.mean_jct_s - self.mean_shortest_run_s, 0.0)

    @property
    def wait_lower_bound_s(self) -> float | None:
        """Certified lower bound on the mean waiting time of any schedule: the JCT bound minus the same constant,
        at least 0."""
        if self.jct_lower_bound_s is None or self.mean_shortest_run_s is None:
            return None
        return max(self.jct_lower_bound_s - self.mean_shortest_run_s, 0.0)

    @property
    def wait_best_s(self) -> float | None:
        """Mean waiting time of the best schedule found."""
        if self.jct_best_s is None or self.mean_shortest_run_s is None:
            return None
        return max(self.jct_best_s - self.mean_shortest_run_s, 0.0)

    @property
    def complete(self) -> bool:
        return self.jobs_done == self.jobs

    @property
    def jct_gap_at_most(self) -> float | None:
        """Certified: the policy's mean JCT is at most this far above the optimum (fraction)."""
        if not self.complete or self.mean_jct_s is None or not self.jct_lower_bound_s:
            return None
        return self.mean_jct_s / self.jct_lower_bound_s - 1.0

    @property
    def jct_gap_at_least(self) -> float | None:
        """At least this far above the optimum (against the best schedule found; 0 when the policy beats it)."""
        if not self.complete or self.mean_jct_s is None or not self.jct_best_s:
            return None
        return max(0.0, self.mean_jct_s / self.jct_best_s - 1.0)

    @property
    def cost_gap_at_most(self) -> float | None:
        if not self.complete or not self.cost_lower_bound_usd:
            return None
        return self.cost_usd / self.cost_lower_bound_usd - 1.0

    @property
    def cost_gap_at_jct_at_most(self) -> float | None:
        """Certified: the policy's cost is at most this far above that of any schedule at least as fast (against
        the larger of P2.40 and the cheapest-rate bound: both bound such a schedule's cost, and P2.40 ignores
        which regions a job may use, so under a loose cap the cheapest-rate bound may be the larger)."""
        lb = self.cost_at_jct_lower_bound_usd
        if not self.complete or not lb or not math.isfinite(lb):
            return None
        return self.cost_usd / max(lb, self.cost_lower_bound_usd or 0.0) - 1.0


@dataclass(frozen=True)
class PolicyGap:
    policy: str
    p1: GapDecomposition | None        # None: the P1 part was skipped (``GapReport.p1_skipped``)
    online: OnlineGap | None = None


@dataclass
class GapReport:
    """What ``gap`` returns: the instance, the proven P1 optimum, one ``PolicyGap`` per policy and, online, the
    P2 figures they were measured against (``bracket``)."""
    instance: str
    jobs: int
    t0_s: float | None
    optimum: Solve | None              # None: the P1 part was skipped
    policies: list[PolicyGap]
    bracket: dict | None = None
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: why the P1 part was skipped (None: it ran)
    p1_skipped: str | None = None
    #: the instance's ``objective.egress`` (P1's cost counts egress); False: electricity only, as the paper's
    objective_counts_egress: bool = False
    #: the best placement known anywhere in the run that starts the optimum's count (``decompose.best_placement``:
    #: the free solve's, a policy's decision, a policy's own-set solve) and where it came from
    incumbent_usd: float | None = None
    incumbent_from: str | None = None
    #: the P1 part's time line: ``{t_s, bound, incumbent, bound_source}`` points, t_s from the command's start
    #: (``p1part``; the trace bracket's is ``bracket["timeline"]``)
    timeline: list = field(default_factory=list)
    #: "complete", or "time_limit" where the deadline stopped a stage that then returned what it had (a policy's
    #: simulation in the online part); ``notes`` says which
    status: str = "complete"

    @property
    def range(self) -> dict | None:
        """Where the optimum is certified but not proven: the range's width, which side limits it and what would
        narrow it (``p1part.range_reading``)."""
        from .p1part import range_reading
        return range_reading(self.optimum, self.incumbent_usd, self.timeline)

    @property
    def online_certified(self) -> bool:
        """Every policy's online bracket has a certified mean-JCT lower bound (> 0)."""
        return bool(self.policies) and all(p.online is not None and (p.online.jct_lower_bound_s or 0.0) > 0
                                           for p in self.policies)

    def __getitem__(self, policy: str) -> PolicyGap:
        for p in self.policies:
            if p.policy == policy:
                return p
        raise KeyError(policy)

    def to_dict(self) -> dict:
        opt = None
        if self.optimum is not None:
            opt = {k: v for k, v in asdict(self.optimum).items() if k != "timeline"}
        return {"instance": self.instance, "jobs": self.jobs, "t0_s": self.t0_s, "status": self.status,
                "optimum": opt,
                "optimum_proven": None if self.optimum is None else self.optimum.proven,
                "incumbent_usd": self.incumbent_usd, "incumbent_from": self.incumbent_from,
                "bound_usd": None if self.optimum is None or not self.optimum.certified else self.optimum.bound_usd,
                "bound_source": None if self.optimum is None else self.optimum.bound_source,
                "range": self.range, "timeline": list(self.timeline),
                "objective_counts_egress": self.objective_counts_egress,
                "p1_skipped": self.p1_skipped, "online_certified": self.online_certified,
                "policies": [_policy_dict(p) for p in self.policies], "bracket": self.bracket,
                "wall_s": self.wall_s, "notes": list(self.notes)}

    def to_frame(self):
        """One row per policy (pandas DataFrame)."""
        import pandas as pd
        rows = []
        for p in self.policies:
            d = _policy_dict(p)
            row = {k: v for k, v in d.items() if k not in ("own_set", "online")}
            for k, v in (d.get("online") or {}).items():
                row[f"online_{k}"] = v
            rows.append(row)
        return pd.DataFrame(rows).set_index("policy")

    def summary(self) -> str:
        from .text import summary_lines
        return "\n".join(summary_lines(self))


def _policy_dict(p: PolicyGap) -> dict:
    g = p.p1
    d = {"policy": p.policy, "p1_skipped": True} if g is None else {"policy": p.policy, "jobs_started": g.heuristic_jobs, "optimum_jobs": g.optimum.jobs,
         "admissions_lost": g.admissions_lost, "cost_usd": g.heuristic_cost_usd,
         "optimum_cost_usd": g.optimum.cost_usd, "cost_gap": g.cost_gap, "selection_gap": g.selection_gap,
         "placement_gap": g.placement_gap, "gap_proven": g.proven, "split_proven": g.split_proven,
         "cost_gap_at_most": g.cost_gap_at_most, "cost_gap_at_least": g.cost_gap_at_least,
         "decision_s": g.decision_s, "own_placement_gap": g.own_placement_gap,
         "own_placement_gap_at_least": g.own_placement_range[0], "own_placement_gap_at_most": g.own_placement_range[1],
         "electricity_usd": g.heuristic_electricity_usd, "egress_usd": g.heuristic_egress_usd,
         "own_set": None if g.own_set is None else {k: v for k, v in asdict(g.own_set).items() if k != "timeline"}}
    if p.online is not None:
        o = p.online
        d["online"] = dict(asdict(o), complete=o.complete, jct_gap_at_most=o.jct_gap_at_most,
                           jct_gap_at_least=o.jct_gap_at_least, cost_gap_at_most=o.cost_gap_at_most,
                           cost_gap_at_jct_at_most=o.cost_gap_at_jct_at_most, mean_wait_s=o.mean_wait_s,
                           wait_lower_bound_s=o.wait_lower_bound_s, wait_best_s=o.wait_best_s)
    return d


#: without ``online_time_limit``, the online part's cap is this share of ``time_limit``
ONLINE_SHARE = 0.5


def gap(inst: Instance, policy: Any = "bace-pipe", *, time_limit: float = 60.0, solver: str = "highs",
        online: bool = False, online_time_limit: float | None = None,
        policy_options: Mapping[str, Any] | None = None, threads: int | None = None,
        engine: str = "auto", p1: bool | None = None) -> GapReport:
    """How far each policy is from optimal on ``inst`` (module doc); returns a ``GapReport`` (``.summary()``
    the text ``bace-opt gap`` prints, ``.to_dict()`` its ``--json``, ``.to_frame()`` a row per policy).

    * ``policy``: a registered name (``bace-opt policies``), a ``package.module:Class`` spec, a policy object,
      or a list of them (default "bace-pipe").
    * ``time_limit`` (s, default 60): the wall-clock limit of the whole call: the P1 optimum, each policy's
      decision and own-set solve, and with ``online`` the simulations and the P2 bracket (one deadline,
      ``bace_opt.clock``; each step takes its share of what is left).  At fleet scale (20 regions, 50 jobs) the
      P1 optimum is not proven in minutes: the report gives a certified range (``GapReport.range`` says which
      side limits it); ``benchmarks/README.md``, "Convergence", shows how it closes with time.
    * ``solver``: the P1 back end ("highs", "cpsat", "scip", "mathopt-highs"; default "highs").
    * ``engine``: the P1 engine of every exact P1 solve: "auto" (default), "walk" or "cg"
      (``exact.p1.backend.choose_engine``: "auto" takes the walk engine, and column generation only where the
      walk model would exceed 2,000,000 binaries, which it then does not build).
    * ``online``: also simulate each policy over the whole run against the certified P2 figures.
    * ``online_time_limit`` (s): with ``online``, a cap on the online part inside ``time_limit`` (default
      ``ONLINE_SHARE`` of it; the online part also gets whatever the P1 part leaves); larger than
      ``time_limit`` is refused; without ``online`` it is ignored, with a note.
    * ``policy_options``: options for every policy given by name or spec (a policy object is configured
      itself).
    * ``threads``: threads of the online part's solves (default: every core).
    * ``p1``: run the one-epoch P1 part (None: yes, except with ``online`` on a trace instance,
      ``gaps.online.is_trace``, where one decision epoch over a week of arrivals means nothing; skipped, the
      online part gets the whole limit and the trace-scale bracket ``online.trace_figures``)."""
    from .. import clock
    specs = list(policy) if isinstance(policy, (list, tuple)) else [policy]
    if not specs:
        raise InputError("gap: give at least one policy")
    check_solve_options({"time_limit": time_limit, "online_time_limit": online_time_limit, "threads": threads})
    notes = []
    if online_time_limit is not None and not online:
        notes.append(f"online_time_limit ({short(online_time_limit, 's')}) ignored: it caps the online part, "
                     "which runs only with online=True (--online)")
        log.info("gap: %s", notes[-1])
        online_time_limit = None
    if online_time_limit is not None and online_time_limit > time_limit:
        raise InputError(f"online_time_limit: a cap on the online part inside time_limit (the whole call's "
                         f"wall clock, {short(time_limit, 's')}), got {short(online_time_limit, 's')}: raise "
                         "time_limit or lower online_time_limit")
    from ..exact.p1.backend import ENGINES
    if engine not in ENGINES:
        raise InputError(f"engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    skip = _p1_skipped(inst, online, p1)
    t_start = time.perf_counter()
    with clock.scope(time_limit):
        pols = [_policy(s, dict(policy_options or {})) for s in specs]
        names = [p.name for p in pols]
        if len(set(names)) != len(names):
            raise InputError(f"gap: policies named twice: "
                             f"{', '.join(sorted({n for n in names if names.count(n) > 1}))}")
        if skip:
            report = GapReport(inst.name, len(inst.jobs), None, None, [PolicyGap(n, None) for n in names],
                               p1_skipped=skip)
            cap = online_time_limit if online_time_limit is not None else time_limit
        else:
            cap = (online_time_limit if online_time_limit is not None else ONLINE_SHARE * time_limit) if online \
                else 0.0
            with clock.scope(max(clock.left(time_limit) - cap, 0.0)):
                part = p1_part(inst, pols, solver, engine, solve_p1)
            report = GapReport(inst.name, len(inst.jobs), part["t0_s"], part["optimum"],
                               [PolicyGap(p.name, g) for p, g in zip(pols, part["entries"])],
                               incumbent_usd=part["incumbent_usd"], incumbent_from=part["incumbent_from"],
                               timeline=part["timeline"])
        report.objective_counts_egress = bool(inst.objective.egress)
        report.notes.extend(notes)
        if online:
            _online(inst, report, pols, min(cap, clock.left(cap)) if online_time_limit is not None
                    else clock.left(cap), threads)
    report.wall_s = time.perf_counter() - t_start
    return report


def _p1_skipped(inst: Instance, online: bool, p1: bool | None) -> str | None:
    """Why the P1 part is skipped (``gap``'s ``p1``), or None."""
    from .online import is_trace
    if p1 is None:
        p1 = not (online and is_trace(inst))
    if p1:
        return None
    if not online:
        raise InputError("gap: p1=False leaves nothing to measure without online=True")
    if is_trace(inst):
        return ("a trace instance: one decision epoch with every job arrived and every resource free means "
                "nothing over a week of arrivals; the online part measures the whole run")
    return "skipped on request (p1=False / --skip-p1)"


def _policy(spec: Any, options: dict):
    """A policy object from a registered name or ``package.module:Class`` (with ``options``), or the object."""
    from ..policies import make_policy
    from ..policies.contract import check_policy
    if isinstance(spec, str):
        return make_policy(spec, **options)
    if options:
        raise InputError(f"policy options {sorted(options)} given with a policy object; configure the object instead")
    return check_policy(spec)


def _online(inst: Instance, report: GapReport, pols: Sequence[Any], time_limit: float, threads) -> None:
    """The online part (module doc) within ``time_limit`` wall-clock seconds: one deadline, each step gets what
    is left of it (a policy's simulation cannot be stopped: it counts, and the P2 figures get less)."""
    from .. import clock
    with clock.scope(time_limit):
        _online_in(inst, report, pols, time_limit, threads)


def _online_in(inst: Instance, report: GapReport, pols: Sequence[Any], time_limit: float, threads) -> None:
    from ..evaluate import evaluate
    from ..sim import simulate
    deadline = time.perf_counter() + time_limit
    runs, stopped = [], []
    for pol in pols:
        if stopped:
            report.notes.append(f"online: {pol.name} was not simulated: the time limit was reached")
            continue
        stage(f"online: simulating {pol.name} over {len(inst.jobs)} jobs")
        sched, settled = simulate_by_deadline(inst, pol, simulate)
        if sched is None:
            stopped.append(pol.name)
            report.status = "time_limit"
            report.notes.append(f"online: the simulation of {pol.name} was stopped at the time limit with "
                                f"{settled} of {len(inst.jobs)} jobs settled: no online figures for it")
            log.warning("gap: %s", report.notes[-1])
            continue
        complete = sched.metrics["jobs_done"] == len(inst.jobs) and evaluate(inst, sched).feasible
        runs.append((pol.name, sched, complete))
    if stopped:         # the deadline has passed: the policies that ran keep their runs, with no bracket
        report.notes.append("online: no P2 bracket (the time limit was reached during the simulations)")
        _online_gaps(inst, report, runs, {}, {})
        return
    # the cost-at-its-JCT LPs first (they need only the runs), within their share; the P2 figures get the rest
    at_jct = cost_at_jct_bounds(inst, runs, min(time_limit * COST_AT_JCT_SHARE, _left(deadline)), threads)
    from .online import is_trace, mean_shortest_run_s, trace_figures
    scale = is_trace(inst) or len(inst.jobs) > TRACE_BRACKET_JOBS
    stage(f"online: the {'trace-scale ' if scale else ''}P2 bracket (up to {short(_left(deadline), 's')})")
    report.bracket = bracket = (trace_figures if scale else p2_figures)(inst, _left(deadline), threads, runs)
    report.notes.extend(bracket.pop("notes", []))
    bracket.pop("jct_best_schedule", None)
    if "mean_shortest_run_s" not in bracket:
        bracket["mean_shortest_run_s"] = rmean = mean_shortest_run_s(inst)
        lo, hi = bracket.get("jct_lower_bound_s"), bracket.get("jct_best_s")
        bracket["wait_lower_bound_s"] = None if lo is None or rmean is None else max(lo - rmean, 0.0)
        bracket["wait_best_s"] = None if hi is None or rmean is None else max(hi - rmean, 0.0)
    lo, hi = bracket.get("jct_lower_bound_s"), bracket.get("jct_best_s")
    bracket["jct_bracket_width"] = hi / lo - 1.0 if lo and hi is not None else None
    _online_gaps(inst, report, runs, bracket, at_jct)


def _online_gaps(inst: Instance, report: GapReport, runs: Sequence[tuple], bracket: dict, at_jct: dict) -> None:
    """Each simulated policy's ``OnlineGap`` against ``bracket`` (empty: no figures) into ``report``."""
    from ..evaluate.metrics import objective_cost_usd
    index = {p.policy: i for i, p in enumerate(report.policies)}
    for name, sched, _ in runs:
        m = sched.metrics
        og = OnlineGap(len(inst.jobs), int(m["jobs_done"]), m.get("avg_jct_s"), objective_cost_usd(inst, m),
                       bracket.get("jct_lower_bound_s"), bracket.get("jct_best_s"),
                       bracket.get("cost_lower_bound_usd"), at_jct.get(name), bracket.get("mean_shortest_run_s"))
        i = index[name]
        report.policies[i] = PolicyGap(name, report.policies[i].p1, og)


def _left(deadline: float) -> float:
    """Seconds left until ``deadline`` (a ``time.perf_counter`` value), at least 0."""
    return max(deadline - time.perf_counter(), 0.0)


def cost_at_jct_bounds(inst: Instance, runs: Sequence[tuple], time_limit: float, threads) -> dict[str, float]:
    """Per complete run (name, schedule, complete): P2.40's least cost at the run's mean JCT (its LP; all of them
    within ``time_limit`` wall-clock seconds, each LP given what is left; a run whose LP does not finish, or that
    finds no time left, gets none)."""
    from ..exact.p2.area_sum import sum_lower_bound
    from ..solvers.base import SolveOptions
    deadline = time.perf_counter() + time_limit
    out = {}
    for name, sched, complete in runs:
        if not complete:
            continue
        left = _left(deadline)
        if left < MIN_STEP_S:
            log.info("gap: no time left for %s's cost-at-its-JCT bound", name)
            continue
        b = sum_lower_bound(inst, SolveOptions(time_limit_s=left, threads=threads),
                            jct_cap_s=sched.metrics["avg_jct_s"])
        if b.get("lower_bound") is not None and b["lower_bound_status"] == "optimal":
            out[name] = b["lower_bound"]
    return out


def p2_figures(inst: Instance, time_limit: float, threads=None, runs: Sequence[tuple] = (), seed: int = 1) -> dict:
    """The certified P2 figures the online distances use (``benchmarks.bench_schedule --brackets`` calls this:
    one recipe), within ``time_limit`` wall-clock seconds (each step gets what is left of them; a step left less
    than ``MIN_STEP_S`` is skipped, with a note; models/schedule.md sections 8.2-8.4):

    * mean JCT lower bound: the larger of the packing relaxation (P2.35-P2.38: the area relaxation P2.30-P2.34
      with the pool shared among feasible packings of whole jobs; HiGHS, ``LOWER_SHARE`` of the time, as
      ``exact.p2.lower.recipe_lower_bound`` solves it: LP then MIP up to 30 jobs, above it LPs on a
      coarse then a fine grid) and, up to ``ONLINE_MAX_JOBS`` jobs, the pool relaxation (P2.29, ``POOL_SHARE``); both valid over all
      placements, stall or not;
    * best mean JCT: the lowest evaluated mean JCT among the policies' complete runs (``runs``: (name,
      schedule, complete)), the list scheduler's local search started from their job orders (the rest of the
      time, or half of it when the restricted exact P2 is tried), and, up to ``ONLINE_MAX_JOBS`` jobs, the
      exact P2 restricted to at most two regions per job and one route per hop, warm-started from the best;
    * cost lower bound: every job at its cheapest rate for its shortest run time; best cost: the list schedule
      that gives every job its cheapest candidate (it waits for it) or a run, whichever is lower."""
    from ..errors import BaceOptError
    from ..exact.p2.lower import best_run, recipe_lower_bound, run_kind
    from ..exact.p2.relax import pool_lower_bound
    from ..solvers.base import SolveOptions
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    out: dict[str, Any] = {"notes": []}
    small = len(inst.jobs) <= ONLINE_MAX_JOBS
    areas = recipe_lower_bound(inst, time_limit * LOWER_SHARE, threads, seed)
    area = best_run(areas)
    lows = [(area.get("lower_bound_jct_s"), run_kind(area) if area else "none")]
    if small and _left(deadline) < MIN_STEP_S:
        out["notes"].append("no time left for the pool relaxation (P2.29)")
    elif small:
        pool = pool_lower_bound(inst, SolveOptions(time_limit_s=min(time_limit * POOL_SHARE, _left(deadline)),
                                                   threads=threads, seed=seed))
        lows.append((pool.get("lower_bound_jct_s"), f"pool relaxation (P2.29), {pool.get('lower_bound_status')}"))
    lows = [x for x in lows if x[0] is not None]
    lo, kind = max(lows) if lows else (None, "none")
    out.update(jct_lower_bound_s=lo, jct_lower_bound_kind=kind, jct_lower_bound_area_s=area.get("lower_bound_jct_s"),
               cost_lower_bound_usd=area.get("lower_bound_cost_usd"),
               cost_lower_bound_kind="each job at its cheapest rate for its shortest run time",
               lower_s=time.perf_counter() - t0)
    t1 = time.perf_counter()
    try:
        _upper(inst, time_limit - (t1 - t0), threads, runs, seed, small, out,
               [a["relaxed_order"] for a in areas if a.get("relaxed_order")])
    except BaceOptError as e:
        out["notes"].append(f"upper end: {e}")
    out["upper_s"] = time.perf_counter() - t1
    return out


def _upper(inst: Instance, budget: float, threads, runs: Sequence[tuple], seed: int, small: bool, out: dict,
           orders: Sequence[Sequence[int]] = ()) -> None:
    """p2_figures' upper ends (its doc), into ``out``."""
    from ..errors import BaceOptError
    from ..evaluate import evaluate
    from ..evaluate.metrics import objective_cost_usd
    from ..exact.schedule import solve_schedule
    from ..exact.p2.scale import best_list_schedule
    from ..solvers.base import SolveOptions
    t0 = time.perf_counter()
    ok = [(name, sched) for name, sched, good in runs if good]
    best = [(sched.metrics["avg_jct_s"], name, sched) for name, sched in ok]
    costs = [(objective_cost_usd(inst, sched.metrics), name) for name, sched in ok]
    cs = best_list_schedule(inst, 0.0, goal="cost", seed=seed)
    if cs["schedule"] is not None and evaluate(inst, cs["schedule"]).feasible:
        costs.append((objective_cost_usd(inst, cs["schedule"].metrics), "list schedule, cheapest placements"))
    left = max(budget - (time.perf_counter() - t0), 1.0)
    ls = best_list_schedule(inst, left / 2 if small else left, warm=[sc for _, sc in ok], seed=seed,
                            orders=orders)
    if ls["schedule"] is not None and not evaluate(inst, ls["schedule"]).feasible:
        out["notes"].append("the list schedule failed the evaluator's check (a bug): not used")
    elif ls["schedule"] is not None:
        best.append((ls["schedule"].metrics["avg_jct_s"],
                     f"list schedule, {ls.get('search', 'local search')} ({ls['evaluations']} orders)",
                     ls["schedule"]))
    left = budget - (time.perf_counter() - t0)
    if small and best and left < MIN_STEP_S:
        out["notes"].append("no time left for the restricted exact P2")
    elif small and best:
        try:
            ex = solve_schedule(inst, "cpsat", SolveOptions(time_limit_s=left, threads=threads, seed=seed),
                                max_blocks=2, routes_k=1, warm_start=min(best, key=lambda b: b[0])[2])
            if ex.solver.objective is not None and ex.metrics["jobs_done"] == len(inst.jobs):
                best.append((ex.metrics["avg_jct_s"], "exact P2 (<= 2 regions per job, 1 route per hop)", ex))
            else:
                out["notes"].append(f"restricted exact P2: {ex.solver.status} ({ex.solver.message or 'no schedule'})")
        except BaceOptError as e:
            out["notes"].append(f"restricted exact P2 not built: {e}")
    elif not small:
        out["notes"].append(f"{len(inst.jobs)} jobs > {ONLINE_MAX_JOBS}: the restricted exact P2 is not tried")
    b = min(best, key=lambda x: x[0]) if best else (None, None, None)
    out.update(jct_best_s=b[0], jct_best_from=b[1], jct_best_schedule=b[2])
    out["cost_best_usd"], out["cost_best_from"] = min(costs) if costs else (None, None)
