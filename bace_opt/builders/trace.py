"""The ``trace`` family: an instance from a GPU-cluster job trace on a region set the toolkit builds.

    inst = trace_instance()                                  # the composed real week on fleet20 (shipped)
    inst = trace_instance("my_trace.csv", days=2, load=0.5)  # your own trace (docs/formats.md, "Trace CSV")

Sources (docs/decisions.md, "Real workloads"):
- none given: the composed week from the shipped statistics (``bace_opt/data/tables/trace_*.csv``): arrival
  shape of Alibaba 2023 (aggregate counts per hour of week), Philly runtimes (quantiles), AcmeTrace job sizes
  and states (cluster summary); ``data`` (a raw data folder) reads the same statistics from ``<data>/traces``;
- ``trace`` a file: the documented CSV (``trace_format="csv"``) or Alibaba v2023's pod list
  (``trace_format="alibaba"``), its jobs submitted in the window, sampled at ``load`` (builders.trace_arrivals).

Each trace job becomes a pipeline-parallel job (builders.trace_jobs).  The fleet is ``realistic_instance``'s
(default ``fleet20``, GPUs drawn per region from the seed) with no jobs of its own.  Prices: the hourly series of
``price_hours`` hours from ``price_day`` 00:00 UTC (the shipped week: 168 h from 2023-07-01), aligned so that
instance time 0 falls on ``align`` (weekday and hour, UTC; default "Mon 00:00"), then repeated week after week
(``price_repeat="cycle"``, default) to cover twice the later of the window's end and the last job's end had it
started on arrival, in whole weeks (two at least);
``"hold"``: the aligned series once, then its last value holds (a warning names the jobs that may outlive it).
"""
from __future__ import annotations

import logging
import math
import statistics
from pathlib import Path

from ..data import traces as tr
from ..data.raw import parse_day
from ..errors import InputError
from ..instance import Instance
from . import trace_arrivals as ta
from .profiles import MODELS, get_gpu
from .realistic import realistic_instance
from .trace_jobs import ADJUST, by_size, map_job

log = logging.getLogger(__name__)
SOURCE = "bace_opt.builders.trace"
FORMATS = ("csv", "alibaba")
REPEAT = ("cycle", "hold")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULTS = dict(regions="fleet20", seed=1, start_s=0.0, days=7.0, load=1.0, arrivals="trace",
                min_duration_s=60.0, max_duration_s=7 * 86400.0, min_gpus=1, max_gpus=256, cancelled="keep",
                adjust="gpus", size_cluster="Seren", align="Mon 00:00", price_day="2023-07-01", price_hours=168,
                price_repeat="cycle", gpu="A6000", jobs_per_week=ta.JOBS_PER_WEEK)


def parse_align(align: str) -> tuple[int, int]:
    """'Mon 00:00' -> (weekday 0..6, hour 0..23)."""
    parts = str(align).strip().lower().split()
    try:
        wd = WEEKDAYS.index(parts[0][:3])
        hh, _, mm = parts[1].partition(":")
        h = int(hh)
        if len(parts) != 2 or not 0 <= h <= 23 or (mm and int(mm) != 0):
            raise ValueError
    except (ValueError, IndexError):
        raise InputError(f"align: expected a weekday and a whole hour, e.g. 'Mon 00:00', got {align!r}") from None
    return wd, h


def _check(o: dict, trace) -> None:
    p = []
    if isinstance(o["seed"], bool) or not isinstance(o["seed"], int) or o["seed"] < 0:
        p.append(f"seed must be an integer >= 0, got {o['seed']!r}")
    for k in ("days", "load"):
        if not (isinstance(o[k], (int, float)) and math.isfinite(o[k]) and o[k] > 0):
            p.append(f"{k} must be a finite number > 0, got {o[k]!r}")
    if not (isinstance(o["start_s"], (int, float)) and math.isfinite(o["start_s"]) and o["start_s"] >= 0):
        p.append(f"start_s must be >= 0, got {o['start_s']!r}")
    if not 0 <= o["min_duration_s"] <= o["max_duration_s"]:
        p.append(f"need 0 <= min_duration_s <= max_duration_s, got {o['min_duration_s']!r}, {o['max_duration_s']!r}")
    if not 1 <= o["min_gpus"] <= o["max_gpus"]:
        p.append(f"need 1 <= min_gpus <= max_gpus, got {o['min_gpus']!r}, {o['max_gpus']!r}")
    for k, allowed in (("arrivals", ta.ARRIVALS), ("cancelled", ta.CANCELLED), ("adjust", ADJUST),
                       ("price_repeat", REPEAT), ("trace_format", FORMATS)):
        if o[k] not in allowed:
            p.append(f"{k} must be one of {', '.join(allowed)}, got {o[k]!r}")
    if isinstance(o["price_hours"], bool) or not isinstance(o["price_hours"], int) or o["price_hours"] < 168 \
            or o["price_hours"] % 168:
        p.append(f"price_hours must be a whole number of weeks (168, 336, ...), got {o['price_hours']!r}")
    if trace is None and o["trace_format"] != "csv":
        p.append("trace_format applies to a trace file only")
    if p:
        raise InputError(p, "trace_instance")


