"""What users read from a run (issue 45, item 4): per-job distributions and time series of one schedule, computed
by the evaluator from the schedule alone (no policy computes its own figures).

    rep = evaluate(inst, sched)                      # checks and prices (rules 0-4)
    w = workload_report(inst, sched, report=rep)     # (bace_opt.evaluate) the figures below, one JSON-able dict
    w = workload_report(inst, sched, window_jobs=(4000, 5000))   # Gavel / Blox's steady-state window

Figures (the jobs *of the window*, all jobs by default; ``done`` jobs where a time is needed):

* ``jct_s``, ``wait_s`` (queueing delay: start - arrival), ``slowdown``: mean, p50, p90, p99 and max.  Percentiles
  are numpy's linear interpolation between order statistics.  Slowdown = JCT / R_j with R_j the job's run time
  alone on the fastest GPU it may use, with no communication: N (m + S - 1) t_j / speed (a floor of every
  placement's run time, so slowdown >= 1 up to the latency terms).
* ``by_size``: the same (count, done, mean and p90 JCT, mean wait, mean slowdown) per size class of the job's
  GPUs (S x g): 1-8, 9-32, 33-128, > 128.
* ``cost``: electricity (active GPUs, cost reading a) and egress of the window's done jobs, and their total.
* ``jct_cdf``: the JCT at the quantiles 0, 0.01, ..., 1 (101 points; the figure's CDF).
* ``gpu_utilisation``: GPUs held by running jobs / GPUs of the fleet, averaged over bins of ``bin_s`` (default
  one hour, widened to whole hours so that there are at most ``MAX_BINS``) from t = 0 to the last finish, over
  *every* done job (the cluster's state does not belong to a window); ``mean`` is over [0, last finish).
* ``cost_per_day``: electricity and egress per day of instance time (day d = [86,400 d, 86,400 (d + 1)) s), every
  done job; electricity split exactly by the price integral over each day's part of the run, egress spread
  evenly over the run (billed per GB sent; a job sends at a constant rate).  The days sum to the totals.
* ``trace_states`` (instances built from a trace, ``meta.trace.job_states``): per recorded state (completed,
  cancelled, failed, running), the jobs, how many ran, their GPU-hours and share of all GPU-hours, electricity
  and egress, mean JCT: what the run spent on jobs the trace says were cancelled (they run their recorded
  duration, docs/decisions.md "Real workloads").
* ``window``: what was measured (all jobs, jobs by arrival rank [a, b), or jobs arriving in [t0, t1) s).
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .. import formulas as F
from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule

SIZE_CLASSES = ((1, 8, "1-8"), (9, 32, "9-32"), (33, 128, "33-128"), (129, None, ">128"))
PERCENTILES = (50, 90, 99)
MAX_BINS = 400
DAY_S = 86400.0
CDF_POINTS = 101


def _dist(xs: Sequence[float]) -> dict[str, float | None]:
    import numpy as np
    if not len(xs):
        return {"mean": None, **{f"p{p}": None for p in PERCENTILES}, "max": None}
    a = np.asarray(xs, dtype=float)
    out = {"mean": math.fsum(xs) / len(xs)}
    for p, v in zip(PERCENTILES, np.percentile(a, PERCENTILES)):
        out[f"p{p}"] = float(v)
    out["max"] = float(a.max())
    return out


def reference_run_s(inst: Instance, job) -> float:
    """R_j: the job's run time alone on the fastest GPU type it may use, no communication (slowdown's floor)."""
    speed = max((inst.speed[r] for r in inst.eligible_regions(job)), default=0.0) or 1.0
    return job.iterations * (job.microbatches + job.stages - 1) * job.stage_time_s / speed


def select_window(inst: Instance, jobs: tuple[int, int] | None = None,
                time_s: tuple[float, float] | None = None) -> tuple[list[str], dict[str, Any]]:
    """The names of the jobs measured and the ``window`` entry: all jobs; jobs ``[a, b)`` by arrival rank (0-based,
    ties in instance order); or the jobs arriving in ``[t0, t1)`` s."""
    if jobs is not None and time_s is not None:
        raise InputError("give a window by jobs or by time, not both")
    if jobs is None and time_s is None:
        return [j.name for j in inst.jobs], {"kind": "all", "jobs_in_window": len(inst.jobs)}
    if jobs is not None:
        a, b = jobs
        if not (isinstance(a, int) and isinstance(b, int) and 0 <= a < b):
            raise InputError(f"window by jobs: need integers 0 <= a < b, got {a!r}:{b!r}")
        order = sorted(range(len(inst.jobs)), key=lambda i: (inst.jobs[i].arrival_s, i))
        if a >= len(order):
            raise InputError(f"window by jobs {a}:{b}: the instance has {len(order)} jobs")
        names = [inst.jobs[i].name for i in order[a:b]]
        return names, {"kind": "jobs", "jobs": [a, min(b, len(order))], "jobs_in_window": len(names)}
    t0, t1 = time_s
    if not (math.isfinite(t0) and math.isfinite(t1) and 0 <= t0 < t1):
        raise InputError(f"window by time: need finite 0 <= t0 < t1, got {t0!r}:{t1!r}")
    names = [j.name for j in inst.jobs if t0 <= j.arrival_s < t1]
    return names, {"kind": "time", "time_s": [t0, t1], "jobs_in_window": len(names)}


def parse_window(text: str | None, kind: str) -> tuple | None:
    """``A:B`` as two ints (``kind="jobs"``) or two floats in seconds, with an optional h or d suffix (``"time"``)."""
    if text is None:
        return None
    a, sep, b = str(text).partition(":")
    if not sep:
        raise InputError(f"window {text!r}: expected A:B")
    try:
        if kind == "jobs":
            return int(a), int(b)
        return tuple(_seconds(v) for v in (a, b))
    except ValueError:
        raise InputError(f"window {text!r}: expected A:B ({'integers' if kind == 'jobs' else 'seconds, or 2d, 36h'})") \
            from None


def _seconds(text: str) -> float:
    """'3600', '36h', '1.5d', '90s' -> seconds."""
    v = text.strip().lower()
    unit = {"s": 1.0, "h": 3600.0, "d": DAY_S}.get(v[-1:])
    return float(v[:-1]) * unit if unit is not None else float(v)


def compute_workload(inst: Instance, schedule: Schedule, rep, window_jobs: tuple[int, int] | None = None,
                     window_s: tuple[float, float] | None = None, bin_s: float = 3600.0) -> dict[str, Any]:
    """The figures of the module doc for ``schedule`` on ``inst`` from the evaluator's ``Report`` ``rep`` of this
    pair (``bace_opt.evaluate.workload_report`` runs the evaluator first).  ``window_jobs=(a, b)`` or
    ``window_s=(t0, t1)``: the steady-state window (job figures over its jobs only; the time series always over
    the whole run)."""
    names, win = select_window(inst, window_jobs, window_s)
    figs = rep.figures
    statuses = rep.statuses
    done = [n for n in names if statuses.get(n) == "done" and n in figs]
    ref = {n: reference_run_s(inst, inst.job(n)) for n in names}
    jct = [figs[n].jct_s for n in done]
    out: dict[str, Any] = {"window": win, "jobs": len(names), "jobs_done": len(done),
                           "not_done": _count(statuses.get(n, "missing") for n in names if n not in figs),
                           "jct_s": _dist(jct), "wait_s": _dist([figs[n].wait_s for n in done]),
                           "slowdown": _dist([figs[n].jct_s / ref[n] for n in done])}
    out["by_size"] = _by_size(inst, names, done, figs, ref)
    el = math.fsum(figs[n].electricity_usd for n in done)
    eg = math.fsum(figs[n].egress_usd for n in done)
    out["cost"] = {"electricity_usd": el, "egress_usd": eg, "total_usd": el + eg}
    out["jct_cdf"] = _cdf(jct)
    alldone = {n: f for n, f in figs.items() if statuses.get(n) == "done"}
    plans = {e.name: e for e in schedule.jobs if e.name in alldone}
    out["gpu_utilisation"] = gpu_utilisation(inst, alldone, bin_s)
    out["cost_per_day"] = cost_per_day(inst, alldone, plans)
    out["trace_states"] = _trace_states(inst, names, figs, statuses)
    return out


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in items:
        out[s] = out.get(s, 0) + 1
    return dict(sorted(out.items()))


def _cdf(jct: Sequence[float]) -> dict[str, list[float]]:
    import numpy as np
    q = [k / (CDF_POINTS - 1) for k in range(CDF_POINTS)]
    if not jct:
        return {"q": q, "jct_s": []}
    return {"q": q, "jct_s": [float(v) for v in np.quantile(np.asarray(jct, dtype=float), q)]}


def size_class(gpus: int) -> str:
    for lo, hi, label in SIZE_CLASSES:
        if gpus >= lo and (hi is None or gpus <= hi):
            return label
    return SIZE_CLASSES[0][2]


def _by_size(inst, names, done, figs, ref) -> list[dict[str, Any]]:
    import numpy as np
    rows = []
    done_set = set(done)
    for _, _, label in SIZE_CLASSES:
        mine = [n for n in names if size_class(inst.job(n).gpus) == label]
        if not mine:
            continue
        d = [n for n in mine if n in done_set]
        jct = [figs[n].jct_s for n in d]
        rows.append({"class": label, "jobs": len(mine), "done": len(d),
                     "mean_jct_s": math.fsum(jct) / len(d) if d else None,
                     "p90_jct_s": float(np.percentile(jct, 90)) if d else None,
                     "mean_wait_s": math.fsum(figs[n].wait_s for n in d) / len(d) if d else None,
                     "mean_slowdown": math.fsum(figs[n].jct_s / ref[n] for n in d) / len(d) if d else None})
    return rows


def gpu_utilisation(inst: Instance, figs: Mapping[str, Any], bin_s: float = 3600.0) -> dict[str, Any]:
    """Mean GPUs held / fleet GPUs per bin over [0, last finish) (module doc)."""
    import numpy as np
    total = sum(r.gpus for r in inst.regions)
    end = max((f.finish_s for f in figs.values()), default=0.0)
    if not (bin_s > 0 and math.isfinite(bin_s)):
        raise InputError(f"bin_s must be a finite number > 0, got {bin_s!r}")
    if end <= 0 or total <= 0:
        return {"bin_s": bin_s, "gpus": total, "mean": None, "peak_bin": None, "series": []}
    if end / bin_s > MAX_BINS:
        bin_s = math.ceil(end / MAX_BINS / 3600.0) * 3600.0
    nb = max(1, math.ceil(end / bin_s))
    edges = np.arange(nb + 1, dtype=float) * bin_s
    g = np.array([inst.job(n).gpus for n in figs], dtype=float)
    s = np.array([f.start_s for f in figs.values()], dtype=float)
    e = np.array([f.finish_s for f in figs.values()], dtype=float)
    # busy GPU-seconds up to each edge: sum_j g_j clip(t - s_j, 0, e_j - s_j); one row of jobs at a time
    busy = np.zeros(nb + 1)
    for k in range(0, len(g), 512):
        gk, sk, ek = g[k:k + 512, None], s[k:k + 512, None], e[k:k + 512, None]
        busy += (gk * np.clip(edges[None, :] - sk, 0.0, ek - sk)).sum(axis=0)
    per = np.diff(busy) / (bin_s * total)
    series = [float(v) for v in per]
    return {"bin_s": bin_s, "gpus": total, "mean": math.fsum(g * (e - s)) / (total * end),
            "peak_bin": max(series), "series": series}


def cost_per_day(inst: Instance, figs: Mapping[str, Any], plans: Mapping[str, Any]) -> list[dict[str, float]]:
    """Electricity and egress per day of instance time (module doc); every day from 0 to the last finish."""
    end = max((f.finish_s for f in figs.values()), default=0.0)
    nd = max(1, math.ceil(end / DAY_S)) if figs else 0
    el = [[] for _ in range(nd)]
    eg = [[] for _ in range(nd)]
    for n, f in figs.items():
        job = inst.job(n)
        blocks = [(b.region, b.stages) for b in plans[n].blocks]
        run = f.finish_s - f.start_s
        d0 = int(f.start_s // DAY_S)
        d1 = min(nd - 1, int(f.finish_s // DAY_S)) if run > 0 else d0
        for d in range(d0, d1 + 1):
            a, b = max(f.start_s, d * DAY_S), min(f.finish_s, (d + 1) * DAY_S)
            if run > 0 and b <= a:
                continue
            share = (b - a) / run if run > 0 else 1.0
            el[d].append(F.electricity_usd(inst, job, blocks, a, b - a) if run > 0 else 0.0)
            eg[d].append(f.egress_usd * share)
    return [{"day": d, "electricity_usd": math.fsum(el[d]), "egress_usd": math.fsum(eg[d]),
             "total_usd": math.fsum(el[d]) + math.fsum(eg[d])} for d in range(nd)]


def _trace_states(inst: Instance, names, figs, statuses) -> dict[str, Any] | None:
    tr = (inst.meta or {}).get("trace")
    states = tr.get("job_states") if isinstance(tr, dict) else None
    if not isinstance(states, dict):
        return None
    of = {n: s for s, ns in states.items() for n in ns}
    all_gpu_h = math.fsum(inst.job(n).gpus * (f.finish_s - f.start_s) / 3600.0 for n, f in figs.items()
                          if statuses.get(n) == "done")
    out: dict[str, Any] = {}
    for n in names:
        st = of.get(n, "completed")
        d = out.setdefault(st, {"jobs": 0, "done": 0, "gpu_hours": [], "electricity_usd": [], "egress_usd": [],
                                "jct_s": []})
        d["jobs"] += 1
        f = figs.get(n)
        if f is None or statuses.get(n) != "done":
            continue
        d["done"] += 1
        d["gpu_hours"].append(inst.job(n).gpus * (f.finish_s - f.start_s) / 3600.0)
        d["electricity_usd"].append(f.electricity_usd)
        d["egress_usd"].append(f.egress_usd)
        d["jct_s"].append(f.jct_s)
    for d in out.values():
        gh = math.fsum(d["gpu_hours"])
        jct = d.pop("jct_s")
        d.update(gpu_hours=gh, share_of_gpu_hours=gh / all_gpu_h if all_gpu_h > 0 else None,
                 electricity_usd=math.fsum(d["electricity_usd"]), egress_usd=math.fsum(d["egress_usd"]),
                 mean_jct_s=math.fsum(jct) / len(jct) if jct else None)
    return dict(sorted(out.items()))


def format_workload(w: Mapping[str, Any]) -> list[str]:
    """The report as text lines (``simulate``'s summary): distributions, size classes, cost, utilisation, states."""
    from .._format import short
    win = w["window"]
    where = {"all": "all jobs", "jobs": f"jobs {win.get('jobs', [0, 0])[0]}:{win.get('jobs', [0, 0])[1]} by arrival",
             "time": "jobs arriving in [{:g}, {:g}) s".format(*win.get("time_s", [0, 0]))}[win["kind"]]
    lines = [f"per-job figures ({where}: {w['jobs']} jobs, {w['jobs_done']} done"
             + (", " + ", ".join(f"{k} {v}" for k, v in w["not_done"].items()) if w["not_done"] else "") + "):"]

    def dist(label, d, unit):
        if d["mean"] is None:
            return f"  {label}: -"
        return (f"  {label}: mean {short(d['mean'], unit)}, p50 {short(d['p50'], unit)}, p90 {short(d['p90'], unit)}, "
                f"p99 {short(d['p99'], unit)}, max {short(d['max'], unit)}")
    lines += [dist("JCT", w["jct_s"], "s"), dist("queueing delay", w["wait_s"], "s"),
              dist("slowdown (JCT / run alone on the fastest GPU)", w["slowdown"], "")]
    for r in w["by_size"]:
        lines.append(f"  {r['class']:>6} GPUs: {r['jobs']} jobs, {r['done']} done, mean JCT "
                     f"{short(r['mean_jct_s'], 's')}, p90 {short(r['p90_jct_s'], 's')}, mean wait "
                     f"{short(r['mean_wait_s'], 's')}, mean slowdown {short(r['mean_slowdown'])}")
    c = w["cost"]
    lines.append(f"  cost: electricity {short(c['electricity_usd'], 'USD')}, egress {short(c['egress_usd'], 'USD')}, "
                 f"total {short(c['total_usd'], 'USD')}")
    u = w["gpu_utilisation"]
    if u["mean"] is not None:
        lines.append(f"  GPU utilisation (all jobs, {u['gpus']} GPUs): mean {u['mean']:.3f} up to the last finish, "
                     f"peak {u['bin_s'] / 3600:g}-h bin {u['peak_bin']:.3f} ({len(u['series'])} bins)")
    days = w["cost_per_day"]
    if days:
        tot = [d["total_usd"] for d in days]
        lines.append(f"  cost per day (all jobs, {len(days)} days): min {short(min(tot), 'USD')}, "
                     f"max {short(max(tot), 'USD')}")
    for st, d in (w.get("trace_states") or {}).items():
        share = d["share_of_gpu_hours"]
        lines.append(f"  trace state {st}: {d['jobs']} jobs, {d['done']} ran, {d['gpu_hours']:.1f} GPU-h"
                     + (f" ({100 * share:.1f} % of all)" if share is not None else "")
                     + f", {short(d['electricity_usd'] + d['egress_usd'], 'USD')}")
    return lines
