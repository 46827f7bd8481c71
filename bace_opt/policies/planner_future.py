"""Sampled futures for ``plan-jct`` (option ``futures`` = K scenarios; online stochastic optimization, Van
Hentenryck and Bent's *expectation* method): should the jobs the plan starts now start now, or should one of them
wait for the short jobs likely to arrive while it would run?  (docs/research/planner-poisson: the measurements.)

**What it reads.**  Only what has arrived: the arrival rate from the arrivals seen so far (``(n - 1) / (now -
first arrival)``), the job mix from the arrived jobs' (GPUs, run time) pairs, drawn with replacement (bootstrap).
Nothing about future jobs, not their number.

**The stream's length is unknown** (``sample_lindy``): after each arrival it ends with probability h = 1 / (1 + m),
m = ``horizon`` x (jobs seen), so about m more jobs are expected; the quiet time since the last arrival is evidence
that it has ended (Bayes on the exponential gap: P(going on) = (1 - h) e^(-rate gap) / ((1 - h) e^(-rate gap) +
h)).  The scenarios are stratified: "it has ended" (no arrival) with weight 1 - P(going on), and K scenarios that
go on, each with weight P(going on) / K.  (``HORIZON_MODE = "fixed"``, the first round's model: arrivals over a
fixed ``horizon`` expected inter-arrival times, K equal weights.)

**One decision** (``choose_holds``).  The candidates: start the plan's now-set S0, or hold one of the
``MAX_CANDIDATES`` largest jobs of S0 (GPUs x run time): the now-set the same order gives when that job cannot
start now (others may backfill its GPUs).  In every scenario (the same ones for every candidate: common random
numbers) a candidate's now-set starts at ``now``, every other waiting job is ready at the next event (the first
known release, or the scenario's first arrival: a held job is reconsidered then, not before), the imagined jobs
at their arrival, and the pooled planner's search (``work`` job placements) orders the rest.  The value is the
weighted sum of JCTs of the real and imagined jobs; a hold is chosen when it is lower than starting S0 by more
than ``MARGIN`` (relative) and, where ``AGREE`` > 0 (default 0), the hold is the better of the two in scenarios
that weigh at least ``AGREE`` (0.5: a majority, the consensus method beside the expectation; measured worse on
unseen seeds, research round 3).  Nothing is held when nothing runs (no known event would bring the job back), with
fewer than ``MIN_SEEN`` arrivals, or when the going-on scenarios weigh less than ``P_MIN`` (then the plan has
already decided the no-arrival case: batch arrivals are never held).

Pure Python, deterministic: the scenarios are drawn from ``random.Random`` seeded by the policy's seed, the
number of arrived jobs and ``now``; the budget is counted in placements (``deadline``: a wall-clock safety cap).
"""
from __future__ import annotations

import math
import random
import time
from typing import Sequence

from .planner_core import NOW_EPS_S, PJob, Planner, Profile, starting_orders

#: fewer arrived jobs than this: no estimate, no hold
MIN_SEEN = 4
#: the largest jobs of the now-set that are candidates to hold
MAX_CANDIDATES = 3
#: a hold must lower the mean value by more than this fraction of starting the now-set
MARGIN = 0.002
#: a held job is back at the scenario's first arrival too (else: at the first known release only)
NEXT_ARRIVAL = True
#: "fixed": ``horizon`` expected inter-arrival times of arrivals; "lindy": a stream that goes on for ``horizon`` x
#: (jobs seen) more jobs on average, ended early by a long quiet time (``sample_lindy``)
HORIZON_MODE = "lindy"
#: no hold when the next known event (a running job's end) is more than this many expected inter-arrival times away
MAX_HOLD = math.inf
#: "lindy": the stream-has-ended scenario is one with its exact weight, the K others go on
STRATIFY = True
#: no hold when the imagined arrivals weigh less than this (the base plan already decided the no-arrival case)
P_MIN = 1e-3
#: at most this many imagined jobs per scenario
MAX_IMAGINED = 200
#: a hold must also win (value below starting the now-set's) in at least this share of the scenarios' weight (0:
#: the weighted mean alone decides).  0.5, a majority, was better on the tuning seeds and worse on unseen ones
#: (docs/research/planner-poisson, round 3): off
AGREE = 0.0