def trace_instance(trace=None, *, data=None, trace_format: str = "csv", name: str | None = None,
                   gpus=None, **options) -> Instance:
    """An instance from a trace (module docstring).  ``trace``: a trace file (None: the composed week);
    ``data``: a raw data folder (docs/data.md) for the statistics and the fleet (None: the shipped tables);
    ``gpus``: GPUs per region (``realistic_instance``'s rule).  ``options`` (defaults in ``DEFAULTS``):
    regions, seed, start_s, days, load, arrivals ("trace" or "poisson"), min_duration_s, max_duration_s,
    min_gpus, max_gpus, cancelled ("keep" or "drop"), adjust ("gpus" or "model"), size_cluster, align,
    price_day, price_hours, price_repeat ("cycle" or "hold"), gpu (the reference GPU), jobs_per_week."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise InputError(f"trace_instance: unknown option(s) {', '.join(unknown)} (known: {', '.join(DEFAULTS)})")
    o = {**DEFAULTS, **options, "trace_format": trace_format}
    _check(o, trace)
    wd, hr = parse_align(o["align"])
    gspec = get_gpu(o["gpu"])
    fleet = realistic_instance(data, o["regions"], seed=o["seed"], jobs=0, gpus=gpus, gpu=gspec,
                               price_day=o["price_day"], hours=o["price_hours"]).to_dict()
    window = o["days"] * 86400.0
    flt = ta.Filters(o["min_duration_s"], o["max_duration_s"], o["min_gpus"], o["max_gpus"], o["cancelled"], {})
    meta: dict = {}
    if trace is None:
        stats = tr.trace_stats(data)
        draws, rule = ta.composed(stats, flt, cluster=o["size_cluster"], window_s=window, load=o["load"],
                                  arrivals=o["arrivals"], seed=o["seed"], jobs_per_week=o["jobs_per_week"])
        meta["trace"] = {"kind": "composed", "statistics": STATISTICS, "rule": rule,
                         "sources": [tr.ALIBABA_SRC, tr.PHILLY_SRC, tr.ACME_SRC]}
    else:
        path = Path(trace)
        if not path.is_file():
            raise InputError(f"trace file not found: {path}")
        if trace_format == "csv":
            rows, ignored = tr.read_trace_csv(path, MODELS)
            if ignored:
                log.warning("%s: column(s) %s ignored (the trace format reads submit_time_s, gpus, duration_s, "
                            "job_id, model, state; docs/formats.md)", path, ", ".join(map(repr, ignored)))
        else:
            rows, ignored = tr.read_alibaba_pods(path), []
        draws = ta.from_rows(rows, flt, start_s=o["start_s"], window_s=window, load=o["load"],
                             arrivals=o["arrivals"], seed=o["seed"])
        meta["trace"] = {"kind": trace_format, "file": path.name, "sha256": tr.file_sha256(path), "rows": len(rows),
                         "ignored_columns": ignored}
    jobs, runs, mapping = _map_all(draws, fleet, gspec, o["adjust"], flt, trace is not None)
    if not jobs:
        raise InputError("no job is left after the filters and the fleet check "
                         f"(dropped: {flt.summary()})")
    last_run = max(j["arrival_s"] + r for j, r in zip(jobs, runs))
    price_meta = _prices(fleet, o, wd, hr, window, last_run)
    total = sum(r["gpus"] for r in fleet["regions"])
    offered = sum(j["stages"] * j["gpus_per_stage"] * r for j, r in zip(jobs, runs)) / 3600.0
    states = mapping.pop("states")
    job_states = mapping.pop("job_states")
    meta["trace"].update({
        "options": {k: (list(o[k]) if k == "regions" and not isinstance(o[k], str) else o[k]) for k in DEFAULTS}
                   | ({"trace_format": trace_format} if trace is not None else {}),
        "window_s": window, "jobs": len(jobs), "filters": flt.dropped,
        "states": states, "job_states": job_states, "state_rule": STATE_RULE, "mapping": mapping,
        "offered_load": round(offered / (total * window / 3600.0), 4),
        "offered_gpu_hours": round(offered, 1)})
    fleet["meta"] = {**fleet["meta"], "source": (f"{SOURCE}.trace_instance; fleet: {fleet['meta']['source']}"),
                     "family": "trace", "seed": o["seed"], **meta, "prices": price_meta}
    fleet["meta"].pop("job_profiles", None)
    fleet["jobs"] = jobs
    fleet["name"] = name or _name(trace, len(fleet["regions"]), len(jobs), o)
    return Instance.from_dict(fleet, source=fleet["name"])


STATISTICS = (f"{tr.T_ARRIVALS}, {tr.T_RUNTIME}, {tr.T_ACME} (bace_opt/data/tables, or the same numbers derived "
              f"from the data folder's {tr.TRACES}/)")
STATE_RULE = ("completed (or absent): runs its duration; failed: runs its recorded duration (the GPU time it held "
              "before failing); cancelled: runs its recorded duration, or dropped with cancelled='drop'; running: "
              "runs the duration recorded when the trace ended (a lower bound); pending: dropped (never ran)")


def _map_all(draws, fleet, gspec, adjust, flt, warn) -> tuple[list[dict], list[float], dict]:
    ladder = by_size(MODELS, gspec)
    regions = fleet["regions"]
    total, largest = sum(r["gpus"] for r in regions), max(r["gpus"] for r in regions)
    jobs, runs, err, adjusted, hows, names, states = [], [], [], [], {}, set(), {}
    job_states: dict[str, list[str]] = {}      # the jobs of each recorded state but completed (or absent)
    for d in draws:
        nm = d.origin
        while nm in names:
            nm += "'"
        m = map_job(nm, d.arrival_s, d.gpus, d.duration_s, d.model, ladder, gspec, adjust)
        S, g = m.job["stages"], m.job["gpus_per_stage"]
        if S * g > total or g > largest or sum(r["gpus"] // g for r in regions) < S:
            flt.drop("exceeds_fleet", f"mapped job does not fit the fleet ({total} GPUs)", d.gpus, d.duration_s)
            continue
        names.add(nm)
        states[d.state or "absent"] = states.get(d.state or "absent", 0) + 1
        if d.state not in (None, "completed"):
            job_states.setdefault(d.state, []).append(nm)
        hows[m.how] = hows.get(m.how, 0) + 1
        if m.how in ("raised", "swapped") and d.model is not None:
            adjusted.append({"job": nm, "model": d.model, "gpus": d.gpus, "now_model": m.model,
                             "now_gpus": m.gpus, "rule": m.how})
        jobs.append(m.job)
        runs.append(m.run_s)
        if d.duration_s > 0:
            err.append(abs(m.run_s - d.duration_s) / d.duration_s)
    if adjusted and warn:
        log.warning("%d job(s) whose (model, gpus) cannot fit %s memory adjusted (%s; listed in "
                    "meta.trace.mapping.adjusted): %s", len(adjusted), gspec.name,
                    "GPU count raised to the model's minimum" if adjust == "gpus" else "largest model that fits",
                    ", ".join(f"{a['job']} {a['model']} x{a['gpus']} -> {a['now_model']} x{a['now_gpus']}"
                              for a in adjusted[:5]) + (f", ... {len(adjusted) - 5} more" if len(adjusted) > 5 else ""))
    mapping = {"rule": "see bace_opt.builders.trace_jobs (docs/decisions.md 'Real workloads')",
               "model_min_gpus": dict(ladder), "how": hows, "adjusted": adjusted,
               "run_vs_duration_median_rel_err": round(statistics.median(err), 4) if err else 0.0,
               "states": states, "job_states": dict(sorted(job_states.items()))}
    return jobs, runs, mapping


def _prices(fleet: dict, o: dict, wd: int, hr: int, window: float, last_run_s: float) -> dict:
    """Align and repeat every region's hourly series (module docstring); the rule for ``meta``."""
    wd0 = parse_day(o["price_day"]).weekday()
    off = ((wd - wd0) % 7) * 24 + hr
    need_h = math.ceil(2 * max(window, last_run_s) / 3600.0)
    P = o["price_hours"]
    if o["price_repeat"] == "cycle":
        n = max(2, math.ceil(need_h / 168)) * 168
    else:
        n = P - off
        if last_run_s > n * 3600.0:
            log.warning("the hourly prices (%d h from %s %s UTC, price_repeat='hold') end %.0f h before the last "
                        "job could finish on its own (%.0f h); the last hour's price holds after it", n,
                        WEEKDAYS[wd].title(), f"{hr:02d}:00", last_run_s / 3600.0 - n, last_run_s / 3600.0)
    for r in fleet["regions"]:
        base = r["price_series"]["usd_per_kwh"]
        vals = [base[(off + h) % P] for h in range(n)]
        r["price_series"] = {"start_s": 0.0, "step_s": 3600.0, "usd_per_kwh": vals}
        r["price_usd_per_kwh"] = round(statistics.fmean(vals), 5)
    return {"rule": (f"{P} h of prices from {o['price_day']} 00:00 UTC; instance t = 0 is {WEEKDAYS[wd].title()} "
                     f"{hr:02d}:00 UTC (hour {off} of the series); "
                     + (f"repeated with period {P} h for {n} h" if o["price_repeat"] == "cycle"
                        else f"{n} h, then the last value holds")),
            "align": o["align"], "offset_h": off, "hours": n, "last_run_end_s": round(last_run_s, 1)}


def _name(trace, nregions: int, njobs: int, o: dict) -> str:
    src = "week" if trace is None else Path(trace).stem
    nm = f"trace-{src}-{nregions}r-{njobs}j-seed{o['seed']}"
    if o["load"] != 1.0:
        nm += f"-load{o['load']:g}"
    if o["arrivals"] == "poisson":
        nm += "-poisson"
    return nm
