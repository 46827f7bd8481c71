"""Resumable batch runner: one tidy row per run, in a CSV; local processes or a Dask cluster.

A run is a ``RunSpec`` (suite, family, size, seed, instance arguments, method, method arguments); its
``run_id`` is a hash of that spec, so a restarted batch with the same arguments skips every run whose row is
already in the results file and loses or duplicates none.  A run that failed (``FAILED_STATUSES``: status
``error``, the reason in ``error``, or ``infeasible-schedule``, a schedule that broke the rules) is retried by
the next batch; its new row replaces the failed one in the file itself (the file is rewritten atomically, in
place of the failed row), so the file holds each run_id once.  Ctrl-C or SIGTERM stops a batch
within seconds, keeping every finished row and killing every worker process (``procs.WorkerPool``,
``cluster.dask_client``).  A Dask scheduler lost mid-batch stops it with one message (``ClusterLost``, exit 2):
the finished rows are kept, the runs it had not finished get no row, and the same command resumes.  Only the
parent process writes the file: a new run's row is appended, one whole line per write with flush + fsync; a
line cut short by a kill mid-write is dropped (and the file rewritten atomically without it) when the batch
restarts.  One batch at a time writes a results file: it holds an
``fcntl`` lock on ``<name>.lock`` from start to end, and a second batch on the same file waits for it (with a
message), then skips every run the first one finished, so each run's row is in the file exactly once.
A results file holds one suite: a batch of another suite is refused before it runs (``check_suite``).
Damaged lines and headers are set aside in ``<name>.damaged`` with a warning (``read_rows``), never a crash;
duplicate rows of a run (files of older versions) are repaired to the run's best row, with a warning.

Columns: see ``spec.COLUMNS``.  ``spec.DETERMINISTIC_COLUMNS`` are the ones two runs of the same spec must agree
on (the tests compare them between an interrupted and an uninterrupted batch, and between the local and the
Dask runner).
"""
from __future__ import annotations

import csv
import io
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import BaceOptError, InputError
from ..files import atomic_write, issue_summary
from .spec import COLUMNS, FAILED, FAILED_STATUSES, RunSpec

log = logging.getLogger(__name__)

_HEADER = ",".join(COLUMNS) + "\n"


def is_failed(row: Mapping[str, Any]) -> bool:
    """Whether a results row is a failed run's (``FAILED_STATUSES``)."""
    return row.get("status") in FAILED_STATUSES


class ClusterLost(BaceOptError):
    """The Dask scheduler (or the connection to it) was lost mid-batch: the runs it had not finished have no
    row, and a rerun of the same command runs them."""


def check_suite(path, rows: Iterable[Mapping[str, Any]], suites: Iterable[str], known: Iterable[str] | None = None
                ) -> None:
    """Refuse (``InputError`` naming the file and the suite in it) a results file that holds rows of a suite
    other than ``suites``: two suites never share a results file (before, ``bench --suite regimes`` on a gap
    file appended its rows, then its report crashed).  Rows without a suite are not counted; ``known``: count
    only the rows of these suites (a report reads a file of a label it does not know as it is asked to)."""
    suites = set(suites)
    known = None if known is None else set(known)
    other: dict[str, int] = {}
    for r in rows:
        s = r.get("suite") or ""
        if s and s not in suites and (known is None or s in known):
            other[s] = other.get(s, 0) + 1
    if other and suites:
        held = ", ".join(f"{s!r} ({n} rows)" for s, n in sorted(other.items()))
        mine = ", ".join(repr(s) for s in sorted(suites))
        raise InputError(f"{path}: holds the results of suite {held}, not of suite {mine}: a results file holds "
                         f"one suite; give suite {mine} a results file of its own")


# ---------------------------------------------------------------------- results file

def lock_path(path) -> Path:
    """The lock beside a results file (``<name>.lock``; left in place, it holds only the last writer's pid)."""
    path = Path(path)
    return path.with_name(path.name + ".lock")


