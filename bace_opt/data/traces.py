"""Job traces: the user's CSV (docs/formats.md, "Trace CSV"), the raw third-party trace formats, and the
compact trace tables shipped as package data.

- ``read_trace_csv``: the documented CSV (``submit_time_s``, ``gpus``, ``duration_s`` required; ``job_id``,
  ``model``, ``state`` optional; an empty optional cell is absent; other columns are returned so that the
  caller warns once).  Every fault is an ``InputError`` naming file:line:column (the header is line 1).
- ``read_alibaba_pods``: Alibaba cluster-trace-gpu-v2023 ``openb_pod_list_*.csv`` as trace rows.
- ``read_philly_runtimes``: ``philly_runtime.csv`` (one column ``runtime``, seconds).
- ``read_acme_summary``: AcmeTrace ``cluster_summary.csv`` (one row per cluster, statistics).
- ``derive_tables(data_dir)`` / ``shipped``: the three compact tables (``trace_*.csv`` in tables/) from the
  raw folder ``<data>/traces``, and their readers.  Alibaba 2023 carries no licence file, so only aggregate
  counts of it are shipped (arrivals per hour of week); Philly (runtime quantiles) and AcmeTrace (the cluster
  summary) are CC-BY-4.0.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from . import tables
from .csvfile import CsvFile

REQUIRED = ("submit_time_s", "gpus", "duration_s")
OPTIONAL = ("job_id", "model", "state")
STATES = ("completed", "cancelled", "failed", "running", "pending")
TRACES = "traces"
ALIBABA_PODS = "alibaba_v2023_openb_pod_list_default.csv"
PHILLY = "philly_runtime_from_alibaba_analysis.csv"
ACME = "acme_cluster_summary.csv"
ALIBABA_PHASES = {"succeeded": "completed", "failed": "failed", "running": "running", "pending": "pending"}

T_ARRIVALS = "trace_arrivals_hour_of_week.csv"
T_RUNTIME = "trace_philly_runtime_quantiles.csv"
T_ACME = "trace_acme_clusters.csv"
QUANTILES = 1000
ACME_COLUMNS = ("id", "gpu_job_num", "avg_run_time_gpu", "med_run_time_gpu", "avg_gpu_num", "med_gpu_num",
                "max_run_time_gpu", "max_gpu", "complete_rate_gpu", "cancel_rate_gpu", "fail_rate_gpu",
                "complete_rate_gpu_time", "cancel_rate_gpu_time", "fail_rate_gpu_time")
ALIBABA_SRC = ("Alibaba cluster-trace-gpu-v2023 (github.com/alibaba/clusterdata @7a6c496), no licence file in "
               "its folder: aggregate counts only; cite Weng et al., USENIX ATC'23")
PHILLY_SRC = ("Microsoft Philly runtimes via alibaba/clusterdata cluster-trace-gpu-v2020/analysis/philly_runtime.csv, "
              "CC-BY-4.0; cite Jeon et al., USENIX ATC'19")
ACME_SRC = "AcmeTrace (github.com/InternLM/AcmeTrace @6d6ac9c) data/cluster_summary.csv, CC-BY-4.0"


@dataclass(frozen=True)
class TraceRow:
    """One job of a trace: where it came from (``line`` of the file), submit time, GPUs, duration (s);
    ``job_id``, ``model`` and ``state`` are None when absent."""
    line: int
    submit_s: float
    gpus: int
    duration_s: float
    job_id: str | None = None
    model: str | None = None
    state: str | None = None


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_trace_csv(path, known_models) -> tuple[list[TraceRow], list[str]]:
    """The rows of a trace CSV in the documented format, and the names of the columns it ignores.

    ``known_models``: the model names a ``model`` cell may hold (an unknown one is refused, listing them)."""
    raw = Path(path).read_bytes() if Path(path).is_file() else b""
    text = None
    if raw.startswith(b"\xef\xbb\xbf"):          # a byte-order mark (spreadsheet exports): not part of the header
        try:
            text = raw[3:].decode("utf-8")
        except UnicodeDecodeError:
            text = None                          # CsvFile reports where
    f = CsvFile(path, REQUIRED, text=text)
    known = sorted(known_models)
    ignored = [c for c in f.header if c not in REQUIRED + OPTIONAL]
    rows, seen = [], {}
    for line, row in f.rows():
        for c in REQUIRED:
            if not row[f.col[c]].strip():
                raise InputError(f"{f.where(line, c)}: empty (a required column)")
        submit = f.number(line, row, "submit_time_s", ge=0)
        gv = f.text(line, row, "gpus")
        try:
            gf = float(gv)
            if not (math.isfinite(gf) and gf == int(gf)):
                raise ValueError
            gpus = int(gf)                       # "8" or "8.0" (a spreadsheet's export), never "2.5"
        except ValueError:
            raise InputError(f"{f.where(line, 'gpus')}: not an integer: {gv!r}") from None
        if gpus < 0:
            raise InputError(f"{f.where(line, 'gpus')}: must be >= 0, got {gv}")
        duration = f.number(line, row, "duration_s", ge=0)
        opt = {c: (f.text(line, row, c, nonempty=False) or None) if c in f.col else None for c in OPTIONAL}
        if opt["model"] is not None and opt["model"] not in known_models:
            raise InputError(f"{f.where(line, 'model')}: unknown model {opt['model']!r} (known: {', '.join(known)})")
        if opt["state"] is not None:
            st = opt["state"].lower()
            if st not in STATES:
                raise InputError(f"{f.where(line, 'state')}: unknown state {opt['state']!r} (one of "
                                 f"{', '.join(STATES)}, any case)")
            opt["state"] = st
        if opt["job_id"] is not None:
            if opt["job_id"] in seen:
                raise InputError(f"{f.where(line, 'job_id')}: job_id {opt['job_id']!r} already on line "
                                 f"{seen[opt['job_id']]}")
            seen[opt["job_id"]] = line
        rows.append(TraceRow(line, submit, gpus, duration, **opt))
    return rows, ignored


def read_alibaba_pods(path) -> list[TraceRow]:
    """Alibaba v2023 pods as trace rows: submit = ``creation_time``, GPUs = ``num_gpu``, duration =
    ``deletion_time`` - ``scheduled_time`` (0 for a pod never scheduled), state from ``pod_phase``
    (Succeeded completed, Failed failed, Running running: still up at the trace's end, Pending pending)."""
    f = CsvFile(path, ("name", "num_gpu", "pod_phase", "creation_time", "deletion_time", "scheduled_time"))
    out = []
    for line, row in f.rows():
        created = f.number(line, row, "creation_time", ge=0)
        deleted = f.number(line, row, "deletion_time", ge=0)
        sched = f.number(line, row, "scheduled_time", ge=0, empty_ok=True)
        phase = f.text(line, row, "pod_phase").lower()
        if phase not in ALIBABA_PHASES:
            raise InputError(f"{f.where(line, 'pod_phase')}: unknown phase {phase!r}")
        dur = 0.0 if sched is None else deleted - sched
        if dur < 0:
            raise InputError(f"{f.where(line, 'deletion_time')}: before scheduled_time ({deleted:g} < {sched:g})")
        out.append(TraceRow(line, created, f.integer(line, row, "num_gpu", ge=0), dur,
                            job_id=f.text(line, row, "name"), state=ALIBABA_PHASES[phase]))
    return out


def read_philly_runtimes(path) -> list[float]:
    f = CsvFile(path, ("runtime",))
    return [f.number(line, row, "runtime", ge=0) for line, row in f.rows()]


def read_acme_summary(path, columns=ACME_COLUMNS) -> dict[str, dict[str, float]]:
    """cluster id -> {column: value} of the AcmeTrace cluster summary (the GPU-job columns)."""
    f = CsvFile(path, columns)
    out = {}
    for line, row in f.rows():
        out[f.text(line, row, "id")] = {c: f.number(line, row, c, ge=0, empty_ok=True) for c in columns[1:]}
    return out


# ---------------------------------------------------------------------- derived statistics

def arrivals_hour_of_week(rows: list[TraceRow]) -> list[int]:
    """Submissions per hour of week (168 bins; hour 0 = the trace's time 0) of the GPU jobs (gpus >= 1)
    submitted after time 0 (a submit time of 0 marks a job already there when the trace started)."""
    counts = [0] * 168
    for r in rows:
        if r.gpus >= 1 and r.submit_s > 0:
            counts[int(r.submit_s // 3600) % 168] += 1
    return counts


def quantiles(values: list[float], n: int = QUANTILES) -> list[float]:
    """The n + 1 quantiles at 0, 1/n, ..., 1 (linear interpolation between order statistics)."""
    v = sorted(values)
    if not v:
        raise InputError("no values to take quantiles of")
    out = []
    for i in range(n + 1):
        x = i * (len(v) - 1) / n
        lo = int(math.floor(x))
        hi = min(lo + 1, len(v) - 1)
        out.append(v[lo] + (v[hi] - v[lo]) * (x - lo))
    return out


def _head(source: str, files: str) -> str:
    return (f"# Derived by python -m bace_opt.data.traces from {files}.\n"
            f"# Source and licence: {source}. Full attribution: SOURCES.md beside this file.\n")


def derive_tables(data_dir) -> dict[str, str]:
    """table name -> text of the three trace tables, from ``<data_dir>/traces``."""
    d = Path(data_dir) / TRACES
    if not d.is_dir():
        raise InputError(f"trace folder not found: {d} (the layout of docs/data.md)")
    counts = arrivals_hour_of_week(read_alibaba_pods(d / ALIBABA_PODS))
    arr = _head(ALIBABA_SRC, f"traces/{ALIBABA_PODS} (GPU pods, creation_time > 0)") + "hour_of_week,submissions\n"
    arr += "".join(f"{h},{c}\n" for h, c in enumerate(counts))
    rt = read_philly_runtimes(d / PHILLY)
    q = quantiles(rt)
    run = _head(PHILLY_SRC, f"traces/{PHILLY} ({len(rt)} runtimes)") + "quantile,runtime_s\n"
    run += "".join(f"{i / QUANTILES!r},{x!r}\n" for i, x in enumerate(q))
    acme = read_acme_summary(d / ACME)
    ac = _head(ACME_SRC, f"traces/{ACME} (GPU-job columns)") + ",".join(ACME_COLUMNS) + "\n"
    ac += "".join(",".join([k, *("" if v[c] is None else repr(v[c]) for c in ACME_COLUMNS[1:])]) + "\n"
                  for k, v in acme.items())
    return {T_ARRIVALS: arr, T_RUNTIME: run, T_ACME: ac}


# ---------------------------------------------------------------------- readers: shipped or raw

@dataclass(frozen=True)
class TraceStats:
    """What the composed week is drawn from: arrivals per hour of week, runtime quantiles, cluster stats."""
    arrivals: tuple[int, ...]
    runtime_quantiles: tuple[float, ...]
    clusters: dict
    label: str


def _shipped(name: str, required) -> CsvFile:
    try:
        return CsvFile(tables.path(name), required, label=str(tables.path(name)))
    except InputError as e:
        raise InputError(f"{e} ({tables.DAMAGED})") from None


def trace_stats(data_dir=None) -> TraceStats:
    """The statistics from the raw folder ``data_dir`` (its ``traces/``), or, when None, the shipped tables
    (the same numbers: the tables are what ``derive_tables`` writes)."""
    if data_dir is not None:
        texts = derive_tables(data_dir)
        return _parse(texts, lambda n, req: CsvFile(Path(data_dir) / TRACES / n, req, text=texts[n],
                                                   label=f"{Path(data_dir) / TRACES} ({n})"),
                      f"{Path(data_dir).name}/{TRACES}")
    try:
        return _parse(None, _shipped, "the shipped tables")
    except InputError as e:
        if tables.DAMAGED in str(e):
            raise
        raise InputError(f"{e} ({tables.DAMAGED})") from None


def _parse(texts, open_fn, label) -> TraceStats:
    f = open_fn(T_ARRIVALS, ("hour_of_week", "submissions"))
    arr = [0] * 168
    for line, row in f.rows():
        h = f.integer(line, row, "hour_of_week", ge=0)
        if h >= 168:
            raise InputError(f"{f.where(line, 'hour_of_week')}: must be < 168, got {h}")
        arr[h] = f.integer(line, row, "submissions", ge=0)
    if not sum(arr):
        raise InputError(f"{f.label}: no submissions")
    f = open_fn(T_RUNTIME, ("quantile", "runtime_s"))
    q = [f.number(line, row, "runtime_s", ge=0) for line, row in f.rows()]
    if len(q) < 2 or any(b < a for a, b in zip(q, q[1:])):
        raise InputError(f"{f.label}: runtime quantiles must be at least 2 and non-decreasing")
    f = open_fn(T_ACME, ACME_COLUMNS)
    clusters = {f.text(line, row, "id"): {c: f.number(line, row, c, ge=0, empty_ok=True) for c in ACME_COLUMNS[1:]}
                for line, row in f.rows()}
    return TraceStats(tuple(arr), tuple(q), clusters, label)


def main(argv=None) -> int:
    """``python -m bace_opt.data.traces --data DIR [--check]``: (re)write or check the trace tables."""
    import argparse
    import sys

    from ..files import atomic_write
    ap = argparse.ArgumentParser(prog="python -m bace_opt.data.traces")
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else tables.TABLES_DIR
    try:
        texts = derive_tables(a.data)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    bad = []
    for n, t in texts.items():
        if a.check:
            if not (out / n).is_file() or (out / n).read_bytes() != t.encode():
                bad.append(n)
                print(f"{out / n}: differs from the table derived from {a.data}", file=sys.stderr)
        else:
            atomic_write(out / n, t)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
