"""The planning machinery of ``plan-jct`` (``policies.planner``): a pooled list scheduler over the GPUs free now
and released later, and a seeded local search over job orders with a budget counted in schedules.

The pooled model (the one ``exact.p2.search`` hands its CP-SAT: on the paper instances a job splits across
regions at 1-GPU granularity and a multi-region run is seconds slower than a one-region run) sees one pool of
GPUs: ``free_now`` idle GPUs at ``now`` and, for every running job, its GPUs back at its known end.  A waiting job
j holds W_j GPUs for D_j seconds (its run time).  ``schedule(order)`` places the jobs one by one in ``order``,
each at the earliest time >= its ready time at which W_j GPUs stay free for D_j seconds given the jobs placed
before it (conservative backfilling: a later job starts first only in a gap that delays no earlier one).  The
value of an order is sum_j (start_j + D_j - arrival_j) + mu_n sum_j cost_j(start_j): the waiting jobs' JCTs (their
mean up to the factor n), plus, with ``mu`` > 0, their estimated cost at their planned start.

``search`` evaluates the starting orders and then seeded insert and swap moves of the best order (first
improvement), at most ``max_evals`` schedules (a count, not a clock: the result does not depend on the
machine's load; ``deadline`` is a wall-clock safety cap only).  A move re-schedules only the jobs from the
first position it changes: the profile before every position of the incumbent is kept.

Pure Python, no solver: it is the policy's own machinery (``bace_opt.exact`` is a higher layer).
"""
from __future__ import annotations

import bisect
import math
import random
import time
from dataclasses import dataclass
from typing import Callable, Sequence

#: a start within this of ``now`` (s) counts as starting now
NOW_EPS_S = 1e-6
#: the value of a job the pool can never hold (so that any order that holds it wins)
NEVER_S = 1e12
#: the iterated local search: moves without improvement before a kick (at least STALL_MIN, else STALL_PER_JOB
#: per job), and the random inserts of a kick
STALL_MIN = 60
STALL_PER_JOB = 4
KICK = 3
#: the search stops after this many kicks in a row without a better order
MAX_IDLE_KICKS = 8


@dataclass(frozen=True)
class PJob:
    """A waiting job as the pooled model sees it: GPUs held, run time, arrival, earliest start."""

    name: str
    width: int
    dur: float
    arrival: float
    ready: float
    cost: float = 0.0          # estimated cost (USD), weighted by the value's ``mu_n``


class Profile:
    """Free GPUs of the pool as a step function: ``free[i]`` on [``times[i]``, ``times[i+1]``) (the last step
    lasts for ever)."""

    __slots__ = ("times", "free")

    def __init__(self, times: list, free: list):
        self.times, self.free = times, free

    @classmethod
    def build(cls, now: float, free_now: int, releases: Sequence[tuple[float, int]], cap: int) -> "Profile":
        """``free_now`` GPUs at ``now``, each ``(t, w)`` of ``releases`` gives back ``w`` at ``t`` (capped at
        ``cap``, the pool's GPUs)."""
        times, free = [now], [free_now]
        level = free_now
        for t, w in sorted(r for r in releases if r[0] > now + NOW_EPS_S):
            level = min(cap, level + w)
            if t == times[-1]:
                free[-1] = level
            else:
                times.append(t)
                free.append(level)
        return cls(times, free)

    def copy(self) -> "Profile":
        return Profile(list(self.times), list(self.free))

    def split(self, t: float) -> int:
        """The index of the step starting at ``t`` (inserted if needed)."""
        times = self.times
        i = bisect.bisect_right(times, t) - 1
        if times[i] == t:
            return i
        times.insert(i + 1, t)
        self.free.insert(i + 1, self.free[i])
        return i + 1

    def earliest(self, t0: float, width: int, dur: float) -> float | None:
        """The earliest start >= ``t0`` (>= times[0]) with ``width`` GPUs free for ``dur`` s, or None."""
        times, free = self.times, self.free
        n = len(times)
        i = max(0, bisect.bisect_right(times, t0) - 1)
        s = max(t0, times[i])
        while i < n:
            if free[i] < width:
                i += 1
                if i < n:
                    s = times[i]
                continue
            end = s + dur
            k = i + 1
            while k < n and times[k] < end and free[k] >= width:
                k += 1
            if k >= n or times[k] >= end:
                return s
            i = k + 1                      # step k is too full: no start before its end fits
            if i < n:
                s = times[i]
        return None

    def take(self, s: float, dur: float, width: int) -> None:
        i = self.split(s)
        k = self.split(s + dur)
        free = self.free
        for m in range(i, k):
            free[m] -= width


