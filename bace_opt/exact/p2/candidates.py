"""Placement candidates for the offline schedule P2 (models/schedule.md, section 3 "Candidate set").

A *placement* of job j is a block sequence ((r_1, n_1), ..., (r_q, n_q)) with one route per hop and the
no-stall reservation w = b_j on every hop.  The space of placements is finite but large; this module
enumerates, per job, a set of candidates that provably contains an optimal placement of every P2 instance
(up to the enumeration limits that the caller may set, which are recorded):

  * D1 (one visit per region): a placement visiting a region twice is dominated by one that visits each of
    its regions once, with the same stages per region, routes that use a sub-multiset of the links, hence no
    more bandwidth, latency or egress (models/schedule.md, Lemma 1).  Reversing the block order gives an
    equivalent placement (reservations are two-way), so one orientation per order is kept.
  * D2 (slack resources): a region (link) whose capacity exceeds the largest total use all jobs could ever
    put on it at once can never bind; its use is ignored when comparing placements (Lemma 2).
  * D3 (per-hop and per-chain routing dominance): for a fixed region set U (fixed tau, b_j), a routing whose
    non-slack link use, latency and (when it is priced) egress are all <= another's dominates it (Lemma 3).
  * D4 (whole-candidate dominance, in the model builder): a candidate whose non-slack resource use and
    rounded duration are <= another's and whose objective contribution is <= at every start time dominates it
    (Lemma 4).  ``pareto_keep`` implements the filter.

Completeness holds when ``max_blocks`` is None (all region-set sizes), ``routes_k`` is None and no region
pair has more than ``route_cap`` simple paths (then every simple path is enumerated); otherwise the set is
labelled incomplete and results are "optimal over the candidate set".
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ... import formulas as F
from ...errors import BaceOptError
from ...instance import Instance, Job, Route
from ...schedule import Block, Hop, JobPlan

log = logging.getLogger(__name__)

#: relative slack allowed on link capacity, half the evaluator's tolerance (bace_opt.evaluate.BW_TOL)
BW_REL_TOL = 5e-10


@dataclass(frozen=True)
class Candidate:
    """One placement of one job with everything the schedule models need (all from bace_opt.formulas)."""
    job: str
    blocks: tuple[tuple[str, int], ...]
    routes: tuple[Route, ...]              # one per hop, in block order
    reserved_gbps: float                   # w = b_j on every hop (no stall)
    tau_s: float
    run_s: float                           # R = N * T_iter
    gpus: tuple[tuple[str, int], ...]      # GPUs used per region
    link_gbps: tuple[tuple[int, float], ...]   # reserved Gbit/s per link index (same in both directions)
    egress_usd: float

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(r for r, _ in self.blocks)

    def plan(self, start_s: float) -> JobPlan:
        return JobPlan(self.job, "done", float(start_s), tuple(Block(r, n) for r, n in self.blocks),
                       tuple(Hop(rt.regions, self.reserved_gbps) for rt in self.routes))

    def key(self) -> tuple:
        """Resource-equivalence key: GPUs per region and link multiset (equal keys = equivalent placements)."""
        return (tuple(sorted(self.gpus)), tuple(sorted(self.link_gbps)))


@dataclass
class CandidateSet:
    by_job: dict[str, list[Candidate]]
    slack_regions: frozenset
    slack_links: frozenset
    complete: bool
    incomplete_reasons: list[str] = field(default_factory=list)
    enumerated: dict[str, int] = field(default_factory=dict)   # placements looked at per job (after D1)


def plan_key(inst: Instance, plan: JobPlan) -> tuple:
    """The resource-equivalence key of an arbitrary plan (to match a warm start against candidates)."""
    job = inst.job(plan.name)
    gpus: dict[str, int] = {}
    for b in plan.blocks:
        gpus[b.region] = gpus.get(b.region, 0) + job.gpus_per_stage * b.stages
    links: dict[int, float] = {}
    for h in plan.hops:
        for u, v in zip(h.route, h.route[1:]):
            li = inst.link_index[(u, v)]
            links[li] = links.get(li, 0.0) + h.reserved_gbps
    return (tuple(sorted(gpus.items())), tuple(sorted(links.items())))


def _compositions(total: int, caps: Sequence[int]):
    """All (n_1..n_q) with 1 <= n_i <= caps[i] and sum = total."""
    q = len(caps)
    if q == 1:
        if 1 <= total <= caps[0]:
            yield (total,)
        return
    rest_max = sum(caps[1:])
    for n in range(max(1, total - rest_max), min(caps[0], total - (q - 1)) + 1):
        for tail in _compositions(total - n, caps[1:]):
            yield (n,) + tail


def _max_demand_gbps(inst: Instance, job: Job, eligible: Sequence[str]) -> float:
    """An upper bound on b_j over all region sets: b_j = 8A/1000/tau and tau >= min_r t_j / f_r."""
    return F.demand_gbps(job, min(job.stage_time_s / inst.speed[r] for r in eligible))


def slack_resources(inst: Instance, max_blocks: int | None = None) -> tuple[frozenset, frozenset]:
    """Regions and links that can never be over capacity whatever all jobs do at once (Lemma 2)."""
    gpu_max = {r.name: 0 for r in inst.regions}
    bw_max = 0.0
    for job in inst.jobs:
        el = inst.eligible_regions(job)
        qmax = min(job.stages, len(el), max_blocks or len(el))
        for r in el:
            cap_stages = inst.region(r).gpus // job.gpus_per_stage
            gpu_max[r] += job.gpus_per_stage * min(job.stages, cap_stages)
        if qmax > 1:
            bw_max += (qmax - 1) * _max_demand_gbps(inst, job, el)
    slack_r = frozenset(r.name for r in inst.regions if gpu_max[r.name] <= r.gpus)
    slack_l = frozenset(i for i, l in enumerate(inst.links) if bw_max <= l.bandwidth_gbps)
    return slack_r, slack_l


def pareto_keep(resources: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of rows not dominated by another row (all columns <=, ties broken by first index).

    ``resources`` (N x k) is compared first (cheap); ``values`` (N x m, e.g. the objective at every start)
    only for rows that pass.  Row i is dropped iff some kept row p has every column <= row i's.
    """
    n = resources.shape[0]
    full = resources if values is None else np.hstack([resources, values])
    # by sum, then lexicographically, then index: a dominator always comes before what it dominates
    keys = tuple(full.T[::-1]) + (full.sum(axis=1),) if full.shape[1] else (np.arange(n),)
    order = np.lexsort(keys)
    keep = np.zeros(n, dtype=bool)
    kept: list[int] = []
    for i in order:
        dominated = False
        if kept:
            kr = resources[kept]
            cand = np.all(kr <= resources[i], axis=1) if resources.shape[1] else np.ones(len(kept), bool)
            if cand.any() and values is not None:
                idx = np.asarray(kept)[cand]
                cand_v = np.all(values[idx] <= values[i], axis=1)
                dominated = bool(cand_v.any())
            else:
                dominated = bool(cand.any())
        if not dominated:
            keep[i] = True
            kept.append(i)
    return keep