def estimate(arrived: Sequence[tuple[float, int, float]], now: float) -> tuple[float, list] | None:
    """(arrival rate per s, the job mix [(GPUs, run time)]) from the arrived jobs' (arrival, GPUs, run time), or
    None with fewer than ``MIN_SEEN`` arrivals or no time elapsed."""
    seen = sorted(a for a in arrived if a[0] <= now + NOW_EPS_S)
    if len(seen) < MIN_SEEN:
        return None
    span = now - seen[0][0]
    if span <= 0:
        return None
    return (len(seen) - 1) / span, [(w, d) for _, w, d in seen]


def sample(rng: random.Random, rate: float, mix: Sequence[tuple[int, float]], now: float, horizon_s: float,
           tag: str) -> list[PJob]:
    """Imagined arrivals over (now, now + horizon_s]: Poisson at ``rate``, sizes drawn from ``mix``."""
    out, t = [], now
    while True:
        t += rng.expovariate(rate)
        if t > now + horizon_s:
            return out
        w, d = mix[rng.randrange(len(mix))]
        out.append(PJob(f"~{tag}.{len(out)}", w, d, t, t))


def p_going(rate: float, now: float, last: float, mean_more: float) -> float:
    """The probability that a stream of unknown length goes on (``sample_lindy``)."""
    h = 1.0 / (1.0 + mean_more)
    go = (1 - h) * math.exp(-rate * max(0.0, now - last))
    return go / (go + h)


def sample_lindy(rng: random.Random, rate: float, mix: Sequence[tuple[int, float]], now: float, last: float,
                 mean_more: float, tag: str, going: bool | None = None) -> list[PJob]:
    """Imagined arrivals of a stream of unknown length: after each arrival it ends with probability h = 1 / (1 +
    ``mean_more``) (so ``mean_more`` more jobs on average); the quiet time since the ``last`` arrival is evidence
    that it has ended (Bayes: P(going on) = (1 - h) e^(-rate gap) / ((1 - h) e^(-rate gap) + h)); when it goes on
    (``going``: given, else drawn), the next arrival is after ``now`` (memoryless) and each next one ends it with
    probability h."""
    h = 1.0 / (1.0 + mean_more)
    if going is None:
        going = rng.random() < p_going(rate, now, last, mean_more)
    if not going:
        return []
    out, t = [], now
    while True:
        t += rng.expovariate(rate)
        w, d = mix[rng.randrange(len(mix))]
        out.append(PJob(f"~{tag}.{len(out)}", w, d, t, t))
        if rng.random() < h or len(out) >= MAX_IMAGINED:
            return out


def scenarios_of(rng: random.Random, k: int, rate: float, mix: list, now: float, arrived: Sequence,
                 horizon: float) -> list[tuple[float, list]]:
    """The weighted scenarios of one decision: (weight, imagined arrivals); the weights sum to 1."""
    if HORIZON_MODE == "fixed":
        return [(1.0 / k, sample(rng, rate, mix, now, horizon / rate, str(i))) for i in range(k)]
    last = max(a[0] for a in arrived)
    m = horizon * len(mix)
    if not STRATIFY:
        return [(1.0 / k, sample_lindy(rng, rate, mix, now, last, m, str(i))) for i in range(k)]
    p = p_going(rate, now, last, m)        # the stream has ended: one scenario with its exact weight
    return [(1.0 - p, [])] + [(p / k, sample_lindy(rng, rate, mix, now, last, m, str(i), True)) for i in range(k)]


def now_set(jobs: dict, base: Profile, order: Sequence[str], held: frozenset, now: float) -> tuple:
    """The jobs ``order`` starts now on ``base`` when the jobs of ``held`` cannot start now."""
    pj = [j if j.name not in held else PJob(j.name, j.width, j.dur, j.arrival, math.inf) for j in jobs.values()]
    _, starts, _ = Planner(pj, base).schedule(tuple(order))
    return tuple(n for n in order if starts[n] <= now + NOW_EPS_S)


