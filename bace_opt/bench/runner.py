"""Resumable batch runner: one tidy row per run, appended to a CSV; local processes or a Dask cluster.

A run is a ``RunSpec`` (suite, family, size, seed, instance arguments, method, method arguments); its
``run_id`` is a hash of that spec, so a restarted batch with the same arguments skips every run whose row is
already in the results file and loses or duplicates none.  Only the parent process writes the file, one whole
line per write with flush + fsync; a line cut short by a kill mid-write is dropped (and the file rewritten
atomically without it) when the batch restarts.

Columns: see ``COLUMNS``.  Timing and memory columns (``build_s``, ``solve_s``, ``wall_s``, ``peak_mem_mb``) vary
between runs; ``DETERMINISTIC_COLUMNS`` are the ones two runs of the same spec must agree on (the tests compare
them between an interrupted and an uninterrupted batch, and between the local and the Dask runner).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

log = logging.getLogger(__name__)

COLUMNS = [
    "run_id", "suite", "instance", "family", "size", "seed", "method", "options", "status", "feasible",
    "objective", "bound", "gap", "jobs", "jobs_done", "jobs_blocked", "avg_jct_s", "total_electricity_usd",
    "total_egress_usd", "total_cost_usd", "p1_cost_usd", "total_run_s", "makespan_s", "nodes", "extra",
    "build_s", "solve_s", "wall_s", "peak_mem_mb", "versions", "git_commit", "error",
    # where the network binds (the evaluator's figures) and per-job figures for like-with-like comparisons
    "peak_link_utilisation", "mean_link_utilisation", "links_used", "tight_links", "links_over_90pct",
    "total_stall_s", "total_energy_kwh", "energy_weighted_price_usd_per_kwh", "idle_electricity_usd",
    "total_electricity_incl_idle_usd", "per_job",
    # P1's jobs not started at t0 (before: counted in jobs_blocked), jobs with a communication-bound hop
    "jobs_not_started", "jobs_comm_bound",
]
VOLATILE_COLUMNS = {"build_s", "solve_s", "wall_s", "peak_mem_mb", "versions", "git_commit"}
DETERMINISTIC_COLUMNS = [c for c in COLUMNS if c not in VOLATILE_COLUMNS]


@dataclass(frozen=True)
class RunSpec:
    suite: str
    family: str                      # instance family: paper | random | file
    size: str                        # a label of the size (e.g. "6r-8j")
    seed: int
    method: str                      # e.g. sim:bace-pipe, p1:highs, p1-heur:lcf, p2:cpsat
    instance_args: Mapping[str, Any] = field(default_factory=dict)
    method_args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        blob = json.dumps({"suite": self.suite, "family": self.family, "size": self.size, "seed": self.seed,
                           "method": self.method, "instance_args": dict(self.instance_args),
                           "method_args": dict(self.method_args)}, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["instance_args"] = dict(self.instance_args)
        d["method_args"] = dict(self.method_args)
        return d


# ---------------------------------------------------------------------- results file

def read_rows(path: Path) -> list[dict]:
    """Rows of a results CSV; a trailing line cut short by a kill is dropped (and the file repaired)."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",") if lines and lines[0].startswith("run_id,") else None
    good = [lines[0]] if header else []
    rows = []
    reader_fields = header or COLUMNS
    for line in lines[len(good):]:
        if not line.endswith("\n"):
            log.warning("dropping a results line cut short (interrupted write): %r", line[:60])
            continue
        try:
            (vals,) = list(csv.reader([line]))
        except (csv.Error, ValueError):
            log.warning("dropping an unreadable results line: %r", line[:60])
            continue
        if len(vals) != len(reader_fields):
            log.warning("dropping a results line with %d fields (expected %d)", len(vals), len(reader_fields))
            continue
        rows.append(dict(zip(reader_fields, vals)))
        good.append(line)
    if header is not None and header != COLUMNS:
        # written by a version with other columns: migrate (unknown columns dropped, new ones empty)
        log.warning("migrating %s to the current columns", path)
        rows = [_migrate_row(r, header) for r in rows]
        _atomic_write(path, ",".join(COLUMNS) + "\n" + "".join(_format_row(r) for r in rows))
    elif "".join(good) != text:
        _atomic_write(path, "".join(good) if good else "")
    return rows


def _migrate_row(row: dict, header: list[str]) -> dict:
    """A row of an older results file in the current columns (absent ones empty).  Before ``jobs_not_started``
    existed, P1 rows (methods ``p1:``, ``p1-nobw:``, ``p1-heur:``) counted the jobs not started at t0 as ``jobs_blocked``."""
    out = {c: row.get(c, "") for c in COLUMNS}
    if "jobs_not_started" not in header and row.get("jobs_blocked", "") != "":
        if str(row.get("method", "")).startswith(("p1:", "p1-nobw:", "p1-heur:")):
            out["jobs_not_started"], out["jobs_blocked"] = row["jobs_blocked"], "0"
        else:   # no other method had jobs not started
            out["jobs_not_started"] = "0"
    return out


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)   # mkstemp creates 0600; results are ordinary shared files
    os.replace(tmp, path)


def _format_row(row: Mapping[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["" if row.get(c) is None else _cell(row.get(c)) for c in COLUMNS])
    return buf.getvalue()


def _cell(v):
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return v


class ResultsFile:
    """Append-only CSV of rows; one whole line per write, flushed and fsynced."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rows = read_rows(self.path)
        self.done = {r["run_id"] for r in self.rows}
        if not self.path.exists() or self.path.stat().st_size == 0:
            _atomic_write(self.path, ",".join(COLUMNS) + "\n")

    def append(self, row: Mapping[str, Any]) -> None:
        line = _format_row(row)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self.done.add(row["run_id"])


# ---------------------------------------------------------------------- execution

def run_specs(specs: Iterable[RunSpec], out, *, workers: int = 1, dask_address: str | None = None,
              progress: bool | None = None, execute: Callable[[RunSpec], dict] | None = None) -> dict:
    """Run every spec whose row is not yet in ``out``; returns counts {total, skipped, ran, failed}.

    ``workers`` > 1 runs local processes (one fresh process per run, so peak memory is per run);
    ``dask_address`` sends the runs to an existing Dask scheduler instead (``"local"`` starts a LocalCluster).
    """
    from .tasks import execute as default_execute
    execute = execute or default_execute
    res = ResultsFile(out)
    specs = list(specs)
    ids = [s.run_id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError("two runs of the batch have the same spec")
    todo = [s for s in specs if s.run_id not in res.done]
    counts = {"total": len(specs), "skipped": len(specs) - len(todo), "ran": 0, "failed": 0}
    if not todo:
        return counts
    bar = _progress(len(todo), progress)

    def record(row):
        res.append(row)
        counts["ran"] += 1
        if row.get("status") == "error":
            counts["failed"] += 1
        bar.update(1)

    try:
        if dask_address:
            _run_dask(todo, execute, record, dask_address, workers)
        elif workers > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed
            ctx = mp.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, max_tasks_per_child=1) as ex:
                futs = [ex.submit(execute, s) for s in todo]
                for f in as_completed(futs):
                    record(f.result())
        else:
            for s in todo:
                record(execute(s))
    finally:
        bar.close()
    return counts


def _run_dask(todo, execute, record, address, workers):
    from dask.distributed import Client, LocalCluster, as_completed
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        futs = [client.submit(execute, s, pure=False, key=f"bace-opt-{s.run_id}") for s in todo]
        for f in as_completed(futs):
            record(f.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit="run", file=sys.stderr)