class Planner:
    """The pooled list scheduler and the local search of one decision (module doc)."""

    def __init__(self, jobs: Sequence[PJob], base: Profile, mu_n: float = 0.0,
                 cost_at: Callable[[str, float], float] | None = None):
        """``cost_at(name, start)``: a job's estimated cost when it starts at ``start`` (default: its ``cost``)."""
        self.jobs = {j.name: j for j in jobs}
        self.base = base
        self.mu_n = mu_n
        self.cost_at = cost_at
        self.evals = 0
        self.work = 0           # job placements scheduled: the search's budget

    def schedule(self, order: Sequence[str], pos: int = 0, state=None, keep: bool = False):
        """(value, starts by name, profiles before each position if ``keep``) of ``order`` from position
        ``pos`` on, given ``state`` = (profile, value, starts) before ``pos`` (None: the base profile)."""
        self.evals += 1
        self.work += len(order) - pos
        if state is None:
            prof, val, starts = self.base.copy(), 0.0, {}
        else:
            prof, val, starts = state[0].copy(), state[1], dict(state[2])
        kept = [] if keep else None
        for name in order[pos:]:
            if keep:
                kept.append((prof.copy(), val, dict(starts)))
            j = self.jobs[name]
            s = prof.earliest(j.ready, j.width, j.dur)
            if s is None:
                starts[name] = math.inf
                val += NEVER_S
                continue
            prof.take(s, j.dur, j.width)
            starts[name] = s
            val += s + j.dur - j.arrival
            if self.mu_n:
                val += self.mu_n * (j.cost if self.cost_at is None else self.cost_at(name, s))
        return val, starts, kept

    def search(self, orders: Sequence[Sequence[str]], max_work: int, seed: int = 0,
               deadline: float | None = None) -> tuple[tuple, float]:
        """The best order found (and its value): the best starting order, then an iterated local search --
        first-improvement insert and swap moves drawn with ``seed``; after ``stall`` moves without improvement,
        a kick (``KICK`` random inserts) of the best order and a new descent -- until ``max_work`` job
        placements have been scheduled (module doc)."""
        best, best_v = None, math.inf
        seen = set()
        for o in orders:
            o = tuple(o)
            if o in seen:
                continue
            seen.add(o)
            v = self.schedule(o)[0]
            if v < best_v - 1e-9:
                best, best_v = o, v
        n = len(best)
        if n < 2:
            return best, best_v
        rng = random.Random(seed)
        stall = max(STALL_MIN, STALL_PER_JOB * n)
        cur, cur_v = best, best_v
        kept = self.schedule(cur, keep=True)[2]
        since = kicks = 0
        while self.work < max_work and (deadline is None or time.perf_counter() < deadline):
            if since >= stall:
                if kicks >= MAX_IDLE_KICKS:
                    break                       # converged: kicks that found nothing better
                kicks += 1
                cur = best
                for _ in range(KICK):
                    cur = move(cur, *rng.sample(range(n), 2), False)
                cur_v, _, kept = self.schedule(cur, keep=True)
                since = 0
            a, b = rng.sample(range(n), 2)
            cand = move(cur, a, b, rng.random() < 0.5)
            lo = min(a, b)
            v = self.schedule(cand, lo, kept[lo])[0]
            if v < cur_v - 1e-9:
                cur, cur_v, since = cand, v, 0
                kept = kept[:lo] + self.schedule(cur, lo, kept[lo], keep=True)[2]
                if v < best_v - 1e-9:
                    best, best_v, kicks = cur, v, 0
            else:
                since += 1
        return best, best_v


def move(order: tuple, a: int, b: int, swap: bool) -> tuple:
    """``order`` with the jobs at ``a`` and ``b`` swapped, or the job at ``a`` moved to position ``b``."""
    o = list(order)
    if swap:
        o[a], o[b] = o[b], o[a]
    else:
        o.insert(b, o.pop(a))
    return tuple(o)


def starting_orders(jobs: Sequence[PJob], previous: Sequence[str] = (),
                    index: Callable[[str], int] | None = None) -> list[tuple]:
    """The starting orders: the previous decision's order (the jobs still waiting, then the new ones by run
    time), shortest run first, least area (W D) first, arrival order, fewest GPUs first.  Ties by ``index``."""
    idx = index or (lambda n: 0)
    key_spt = lambda j: (j.dur, j.width, idx(j.name), j.name)
    spt = tuple(j.name for j in sorted(jobs, key=key_spt))
    area = tuple(j.name for j in sorted(jobs, key=lambda j: (j.dur * j.width, idx(j.name), j.name)))
    fifo = tuple(j.name for j in sorted(jobs, key=lambda j: (j.arrival, idx(j.name), j.name)))
    narrow = tuple(j.name for j in sorted(jobs, key=lambda j: (j.width, j.dur, idx(j.name), j.name)))
    names = {j.name for j in jobs}
    prev = tuple(n for n in previous if n in names)
    if prev:
        prev += tuple(n for n in spt if n not in set(prev))
        return [prev, spt, area, fifo, narrow]
    return [spt, area, fifo, narrow]
