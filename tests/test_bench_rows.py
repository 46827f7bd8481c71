"""Every run_id once (issue 36 item 3): a retried run's row replaces its failed row in the results file itself,
an older file with duplicate rows is repaired to each run's best row, two suites never share a results file,
rows that broke the rules (``infeasible-schedule``) are failed runs like ``error`` ones (retried, listed, in no
average, exit 1), and a resume after a Dask scheduler or worker crashed, on a real local cluster, gives one row
per run."""
from __future__ import annotations

import csv
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

import bace_opt.bench as bench_pkg
import bace_opt.bench.tasks as tasks
import bench_fake
from policy_files import CHEAPEST_REGION
from bace_opt.bench.report import load, report
from bace_opt.bench.runner import FAILED_STATUSES, read_rows, run_specs
from bace_opt.bench.spec import COLUMNS
from bace_opt.errors import InputError
from bace_opt.cli.main import main

HERE = Path(__file__).parent
RESULTS = HERE.parent / "benchmarks" / "results"


def _data_lines(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    assert lines[0] == COLUMNS
    return lines[1:]


class Flaky:
    """An execute that fails a run's first ``fails`` tries (status ``status``), then gives its row."""

    def __init__(self, bad_seeds, status="error", fails=1):
        self.bad, self.status, self.fails, self.tries = set(bad_seeds), status, fails, {}

    def __call__(self, spec):
        n = self.tries[spec.run_id] = self.tries.get(spec.run_id, 0) + 1
        row = {"run_id": spec.run_id, "suite": spec.suite, "instance": f"fake-{spec.seed}", "family": spec.family,
               "size": spec.size, "seed": spec.seed, "method": spec.method, "status": "done",
               "objective": spec.seed * 1.5, "avg_jct_s": 100.0 + spec.seed, "wall_s": 0.0}
        if spec.seed in self.bad and n <= self.fails:
            row.update(status=self.status, error=f"try {n} broke", objective="", avg_jct_s="")
        return row


@pytest.mark.parametrize("status", FAILED_STATUSES)
def test_a_flaky_run_retried_leaves_one_row_per_run_id_in_the_file(tmp_path, status):
    """Before: the retry's row was appended beside the failed one (286 rows for 260 run_ids); and a row that
    broke the rules (infeasible-schedule) was taken as finished, never retried."""
    specs = bench_fake.specs(10)
    out = tmp_path / "r.csv"
    run = Flaky({2, 5, 7}, status=status, fails=2)
    c = run_specs(specs, out, execute=run, progress=False)
    assert (c["ran"], c["failed"]) == (10, 3)
    first = [l[0] for l in _data_lines(out)]
    assert first == [s.run_id for s in specs]
    # the retry fails again: its row replaces the first failed one (the latest reason)
    c = run_specs(specs, out, execute=run, progress=False)
    assert (c["skipped"], c["ran"], c["failed"], c["retried"]) == (7, 3, 3, 3)
    lines = _data_lines(out)
    assert [l[0] for l in lines] == first
    assert sorted(l[COLUMNS.index("error")] for l in lines if l[COLUMNS.index("status")] == status) == \
        ["try 2 broke"] * 3
    # the third batch succeeds: one row per run_id, each in its place, none failed
    c = run_specs(specs, out, execute=run, progress=False)
    assert (c["skipped"], c["ran"], c["failed"], c["retried"]) == (7, 3, 0, 3)
    lines = _data_lines(out)
    assert [l[0] for l in lines] == first
    assert {l[COLUMNS.index("status")] for l in lines} == {"done"}
    assert run_specs(specs, out, execute=run, progress=False)["ran"] == 0
    assert out.with_name(out.name + ".damaged").exists() is False


#: after the example policy (CHEAPEST_REGION) in the same file
FLAKY_POLICY = """
from pathlib import Path

MARKS = Path({marks!r})


class Flaky(CheapestRegion):
    \"\"\"Each job on the cheapest region that holds it; the first decision on each instance raises.\"\"\"

    name = "flaky"

    def decide(self, now, queue, state):
        mark = MARKS / (state.inst.name + ".tried")
        if not mark.exists():
            mark.touch()
            raise RuntimeError("flaky: first try on " + state.inst.name)
        return super().decide(now, queue, state)
"""


def test_bench_with_a_flaky_policy_rerun_after_its_failures_has_one_row_per_run_id(tmp_path, capsys):
    """The issue's case end to end (before: 286 rows for 260 run_ids): a policy file that fails its first try
    on each instance, then succeeds."""
    marks = tmp_path / "marks"
    marks.mkdir()
    policy = tmp_path / "flaky.py"
    policy.write_text(CHEAPEST_REGION + FLAKY_POLICY.format(marks=str(marks)))
    out = tmp_path / "realistic.csv"
    argv = ["bench", "--suite", "realistic", "--size", "small", "--policy", f"{policy}:Flaky", "-o", str(out)]
    assert main(argv) == 1
    first = _data_lines(out)
    failed = [l for l in first if l[COLUMNS.index("status")] == "error"]
    assert failed and all("flaky: first try" in l[COLUMNS.index("error")] for l in failed)
    capsys.readouterr()
    assert main(argv) == 0
    assert f"ran {len(failed)} (0 failed; {len(failed)} retried" in capsys.readouterr().out
    lines = _data_lines(out)
    assert len(lines) == len(first) == len({l[0] for l in lines})
    assert [l[0] for l in lines] == [l[0] for l in first]
    assert "error" not in {l[COLUMNS.index("status")] for l in lines}


def test_a_replacement_that_cannot_be_written_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    import bace_opt.bench.runner as runner
    specs = bench_fake.specs(4)
    out = tmp_path / "r.csv"
    run = Flaky({1})
    run_specs(specs, out, execute=run, progress=False)
    before = out.read_bytes()

    def full(path, data, *a, **k):
        raise InputError(f"cannot write {path}: No space left on device")
    monkeypatch.setattr(runner, "atomic_write", full)
    with pytest.raises(InputError, match="No space left"):
        run_specs(specs, out, execute=run, progress=False)
    assert out.read_bytes() == before
    monkeypatch.undo()
    assert run_specs(specs, out, execute=run, progress=False)["ran"] == 1
    assert len(_data_lines(out)) == 4


def _row(rid, status, objective, suite="fake"):
    r = {c: "" for c in COLUMNS}
    r.update(run_id=rid, suite=suite, method="m:a", size="s", seed="1", status=status, objective=objective)
    return r


def test_an_older_file_with_duplicates_keeps_each_runs_best_row_with_one_warning(tmp_path, caplog):
    """Before: the first row of a run won (a later, better row was dropped), and a failed row followed by its
    retry was read as one row but left twice in the file."""
    out = tmp_path / "old.csv"
    rows = [_row("a", "error", ""), _row("b", "done", "1.0"), _row("a", "done", "2.0"), _row("c", "error", "x1"),
            _row("b", "done", "1.5"), _row("a", "error", ""), _row("c", "infeasible-schedule", "x2"),
            _row("d", "done", "4.0")]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    caplog.set_level(logging.WARNING)
    got = read_rows(out)
    assert [(r["run_id"], r["status"], r["objective"]) for r in got] == [
        ("a", "done", "2.0"), ("b", "done", "1.5"), ("c", "infeasible-schedule", "x2"), ("d", "done", "4.0")]
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "4 duplicate row(s)" in warned[0] and "best row" in warned[0], warned
    assert [l[0] for l in _data_lines(out)] == ["a", "b", "c", "d"]      # repaired in the file itself
    caplog.clear()
    assert read_rows(out) == got and not caplog.records


def test_a_failed_row_and_its_retry_in_an_older_file_are_repaired_to_one(tmp_path):
    out = tmp_path / "old.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows([_row("a", "error", ""), _row("a", "done", "2.0")])
    assert [r["status"] for r in read_rows(out)] == ["done"]
    assert [l[0] for l in _data_lines(out)] == ["a"]
    assert [r["status"] for r in read_rows(out, repair=False)] == ["done"]


# ---------------------------------------------------------------------- one suite per results file

def _no_run_execute(spec):
    raise AssertionError(f"ran {spec.run_id}: a refused batch must run nothing")


def test_a_batch_of_another_suite_is_refused_before_it_runs(tmp_path):
    out = tmp_path / "gap.csv"
    shutil.copy(RESULTS / "gap-small.csv", out)
    before = out.read_bytes()
    specs = [replace(s, suite="regimes") for s in bench_fake.specs(3)]
    with pytest.raises(InputError) as e:
        run_specs(specs, out, execute=_no_run_execute, progress=False)
    assert str(out) in str(e.value) and "'gap' (234 rows)" in str(e.value) and "'regimes'" in str(e.value)
    assert out.read_bytes() == before


def test_bench_suite_regimes_on_a_gap_results_file_exits_2_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Before: ``bench --suite regimes -o gap-small.csv`` appended its rows, then crashed with exit 3 (could not
    convert string to float: 'r')."""
    out = tmp_path / "gap-small.csv"
    shutil.copy(RESULTS / "gap-small.csv", out)
    before = out.read_bytes()
    monkeypatch.setattr(tasks, "execute", _no_run_execute)
    for extra in ([], ["--no-run"]):
        assert main(["bench", "--suite", "regimes", "--size", "small", "-o", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{out}: holds the results of suite 'gap' (234 rows)" in err, err
        assert out.read_bytes() == before
    assert main(["bench", "--suite", "gap", "--size", "small", "-o", str(out), "--no-run"]) == 0


# ---------------------------------------------------------------------- failed statuses in the report

def _mark(src: Path, out: Path, method_prefix: str, every: int, status: str, drop: Path | None = None) -> int:
    """Copy a committed results file, turning every ``every``-th row of ``method_prefix`` into a row of
    ``status`` with nonsense figures (as a policy that broke the rules may leave); ``drop``: also write the copy
    without those rows.  Returns how many rows were marked."""
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    hit = [r for r in rows if r["method"].startswith(method_prefix)][::every]
    for r in hit:
        r.update(status=status, error="job j1 over-commits region r0 at t=0", jobs_done="99",
                 p1_cost_usd="0.001", avg_jct_s="1", total_electricity_usd="0.001", total_cost_usd="0.001")
    for path, keep in ((out, rows), (drop, [r for r in rows if r not in hit])):
        if path is not None:
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
                w.writeheader()
                w.writerows(keep)
    return len(hit)


@pytest.mark.parametrize("suite,prefix", [("gap-small", "p1-heur:"), ("paper-full", "sim:")])
def test_rows_that_broke_the_rules_are_in_no_average_and_listed(tmp_path, suite, prefix):
    """Before: ``infeasible-schedule`` rows were averaged into the tables (``admissions_lost_mean -0.2``) and
    not listed as failed."""
    marked, clean = tmp_path / f"{suite}.csv", tmp_path / "clean" / f"{suite}.csv"
    clean.parent.mkdir()
    n = _mark(RESULTS / f"{suite}.csv", marked, prefix, 9, "infeasible-schedule", drop=clean)
    name = suite.split("-")[0]
    got = report(name, marked, repair=False)
    want = report(name, clean, repair=False)
    tables, _, failed = got.partition("### Failed runs")
    assert tables.strip() == want.strip()
    assert f": {n} (left out" in failed and failed.count("infeasible-schedule: job j1 over-commits") == min(n, 20)
    assert len(load(marked, repair=False)) == len(load(clean, repair=False))
    assert len(load(marked, repair=False, failed=True)) == len(load(clean, repair=False)) + n


def test_bench_exits_1_when_a_run_breaks_the_rules_and_the_rerun_replaces_its_row(tmp_path, monkeypatch, capsys):
    specs = [replace(s, suite="realistic") for s in bench_fake.specs(4)]
    monkeypatch.setattr(bench_pkg, "specs_for", lambda suite, size: specs)
    run = Flaky({2}, status="infeasible-schedule")
    monkeypatch.setattr(tasks, "execute", run)
    out = tmp_path / "r.csv"
    argv = ["bench", "--suite", "realistic", "--size", "small", "-o", str(out)]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "ran 4 (1 failed)" in text and "Failed runs: 1" in text and "infeasible-schedule: try 1 broke" in text
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "3 already in" in text and "ran 1 (0 failed; 1 retried" in text and "Failed runs" not in text
    assert len(_data_lines(out)) == 4


def test_bench_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = capsys.readouterr().out
    for code, what in (("0", "every run of the batch finished"), ("1", "some run of the batch failed"),
                       ("2", "a results file that holds another suite"), ("130", "Ctrl-C")):
        assert any(line.split()[:1] == [code] for line in text.splitlines()), code
        assert what in " ".join(text.split()), what


# ---------------------------------------------------------------------- a real local Dask cluster

DRIVER = """
import sys
from dataclasses import replace
sys.path.insert(0, {here!r})
import bench_fake
import bace_opt.bench as B
import bace_opt.bench.tasks as T
T.execute = bench_fake.execute_slow
B.specs_for = lambda suite, size, **kw: [replace(s, suite=suite) for s in bench_fake.specs({n})]
from bace_opt.cli.main import main
sys.exit(main(["bench", "--suite", "realistic", "--size", "small", "--dask", "local", "--workers", "2",
               "-o", {out!r}]))
"""
N = 60


def _bench_dask(out: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.Popen([sys.executable, "-c", DRIVER.format(here=str(HERE), n=N, out=str(out))], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _crash_mid_batch(out: Path, victim) -> tuple[subprocess.Popen, str, str, int]:
    """Start the batch, wait for its third row, SIGKILL ``victim(host pid)``; returns (process, stdout, stderr,
    rows before the kill)."""
    from procs import children
    p = _bench_dask(out)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and p.poll() is None:
            if out.exists() and len(out.read_text().splitlines()) >= 4:
                break
            time.sleep(0.05)
        assert p.poll() is None, "the batch ended before the crash: " + p.stderr.read()[-2000:]
        hosts = children(p.pid, b"LocalCluster")
        assert len(hosts) == 1, hosts
        before = len(_data_lines(out))
        os.kill(victim(hosts[0]), signal.SIGKILL)
        o, e = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p, o, e, before


def _one_row_per_run(out: Path) -> list[list[str]]:
    lines = _data_lines(out)
    assert len(lines) == N and len({l[0] for l in lines}) == N
    return lines


def test_a_killed_dask_scheduler_is_one_message_and_the_resume_gives_one_row_per_run(tmp_path):
    """Before: the lost scheduler's runs were recorded as failed (FutureCancelledError), two raw tracebacks were
    printed, and the resume appended their retries (373 rows for 234 run_ids)."""
    pytest.importorskip("distributed")
    out = tmp_path / "r.csv"
    p, o, e, before = _crash_mid_batch(out, lambda host: host)
    assert p.returncode == 2, e[-3000:]
    lines = [l for l in e.splitlines() if l.strip()]
    assert len(lines) == 1 and "the Dask scheduler was lost" in lines[0] and str(out) in lines[0], e[-3000:]
    kept = _data_lines(out)
    assert before <= len(kept) < N and {l[COLUMNS.index("status")] for l in kept} == {"done"}
    p = _bench_dask(out)
    o, e = p.communicate(timeout=300)
    assert p.returncode == 0, e[-3000:]
    assert f"{len(kept)} already in" in o and f"ran {N - len(kept)} (0 failed)" in o
    lines = _one_row_per_run(out)
    assert lines[:len(kept)] == kept and {l[COLUMNS.index("status")] for l in lines} == {"done"}


def test_a_killed_dask_worker_loses_no_run_and_duplicates_none(tmp_path):
    pytest.importorskip("distributed")
    from procs import children
    out = tmp_path / "r.csv"
    p, o, e, _ = _crash_mid_batch(out, lambda host: children(host, b"spawn_main")[0])
    assert p.returncode == 0, e[-3000:]
    assert f"ran {N} (0 failed)" in o and "Traceback" not in e
    assert {l[COLUMNS.index("status")] for l in _one_row_per_run(out)} == {"done"}
