"""Which trace jobs arrive when (builders.trace): the state rule, the filters, the window, the load, and the
composed week drawn from the shipped statistics.  Every draw comes from a named, seeded stream (job k's
draws depend only on the seed and k).

A job here is a ``Draw``: arrival (s from the window's start), GPUs, duration (s), model or None, state or None,
and where it came from (a file line, or ``drawn``).
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace

from ..data.traces import TraceRow, TraceStats
from ..errors import InputError
from ._random import Stream

STREAM = "bace-opt/trace"
CANCELLED = ("keep", "drop")
ARRIVALS = ("trace", "poisson")
#: the composed week's job count at load 1 (per 7 days of window; docs/decisions.md "Real workloads")
JOBS_PER_WEEK = 300
JITTER_S = 1800.0


@dataclass(frozen=True)
class Draw:
    arrival_s: float
    gpus: int
    duration_s: float
    model: str | None
    state: str | None
    origin: str


@dataclass
class Filters:
    """The filter bounds and, per filter, what it dropped (jobs and GPU-hours)."""
    min_duration_s: float
    max_duration_s: float
    min_gpus: int
    max_gpus: int
    cancelled: str
    dropped: dict

    def drop(self, key: str, rule: str, gpus: int, duration_s: float) -> None:
        d = self.dropped.setdefault(key, {"rule": rule, "jobs": 0, "gpu_hours": 0.0})
        d["jobs"] += 1
        d["gpu_hours"] = round(d["gpu_hours"] + gpus * duration_s / 3600.0, 3)

    def summary(self) -> str:
        return ", ".join(f"{k} {v['jobs']}" for k, v in self.dropped.items()) or "none"

    def verdict(self, gpus: int, duration_s: float, state: str | None) -> tuple[str, str] | None:
        """(filter key, rule) that drops this job, or None when it is kept."""
        if state == "pending":
            return "state_pending", "pending: never ran, no duration"
        if state == "cancelled" and self.cancelled == "drop":
            return "state_cancelled", "cancelled jobs dropped (--cancelled drop)"
        if gpus < 1:
            return "no_gpu", "0 GPUs (a CPU job)"
        if duration_s < self.min_duration_s:
            return "min_duration", f"duration < {self.min_duration_s:g} s"
        if duration_s > self.max_duration_s:
            return "max_duration", f"duration > {self.max_duration_s:g} s"
        if gpus < self.min_gpus:
            return "min_gpus", f"gpus < {self.min_gpus}"
        if gpus > self.max_gpus:
            return "max_gpus", f"gpus > {self.max_gpus}"
        return None


def from_rows(rows: list[TraceRow], filters: Filters, *, start_s: float, window_s: float, load: float,
              arrivals: str, seed: int) -> list[Draw]:
    """The trace's jobs submitted in [start_s, start_s + window_s), after the filters, sampled at ``load``.

    ``arrivals="trace"`` (Pollux): the window's jobs at their submit times; load < 1 keeps a seeded sample of
    round(load n) of them; load > 1 adds round((load - 1) n) copies drawn with replacement, each moved by a
    uniform jitter in [-30, +30] min (kept inside the window).  ``"poisson"`` (Gavel): Poisson arrivals at rate
    load n / window over the window, each job's (GPUs, duration, model, state) drawn from the window's jobs."""
    pool = []
    for r in rows:
        if not start_s <= r.submit_s < start_s + window_s:
            filters.drop("window", f"submitted outside [{start_s:g}, {start_s + window_s:g}) s", r.gpus,
                         r.duration_s)
            continue
        v = filters.verdict(r.gpus, r.duration_s, r.state)
        if v:
            filters.drop(*v, r.gpus, r.duration_s)
            continue
        pool.append(Draw(round(r.submit_s - start_s, 3), r.gpus, r.duration_s, r.model, r.state,
                         r.job_id if r.job_id is not None else f"line{r.line}"))
    if not pool:
        raise InputError(f"no job of the trace is left in the window [{start_s:g}, {start_s + window_s:g}) s after "
                         f"the filters (dropped: {filters.summary()})")
    target = max(1, round(load * len(pool)))
    if arrivals == "poisson":
        return _poisson(pool, target / window_s, window_s, seed)
    if target <= len(pool):
        keep = sorted(Stream(STREAM, seed, "sample").permutation(range(len(pool)))[:target])
        return [pool[i] for i in keep]
    out = list(pool)
    for c in range(target - len(pool)):
        s = Stream(STREAM, seed, "copy", c)
        src = s.choice(pool)
        t = min(max(0.0, src.arrival_s + s.uniform(-JITTER_S, JITTER_S)), math.nextafter(window_s, 0))
        out.append(replace(src, arrival_s=round(t, 3), origin=f"{src.origin}~{c + 1}"))
    return sorted(out, key=lambda d: (d.arrival_s, d.origin))


def _poisson(pool: list[Draw], rate: float, window_s: float, seed: int) -> list[Draw]:
    out, t, k = [], 0.0, 0
    while True:
        s = Stream(STREAM, seed, "poisson", k)
        t += s.exponential(1.0 / rate)
        if t >= window_s:
            return out
        src = s.choice(pool)
        out.append(replace(src, arrival_s=round(t, 3), origin=f"{src.origin}~p{k + 1}"))
        k += 1


# ---------------------------------------------------------------------- the composed week

def size_ratio(mean: float, kmax: int) -> float:
    """r with mean(2^k, P(k) ∝ r^k, k = 0..kmax) = ``mean`` (bisection; the mean grows with r)."""
    def m(r):
        w = [r ** k for k in range(kmax + 1)]
        return sum(wk * 2 ** k for k, wk in enumerate(w)) / sum(w)
    if not 1.0 <= mean < 2 ** kmax:
        raise InputError(f"mean job size {mean:g} outside [1, {2 ** kmax})")
    lo, hi = 1e-9, 2.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if m(mid) < mean else (lo, mid)
    return round((lo + hi) / 2, 6)


def composed(stats: TraceStats, filters: Filters, *, cluster: str, window_s: float, load: float, arrivals: str,
             seed: int, jobs_per_week: int = JOBS_PER_WEEK) -> tuple[list[Draw], dict]:
    """The composed week (docs/decisions.md): ``round(load * jobs_per_week * window / 7 d)`` jobs; arrival hours
    drawn from the Alibaba 2023 submissions per hour of week (instance hour h takes bin h mod 168), uniform
    within the hour ("trace"), or Poisson at the same mean rate ("poisson"); durations by inverse transform
    from Philly's runtime quantiles restricted to [min_duration, max_duration]; GPUs 2^k with P(k) ∝ r^k
    (k = 0..log2 max_gpu of the AcmeTrace cluster), r fitted to the cluster's mean GPUs per job, restricted to
    [min_gpus, max_gpus]; state drawn from the cluster's completed / cancelled / failed rates.  Returns the jobs
    and the rule's figures for ``meta``."""
    if cluster not in stats.clusters:
        raise InputError(f"size cluster {cluster!r} not in the AcmeTrace summary (known: "
                         f"{', '.join(stats.clusters)})")
    c = stats.clusters[cluster]
    kmax = int(round(math.log2(c["max_gpu"])))
    r = size_ratio(c["avg_gpu_num"], kmax)
    ks = [k for k in range(kmax + 1) if filters.min_gpus <= 2 ** k <= filters.max_gpus]
    if not ks:
        raise InputError(f"no power-of-two size in [{filters.min_gpus}, {filters.max_gpus}] GPUs")
    wk = [r ** k for k in ks]
    cum_k = _cumulative(wk)
    q = stats.runtime_quantiles
    f_lo, f_hi = _cdf(q, filters.min_duration_s), _cdf(q, filters.max_duration_s)
    if not f_hi > f_lo:
        raise InputError(f"no runtime of the quantile table in [{filters.min_duration_s:g}, "
                         f"{filters.max_duration_s:g}] s")
    rates = [c.get(f"{s}_rate_gpu") for s in ("complete", "cancel", "fail")]
    states = ("completed", "cancelled", "failed")
    cum_s = _cumulative(rates) if None not in rates and sum(rates) > 0 else None
    shape = stats.arrivals
    hours = math.ceil(window_s / 3600.0)
    cum_h = _cumulative([shape[h % 168] for h in range(hours)])
    n = max(1, round(load * jobs_per_week * window_s / (7 * 86400.0)))
    out, t = [], 0.0
    for k in range(n):
        s = Stream(STREAM, seed, "job", k)
        if arrivals == "poisson":
            t += s.exponential(window_s / n)
            if t >= window_s:
                break
            at = t
        else:
            h = bisect.bisect_right(cum_h, s.random())
            at = min((min(h, hours - 1) + s.random()) * 3600.0, math.nextafter(window_s, 0))
        dur = _inverse(q, f_lo + (f_hi - f_lo) * s.random())
        gpus = 2 ** ks[min(bisect.bisect_right(cum_k, s.random()), len(ks) - 1)]
        st = states[min(bisect.bisect_right(cum_s, s.random()), 2)] if cum_s else None
        if st == "cancelled" and filters.cancelled == "drop":
            filters.drop("state_cancelled", "cancelled jobs dropped (--cancelled drop)", gpus, dur)
            continue
        out.append(Draw(round(at, 3), gpus, round(dur, 3), None, st, f"drawn{k + 1}"))
    out.sort(key=lambda d: (d.arrival_s, d.origin))
    rule = {"cluster": cluster, "size_ratio_r": r, "sizes": [2 ** k for k in ks],
            "runtime_mass_excluded": {"below_min_duration": round(f_lo, 4), "above_max_duration": round(1 - f_hi, 4)},
            "size_mass_excluded": round(1 - sum(wk) / sum(r ** k for k in range(kmax + 1)), 4),
            "jobs_at_load": n}
    return out, rule


def _cumulative(w: list[float]) -> list[float]:
    tot, acc, out = sum(w), 0.0, []
    for x in w:
        acc += x
        out.append(acc / tot)
    return out


def _cdf(q: tuple[float, ...], x: float) -> float:
    """F(x) of the piecewise-linear quantile function q (q[i] at i / (len - 1))."""
    n = len(q) - 1
    if x <= q[0]:
        return 0.0
    if x >= q[-1]:
        return 1.0
    i = bisect.bisect_right(q, x) - 1
    lo, hi = q[i], q[i + 1]
    frac = 0.0 if hi == lo else (x - lo) / (hi - lo)
    return (i + frac) / n


def _inverse(q: tuple[float, ...], u: float) -> float:
    n = len(q) - 1
    x = u * n
    i = min(int(x), n - 1)
    return q[i] + (q[i + 1] - q[i]) * (x - i)