def enumerate_candidates(inst: Instance, *, max_blocks: int | None = None, routes_k: int | None = None,
                         route_cap: int = 64, combo_cap: int = 200_000, max_per_job: int = 50_000,
                         max_total: int | None = None) -> CandidateSet:
    """Enumerate the candidate placements of every job (D1-D3 applied; D4 is applied by the model builder).

    ``max_blocks`` caps the number of regions a job spans, ``routes_k`` the routes per hop (k lowest-latency
    simple paths); both make the set incomplete.  ``route_cap`` and ``combo_cap`` are safety limits: a region
    pair with more simple paths than ``route_cap`` is truncated (and the set labelled incomplete); a region set
    whose routings exceed ``combo_cap``, or a job with more than ``max_per_job`` candidates (all jobs together
    more than ``max_total``, when given), raises BaceOptError naming the job and what to limit.
    """
    if max_blocks is not None and max_blocks >= max((min(j.stages, len(inst.eligible_regions(j))) for j in inst.jobs),
                                                    default=0):
        max_blocks = None          # no job could span more regions: not a restriction
    slack_r, slack_l = slack_resources(inst, max_blocks)
    nonslack_links = [i for i in range(len(inst.links)) if i not in slack_l]
    lpos = {li: k for k, li in enumerate(nonslack_links)}
    priced_egress = inst.objective.egress
    complete = max_blocks is None and routes_k is None
    reasons: list[str] = []
    if max_blocks is not None:
        reasons.append(f"max_blocks={max_blocks}")
    if routes_k is not None:
        reasons.append(f"routes_k={routes_k}")
    route_memo: dict[tuple[str, str], list[Route]] = {}

    def routes_between(u: str, v: str) -> list[Route]:
        nonlocal complete
        if (u, v) not in route_memo:
            k = routes_k if routes_k is not None else route_cap + 1
            rs = list(inst.routes(u, v, k))
            if routes_k is None and len(rs) > route_cap:
                rs = rs[:route_cap]
                complete = False
                reasons.append(f"routes {u}-{v} truncated to route_cap={route_cap}")
            route_memo[(u, v)] = rs
        return route_memo[(u, v)]

    def route_sig(rt: Route) -> np.ndarray:
        v = np.zeros(len(nonslack_links) + 2)
        for li in rt.links:
            if li in lpos:
                v[lpos[li]] += 1
        v[-2] = rt.latency_ms
        v[-1] = rt.egress_usd_per_gb if priced_egress else 0.0
        return v

    by_job: dict[str, list[Candidate]] = {}
    enumerated: dict[str, int] = {}
    total = 0
    for job in inst.jobs:
        el = list(inst.eligible_regions(job))
        caps = {r: inst.region(r).gpus // job.gpus_per_stage for r in el}
        qmax = min(job.stages, len(el), max_blocks or len(el))
        out: list[Candidate] = []
        n_enum = 0
        for q in range(1, qmax + 1):
            for U in itertools.combinations(el, q):
                if sum(min(caps[r], job.stages) for r in U) < job.stages:
                    continue
                tau = F.tau_s(inst, job, U)
                w = F.demand_gbps(job, tau)
                routings = _routings(inst, job, U, w, routes_between, route_sig, len(nonslack_links), combo_cap)
                if not routings:
                    continue
                for order, rts in routings:
                    lat = [rt.latency_ms for rt in rts]
                    it = F.iteration_s(job, tau, [w] * len(rts), lat)
                    run = job.iterations * it
                    egress = F.egress_usd(job, [rt.egress_usd_per_gb for rt in rts])
                    link_use: dict[int, float] = {}
                    for rt in rts:
                        for li in rt.links:
                            link_use[li] = link_use.get(li, 0.0) + w
                    for ns in _compositions(job.stages, [caps[r] for r in order]):
                        n_enum += 1
                        blocks = tuple(zip(order, ns))
                        out.append(Candidate(job.name, blocks, tuple(rts), w, tau, run,
                                             tuple((r, job.gpus_per_stage * n) for r, n in blocks),
                                             tuple(sorted(link_use.items())), egress))
                        if len(out) > max_per_job:
                            raise BaceOptError(
                                f"job {job.name!r}: more than {max_per_job} placement candidates; limit the "
                                f"search with max_blocks (regions per job) or routes_k (routes per hop)")
                        if max_total is not None and total + len(out) > max_total:
                            raise BaceOptError(
                                f"more than {max_total} placement candidates in all (at job {job.name!r}); limit "
                                f"the search with max_blocks (regions per job) or routes_k (routes per hop)")
        by_job[job.name] = out
        enumerated[job.name] = n_enum
        total += len(out)
    return CandidateSet(by_job, slack_r, slack_l, complete, reasons, enumerated)


def _routings(inst, job, U, w, routes_between, route_sig, n_ns, combo_cap):
    """Pareto-minimal (order, routes) pairs for region set U (D1 orientation, D3 dominance)."""
    if len(U) == 1:
        return [((U[0],), ())]
    # per-pair Pareto routes that can carry w on every link
    pair_routes: dict[tuple[str, str], list[tuple[Route, np.ndarray]]] = {}
    for u, v in itertools.combinations(U, 2):
        rs = [rt for rt in routes_between(u, v)
              if all(w <= inst.links[li].bandwidth_gbps * (1 + BW_REL_TOL) for li in rt.links)]
        if not rs:
            pair_routes[(u, v)] = pair_routes[(v, u)] = []
            continue
        sig = np.array([route_sig(rt) for rt in rs])
        keep = pareto_keep(sig)
        kept = [(rs[i], sig[i]) for i in range(len(rs)) if keep[i]]
        pair_routes[(u, v)] = kept
        pair_routes[(v, u)] = [(_reverse(inst, rt), s) for rt, s in kept]
    combos: list[tuple[tuple[str, ...], tuple[Route, ...]]] = []
    sigs: list[np.ndarray] = []
    count = 0
    for order in itertools.permutations(U):
        if order[0] > order[-1]:
            continue  # reversal gives an equivalent placement (D1)
        options = [pair_routes[(a, b)] for a, b in zip(order, order[1:])]
        if any(not o for o in options):
            continue
        for choice in itertools.product(*options):
            count += 1
            if count > combo_cap:
                raise BaceOptError(
                    f"job {job.name!r}: more than {combo_cap} routings over regions {', '.join(U)}; limit "
                    f"max_blocks or routes_k")
            s = np.sum([c[1] for c in choice], axis=0)
            # links shared by several hops must still carry the sum
            use: dict[int, int] = {}
            for rt, _ in choice:
                for li in rt.links:
                    use[li] = use.get(li, 0) + 1
            if any(c * w > inst.links[li].bandwidth_gbps * (1 + BW_REL_TOL) for li, c in use.items()):
                continue
            combos.append((order, tuple(rt for rt, _ in choice)))
            sigs.append(s)
    if not combos:
        return []
    keep = pareto_keep(np.array(sigs))
    return [combos[i] for i in range(len(combos)) if keep[i]]


def _reverse(inst: Instance, rt: Route) -> Route:
    return inst.route(tuple(reversed(rt.regions)))


#: the candidate restrictions tried, in order, when the caller sets none (``candidate_ladder``): every placement
#: first, then fewer regions per job and one route per hop (the list scheduler's set, <= 2 regions, is the last)
LADDER: tuple[tuple[int | None, int | None], ...] = ((None, None), (3, None), (3, 1), (2, None), (2, 1))
#: the most candidates (all jobs) a step of the ladder may enumerate before the next step is tried
LADDER_MAX_TOTAL = 20_000


def limits_label(max_blocks: int | None, routes_k: int | None) -> str:
    """The candidate restriction in words ("all placements" when there is none)."""
    if max_blocks is None and routes_k is None:
        return "all placements"
    return ", ".join(p for p in ((f"<= {max_blocks} region{'s' if max_blocks != 1 else ''} per job" if max_blocks is not None
                                  else ""),
                                 (f"{routes_k} route{'s' if routes_k != 1 else ''} per hop"
                                  if routes_k is not None else "")) if p)


def candidate_ladder(inst: Instance, max_blocks: int | None = None, routes_k: int | None = None,
                     max_total: int = LADDER_MAX_TOTAL):
    """The candidate sets to try, most complete first: yields (max_blocks, routes_k, CandidateSet or None,
    why not).  With ``max_blocks`` or ``routes_k`` given, only that restriction (the caller's choice); else the
    steps of ``LADDER``, each enumerated with at most ``max_total`` candidates in all.  A step whose
    enumeration exceeds a limit, or (restricted) leaves some job without a candidate, yields None and the
    reason; the caller takes the first set that its model can hold."""
    given = max_blocks is not None or routes_k is not None
    steps = [(max_blocks, routes_k)] if given else list(LADDER)
    seen: list[tuple] = []
    for mb, rk in steps:
        try:
            cs = enumerate_candidates(inst, max_blocks=mb, routes_k=rk, max_total=None if given else max_total)
        except BaceOptError as e:
            yield mb, rk, None, str(e).split(";")[0]
            continue
        if not given and not cs.complete and any(not v for v in cs.by_job.values()):
            yield mb, rk, None, "a job has no candidate under this restriction"
            continue
        sig = tuple(sorted((k, len(v)) for k, v in cs.by_job.items()))
        if sig in seen:        # e.g. routes_k=1 changes nothing on a full mesh: the same model again
            yield mb, rk, None, "the same candidate counts as a larger set already tried"
            continue
        seen.append(sig)
        yield mb, rk, cs, None