def value_of(jobs: dict, base: Profile, start_now: Sequence[str], future: list[PJob], next_s: float, now: float,
             work: int, seed: int) -> tuple[float, int]:
    """(the sum of JCTs, the placements its search scheduled) when ``start_now`` starts at ``now``, the other
    waiting jobs are ready at ``next_s`` and ``future`` arrives: the pooled planner's best order of the rest within
    ``work`` placements."""
    prof = base.copy()
    val = 0.0
    for n in start_now:
        j = jobs[n]
        prof.take(now, j.dur, j.width)
        val += now + j.dur - j.arrival
    rest = [PJob(j.name, j.width, j.dur, j.arrival, max(j.ready, next_s)) for n, j in jobs.items()
            if n not in set(start_now)] + list(future)
    if not rest:
        return val, 0
    planner = Planner(rest, prof)
    _, v = planner.search(starting_orders(rest), work, seed)
    return val + v, planner.work


def choose_holds(jobs: Sequence[PJob], base: Profile, order: Sequence[str], now: float,
                 arrived: Sequence[tuple[float, int, float]], scenarios: int, horizon: float, work: int,
                 seed: int, deadline: float | None = None, wake_gaps: float = 0.0) -> tuple[frozenset, dict]:
    """(the jobs to hold now, a record of the decision) (module doc).  ``jobs``: the waiting jobs, ``base``: the
    pool's profile, ``order``: the plan's best order; past ``deadline`` (a wall-clock safety cap) nothing is
    held and ``info["capped"]`` says so.  ``wake_gaps`` > 0: a held job is reconsidered at the latest
    ``wake_gaps`` expected inter-arrival times from now (the simulator's wake-up, ``info["wake_s"]`` when a
    job is held), and every scenario values the hold so."""
    info = {"candidates": 0, "work": 0, "capped": 0, "wake_s": None, "agree": None}
    est = estimate(arrived, now)
    by = {j.name: j for j in jobs}
    s0 = now_set(by, base, order, frozenset(), now)
    if est is None or not s0 or scenarios <= 0:
        return frozenset(), info
    rate, mix = est
    big = sorted(s0, key=lambda n: (-by[n].width * by[n].dur, order.index(n)))[:MAX_CANDIDATES]
    cands = {s0: frozenset()}
    for n in big:
        held = frozenset([n])
        s = now_set(by, base, order, held, now)
        cands.setdefault(s, held)
    if len(cands) < 2:
        return frozenset(), info
    rng = random.Random(f"{seed}:{len(arrived)}:{now!r}")
    futures = scenarios_of(rng, scenarios, rate, mix, now, arrived, horizon)
    later = [t for t in base.times if t > now + NOW_EPS_S]
    if not later:
        return frozenset(), info        # nothing runs: no known event would bring a held job back
    release = later[0]
    wake = now + wake_gaps / rate if wake_gaps > 0 else math.inf
    if (release - now) * rate > MAX_HOLD:
        return frozenset(), info        # a hold would last past the next known event: a bet on arrivals alone
    if sum(wt for wt, fut in futures if fut) < P_MIN:
        return frozenset(), info
    means, per = {}, {}
    for s, held in cands.items():
        tot = 0.0
        per[s] = vals = []
        for k, (wt, fut) in enumerate(futures):
            if wt <= 0:
                continue
            if deadline is not None and time.perf_counter() > deadline:
                info["capped"] = 1
                return frozenset(), info
            nxt = min(release, fut[0].arrival) if (NEXT_ARRIVAL and fut) else release
            nxt = min(nxt, wake)
            planner_seed = seed * 1_000_003 + k
            v, w = value_of(by, base, s, fut, nxt, now, work, planner_seed)
            tot += wt * v
            vals.append((wt, v))
            info["work"] += w
        means[s] = tot
    info["candidates"] = len(cands)
    best = min(means, key=lambda s: (means[s], s != s0))
    wins = sum(wt for (wt, v), (_, v0) in zip(per[best], per[s0]) if v < v0 - 1e-9)
    info["agree"] = wins if best != s0 else None
    if best != s0 and means[best] < means[s0] * (1 - MARGIN) and wins >= AGREE - 1e-12:
        info["wake_s"] = wake if wake < release else None
        return cands[best], info
    return frozenset(), info
