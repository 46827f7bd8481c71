"""P1 problem data (models/placement.md sections 1-2): the index sets and coefficients every P1 formulation
shares, computed once from (instance, waiting jobs, t0, free resources).

``PlacementData`` checks the inputs (unknown jobs, late arrivals, free resources out of range raise
``InputError`` naming the field) and builds one ``JobData`` per admissible job: eligible regions and caps,
positions K_j, speed classes, per-class tau and demand b_jc, usable links, price rates pi_jr, run-time and
latency / egress coefficients, and the exact Pi^max_j / Pi^min_j bounds of the cost linearization (P1.15).
``job_arcs`` gives the directed arcs of a job's hop flows (``arc_ends`` the ends of one), ``identical_pairs``
the interchangeable jobs (P1.21), ``model_size`` the MILP's binary count.
"""
from __future__ import annotations

import math
import numbers
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

from ... import formulas as F
from ...errors import InputError
from ...instance import Instance, Job
from ...schedule import JobPlan

@dataclass
class JobData:
    """Everything the models need about one admissible job (P1 parameters)."""
    j: int                      # model index
    job: Job
    regions: list[int]          # eligible region indexes with >= g_j free GPUs
    cap: dict[int, int]         # r -> max stages of j in r (free GPUs // g_j, <= S_j)
    K: int                      # positions: min(S_j, |regions|)
    classes: list[float]        # distinct speed factors of its regions, slowest first
    cls_of: dict[int, int]      # r -> class index of its speed
    tau: list[float]            # tau_c = t_j / f_c
    demand: list[float]         # b_jc = 8 A_j / 1000 / tau_c (Gbit/s)
    links: list[int]            # links usable by some class (free_e >= min_c b_jc)
    pi: dict[int, float]        # r -> USD per second of run time per stage at t0 prices
    base_s: list[float]         # N (m + S - 1) tau_c   (run time without latency, per class)
    lat_coef: float             # 2 N / 1000  (run-time seconds per ms of one-way hop latency)
    egress_coef: float          # N m 2 A / 1000 (GB that cross each hop)
    pi_max: float               # max over placements of Pi_j = sum_r pi_r n_jr   (P1.15 big-M)
    pi_min: float               # min over placements of Pi_j

    @property
    def S(self) -> int:
        return self.job.stages


def job_arcs(inst: Instance, d: JobData) -> tuple[dict, dict]:
    """Directed arcs (link e, direction 0: a->b / 1: b->a) out of and into each node (region index) over the
    links job ``d`` may use: the arc sets of the hop flows (P1.8-P1.10), shared by the MILP and CP-SAT."""
    oa, ia = defaultdict(list), defaultdict(list)
    for e in d.links:
        l = inst.links[e]
        a, b = inst.region_index[l.a], inst.region_index[l.b]
        oa[a].append((e, 0)); ia[b].append((e, 0))
        oa[b].append((e, 1)); ia[a].append((e, 1))
    return oa, ia


def arc_ends(inst: Instance, e: int, dd: int) -> tuple[int, int]:
    """(tail, head) region indexes of link ``e`` crossed in direction ``dd`` (0: a->b, 1: b->a)."""
    l = inst.links[e]
    a, b = inst.region_index[l.a], inst.region_index[l.b]
    return (a, b) if dd == 0 else (b, a)