def damaged_path(path) -> Path:
    """Where damaged lines of a results file are set aside (``<name>.damaged``, appended to)."""
    path = Path(path)
    return path.with_name(path.name + ".damaged")


class _Lock:
    """An exclusive ``fcntl.flock`` on ``<results>.lock``: one writer per results file at a time."""

    def __init__(self, path: Path):
        self.path = lock_path(path)
        self.fd: int | None = None

    def acquire(self, wait: bool = True) -> bool:
        import fcntl
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                os.close(fd)
                return False
            holder = _read_pid(fd)
            log.warning("%s is being written by another bench run%s; waiting for it to finish (its finished runs "
                        "will then be skipped)", self.path.with_suffix(""), f" (pid {holder})" if holder else "")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            import fcntl
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _read_pid(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""


def _split_line(line: str) -> list[str] | None:
    try:
        rows = list(csv.reader([line]))
    except (csv.Error, ValueError):
        return None
    return rows[0] if len(rows) == 1 else None


def _is_header(vals: list[str] | None) -> bool:
    return bool(vals) and vals[0] == "run_id" and all(v.replace("_", "").isalnum() and v.isascii() for v in vals)


def read_rows(path: Path, *, repair: bool = True, _locked: bool = False) -> list[dict]:
    """Rows of a results CSV, each run once.  A batch writes each run_id once; a file that holds a run_id
    more than once (written by an older version) keeps the run's best row, at the place of its first row: a
    finished row over a failed one (``is_failed``), the last among equals; the others are dropped, with the
    warning below, and the repair rewrites the file with one row per run.

    Damaged content never stops a report or a resume: a trailing line cut short by a kill is dropped; a line
    that is not UTF-8, does not parse or has the wrong number of fields, and a damaged header, are set aside in
    ``<name>.damaged``; a missing header is restored; a file written by a version with other columns is migrated
    (a header whose columns the rows do not have is a damaged header, not another version: the rows are kept).
    One warning names what was found (the first few lines and a count).  The repair rewrites the file
    atomically, and only when ``repair`` and no other bench run holds the file's lock (else the rows are read as
    they are, the file is left alone, and the warning says so)."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return []
    raw = path.read_bytes()
    blines = raw.splitlines(keepends=True)
    rows: list[dict] = []
    seen: dict[str, int] = {}
    bad: list[bytes] = []
    issues: list[str] = []      # "line N: what", in file order
    fields, start, migrate = _header(path, blines, bad, issues)
    cut = False
    dups = 0
    for no, b in enumerate(blines[start:], start + 1):
        if not b.endswith(b"\n"):
            issues.append(f"line {no}: cut short (an interrupted write), not read")
            cut = True
            continue
        try:
            line = b.decode("utf-8")
        except UnicodeDecodeError:
            issues.append(f"line {no}: not UTF-8")
            bad.append(b)
            continue
        vals = _split_line(line.rstrip("\r\n"))
        if vals is None or len(vals) != len(fields):
            if vals is not None and _is_header(vals):
                continue   # a repeated header (two files concatenated): not data
            issues.append(f"line {no}: {'unreadable' if vals is None else len(vals)} fields (expected "
                          f"{len(fields)})")
            bad.append(b)
            continue
        row = dict(zip(fields, vals))
        rid = row.get("run_id", "")
        if not rid:
            issues.append(f"line {no}: no run_id")
            bad.append(b)
            continue
        row = _migrate_row(row, fields) if migrate else row
        if rid in seen:     # a duplicate (files of older versions): the best row stays, at the run's place
            dups += 1
            if not (is_failed(row) and not is_failed(rows[seen[rid]])):
                rows[seen[rid]] = row
            continue
        seen[rid] = len(rows)
        rows.append(row)
    if dups:
        issues.append(f"{dups} duplicate row(s) of a run: the best row of each run is kept (a finished row over a "
                      f"failed one, the last among equals)")
    canonical = _HEADER + "".join(_format_row(r) for r in rows)
    needs = migrate or bad or cut or dups or start == 0 or not raw.endswith(b"\n")
    done = "the file is left as it is: this only reads it"
    if needs and repair:
        lock = None
        if not _locked:
            lock = _Lock(path)
            if not lock.acquire(wait=False):
                _warn_damage(path, issues, "not repaired now: another bench run is writing it")
                return rows
        try:
            if bad:
                with open(damaged_path(path), "ab") as f:
                    f.writelines(x if x.endswith(b"\n") else x + b"\n" for x in bad)
            done = (f"{len(bad)} damaged line(s) set aside in {damaged_path(path)}; " if bad else "") + \
                ("migrated to the current columns; " if migrate else "") + "the file is repaired"
            if path.read_bytes() == raw:      # unchanged since read (we hold the lock: nobody appends)
                atomic_write(path, canonical)
            else:
                done = "not repaired now: the file changed while it was read"
        finally:
            if lock is not None:
                lock.release()
    _warn_damage(path, issues, done)
    return rows


def _warn_damage(path: Path, issues: list[str], done: str) -> None:
    """One warning for everything a read found in ``path`` (``files.issue_summary``: the first few, a count)."""
    if issues:
        log.warning("%s: %s; %s", path, issue_summary(issues), done)


def _header(path: Path, blines: list[bytes], bad: list[bytes], issues: list[str]) -> tuple[list[str], int, bool]:
    """(the columns of the data lines, the index of the first data line, whether they are an older version's)."""
    first = blines[0] if blines else b""
    try:
        first_vals = _split_line(first.decode("utf-8").rstrip("\r\n"))
    except UnicodeDecodeError:
        first_vals = None
    if _is_header(first_vals):
        if first_vals == COLUMNS:
            return COLUMNS, 1, False
        widths = [len(v) for v in map(_split_safe, blines[1:]) if v is not None]
        if widths.count(len(COLUMNS)) > widths.count(len(first_vals)):
            issues.append(f"line 1: a damaged header ({len(first_vals)} columns, the rows have {len(COLUMNS)}): "
                          "the rows are read with the current columns")
            bad.append(first)
            return COLUMNS, 1, False
        return first_vals, 1, True
    if first_vals is not None and len(first_vals) == len(COLUMNS) and first.endswith(b"\n"):
        issues.append("line 1: the header line is missing: the rows are read with the current columns")
        return COLUMNS, 0, False
    issues.append(f"line 1: a damaged header {first[:60]!r}")
    bad.append(first)
    return COLUMNS, 1, False


def _split_safe(b: bytes) -> list[str] | None:
    try:
        return _split_line(b.decode("utf-8").rstrip("\r\n"))
    except UnicodeDecodeError:
        return None


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
    if isinstance(v, str) and ("\n" in v or "\r" in v):
        return " | ".join(v.splitlines())     # one row, one line: the journal is read line by line
    return v


class ResultsFile:
    """The CSV of a batch's rows, each run once, one writer at a time: opening takes the file's lock (a second
    bench run on the same file waits, then skips what the first finished).  A new run's row is appended (one
    whole line per write, flushed and fsynced); the row of a run that failed before replaces its failed row:
    the file is rewritten atomically (``files.atomic_write``) with the new row in the failed row's place.
    ``done``: the runs with a row that did not fail; ``failed``: the runs whose row failed (``is_failed``),
    which a rerun retries; ``rows``: the rows the file held when opened.  A write that fails (disk full,
    read-only, I/O error) is an ``InputError`` naming the file.  Use as a context manager or call ``close``."""

    def __init__(self, path, wait: bool = True):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create {self.path.parent}: {e.strerror or e}") from None
        self._lock = _Lock(self.path)
        try:
            got = self._lock.acquire(wait=wait)
        except OSError as e:
            raise InputError(f"cannot write {self._lock.path}: {e.strerror or e}") from None
        if not got:
            raise BaceOptError(f"{self.path} is being written by another bench run; wait for it or use "
                               f"another results file")
        try:
            self.rows = read_rows(self.path, _locked=True)
            # each run's line as it is (re)written: the file, in order, whenever a failed row is replaced
            self._lines = {r["run_id"]: _format_row(r) for r in self.rows}
            self.done = {r["run_id"] for r in self.rows if not is_failed(r)}
            self.failed = {r["run_id"] for r in self.rows if is_failed(r)}
            if not self.path.exists() or self.path.stat().st_size == 0:
                atomic_write(self.path, _HEADER)
        except BaseException:
            self._lock.release()
            raise

    def append(self, row: Mapping[str, Any]) -> None:
        """Write ``row``: appended when its run has no row yet, in place of the run's failed row otherwise;
        ignored when the run already has a finished row."""
        rid = row["run_id"]
        if rid in self.done:
            return
        line = _format_row(row)
        old = self._lines.get(rid)
        self._lines[rid] = line
        try:
            if old is None:
                append_line(self.path, line.encode("utf-8"))
            else:    # a retry: its row takes the failed row's place, the file rewritten whole
                atomic_write(self.path, _HEADER + "".join(self._lines.values()))
        except (OSError, InputError) as e:
            if old is None:
                del self._lines[rid]
            else:
                self._lines[rid] = old
            if isinstance(e, InputError):
                raise
            raise InputError(f"cannot write {self.path}: {e.strerror or e}") from None
        if is_failed(row):
            self.failed.add(rid)
        else:
            self.done.add(rid)
            self.failed.discard(rid)

    def close(self) -> None:
        self._lock.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def append_line(path: Path, data: bytes) -> None:
    """Append ``data`` (one whole line) to ``path`` and fsync it; if the write fails (disk full, I/O error),
    the file is cut back to its old end, so that no line cut short is left behind, and the OSError raised."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        end = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, end)
            except OSError:
                pass     # what is left is a line cut short, which the next reader drops
            raise
    finally:
        os.close(fd)


# ---------------------------------------------------------------------- execution

def failed_row(spec: RunSpec, message: str) -> dict:
    """The row of a run that ended without a row of its own (its worker process died)."""
    return {"run_id": spec.run_id, "suite": spec.suite, "family": spec.family, "size": spec.size,
            "seed": spec.seed, "method": spec.method, "status": FAILED, "error": message[:500],
            "options": json.dumps({"instance": dict(spec.instance_args), "method": dict(spec.method_args)},
                                  sort_keys=True)}


def run_specs(specs: Iterable[RunSpec], out, *, workers: int = 1, dask_address: str | None = None,
              progress: bool | None = None, execute: Callable[[RunSpec], dict] | None = None) -> dict:
    """Run every spec whose row is not yet in ``out``, or whose row failed (a retry); returns counts
    {total, skipped, ran, failed, retried}: ``failed`` runs of this batch ended failed (``is_failed``), and
    their rows say why.  A file that holds another suite's rows is refused before any run (``check_suite``).

    ``workers`` > 1 runs local processes (one fresh process per run, so peak memory is per run, each in a
    session of its own: ``procs.WorkerPool``); ``dask_address`` sends the runs to an existing Dask scheduler
    instead (``"local"`` starts a LocalCluster of our own: ``cluster.dask_client``); a scheduler lost mid-batch
    raises ``ClusterLost`` (the finished rows kept, the others left to a rerun).  Ctrl-C or SIGTERM
    (``KeyboardInterrupt``) stops the batch at once: every row finished so far is in the file, runs not
    started are not started, and every worker process is killed.
    """
    from .tasks import execute as default_execute
    execute = execute or default_execute
    specs = list(specs)
    ids = [s.run_id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError("two runs of the batch have the same spec")
    with ResultsFile(out) as res:
        if specs:
            check_suite(res.path, res.rows, {s.suite for s in specs})
        return _run_todo(specs, res, execute, workers, dask_address, progress)


def _run_todo(specs, res, execute, workers, dask_address, progress) -> dict:
    todo = [s for s in specs if s.run_id not in res.done]
    counts = {"total": len(specs), "skipped": len(specs) - len(todo), "ran": 0, "failed": 0,
              "retried": sum(1 for s in todo if s.run_id in res.failed)}
    if not todo:
        return counts
    bar = _progress(len(todo), progress)

    def record(row):
        res.append(row)
        counts["ran"] += 1
        if is_failed(row):
            counts["failed"] += 1
        line = run_line(row)     # progress: a line per run with -v (INFO), the bar's postfix on a terminal
        log.info("bench run %d/%d: %s", counts["ran"], len(todo), line)
        bar.update(1, line)

    try:
        if dask_address:
            try:
                _run_dask(todo, execute, record, dask_address, workers)
            except ClusterLost as e:
                left = len(todo) - counts["ran"]
                raise ClusterLost(f"{e} after {counts['ran']} of the {len(todo)} runs of this batch; their rows "
                                  f"are in {res.path}; the {left} other run(s) have no row: run the same "
                                  f"command again to run them") from None
        elif workers > 1:
            from ..procs import WorkerPool
            with WorkerPool(workers) as pool:
                for i, ok, value in pool.run(execute, [(s,) for s in todo]):
                    record(value if ok else failed_row(todo[i], value))
        else:
            for s in todo:
                record(execute(s))
    finally:
        bar.close()
    return counts


def _run_dask(todo, execute, record, address, workers):
    """Submit every run to Dask and record each row as it comes.  A run whose task raised (or whose worker died
    too often: ``KilledWorker``) is a failed row; a future cancelled or lost without an error of its own (the
    scheduler or the connection to it is gone) raises ``ClusterLost`` at once: those runs did not fail."""
    from asyncio import CancelledError as LoopCancelled     # a BaseException: raised from Dask's event loop
    from concurrent.futures import CancelledError

    from dask.distributed import as_completed

    from .cluster import dask_client
    with dask_client(address, workers) as client:
        futs = {}
        try:
            for s in todo:
                futs[client.submit(execute, s, pure=False, key=f"bace-opt-{s.run_id}")] = s
            for f in as_completed(list(futs)):
                try:
                    row = f.result()
                except (CancelledError, LoopCancelled) as e:
                    raise ClusterLost(_lost(address, e)) from None
                except Exception as e:
                    if f.status != "error":    # not the task's own exception: the cluster lost it
                        raise ClusterLost(_lost(address, e)) from None
                    row = failed_row(futs[f], f"{type(e).__name__}: {e}")   # the run raised, or killed its worker
                record(row)
        except (OSError, TimeoutError, CancelledError, LoopCancelled) as e:   # the scheduler went meanwhile
            _cancel(client, futs)
            raise ClusterLost(_lost(address, e)) from None
        except BaseException:
            _cancel(client, futs)
            raise


def _lost(address: str, e: BaseException) -> str:
    why = getattr(e, "reason", None) or type(e).__name__
    return f"--dask {address}: the Dask scheduler was lost ({why})"


def _cancel(client, futs) -> None:
    try:
        client.cancel(list(futs), force=True)
    except Exception:
        pass


def run_line(row: Mapping[str, Any]) -> str:
    """One run's progress line: method, instance, status and wall time (``sim:bace-pipe on paper-6r-8j-seed1:
    done, 1.23 s``); a run that failed before its instance was built is named by family, size and seed."""
    inst = row.get("instance") or f"{row.get('family')}/{row.get('size')} seed {row.get('seed')}"
    t = row.get("wall_s")
    took = f", {t:.3g} s" if isinstance(t, (int, float)) else ""
    return f"{row.get('method')} on {inst}: {row.get('status') or '?'}{took}"


class _NoBar:
    def update(self, n, line=None):
        pass

    def close(self):
        pass


class _Bar:
    """tqdm's bar on stderr, its postfix the last run's line (``run_line``)."""

    def __init__(self, bar):
        self.bar = bar

    def update(self, n, line=None):
        if line is not None:
            self.bar.set_postfix_str(line[:60], refresh=False)
        self.bar.update(n)

    def close(self):
        self.bar.close()


def _progress(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return _Bar(tqdm(total=total, unit="run", file=sys.stderr))