class PlacementData:
    """Index sets and coefficients of P1 for (instance, waiting jobs, t0, free resources)."""

    def __init__(self, inst: Instance, jobs: Sequence[str] | None = None, t0: float | None = None,
                 free_gpus: Mapping[str, int] | None = None, free_gbps: Mapping[int, float] | None = None):
        self.inst = inst
        if jobs is None:
            if t0 is None:
                t0 = max((j.arrival_s for j in inst.jobs), default=0.0)
            names = [j.name for j in inst.jobs if j.arrival_s <= t0]
        else:
            names = list(jobs)
            bad = [n for n in names if n not in inst.job_index]
            if bad:
                raise InputError(f"jobs: {', '.join(map(repr, bad))} not in instance {inst.name!r}")
            if len(set(names)) != len(names):
                raise InputError("jobs: a job is named twice")
            if t0 is None:
                t0 = max((inst.job(n).arrival_s for n in names), default=0.0)
            late = [n for n in names if inst.job(n).arrival_s > t0 + 1e-9]
            if late:
                raise InputError(f"jobs: {', '.join(map(repr, late))} arrive after t0 = {t0:g} s")
        self.t0 = float(t0)
        self.names = names
        self.free_gpus = self._free_gpus(free_gpus)
        self.free_gbps = self._free_gbps(free_gbps)
        self.region_names = [r.name for r in inst.regions]
        self.jobs: list[JobData] = []
        self.never: list[str] = []          # waiting jobs that cannot fit the free resources at all
        for name in names:
            jd = self._job(inst.job(name), len(self.jobs))
            if jd is None:
                self.never.append(name)
            else:
                self.jobs.append(jd)

    # -- input checks
    def _free_gpus(self, free):
        inst = self.inst
        out = {r.name: r.gpus for r in inst.regions}
        if free is None:
            return out
        probs = []
        for k, v in free.items():
            if k not in inst.region_index:
                probs.append(f"free_gpus: {k!r} is not a region")
            elif not (isinstance(v, numbers.Real) and math.isfinite(v) and v == int(v)
                      and 0 <= v <= inst.region(k).gpus):
                probs.append(f"free_gpus[{k!r}]: must be an integer in [0, {inst.region(k).gpus}], got {v!r}")
            else:
                out[k] = int(v)
        if probs:
            raise InputError(probs)
        return out

    def _free_gbps(self, free):
        inst = self.inst
        out = {i: l.bandwidth_gbps for i, l in enumerate(inst.links)}
        if free is None:
            return out
        probs = []
        for k, v in free.items():
            if not isinstance(k, numbers.Integral) or not 0 <= k < len(inst.links):
                probs.append(f"free_gbps: key {k!r} is not a link index (0..{len(inst.links) - 1})")
            elif not (isinstance(v, numbers.Real) and math.isfinite(v)
                      and -1e-6 * inst.links[k].bandwidth_gbps - 1e-9 <= v
                      <= inst.links[k].bandwidth_gbps * (1 + 1e-6) + 1e-9):   # float noise of residual sums
                probs.append(f"free_gbps[{k}]: must be in [0, {inst.links[k].bandwidth_gbps:g}], got {v!r}")
            else:
                out[int(k)] = min(max(float(v), 0.0), inst.links[k].bandwidth_gbps)
        if probs:
            raise InputError(probs)
        return out

    # -- per-job parameters
    def _job(self, job: Job, j: int) -> JobData | None:
        inst = self.inst
        g = job.gpus_per_stage
        regions, cap = [], {}
        for rn in inst.eligible_regions(job):
            c = min(job.stages, self.free_gpus[rn] // g)
            if c >= 1:
                ri = inst.region_index[rn]
                regions.append(ri)
                cap[ri] = c
        if sum(cap.values()) < job.stages:
            return None
        speeds = sorted({inst.speed[inst.regions[r].name] for r in regions})
        cls_of = {r: speeds.index(inst.speed[inst.regions[r].name]) for r in regions}
        tau = [job.stage_time_s / f for f in speeds]
        demand = [F.demand_gbps(job, t) for t in tau]
        bmin = min(demand)
        links = [e for e, bw in self.free_gbps.items() if bw >= bmin * (1 - 1e-12)]
        pi = {}
        for r in regions:
            reg = inst.regions[r]
            kw = g * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
            pi[r] = kw * F.price_at(inst, reg.name, self.t0) / 3600.0
        N, m, S = job.iterations, job.microbatches, job.stages
        base = [N * (m + S - 1) * t for t in tau]
        K = min(S, len(regions))
        if len(regions) > 1:
            # a chain of >= 2 blocks needs a hop; if no usable link exists the job runs in one region only
            if not links:
                singles = [r for r in regions if cap[r] >= S]
                if not singles:
                    return None
                regions = singles
                cap = {r: cap[r] for r in singles}
                K = 1
        # Pi_j = 0 when j does not start, so the big-M must cover 0 too: with negative prices the greedy maximum
        # can be < 0 (harden, issue 10; P1.15 stays exact for prices of any sign)
        pi_max = max(0.0, _fill(sorted(regions, key=lambda r: -pi[r]), pi, cap, S))
        pi_min = _fill(sorted(regions, key=lambda r: pi[r]), pi, cap, S)
        return JobData(j=j, job=job, regions=regions, cap=cap, K=K, classes=speeds, cls_of=cls_of, tau=tau,
                       demand=demand, links=links, pi=pi, base_s=base, lat_coef=2.0 * N / 1000.0,
                       egress_coef=N * m * 2.0 * job.activation_mb / 1000.0, pi_max=pi_max, pi_min=pi_min)

    @property
    def egress(self) -> bool:
        return bool(self.inst.objective.egress)


def _fill(order, pi, cap, S) -> float:
    """Sum of pi_r over S stages filled greedily in ``order`` up to each region's cap (a bound of Pi_j)."""
    left, tot = S, 0.0
    for r in order:
        k = min(left, cap[r])
        tot += k * pi[r]
        left -= k
        if not left:
            break
    return tot

def identical_pairs(data: PlacementData) -> list[tuple[int, int]]:
    """Consecutive pairs (j, j') of identical jobs (same S, g, m, N, t, A, memory and regions/caps), j first
    (P1.21)."""
    pairs, last = [], {}
    for d in data.jobs:
        jb = d.job
        sig = (jb.stages, jb.gpus_per_stage, jb.microbatches, jb.iterations, jb.stage_time_s, jb.activation_mb,
               jb.memory_gb, tuple(sorted(d.cap.items())))
        if sig in last:
            pairs.append((last[sig], d.j))
        last[sig] = d.j
    return pairs

def proportional_groups(data: PlacementData) -> list[list[int]]:
    """Groups (>= 2 jobs) of proportional jobs: equal in everything but the iteration count N_j (same S, g, m, t,
    A, memory, regions/caps and usable links), each sorted by (N_j, index).  Within a group every cost and run-time
    coefficient is N_j times the same per-iteration value and every resource use is the same, so placements can
    be exchanged between them (P1.42).  Identical jobs (P1.21, P1.43) are the special case of equal N_j."""
    groups: dict[tuple, list[int]] = {}
    for d in data.jobs:
        jb = d.job
        sig = (jb.stages, jb.gpus_per_stage, jb.microbatches, jb.stage_time_s, jb.activation_mb, jb.memory_gb,
               tuple(sorted(d.cap.items())), tuple(d.links))
        groups.setdefault(sig, []).append(d.j)
    return [sorted(g, key=lambda j: (data.jobs[j].job.iterations, j)) for g in groups.values() if len(g) > 1]


def count_cuts(data: PlacementData, started: int) -> list[tuple[list[int], int, int]]:
    """P1.41: given that ``started`` jobs start (level 1's optimum, fixed for levels 2 and 3), bounds on how many
    of the jobs with a GPU total G_j = S_j g_j >= T can be among them, for every threshold T: (jobs, lo, hi).
    Any ``started`` jobs hold together at least the k smallest totals >= T plus the started - k smallest < T,
    which must fit the free GPUs of all eligible regions (the capacity of ``count_upper_bound``).  Only
    informative triples are returned (lo > 0 or hi below the trivial maximum)."""
    J = data.jobs
    cap = sum(data.free_gpus[data.region_names[r]] for r in {r for d in J for r in d.regions})
    out = []
    for T in sorted({d.job.gpus for d in J}):
        small = sorted(d.job.gpus for d in J if d.job.gpus < T)
        big_jobs = [d.j for d in J if d.job.gpus >= T]
        big = sorted(J[j].job.gpus for j in big_jobs)
        ok = [k for k in range(min(len(big), started) + 1)
              if started - k <= len(small) and sum(big[:k]) + sum(small[:started - k]) <= cap]
        if not ok:
            continue
        lo, hi = min(ok), max(ok)
        if lo > 0 or hi < min(len(big), started):
            out.append((big_jobs, lo, hi))
    return out


def model_size(data: PlacementData) -> int:
    """Binary variables of the MILP: x, a, s, f (P1, section 8)."""
    return sum(1 + d.K * len(d.regions) + (len(d.classes) if len(d.classes) > 1 else 0)
               + (d.K - 1) * 2 * len(d.links) for d in data.jobs)


def count_upper_bound(data: PlacementData) -> int:
    """An upper bound of level 1 (jobs started): the most jobs whose GPU totals S_j g_j fit the free GPUs of
    their eligible regions together (smallest totals first; every started job holds S_j g_j GPUs)."""
    free = sum(data.free_gpus[data.region_names[r]] for r in {r for d in data.jobs for r in d.regions})
    count, used = 0, 0
    for need in sorted(d.job.gpus for d in data.jobs):
        if used + need > free:
            break
        used += need
        count += 1
    return count


def has_negative_prices(data: PlacementData) -> bool:
    """Some region's price at t0 is negative (then a hop flow's cycles would *earn* money, see
    placement_milp.add_no_cycles)."""
    return any(p < 0 for d in data.jobs for p in d.pi.values())


def cost_at_t0_usd(inst: Instance, plans: Sequence[JobPlan], t0: float, egress: bool | None = None) -> float:
    """The P1 cost of ``plans`` recomputed with the model's formulas: electricity at each region's price at
    t0 (constant over the run) plus egress if the instance's objective includes it.  Used to check the
    solver's objective against the evaluator's figures (equal when prices are constant)."""
    from ...evaluate import price_plan
    egress = inst.objective.egress if egress is None else egress
    tot = 0.0
    for p in plans:
        fig = price_plan(inst, p)
        job = inst.job(p.name)
        for b in p.blocks:
            kw = F.power_kw(inst, job, [(b.region, b.stages)])
            tot += kw * F.price_at(inst, b.region, t0) * fig.run_s / 3600.0
        if egress:
            tot += fig.egress_usd
    return tot
